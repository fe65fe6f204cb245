//! `evograph watch`: a kernel kept current on a store another process ingests into.

use crate::args;
use crate::standing::{write_full, write_step, Commits};
use evograph::algo::kernel::{limits, Kernel, Params};
use evograph::standing::{Maintainer, Recomputed, Step};
use evograph::store::Point;
use evograph::{Graph, GraphView, Options};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Follow a kernel's result as another process ingests into the store.
///
/// Prints `# lsn LSN` and then the full result at that commit in `vertex value` lines, as
/// `run` prints them (the same labels). Then, for each commit it reflects: `# lsn LSN` and
/// one `vertex old new` line per vertex whose value changed, `-` where the vertex does not
/// exist on that side; every reflected commit gets its `# lsn` line, even when nothing
/// changed. In a store keyed by names the fields are tab-separated. Output is flushed at
/// each commit. With --to, every commit the store holds between the start and --to gets
/// its own block, a commit whose changes are too large to bring the result forward
/// recomputed there and still listed. A live watcher that falls behind reflects the
/// newest commit in one step and says how many it covers: `# lsn L commits N` (`N+` when
/// the store no longer lists the older ones).
///
/// Kernels: wcc, bfs and sssp from --source, and pr-tol (PageRank within --tolerance, L1,
/// of its fixed point; a score is listed when it moved by more than the tolerance divided
/// by the vertex count since it was last listed). Results are brought forward by each
/// commit's changes. Where the store no longer holds them (the writer flushed past them in
/// a store without history), the result is recomputed and stderr says so.
///
/// It starts at the newest commit, or at --from if the store holds the changes since; with
/// --to it exits once it has reflected that commit, else it follows until interrupted.
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    /// wcc | bfs | sssp | pr-tol
    kernel: Kernel,
    /// Source vertex for bfs and sssp: its external id, or its name in a store with string
    /// keys.
    #[arg(long)]
    source: Option<String>,
    /// PageRank damping factor, in [0, 1).
    #[arg(long, default_value_t = 0.85, value_parser = args::real(limits::damping), allow_negative_numbers = true)]
    damping: f64,
    /// pr-tol's tolerance: the L1 distance from the fixed point it keeps within (above 0).
    #[arg(long, default_value_t = 1e-4, value_parser = args::real(limits::tolerance), allow_negative_numbers = true)]
    tolerance: f64,
    /// Start at this commit (an LSN, @SECONDS or RFC 3339: the last commit at or before
    /// it), if the store holds the changes since.
    #[arg(long, value_parser = args::point)]
    from: Option<Point>,
    /// Exit once the result reflects this commit.
    #[arg(long, value_parser = args::point)]
    to: Option<Point>,
    /// Milliseconds between looks at the store for new commits.
    #[arg(long, default_value_t = 100, value_parser = args::int::<u64>(1, 3_600_000))]
    poll_ms: u64,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = args::int::<u64>(0, 1024))]
    threads: u64,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let opened_at = fingerprint(&a.store);
    let g = open(&a)?;
    crate::warn_unreadable_tail(&g);
    let mut m = Maintainer::new(a.kernel, &params(&a, &g)?)?;
    if let Some(p) = a.from {
        // Says what is wrong when the point is outside the history the store keeps.
        let _ = g.snapshot_at(p)?;
    }
    let start = a.from.or(a.to.filter(|&b| passed(&g, b)));
    let first = m.step_upto(&g, start)?.expect("a first step computes");
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write_full(&mut out, "stdout".as_ref(), &m, first.lsn)?;
    let mut reader = g;
    // The files as they were before the reader opened: any commit after that changes them.
    let mut seen = opened_at;
    loop {
        // Once the store is past --to, the commit it names is settled: step there, exit.
        let target = a.to.filter(|&b| passed(&reader, b));
        let stored = stored_commits(&reader, m.lsn(), target)?;
        if stored.is_empty() {
            step_to(&mut out, &mut m, &reader, target)?;
        }
        // Commit by commit through what the store holds: every one gets its block.
        for c in stored {
            step_to(&mut out, &mut m, &reader, Some(Point::Lsn(c)))?;
        }
        if target.is_some() {
            return Ok(ExitCode::SUCCESS);
        }
        while fingerprint(&a.store) == seen {
            std::thread::sleep(Duration::from_millis(a.poll_ms));
        }
        drop(reader);
        seen = fingerprint(&a.store);
        reader = open(&a)?;
    }
}

