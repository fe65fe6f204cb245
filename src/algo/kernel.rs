//! Every kernel by name, on a snapshot: what `evograph run` and the Python module call, so
//! the command line and Python compute the same thing the same way.

use super::{gap, graphalytics as ga};
use crate::pregel::{self, programs, Delivery, Program};
use crate::snapshot::{Access, Dir, MergeInPlace};
use crate::types::VertexId;
use crate::{Error, GraphView, Result, Snapshot};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{json, Map, Value};
use std::time::Instant;

/// Passes over a direction from which copying its lists out of several runs into one
/// array pays ([`Kernel::sweeps`]). On Kron24 as ingest leaves it (five runs), a PageRank
/// pass read 0.3 s slower from the runs than from one array, and the 1.1 GB copy took
/// 0.3-2.9 s, most of it the kernel zeroing fresh pages: about ten passes. That copy was
/// in huge pages; in base-size pages it takes 0.43-0.48 s (ten runs of Kron24 at the
/// default budget, whose in-place pass reads 0.15 s slower), so fewer passes would pay.
pub const SWEEPS_FOR_A_COPY: u32 = 12;

/// A kernel that [`run`] computes on a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// Graphalytics BFS: depth from the source ([`ga::UNREACHABLE`] when unreached).
    Bfs,
    /// Graphalytics PageRank, a fixed number of iterations.
    Pr,
    /// Graphalytics weakly connected components: a member's id labels each component.
    Wcc,
    /// Graphalytics community detection by label propagation.
    Cdlp,
    /// Graphalytics local clustering coefficient.
    Lcc,
    /// Graphalytics single-source shortest paths (infinite when unreached).
    Sssp,
    /// GAP direction-optimising BFS: each vertex's parent (-1 when unreached).
    GapBfs,
    /// GAP delta-stepping SSSP.
    GapSssp,
    /// GAP PageRank until the scores change by less than the tolerance.
    GapPr,
    /// PageRank within the tolerance (L1) of its fixed point, deterministic
    /// ([`crate::algo::pr_tolerance`]): the PageRank a standing kernel keeps.
    PrTol,
    /// GAP connected components (Afforest).
    GapCc,
    /// GAP betweenness centrality from sampled sources.
    Bc,
    /// GAP triangle counting (one number).
    Tc,
    /// Core numbers (Batagelj and Zaversnik's peeling, [`crate::algo::kcore`]).
    Kcore,
    /// Communities by semi-synchronous label propagation ([`crate::algo::lpa`]): NetworkX's
    /// `label_propagation_communities`.
    Lpa,
    /// The vertices one or two out-hops from the source.
    Khop,
    /// PageRank as a vertex program.
    PregelPr,
    /// Connected components as a vertex program.
    PregelCc,
    /// BFS depths as a vertex program.
    PregelBfs,
    /// SSSP as a vertex program.
    PregelSssp,
}

impl Kernel {
    /// Every kernel, in the order help texts list them.
    pub const ALL: [Kernel; 20] = [
        Kernel::Bfs,
        Kernel::Pr,
        Kernel::Wcc,
        Kernel::Cdlp,
        Kernel::Lcc,
        Kernel::Sssp,
        Kernel::GapBfs,
        Kernel::GapSssp,
        Kernel::GapPr,
        Kernel::PrTol,
        Kernel::GapCc,
        Kernel::Bc,
        Kernel::Tc,
        Kernel::Kcore,
        Kernel::Lpa,
        Kernel::Khop,
        Kernel::PregelPr,
        Kernel::PregelCc,
        Kernel::PregelBfs,
        Kernel::PregelSssp,
    ];

