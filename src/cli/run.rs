//! `evograph run`: a GAP or Graphalytics kernel on the latest snapshot of a store.

use crate::args;
use evograph::algo::{gap, graphalytics as ga};
use evograph::medium::Access;
use evograph::pregel::{self, programs, Delivery, Program};
use evograph::{GraphView, Snapshot, VertexId};
use rayon::prelude::*;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Run a kernel on the store's latest graph.
///
/// Output: one line `<external id> <value>` per existing vertex (isolated ones included),
/// sorted by external id. Integers print as integers, reals like the Graphalytics reference
/// files (`%.15e`). A vertex the source cannot reach gets the kernel's "no value": bfs
/// prints depth 9223372036854775807 and sssp and gap-sssp print distance Infinity (the
/// Graphalytics conventions check.py expects); gap-bfs prints parent -1. Kernels:
///
/// - bfs: depth from --source. pr, cdlp: fixed --iterations (10). wcc: a component label
///   (the external id of the member that arrived first). lcc: local clustering
///   coefficient (0 below degree 2).
///   sssp: distance from --source (weights must be non-negative; unweighted edges weigh 1).
/// - gap-bfs: the BFS *parent* of each vertex (the source is its own parent; GAPBS).
///   gap-sssp: delta-stepping distances. gap-pr: PageRank until the scores change by less
///   than --tolerance (L1) or --iterations (20) pass. gap-cc: Afforest labels (a member's
///   external id). bc: betweenness from --samples sources, normalized to a maximum of 1,
///   GAPBS's convention: each source is credited with its own dependency (Brandes' paper
///   skips it).
/// - tc: one line, the number of triangles of the undirected graph (a directed store's
///   edge directions are ignored, and each triangle counts once).
/// - khop: `<external id> <hops>` for each vertex 1 or 2 out-hops from --source (hops is the
///   fewer of the two), sorted by id; the source itself is never listed.
/// - pregel-pr, pregel-cc, pregel-bfs, pregel-sssp: the same results as pr, wcc, bfs and
///   sssp, computed by vertex programs on the Pregel engine (evograph::pregel). --delivery
///   overrides each program's push or pull; --max-supersteps bounds the run (a run stopped
///   there says so on stderr and exits with status 3, its values not final).
///
/// --json prints one JSON object (time and summary) on stdout; with --output the values are
/// written to that file as well.
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    /// bfs | pr | wcc | cdlp | lcc | sssp | gap-bfs | gap-sssp | gap-pr | gap-cc | bc | tc | khop |
    /// pregel-pr | pregel-cc | pregel-bfs | pregel-sssp
    kernel: String,
    /// Source vertex (external id) for bfs, sssp, gap-bfs, gap-sssp, khop; bc's first source.
    #[arg(long)]
    source: Option<u64>,
    /// Iterations: fixed for pr and cdlp (default 10 and 10), the maximum for gap-pr (20).
    #[arg(long, value_parser = args::int::<u32>(1, 1_000_000), allow_negative_numbers = true)]
    iterations: Option<u32>,
    /// PageRank damping factor, in [0, 1).
    #[arg(long, default_value_t = 0.85, value_parser = args::fraction, allow_negative_numbers = true)]
    damping: f64,
    /// gap-pr stops once the scores change by less than this in total (L1); positive.
    #[arg(long, default_value_t = 1e-4, value_parser = args::positive, allow_negative_numbers = true)]
    tolerance: f64,
    /// Bucket width for delta-stepping SSSP; positive.
    #[arg(long, default_value_t = 1.0, value_parser = args::positive, allow_negative_numbers = true)]
    delta: f64,
    /// Number of sources for bc.
    #[arg(long, default_value_t = 4, value_parser = args::int::<u64>(1, 1_000_000), allow_negative_numbers = true)]
    samples: u64,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = args::int::<u64>(0, 1024), allow_negative_numbers = true)]
    threads: u64,
    /// Write the per-vertex output here instead of stdout (with --json as well as it).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Print one JSON object (time and summary) instead of per-vertex values.
    #[arg(long)]
    json: bool,
    /// Check the result with the kernel's verifier (GAP kernels) before printing.
    #[arg(long)]
    verify: bool,
    /// Pregel kernels: push or pull delivery (default: each program's own).
    #[arg(long)]
    delivery: Option<Delivery>,
    /// Pregel kernels: supersteps to run at most.
    #[arg(long, default_value_t = 10_000, value_parser = args::int::<u32>(1, u32::MAX as u64), allow_negative_numbers = true)]
    max_supersteps: u32,
}

