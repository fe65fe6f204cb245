//! `evograph bench --standing`: standing kernels against recomputes (issue 50's protocol).
//!
//! The graph less a reserve of 10 % of its edges is ingested into a store. Then, for each
//! standing kernel (wcc, bfs, sssp, pr-tol), each batch size and each mix (insert-only,
//! half deletes), a maintainer is started and batches are committed one after another:
//! inserts from the reserve, deletes of present edges (which go back to the reserve).
//! After each commit (`wait` returned) the maintainer steps; the time from there to its
//! result is one sample. Reported per configuration: p50 and p99 of those samples, the
//! updates per second with the kernel kept current (submit, commit and step, wall clock),
//! and the ratio of a recompute (the fastest kernel giving the same result: gap-cc for wcc,
//! bfs, sssp, pr-tol from the uniform vector; timed as the steps are, from a batch's commit,
//! the snapshot that seals it included; median of three) to the p50.

use evograph::algo::kernel::{self, Kernel, Params};
use evograph::standing::Maintainer;
use evograph::{Graph, Options, Record};
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

/// Batch sizes, in edge updates.
const BATCHES: [usize; 4] = [1, 100, 10_000, 65_536];
/// Steps measured per configuration, by batch size: fewer for larger batches.
fn steps_for(batch: usize) -> usize {
    match batch {
        1 => 200,
        b if b <= 100 => 100,
        b if b <= 10_000 => 30,
        _ => 10,
    }
}

/// The recompute a standing kernel is measured against.
fn baseline(k: Kernel) -> Kernel {
    match k {
        Kernel::Wcc => Kernel::GapCc,
        k => k,
    }
}

/// The present edges and the reserve, from which batches are drawn.
struct Pool {
    present: Vec<(u32, u32)>,
    reserve: Vec<(u32, u32)>,
    rng: rand_xoshiro::Xoshiro256PlusPlus,
}

impl Pool {
    /// A batch of `n` updates, `deletes` of them deletes of present edges.
    fn batch(&mut self, n: usize, deletes: usize) -> Vec<Record> {
        let mut recs = Vec::with_capacity(n);
        for i in 0..n {
            let delete = (i < deletes && !self.present.is_empty()) || self.reserve.is_empty();
            let (from, to) = match delete {
                true => (&mut self.present, &mut self.reserve),
                false => (&mut self.reserve, &mut self.present),
            };
            let e = from.swap_remove(self.rng.random_range(0..from.len()));
            to.push(e);
            let (u, v) = (u64::from(e.0), u64::from(e.1));
            recs.push(match delete {
                true => Record::Delete(u, v),
                false => Record::Insert(u, v),
            });
        }
        recs
    }
}

/// `--kernels`: `all` (wcc, bfs, sssp, pr-tol, and the vertex programs pregel-cc,
/// pregel-bfs, pregel-sssp), or a comma-separated list of those.
fn kernels(list: &str) -> evograph::Result<Vec<Kernel>> {
    if list == "all" {
        return Ok(evograph::standing::KERNELS.to_vec());
    }
    list.split(',').map(|k| k.parse::<Kernel>()).collect()
}

fn percentile(xs: &mut [f64], p: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let i = ((xs.len() as f64 - 1.0) * p).round() as usize;
    xs.get(i).copied().unwrap_or(f64::NAN)
}

/// Runs the protocol in `dir` on `edges`: the figures, as JSON.
pub fn run(
    a: &super::Args,
    dir: &Path,
    edges: &[(u32, u32)],
    threads: usize,
) -> evograph::Result<serde_json::Value> {
    let path = dir.join("standing");
    let _ = std::fs::remove_dir_all(&path);
    let opts = Options::new()
        .durability(a.durability)
        .threads(threads)
        .memtable_bytes(a.memtable_mb << 20);
    let g = Graph::create(&path, opts)?;
    // Distinct edges, so that an insert from the reserve always adds one and its undo
    // takes back no edge that was there before.
    let mut edges = edges.to_vec();
    {
        use rayon::prelude::*;
        edges.par_sort_unstable();
    }
    edges.dedup();
    evograph::gen::shuffle(&mut edges, a.seed);
    let keep = edges.len() - edges.len() / 10;
    for chunk in edges[..keep].chunks(1 << 16) {
        let recs: Vec<Record> = (chunk.iter())
            .map(|&(u, v)| Record::Insert(u64::from(u), u64::from(v)))
            .collect();
        g.apply(&recs)?;
    }
    // A store as compaction leaves it: every configuration starts from there, the steps'
    // own small runs on top (background merges of the load would compete with them).
    g.compact()?;
    let mut pool = Pool {
        present: edges[..keep].to_vec(),
        reserve: edges[keep..].to_vec(),
        rng: rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(a.seed ^ 0x5354_414e),
    };
    let source = kernel::pick_sources(&g.snapshot()?, 1, a.seed)?[0];
    let mut out = serde_json::Map::new();
    for k in kernels(&a.kernels)? {
        let mut p = Params::default();
        p.source = Some(source);
        let mut configs = Vec::new();
        for batch in BATCHES {
            for (mix, deletes) in [("insert", 0), ("half_deletes", batch / 2)] {
                eprintln!("bench: standing {k}, batches of {batch}, {mix}");
                let mut fig = config(&g, k, &p, &mut pool, batch, deletes)?;
                fig["batch"] = batch.into();
                fig["mix"] = mix.into();
                configs.push(fig);
            }
        }
        out.insert(k.name().into(), configs.into());
    }
    g.close()?;
    let _ = std::fs::remove_dir_all(&path);
    Ok(serde_json::Value::Object(out))
}

