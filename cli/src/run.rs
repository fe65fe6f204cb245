//! `evograph run`: a GAP or Graphalytics kernel on the latest snapshot of a store.

use crate::args;
use evograph::algo::graphalytics as ga;
use evograph::algo::kernel::{self, limits, Kernel, Params, Values};
use evograph::pregel::Delivery;
use evograph::snapshot::Patched;
use evograph::{GraphView, Snapshot, SweepReads, VertexId};
use rayon::prelude::*;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run a kernel on the store's latest graph.
///
/// Output: one line `<external id> <value>` per existing vertex (isolated ones included),
/// sorted by external id. In a store with string keys each line is `<name><TAB><value>`
/// (a name may hold spaces), lines are sorted by name (bytewise), and values that are
/// vertices (wcc, cdlp, gap-cc and pregel-cc labels, gap-bfs parents) are names too. Integers print as integers, reals like the Graphalytics reference
/// files (`%.15e`). A vertex the source cannot reach gets the kernel's "no value": bfs
/// prints depth 9223372036854775807 and sssp and gap-sssp print distance Infinity (the
/// Graphalytics conventions check.py expects); gap-bfs prints parent -1. Kernels:
///
/// - bfs: depth from --source. pr, cdlp: fixed --iterations (10). wcc: a component label
///   (the external id of the member that arrived first). lcc: local clustering
///   coefficient (0 below degree 2).
///   sssp: distance from --source (weights must be non-negative; unweighted edges weigh 1).
/// - gap-bfs: the BFS *parent* of each vertex (the source is its own parent; GAPBS).
///   gap-sssp: delta-stepping distances. gap-pr: PageRank by Gauss-Seidel sweeps (GAPBS's
///   PageRankPullGS) until a sweep changes the scores by less than --tolerance (L1) or
///   --iterations (20) sweeps ran; the last digits vary with thread timing. gap-cc:
///   Afforest labels (a member's external id). bc: betweenness from --samples sources, normalized to a maximum of 1,
///   GAPBS's convention: each source is credited with its own dependency (Brandes' paper
///   skips it).
/// - tc: one line, the number of triangles of the undirected graph (a directed store's
///   edge directions are ignored, and each triangle counts once).
/// - kcore: each vertex's core number (in- plus out-neighbors in a directed store,
///   self-loops aside).
/// - khop: `<external id> <hops>` for each vertex 1 or 2 out-hops from --source (hops is the
///   fewer of the two), sorted by id; the source itself is never listed.
/// - pregel-pr, pregel-cc, pregel-bfs, pregel-sssp: the same results as pr, wcc, bfs and
///   sssp, computed by vertex programs on the Pregel engine (evograph::pregel). --delivery
///   overrides each program's push or pull; --max-supersteps bounds the run (a run stopped
///   there says so on stderr and exits with status 3, its values not final).
///
/// --json prints one JSON object (time and summary) on stdout; with --output the values are
/// written to that file as well. It reports what came before the kernel too: open_seconds
/// (opening the store and taking its snapshot), view (how kernels read the snapshot: flat,
/// flat-streamed, packed, packed-streamed, runs-streamed, layered, layered-copy, runs-merged,
/// runs-merged-copy, point, point-copy, runs or runs-copy), view_seconds
/// (building that view)
/// and, when pr or gap-pr streamed its lists, stream (direct, bytes_read, fallbacks,
/// window_bytes, kept_bytes: windows kept in DRAM after the first pass, kept_packed_bytes:
/// those of them kept compressed). --trials N runs
/// the kernel N times on the same snapshot (as GAPBS's -n does) and reports the median time, each trial's in `trial_seconds`. The
/// summary and values are the last trial's; a kernel whose rounds vary by trial (gap-pr
/// stops at its tolerance, vertex programs when all halt) lists each trial's count in
/// `trial_iterations` or `trial_supersteps` and reports `seconds_per_iteration` (or
/// `seconds_per_superstep`), the median over the trials of time over rounds.
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    #[command(flatten)]
    reach: crate::args::Reach,
    #[command(flatten)]
    when: crate::args::When,
    /// Rolling: the first step's point (with --every; an LSN, @SECONDS or RFC 3339).
    #[arg(long, value_parser = args::point, requires = "every")]
    from: Option<evograph::store::Point>,
    /// Rolling: the last step's point at most.
    #[arg(long, value_parser = args::point, requires = "every")]
    to: Option<evograph::store::Point>,
    /// Rolling: the kernel at every STEP from --from to --to, a duration from --from's time
    /// (90s, 12h, 7d) or a number of commits from its commit, one `# at TIME (commit LSN
    /// L)` block of values per step. wcc, bfs, sssp and pr-tol are brought forward from
    /// the step before (without --width); other kernels, and windows, are computed afresh.
    #[arg(long, value_name = "STEP", requires_all = ["from", "to"],
        conflicts_with_all = ["at", "window", "json", "output", "trials"])]
    every: Option<evograph::store::Stride>,
    /// Rolling: each step reads the window of this width (a duration or a number of
    /// commits) that ends with it, its state included, as --window reads one.
    #[arg(long, requires = "every")]
    width: Option<evograph::store::Stride>,
    /// bfs | pr | wcc | cdlp | lcc | sssp | gap-bfs | gap-sssp | gap-pr | gap-cc | bc | tc | kcore | khop |
    /// pregel-pr | pregel-cc | pregel-bfs | pregel-sssp
    kernel: Kernel,
    /// Source vertex for bfs, sssp, gap-bfs, gap-sssp, khop; bc's first source: its
    /// external id, or its name in a store with string keys.
    #[arg(long)]
    source: Option<String>,
    /// Iterations: fixed for pr and cdlp (default 10 and 10), the maximum for gap-pr (20).
    #[arg(long, value_parser = args::whole(limits::iterations), allow_negative_numbers = true)]
    iterations: Option<u32>,
    /// PageRank damping factor, in [0, 1).
    #[arg(long, default_value_t = 0.85, value_parser = args::real(limits::damping), allow_negative_numbers = true)]
    damping: f64,
    /// gap-pr stops once the scores change by less than this in total (L1); 0 runs every
    /// sweep up to --iterations, as GAPBS's `-t 0`.
    #[arg(long, default_value_t = 1e-4, value_parser = args::real(limits::tolerance), allow_negative_numbers = true)]
    tolerance: f64,
    /// Bucket width for delta-stepping SSSP; positive.
    #[arg(long, default_value_t = 1.0, value_parser = args::real(limits::delta), allow_negative_numbers = true)]
    delta: f64,
    /// Number of sources for bc.
    #[arg(long, default_value_t = 4, value_parser = args::whole(limits::samples), allow_negative_numbers = true)]
    samples: usize,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = args::int::<u64>(0, 1024), allow_negative_numbers = true)]
    threads: u64,
    /// MiB of DRAM a store of several runs may fill with a copy of the neighbor lists a
    /// kernel sweeps 12 times or more (gap-pr's in-lists; pr's and cdlp's with
    /// --iterations 12 or more), so that each pass reads one array instead of every run's
    /// slice. Default: half the DRAM
    /// available (MemAvailable, or the cgroup's headroom when lower); 0 reads the runs in
    /// place always.
    #[arg(long, value_parser = args::int::<usize>(0, 1 << 30), allow_negative_numbers = true)]
    view_mb: Option<usize>,
    /// How pr and gap-pr read a compacted store's in-lists on each pass: auto (streamed with
    /// direct I/O, a window at a time, when they and the kernel's state do not fit the DRAM
    /// available: a store larger than memory, or a memory cgroup; else through the mapping),
    /// mapped or streamed.
    #[arg(long, value_enum, default_value_t = Reads::Auto)]
    sweep_reads: Reads,
    /// Write the per-vertex output here instead of stdout (with --json as well as it).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Print one JSON object (time and summary) instead of per-vertex values.
    #[arg(long)]
    json: bool,
    /// Run the kernel this many times and report the median time (values of the last).
    #[arg(long, default_value_t = 1, value_parser = args::int::<u32>(1, 10_000), allow_negative_numbers = true)]
    trials: u32,
    /// Check the result with the kernel's verifier (GAP kernels) before printing.
    #[arg(long)]
    verify: bool,
    /// Pregel kernels: push or pull delivery (default: each program's own).
    #[arg(long)]
    delivery: Option<Delivery>,
    /// Pregel kernels: supersteps to run at most.
    #[arg(long, default_value_t = 10_000, value_parser = args::whole(limits::max_supersteps), allow_negative_numbers = true)]
    max_supersteps: u32,
}

