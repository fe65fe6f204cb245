//! The `evograph` command: generate graphs, ingest them durably, inspect and maintain stores.

// Control flow in short functions (the threshold is in clippy.toml); tests may run long.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

mod args;
mod bench;
mod check;
mod compact;
mod config;
mod demo;
mod diff;
mod export;
mod generate;
mod history;
mod ingest;
mod key_order;
mod log;
mod output;
mod progress;
mod query;
mod run;
mod standing;
mod stats;
mod watch;

use clap::{CommandFactory, Parser, Subcommand};
use evograph::error::printable;
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
    Log(log::Args),
    Diff(diff::Args),
    History(history::Args),
    Watch(watch::Args),
    Config(config::Args),
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
            eprintln!("evograph: error: {}", argument_error(&e));
            return ExitCode::from(2);
        }
    };
    let res = match cli.cmd {
        Cmd::Demo(a) => demo::run(a).map_err(Failure::from),
        Cmd::Bench(a) => bench::run(a).map_err(Failure::from),
        Cmd::Generate(a) => generate::run(a).map_err(Failure::from),
        Cmd::Ingest(a) => ingest::run(a),
        Cmd::Export(a) => export::run(a).map_err(Failure::from),
        Cmd::Stats(a) => stats::run(a).map_err(Failure::from),
        Cmd::Check(a) => check::run(a).map_err(Failure::from),
        Cmd::Compact(a) => compact::run(a).map_err(Failure::from),
        Cmd::Run(a) => run::run(a).map_err(Failure::from),
        Cmd::Query(a) => query::run(a).map_err(Failure::from),
        Cmd::Log(a) => log::run(a).map_err(Failure::from),
        Cmd::Diff(a) => diff::run(a).map_err(Failure::from),
        Cmd::History(a) => history::run(a).map_err(Failure::from),
        Cmd::Watch(a) => watch::run(a).map_err(Failure::from),
        Cmd::Config(a) => config::run(a).map_err(Failure::from),
    };
    match res {
        Ok(code) => {
            for n in args::take_notes() {
                eprintln!("evograph: {}", printable(&n));
            }
            code
        }
        Err(f) => {
            eprintln!("evograph: error: {}", printable(&f.to_string()));
            ExitCode::from(2)
        }
    }
}

/// A command's failure: the error, and what the command did about it (such as removing the
/// store it was creating), said on the same line.
pub struct Failure {
    error: evograph::Error,
    note: Option<String>,
}

impl Failure {
    /// `error`, with what was done about it.
    pub fn noted(error: evograph::Error, note: String) -> Failure {
        Failure {
            error,
            note: Some(note),
        }
    }
}

impl From<evograph::Error> for Failure {
    fn from(error: evograph::Error) -> Failure {
        Failure { error, note: None }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.note {
            Some(n) => write!(f, "{} ({n})", self.error),
            None => self.error.fmt(f),
        }
    }
}

/// One line for an argument error: what is wrong, naming the argument, the value (control
/// characters escaped) and the values allowed, without clap's usage block.
fn argument_error(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ErrorKind};
    let ctx = |k| e.get(k).map(|v| printable(&v.to_string()));
    let arg = ctx(ContextKind::InvalidArg).unwrap_or_default();
    match e.kind() {
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let value = ctx(ContextKind::InvalidValue).unwrap_or_default();
            let why = match (std::error::Error::source(e), ctx(ContextKind::ValidValue)) {
                (Some(src), _) => printable(&src.to_string()),
                (None, Some(valid)) => format!("want one of {valid}"),
                (None, None) => "not allowed here".into(),
            };
            format!("invalid value '{value}' for '{arg}': {why}")
        }
        ErrorKind::MissingRequiredArgument => format!("missing argument {arg}"),
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let names: Vec<String> = Cli::command()
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            format!(
                "missing command: one of {} (evograph --help describes them)",
                names.join(", ")
            )
        }
        _ => {
            // Everything clap says before its usage block, on one line.
            let text = e.render().to_string();
            let said: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|l| !l.is_empty())
                .collect();
            let line = said.join(" ");
            printable(line.strip_prefix("error: ").unwrap_or(&line))
        }
    }
}

/// Opens an existing store to read it, saying on stderr in one line if the newest log
/// segment ends in bytes that do not read (the command answers from the log before them).
fn open_reader(
    path: &std::path::Path,
    reach: evograph::LogReach,
) -> evograph::Result<evograph::Graph> {
    let g = open_existing(path, true, reach)?;
    warn_unreadable_tail(&g);
    Ok(g)
}

/// The one line a reading command prints when the log it read ends in bytes that do not
/// read (`check` and `stats` report it in full instead).
fn warn_unreadable_tail(g: &evograph::Graph) {
    if let Some(t) = g.unreadable_tail() {
        let kind = match t.damage {
            Some(_) => "is damaged (`evograph check` says how)",
            None => "ends in a torn tail",
        };
        eprintln!(
            "evograph: warning: WAL segment {} {kind}: reading stops at byte {} (LSN {}), at least {} record(s) after it could not be read; answering from the log before it",
            t.segment, t.offset, t.lsn, t.records_at_least
        );
    }
}

/// Says on stderr, one line each, what opening the store found that a user should know
/// though it opened (a damaged history segment).
fn warn_open(g: &evograph::Graph) {
    for w in g.warnings() {
        eprintln!("evograph: warning: {}", printable(&w));
    }
}

/// Opens an existing store without changing it (for the inspecting commands).
fn open_existing(
    path: &std::path::Path,
    read_only: bool,
    reach: evograph::LogReach,
) -> evograph::Result<evograph::Graph> {
    evograph::Graph::open(
        path,
        evograph::Options::new()
            .create(false)
            .read_only(read_only)
            .log_reach(reach),
    )
}