/// One configuration: a maintainer of `k` started, then `steps_for(batch)` batches
/// committed and stepped; the figures.
fn config(
    g: &Graph,
    k: Kernel,
    p: &Params,
    pool: &mut Pool,
    batch: usize,
    deletes: usize,
) -> evograph::Result<serde_json::Value> {
    let mut m = Maintainer::new(k, p)?;
    let t = Instant::now();
    m.step(g)?;
    let start_s = t.elapsed().as_secs_f64();
    let saved = (pool.present.clone(), pool.reserve.clone());
    let (mut lat, mut recomputes, mut patched) = (Vec::new(), 0, 0);
    let mut phases = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let steps = steps_for(batch);
    let mut done = Vec::with_capacity(steps * batch);
    let wall = Instant::now();
    for _ in 0..steps {
        let recs = pool.batch(batch, deletes);
        done.extend_from_slice(&recs);
        let ticket = g.submit(&recs)?;
        g.wait(ticket)?;
        let t = Instant::now();
        let step = m.step(g)?;
        lat.push(t.elapsed().as_secs_f64());
        if let Some(s) = &step {
            recomputes += s.recomputed.is_some() as u32;
            patched += s.patched as u32;
            let p = s.phases;
            for (v, x) in phases
                .iter_mut()
                .zip([p.snapshot, p.changes, p.kernel, p.rounds as f64])
            {
                v.push(x);
            }
        }
    }
    let wall = wall.elapsed().as_secs_f64();

    // The recompute is timed as the steps are: from a batch's commit to the result, the
    // snapshot's seal of the batch included.
    let mut re = Vec::new();
    for _ in 0..3 {
        let recs = pool.batch(batch, deletes);
        done.extend_from_slice(&recs);
        let ticket = g.submit(&recs)?;
        g.wait(ticket)?;
        let t = Instant::now();
        let s = g.snapshot()?;
        drop(kernel::run(&s, baseline(k), p)?);
        re.push(t.elapsed().as_secs_f64());
    }
    let recompute = percentile(&mut re, 0.5);
    let p50 = percentile(&mut lat, 0.5);
    let fig = json!({
        "steps": steps, "p50_s": p50, "p99_s": percentile(&mut lat, 0.99),
        "updates_per_s": (steps * batch) as f64 / wall,
        "recompute_kernel": baseline(k).name(), "recompute_s": recompute,
        "speedup": recompute / p50, "start_s": start_s, "recomputes": recomputes, "patched": patched,
        "state_bytes": m.dram_bytes(),
        "runs_at_end": m.graph().map_or(0, |g| g.base().runs().len()),
        "p50_phases": {
            "snapshot_s": percentile(&mut phases[0], 0.5),
            "changes_s": percentile(&mut phases[1], 0.5),
            "kernel_s": percentile(&mut phases[2], 0.5),
            "rounds": percentile(&mut phases[3], 0.5),
        },
    });
    drop(m);
    undo(g, &done)?;
    (pool.present, pool.reserve) = saved;
    Ok(fig)
}

/// Puts back what a configuration changed, untimed, so that the next starts from the same
/// graph (and the insert-only ones never run out of edges to insert): its records undone
/// in reverse, then a compaction.
fn undo(g: &Graph, done: &[Record]) -> evograph::Result<()> {
    let back: Vec<Record> = (done.iter().rev())
        .map(|r| match *r {
            Record::Insert(u, v) => Record::Delete(u, v),
            Record::Delete(u, v) => Record::Insert(u, v),
            r => r,
        })
        .collect();
    for chunk in back.chunks(1 << 16) {
        g.apply(chunk)?;
    }
    g.compact()
}

/// The figures as a table: one line per kernel and configuration.
pub fn table(fig: &serde_json::Value) -> String {
    let mut s = format!(
        "{:<11} {:>6} {:<13} {:>8} {:>8} {:>11} {:>10} {:>8} {:>24}\n",
        "kernel",
        "batch",
        "mix",
        "p50 ms",
        "p99 ms",
        "updates/s",
        "recompute",
        "speedup",
        "snap/chg/kernel ms, rnds"
    );
    for (k, configs) in fig.as_object().into_iter().flatten() {
        for c in configs.as_array().into_iter().flatten() {
            let (batch, mix) = (
                c["batch"].as_u64().unwrap_or(0),
                c["mix"].as_str().unwrap_or(""),
            );
            let f = |key: &str| c[key].as_f64().unwrap_or(f64::NAN);
            let ph = |key: &str| c["p50_phases"][key].as_f64().unwrap_or(f64::NAN);
            s += &format!(
                "{k:<11} {batch:>6} {mix:<13} {:>8.3} {:>8.3} {:>11.0} {:>8.1}ms {:>7.1}x {:>6.2}/{:.2}/{:.2} {:>3}\n",
                f("p50_s") * 1e3,
                f("p99_s") * 1e3,
                f("updates_per_s"),
                f("recompute_s") * 1e3,
                f("speedup"),
                ph("snapshot_s") * 1e3,
                ph("changes_s") * 1e3,
                ph("kernel_s") * 1e3,
                ph("rounds"),
            );
        }
    }
    s
}