fn invalid(msg: impl Into<String>) -> evograph::Error {
    evograph::Error::Invalid(msg.into())
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let threads = if a.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        a.threads as usize
    };
    let started = std::time::Instant::now();
    let output = (a.output.as_deref())
        .map(|p| {
            crate::output::Guard::new()
                .store(&a.store)
                .file(p, "--output")
        })
        .transpose()?;
    let g = evograph::Graph::open(
        &a.store,
        evograph::Options::new()
            .create(false)
            .read_only(true)
            .log_reach(a.reach.log_reach())
            .threads(threads)
            .view_copy_bytes(a.view_mb.map(|mb| mb << 20))
            .sweep_reads(a.sweep_reads.into()),
    )?;
    crate::warn_unreadable_tail(&g);
    if a.every.is_some() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        return run_rolling(&a, &g, &pool);
    }
    let s = crate::args::snapshot_of(&g, a.when)?;
    let opened = started.elapsed().as_secs_f64();
    let source = source(&a, &g, &s)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| invalid(e.to_string()))?;
    let params = params(&a, source);
    let ready = Ready {
        open_seconds: opened,
        view: prepare_view(&pool, &s, a.kernel, &params),
    };
    let (out, trials) = run_trials(&pool, &s, a.kernel, &params, a.trials)?;
    let unfinished = warn(&a, &s, &out);
    let code = if unfinished {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    };
    if a.output.is_some() || !a.json {
        pool.install(|| write_values(&s, a.kernel, &out.values, output))?;
    }
    if a.json {
        println!(
            "{}",
            json_report(&a, &s, threads, &ready, out.report, &trials)
        );
    }
    Ok(code)
}