    /// The kernel's name on the command line (`gap-bfs`, `pregel-cc`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Bfs => "bfs",
            Kernel::Pr => "pr",
            Kernel::Wcc => "wcc",
            Kernel::Cdlp => "cdlp",
            Kernel::Lcc => "lcc",
            Kernel::Sssp => "sssp",
            Kernel::GapBfs => "gap-bfs",
            Kernel::GapSssp => "gap-sssp",
            Kernel::GapPr => "gap-pr",
            Kernel::PrTol => "pr-tol",
            Kernel::GapCc => "gap-cc",
            Kernel::Bc => "bc",
            Kernel::Tc => "tc",
            Kernel::Kcore => "kcore",
            Kernel::Lpa => "lpa",
            Kernel::Khop => "khop",
            Kernel::PregelPr => "pregel-pr",
            Kernel::PregelCc => "pregel-cc",
            Kernel::PregelBfs => "pregel-bfs",
            Kernel::PregelSssp => "pregel-sssp",
        }
    }

    /// Whether the kernel cannot run without a source vertex (the GAP kernels pick one).
    pub fn needs_source(self) -> bool {
        matches!(
            self,
            Kernel::Bfs | Kernel::Sssp | Kernel::PregelBfs | Kernel::PregelSssp
        )
    }

    /// Whether the kernel's per-vertex values are vertices, given by external id (component
    /// and community labels, BFS parents, where -1 means none): a string-keyed store prints
    /// them as names ([`Snapshot::key_of_external`]).
    pub fn values_are_vertices(self) -> bool {
        matches!(
            self,
            Kernel::Wcc
                | Kernel::Cdlp
                | Kernel::Lpa
                | Kernel::GapBfs
                | Kernel::GapCc
                | Kernel::PregelCc
        )
    }

    /// The directions whose every list the kernel reads pass after pass, enough passes
    /// (at least [`SWEEPS_FOR_A_COPY`]) that a view of several runs copies them into one
    /// array each first, if it can ([`Snapshot::plan_sweeps`]): PageRank's in-lists, CDLP's
    /// both. Other kernels read the runs in place, as most read each list a few times.
    pub fn sweeps(self, p: &Params) -> &'static [Dir] {
        let (dirs, passes): (&'static [Dir], u32) = match self {
            Kernel::Pr => (&[Dir::In], p.iterations.unwrap_or(10)),
            Kernel::GapPr => (&[Dir::In], p.iterations.unwrap_or(20)),
            Kernel::Cdlp => (&[Dir::Out, Dir::In], p.iterations.unwrap_or(10)),
            _ => (&[], 0),
        };
        match passes >= SWEEPS_FOR_A_COPY {
            true => dirs,
            false => &[],
        }
    }

    /// The directions whose every list the kernel reads in no order, often more than once
    /// (SSSP's relaxations; BC's passes from each source, forward and backward over the
    /// out-lists, bottom-up over the in-lists): a view of several runs copies them into
    /// one array each first too, if it can. Read in place, a vertex costs a read of every
    /// run of its chain that holds it: on Kron24 ingested at a 64 MiB budget (about 10
    /// runs per vertex), gap-sssp's kernel took 5.0 s, against 1.6 s on the copy and 1.5 s
    /// on the compacted store; the copy took 0.7 s.
    pub fn reads_at_random(self) -> &'static [Dir] {
        match self {
            Kernel::GapSssp | Kernel::Sssp => &[Dir::Out],
            Kernel::Bc => &[Dir::Out, Dir::In],
            _ => &[],
        }
    }

    /// Whether each of the kernel's passes reads every in-list through
    /// [`GraphView::sweep_in`], so that a compacted store whose lists do not fit the DRAM
    /// available streams them (see [`crate::SweepReads`]).
    pub fn sweeps_in_lists(self) -> bool {
        matches!(self, Kernel::Pr | Kernel::GapPr | Kernel::PrTol)
    }

    /// How the kernel reads the graph (see [`Snapshot::advise`]): sweeps over every vertex
    /// read the runs in order. Traversals keep the default readahead: under a memory cap of
    /// half the store (Kron22, 350 MiB), `Random` made gap-bfs 1.9x slower with 215x the
    /// major faults (its bottom-up steps sweep too), while `Sequential` took gap-pr from
    /// 43.7 s to 30.9 s and wcc from 4.9 s to 4.0 s.
    pub fn access(self) -> Access {
        match self {
            Kernel::Pr
            | Kernel::GapPr
            | Kernel::PrTol
            | Kernel::Wcc
            | Kernel::GapCc
            | Kernel::Cdlp
            | Kernel::Lcc
            | Kernel::Tc
            | Kernel::PregelPr
            | Kernel::PregelCc => Access::Sequential,
            _ => Access::Normal,
        }
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Kernel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Kernel> {
        // Exactly a name: `'pr '` is no kernel (a user who typed it meant something else).
        let want = s.to_ascii_lowercase().replace('_', "-");
        Kernel::ALL
            .into_iter()
            .find(|k| k.name() == want)
            .ok_or_else(|| {
                let names: Vec<_> = Kernel::ALL.iter().map(|k| k.name()).collect();
                invalid(format!(
                    "unknown kernel '{s}' (kernels: {})",
                    names.join(", ")
                ))
            })
    }
}

