//! The compression leg (`bench --compress`): the same protocol on a store created with
//! compressed runs, reported as ratios to the plain store measured in the same trial.

use super::kernels::{self, Setup};
use super::lookup::Queries;
use super::report::{median, Trial};
use super::{open_store, secs, stream, Plan, MAX_ROUNDS, ROUND_BUDGET};
use evograph::algo::kernel::Kernel;
use evograph::{Compression, GraphView, Snapshot};

/// Ingests the trial's edges into a compressed store as the plain leg did (warm-up, the
/// timed 90% with a compaction before the last 10%), compacts it, then compares sizes,
/// every kernel (rounds of plain and compressed in turn) and lookups with `plain`, the
/// plain store's compacted snapshot. `plain_live_runs` sizes the plain live snapshot.
pub fn leg(
    p: &Plan,
    plain: &Snapshot,
    plain_run_bytes: u64,
    setup: &Setup,
    queries: &Queries,
    t: &mut Trial,
) -> evograph::Result<()> {
    let dir = p.dir.join("store-packed");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| super::io_err("remove", &dir, e))?;
    }
    let g = open_store(p, &dir, true, Compression::Packed)?;
    let e = &p.edges;
    let m = e.len();
    let (warm, cut) = (m / 10, m - m / 10);
    let mut peak = 0;
    stream(&g, &e[..warm], p.a.batch, false, &mut Vec::new(), &mut peak)?;
    let first = stream(
        &g,
        &e[warm..cut],
        p.a.batch,
        false,
        &mut Vec::new(),
        &mut peak,
    )?;
    g.compact()?;
    let last = stream(&g, &e[cut..], p.a.batch, false, &mut Vec::new(), &mut peak)?;
    let meps = (m - warm) as f64 / (first + last) / 1e6;
    t.set("compress.ingest_meps", meps);
    if let Some(plain_meps) = t.get("ingest.meps") {
        t.set("compress.ingest_ratio", meps / plain_meps);
    }
    let live = g.snapshot()?;
    g.flush()?;
    let ((), compact) = secs(|| g.compact())?;
    t.set("compress.compact_seconds", compact);
    let comp = g.snapshot()?;
    if comp.num_edges() != plain.num_edges() {
        return Err(super::invalid(format!(
            "the compressed store holds {} edges, the plain one {}",
            comp.num_edges(),
            plain.num_edges()
        )));
    }
    let runs: u64 = g.stats()?.levels.iter().map(|l| l.bytes).sum();
    let edges = p.unique as f64;
    t.set("compress.bytes_per_edge.runs", runs as f64 / edges);
    t.set(
        "compress.bytes_per_edge.runs_plain",
        plain_run_bytes as f64 / edges,
    );
    t.set("compress.size_ratio", runs as f64 / plain_run_bytes as f64);
    eprintln!(
        "bench:   compressed: ingest {meps:.2} M edges/s, runs {:.2} B/edge against {:.2}",
        runs as f64 / edges,
        plain_run_bytes as f64 / edges
    );
    p.pool.install(|| {
        evograph::with_view!(&comp, |v| super::touch(v));
    });
    for &k in &p.kernels {
        if super::pregel::ALL.contains(&k) {
            continue;
        }
        compare_kernel(p, k, plain, &comp, setup, t)?;
    }
    p.pool.install(|| {
        queries.measure("packed_live", |u, v| live.has_edge(u, v), t)?;
        queries.measure("packed_compacted", |u, v| comp.has_edge(u, v), t)
    })?;
    drop((live, comp));
    g.close()
}

/// Most rounds of one kernel's comparison: more than the main protocol's [`MAX_ROUNDS`],
/// because a kernel of a few milliseconds (BFS at Kron20) swung 1.1-1.6x between runs at
/// five, and its rounds cost little.
const COMPARE_ROUNDS: usize = 4 * MAX_ROUNDS + 1;

/// Fewest rounds of one kernel's comparison: a ratio is the median of the rounds' ratios,
/// and one round of a long kernel (CDLP, LCC) is one noisy sample (CDLP at Kron20 read
/// 1.28-1.41x across trials of one round each).
const MIN_COMPARE_ROUNDS: usize = 3;

/// Times kernel `k` on the plain and the compressed compacted snapshot in rounds of both
/// in turn, checks that they agree and records the medians and their ratio.
fn compare_kernel(
    p: &Plan,
    k: Kernel,
    plain: &Snapshot,
    packed: &Snapshot,
    setup: &Setup,
    t: &mut Trial,
) -> evograph::Result<()> {
    let mut times: [Vec<f64>; 2] = Default::default();
    let mut rounds = 1;
    let mut r = 0;
    while r < rounds {
        let (tp, dp) = p
            .pool
            .install(|| evograph::with_view!(plain, |v| kernels::run(k, v, setup, r)));
        let (tc, dc) = p
            .pool
            .install(|| evograph::with_view!(packed, |v| kernels::run(k, v, setup, r)));
        if !dp.agrees(dc) {
            return Err(super::invalid(format!(
                "kernel {k} disagrees: plain {dp:?}, compressed {dc:?}"
            )));
        }
        if r == 0 {
            rounds = ((ROUND_BUDGET / tp.max(tc).max(1e-6)) as usize)
                .clamp(MIN_COMPARE_ROUNDS, COMPARE_ROUNDS);
        }
        times[0].push(tp);
        times[1].push(tc);
        r += 1;
    }
    // The ratio is the median of each round's ratio: a round's two runs are adjacent in
    // time, so a shared machine's drift between rounds cancels out of it.
    let ratios: Vec<f64> = times[1].iter().zip(&times[0]).map(|(c, p)| c / p).collect();
    let ratio = median(&ratios).expect("one round at least");
    let [tp, tc] = times.map(|v| median(&v).expect("one round at least"));
    eprintln!(
        "bench:   {k:<9} compressed {tc:.4} s, plain {tp:.4} s: {ratio:.2}x (median of {rounds})"
    );
    t.set(format!("compress.kernels.{k}.seconds"), tc);
    t.set(format!("compress.kernels.{k}.ratio"), ratio);
    Ok(())
}