/// A kernel's per-vertex result, ready to print.
enum Values {
    Int(Vec<i64>),
    Float(Vec<f64>),
    /// A single number (triangle count).
    Scalar(u64),
    /// Vertices and their hop distance from the source (k-hop).
    Hops(Vec<(VertexId, u8)>),
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
    let g = evograph::Graph::open(
        &a.store,
        evograph::Options {
            create: false,
            read_only: true,
            threads,
            ..Default::default()
        },
    )?;
    let s = g.snapshot()?;
    let dense = |ext: u64| -> evograph::Result<VertexId> {
        g.dense_id(ext)?
            .filter(|&v| s.vertex_exists(v))
            .ok_or_else(|| invalid(format!("vertex {ext} is not in the graph")))
    };
    let source = match a.source {
        Some(x) => Some(dense(x)?),
        None => None,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| invalid(e.to_string()))?;
    s.advise(access_of(&a.kernel));
    let t = Instant::now();
    let mut summary = serde_json::Map::new();
    let values = pool
        .install(|| evograph::with_view!(&s, |view| compute(view, &s, &a, source, &mut summary)))?;
    let verify_seconds = summary
        .get("verify_seconds")
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0);
    let seconds = t.elapsed().as_secs_f64() - verify_seconds;
    if a.kernel == "tc" && !s.is_undirected() {
        eprintln!("evograph: tc counts triangles of the undirected graph: this directed store's edge directions are ignored");
    }
    if let Some(note) = summary.get("verify_note").and_then(|v| v.as_str()) {
        eprintln!("evograph: {note}");
    }
    let unfinished = summary.get("halted").and_then(|v| v.as_bool()) == Some(false);
    if unfinished {
        eprintln!(
            "evograph: {} {}",
            a.kernel,
            summary
                .get("stop")
                .and_then(|v| v.as_str())
                .unwrap_or_default()
        );
    }
    let code = if unfinished {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    };
    if !a.json {
        write_values(&s, &values, a.output.as_deref())?;
        return Ok(code);
    }
    if a.output.is_some() {
        write_values(&s, &values, a.output.as_deref())?;
    }
    let mut o = json!({
        "kernel": a.kernel,
        "seconds": seconds,
        "threads": threads,
        "vertices": s.live_vertices(),
        "edges": s.num_edges(),
        "runs": s.runs().len(),
        "output": a.output.as_ref().map(|p| p.display().to_string()),
    });
    if let Some(e) = summary.get("edges_traversed").and_then(|v| v.as_f64()) {
        summary.insert("gteps".into(), (e / seconds.max(1e-9) / 1e9).into());
    }
    o.as_object_mut().unwrap().extend(summary);
    println!("{o}");
    Ok(code)
}