/// A kernel's parameters; [`Params::default`] holds the defaults of `evograph run`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Params {
    /// Source vertex (dense id) for the traversals; the GAP kernels pick one when `None`.
    pub source: Option<VertexId>,
    /// Fixed iterations for pr, cdlp and pregel-pr (default 10); the cap for gap-pr (20).
    pub iterations: Option<u32>,
    /// PageRank damping factor, in [0, 1).
    pub damping: f64,
    /// gap-pr stops once the scores change by less than this in total (L1); 0 runs every
    /// sweep up to the iterations.
    pub tolerance: f64,
    /// Bucket width of delta-stepping SSSP.
    pub delta: f64,
    /// Number of sources for bc.
    pub samples: usize,
    /// Check GAP kernels' results with their verifiers (time reported apart).
    pub verify: bool,
    /// Vertex programs: push or pull delivery (default: each program's own).
    pub delivery: Option<Delivery>,
    /// Vertex programs: supersteps to run at most.
    pub max_supersteps: u32,
}

impl Params {
    /// Checks every parameter against its range ([`limits`]): what [`run`] does first.
    pub fn check(&self) -> Result<()> {
        let bad = |name: &str, x: &dyn std::fmt::Display, why: String| {
            invalid(format!("{name}: {x} {why}"))
        };
        limits::damping(self.damping).map_err(|w| bad("damping", &self.damping, w))?;
        limits::tolerance(self.tolerance).map_err(|w| bad("tolerance", &self.tolerance, w))?;
        limits::delta(self.delta).map_err(|w| bad("delta", &self.delta, w))?;
        limits::samples(self.samples as i128).map_err(|w| bad("samples", &self.samples, w))?;
        if let Some(i) = self.iterations {
            limits::iterations(i as i128).map_err(|w| bad("iterations", &i, w))?;
        }
        limits::max_supersteps(self.max_supersteps as i128)
            .map_err(|w| bad("max_supersteps", &self.max_supersteps, w))?;
        Ok(())
    }
}

/// The range of each parameter of [`Params`], checked here once for every front end: the
/// command line's flags and Python's keywords use these, and [`run`] checks them all. Each
/// returns the value, or what is wrong with it, to follow the value as the user wrote it
/// ("is not in [0, 1)").
pub mod limits {
    /// PageRank's damping factor: in [0, 1) (1 would leave no mass to teleport).
    pub fn damping(x: f64) -> Result<f64, String> {
        match x {
            x if (0.0..1.0).contains(&x) => Ok(x),
            _ => Err("is not in [0, 1)".into()),
        }
    }

    /// gap-pr's tolerance, the total (L1) change of the scores below which it stops: a
    /// finite number, 0 or more. 0 runs every sweep, up to the iterations (GAPBS's `-t 0`).
    pub fn tolerance(x: f64) -> Result<f64, String> {
        match x {
            x if x.is_finite() && x >= 0.0 => Ok(x),
            _ => Err("is not a finite number of 0 or more".into()),
        }
    }

    /// Delta-stepping's bucket width: a finite number above 0.
    pub fn delta(x: f64) -> Result<f64, String> {
        match x {
            x if x.is_finite() && x > 0.0 => Ok(x),
            _ => Err("is not a finite number above 0".into()),
        }
    }

    /// Iterations (pr, cdlp, pregel-pr) or gap-pr's cap on them: 1 to 1,000,000.
    pub fn iterations(n: i128) -> Result<u32, String> {
        in_range(n, 1, 1_000_000).map(|n| n as u32)
    }

    /// bc's sources: 1 to 1,000,000.
    pub fn samples(n: i128) -> Result<usize, String> {
        in_range(n, 1, 1_000_000).map(|n| n as usize)
    }

    /// Supersteps a vertex program runs at most: 1 or more.
    pub fn max_supersteps(n: i128) -> Result<u32, String> {
        in_range(n, 1, u32::MAX as i128).map(|n| n as u32)
    }

    fn in_range(n: i128, lo: i128, hi: i128) -> Result<i128, String> {
        match n {
            n if (lo..=hi).contains(&n) => Ok(n),
            _ => Err(format!("is not in {lo}..={hi}")),
        }
    }
}

impl Default for Params {
    fn default() -> Params {
        Params {
            source: None,
            iterations: None,
            damping: 0.85,
            tolerance: 1e-4,
            delta: 1.0,
            samples: 4,
            verify: false,
            delivery: None,
            max_supersteps: 10_000,
        }
    }
}

