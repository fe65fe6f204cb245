//! A seal's history against a model: from the state before the memtable, the changes it
//! emits, applied commit by commit, give the graph after every commit, and each of them
//! changes something.

use super::history::{Change, Sealed};
use super::Memtable;
use crate::batch::{id_of, is_del, DEL};
use crate::run::Run;
use crate::types::VertexId;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Edges by (source, destination) (undirected: smaller end first), with their weights.
type Graph = BTreeMap<(VertexId, VertexId), u64>;

const SPACE: VertexId = 40_000;

fn key(s: VertexId, d: VertexId, undirected: bool) -> (VertexId, VertexId) {
    if undirected && d < s {
        (d, s)
    } else {
        (s, d)
    }
}

/// A random commit: edge updates among few vertices (so that edges repeat, go and come
/// back), some on a hub, some with new weights.
fn commit(rng: &mut Xoshiro256PlusPlus, n: usize) -> (Vec<[VertexId; 2]>, Vec<f64>) {
    let mut edges = Vec::with_capacity(n);
    let mut weights = Vec::with_capacity(n);
    for _ in 0..n {
        let s = if rng.random_range(0..4) == 0 {
            7
        } else {
            rng.random_range(0..60)
        };
        // Some ids far apart, so that several blocks of the memtable take part.
        let d = rng.random_range(0..60) * 613 % SPACE;
        let del = rng.random_range(0..3) == 0;
        edges.push([s, if del { d | DEL } else { d }]);
        weights.push(f64::from(rng.random_range(0..3u8)));
    }
    (edges, weights)
}

fn apply_model(g: &mut Graph, edges: &[[VertexId; 2]], weights: &[f64], undirected: bool) {
    for (i, e) in edges.iter().enumerate() {
        let k = key(e[0], id_of(e[1]), undirected);
        match is_del(e[1]) {
            true => g.remove(&k),
            false => g.insert(k, weights.get(i).copied().unwrap_or(0.0).to_bits()),
        };
    }
}

/// Applies one commit's changes (each with its weight) to `g`, checking that each changes
/// something.
fn apply_changes(g: &mut Graph, changes: &[(Change, f64)]) {
    for (c, w) in changes {
        let k = (c.src, id_of(c.dst));
        if c.removes() {
            assert_eq!(
                g.remove(&k),
                Some(w.to_bits()),
                "{c:?} removes an edge that is there"
            );
        } else {
            assert!(
                g.insert(k, w.to_bits()).is_none(),
                "{c:?} adds an edge that is absent"
            );
        }
    }
}

/// The edges of `run`'s out direction (each undirected edge once).
fn edges_of(run: &Run, undirected: bool) -> Graph {
    let mut g = Graph::new();
    let out = &run.out;
    for i in 0..out.n_index() {
        let v = out.vid_at(i);
        let ws = out.wts_at(i);
        for (p, &x) in out.adds_at(i).iter().enumerate() {
            if !undirected || v <= x {
                g.insert((v, x), ws.get(p).copied().unwrap_or(0.0).to_bits());
            }
        }
    }
    g
}

fn check(seed: u64, undirected: bool, weighted: bool) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let w = |ws: &Vec<f64>| if weighted { ws.clone() } else { Vec::new() };
    // The state before the memtable: one older run.
    let (e0, w0) = commit(&mut rng, 300);
    let mut model = Graph::new();
    apply_model(&mut model, &e0, &w(&w0), undirected);
    let mut m0 = Memtable::new(undirected, weighted, 0, SPACE);
    m0.apply_edges(&e0, &w(&w0));
    m0.max_lsn = e0.len() as u64;
    let (older, none) = m0.seal_with_history(&[], 1);
    assert!(none.is_none(), "a memtable keeps no history unless told to");
    let older = vec![Arc::new(older)];
    assert_eq!(edges_of(&older[0], undirected), model);

    let mut m = Memtable::new(undirected, weighted, e0.len() as u64, SPACE).keeping_history(true);
    let mut after = Vec::new();
    let mut lsn = e0.len() as u64;
    for c in 0..25 {
        let n = rng.random_range(1..40);
        let (e, ws) = commit(&mut rng, n);
        m.apply_edges(&e, &w(&ws));
        apply_model(&mut model, &e, &w(&ws), undirected);
        if c % 5 == 3 {
            m.apply_vertex(c as VertexId | DEL);
        }
        lsn += e.len() as u64;
        m.max_lsn = lsn;
        m.end_commit(lsn, 1000 + c as i64, SPACE as u64);
        after.push(model.clone());
    }
    let (_, hist) = m.seal_with_history(&older, 2);
    let hist = hist.expect("a memtable keeping history seals it");
    assert_eq!(
        hist.weights.len(),
        if weighted { hist.edges.len() } else { 0 }
    );
    let weights: Vec<f64> = (0..hist.edges.len()).map(|i| hist.weight(i)).collect();
    let Sealed {
        commits,
        edges,
        vertices,
        ..
    } = hist;
    assert_eq!(commits.len(), 25);
    assert!(commits.windows(2).all(|p| p[0].lsn < p[1].lsn));
    assert_eq!(
        vertices,
        vec![
            (3, 3 | DEL),
            (8, 8 | DEL),
            (13, 13 | DEL),
            (18, 18 | DEL),
            (23, 23 | DEL)
        ]
    );
    let key = |c: &Change| (c.src, id_of(c.dst), c.commit);
    assert!(
        edges.windows(2).all(|p| key(&p[0]) <= key(&p[1])),
        "changes by edge, then commit"
    );
    let mut g = edges_of(&older[0], undirected);
    for (c, want) in after.iter().enumerate() {
        let mine: Vec<(Change, f64)> = (edges.iter().zip(&weights))
            .filter(|x| x.0.commit == c as u32)
            .map(|(&x, &w)| (x, w))
            .collect();
        apply_changes(&mut g, &mine);
        assert_eq!(
            &g, want,
            "after commit {c} (seed {seed}, undirected {undirected}, weighted {weighted})"
        );
    }
}

#[test]
fn a_seal_emits_exactly_the_effective_changes_of_each_commit() {
    for seed in 0..12 {
        for undirected in [false, true] {
            for weighted in [false, true] {
                check(seed, undirected, weighted);
            }
        }
    }
}

/// A memtable keeping history counts, beyond its buffers, room for every change its seal
/// can emit (one per buffered update, with its weight), so that the budget holds the
/// sealed history as well: the seal's changes never take more than was counted.
#[test]
fn a_memtable_keeping_history_counts_the_changes_its_seal_emits() {
    for weighted in [false, true] {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let (e, ws) = commit(&mut rng, 5000);
        let ws = if weighted { ws } else { Vec::new() };
        let mut plain = Memtable::new(false, weighted, 0, SPACE);
        plain.apply_edges(&e, &ws);
        let mut kept = Memtable::new(false, weighted, 0, SPACE).keeping_history(true);
        kept.apply_edges(&e, &ws);
        kept.max_lsn = e.len() as u64;
        kept.end_commit(e.len() as u64, 1, SPACE as u64);
        let counted = kept.bytes() - plain.bytes();
        let (_, hist) = kept.seal_with_history(&[], 1);
        let hist = hist.expect("kept");
        assert!(!hist.edges.is_empty());
        assert!(
            hist.bytes() <= counted,
            "weighted {weighted}: a seal emitted {} bytes of history, {counted} counted",
            hist.bytes()
        );
        let per = std::mem::size_of::<Change>() + if weighted { 8 } else { 0 };
        assert!(
            counted >= e.len() * per,
            "weighted {weighted}: {counted} counted"
        );
    }
}
