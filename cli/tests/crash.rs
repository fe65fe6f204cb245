//! Crash test: a child `evograph ingest --durability sync --print-acks` is killed with SIGKILL
//! at random moments; after each kill the store is reopened and must hold every acknowledged
//! record, no record beyond the batches that were in flight, whole batches only, and pass
//! `check`. The store is reused across kills, so recovery also runs on top of recovered state.
//!
//! Seeded: EVOGRAPH_CRASH_SEED sets the seed, and with it EVOGRAPH_CRASH_REPLAY=<trials.log>
//! replays a failed run's kill points (see `common/kill.rs`); EVOGRAPH_CRASH_KILLS sets the
//! number of kill points per test (default 20-30). `kill_sessions.rs` drives one long-lived store.

mod common;

use common::kill::{self, KillAt, Replay};
use common::{read, update_stream, Model, Rng};
use evograph::{Error, Graph, KeyKind, Options, Record};
use std::path::Path;
use std::time::Instant;

const BATCH: usize = 512;
/// Most batches a trial lets `ingest` submit ahead of their acknowledgement
/// (`--in-flight`, drawn per trial from 1 up to this).
const MAX_IN_FLIGHT: u64 = 6;

/// An update stream of `n` records: inserts of fresh edges, deletes of earlier ones, and a
/// few vertex deletions, written as an `ops` file.
fn make_ops(rng: &mut Rng, trial: u64, n: usize, path: &Path, keys: KeyKind) -> Vec<Record> {
    let recs = update_stream(rng, trial, n, &mut Vec::new());
    kill::write_ops(&recs, path, keys);
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
    kill_points("file", 28, 14, KeyKind::U64, Kept::Latest);
}

/// The same keeping all history: segments are written with every flush and dropped by
/// none, each run's versions after it, and a kill anywhere keeps the past as it was.
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

/// The graph as of each of the last verified trial's commits in `past` (its last, and one
/// inside it) is still the graph it was then, whatever the kill since did.
fn check_past(g: &Graph, past: &[(u64, Model)], seed: u64, trial: u64) {
    for (lsn, was) in past {
        check_point(g, *lsn, was, seed, trial);
    }
}

