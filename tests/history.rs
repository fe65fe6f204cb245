//! History against a model: random sequences of batches, snapshots, flushes, compactions,
//! reopens and retention changes; afterwards, the snapshot as of every commit still kept
//! equals the model as of that commit, a point outside the window is refused naming it, and
//! a diff between any two kept commits, applied to the model of the first, gives the second.
//!
//! `EVOGRAPH_HISTORY_SOAK=N` runs N times the cases.

mod common;

use common::{assert_matches, read_weights, Model};
use evograph::history::History;
use evograph::store::{Options, Point};
use evograph::{Durability, Graph, Record, RunVersions};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Step {
    /// A batch, at the time of the one before or (`true`) a second later: an `@ T` block
    /// longer than a batch is several commits with one time.
    Batch(Vec<Record>, bool),
    Snapshot,
    Flush,
    Compact,
    Reopen,
}

fn record(ids: u64, weighted: bool) -> impl Strategy<Value = Record> {
    let e = move |u: u64| u * 1000 + 7;
    prop_oneof![
        8 => (0..ids, 0..ids, prop::sample::select(vec![0.5, 1.0, 2.0])).prop_map(move |(u, v, w)| {
            if weighted { Record::InsertWeighted(e(u), e(v), w) } else { Record::Insert(e(u), e(v)) }
        }),
        4 => (0..ids, 0..ids).prop_map(move |(u, v)| Record::Delete(e(u), e(v))),
        1 => (0..ids).prop_map(move |v| Record::InsertVertex(e(v))),
        1 => (0..ids).prop_map(move |v| Record::DeleteVertex(e(v))),
    ]
}

fn step(weighted: bool) -> impl Strategy<Value = Step> {
    prop_oneof![
        10 => (prop::collection::vec(record(10, weighted), 1..25), any::<bool>())
            .prop_map(|(r, t)| Step::Batch(r, t)),
        2 => Just(Step::Snapshot),
        2 => Just(Step::Flush),
        1 => Just(Step::Compact),
        1 => Just(Step::Reopen),
    ]
}

fn opts(undirected: bool, weighted: bool, background: bool) -> Options {
    Options::new()
        .weighted(Some(weighted))
        .memtable_bytes(if background { 1 } else { 1 << 30 })
        .undirected(Some(undirected))
        .durability(Durability::Sync)
        .threads(2)
        .fanout(2)
        .partition_bits(2)
        .background(background)
        .history(History::All)
        .create(true)
}

/// Every kept commit's snapshot against its model, diffs between pairs of them.
fn check_history(g: &Graph, models: &[(u64, Model)], keep: usize, ctx: &str) {
    let kept = &models[models.len() - keep.min(models.len())..];
    for (lsn, m) in kept {
        let (s, at) = g.snapshot_at(Point::Lsn(*lsn)).unwrap();
        assert!(
            at.lsn <= *lsn,
            "{ctx}: commit {} named for LSN {lsn}",
            at.lsn
        );
        assert_matches(&s, m, &format!("{ctx}: as of LSN {lsn}"));
        if g.is_weighted() {
            assert_eq!(
                read_weights(&s),
                m.weights,
                "{ctx}: weights as of LSN {lsn}"
            );
        }
    }
    for (i, (a, ma)) in kept.iter().enumerate() {
        let (b, mb) = &kept[(i * 7 + 3) % kept.len()];
        let d = g.diff(Point::Lsn(*a), Point::Lsn(*b)).unwrap();
        let mut m = ma.clone();
        d.records.iter().for_each(|r| m.apply(r));
        assert_eq!(
            (&m.vertices, &m.edges),
            (&mb.vertices, &mb.edges),
            "{ctx}: diff {a} -> {b}"
        );
        if g.is_weighted() {
            assert_eq!(m.weights, mb.weights, "{ctx}: diff {a} -> {b} weights");
        }
    }
    check_lifetimes(g, models, ctx);
    check_windows(g, kept, ctx);
    let log = g.log().unwrap();
    let listed: Vec<u64> = log.commits.iter().map(|c| c.0.lsn).collect();
    let mut want: Vec<u64> = kept.iter().map(|k| k.0).collect();
    want.dedup();
    assert!(
        listed.ends_with(&want) || want.is_empty(),
        "{ctx}: log lists {listed:?}, kept {want:?}"
    );
}

