//! `evograph bench --history`: what keeping history costs (issue 49's protocol).
//!
//! The workload: the graph, then `ROUNDS` rounds, each deleting 1 % of the graph's edges
//! (sampled) and inserting 1 % new ones, each round committed at its own day. It is
//! ingested into a store keeping no history and one keeping all of it, rounds interleaved
//! (`--trials` of each, A B A B ...), and the figures are medians:
//! - ingest from open to close, with history against without;
//! - gap-pr, gap-cc, gap-bfs on the latest graph, with history against without;
//! - opening the graph as of three points (`Graph::snapshot_at`): the last commit of the
//!   bulk load and of the middle and last rounds, against taking the latest snapshot;
//! - every GAP kernel on the graph as of each point, against the same graph in a
//!   compacted store of its own;
//! - history bytes at rest against the WAL bytes of the same changes;
//! - a diff between neighbouring rounds, per change;
//! - on the compacted store, wcc and pr-tol brought forward round by round and commit by
//!   commit against each step computed afresh (`rolling.rs`).

use evograph::algo::kernel::{self, Kernel, Params};
use evograph::history::History;
use evograph::store::Point;
use evograph::{Graph, Options, Record};
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

/// Rounds of changes after the graph.
const ROUNDS: usize = 20;
/// Share of the graph's edges each round deletes, and inserts anew.
const SHARE: f64 = 0.01;
/// The first round's time (2030-01-01), a day apart each: after any wall clock of the load.
const T0: i64 = 1_893_456_000 * 1_000_000_000;
const DAY: i64 = 86_400 * 1_000_000_000;

/// The GAP kernels timed on the graph as of a commit: the first six the bench times.
const GAP: &[Kernel] = super::kernels::ALL.split_at(6).0;

/// The rounds of the workload: per round, the records in batches of `batch`.
fn rounds(edges: &[(u32, u32)], seed: u64) -> Vec<Vec<Record>> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x4849_5354);
    let n = edges.iter().map(|e| e.0.max(e.1)).max().unwrap_or(0) as u64 + 1;
    let k = ((edges.len() as f64 * SHARE) as usize).max(1);
    (0..ROUNDS)
        .map(|_| {
            let mut r: Vec<Record> = (0..k)
                .map(|_| edges[rng.random_range(0..edges.len())])
                .map(|(u, v)| Record::Delete(u64::from(u), u64::from(v)))
                .collect();
            r.extend(
                (0..k).map(|_| Record::Insert(rng.random_range(0..n), rng.random_range(0..n))),
            );
            r
        })
        .collect()
}

/// Ingests the graph and the rounds into a new store at `dir` keeping `history`: the
/// seconds from open to close.
fn ingest(
    dir: &Path,
    history: History,
    edges: &[(u32, u32)],
    rounds: &[Vec<Record>],
    a: &super::Args,
    threads: usize,
) -> evograph::Result<f64> {
    let _ = std::fs::remove_dir_all(dir);
    let t = Instant::now();
    let opts = Options::new()
        .durability(a.durability)
        .threads(threads)
        .memtable_bytes(a.memtable_mb << 20)
        .history(history);
    let g = Graph::create(dir, opts)?;
    for chunk in edges.chunks(a.batch) {
        let recs: Vec<Record> = (chunk.iter())
            .map(|&(u, v)| Record::Insert(u64::from(u), u64::from(v)))
            .collect();
        g.apply(&recs)?;
    }
    for (i, r) in rounds.iter().enumerate() {
        for chunk in r.chunks(a.batch) {
            let tk = g.submit_at(chunk, T0 + i as i64 * DAY)?;
            g.wait(tk)?;
        }
    }
    g.close()?;
    Ok(t.elapsed().as_secs_f64())
}

