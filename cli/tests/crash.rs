//! Crash test: a child `evograph ingest --durability sync --print-acks` is killed with SIGKILL
//! at random moments; after each kill the store is reopened and must hold every acknowledged
//! record, no record beyond the batches that were in flight, whole batches only, and pass
//! `check`. The store is reused across kills, so recovery also runs on top of recovered state.
//!
//! Seeded: set EVOGRAPH_CRASH_SEED to replay a failure; EVOGRAPH_CRASH_KILLS sets the number
//! of kill points (default 60).

mod common;

use common::{name_of, read, update_stream, Model, Rng};
use evograph::{Error, Graph, KeyKind, Options, Record};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BATCH: usize = 512;
/// Most batches a trial lets `ingest` submit ahead of their acknowledgement
/// (`--in-flight`, drawn per trial from 1 up to this).
const MAX_IN_FLIGHT: u64 = 6;

/// An update stream of `n` records: inserts of fresh edges, deletes of earlier ones, and a
/// few vertex deletions, written as an `ops` file.
fn make_ops(rng: &mut Rng, trial: u64, n: usize, path: &Path, keys: KeyKind) -> Vec<Record> {
    let recs = update_stream(rng, trial, n, &mut Vec::new());
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let k = |x: &u64| match keys {
        KeyKind::String => name_of(*x),
        _ => x.to_string(),
    };
    for r in &recs {
        match r {
            Record::Insert(u, v) => writeln!(f, "+ {} {}", k(u), k(v)),
            Record::InsertWeighted(u, v, w) => writeln!(f, "+ {} {} {w}", k(u), k(v)),
            Record::Delete(u, v) => writeln!(f, "- {} {}", k(u), k(v)),
            Record::InsertVertex(u) => writeln!(f, "+ {}", k(u)),
            Record::DeleteVertex(u) => writeln!(f, "- {}", k(u)),
        }
        .unwrap();
    }
    f.flush().unwrap();
    recs
}

/// What the store keeps besides the latest graph.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kept {
    Latest,
    /// All history: after every kill, the graph as of the commit where the trial began
    /// must still be the graph the trial began from.
    History,
    /// The latest graph, with a standing kernel kept current inside the writer
    /// (`ingest --maintain wcc`): following commits must not weaken them.
    LatestMaintained,
}

#[test]
fn sigkill_mid_ingest_loses_no_acknowledged_record() {
    // Partitions of 16384 ids: from the first trial on, merges above level 0 rewrite one
    // partition at a time, so kills land between partition merges too.
    kill_points("file", 60, 14, KeyKind::U64, Kept::Latest);
}

/// The same keeping all history: segments are written with every flush and dropped by
/// none, and a kill anywhere keeps the past as it was.
#[test]
fn sigkill_mid_ingest_keeps_history() {
    kill_points("file", 20, 14, KeyKind::U64, Kept::History);
}

/// The same with vertex names: each batch's new names reach `KEYS`, durably, before the
/// batch's WAL block, so a kill anywhere leaves a name for every vertex recovered.
#[test]
fn sigkill_mid_ingest_with_string_keys_loses_no_acknowledged_record() {
    kill_points("file", 30, 14, KeyKind::String, Kept::Latest);
}

/// The same with wcc kept current inside the writer: the writer keeps each batch and its
/// changes for the follower, which steps before the next batch is submitted.
#[test]
fn sigkill_mid_ingest_with_a_standing_kernel_loses_no_acknowledged_record() {
    kill_points("file", 20, 14, KeyKind::U64, Kept::LatestMaintained);
}

/// The same on the pmem medium: mapped segments, WAL commit markers, segments allocated
/// ahead (recovery cuts their zero tails and allocates them again).
#[test]
fn sigkill_mid_ingest_on_pmem_loses_no_acknowledged_record() {
    kill_points("pmem", 20, 20, KeyKind::U64, Kept::Latest);
}

/// The graph as of the commit the last verified trial ended at (`began`) is still the
/// graph it was then, whatever the kill since did.
fn check_past(g: &Graph, began: &Option<(u64, Model)>, seed: u64, trial: u64) {
    let Some((lsn, was)) = began else { return };
    let (s, at) = g
        .snapshot_at(evograph::store::Point::Lsn(*lsn))
        .unwrap_or_else(|e| panic!("seed {seed} trial {trial}: the graph as of LSN {lsn}: {e}"));
    assert_eq!(
        at.lsn, *lsn,
        "seed {seed} trial {trial}: commit {lsn} is gone"
    );
    let (vertices, edges) = read(&s);
    assert!(
        edges == was.edges && vertices == was.vertices,
        "seed {seed} trial {trial}: the graph as of LSN {lsn} changed after a kill ({} edges, was {})",
        edges.len(),
        was.edges.len()
    );
}