/// A kernel's per-vertex result, indexed by dense id.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Integers per vertex: depths, parents (external ids, -1 when none), labels
    /// (external ids of a member, or CDLP labels).
    Int(Vec<i64>),
    /// Reals per vertex: scores, distances, coefficients.
    Float(Vec<f64>),
    /// A single number (the triangle count).
    Scalar(u64),
    /// Vertices (dense ids) one or two hops from the source, with that hop count.
    Hops(Vec<(VertexId, u8)>),
}

/// What [`run`] returns.
#[derive(Debug)]
#[must_use = "the kernel's result is in its values"]
pub struct Outcome {
    /// The result.
    pub values: Values,
    /// Seconds inside the kernel itself: source picking, weight checks, verification and
    /// the report's label counts and id mapping are left out (see `Clock`).
    pub seconds: f64,
    /// A summary for reports: reached vertices, components, iterations, supersteps, ...
    pub report: Map<String, Value>,
}

impl Outcome {
    /// Whether a vertex program stopped at its superstep limit (its values not final).
    pub fn unfinished(&self) -> bool {
        self.report.get("halted").and_then(Value::as_bool) == Some(false)
    }
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::Invalid(msg.into())
}

/// Runs `kernel` on `s` in the current rayon pool, reading the snapshot through its fastest
/// view. A source that does not exist in `s`, or a kernel that needs one and has none, is an
/// [`Error::Invalid`], as are negative weights for the SSSP kernels.
pub fn run(s: &Snapshot, kernel: Kernel, p: &Params) -> Result<Outcome> {
    p.check()?;
    if let Some(v) = p.source {
        if !s.vertex_exists(v) {
            return Err(invalid(format!(
                "source vertex {v} (dense id) is not in the graph"
            )));
        }
    }
    if kernel.needs_source() && p.source.is_none() {
        return Err(invalid(format!("{kernel} needs a source vertex")));
    }
    s.advise(kernel.access());
    prepare(s, kernel, p);
    let mut report = Map::new();
    let mut clock = Clock::default();
    let values = crate::with_view!(s, |view| compute(
        view,
        s,
        kernel,
        p,
        &mut report,
        &mut clock
    ))?;
    Ok(Outcome {
        values,
        seconds: clock.0,
        report,
    })
}

/// Prepares the view of `s` that [`run`] reads for `kernel` with parameters `p` (a layered
/// view's index, and copies of the lists the kernel sweeps pass after pass, see
/// [`Kernel::sweeps`]) and
/// names it: `flat` (one compacted run), `point` (a past graph read in place: one compacted
/// run with the entries after its commit masked), `point-copy` (and the lists the kernel
/// sweeps copied out of it), `packed` (one compressed run), `flat-streamed` or
/// `packed-streamed` (the same, its in-lists streamed from the medium by the kernel's
/// sweeps, see [`crate::SweepReads`]), `runs-streamed` (several runs' swept lists streamed
/// and merged window by window), `runs-merged` (the same from their mappings: runs that fit
/// in DRAM but that no layered view reads), `runs-merged-copy` (and the merged windows kept
/// for a kernel that sweeps them many times, see [`Kernel::sweeps`]), `layered` (a few
/// plain runs read in place), `layered-copy` (and some of their lists copied), `runs`
/// (the general path) or `runs-copy` (the same, with the lists a kernel reads in no order
/// merged from every run into one array first: runs no layered view reads, see
/// [`Kernel::reads_at_random`]). [`run`] calls it first; call it before to time the view apart.
pub fn prepare(s: &Snapshot, kernel: Kernel, p: &Params) -> &'static str {
    match kernel {
        k if k.sweeps_in_lists() => s.plan_streams(&[Dir::In], MergeInPlace::Unlayered),
        // Afforest's phases are sweeps too, but on one compacted run they read through the
        // mapping: its sampling reads two ids per list and its last phase only the lists
        // outside the giant component. Several runs are streamed window by window when
        // they do not fit (a directed store's in-lists too, for the last phase).
        Kernel::GapCc | Kernel::Wcc if s.runs().len() > 1 => {
            s.plan_streams(both_lists(s), MergeInPlace::ManyRuns);
        }
        // BFS's bottom-up steps sweep the in-lists and its large top-down steps the
        // out-lists: streamed when several runs do not fit; in DRAM, read in place.
        Kernel::GapBfs | Kernel::Bfs if s.runs().len() > 1 => {
            s.plan_streams(both_lists(s), MergeInPlace::Never);
            // Its top-down steps look up the degree of every vertex they reach: counted
            // run by run first, not searched for in each run of the vertex's chain.
            s.count_degrees(Dir::Out);
        }
        _ => {}
    }
    s.plan_lookups();
    if s.point().is_some() {
        return match s.plan_point_sweeps(kernel.sweeps(p)) && !kernel.sweeps(p).is_empty() {
            true => "point-copy",
            false => "point",
        };
    }
    let streamed = s.sweep_stream().is_some();
    if streamed {
        s.keep_streamed_windows(kernel.sweeps(p));
    }
    if s.flat().is_some() {
        return if streamed { "flat-streamed" } else { "flat" };
    }
    if s.packed_flat().is_some() {
        return if streamed {
            "packed-streamed"
        } else {
            "packed"
        };
    }
    if streamed {
        return "runs-streamed";
    }
    if let Some(r) = s.runs_stream().or(s.runs_stream_out()) {
        // Every pass merges the windows anyway: keeping them costs DRAM, not time.
        if kernel.sweeps_in_lists() {
            s.plan_sweeps(&[Dir::In]);
        }
        return match r.keeps_merged() {
            true => "runs-merged-copy",
            false => "runs-merged",
        };
    }
    s.plan_sweeps(kernel.sweeps(p));
    s.plan_sweeps(kernel.reads_at_random());
    match s.layered() {
        Some(l) if l.copied() => "layered-copy",
        Some(_) => "layered",
        None if s.runs_copied() => "runs-copy",
        None => "runs",
    }
}

