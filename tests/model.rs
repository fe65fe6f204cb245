//! Property test: random sequences of updates, snapshots, flushes, compactions and reopens,
//! checked after every step against a plain in-memory model.

mod common;

use common::{assert_matches, read_weights, Model};
use evograph::store::Options;
use evograph::VertexId;
use evograph::{Compression, Durability, Graph, GraphView, Record, Snapshot};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Step {
    Batch(Vec<Record>),
    Snapshot,
    Flush,
    Compact,
    Reopen,
}

fn weighted_record(ids: u64) -> impl Strategy<Value = Record> {
    prop_oneof![
        4 => record(ids),
        4 => (0..ids, 0..ids, prop::sample::select(vec![0.0, 0.5, 1.0, 2.25, 1e9]))
            .prop_map(|(u, v, w)| Record::InsertWeighted(u * 1000 + 7, v * 1000 + 7, w)),
    ]
}

fn weighted_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        10 => prop::collection::vec(weighted_record(10), 1..40).prop_map(Step::Batch),
        2 => Just(Step::Snapshot),
        2 => Just(Step::Flush),
        1 => Just(Step::Compact),
        1 => Just(Step::Reopen),
    ]
}

fn record(ids: u64) -> impl Strategy<Value = Record> {
    prop_oneof![
        8 => (0..ids, 0..ids).prop_map(|(u, v)| Record::Insert(u * 1000 + 7, v * 1000 + 7)),
        3 => (0..ids, 0..ids).prop_map(|(u, v)| Record::Delete(u * 1000 + 7, v * 1000 + 7)),
        1 => (0..ids).prop_map(|v| Record::InsertVertex(v * 1000 + 7)),
        1 => (0..ids).prop_map(|v| Record::DeleteVertex(v * 1000 + 7)),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        10 => prop::collection::vec(record(12), 1..40).prop_map(Step::Batch),
        2 => Just(Step::Snapshot),
        2 => Just(Step::Flush),
        1 => Just(Step::Compact),
        1 => Just(Step::Reopen),
    ]
}

fn opts(undirected: bool, background: bool, durability: Durability) -> Options {
    Options::new()
        .weighted(None)
        // Tiny budgets freeze after every batch: many runs, merges and backpressure.
        .memtable_bytes(if background { 1 } else { 1 << 30 })
        .undirected(Some(undirected))
        .durability(durability)
        .threads(2)
        .fanout(2)
        // Partitions of 4 ids: merges above level 0 rewrite one partition at a time.
        .partition_bits(2)
        .background(background)
        .create(true)
}

fn run(steps: Vec<Step>, undirected: bool, background: bool, durability: Durability) {
    run_with(
        steps,
        undirected,
        background,
        durability,
        false,
        Compression::None,
    )
}

/// The compressed fast path (a compacted packed store read in place) against the general
/// walk over the same runs: lists, degrees, lookups and weights.
fn assert_packed_view_matches(s: &Snapshot, ctx: &str) {
    let Some(p) = s.packed_flat() else { return };
    assert_view_matches(s, &p, ctx);
    let n = s.num_vertices() as VertexId;
    for v in 0..n {
        for w in 0..n {
            assert_eq!(
                s.edge_weight(v, w).map(f64::to_bits),
                p.edge_weight(v, w).map(f64::to_bits),
                "{ctx}: edge_weight({v}, {w})"
            );
        }
    }
}