/// Writes the per-vertex values to `output`, or stdout; a closed pipe is not an error.
fn write_values(
    s: &Snapshot,
    values: &Values,
    output: Option<&std::path::Path>,
) -> evograph::Result<()> {
    let sink: Box<dyn Write> = match output {
        Some(p) => {
            Box::new(std::fs::File::create(p).map_err(|e| evograph::Error::io("create", p, e))?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut w = std::io::BufWriter::with_capacity(1 << 20, sink);
    let res = print(&mut w, s, values).and_then(|_| w.flush());
    match res {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(evograph::Error::io(
            "write",
            output.map_or_else(|| "stdout".into(), |p| p.to_path_buf()),
            e,
        )),
        Ok(()) => Ok(()),
    }
}

/// Runs a verifier, keeping its time out of the kernel's (as `verify_seconds`).
fn timed_verify(
    summary: &mut serde_json::Map<String, serde_json::Value>,
    f: impl FnOnce() -> Result<(), String>,
) -> evograph::Result<()> {
    let t = Instant::now();
    let r = f();
    summary.insert("verify_seconds".into(), t.elapsed().as_secs_f64().into());
    summary.insert("verified".into(), r.is_ok().into());
    r.map_err(|m| invalid(format!("verification failed: {m}")))
}

/// How kernel `k` reads the graph (see [`evograph::Snapshot::advise`]): sweeps over every
/// vertex read the runs in order. Traversals keep the kernel's default readahead: under a
/// memory cap of half the store (Kron22, 350 MiB), `Random` made gap-bfs 1.9x slower with
/// 215x the major faults (its bottom-up steps sweep too), while `Sequential` took gap-pr
/// from 43.7 s to 30.9 s and wcc from 4.9 s to 4.0 s.
fn access_of(k: &str) -> Access {
    match k {
        "pr" | "gap-pr" | "wcc" | "gap-cc" | "cdlp" | "lcc" | "tc" | "pregel-pr" | "pregel-cc" => {
            Access::Sequential
        }
        _ => Access::Normal,
    }
}

/// Runs the kernel on `g` (the snapshot `s`, or its flat CSR view).
fn compute<G: GraphView>(
    g: &G,
    s: &Snapshot,
    a: &Args,
    source: Option<VertexId>,
    summary: &mut serde_json::Map<String, serde_json::Value>,
) -> evograph::Result<Values> {
    let need_source = || source.ok_or_else(|| invalid(format!("{} needs --source", a.kernel)));
    Ok(match a.kernel.as_str() {
        "bfs" => {
            let d = ga::bfs(g, need_source()?);
            let reached = d.iter().filter(|&&x| x != ga::UNREACHABLE).count();
            summary.insert("reached".into(), reached.into());
            Values::Int(d)
        }
        "pr" => {
            let it = a.iterations.unwrap_or(10);
            summary.insert("iterations".into(), it.into());
            Values::Float(ga::pagerank(g, a.damping, it))
        }
        "wcc" => {
            let l = ga::wcc(g);
            summary.insert("components".into(), count_labels(s, &l).into());
            Values::Int(
                l.iter()
                    .map(|&x| s.external_id(x as VertexId) as i64)
                    .collect(),
            )
        }
        "cdlp" => {
            let it = a.iterations.unwrap_or(10);
            let labels = ga::cdlp(g, it, s.external_ids());
            summary.insert("iterations".into(), it.into());
            summary.insert("communities".into(), count_labels(s, &labels).into());
            Values::Int(labels.iter().map(|&x| x as i64).collect())
        }
        "lcc" => Values::Float(ga::lcc(g)),
        "gap-bfs" => {
            let src = source.unwrap_or_else(|| pick_sources(s, 1)[0]);
            let p = gap::bfs::bfs(g, src);
            if a.verify {
                timed_verify(summary, || gap::bfs::verify(g, src, &p))?;
            }
            summary.insert(
                "reached".into(),
                p.iter().filter(|&&x| x >= 0).count().into(),
            );
            Values::Int(
                p.iter()
                    .map(|&x| {
                        if x < 0 {
                            -1
                        } else {
                            s.external_id(x as VertexId) as i64
                        }
                    })
                    .collect(),
            )
        }
        "gap-pr" => {
            let (scores, it) =
                gap::pr::pagerank(g, a.damping, a.tolerance, a.iterations.unwrap_or(20));
            // Stopped at the cap, the run may have converged in its last round or not:
            // GAPBS's check (one more round changes the scores by less than --tolerance)
            // tells which, and failing it there means nothing was verified, not an error.
            let capped = it >= a.iterations.unwrap_or(20);
            if a.verify {
                let mut unconverged = false;
                timed_verify(summary, || {
                    match gap::pr::verify(g, &scores, a.damping, a.tolerance) {
                        Err(_) if capped => {
                            unconverged = true;
                            Ok(())
                        }
                        r => r,
                    }
                })?;
                if unconverged {
                    summary.insert("verified".into(), false.into());
                    summary.insert(
                        "verify_note".into(),
                        format!(
                            "gap-pr stopped at the iteration cap ({it}) before the scores changed by less than --tolerance, so --verify checked nothing; raise --iterations or --tolerance"
                        )
                        .into(),
                    );
                }
            }
            summary.insert("iterations".into(), it.into());
            Values::Float(scores)
        }
        "gap-cc" => {
            let c = gap::cc::afforest(g);
            if a.verify {
                timed_verify(summary, || gap::cc::verify(g, &c))?;
            }
            let l: Vec<u64> = c.iter().map(|&x| x as u64).collect();
            summary.insert("components".into(), count_labels(s, &l).into());
            Values::Int(c.iter().map(|&x| s.external_id(x) as i64).collect())
        }
        "bc" => {
            let mut sources = pick_sources(s, a.samples as usize);
            if let Some(src) = source {
                sources[0] = src;
            }
            let b = gap::bc::brandes(g, &sources);
            if a.verify {
                timed_verify(summary, || gap::bc::verify(g, &sources, &b))?;
            }
            summary.insert(
                "sources".into(),
                sources
                    .iter()
                    .map(|&v| s.external_id(v))
                    .collect::<Vec<_>>()
                    .into(),
            );
            Values::Float(b)
        }
        "tc" => {
            let n = gap::tc::ordered_count(g);
            if a.verify {
                timed_verify(summary, || gap::tc::verify(g, n))?;
            }
            summary.insert("triangles".into(), n.into());
            Values::Scalar(n)
        }
        "khop" => {
            let v = source.unwrap_or_else(|| pick_sources(s, 1)[0]);
            let one = ga::one_hop(g, v);
            let two = ga::two_hop(g, v);
            summary.insert(
                "one_hop".into(),
                one.iter().filter(|&&w| w != v).count().into(),
            );
            summary.insert("two_hop".into(), two.len().into());
            let hops = two
                .iter()
                .map(|&w| (w, if one.binary_search(&w).is_ok() { 1 } else { 2 }))
                .collect();
            Values::Hops(hops)
        }
        "sssp" | "gap-sssp" => {
            let src = if a.kernel == "sssp" {
                need_source()?
            } else {
                source.unwrap_or_else(|| pick_sources(s, 1)[0])
            };
            gap::sssp::check_weights(g).map_err(invalid)?;
            let d = gap::sssp::delta_stepping(g, src, a.delta);
            if a.verify {
                timed_verify(summary, || gap::sssp::verify(g, src, &d))?;
            }
            summary.insert(
                "reached".into(),
                d.iter().filter(|x| x.is_finite()).count().into(),
            );
            Values::Float(d)
        }
        "pregel-pr" => {
            let it = a.iterations.unwrap_or(10);
            summary.insert("iterations".into(), it.into());
            let p = programs::PageRank {
                damping: a.damping,
                iterations: it,
            };
            Values::Float(run_pregel(g, &p, a, summary)?)
        }
        "pregel-cc" => {
            let l = run_pregel(g, &programs::Components, a, summary)?;
            summary.insert("components".into(), count_labels(s, &l).into());
            Values::Int(l.iter().map(|&x| s.external_id(x) as i64).collect())
        }
        "pregel-bfs" => {
            let p = programs::Bfs {
                source: need_source()?,
            };
            let d = run_pregel(g, &p, a, summary)?;
            let reached = d.iter().filter(|&&x| x != ga::UNREACHABLE).count();
            summary.insert("reached".into(), reached.into());
            Values::Int(d)
        }
        "pregel-sssp" => {
            gap::sssp::check_weights(g).map_err(invalid)?;
            let p = programs::Sssp {
                source: need_source()?,
            };
            let d = run_pregel(g, &p, a, summary)?;
            summary.insert(
                "reached".into(),
                d.iter().filter(|x| x.is_finite()).count().into(),
            );
            Values::Float(d)
        }
        k => {
            return Err(invalid(format!(
                "unknown kernel '{k}' (see evograph run --help)"
            )))
        }
    })
}

/// Runs a vertex program with the command line's delivery and superstep limit, recording
/// how the run went in `summary`.
fn run_pregel<P: Program, G: GraphView>(
    g: &G,
    p: &P,
    a: &Args,
    summary: &mut serde_json::Map<String, serde_json::Value>,
) -> evograph::Result<Vec<P::Value>> {
    let cfg = pregel::Config {
        max_supersteps: a.max_supersteps,
        delivery: a.delivery,
        ..Default::default()
    };
    let o = pregel::run(g, p, &cfg)?;
    summary.insert("supersteps".into(), o.supersteps.into());
    summary.insert("halted".into(), o.halted().into());
    summary.insert("stop".into(), o.stop.to_string().into());
    summary.insert("edges_traversed".into(), o.edges.into());
    summary.insert("messages".into(), o.messages.into());
    summary.insert("delivery".into(), o.delivery.to_string().into());
    let steps: Vec<_> = o
        .steps
        .iter()
        .map(|s| {
            json!({"computed": s.computed, "active": s.active, "messages": s.messages,
                   "edges": s.edges, "seconds": s.seconds})
        })
        .collect();
    summary.insert("superstep_profile".into(), steps.into());
    Ok(o.values)
}

fn print(w: &mut impl Write, s: &Snapshot, values: &Values) -> std::io::Result<()> {
    let ext = s.external_ids();
    let mut live: Vec<VertexId> = (0..s.num_vertices() as VertexId)
        .into_par_iter()
        .filter(|&v| s.vertex_exists(v))
        .collect();
    live.par_sort_unstable_by_key(|&v| ext[v as usize]);
    let live = live.into_iter();
    match values {
        Values::Int(x) => {
            for v in live {
                writeln!(w, "{} {}", s.external_id(v), ga::format_i64(x[v as usize]))?;
            }
        }
        Values::Float(x) => {
            for v in live {
                writeln!(w, "{} {}", s.external_id(v), ga::format_f64(x[v as usize]))?;
            }
        }
        Values::Scalar(n) => writeln!(w, "{n}")?,
        Values::Hops(hops) => {
            let mut hops = hops.clone();
            hops.sort_unstable_by_key(|&(v, _)| ext[v as usize]);
            for (v, h) in hops {
                writeln!(w, "{} {h}", ext[v as usize])?;
            }
        }
    }
    Ok(())
}

/// Distinct labels among existing vertices (components, communities).
pub(crate) fn count_labels<T: Ord + Copy>(g: &impl GraphView, labels: &[T]) -> usize {
    let mut l: Vec<T> = (0..g.num_vertices() as VertexId)
        .filter(|&v| g.vertex_exists(v))
        .map(|v| labels[v as usize])
        .collect();
    l.sort_unstable();
    l.dedup();
    l.len()
}

/// `k` sources with out-edges, spread pseudo-randomly (fixed seed) like GAPBS's picks.
fn pick_sources(s: &Snapshot, k: usize) -> Vec<VertexId> {
    let n = s.num_vertices() as u64;
    let mut out = Vec::new();
    let mut x = 27491095u64;
    for _ in 0..(k * 1000).max(1000) {
        if out.len() == k || n == 0 {
            break;
        }
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v = ((x >> 33) % n) as VertexId;
        if s.vertex_exists(v) && s.out_degree(v) > 0 && !out.contains(&v) {
            out.push(v);
        }
    }
    while out.len() < k {
        out.push(out.first().copied().unwrap_or(0));
    }
    out
}