/// The directions whose lists a kernel that reads both sweeps: an undirected store's
/// out-lists are its in-lists too.
fn both_lists(s: &Snapshot) -> &'static [Dir] {
    match s.is_undirected() {
        true => &[Dir::Out],
        false => &[Dir::Out, Dir::In],
    }
}

/// The seconds spent inside kernel calls: what [`Outcome::seconds`] reports. Picking
/// sources, checking weights, verifying, counting labels for the report and mapping
/// values to external ids are left out, as GAPBS times only the kernel.
#[derive(Default)]
struct Clock(f64);

impl Clock {
    /// Runs `f`, adding its time.
    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let r = f();
        self.0 += t.elapsed().as_secs_f64();
        r
    }
}

/// Runs a verifier, keeping its time out of the kernel's (as `verify_seconds`).
fn timed_verify(
    report: &mut Map<String, Value>,
    f: impl FnOnce() -> std::result::Result<(), String>,
) -> Result<()> {
    let t = Instant::now();
    let r = f();
    report.insert("verify_seconds".into(), t.elapsed().as_secs_f64().into());
    report.insert("verified".into(), r.is_ok().into());
    r.map_err(|m| invalid(format!("verification failed: {m}")))
}

/// One kernel run on `g` (the snapshot `s`, or one of its faster views): what it reads,
/// and where its report and time go.
struct Job<'a, G> {
    g: &'a G,
    s: &'a Snapshot,
    kernel: Kernel,
    p: &'a Params,
    report: &'a mut Map<String, Value>,
    clock: &'a mut Clock,
}

/// Runs the kernel on `g` (the snapshot `s`, or one of its faster views).
fn compute<G: GraphView>(
    g: &G,
    s: &Snapshot,
    kernel: Kernel,
    p: &Params,
    report: &mut Map<String, Value>,
    clock: &mut Clock,
) -> Result<Values> {
    let mut job = Job {
        g,
        s,
        kernel,
        p,
        report,
        clock,
    };
    match kernel {
        Kernel::Bfs | Kernel::Pr | Kernel::Wcc | Kernel::Cdlp | Kernel::Lcc | Kernel::Sssp => {
            job.graphalytics()
        }
        Kernel::Khop => job.khop(),
        Kernel::Kcore => job.kcore(),
        Kernel::Lpa => job.lpa(),
        Kernel::PrTol => job.pr_tolerance(),
        Kernel::GapBfs
        | Kernel::GapPr
        | Kernel::GapCc
        | Kernel::GapSssp
        | Kernel::Bc
        | Kernel::Tc => job.gap(),
        Kernel::PregelPr | Kernel::PregelCc | Kernel::PregelBfs | Kernel::PregelSssp => {
            job.pregel()
        }
    }
}