/// `--every`: the kernel at each step, under one `# at TIME (commit LSN L)` line each; a
/// step whose graph lacks `--source` says so in its block and is skipped.
fn run_rolling(
    a: &Args,
    g: &evograph::Graph,
    pool: &rayon::ThreadPool,
) -> evograph::Result<ExitCode> {
    let (Some(from), Some(to), Some(every)) = (a.from, a.to, a.every) else {
        return Err(invalid("--every needs --from and --to"));
    };
    let steps = g.rolling_steps(from, to, every, a.width)?;
    if a.width.is_none() && FORWARD.contains(&a.kernel) {
        if let Some(src) = forward_source(a, g)? {
            return roll_forward(a, g, pool, &steps, src);
        }
    }
    let mut unfinished = false;
    for st in &steps {
        let s = match st.window {
            Some((x, y)) => g.snapshot_window(x, y)?.0,
            None => g.snapshot_at(st.at)?.0,
        };
        println!("# at {} (commit LSN {})", step_time(st), st.commit.lsn);
        let source = match source(a, g, &s) {
            Ok(v) => v,
            Err(_) if a.source.is_some() => {
                let key = a.source.as_deref().unwrap_or_default();
                println!("# vertex {key} is not in this step's graph: no values");
                continue;
            }
            Err(e) => return Err(e),
        };
        let params = params(a, source);
        let (out, _) = run_trials(pool, &s, a.kernel, &params, 1)?;
        unfinished |= warn(a, &s, &out);
        pool.install(|| write_values(&s, a.kernel, &out.values, None))?;
    }
    Ok(if unfinished {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// The kernels a rolling computation brings forward from step to step (by the net
/// changes between their points, patched over the graph, when they fit the patch):
/// their values there are exactly a recompute's, and pr-tol's within its tolerance of
/// the fixed point as a recompute's are (a step whose residual needs more sweeps than a
/// recompute recomputes, from the scores kept). Others compute afresh at each step.
const FORWARD: [Kernel; 4] = [Kernel::Wcc, Kernel::Bfs, Kernel::Sssp, Kernel::PrTol];

/// The source a rolling computation brought forward starts from: `Some(None)` for a
/// kernel that needs none, `None` when `--source` names no vertex the store ever had
/// (then each step says so, computed afresh).
fn forward_source(a: &Args, g: &evograph::Graph) -> evograph::Result<Option<Option<VertexId>>> {
    match &a.source {
        None => Ok(Some(None)),
        Some(key) => Ok(g.dense_id_of(key)?.map(Some)),
    }
}

/// `--every` for the kernels of [`FORWARD`]: the values at each step brought forward from
/// the step before (`Maintainer::step_upto`), printed as `run --at` prints them.
fn roll_forward(
    a: &Args,
    g: &evograph::Graph,
    pool: &rayon::ThreadPool,
    steps: &[evograph::store::RollStep],
    source: Option<VertexId>,
) -> evograph::Result<ExitCode> {
    let mut m = evograph::standing::Maintainer::new(a.kernel, &params(a, source))?;
    for st in steps {
        pool.install(|| m.step_upto(g, Some(evograph::store::Point::Lsn(st.commit.lsn))))?;
        println!("# at {} (commit LSN {})", step_time(st), st.commit.lsn);
        let graph = m.graph().expect("stepped");
        if source.is_some_and(|v| !graph.vertex_exists(v)) {
            let key = a.source.as_deref().unwrap_or_default();
            println!("# vertex {key} is not in this step's graph: no values");
            continue;
        }
        let values = m.kernel_values();
        pool.install(|| write_values(graph, a.kernel, &values, None))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A step's point as its `# at` line shows it: a time, or the LSN it names.
fn step_time(st: &evograph::store::RollStep) -> String {
    match st.at {
        evograph::store::Point::Time(t) => evograph::time::show(t),
        p => p.to_string(),
    }
}

/// The dense id of `--source`, which must be in the graph; none when the kernel needs
/// none.
fn source(a: &Args, g: &evograph::Graph, s: &Snapshot) -> evograph::Result<Option<VertexId>> {
    let Some(key) = &a.source else {
        return match a.kernel.needs_source() {
            true => Err(invalid(format!("{} needs --source", a.kernel))),
            false => Ok(None),
        };
    };
    let v = g.dense_id_of(key)?.filter(|&v| s.vertex_exists(v));
    v.map(Some)
        .ok_or_else(|| invalid(format!("vertex {key} is not in the graph")))
}

/// Says on stderr what the user should know of the run; whether the kernel stopped
/// before it finished (a vertex program at its superstep limit).
fn warn(a: &Args, s: &Snapshot, out: &evograph::algo::kernel::Outcome) -> bool {
    if a.kernel == Kernel::Tc && !s.is_undirected() {
        eprintln!("evograph: tc counts triangles of the undirected graph: this directed store's edge directions are ignored");
    }
    let said = |key: &str| out.report.get(key).and_then(|v| v.as_str());
    if let Some(note) = said("verify_note") {
        eprintln!("evograph: {note}");
    }
    let unfinished = out.unfinished();
    if unfinished {
        eprintln!(
            "evograph: {} {}",
            a.kernel,
            said("stop").unwrap_or_default()
        );
    }
    unfinished
}

/// What a run spent before its first trial, which a user waits for as much as the kernel.
struct Ready {
    /// Opening the store (its runs mapped, its dictionary read, the log's tail replayed)
    /// and taking the snapshot (that tail sealed).
    open_seconds: f64,
    /// How kernels read the snapshot, and the seconds spent building that view.
    view: (&'static str, f64),
}

/// `--sweep-reads`: [`SweepReads`] as the command line names it.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Reads {
    Auto,
    Mapped,
    Streamed,
}

impl From<Reads> for SweepReads {
    fn from(r: Reads) -> SweepReads {
        match r {
            Reads::Auto => SweepReads::Auto,
            Reads::Mapped => SweepReads::Mapped,
            Reads::Streamed => SweepReads::Streamed,
        }
    }
}

/// Builds the view the kernel will read before the first trial, so that its cost is
/// reported on its own; the view's kind and the seconds it took.
fn prepare_view(
    pool: &rayon::ThreadPool,
    s: &Snapshot,
    k: Kernel,
    p: &Params,
) -> (&'static str, f64) {
    let t = std::time::Instant::now();
    let kind = pool.install(|| kernel::prepare(s, k, p));
    (kind, t.elapsed().as_secs_f64())
}

/// The `--json` line: the run, the kernel's report and its trials' times.
fn json_report(
    a: &Args,
    s: &Snapshot,
    threads: usize,
    ready: &Ready,
    mut summary: serde_json::Map<String, serde_json::Value>,
    trials: &[Trial],
) -> serde_json::Value {
    let trial_seconds: Vec<f64> = trials.iter().map(|t| t.seconds).collect();
    let seconds = crate::bench::median(&trial_seconds).expect("one trial at least");
    let mut o = json!({
        "kernel": a.kernel.name(),
        "seconds": seconds,
        "threads": threads,
        "vertices": s.live_vertices(),
        "edges": s.num_edges(),
        "runs": s.runs().len(),
        "open_seconds": ready.open_seconds,
        "view": ready.view.0,
        "view_seconds": ready.view.1,
        "stream": s.sweep_stream().map(|st| json!({
            "direct": st.direct, "bytes_read": st.bytes_read, "fallbacks": st.fallbacks,
            "window_bytes": st.window, "kept_bytes": st.kept,
            "kept_packed_bytes": st.kept_packed,
        })),
        "trial_seconds": trial_seconds,
        "output": a.output.as_ref().map(|p| p.display().to_string()),
    });
    if let Some(e) = summary.get("edges_traversed").and_then(|v| v.as_f64()) {
        summary.insert("gteps".into(), (e / seconds.max(1e-9) / 1e9).into());
    }
    o.as_object_mut().unwrap().extend(summary);
    o.as_object_mut().unwrap().extend(per_round(trials));
    o
}

/// One trial's time and, for a kernel that reports them, its rounds.
struct Trial {
    seconds: f64,
    /// The report key the rounds came from (`iterations` or `supersteps`) and their count.
    rounds: Option<(&'static str, u64)>,
}

/// Report keys that count a kernel's rounds.
const ROUND_KEYS: [&str; 2] = ["iterations", "supersteps"];

/// Runs the kernel `trials` times; the last run's output and every run's time and rounds.
fn run_trials(
    pool: &rayon::ThreadPool,
    s: &Snapshot,
    k: Kernel,
    params: &Params,
    trials: u32,
) -> evograph::Result<(kernel::Outcome, Vec<Trial>)> {
    let mut done = Vec::with_capacity(trials as usize);
    loop {
        let out = pool.install(|| kernel::run(s, k, params))?;
        let rounds = ROUND_KEYS
            .into_iter()
            .find_map(|key| Some((key, out.report.get(key)?.as_u64()?)));
        done.push(Trial {
            seconds: out.seconds,
            rounds,
        });
        if done.len() == trials as usize {
            return Ok((out, done));
        }
    }
}

/// Each trial's rounds (`trial_iterations` or `trial_supersteps`) and the median time per
/// round (`seconds_per_iteration` or `seconds_per_superstep`), so that trials that ran
/// different numbers of rounds still compare; empty for a kernel without rounds.
fn per_round(trials: &[Trial]) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    let Some((key, _)) = trials.first().and_then(|t| t.rounds) else {
        return m;
    };
    let counts: Vec<u64> = trials
        .iter()
        .filter_map(|t| t.rounds.map(|r| r.1))
        .collect();
    let per: Vec<f64> = trials
        .iter()
        .filter_map(|t| t.rounds.map(|r| t.seconds / r.1.max(1) as f64))
        .collect();
    let singular = key.strip_suffix('s').unwrap_or(key);
    m.insert(format!("trial_{key}"), counts.into());
    if let Some(med) = crate::bench::median(&per) {
        m.insert(format!("seconds_per_{singular}"), med.into());
    }
    m
}

/// Writes the per-vertex values to `output` (replaced only once all are written), or
/// stdout; a closed pipe is not an error.
fn write_values(
    s: &impl Keyed,
    kernel: Kernel,
    values: &Values,
    output: Option<crate::output::Target>,
) -> evograph::Result<()> {
    let Some(target) = output else {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        return match print(&mut w, s, kernel, values).and_then(|_| w.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            res => res.map_err(|e| evograph::Error::io("write", "stdout", e)),
        };
    };
    let r = crate::output::Replacement::create(target)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, r.file());
    print(&mut w, s, kernel, values)
        .and_then(|_| w.flush())
        .map_err(|e| evograph::Error::io("write", r.path(), e))?;
    drop(w);
    r.commit()
}

/// The kernel parameters the command line sets.
fn params(a: &Args, source: Option<VertexId>) -> Params {
    let mut p = Params::default();
    p.source = source;
    p.iterations = a.iterations;
    p.damping = a.damping;
    p.tolerance = a.tolerance;
    p.delta = a.delta;
    p.samples = a.samples;
    p.verify = a.verify;
    p.delivery = a.delivery;
    p.max_supersteps = a.max_supersteps;
    p
}

/// What printing values reads of a graph besides its vertices: their keys and order.
pub trait Keyed: GraphView {
    /// The key of vertex `v`.
    fn key(&self, v: VertexId) -> evograph::Key<'_>;
    /// A number per vertex that sorts vertices as their keys do.
    fn key_order(&self) -> std::borrow::Cow<'_, [u64]>;
    /// Whether vertices are named (keys may hold spaces).
    fn named(&self) -> bool;
    /// The key of the vertex with external id `ext`.
    fn key_of_external(&self, ext: u64) -> Option<evograph::Key<'_>>;
}

impl Keyed for Snapshot {
    fn key(&self, v: VertexId) -> evograph::Key<'_> {
        Snapshot::key(self, v)
    }
    fn key_order(&self) -> std::borrow::Cow<'_, [u64]> {
        Snapshot::key_order(self)
    }
    fn named(&self) -> bool {
        self.names().is_some()
    }
    fn key_of_external(&self, ext: u64) -> Option<evograph::Key<'_>> {
        Snapshot::key_of_external(self, ext)
    }
}

impl Keyed for Patched {
    fn key(&self, v: VertexId) -> evograph::Key<'_> {
        Patched::key(self, v)
    }
    /// The snapshot's order, then the added vertices' external ids (vertices are added
    /// to a patch in integer-keyed stores only).
    fn key_order(&self) -> std::borrow::Cow<'_, [u64]> {
        let base = self.base().key_order();
        if self.added_vertices().is_empty() {
            return base;
        }
        let mut all = base.into_owned();
        all.extend_from_slice(self.added_vertices());
        std::borrow::Cow::Owned(all)
    }
    fn named(&self) -> bool {
        self.base().names().is_some()
    }
    fn key_of_external(&self, ext: u64) -> Option<evograph::Key<'_>> {
        self.base().key_of_external(ext)
    }
}