/// A fast path (`FlatView`, `PackedView`) against the general walk over the same runs:
/// lists, folds, degrees and lookups, each through the view's own override.
fn assert_view_matches<G: GraphView>(s: &Snapshot, p: &G, ctx: &str) {
    let n = s.num_vertices() as VertexId;
    for v in 0..n {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        s.for_each_out_weighted(v, |w, x| a.push((w, x.to_bits())));
        p.for_each_out_weighted(v, |w, x| b.push((w, x.to_bits())));
        assert_eq!(a, b, "{ctx}: out-list of {v}");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        s.in_neighbors_sorted(v, &mut a);
        p.in_neighbors_sorted(v, &mut b);
        assert_eq!(a, b, "{ctx}: in-list of {v}");
        let mut a = s.fold_in(v, Vec::new(), |mut l, u| {
            l.push(u);
            l
        });
        let mut b = p.fold_in(v, Vec::new(), |mut l, u| {
            l.push(u);
            l
        });
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "{ctx}: fold over the in-list of {v}");
        let mix = |c: u64, u: VertexId| {
            c.wrapping_add((u64::from(u) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        };
        assert_eq!(
            s.fold_out(v, 0, mix),
            p.fold_out(v, 0, mix),
            "{ctx}: fold over the out-list of {v}"
        );
        // Every other id, and every third: the lookups a neighbourhood intersection makes.
        for step in [2, 3] {
            let ids: Vec<VertexId> = (0..n).step_by(step).collect();
            let want = ids.iter().filter(|&&w| s.has_edge(v, w)).count();
            assert_eq!(
                p.count_out_among(v, &ids),
                want,
                "{ctx}: count_out_among({v})"
            );
        }
        assert_eq!(s.out_degree(v), p.out_degree(v), "{ctx}: out-degree of {v}");
        assert_eq!(s.in_degree(v), p.in_degree(v), "{ctx}: in-degree of {v}");
        for w in 0..n {
            assert_eq!(
                s.has_edge(v, w),
                p.has_edge(v, w),
                "{ctx}: has_edge({v}, {w})"
            );
        }
    }
}

fn run_with(
    steps: Vec<Step>,
    undirected: bool,
    background: bool,
    durability: Durability,
    weighted: bool,
    compression: Compression,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let opts = || {
        opts(undirected, background, durability)
            .weighted(Some(weighted))
            .compression(Some(compression))
    };
    let mut g = Graph::open(&path, opts()).unwrap();
    let mut model = Model::new(undirected);
    let mut held: Vec<(Snapshot, Model)> = Vec::new();
    for (i, s) in steps.into_iter().enumerate() {
        match s {
            Step::Batch(recs) => {
                g.apply(&recs).unwrap();
                recs.iter().for_each(|r| model.apply(r));
            }
            Step::Snapshot => held.push((g.snapshot().unwrap(), model.clone())),
            Step::Flush => g.flush().unwrap(),
            Step::Compact => g.compact().unwrap(),
            Step::Reopen => {
                g.close().unwrap();
                g = Graph::open(&path, opts()).unwrap();
            }
        }
        let snap = g.snapshot().unwrap();
        assert_matches(&snap, &model, &format!("after step {i}"));
        assert_packed_view_matches(&snap, &format!("after step {i}"));
        if weighted {
            assert_eq!(read_weights(&snap), model.weights, "weights after step {i}");
        }
        for (k, (s, m)) in held.iter().enumerate() {
            assert_matches(s, m, &format!("held snapshot {k} after step {i}"));
        }
    }
    let rep = g.check().unwrap();
    assert!(rep.is_sound(), "check: {:?}", rep.problems);
    g.close().unwrap();
    let g = Graph::open(&path, opts()).unwrap();
    let snap = g.snapshot().unwrap();
    assert_matches(&snap, &model, "after final reopen");
    if compression == Compression::Packed {
        g.compact().unwrap();
        let snap = g.snapshot().unwrap();
        assert!(
            snap.num_edges() == 0 || snap.packed_flat().is_some(),
            "a compacted compressed store reads in place"
        );
        assert_packed_view_matches(&snap, "compacted after reopen");
        assert_matches(&snap, &model, "compacted after reopen");
    } else {
        g.compact().unwrap();
        let snap = g.snapshot().unwrap();
        let flat = snap.flat();
        assert!(
            snap.num_edges() == 0 || flat.is_some(),
            "a compacted store reads in place"
        );
        if let Some(f) = flat {
            assert_view_matches(&snap, &f, "flat, compacted after reopen");
        }
    }
    if weighted {
        assert_eq!(
            read_weights(&snap),
            model.weights,
            "weights after final reopen"
        );
        if let Some(f) = snap.flat() {
            for v in 0..snap.num_vertices() as VertexId {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                snap.for_each_out_weighted(v, |w, x| a.push((w, x.to_bits())));
                f.for_each_out_weighted(v, |w, x| b.push((w, x.to_bits())));
                assert_eq!(a, b, "flat view weights of vertex {v}");
            }
        }
    }
}

/// The same on the memory medium, where reopening is not possible.
fn run_in_memory(steps: Vec<Step>, undirected: bool) {
    let g = Graph::in_memory(opts(undirected, true, Durability::Sync)).unwrap();
    let mut model = Model::new(undirected);
    for (i, s) in steps.into_iter().enumerate() {
        match s {
            Step::Batch(recs) => {
                g.apply(&recs).unwrap();
                recs.iter().for_each(|r| model.apply(r));
            }
            Step::Compact => g.compact().unwrap(),
            _ => g.flush().unwrap(),
        }
        assert_matches(&g.snapshot().unwrap(), &model, &format!("after step {i}"));
    }
    assert!(g.check().unwrap().is_sound());
}

fn durability() -> impl Strategy<Value = Durability> {
    prop_oneof![
        Just(Durability::Sync),
        Just(Durability::Interval(5)),
        Just(Durability::None)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn directed_matches_model(steps in prop::collection::vec(step(), 1..30), d in durability()) {
        run(steps, false, false, d);
    }

    #[test]
    fn undirected_matches_model(steps in prop::collection::vec(step(), 1..30), d in durability()) {
        run(steps, true, false, d);
    }

    #[test]
    fn background_flusher_matches_model(steps in prop::collection::vec(step(), 1..30), d in durability()) {
        run(steps, false, true, d);
    }

    #[test]
    fn weighted_matches_model(steps in prop::collection::vec(weighted_step(), 1..30), u in any::<bool>(), bg in any::<bool>()) {
        run_with(steps, u, bg, Durability::Sync, true, Compression::None);
    }

    #[test]
    fn compressed_matches_model(steps in prop::collection::vec(step(), 1..30), u in any::<bool>(), bg in any::<bool>()) {
        run_with(steps, u, bg, Durability::Sync, false, Compression::Packed);
    }

    #[test]
    fn compressed_weighted_matches_model(steps in prop::collection::vec(weighted_step(), 1..30), u in any::<bool>(), bg in any::<bool>()) {
        run_with(steps, u, bg, Durability::Sync, true, Compression::Packed);
    }

    #[test]
    fn memory_medium_matches_model(steps in prop::collection::vec(step(), 1..30), u in any::<bool>()) {
        run_in_memory(steps, u);
    }
}
