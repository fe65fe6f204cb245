//! `evograph compact`: full compaction into one base run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Flush and merge every run into one base run (tombstones dropped).
#[derive(clap::Args)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = crate::args::int::<usize>(0, 1024), allow_negative_numbers = true)]
    threads: usize,
    /// Whether to derive run versions, in a store that keeps history: compact (the
    /// default: each run without them gets them, so points inside its range read it
    /// filtered instead of undoing later changes) or never.
    #[arg(long, value_enum, default_value_t)]
    run_versions: crate::args::RunVersions,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let g = evograph::Graph::open(
        &a.store,
        evograph::Options::new()
            .create(false)
            .threads(a.threads)
            .run_versions(a.run_versions.into()),
    )?;
    crate::warn_open(&g);
    let before = g.stats()?.medium_bytes;
    let t = Instant::now();
    g.compact()?;
    let s = g.stats()?;
    warn_unversioned(&g, &s, a.run_versions);
    let after = s.medium_bytes;
    g.close()?;
    println!(
        "compacted in {:.3} s: {before} -> {after} bytes on the medium",
        t.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Says on stderr when `compact` left runs without versions in a store that keeps history:
/// points inside them are then built by undoing every later change (at Kron24 on a 24 GiB
/// machine, 27-32 s where the latest graph opens in 0.3 s), which `stats` alone told.
fn warn_unversioned(
    g: &evograph::Graph,
    s: &evograph::store::Stats,
    asked: crate::args::RunVersions,
) {
    let runs: usize = s.levels.iter().map(|l| l.runs).sum();
    let wanted =
        !matches!(asked, crate::args::RunVersions::Never) && g.history().keeps() && !s.weighted;
    if wanted && s.versions_files < runs {
        eprintln!(
            "evograph: run versions for {} of {runs} run(s): the others would hold more than half of the DRAM available while derived, their history does not cover them, or it is damaged (`evograph check` names what); points inside them are built by undoing every later change",
            s.versions_files
        );
    }
}
