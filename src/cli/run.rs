//! `evograph run`: a GAP or Graphalytics kernel on the latest snapshot of a store.

use evograph::algo::{gap, graphalytics as ga};
use evograph::{GraphView, Snapshot, VertexId};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Run a kernel on the store's latest graph. Graphalytics kernels (bfs, pr, wcc, cdlp, lcc)
/// print `<external id> <value>` for every vertex, isolated ones included; GAP kernels
/// (gap-bfs, gap-pr, gap-cc, bc, tc, khop) follow GAPBS semantics.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    /// bfs | pr | wcc | cdlp | lcc | sssp | gap-bfs | gap-sssp | gap-pr | gap-cc | bc | tc | khop
    kernel: String,
    /// Source vertex (external id) for bfs, sssp, gap-bfs, khop; bc's first source.
    #[arg(long)]
    source: Option<u64>,
    /// Iterations: fixed for pr and cdlp (default 10 and 10), the maximum for gap-pr (20).
    #[arg(long)]
    iterations: Option<u32>,
    /// PageRank damping factor.
    #[arg(long, default_value_t = 0.85)]
    damping: f64,
    /// gap-pr stops once the scores change by less than this in total (L1).
    #[arg(long, default_value_t = 1e-4)]
    tolerance: f64,
    /// Bucket width for delta-stepping SSSP.
    #[arg(long, default_value_t = 1.0)]
    delta: f64,
    /// Number of sources for bc.
    #[arg(long, default_value_t = 4)]
    samples: usize,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Write the per-vertex output here instead of stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Print one JSON object (time and summary) instead of per-vertex values.
    #[arg(long)]
    json: bool,
    /// Check the result with the kernel's verifier (GAP kernels) before printing.
    #[arg(long)]
    verify: bool,
}

/// A kernel's per-vertex result, ready to print.
enum Values {
    Int(Vec<i64>),
    Float(Vec<f64>),
    /// A single number (triangle count).
    Scalar(u64),
    /// Vertex lists (k-hop).
    Lists(Vec<(String, Vec<VertexId>)>),
}

fn invalid(msg: impl Into<String>) -> evograph::Error {
    evograph::Error::Invalid(msg.into())
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let threads = if a.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        a.threads
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
        g.dense_id(ext)
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
    let t = Instant::now();
    let mut summary = serde_json::Map::new();
    let values = pool
        .install(|| evograph::with_view!(&s, |view| compute(view, &s, &a, source, &mut summary)))?;
    let verify_seconds = summary
        .get("verify_seconds")
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0);
    let seconds = t.elapsed().as_secs_f64() - verify_seconds;
    if a.json {
        let mut o = json!({
            "kernel": a.kernel,
            "seconds": seconds,
            "threads": threads,
            "vertices": s.live_vertices(),
            "edges": s.num_edges(),
            "runs": s.runs().len(),
        });
        o.as_object_mut().unwrap().extend(summary);
        println!("{o}");
        return Ok(ExitCode::SUCCESS);
    }
    let sink: Box<dyn Write> = match &a.output {
        Some(p) => {
            Box::new(std::fs::File::create(p).map_err(|e| evograph::Error::io("create", p, e))?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut w = std::io::BufWriter::with_capacity(1 << 20, sink);
    let res = print(&mut w, &s, &values).and_then(|_| w.flush());
    match res {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(evograph::Error::io(
            "write",
            a.output.unwrap_or_else(|| "stdout".into()),
            e,
        )),
        Ok(()) => Ok(ExitCode::SUCCESS),
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
    r.map_err(invalid)
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
            if a.verify && it < a.iterations.unwrap_or(20) {
                timed_verify(summary, || {
                    gap::pr::verify(g, &scores, a.damping, a.tolerance)
                })?;
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
            let mut sources = pick_sources(s, a.samples.max(1));
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
            summary.insert("one_hop".into(), one.len().into());
            summary.insert("two_hop".into(), two.len().into());
            Values::Lists(vec![("1".into(), one), ("2".into(), two)])
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
        k => {
            return Err(invalid(format!(
                "unknown kernel '{k}' (see evograph run --help)"
            )))
        }
    })
}

fn print(w: &mut impl Write, s: &Snapshot, values: &Values) -> std::io::Result<()> {
    let live = (0..s.num_vertices() as VertexId).filter(|&v| s.vertex_exists(v));
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
        Values::Lists(ls) => {
            for (name, l) in ls {
                let ids: Vec<String> = l.iter().map(|&v| s.external_id(v).to_string()).collect();
                writeln!(w, "{name}-hop {}", ids.join(" "))?;
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
