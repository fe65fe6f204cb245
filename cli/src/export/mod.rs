//! `evograph export`: the latest snapshot as text on stdout, or as Parquet tables.

mod parquet;

use crate::run::put_key;
use evograph::algo::kernel::Kernel;
use evograph::{GraphView, Snapshot, VertexId};
use rayon::prelude::*;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Export the latest snapshot.
///
/// text (default): print every edge as `src dst` (external ids, or names in a store with
/// string keys; `src dst weight` in weighted stores) on stdout, sorted; undirected edges
/// once, smaller id (name) first. Names are separated by a tab, so names holding spaces
/// read back with --delimiter '\t'.
///
/// parquet: write OUT/vertices/part-NNNNN.parquet (id, out_degree, in_degree, and a column
/// per --kernels entry) and OUT/edges/part-NNNNN.parquet (src, dst[, weight]; undirected
/// edges once, smaller id first), files of at most --rows-per-file rows in row groups of
/// --row-group rows, Snappy-compressed, plus OUT/evograph.json describing them. Spark,
/// DuckDB, pandas and pyarrow read the directories as tables. OUT must not exist or be
/// empty, and must lie in no store directory.
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    #[command(flatten)]
    reach: crate::args::Reach,
    #[command(flatten)]
    when: crate::args::When,
    /// Output directory (parquet only).
    out: Option<PathBuf>,
    /// text | parquet
    #[arg(long, default_value = "text")]
    format: ExportFormat,
    /// parquet: kernels whose per-vertex results become vertex columns, e.g. pr,wcc
    /// (run with `evograph run`'s defaults; GAP traversals pick their source).
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<Kernel>,
    /// parquet: rows per file at most.
    #[arg(long, default_value_t = 1 << 22, value_parser = crate::args::int::<u64>(1, 1 << 40))]
    rows_per_file: u64,
    /// parquet: rows per row group at most.
    #[arg(long, default_value_t = 1 << 20, value_parser = crate::args::int::<u64>(1, 1 << 40))]
    row_group: u64,
}

/// What `export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ExportFormat {
    Text,
    Parquet,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    if let Some(out) = &a.out {
        crate::output::Guard::new()
            .store(&a.store)
            .dir(out, "OUT")?;
    }
    let g = crate::open_reader(&a.store, a.reach.log_reach())?;
    let s = crate::args::snapshot_of(&g, a.when)?;
    match (a.format, &a.out) {
        (ExportFormat::Text, None) if a.kernels.is_empty() => text(&s),
        (ExportFormat::Text, _) => Err(evograph::Error::Invalid(
            "text export prints to stdout and takes no OUT or --kernels: use --format parquet OUT"
                .into(),
        )),
        (ExportFormat::Parquet, None) => Err(evograph::Error::Invalid(
            "--format parquet needs an output directory: evograph export STORE --format parquet OUT"
                .into(),
        )),
        (ExportFormat::Parquet, Some(out)) => {
            let layout = parquet::Layout {
                rows_per_file: a.rows_per_file,
                row_group: a.row_group,
            };
            parquet::write(&s, out, &a.kernels, layout)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Vertices whose lines are formatted in parallel and then written, in key order, before
/// the next block: the text of one block at a time is all that export holds besides O(V).
const BLOCK: usize = 1 << 14;

/// Prints every edge, sorted by (src, dst) keys, vertex by vertex in key order: O(V) DRAM
/// and one block's text, where sorting every edge (24 B each) took more than the 24 GB of
/// this machine at Kron26 (1.07 B edges).
fn text(s: &Snapshot) -> evograph::Result<ExitCode> {
    // Each vertex's key: its external id, or with names its rank in name order.
    let order = s.key_order();
    let by_key = crate::key_order::vertices_by_key(&order);
    let line = Line {
        s,
        order: &order,
        by_key: &by_key,
        undirected: s.is_undirected(),
        weighted: s.is_weighted(),
        // A name may hold spaces; a tab keeps the columns apart.
        sep: if s.names().is_some() { '\t' } else { ' ' },
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let res = (|| {
        for block in by_key.chunks(BLOCK) {
            let texts: Vec<Vec<u8>> = block
                .par_chunks(256)
                .map(|vs| line.rows(vs))
                .collect::<std::io::Result<_>>()?;
            for t in texts {
                out.write_all(&t)?;
            }
        }
        out.flush()
    })();
    match res {
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(evograph::Error::io("write", "stdout", e)),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}

/// How a text export writes a vertex's edges.
struct Line<'a> {
    s: &'a Snapshot,
    /// Each vertex's key (external id, or rank in name order).
    order: &'a [u64],
    /// The vertices in key order: with names, the vertex of each rank.
    by_key: &'a [VertexId],
    undirected: bool,
    weighted: bool,
    sep: char,
}

impl Line<'_> {
    /// The key a vertex's `order` value stands for.
    fn key(&self, x: u64) -> evograph::Key<'_> {
        match self.s.names() {
            Some(_) => self.s.key(self.by_key[x as usize]),
            None => evograph::Key::Id(x),
        }
    }

    /// The lines of the vertices `vs` (in key order), each one's edges sorted by target
    /// key; an undirected edge once, from its smaller key.
    fn rows(&self, vs: &[VertexId]) -> std::io::Result<Vec<u8>> {
        let (mut text, mut row, mut head) = (Vec::new(), Vec::new(), Vec::new());
        for &v in vs {
            let x = self.order[v as usize];
            row.clear();
            self.s.for_each_out_weighted(v, |w, wt| {
                let y = self.order[w as usize];
                if !self.undirected || x <= y {
                    row.push((y, wt));
                }
            });
            row.sort_unstable_by_key(|e| e.0);
            // Keys are written as bytes (`itoa` for ids), the source's once per vertex:
            // through `write!` the formatting was a third of exporting Kron24.
            head.clear();
            put_key(&mut head, self.key(x), self.sep);
            for &(y, w) in &row {
                text.extend_from_slice(&head);
                match self.weighted {
                    true => {
                        put_key(&mut text, self.key(y), self.sep);
                        writeln!(text, "{w}")?;
                    }
                    false => put_key(&mut text, self.key(y), '\n'),
                }
            }
        }
        Ok(text)
    }
}
