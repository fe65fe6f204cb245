//! One store through many ingest sessions, each killed (SIGKILL) at a random point after
//! its first acknowledgement: the way a long-lived store meets crashes in use. Every
//! session appends a stream of edge inserts and deletes and vertex inserts and deletes over
//! a fixed set of ids, with all history kept and a 1 MiB memtable, so flushes and merges
//! run all the time and the graph stays near one size while its history grows. After each
//! kill the reopened store must be the model after some prefix of whole batches covering
//! every acknowledged record, `check` must pass, and the commits that earlier sessions
//! ended at must still read as they did.
//!
//! `EVOGRAPH_KILL_SESSIONS` sets the number of sessions (default 12, the CI form; the
//! soak runs 3,000), `EVOGRAPH_CRASH_SEED` the seed, `EVOGRAPH_CRASH_REPLAY` a recorded
//! run's `trials.log` to replay (see `common/kill.rs`), `EVOGRAPH_KILL_MEDIUM` the medium
//! (`file` by default, or `pmem`).

mod common;

use common::kill::{self, KillAt, Replay};
use common::{evograph, parse_export, read, Model, Rng};
use evograph::store::Point;
use evograph::{Graph, KeyKind, Options, Record};
use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::time::Instant;

const BATCH: usize = 256;
/// Vertex ids are drawn below this.
const IDS: u64 = 20_000;
/// Edges the stream keeps the graph near: above it, deletes outnumber inserts.
const STEADY_EDGES: usize = 30_000;
/// Most earlier commits read again after the last kill.
const SWEEP: usize = 200;

/// `n` updates over ids below [`IDS`]: edge inserts and deletes of edges in `live`
/// (inserts win below [`STEADY_EDGES`], deletes above), 1 % vertex inserts and 1 % vertex
/// deletes. `live` holds the edges inserted and not deleted by an edge delete.
fn session_stream(rng: &mut Rng, live: &mut Vec<(u64, u64)>, n: usize) -> Vec<Record> {
    let delete_pct = if live.len() < STEADY_EDGES { 35 } else { 60 };
    (0..n)
        .map(|_| match rng.below(100) {
            0 => Record::InsertVertex(rng.below(IDS)),
            1 => Record::DeleteVertex(rng.below(IDS)),
            r if r < 2 + delete_pct && !live.is_empty() => {
                let (u, v) = live.swap_remove(rng.below(live.len() as u64) as usize);
                Record::Delete(u, v)
            }
            _ => {
                let e = (rng.below(IDS), rng.below(IDS));
                live.push(e);
                Record::Insert(e.0, e.1)
            }
        })
        .collect()
}

/// What a session's last commit held: its LSN and digests of the whole graph and of its
/// edges alone (what `export` prints).
struct Past {
    session: u64,
    lsn: u64,
    graph: u64,
    edges: u64,
}

fn digest<T: Hash>(x: &T) -> u64 {
    let mut h = DefaultHasher::new();
    x.hash(&mut h);
    h.finish()
}

fn past(session: u64, lsn: u64, m: &Model) -> Past {
    Past {
        session,
        lsn,
        graph: digest(&(&m.vertices, &m.edges)),
        edges: digest(&m.edges),
    }
}

/// The graph as of `p`'s commit still reads as it did, through the library, or through
/// `evograph export --at LSN` when `cli`.
fn check_past(g: &Graph, store: &Path, p: &Past, cli: bool, ctx: &str) {
    if cli {
        let out = evograph([
            "export".as_ref(),
            store.as_os_str(),
            "--at".as_ref(),
            p.lsn.to_string().as_ref(),
        ]);
        assert!(
            out.status.success(),
            "{ctx}: export --at {}: {}",
            p.lsn,
            String::from_utf8_lossy(&out.stderr)
        );
        let edges: BTreeSet<(u64, u64)> = parse_export(&out.stdout);
        assert_eq!(
            digest(&edges),
            p.edges,
            "{ctx}: session {}'s commit {} exports otherwise now",
            p.session,
            p.lsn
        );
        return;
    }
    let (s, at) = g.snapshot_at(Point::Lsn(p.lsn)).unwrap_or_else(|e| {
        panic!(
            "{ctx}: the graph as of session {}'s commit {}: {e}",
            p.session, p.lsn
        )
    });
    assert_eq!(
        at.lsn, p.lsn,
        "{ctx}: session {}'s commit {} is gone",
        p.session, p.lsn
    );
    let (vertices, edges) = read(&s);
    assert_eq!(
        digest(&(&vertices, &edges)),
        p.graph,
        "{ctx}: session {}'s commit {} changed",
        p.session,
        p.lsn
    );
}

/// The earlier sessions whose commits are read again after a kill: the last one and one
/// drawn at random, and after the last kill up to [`SWEEP`] spread evenly over all of them.
/// A graph as of a commit is built today by undoing every later change, so reading all of
/// them after every kill would grow with the square of the sessions.
fn pasts_to_check(rng: &mut Rng, session: u64, sessions: u64, pasts: &[Past]) -> Vec<usize> {
    if pasts.is_empty() {
        return Vec::new();
    }
    if session + 1 == sessions {
        let step = pasts.len().div_ceil(SWEEP);
        return (0..pasts.len()).rev().step_by(step).collect();
    }
    vec![pasts.len() - 1, rng.below(pasts.len() as u64) as usize]
}