impl<G: GraphView> Job<'_, G> {
    /// The source the parameters give: the kernel needs one.
    fn source(&self) -> Result<VertexId> {
        (self.p.source).ok_or_else(|| invalid(format!("{} needs a source vertex", self.kernel)))
    }

    /// The source the parameters give, else one picked as GAPBS picks them.
    fn picked(&self) -> Result<VertexId> {
        match self.p.source {
            Some(v) => Ok(v),
            None => Ok(pick_sources(self.s, 1, SOURCE_SEED)?[0]),
        }
    }

    /// `ids` (dense, or none: -1) as external ids, as label and parent values are
    /// reported; in parallel, since each is a read of the id table at a vertex the result
    /// names, scattered at scale (a second after a 4 s BFS at Kron26, done in order).
    fn externals<T: Copy + Sync>(
        &self,
        ids: &[T],
        dense: impl Fn(T) -> Option<VertexId> + Sync + Send,
    ) -> Vec<i64> {
        use rayon::prelude::*;
        let s = self.s;
        (ids.par_iter())
            .map(|&x| dense(x).map_or(-1, |v| s.external_id(v) as i64))
            .collect()
    }

    fn note(&mut self, key: &str, value: impl Into<Value>) {
        self.report.insert(key.into(), value.into());
    }

    /// Runs a verifier when the parameters ask for one.
    fn verify(&mut self, f: impl FnOnce() -> std::result::Result<(), String>) -> Result<()> {
        match self.p.verify {
            true => timed_verify(self.report, f),
            false => Ok(()),
        }
    }

    /// The LDBC Graphalytics kernels (`Kernel::Sssp` included).
    fn graphalytics(&mut self) -> Result<Values> {
        let (g, s, p) = (self.g, self.s, self.p);
        let it = p.iterations.unwrap_or(10);
        Ok(match self.kernel {
            Kernel::Bfs => {
                let src = self.source()?;
                let d = self.clock.time(|| ga::bfs(g, src));
                self.note("reached", reached_depths(&d));
                Values::Int(d)
            }
            Kernel::Pr => {
                self.note("iterations", it);
                Values::Float(self.clock.time(|| ga::pagerank(g, p.damping, it)))
            }
            Kernel::Wcc => {
                let l = self.clock.time(|| ga::wcc(g));
                self.note("components", count_labels(s, &l));
                Values::Int(self.externals(&l, |x| Some(x as VertexId)))
            }
            Kernel::Cdlp => {
                let labels = self.clock.time(|| ga::cdlp(g, it, s.external_ids()));
                self.note("iterations", it);
                self.note("communities", count_labels(s, &labels));
                Values::Int(labels.iter().map(|&x| x as i64).collect())
            }
            Kernel::Lcc => Values::Float(self.clock.time(|| ga::lcc(g))),
            _ => self.sssp(self.source()?)?,
        })
    }

    /// Delta-stepping from `src` (LDBC's SSSP and GAP's), refusing negative weights.
    fn sssp(&mut self, src: VertexId) -> Result<Values> {
        let g = self.g;
        gap::sssp::check_weights(g).map_err(invalid)?;
        let d = self
            .clock
            .time(|| gap::sssp::delta_stepping(g, src, self.p.delta));
        self.verify(|| gap::sssp::verify(g, src, &d))?;
        self.note("reached", reached_distances(&d));
        Ok(Values::Float(d))
    }

    /// PageRank to the tolerance, reporting its sweeps and the bound reached.
    fn pr_tolerance(&mut self) -> Result<Values> {
        let p = self.p;
        if p.tolerance <= 0.0 {
            return Err(invalid("pr-tol: the tolerance must be above 0"));
        }
        let g = self.g;
        let s = self
            .clock
            .time(|| crate::algo::pr_tolerance::pagerank_to(g, p.damping, p.tolerance));
        self.note("sweeps", s.sweeps);
        self.note("bound", s.bound);
        Ok(Values::Float(s.scores))
    }

    /// Each vertex's core number, verified on request.
    fn kcore(&mut self) -> Result<Values> {
        let g = self.g;
        let core = self.clock.time(|| crate::algo::kcore::core_numbers(g));
        self.verify(|| crate::algo::kcore::verify(g, &core))?;
        self.note("max_core", core.iter().copied().max().unwrap_or(0));
        Ok(Values::Int(core))
    }

    /// Each vertex's community by label propagation, verified on request.
    fn lpa(&mut self) -> Result<Values> {
        let g = self.g;
        let labels = self.clock.time(|| crate::algo::lpa::communities(g));
        self.verify(|| crate::algo::lpa::verify(g, &labels))?;
        self.note("communities", count_labels(self.s, &labels));
        Ok(Values::Int(self.externals(&labels, Some)))
    }

    /// The vertices one and two hops from the source.
    fn khop(&mut self) -> Result<Values> {
        let (g, v) = (self.g, self.picked()?);
        let (one, two) = self.clock.time(|| (ga::one_hop(g, v), ga::two_hop(g, v)));
        self.note("one_hop", one.iter().filter(|&&w| w != v).count());
        self.note("two_hop", two.len());
        let hop = |w: VertexId| if one.binary_search(&w).is_ok() { 1 } else { 2 };
        Ok(Values::Hops(two.iter().map(|&w| (w, hop(w))).collect()))
    }

    /// The GAP Benchmark Suite's kernels, each verified on request.
    fn gap(&mut self) -> Result<Values> {
        let (g, s, p) = (self.g, self.s, self.p);
        Ok(match self.kernel {
            Kernel::GapBfs => {
                let src = self.picked()?;
                let parents = self.clock.time(|| gap::bfs::bfs(g, src));
                self.verify(|| gap::bfs::verify(g, src, &parents))?;
                self.note("reached", parents.iter().filter(|&&x| x >= 0).count());
                Values::Int(self.externals(&parents, |x| (x >= 0).then_some(x as VertexId)))
            }
            Kernel::GapPr => Values::Float(gap_pr(g, p, self.report, self.clock)?),
            Kernel::GapCc => {
                let c = self.clock.time(|| gap::cc::afforest(g));
                self.verify(|| gap::cc::verify(g, &c))?;
                let l: Vec<u64> = c.iter().map(|&x| x as u64).collect();
                self.note("components", count_labels(s, &l));
                Values::Int(self.externals(&c, Some))
            }
            Kernel::Bc => {
                let mut sources = pick_sources(s, p.samples.max(1), SOURCE_SEED)?;
                if let Some(src) = p.source {
                    sources[0] = src;
                }
                let b = self.clock.time(|| gap::bc::brandes(g, &sources));
                self.verify(|| gap::bc::verify(g, &sources, &b))?;
                let named: Vec<Value> = sources.iter().map(|&v| key_json(s, v)).collect();
                self.note("sources", named);
                Values::Float(b)
            }
            Kernel::Tc => {
                let n = self.clock.time(|| gap::tc::ordered_count(g));
                self.verify(|| gap::tc::verify(g, n))?;
                self.note("triangles", n);
                Values::Scalar(n)
            }
            _ => self.sssp(self.picked()?)?,
        })
    }

    /// The vertex programs, run by the Pregel engine.
    fn pregel(&mut self) -> Result<Values> {
        let (g, s, p) = (self.g, self.s, self.p);
        Ok(match self.kernel {
            Kernel::PregelPr => {
                let it = p.iterations.unwrap_or(10);
                self.note("iterations", it);
                let prog = programs::PageRank {
                    damping: p.damping,
                    iterations: it,
                };
                Values::Float(run_pregel(g, &prog, p, self.report, self.clock)?)
            }
            Kernel::PregelCc => {
                let l = run_pregel(g, &programs::Components, p, self.report, self.clock)?;
                self.note("components", count_labels(s, &l));
                Values::Int(self.externals(&l, Some))
            }
            Kernel::PregelBfs => {
                let prog = programs::Bfs {
                    source: self.source()?,
                };
                let d = run_pregel(g, &prog, p, self.report, self.clock)?;
                self.note("reached", reached_depths(&d));
                Values::Int(d)
            }
            _ => {
                gap::sssp::check_weights(g).map_err(invalid)?;
                let prog = programs::Sssp {
                    source: self.source()?,
                };
                let d = run_pregel(g, &prog, p, self.report, self.clock)?;
                self.note("reached", reached_distances(&d));
                Values::Float(d)
            }
        })
    }
}