pub fn print(
    w: &mut impl Write,
    s: &impl Keyed,
    kernel: Kernel,
    values: &Values,
) -> std::io::Result<()> {
    let order = s.key_order();
    let live = by_key(s, &order);
    let named = s.named();
    // Names may hold spaces; a tab keeps the columns apart.
    let sep = if named { '\t' } else { ' ' };
    // An integer key is the number it sorts by, already beside the vertex: looked up again
    // per line, it was a cache miss per line (a third of a one-pass PageRank's time on
    // Kron24, start to exit).
    let key = |b: &mut Vec<u8>, (k, v): (u64, VertexId)| match named {
        true => put_key(b, s.key(v), sep),
        false => put_key(b, evograph::Key::Id(k), sep),
    };
    match values {
        // Labels and parents of a string-keyed store are printed as the names they are.
        Values::Int(x) if kernel.values_are_vertices() && named => {
            write_lines(w, &live, at(x), |b, (_, v), l| {
                // -1 (a BFS parent never reached) has no name, and prints as itself.
                put_key(b, s.key(v), sep);
                match u64::try_from(l).ok().and_then(|l| s.key_of_external(l)) {
                    Some(l) => put_key(b, l, '\n'),
                    None => put_int(b, l, '\n'),
                }
            })?
        }
        Values::Int(x) => write_lines(w, &live, at(x), |b, kv, x| {
            key(b, kv);
            put_int(b, x, '\n');
        })?,
        Values::Float(x) => write_lines(w, &live, at(x), |b, kv, x| {
            key(b, kv);
            ga::write_f64(b, x);
            b.push(b'\n');
        })?,
        Values::Scalar(n) => writeln!(w, "{n}")?,
        Values::Hops(hops) => {
            let mut hops = hops.clone();
            hops.sort_unstable_by_key(|h| order[h.0 as usize]);
            for (v, h) in hops {
                writeln!(w, "{}{sep}{h}", s.key(v))?;
            }
        }
    }
    Ok(())
}

