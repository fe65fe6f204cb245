//! The `evograph` command: generate graphs, ingest them durably, inspect and maintain stores.

mod args;
mod bench;
mod check;
mod compact;
mod demo;
mod export;
mod generate;
mod ingest;
mod progress;
mod query;
mod run;
mod stats;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// evograph: a persistent store for evolving graphs.
///
/// A store is a directory. `ingest` creates it and streams updates in with crash-consistent
/// durability; `stats`, `check`, `export` and `compact` inspect and maintain it.
#[derive(Parser)]
#[command(name = "evograph", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    Demo(demo::Args),
    Bench(bench::Args),
    Generate(generate::Args),
    Ingest(ingest::Args),
    Export(export::Args),
    Stats(stats::Args),
    Check(check::Args),
    Compact(compact::Args),
    Run(run::Args),
    Query(query::Args),
}

fn main() -> ExitCode {
    // SAFETY: first thing in main, before any thread exists. The default action makes a
    // reader that goes away (`evograph stats S | head -3`) end this process quietly, as
    // it ends other Unix tools, instead of a panic in `println!`. Data is safe either
    // way: what was acknowledged is durable.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // One line with one prefix for every error, argument errors included (clap's
            // usage block after it repeats what --help says).
            let text = e.render().to_string();
            eprintln!(
                "evograph: {}",
                text.lines().next().unwrap_or("bad arguments")
            );
            return ExitCode::from(2);
        }
    };
    let res = match cli.cmd {
        Cmd::Demo(a) => demo::run(a),
        Cmd::Bench(a) => bench::run(a),
        Cmd::Generate(a) => generate::run(a),
        Cmd::Ingest(a) => ingest::run(a),
        Cmd::Export(a) => export::run(a),
        Cmd::Stats(a) => stats::run(a),
        Cmd::Check(a) => check::run(a),
        Cmd::Compact(a) => compact::run(a),
        Cmd::Run(a) => run::run(a),
        Cmd::Query(a) => query::run(a),
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            eprintln!("evograph: error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Opens an existing store without changing it (for the inspecting commands).
fn open_existing(path: &std::path::Path, read_only: bool) -> evograph::Result<evograph::Graph> {
    evograph::Graph::open(
        path,
        evograph::Options {
            create: false,
            read_only,
            ..Default::default()
        },
    )
}