/// GAP PageRank; with `verify`, a run stopped at the iteration cap before converging is
/// reported as not verified rather than failed.
fn gap_pr<G: GraphView>(
    g: &G,
    p: &Params,
    report: &mut Map<String, Value>,
    clock: &mut Clock,
) -> Result<Vec<f64>> {
    let cap = p.iterations.unwrap_or(20);
    let (scores, it) = clock.time(|| gap::pr::pagerank(g, p.damping, p.tolerance, cap));
    // Stopped at the cap, the run may have converged in its last round or not: GAPBS's
    // check (one more round changes the scores by less than the tolerance) tells which,
    // and failing it there means nothing was verified, not an error.
    let capped = it >= cap;
    if p.verify {
        let mut unconverged = false;
        timed_verify(report, || {
            match gap::pr::verify(g, &scores, p.damping, p.tolerance) {
                Err(_) if capped => {
                    unconverged = true;
                    Ok(())
                }
                r => r,
            }
        })?;
        if unconverged {
            report.insert("verified".into(), false.into());
            let note = format!(
                "gap-pr stopped at the iteration cap ({it}) before the scores changed by less than the tolerance, so verification checked nothing; raise the iterations or the tolerance"
            );
            report.insert("verify_note".into(), note.into());
        }
    }
    report.insert("iterations".into(), it.into());
    Ok(scores)
}