/// Seconds of `kernel` on `g`'s latest graph (or as of `at`), from the snapshot to the
/// result.
fn kernel_secs(g: &Graph, kernel: Kernel, at: Option<Point>) -> evograph::Result<f64> {
    let t = Instant::now();
    let s = match at {
        Some(p) => g.snapshot_at(p)?.0,
        None => g.snapshot()?,
    };
    let out = kernel::run(&s, kernel, &Params::default())?;
    let secs = t.elapsed().as_secs_f64();
    drop(out);
    Ok(secs)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Runs the protocol in `dir` on `edges`: the figures, as JSON.
pub fn run(
    a: &super::Args,
    dir: &Path,
    edges: &[(u32, u32)],
    threads: usize,
) -> evograph::Result<serde_json::Value> {
    let rounds = rounds(edges, a.seed);
    let (none_dir, all_dir) = (dir.join("history-none"), dir.join("history-all"));
    let (mut none, mut all) = (Vec::new(), Vec::new());
    for i in 0..a.trials {
        eprintln!("bench: history ingest round {}/{}", i + 1, a.trials);
        none.push(ingest(
            &none_dir,
            History::None,
            edges,
            &rounds,
            a,
            threads,
        )?);
        all.push(ingest(&all_dir, History::All, edges, &rounds, a, threads)?);
    }
    let ro = || Options::new().read_only(true).threads(threads);
    let (gn, ga) = (Graph::open(&none_dir, ro())?, Graph::open(&all_dir, ro())?);
    let mut latest = serde_json::Map::new();
    for k in [Kernel::GapPr, Kernel::GapCc, Kernel::GapBfs] {
        let (mut n, mut h) = (Vec::new(), Vec::new());
        for _ in 0..a.trials.max(3) {
            n.push(kernel_secs(&gn, k, None)?);
            h.push(kernel_secs(&ga, k, None)?);
        }
        let (n, h) = (median(n), median(h));
        latest.insert(
            k.name().into(),
            json!({"none_s": n, "all_s": h, "ratio": h / n}),
        );
    }
    let log = ga.log()?;
    let points = points(&log)?;
    let at = open_at(&ga, &points, a.trials.max(5))?;
    let mut versus = serde_json::Map::new();
    for &(name, lsn) in &points {
        eprintln!("bench: GAP kernels as of the {name} point against a compacted store");
        let v = versus_compacted(&ga, lsn, dir, threads, a.trials.max(3))?;
        versus.insert(name.into(), json!({"lsn": lsn, "kernels": v}));
    }
    let changes = log.commits.iter().map(|c| c.1).sum::<u64>();
    let wal_bytes: u64 = (log.commits.iter()).map(|c| 32 + 16 + 8 + 8 * c.1).sum();
    let diffs = diff_costs(&ga, &log)?;
    drop(ga);
    let versioned = with_versions(&all_dir, dir, &points, a, threads)?;
    // On the compacted store, as the points above: steps read its versions.
    let rolling = super::rolling::run(&Graph::open(&all_dir, ro())?, T0, DAY, ROUNDS)?;
    let (n, h) = (median(none), median(all));
    Ok(json!({
        "rounds": ROUNDS, "share": SHARE, "commits": log.commits.len(),
        "ingest": {"none_s": n, "all_s": h, "speed_ratio": n / h},
        "latest_kernels": latest,
        "open_at_s": at,
        "gap_at_points": versus,
        "versions": versioned,
        "bytes": {"segments": log.segment_bytes, "wal_estimate": wal_bytes,
            "ratio": log.segment_bytes as f64 / wal_bytes.max(1) as f64,
            "records": changes},
        "diff": diffs,
        "rolling": rolling,
    }))
}

/// `compact` on the store keeping history, which derives its runs' versions (timed, start
/// to close), then the points again: opened, and every GAP kernel as of each against a
/// compacted store of its graph; with the versions files' bytes against the runs'.
fn with_versions(
    all_dir: &Path,
    dir: &Path,
    points: &[(&'static str, u64)],
    a: &super::Args,
    threads: usize,
) -> evograph::Result<serde_json::Value> {
    eprintln!("bench: compact (deriving run versions), then the points again");
    let t = Instant::now();
    let g = Graph::open(all_dir, Options::new().threads(threads))?;
    g.compact()?;
    g.close()?;
    let derive = t.elapsed().as_secs_f64();
    let bytes = |ext: &str| -> evograph::Result<u64> {
        let mut n = 0;
        for e in std::fs::read_dir(all_dir).map_err(|e| evograph::Error::io("read", all_dir, e))? {
            let path = e
                .map_err(|e| evograph::Error::io("read", all_dir, e))?
                .path();
            if path.extension().is_some_and(|x| x == ext) {
                n += (path.metadata())
                    .map_err(|e| evograph::Error::io("stat", &path, e))?
                    .len();
            }
        }
        Ok(n)
    };
    let (ver, run) = (bytes("ver")?, bytes("run")?);
    let g = Graph::open(all_dir, Options::new().read_only(true).threads(threads))?;
    let at = open_at(&g, points, a.trials.max(5))?;
    let mut versus = serde_json::Map::new();
    for &(name, lsn) in points {
        let v = versus_compacted(&g, lsn, dir, threads, a.trials.max(3))?;
        versus.insert(name.into(), json!({"lsn": lsn, "kernels": v}));
    }
    Ok(
        json!({"compact_s": derive, "bytes": {"versions": ver, "runs": run},
        "open_at_s": at, "gap_at_points": versus}),
    )
}

/// The points the issue of versioned runs measures: the last commit of the bulk load
/// (committed before the first round's time) and the last commits of the middle and the
/// last round.
fn points(log: &evograph::store::Log) -> evograph::Result<Vec<(&'static str, u64)>> {
    let last_before = |t: i64| {
        (log.commits.iter().rev())
            .find(|c| c.0.unix_nanos < t)
            .map(|c| c.0.lsn)
            .ok_or_else(|| super::invalid("the history lacks the bench's commits"))
    };
    Ok(vec![
        ("bulk_load", last_before(T0)?),
        ("middle_round", last_before(T0 + (ROUNDS / 2) as i64 * DAY)?),
        ("last_round", last_before(i64::MAX)?),
    ])
}

/// Seconds to take the latest snapshot and to open the graph as of each point (medians
/// of `rounds`, interleaved), and each point's excess over the latest.
fn open_at(
    g: &Graph,
    points: &[(&'static str, u64)],
    rounds: usize,
) -> evograph::Result<serde_json::Value> {
    let mut latest = Vec::new();
    let mut at: Vec<Vec<f64>> = vec![Vec::new(); points.len()];
    for _ in 0..rounds {
        let t = Instant::now();
        drop(g.snapshot()?);
        latest.push(t.elapsed().as_secs_f64());
        for (i, &(_, lsn)) in points.iter().enumerate() {
            let t = Instant::now();
            drop(g.snapshot_at(Point::Lsn(lsn))?);
            at[i].push(t.elapsed().as_secs_f64());
        }
    }
    let latest = median(latest);
    let mut out = serde_json::Map::new();
    out.insert("latest".into(), json!(latest));
    for (&(name, lsn), secs) in points.iter().zip(at) {
        let m = median(secs);
        out.insert(
            name.into(),
            json!({"lsn": lsn, "seconds": m, "over_latest_s": m - latest}),
        );
    }
    Ok(serde_json::Value::Object(out))
}

/// Every GAP kernel as of commit `lsn` against a compacted store holding that graph.
fn versus_compacted(
    g: &Graph,
    lsn: u64,
    dir: &Path,
    threads: usize,
    rounds: usize,
) -> evograph::Result<serde_json::Value> {
    use evograph::GraphView;
    let (s, _) = g.snapshot_at(Point::Lsn(lsn))?;
    let cdir = dir.join("history-compacted");
    let _ = std::fs::remove_dir_all(&cdir);
    let c = Graph::create(
        &cdir,
        Options::new()
            .threads(threads)
            .durability(evograph::Durability::None),
    )?;
    let mut recs = Vec::new();
    for v in 0..s.num_vertices() as evograph::VertexId {
        if s.vertex_exists(v) {
            let x = s.external_id(v);
            recs.push(Record::InsertVertex(x));
            s.for_each_out(v, |y| recs.push(Record::Insert(x, s.external_id(y))));
        }
    }
    c.apply(&recs)?;
    c.compact()?;
    let mut out = serde_json::Map::new();
    for &k in GAP {
        let (mut at, mut flat) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            at.push(kernel_secs(g, k, Some(Point::Lsn(lsn)))?);
            flat.push(kernel_secs(&c, k, None)?);
        }
        let (x, y) = (median(at), median(flat));
        out.insert(
            k.name().into(),
            json!({"at_s": x, "compacted_s": y, "ratio": x / y}),
        );
    }
    c.close()?;
    Ok(serde_json::Value::Object(out))
}

/// A diff between neighbouring rounds' last commits: seconds and per change.
fn diff_costs(g: &Graph, log: &evograph::store::Log) -> evograph::Result<serde_json::Value> {
    let n = log.commits.len();
    let (a, b) = (log.commits[n * 3 / 4].0, log.commits[n - 1].0);
    let t = Instant::now();
    let d = g.diff(Point::Lsn(a.lsn), Point::Lsn(b.lsn))?;
    let secs = t.elapsed().as_secs_f64();
    Ok(
        json!({"from_lsn": a.lsn, "to_lsn": b.lsn, "changes": d.records.len(),
        "seconds": secs, "ns_per_change": secs * 1e9 / d.records.len().max(1) as f64}),
    )
}
