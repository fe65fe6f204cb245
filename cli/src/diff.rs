//! `evograph diff`: the changes between two commits, as an `ops` stream that replays them.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Print the net changes from commit A to commit B as an ops stream (`+ u v [w]`, `- u v`,
/// `+ u`, `- u`): `evograph ingest --format ops` replays it on the graph as of A to give
/// the graph as of B. A may come after B: then the lines undo. A weight change is a
/// `+ u v w` line.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    /// Commit A: an LSN, @SECONDS or RFC 3339 (the last commit at or before it).
    #[arg(long, value_parser = crate::args::point)]
    from: evograph::store::Point,
    /// Commit B.
    #[arg(long, value_parser = crate::args::point)]
    to: evograph::store::Point,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let g = crate::open_reader(&a.store)?;
    let d = g.diff(a.from, a.to)?;
    eprintln!(
        "evograph: from {} to {}",
        crate::args::describe(a.from, d.from),
        crate::args::describe(a.to, d.to)
    );
    let s = g.snapshot()?;
    let name = |x: u64| -> String {
        (s.key_of_external(x)).map_or_else(|| x.to_string(), |k| k.to_string())
    };
    refuse_unreplayable(&d.records, name)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let io = |e: std::io::Error| evograph::Error::io("write", "stdout", e);
    for r in &d.records {
        use evograph::Record::*;
        match *r {
            Insert(u, v) => writeln!(out, "+ {} {}", name(u), name(v)),
            InsertWeighted(u, v, w) => writeln!(out, "+ {} {} {w}", name(u), name(v)),
            Delete(u, v) => writeln!(out, "- {} {}", name(u), name(v)),
            InsertVertex(u) => writeln!(out, "+ {}", name(u)),
            DeleteVertex(u) => writeln!(out, "- {}", name(u)),
        }
        .map_err(io)?;
    }
    out.flush().map_err(io)?;
    Ok(ExitCode::SUCCESS)
}

/// An ops line splits its fields at blanks, so a name holding one (or empty) would not
/// replay as the vertex it names: refused before any line is printed.
fn refuse_unreplayable(
    records: &[evograph::Record],
    name: impl Fn(u64) -> String,
) -> evograph::Result<()> {
    use evograph::Record::*;
    let bad = |n: &String| n.is_empty() || n.chars().any(char::is_whitespace);
    let vertices = records.iter().flat_map(|r| match *r {
        Insert(u, v) | InsertWeighted(u, v, _) | Delete(u, v) => [Some(u), Some(v)],
        InsertVertex(u) | DeleteVertex(u) => [Some(u), None],
    });
    match vertices.flatten().map(name).find(bad) {
        Some(n) => Err(evograph::Error::Invalid(format!(
            "the diff names vertex {n:?}, which an ops line cannot carry (its fields are split at blanks): take the changes from Python (Graph.diff gives arrays) or rename the vertex"
        ))),
        None => Ok(()),
    }
}