/// Lines formatted by one task.
const LINES_PER_TASK: usize = 1 << 14;

/// Lines formatted before any is written: bounds the text held in DRAM (about 30 MB with
/// integer keys; names make lines longer).
const LINES_PER_WINDOW: usize = 1 << 20;

/// Writes `line`'s text for each of `items` (vertices, with what they sort by), in order,
/// with what `fetch` gives for it. The text is formatted in parallel, a window at a time:
/// formatted one line after another, printing PageRank's values took as long as computing
/// them. Each task fetches its lines' values before it formats any: in key order a vertex's
/// value is a cache miss, and a loop that only loads keeps many misses in flight where
/// one that formats between them waits for each (printing gap-cc's labels was a quarter of
/// `run`'s time on Kron24).
fn write_lines<T: Copy + Sync, U: Copy>(
    w: &mut impl Write,
    items: &[T],
    fetch: impl Fn(T) -> U + Sync,
    line: impl Fn(&mut Vec<u8>, T, U) + Sync,
) -> std::io::Result<()> {
    for window in items.chunks(LINES_PER_WINDOW) {
        let texts: Vec<Vec<u8>> = window
            .par_chunks(LINES_PER_TASK)
            .map(|vs| {
                let got: Vec<U> = vs.iter().map(|&v| fetch(v)).collect();
                let mut b = Vec::with_capacity(vs.len() * 32);
                vs.iter().zip(got).for_each(|(&v, u)| line(&mut b, v, u));
                b
            })
            .collect();
        texts.iter().try_for_each(|t| w.write_all(t))?;
    }
    Ok(())
}