/// Every vertex's and every possible edge's lifetime against the models' states from the
/// oldest commit kept on (`models` holds every commit since the store was made).
fn check_lifetimes(g: &Graph, models: &[(u64, Model)], ctx: &str) {
    let mut states: Vec<(u64, &Model)> = models.iter().map(|(l, m)| (*l, m)).collect();
    states.dedup_by_key(|s| s.0);
    let empty = Model::new(g.is_undirected());
    let ids: Vec<u64> = (0..10).map(|u| u * 1000 + 7).collect();
    let dense = |x: u64| g.dense_id(x).unwrap();
    for &u in &ids {
        let life = match dense(u) {
            Some(du) => g.vertex_history(du).unwrap(),
            None => continue,
        };
        let want = expected(&states, &empty, life.from.lsn, |m| m.vertices.contains(&u));
        let got = (life.existed_before, events(&life));
        assert_eq!(got, want, "{ctx}: lifetime of vertex {u}");
        for &v in &ids {
            let (Some(du), Some(dv)) = (dense(u), dense(v)) else {
                continue;
            };
            let life = g.edge_history(du, dv).unwrap();
            let want = expected(&states, &empty, life.from.lsn, |m| {
                m.edges.contains(&(u, v))
            });
            let got = (life.existed_before, events(&life));
            assert_eq!(got, want, "{ctx}: lifetime of edge ({u}, {v})");
        }
    }
}

/// Windows between pairs of kept commits against the union of the models at the start and
/// at every moment before the end (commits, the last of each time).
fn check_windows(g: &Graph, kept: &[(u64, Model)], ctx: &str) {
    let mut states: Vec<(u64, &Model)> = kept.iter().map(|(l, m)| (*l, m)).collect();
    states.dedup_by_key(|s| s.0);
    let times: std::collections::BTreeMap<u64, i64> = (g.log().unwrap().commits.iter())
        .map(|(c, _)| (c.lsn, c.unix_nanos))
        .collect();
    let n = states.len();
    for i in 0..n {
        for j in [i + 1, i + 2, n - 1, n] {
            if j <= i || j > n {
                continue;
            }
            // The end: the LSN of commit j (commits below it count), or past the last.
            let end = states.get(j).map_or(u64::MAX, |s| s.0);
            let last_of_time = |k: usize| {
                let next = states.get(k + 1).map(|s| times[&s.0]);
                next != Some(times[&states[k].0])
            };
            let mut want = states[i].1.clone();
            for k in i + 1..j {
                if last_of_time(k) {
                    let m = states[k].1;
                    want.vertices.extend(&m.vertices);
                    want.edges.extend(&m.edges);
                    for (e, w) in &m.weights {
                        if !states[i].1.edges.contains(e) {
                            want.weights.insert(*e, *w);
                        }
                    }
                }
            }
            let (s, span) = g
                .snapshot_window(Point::Lsn(states[i].0), Point::Lsn(end))
                .unwrap();
            assert_eq!(span.start.lsn, states[i].0, "{ctx}");
            let what = format!("{ctx}: window {}..{end}", states[i].0);
            assert_matches(&s, &want, &what);
            if g.is_weighted() {
                assert_eq!(read_weights(&s), want.weights, "{what}: weights");
            }
        }
    }
}

/// (LSN, added) of each event of a lifetime.
fn events(l: &evograph::store::Lifetime) -> Vec<(u64, bool)> {
    use evograph::store::LifeOp;
    l.events
        .iter()
        .map(|e| (e.commit.lsn, e.op == LifeOp::Add))
        .collect()
}

/// Whether `present` held before the commit at `from` (the empty store's state before the
/// first), and the commits from it on where it changed.
fn expected(
    states: &[(u64, &Model)],
    empty: &Model,
    from: u64,
    present: impl Fn(&Model) -> bool,
) -> (bool, Vec<(u64, bool)>) {
    let i = states
        .iter()
        .position(|s| s.0 == from)
        .expect("the oldest commit kept is a commit");
    let mut was = present(if i == 0 { empty } else { states[i - 1].1 });
    let before = was;
    let mut out = Vec::new();
    for &(lsn, m) in &states[i..] {
        let now = present(m);
        if now != was {
            out.push((lsn, now));
            was = now;
        }
    }
    (before, out)
}

