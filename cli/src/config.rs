//! `evograph config`: change what a store keeps.

use std::path::PathBuf;
use std::process::ExitCode;

/// Change a store's settings: what history it keeps.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    /// History to keep: none, all, a duration counted back from the newest commit (7d, 12h,
    /// 30m, 90s) or a number of commits (100). History starts at the first commit after a
    /// change; a narrower window lets go of what falls outside it for good (a wider window
    /// set later keeps the commits still kept and those after, never the ones let go),
    /// and their bytes are freed before this returns.
    #[arg(long)]
    history: Option<evograph::history::History>,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let g = evograph::Graph::open(&a.store, evograph::Options::new().create(false))?;
    crate::warn_open(&g);
    match a.history {
        Some(h) => {
            let was = g.history();
            g.set_history(h)?;
            g.close()?;
            println!("history: {was} -> {h}");
        }
        None => {
            println!("history: {}", g.history());
            g.close()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
