//! `evograph check`: verify every checksum and invariant.

use std::path::PathBuf;
use std::process::ExitCode;

/// Verify checksums (runs, dictionary, manifest, WAL, history segments) and invariants (sorted neighbors,
/// degree sums, out/in symmetry, dictionary consistency). Exit 0 when sound, 1 when not.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    // Opening verifies the dictionary, the manifest and the WAL blocks; `check` reads every
    // run's bytes itself, so the open does not check them ahead as a reader's would.
    let g = evograph::Graph::open(
        &a.store,
        evograph::Options::new()
            .create(false)
            .read_only(true)
            .verify(evograph::Verify::OnFirstUse),
    )?;
    let r = g.check()?;
    for n in &r.notes {
        println!("note: {n}");
    }
    for p in &r.problems {
        println!("problem: {p}");
    }
    if r.is_sound() {
        println!(
            "sound: {} runs, {} vertices, {} edges",
            r.runs, r.vertices, r.edges
        );
        if r.history.0 > 0 {
            println!(
                "history: {} segments, {} commits, every checksum verified",
                r.history.0, r.history.1
            );
        }
        Ok(ExitCode::SUCCESS)
    } else {
        println!("{} problem(s) found", r.problems.len());
        Ok(ExitCode::from(1))
    }
}