/// How the model after `batches` whole batches differs from a recovered store.
#[derive(Debug)]
#[allow(dead_code)] // Read through Debug in a failure's message.
struct Distance {
    batches: usize,
    /// Edges of the model the store lacks, with a few of them.
    missing: (usize, Vec<(u64, u64)>),
    /// Edges of the store the model lacks, with a few of them.
    extra: (usize, Vec<(u64, u64)>),
    /// Vertices only the model has, and only the store has.
    vertices: (Vec<u64>, Vec<u64>),
}

impl Distance {
    fn between(
        batches: usize,
        m: &Model,
        edges: &BTreeSet<(u64, u64)>,
        vertices: &BTreeSet<u64>,
    ) -> Distance {
        let few = |d: std::collections::btree_set::Difference<'_, (u64, u64)>| {
            let all: Vec<_> = d.copied().collect();
            (all.len(), all.into_iter().take(4).collect())
        };
        Distance {
            batches,
            missing: few(m.edges.difference(edges)),
            extra: few(edges.difference(&m.edges)),
            vertices: (
                m.vertices.difference(vertices).take(4).copied().collect(),
                vertices.difference(&m.vertices).take(4).copied().collect(),
            ),
        }
    }
}

fn kill_points(medium: &str, default_kills: u64, partition_bits: u32, keys: KeyKind, kept: Kept) {
    let seed: u64 = std::env::var("EVOGRAPH_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_c0de);
    let kills: u64 = std::env::var("EVOGRAPH_CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_kills);
    eprintln!(
        "crash test ({medium}): seed {seed}, {kills} kill points (EVOGRAPH_CRASH_SEED replays)"
    );
    let mut rng = Rng(seed | 1);
    // pmem on tmpfs runs the cache-line flush path (elsewhere it falls back to msync).
    let dir = match medium {
        "pmem" if std::path::Path::new("/dev/shm").is_dir() => {
            tempfile::tempdir_in("/dev/shm").unwrap()
        }
        _ => tempfile::tempdir().unwrap(),
    };
    let store = dir.path().join("store");
    let bin = env!("CARGO_BIN_EXE_evograph");
    let mut model = Model::new(false);
    let mut killed_mid_ingest = 0;
    // Kill deadlines are drawn below this; it shrinks to the lifetime of children that
    // finished before their kill, so that kills still land mid-ingest when a fast build on
    // tmpfs ingests a whole trial in a few milliseconds.
    // A maintaining ingest computes the kernel on the whole store before its first
    // acknowledgement: within 400 ms most kills landed before any.
    let mut window_ms: u64 = match kept {
        Kept::LatestMaintained => 2000,
        _ => 400,
    };
    let mut acked_trials = 0;
    // Whether a trial has reopened the store: from then on it must exist.
    let mut store_made = false;
    let mut trials_log = std::fs::File::create(dir.path().join("trials.log")).unwrap();
    // With history: the last commit a verified trial ended at, and the graph there.
    let mut began: Option<(u64, Model)> = None;
    let changes = dir.path().join("changes");
    let changes_path = changes.to_str().unwrap();
    for trial in 0..kills {
        let n = 20_000 + rng.below(20_000) as usize;
        let input = dir.path().join(format!("t{trial}.ops"));
        let recs = make_ops(&mut rng, trial, n, &input, keys);
        // Batches the pipeline may hold past the last acknowledgement: the ones submitted
        // ahead and one being applied.
        let in_flight = 1 + rng.below(MAX_IN_FLIGHT) as usize;
        let past_ack = in_flight + 1;
        // Small memtables so that kills also land in flushes and compactions.
        let spawned = Instant::now();
        let mut child = Command::new(bin)
            .args(["ingest", store.to_str().unwrap(), input.to_str().unwrap()])
            .args(["--format", "ops", "--durability", "sync", "--print-acks"])
            .args([
                "--batch",
                &BATCH.to_string(),
                "--memtable-mb",
                "1",
                "--threads",
                "2",
                "--in-flight",
                &in_flight.to_string(),
            ])
            .args(["--no-validate", "--medium", medium, "--keys", keys.as_str()])
            .args(["--partition-bits", &partition_bits.to_string()])
            .args(match kept {
                Kept::History => vec!["--history", "all"],
                Kept::Latest => vec![],
                Kept::LatestMaintained => vec!["--maintain", "wcc", "--changes", changes_path],
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill after a random number of acknowledgements, or a random time if it is sooner.
        let stop_after = rng.below((n / BATCH) as u64 + 2);
        let deadline = Instant::now() + Duration::from_millis(1 + rng.below(window_ms));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(n) = line.strip_prefix("acked ") {
                    if tx.send(n.parse::<usize>().unwrap()).is_err() {
                        return;
                    }
                }
            }
        });
        let mut acked = 0usize;
        let mut acks = 0u64;
        while acks < stop_after {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(a) => {
                    acked = a;
                    acks += 1;
                }
                Err(_) => break,
            }
        }
        child.kill().unwrap();
        let status = child.wait().unwrap();
        // Acks printed before the kill count too: they were promised.
        while let Ok(a) = rx.try_recv() {
            acked = a;
        }
        if status.code().is_none() {
            killed_mid_ingest += 1;
        } else {
            let lived = spawned.elapsed().as_millis() as u64;
            window_ms = window_ms.min((lived / 2).max(2));
        }

        // A child killed before it committed the store's first root (a cold start of a
        // large debug binary can outlast the first deadline) promised nothing, and leaves
        // at most an empty directory that is not a store yet; once a store exists it
        // must stay.
        let g = match Graph::open(&store, Options::default()) {
            Err(Error::NotAStore { .. }) if !store_made && acked == 0 => continue,
            r => r.unwrap_or_else(|e| panic!("seed {seed} trial {trial}: reopen failed: {e}")),
        };
        store_made = true;
        let (got_vertices, got) = read(&g.snapshot().unwrap());
        // The recovered state must be the model after exactly k whole batches, with k
        // covering every acknowledged record and at most `past_ack` more batches.
        acked_trials += (acked > 0) as u64;
        let first = acked.div_ceil(BATCH);
        let mut m = model.clone();
        let mut matched = None;
        let apply_upto = |m: &mut Model, from: usize, to: usize| {
            recs[from.min(n)..to.min(n)].iter().for_each(|r| m.apply(r))
        };
        apply_upto(&mut m, 0, (first * BATCH).min(n).max(acked));
        let mut k = first;
        // How far each candidate is from what was recovered, for the report of a mismatch.
        let mut tried = Vec::new();
        loop {
            if m.edges == got && m.vertices == got_vertices {
                matched = Some(k);
                break;
            }
            tried.push(Distance::between(k, &m, &got, &got_vertices));
            if k >= first + past_ack || k * BATCH >= n {
                break;
            }
            apply_upto(&mut m, k * BATCH, (k + 1) * BATCH);
            k += 1;
        }
        let Some(k) = matched else {
            g.close().unwrap();
            // Kept for a post-mortem: the store as recovered and every trial's input.
            let kept = dir.keep();
            panic!(
                "seed {seed} trial {trial}: recovered {} edges, acked {acked} records, {in_flight} in flight; no prefix of whole batches matches: {tried:#?}\nstore and inputs kept in {}",
                got.len(),
                kept.display()
            );
        };
        if kept == Kept::History {
            check_past(&g, &began, seed, trial);
            began = g.last_commit().map(|c| (c.lsn, m.clone()));
        }
        model = m;
        // What each trial left, for the post-mortem of a later failure.
        writeln!(
            trials_log,
            "trial {trial}: {n} records, acked {acked}, {in_flight} in flight, recovered {k} batches"
        )
        .unwrap();
        let rep = g.check().unwrap();
        assert!(
            rep.is_sound(),
            "seed {seed} trial {trial}: check after recovery: {:?}",
            rep.problems
        );
        assert!(
            k * BATCH >= acked.min(n),
            "seed {seed} trial {trial}: lost acknowledged records"
        );
        g.close().unwrap();
    }
    eprintln!(
        "{killed_mid_ingest} of {kills} children were killed mid-ingest, {acked_trials} after an acknowledgement"
    );
    assert!(
        killed_mid_ingest * 2 >= kills,
        "too few kills landed mid-ingest: {killed_mid_ingest}/{kills}"
    );
}