/// [`check_past`] at commit `lsn`, whose graph was `was`.
fn check_point(g: &Graph, lsn: u64, was: &Model, seed: u64, trial: u64) {
    let (s, at) = g
        .snapshot_at(evograph::store::Point::Lsn(lsn))
        .unwrap_or_else(|e| panic!("seed {seed} trial {trial}: the graph as of LSN {lsn}: {e}"));
    assert_eq!(
        at.lsn, lsn,
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

/// A commit inside the trial that began at commit `start` on the graph `before` with
/// records `recs`, and the graph there: LSNs count records, so the first `lsn - start`.
fn middle_commit(g: &Graph, start: u64, before: &Model, recs: &[Record]) -> Option<(u64, Model)> {
    let log = g.log().unwrap();
    let inside: Vec<u64> = (log.commits.iter())
        .map(|c| c.0.lsn)
        .filter(|&l| l > start)
        .collect();
    let lsn = *inside.get(inside.len().checked_sub(1)? / 2)?;
    let mut m = before.clone();
    recs[..(lsn - start) as usize]
        .iter()
        .for_each(|r| m.apply(r));
    Some((lsn, m))
}

/// Starts `ingest` of `input` into `store` as a trial of `kept` runs it.
fn spawn_ingest(store: &Path, input: &Path, t: &Trial, changes: &Path) -> std::process::Child {
    kill::ingest_command(store, input, BATCH, t.in_flight, t.medium)
        .args(["--keys", t.keys.as_str()])
        // Tails every few thousand updates (none while history is kept): kills land in
        // their writes, and a reader before the next writer meets what they left.
        .args(["--tails", "always"])
        .args(["--partition-bits", &t.partition_bits.to_string()])
        .args(match t.kept {
            // Versions derived after every flush and merge: kills land inside their
            // derivation and their file's write too.
            Kept::History => vec![
                "--history".as_ref(),
                "all".as_ref(),
                "--run-versions".as_ref(),
                "flush".as_ref(),
            ],
            Kept::Latest => vec![],
            Kept::LatestMaintained => {
                vec![
                    "--maintain".as_ref(),
                    "wcc".as_ref(),
                    "--changes".as_ref(),
                    changes.as_os_str(),
                ]
            }
        })
        .spawn()
        .unwrap()
}

/// How every trial of one test runs its child.
struct Trial {
    medium: &'static str,
    keys: KeyKind,
    kept: Kept,
    partition_bits: u32,
    in_flight: usize,
}

fn kill_points(
    medium: &'static str,
    default_kills: u64,
    partition_bits: u32,
    keys: KeyKind,
    kept: Kept,
) {
    let seed = kill::seed(0x5eed_c0de);
    let kills = kill::env_u64("EVOGRAPH_CRASH_KILLS").unwrap_or(default_kills);
    let replay = Replay::from_env();
    eprintln!(
        "crash test ({medium}): seed {seed}, {kills} kill points (EVOGRAPH_CRASH_SEED replays)"
    );
    let mut rng = Rng(seed | 1);
    // pmem on tmpfs runs the cache-line flush path (elsewhere it falls back to msync).
    // Kept for a post-mortem when a trial fails (the store as recovered, every trial's input
    // and kill point), removed at the end otherwise.
    let dir = match medium {
        "pmem" if Path::new("/dev/shm").is_dir() => tempfile::tempdir_in("/dev/shm").unwrap(),
        _ => tempfile::tempdir().unwrap(),
    }
    .keep();
    let store = dir.join("store");
    let mut t = Trial {
        medium,
        keys,
        kept,
        partition_bits,
        in_flight: 1,
    };
    let (mut model, mut killed_mid_ingest, mut acked_trials) = (Model::new(false), 0, 0);
    // Kill deadlines are drawn below this; it shrinks to the lifetime of children that
    // finished before their kill, so that kills still land mid-ingest when a fast build on
    // tmpfs ingests a whole trial in a few milliseconds.
    // A maintaining ingest computes the kernel on the whole store before its first
    // acknowledgement: within 400 ms most kills landed before any.
    let max_window_ms: u64 = if kept == Kept::LatestMaintained {
        2000
    } else {
        400
    };
    let mut window_ms = max_window_ms;
    // Whether a trial has reopened the store: from then on it must exist.
    let mut store_made = false;
    let mut trials_log = std::fs::File::create(dir.join("trials.log")).unwrap();
    // With history: commits of the last verified trial (its last, and one in its middle:
    // a point inside a run, read through the run's versions), and the graph at each.
    let mut past: Vec<(u64, Model)> = Vec::new();
    let mut tails_loaded = 0;
    for trial in 0..kills {
        let n = 20_000 + rng.below(20_000) as usize;
        let input = dir.join(format!("t{trial}.ops"));
        let recs = make_ops(&mut rng, trial, n, &input, keys);
        t.in_flight = 1 + rng.below(MAX_IN_FLIGHT) as usize;
        // Kill after a random number of acknowledgements, or a random time if it is sooner.
        let acks = rng.below((n / BATCH) as u64 + 2);
        let drawn = KillAt {
            first: 0,
            acks,
            ms: kill::draw_ms(&mut rng, window_ms),
        };
        let at = Replay::point(&replay, trial, drawn);
        // A file of its own per child: `--changes` refuses a file with lines in it.
        let changes = dir.join(format!("changes-{trial}"));
        let child = spawn_ingest(&store, &input, &t, &changes);
        let killed = kill::kill(child, Instant::now(), at);
        let _ = std::fs::remove_file(&changes);
        // A child that ended before its kill must have ended well: one refused at the
        // start tests nothing (one reusing a `--changes` file once hid every maintained
        // kill this way).
        assert!(
            killed.mid_ingest || killed.status.success(),
            "seed {seed} trial {trial}: the child failed on its own: {:?}",
            killed.status
        );
        kill::record(
            &mut trials_log,
            trial,
            &killed,
            &format!("{n} records, {} in flight", t.in_flight),
        );
        if killed.mid_ingest {
            killed_mid_ingest += 1;
            if killed.acks == 0 {
                // The store grows across trials, and each child opens it more slowly: a
                // window shrunk to the first trials' lifetimes came to kill every child
                // before its first acknowledgement (174 of the first 237 kills of a
                // release soak). It grows back until kills land after some again.
                window_ms = (window_ms + window_ms / 4 + 1).min(max_window_ms);
            }
        } else {
            window_ms = window_ms.min((killed.lived_ms / 2).max(2));
        }
        // A child killed before it committed the store's first root (a cold start of a
        // large debug binary can outlast the first deadline) promised nothing, and leaves
        // at most an empty directory that is not a store yet; once a store exists it
        // must stay.
        // A reader before the next writer reads what that writer's recovery will give,
        // through whatever tails the killed one left.
        let read_first = match Graph::open(&store, Options::new().read_only(true)) {
            Ok(r) => {
                tails_loaded += r.stats().unwrap().tails_loaded;
                Some(read(&r.snapshot().unwrap()))
            }
            Err(Error::NotAStore { .. }) => None,
            Err(e) => panic!("seed {seed} trial {trial}: a read-only open failed: {e}"),
        };
        let g = match Graph::open(&store, Options::default()) {
            Err(Error::NotAStore { .. }) if !store_made && killed.acked == 0 => continue,
            r => r.unwrap_or_else(|e| panic!("seed {seed} trial {trial}: reopen failed: {e}")),
        };
        store_made = true;
        acked_trials += (killed.acked > 0) as u64;
        let ctx = format!("seed {seed} trial {trial}");
        let before = model.clone();
        model = verify_trial(&g, &model, &recs, &killed, &t).unwrap_or_else(|why| {
            panic!("{ctx}: {why}\nstore and inputs kept in {0}; replay with EVOGRAPH_CRASH_SEED={seed} EVOGRAPH_CRASH_REPLAY={0}/trials.log", dir.display())
        });
        if let Some(r) = read_first {
            assert!(
                r == read(&g.snapshot().unwrap()),
                "{ctx}: a reader before the writer read another graph than its recovery gives; store and inputs kept in {}",
                dir.display()
            );
        }
        if kept == Kept::History {
            check_past(&g, &past, seed, trial);
            // The last trial's last commit, where this one began.
            let start = past.first().map_or(0, |p| p.0);
            past = g
                .last_commit()
                .map(|c| (c.lsn, model.clone()))
                .into_iter()
                .collect();
            past.extend(middle_commit(&g, start, &before, &recs));
        }
        g.close().unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
    eprintln!("{killed_mid_ingest} of {kills} children were killed mid-ingest, {acked_trials} after an acknowledgement; readers before the next writer loaded {tails_loaded} tails");
    assert!(
        killed_mid_ingest * 2 >= kills,
        "too few kills landed mid-ingest: {killed_mid_ingest}/{kills}"
    );
}

/// The model after the trial, if the recovered store `g` is the model after exactly `k`
/// whole batches of `recs`, with `k` covering every acknowledged record and at most the
/// batches the pipeline may hold past the last acknowledgement (those submitted ahead and
/// one being applied); and `check` passes.
fn verify_trial(
    g: &Graph,
    model: &Model,
    recs: &[Record],
    killed: &kill::Killed,
    t: &Trial,
) -> Result<Model, String> {
    let got = read(&g.snapshot().unwrap());
    let (k, m) = kill::whole_batches(model, recs, BATCH, killed.acked, t.in_flight + 1, &got)
        .map_err(|tried| {
            format!("recovered {} edges, acked {} records, {} in flight; no prefix of whole batches matches: {tried:#?}", got.1.len(), killed.acked, t.in_flight)
        })?;
    let rep = g.check().unwrap();
    if !rep.is_sound() {
        return Err(format!("check after recovery: {:?}", rep.problems));
    }
    if k * BATCH < killed.acked.min(recs.len()) {
        return Err("lost acknowledged records".into());
    }
    Ok(m)
}
