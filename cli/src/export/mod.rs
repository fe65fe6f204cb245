//! `evograph export`: the latest snapshot as text on stdout, or as Parquet tables.

mod parquet;

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
/// empty.
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
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
    let g = crate::open_existing(&a.store, true)?;
    let s = g.snapshot()?;
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

/// Prints every edge, sorted by (src, dst) keys.
fn text(s: &Snapshot) -> evograph::Result<ExitCode> {
    let order = s.key_order();
    let undirected = s.is_undirected();
    // Sorting by the keys held inline, not looked up per comparison (four random reads
    // each: ten times slower at 40 M edges).
    let mut edges: Vec<(u64, u64, f64)> = (0..s.num_vertices() as VertexId)
        .into_par_iter()
        .fold(Vec::new, |mut acc, v| {
            s.for_each_out_weighted(v, |w, wt| {
                let (x, y) = (order[v as usize], order[w as usize]);
                if !undirected || x <= y {
                    acc.push((x, y, wt));
                }
            });
            acc
        })
        .flatten()
        .collect();
    edges.par_sort_unstable_by_key(|e| (e.0, e.1));
    let weighted = s.is_weighted();
    // With names, `order` holds ranks: the vertex of each rank gives its name back.
    let by_rank: Vec<VertexId> = match s.names() {
        Some(_) => {
            let mut inv = vec![0; order.len()];
            for (v, &r) in order.iter().enumerate() {
                inv[r as usize] = v as VertexId;
            }
            inv
        }
        None => Vec::new(),
    };
    let key = |x: u64| match s.names() {
        Some(_) => s.key(by_rank[x as usize]),
        None => evograph::Key::Id(x),
    };
    // A name may hold spaces; a tab keeps the columns apart.
    let sep = if s.names().is_some() { '\t' } else { ' ' };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let res = (|| {
        for (x, y, w) in edges {
            let (x, y) = (key(x), key(y));
            if weighted {
                writeln!(out, "{x}{sep}{y}{sep}{w}")?;
            } else {
                writeln!(out, "{x}{sep}{y}")?;
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
