//! `evograph query`: point lookups on the latest snapshot of a store.

use evograph::{Graph, GraphView, Snapshot, VertexId};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Look up edges by their endpoints, one pair or a file of pairs.
///
/// Vertices are named as the store keys them: unsigned integers, or names in a store with
/// string keys. A vertex the store never saw, or one deleted, has no edges. `query` is a
/// reader: it works beside a running ingest and sees what that writer made durable.
///
/// - `has-edge U V` prints `true` or `false`.
/// - `weight U V` prints the edge's weight (1 in unweighted stores), or `none`.
/// - `degree U` prints U's out-degree and in-degree.
///
/// With `--pairs FILE` (`-` for standard input) the answers come one per line, in the
/// file's order, for lines `U V` (whitespace between integers; a tab between names in a
/// store with string keys). `#` comment lines and blank lines get no answer.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    #[command(flatten)]
    reach: crate::args::Reach,
    #[command(flatten)]
    when: crate::args::When,
    /// What to look up.
    what: What,
    /// The endpoints (none with --pairs).
    keys: Vec<String>,
    /// A file of pairs, one lookup per line (`-`: standard input).
    #[arg(long)]
    pairs: Option<PathBuf>,
}

/// A kind of lookup.
#[derive(Clone, Copy, clap::ValueEnum)]
enum What {
    /// Whether the edge U -> V exists.
    HasEdge,
    /// The weight of the edge U -> V.
    Weight,
    /// Out- and in-degree of U.
    Degree,
}

impl What {
    fn arity(self) -> usize {
        match self {
            What::HasEdge | What::Weight => 2,
            What::Degree => 1,
        }
    }
}

/// Resolves keys to dense ids against one snapshot.
struct Lookup<'a> {
    g: &'a Graph,
    s: &'a Snapshot,
}

impl Lookup<'_> {
    /// The dense id of `key` if that vertex exists in the snapshot.
    fn vertex(&self, key: &str) -> evograph::Result<Option<VertexId>> {
        Ok(self
            .g
            .dense_id_of(key)?
            .filter(|&v| self.s.vertex_exists(v)))
    }

    fn answer(&self, what: What, keys: &[&str]) -> evograph::Result<String> {
        let mut ids = Vec::with_capacity(keys.len());
        for k in keys {
            ids.push(self.vertex(k)?);
        }
        Ok(match (what, &ids[..]) {
            (What::HasEdge, [Some(u), Some(v)]) => self.s.has_edge(*u, *v).to_string(),
            (What::HasEdge, _) => "false".into(),
            (What::Weight, [Some(u), Some(v)]) => self
                .s
                .edge_weight(*u, *v)
                .map_or("none".into(), |w| w.to_string()),
            (What::Weight, _) => "none".into(),
            (What::Degree, [Some(u)]) => {
                format!("{} {}", self.s.out_degree(*u), self.s.in_degree(*u))
            }
            (What::Degree, _) => "0 0".into(),
        })
    }
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let g = crate::open_reader(&a.store, a.reach.log_reach())?;
    let s = crate::args::snapshot_of(&g, a.when)?;
    let look = Lookup { g: &g, s: &s };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let Some(path) = &a.pairs else {
        if a.keys.len() != a.what.arity() {
            return Err(evograph::Error::Invalid(format!(
                "this lookup takes {} vertex key(s), got {} (or use --pairs FILE)",
                a.what.arity(),
                a.keys.len()
            )));
        }
        let keys: Vec<&str> = a.keys.iter().map(String::as_str).collect();
        let ans = look.answer(a.what, &keys)?;
        writeln!(out, "{ans}")
            .and_then(|()| out.flush())
            .map_err(stdout_err)?;
        return Ok(ExitCode::SUCCESS);
    };
    if !a.keys.is_empty() {
        return Err(evograph::Error::Invalid(
            "give the vertices on the command line or with --pairs, not both".into(),
        ));
    }
    let input: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(path).map_err(|e| {
            evograph::Error::Invalid(format!("cannot read {}: {e}", path.display()))
        })?;
        Box::new(std::io::BufReader::new(f))
    };
    let named = g.key_kind() == evograph::KeyKind::String;
    for (n, line) in input.lines().enumerate() {
        let line = line.map_err(|e| {
            evograph::Error::Invalid(format!("{}: line {}: {e}", path.display(), n + 1))
        })?;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let keys: Vec<&str> = if named {
            line.split('\t').collect()
        } else {
            line.split_whitespace().collect()
        };
        if keys.len() != a.what.arity() {
            return Err(evograph::Error::Invalid(format!(
                "{}: line {}: want {} vertex key(s){}, found {}",
                path.display(),
                n + 1,
                a.what.arity(),
                if named { " separated by a tab" } else { "" },
                keys.len()
            )));
        }
        let ans = look.answer(a.what, &keys).map_err(|e| {
            evograph::Error::Invalid(format!("{}: line {}: {e}", path.display(), n + 1))
        })?;
        writeln!(out, "{ans}").map_err(stdout_err)?;
    }
    out.flush().map_err(stdout_err)?;
    Ok(ExitCode::SUCCESS)
}

fn stdout_err(e: std::io::Error) -> evograph::Error {
    evograph::Error::io("write", "stdout", e)
}