fn spawn(store: &Path, input: &Path, medium: &str, in_flight: usize) -> std::process::Child {
    kill::ingest_command(store, input, BATCH, in_flight, medium)
        .args(["--history", "all", "--partition-bits", "12"])
        .spawn()
        .unwrap()
}

#[test]
fn one_store_keeps_every_acknowledged_record_and_its_past_through_a_kill_in_every_session() {
    let seed = kill::seed(0x109e_11fe);
    let sessions = kill::env_u64("EVOGRAPH_KILL_SESSIONS").unwrap_or(12);
    let medium = std::env::var("EVOGRAPH_KILL_MEDIUM").unwrap_or_else(|_| "file".into());
    let replay = Replay::from_env();
    eprintln!(
        "kill sessions ({medium}): seed {seed}, {sessions} sessions (EVOGRAPH_CRASH_SEED replays)"
    );
    let mut rng = Rng(seed | 1);
    // Kept when a session fails (a panic leaves it behind), removed at the end otherwise.
    let dir = tempfile::tempdir().unwrap().keep();
    let store = dir.join("store");
    let mut log = std::fs::File::create(dir.join("trials.log")).unwrap();
    let (mut model, mut live, mut pasts) = (Model::new(false), Vec::new(), Vec::<Past>::new());
    // Deadlines after the first acknowledgement are drawn below this; it shrinks to the
    // time children that finished before their kill ran on after their first one.
    let mut window_ms = 300;
    let (mut mid_ingest, mut flushed_or_merged) = (0u64, 0u64);
    for session in 0..sessions {
        let ctx = format!(
            "seed {seed} session {session} (store kept in {0}; replay with EVOGRAPH_CRASH_SEED={seed} EVOGRAPH_CRASH_REPLAY={0}/trials.log EVOGRAPH_KILL_SESSIONS={1} EVOGRAPH_KILL_MEDIUM={medium})",
            dir.display(),
            session + 1
        );
        let n = 2000 + rng.below(12_000) as usize;
        let recs = session_stream(&mut rng, &mut live, n);
        let input = dir.join("session.ops");
        kill::write_ops(&recs, &input, KeyKind::U64);
        let in_flight = 1 + rng.below(4) as usize;
        let drawn = KillAt {
            first: 1,
            acks: 1 + rng.below((n / BATCH) as u64 + 1),
            ms: kill::draw_ms(&mut rng, window_ms),
        };
        let at = Replay::point(&replay, session, drawn);
        let runs_before = count_runs(&store);
        let killed = kill::kill(
            spawn(&store, &input, &medium, in_flight),
            Instant::now(),
            at,
        );
        assert!(
            killed.acks > 0 || killed.mid_ingest,
            "{ctx}: the child ended without an acknowledgement: {:?}",
            killed.status
        );
        mid_ingest += killed.mid_ingest as u64;
        kill::record(
            &mut log,
            session,
            &killed,
            &format!("{n} records, {in_flight} in flight"),
        );

        // Runs the child wrote before its kill (recovery's own flush comes after).
        flushed_or_merged += (count_runs(&store) != runs_before) as u64;
        // Mostly as a reader, which recovers nothing into runs, so that the memtable fills
        // across sessions and children flush and merge; every sixteenth time as a writer,
        // whose recovery flushes what the log held.
        let opts = Options::default().read_only(session % 16 != 15);
        let g = Graph::open(&store, opts).unwrap_or_else(|e| panic!("{ctx}: reopen: {e}"));
        let got = read(&g.snapshot().unwrap());
        let (k, m) = kill::whole_batches(&model, &recs, BATCH, killed.acked, in_flight + 1, &got)
            .unwrap_or_else(|tried| {
                panic!(
                    "{ctx}: acked {} records; no prefix of whole batches matches: {tried:#?}",
                    killed.acked
                )
            });
        assert!(
            k * BATCH >= killed.acked.min(n),
            "{ctx}: lost acknowledged records"
        );
        let rep = g.check().unwrap();
        assert!(
            rep.is_sound(),
            "{ctx}: check after recovery: {:?}",
            rep.problems
        );
        for (i, p) in pasts_to_check(&mut rng, session, sessions, &pasts)
            .into_iter()
            .enumerate()
        {
            check_past(&g, &store, &pasts[p], i == 1 && session % 10 == 0, &ctx);
        }
        let lsn = g.last_commit().map_or(0, |c| c.lsn);
        g.close().unwrap();
        if pasts.last().is_none_or(|p| p.lsn != lsn) {
            pasts.push(past(session, lsn, &m));
        }
        model = m;
        if !killed.mid_ingest {
            window_ms = window_ms.min((killed.lived_ms / 2).max(2));
        }
    }
    eprintln!("{mid_ingest} of {sessions} sessions were killed mid-ingest; {flushed_or_merged} changed the store's runs");
    assert!(
        mid_ingest * 2 >= sessions,
        "too few kills landed mid-ingest: {mid_ingest}/{sessions}"
    );
    assert!(
        flushed_or_merged * 12 >= sessions,
        "too few sessions flushed: {flushed_or_merged}/{sessions} (kept in {})",
        dir.display()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// How many run files the store holds (a flush or a merge changes it).
fn count_runs(store: &Path) -> usize {
    std::fs::read_dir(store).map_or(0, |d| {
        d.filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("run-"))
            .count()
    })
}