/// One random case; `flush_versions`: runs get versions at every flush, not only from
/// compactions.
fn run(steps: Vec<Step>, undirected: bool, weighted: bool, background: bool, flush_versions: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let versions = match flush_versions {
        true => RunVersions::Flush,
        false => RunVersions::Compact,
    };
    let o = || opts(undirected, weighted, background).run_versions(versions);
    let mut g = Graph::open(&path, o()).unwrap();
    let mut model = Model::new(undirected);
    // The model as of every batch's ticket (a batch that changes nothing names the commit
    // before it, whose model is the same).
    let mut models: Vec<(u64, Model)> = Vec::new();
    // 2001-09-09: every commit's time, before the wall clock's of the commits after them.
    let mut time: i64 = 1_000_000_000 * 1_000_000_000;
    for s in steps {
        match s {
            Step::Batch(recs, later) => {
                time += if later { 1_000_000_000 } else { 0 };
                let t = g.submit_at(&recs, time).unwrap();
                g.wait(t).unwrap();
                recs.iter().for_each(|r| model.apply(r));
                if t.lsn() > 0 {
                    models.push((t.lsn(), model.clone()));
                }
            }
            Step::Snapshot => drop(g.snapshot().unwrap()),
            Step::Flush => g.flush().unwrap(),
            Step::Compact => g.compact().unwrap(),
            Step::Reopen => {
                g.close().unwrap();
                g = Graph::open(&path, o()).unwrap();
            }
        }
    }
    check_history(&g, &models, usize::MAX, "all kept");
    // Keep the last 3 commits: older ones are refused, naming the window.
    g.set_history(History::Commits(3)).unwrap();
    let t = g.submit(&[Record::Insert(1, 2)]).unwrap();
    g.wait(t).unwrap();
    model.apply(&Record::Insert(1, 2));
    models.push((t.lsn(), model.clone()));
    g.flush().unwrap();
    models.dedup_by_key(|m| m.0);
    check_history(&g, &models, 3, "the last 3 kept");
    if let Some((old, _)) = models.iter().rev().nth(3) {
        let e = match g.snapshot_at(Point::Lsn(*old)) {
            Ok(_) => panic!("LSN {old} is outside a window of 3 commits"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("outside the history kept"), "{e}");
    }
    g.close().unwrap();
    let g = Graph::open(&path, o()).unwrap();
    assert_eq!(g.history(), History::Commits(3));
    assert!(g.check().unwrap().is_sound());
    // Widening brings none of what was let go back: the 3 kept, and those after.
    g.set_history(History::All).unwrap();
    let t = g.submit(&[Record::Insert(3, 4)]).unwrap();
    g.wait(t).unwrap();
    model.apply(&Record::Insert(3, 4));
    models.push((t.lsn(), model.clone()));
    check_history(&g, &models, 4, "3 kept and one after, history all again");
    if let Some((old, _)) = models.iter().rev().nth(4) {
        let e = match g.snapshot_at(Point::Lsn(*old)) {
            Ok(_) => panic!("LSN {old} was let go, and shown after the window widened"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("outside the history kept"), "{e}");
    }
    assert_eq!(g.history_bytes().unwrap().let_go, 0, "freed by config");
    assert!(g.check().unwrap().is_sound());
    // Turning history off lets go of every segment, including the one the same flush
    // writes from a memtable that still kept history: no point is shown any more, and
    // the refusal says why (it once found a segment listed whose file was gone).
    let t = g.submit(&[Record::Insert(2, 1)]).unwrap();
    g.wait(t).unwrap();
    g.set_history(History::None).unwrap();
    for (lsn, _) in &models {
        let e = match g.snapshot_at(Point::Lsn(*lsn)) {
            Ok(_) => panic!("LSN {lsn} shown by a store that keeps no history"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("keeps no history"), "{e}");
    }
    assert_eq!(g.log().unwrap().segments, 0);
    assert!(g.check().unwrap().is_sound());
}

fn cases() -> u32 {
    let soak: u32 = std::env::var("EVOGRAPH_HISTORY_SOAK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    24 * soak.max(1)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), .. ProptestConfig::default() })]

    #[test]
    fn history_matches_the_model_at_every_commit(
        steps in prop::collection::vec(step(false), 1..25),
        u in any::<bool>(),
        bg in any::<bool>(),
        fv in any::<bool>(),
    ) {
        run(steps, u, false, bg, fv);
    }

    #[test]
    fn weighted_history_matches_the_model_at_every_commit(
        steps in prop::collection::vec(step(true), 1..25),
        u in any::<bool>(),
        bg in any::<bool>(),
        fv in any::<bool>(),
    ) {
        run(steps, u, true, bg, fv);
    }
}

/// Snapshots that seal every batch into a DRAM run, flushed together: one run file, one
/// history segment, and every commit still readable as of itself.
#[test]
fn dram_runs_sealed_by_snapshots_flush_as_one_segment() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let g = Graph::open(&path, opts(false, false, false)).unwrap();
    let mut model = Model::new(false);
    let mut models = Vec::new();
    let mut rng = common::Rng(7);
    for _ in 0..40 {
        let recs: Vec<Record> = (0..8)
            .map(|_| match rng.below(10) {
                0 => Record::DeleteVertex(rng.below(30)),
                1..=3 => Record::Delete(rng.below(30), rng.below(30)),
                _ => Record::Insert(rng.below(30), rng.below(30)),
            })
            .collect();
        let t = g.submit(&recs).unwrap();
        g.wait(t).unwrap();
        recs.iter().for_each(|r| model.apply(r));
        models.push((t.lsn(), model.clone()));
        drop(g.snapshot().unwrap());
    }
    g.flush().unwrap();
    assert_eq!(g.log().unwrap().segments, 1, "one segment for the flush");
    check_history(&g, &models, usize::MAX, "DRAM runs flushed as one");
    g.close().unwrap();
    let g = Graph::open(&path, opts(false, false, false)).unwrap();
    assert!(g.check().unwrap().is_sound());
    check_history(&g, &models, usize::MAX, "reopened");
    let runs = std::fs::read_dir(&path)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".run")
        })
        .count();
    assert!(runs <= 2, "{runs} run files for one flush");
    g.close().unwrap();
}
