//! `evograph diff`: the changes between two commits, as an `ops` stream that replays them.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Print the net changes from commit A to commit B as an ops stream (`+ u v [w]`, `- u v`,
/// `+ u`, `- u`): `evograph ingest --format ops` replays it on the graph as of A to give
/// the graph as of B. A may come after B: then the lines undo. A weight change is a
/// `+ u v w` line. A vertex name holding a blank is written in double quotes (`\"` and
/// `\\` inside), as the ops format reads it.
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
    let g = crate::open_reader(&a.store, evograph::LogReach::Durable)?;
    let d = g.diff(a.from, a.to)?;
    crate::args::note_on_success(format!(
        "from {} to {}",
        crate::args::describe(a.from, d.from),
        crate::args::describe(a.to, d.to)
    ));
    let s = g.snapshot()?;
    // A name holding a blank is quoted, as the ops format reads it back.
    let name = |x: u64| -> String {
        (s.key_of_external(x)).map_or_else(
            || x.to_string(),
            |k| evograph::io::quote_name(&k.to_string()).into_owned(),
        )
    };
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