/// Runs a vertex program with the parameters' delivery and superstep limit, recording how
/// the run went in `report`.
fn run_pregel<P: Program, G: GraphView>(
    g: &G,
    prog: &P,
    p: &Params,
    report: &mut Map<String, Value>,
    clock: &mut Clock,
) -> Result<Vec<P::Value>> {
    let cfg = pregel::Config {
        max_supersteps: p.max_supersteps,
        delivery: p.delivery,
        ..Default::default()
    };
    let o = clock.time(|| pregel::run(g, prog, &cfg))?;
    report.insert("supersteps".into(), o.supersteps.into());
    report.insert("halted".into(), o.halted().into());
    report.insert("stop".into(), o.stop.to_string().into());
    report.insert("edges_traversed".into(), o.edges.into());
    report.insert("messages".into(), o.messages.into());
    report.insert("delivery".into(), o.delivery.to_string().into());
    let steps: Vec<_> = o
        .steps
        .iter()
        .map(|s| {
            json!({"computed": s.computed, "active": s.active, "messages": s.messages,
                   "edges": s.edges, "seconds": s.seconds})
        })
        .collect();
    report.insert("superstep_profile".into(), steps.into());
    Ok(o.values)
}

fn reached_depths(d: &[i64]) -> usize {
    d.iter().filter(|&&x| x != ga::UNREACHABLE).count()
}

fn reached_distances(d: &[f64]) -> usize {
    d.iter().filter(|x| x.is_finite()).count()
}

/// Distinct labels among existing vertices (components, communities).
pub fn count_labels<T: Ord + Copy>(g: &impl GraphView, labels: &[T]) -> usize {
    let mut l: Vec<T> = (0..g.num_vertices() as VertexId)
        .filter(|&v| g.vertex_exists(v))
        .map(|v| labels[v as usize])
        .collect();
    l.sort_unstable();
    l.dedup();
    l.len()
}

/// A vertex's key for a JSON report: a number, or a string in a string-keyed store.
pub(crate) fn key_json(s: &Snapshot, v: VertexId) -> Value {
    match s.key(v) {
        crate::snapshot::Key::Id(x) => x.into(),
        crate::snapshot::Key::Name(n) => n.into(),
    }
}

/// The seed [`run`] picks sources with, so that a kernel run without a source starts from
/// the same vertices every time.
pub const SOURCE_SEED: u64 = 27491095;

/// `k` sources with out-edges, spread pseudo-randomly from `seed` as GAPBS picks them;
/// repeated, or any existing vertex, when too few have out-edges. An error when the graph
/// has no vertex at all (nothing to start from).
pub fn pick_sources(s: &Snapshot, k: usize, seed: u64) -> Result<Vec<VertexId>> {
    let n = s.num_vertices() as u64;
    let mut out = Vec::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for _ in 0..k.saturating_mul(1000).max(1000) {
        if out.len() == k || n == 0 {
            break;
        }
        let v = rng.random_range(0..n) as VertexId;
        if s.vertex_exists(v) && s.out_degree(v) > 0 && !out.contains(&v) {
            out.push(v);
        }
    }
    if out.is_empty() {
        let any = (0..n as VertexId).find(|&v| s.vertex_exists(v));
        out.push(any.ok_or_else(|| invalid("the graph has no vertices to start from"))?);
    }
    while out.len() < k {
        out.push(out[0]);
    }
    Ok(out)
}