/// Steps `m` to the commit `at` names (the newest when `None`) and prints the step, saying
/// how many commits it reflects when more than one.
fn step_to(
    out: &mut impl std::io::Write,
    m: &mut Maintainer,
    g: &Graph,
    at: Option<Point>,
) -> evograph::Result<()> {
    let before = m.lsn();
    let Some(step) = m.step_upto(g, at)? else {
        return Ok(());
    };
    say_recomputed(&step);
    let commits = commits_between(g, before, step.lsn)?;
    write_step(out, m.graph().expect("stepped"), &step, commits)
        .map_err(|e| evograph::Error::io("write", "stdout", e))
}

/// The LSNs of the commits the store lists after `after` up to `target` (an LSN or time;
/// none when `target` is `None`, the newest then being stepped to directly), oldest first.
fn stored_commits(g: &Graph, after: u64, target: Option<Point>) -> evograph::Result<Vec<u64>> {
    let Some(b) = target else {
        return Ok(Vec::new());
    };
    let log = g.log()?;
    Ok((log.commits.iter())
        .map(|(c, _)| *c)
        .filter(|c| c.lsn > after)
        .take_while(|c| match b {
            Point::Lsn(k) => c.lsn <= k,
            Point::Time(t) => c.unix_nanos <= t,
        })
        .map(|c| c.lsn)
        .collect())
}

/// How many commits lie in `after+1 ..= lsn`: exactly, when the store's list of commits
/// reaches back to `after`; else at least those it lists.
fn commits_between(g: &Graph, after: u64, lsn: u64) -> evograph::Result<Commits> {
    let log = g.log()?;
    let n = (log.commits.iter())
        .filter(|(c, _)| c.lsn > after && c.lsn <= lsn)
        .count()
        .max(1);
    let reaches_back = after == 0 || log.commits.first().is_some_and(|(c, _)| c.lsn <= after);
    Ok(match reaches_back {
        true => Commits::Exactly(n),
        false => Commits::AtLeast(n),
    })
}

/// Opens the store read-only, its log replayed into a memtable that keeps each commit's
/// changes for the maintainer.
fn open(a: &Args) -> evograph::Result<Graph> {
    let threads = match a.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        t => t as usize,
    };
    let opts = Options::new()
        .create(false)
        .read_only(true)
        .follow_changes(true)
        .threads(threads);
    Graph::open(&a.store, opts)
}

/// The kernel's parameters, the source looked up in `g`.
fn params(a: &Args, g: &Graph) -> evograph::Result<Params> {
    let mut p = Params::default();
    p.damping = a.damping;
    p.tolerance = a.tolerance;
    if a.kernel.needs_source() {
        let key = a
            .source
            .as_deref()
            .ok_or_else(|| evograph::Error::Invalid(format!("{} needs --source", a.kernel)))?;
        let s = g.snapshot()?;
        let v = g.dense_id_of(key)?.filter(|&v| s.vertex_exists(v));
        p.source = Some(v.ok_or_else(|| {
            evograph::Error::Invalid(format!("vertex {key} is not in the graph"))
        })?);
    }
    Ok(p)
}

/// Whether the store's newest commit is at or past `b`, so that the commit `b` names is
/// settled (a later commit cannot come before it).
fn passed(g: &Graph, b: Point) -> bool {
    match (g.last_commit(), b) {
        (Some(c), Point::Lsn(k)) => c.lsn >= k,
        (Some(c), Point::Time(t)) => c.unix_nanos >= t,
        (None, _) => false,
    }
}

/// Says on stderr that a step recomputed the result, and why.
fn say_recomputed(step: &Step) {
    let why = match step.recomputed {
        None => return,
        Some(Recomputed::ChangesGone) => "the store no longer holds the changes since the last commit reflected (it was flushed past them and keeps no history)",
        Some(Recomputed::LargeBatch) => "the changes since the last commit reflected touch more than an eighth of the edges",
    };
    eprintln!("evograph: watch: {why}; recomputed at LSN {}", step.lsn);
}

/// Sizes and modification times of the store's files: unchanged, no commit came.
fn fingerprint(store: &Path) -> Vec<(std::ffi::OsString, u64, Option<std::time::SystemTime>)> {
    let mut files: Vec<_> = std::fs::read_dir(store)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let md = e.metadata().ok()?;
            Some((e.file_name(), md.len(), md.modified().ok()))
        })
        .collect();
    files.sort();
    files
}