/// A fetch for [`write_lines`]: the value of each line's vertex in `x`.
fn at<X: Copy + Sync>(x: &[X]) -> impl Fn((u64, VertexId)) -> X + Sync + '_ {
    move |(_, v)| x[v as usize]
}

/// The existing vertices in key order, each beside the number it sorts by (`order`'s).
fn by_key(s: &impl Keyed, order: &[u64]) -> Vec<(u64, VertexId)> {
    crate::key_order::by_key(order, |v| s.vertex_exists(v))
}

/// Appends a key and then `end` to a line buffer.
pub(crate) fn put_key(b: &mut Vec<u8>, key: evograph::Key<'_>, end: char) {
    match key {
        evograph::Key::Id(x) => b.extend_from_slice(itoa::Buffer::new().format(x).as_bytes()),
        evograph::Key::Name(n) => b.extend_from_slice(n.as_bytes()),
    }
    b.push(end as u8);
}

/// Appends an integer and then `end` to a line buffer (`itoa`: `format!` spent more time
/// on Kron24's 8.9 M lines than the kernel that computed them).
fn put_int(b: &mut Vec<u8>, x: i64, end: char) {
    b.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
    b.push(end as u8);
}

/// Appends formatted text to a line buffer.
#[cfg(test)]
fn put(b: &mut Vec<u8>, args: std::fmt::Arguments<'_>) {
    b.write_fmt(args).expect("writing to a Vec cannot fail");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines formatted by many tasks over several windows come out in the vertices' order,
    /// each with the value fetched for its own vertex, exactly as formatting them one
    /// after another gives.
    #[test]
    fn lines_come_out_in_order_across_tasks_and_windows() {
        let n = LINES_PER_WINDOW + 3 * LINES_PER_TASK + 5;
        let vs: Vec<VertexId> = (0..n as VertexId).rev().collect();
        let mut out = Vec::new();
        write_lines(
            &mut out,
            &vs,
            |v| v as f64 / 3.0,
            |b, v, x| {
                put(b, format_args!("{v} "));
                ga::write_f64(b, x);
                b.push(b'\n');
            },
        )
        .unwrap();
        let want: String = (vs.iter())
            .map(|&v| format!("{v} {}\n", ga::format_f64(v as f64 / 3.0)))
            .collect();
        assert!(out == want.as_bytes(), "lines out of order or altered");
    }
}
