//! Standing kernels against recomputes: random histories of batches (edge and vertex
//! inserts and deletes, weight changes), flushes, compactions and reopens; after every
//! batch each maintained kernel equals a full recompute on the snapshot of the same commit:
//! exactly for wcc, bfs and sssp, and for pr-tol within the tolerance of the fixed point,
//! as the recompute is. The changes each step reports, applied to the values before it,
//! give the values after it.
//!
//! `EVOGRAPH_STANDING_SOAK=N` runs N times the cases.

use evograph::algo::kernel::{self, Kernel, Params, Values};
use evograph::algo::pr_tolerance::pagerank_to;
use evograph::history::History;
use evograph::standing::{self, Maintainer, Value};
use evograph::store::Options;
use evograph::{Durability, Graph, GraphView, Record, Snapshot, VertexId};
use proptest::prelude::*;
use std::time::Duration;

const SOURCE: u64 = 7;
const TOLERANCE: f64 = 1e-6;

#[derive(Clone, Debug)]
enum Step {
    Batch(Vec<Record>),
    Flush,
    Compact,
    Reopen,
}

/// The external id of the `u`th vertex a history names.
fn ext(u: u64) -> u64 {
    u * 1000 + 7
}

fn edge_record(ids: u64, weighted: bool) -> impl Strategy<Value = Record> {
    let e = ext;
    prop_oneof![
        8 => (0..ids, 0..ids, prop::sample::select(vec![0.5, 1.0, 2.0])).prop_map(move |(u, v, w)| {
            if weighted { Record::InsertWeighted(e(u), e(v), w) } else { Record::Insert(e(u), e(v)) }
        }),
        5 => (0..ids, 0..ids).prop_map(move |(u, v)| Record::Delete(e(u), e(v))),
    ]
}

fn record(ids: u64, weighted: bool) -> impl Strategy<Value = Record> {
    prop_oneof![
        13 => edge_record(ids, weighted),
        1 => (0..ids).prop_map(|v| Record::InsertVertex(ext(v))),
        1 => (0..ids).prop_map(|v| Record::DeleteVertex(ext(v))),
    ]
}

/// Batches of edge updates alone and batches with vertex inserts and deletes: both kinds are
/// patched over the graph a maintainer reads, unless new names (string keys) make it seal.
fn step(weighted: bool) -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => prop::collection::vec(record(12, weighted), 1..20).prop_map(Step::Batch),
        8 => prop::collection::vec(edge_record(12, weighted), 1..20).prop_map(Step::Batch),
        2 => Just(Step::Flush),
        1 => Just(Step::Compact),
        1 => Just(Step::Reopen),
    ]
}

fn opts(undirected: bool, weighted: bool, background: bool, history: bool) -> Options {
    Options::new()
        .weighted(Some(weighted))
        .memtable_bytes(if background { 1 } else { 1 << 30 })
        .undirected(Some(undirected))
        .durability(Durability::Sync)
        .threads(2)
        .fanout(2)
        .partition_bits(2)
        .background(background)
        .history(if history { History::All } else { History::None })
        .create(true)
}

fn maintainers(s: &Snapshot, g: &Graph) -> Vec<(Maintainer, Vec<Option<Value>>)> {
    let src = g.dense_id(SOURCE).unwrap().unwrap();
    let mut p = Params::default();
    p.tolerance = TOLERANCE;
    p.source = Some(src);
    standing::KERNELS
        .iter()
        .map(|&k| (Maintainer::new(k, &p).unwrap(), Vec::new()))
        .filter(|_| s.vertex_exists(src))
        .collect()
}

/// The graph a maintainer reads (a snapshot with edges patched over it), or the snapshot
/// it seals the patch into, is `s`'s.
fn same_graph<G: GraphView>(p: &G, s: &Snapshot, ctx: &str) {
    assert_eq!(p.num_vertices(), s.num_vertices(), "{ctx}: vertices");
    assert_eq!(p.num_edges(), s.num_edges(), "{ctx}: edges");
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for v in 0..s.num_vertices() as VertexId {
        assert_eq!(p.vertex_exists(v), s.vertex_exists(v), "{ctx}: vertex {v}");
        p.for_each_out_weighted(v, |x, w| a.push((x, w.to_bits())));
        s.for_each_out_weighted(v, |x, w| b.push((x, w.to_bits())));
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "{ctx}: out-lists of {v}");
        p.for_each_in(v, |x| a.push((x, 0)));
        s.for_each_in(v, |x| b.push((x, 0)));
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "{ctx}: in-lists of {v}");
        assert_eq!(p.out_degree(v), s.out_degree(v), "{ctx}: out-degree of {v}");
        assert_eq!(p.in_degree(v), s.in_degree(v), "{ctx}: in-degree of {v}");
        a.clear();
        b.clear();
    }
}

/// The maintained values of `m` against a recompute on `s`.
fn check(m: &Maintainer, s: &Snapshot, ctx: &str) {
    let got = m.values();
    let n = s.num_vertices();
    assert_eq!(got.len(), n, "{ctx}: {} values", m.kernel());
    for v in 0..n as VertexId {
        assert_eq!(
            got[v as usize].is_some(),
            s.vertex_exists(v),
            "{ctx}: vertex {v} exists"
        );
    }
    let mut p = Params::default();
    p.tolerance = TOLERANCE;
    p.source = s
        .external_ids()
        .iter()
        .position(|&x| x == SOURCE)
        .map(|i| i as VertexId);
    let source_gone = p.source.is_none_or(|v| !s.vertex_exists(v));
    let live = |v: usize| s.vertex_exists(v as VertexId);
    match m.kernel() {
        Kernel::PrTol => check_rank(&got, s, ctx),
        k if k.needs_source() && source_gone => {
            // No source: nothing is reached.
            for (v, x) in got.iter().enumerate().filter(|(v, _)| live(*v)) {
                let unreached = match x.unwrap() {
                    Value::Int(d) => d == evograph::algo::graphalytics::UNREACHABLE,
                    Value::Float(d) => d.is_infinite(),
                    Value::Vertex(_) => false,
                };
                assert!(
                    unreached,
                    "{ctx}: {} reached {v} without a source",
                    m.kernel()
                );
            }
        }
        k => {
            if !k.needs_source() {
                p.source = None;
            }
            let want = kernel::run(s, k, &p).unwrap().values;
            for v in (0..n).filter(|&v| live(v)) {
                let x = got[v].unwrap();
                let ok = match (&want, x) {
                    (Values::Int(w), Value::Vertex(l)) => w[v] == s.external_id(l) as i64,
                    (Values::Int(w), Value::Int(d)) => w[v] == d,
                    (Values::Float(w), Value::Float(d)) => w[v].to_bits() == d.to_bits(),
                    _ => false,
                };
                assert!(
                    ok,
                    "{ctx}: {k} of vertex {v}: maintained {x:?}, recomputed {want:?}"
                );
            }
        }
    }
}

/// PageRank within the tolerance of the fixed point, as a recompute is.
fn check_rank(got: &[Option<Value>], s: &Snapshot, ctx: &str) {
    let exact = pagerank_to(s, 0.85, 1e-13).scores;
    let fresh = pagerank_to(s, 0.85, TOLERANCE).scores;
    let score = |x: &Option<Value>| match x {
        Some(Value::Float(f)) => *f,
        None => 0.0,
        other => panic!("{other:?}"),
    };
    let err: f64 = got
        .iter()
        .zip(&exact)
        .map(|(x, e)| (score(x) - e).abs())
        .sum();
    let fresh_err: f64 = fresh.iter().zip(&exact).map(|(x, e)| (x - e).abs()).sum();
    assert!(err <= TOLERANCE, "{ctx}: pr-tol {err} from the fixed point");
    assert!(
        fresh_err <= TOLERANCE,
        "{ctx}: a recompute {fresh_err} from it"
    );
}

/// Steps each maintainer and checks what it reports against a reader's copy of the values
/// rebuilt from the reports (`view`): exactly the values, or for pr-tol within the
/// tolerance of them.
/// A step recomputes only where the store cannot hold the changes: after a reopen of a
/// store without history (`may_recompute`).
fn step_all(
    ms: &mut [(Maintainer, Vec<Option<Value>>)],
    g: &Graph,
    may_recompute: bool,
    ctx: &str,
) {
    for (m, view) in ms.iter_mut() {
        let Some(step) = m.step(g).unwrap() else {
            continue;
        };
        assert!(
            step.recomputed != Some(standing::Recomputed::ChangesGone) || may_recompute,
            "{ctx}: {} recomputed",
            m.kernel()
        );
        if step.initial {
            *view = m.values();
        }
        view.resize(m.values().len(), None);
        for c in &step.changes {
            assert_eq!(view[c.vertex as usize], c.old, "{ctx}: old value reported");
            view[c.vertex as usize] = c.new;
        }
        let now = m.values();
        match m.kernel() {
            Kernel::PrTol => {
                let f = |x: &Option<Value>| match x {
                    Some(Value::Float(f)) => *f,
                    _ => 0.0,
                };
                let off: f64 = view
                    .iter()
                    .zip(&now)
                    .map(|(a, b)| (f(a) - f(b)).abs())
                    .sum();
                assert!(off <= TOLERANCE, "{ctx}: reports leave pr-tol {off} off");
            }
            k => assert_eq!(*view, now, "{ctx}: {k} changes rebuild the values"),
        }
        // The steps reflect the newest commit: the store's snapshot is the graph they are of.
        let s = g.snapshot().unwrap();
        assert_eq!(Some(m.lsn()), g.last_commit().map(|c| c.lsn), "{ctx}");
        same_graph(m.graph().unwrap(), &s, ctx);
        let sealed = m.snapshot().unwrap().unwrap();
        same_graph(&sealed, &s, ctx);
        assert_eq!(sealed.external_ids(), s.external_ids(), "{ctx}: ids");
        check(m, &s, ctx);
    }
}

fn run(steps: Vec<Step>, undirected: bool, weighted: bool, background: bool, history: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let o = || opts(undirected, weighted, background, history);
    let mut g = Graph::open(&path, o()).unwrap();
    let every: Vec<Record> = (0..12).map(|u| Record::InsertVertex(ext(u))).collect();
    g.apply(&every).unwrap();
    let mut ms = maintainers(&g.snapshot().unwrap(), &g);
    step_all(&mut ms, &g, false, "start");
    for (i, s) in steps.into_iter().enumerate() {
        let ctx = format!("step {i} ({s:?})");
        let may_recompute = matches!(s, Step::Reopen) && !history;
        match s {
            Step::Batch(recs) => {
                let t = g.submit(&recs).unwrap();
                g.wait(t).unwrap();
            }
            Step::Flush => g.flush().unwrap(),
            Step::Compact => g.compact().unwrap(),
            Step::Reopen => {
                g.close().unwrap();
                g = Graph::open(&path, o()).unwrap();
            }
        }
        step_all(&mut ms, &g, may_recompute, &ctx);
    }
}

fn cases() -> u32 {
    let soak: u32 = std::env::var("EVOGRAPH_STANDING_SOAK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    16 * soak.max(1)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), .. ProptestConfig::default() })]

    #[test]
    fn standing_kernels_equal_recomputes_after_every_batch(
        steps in prop::collection::vec(step(false), 1..30),
        u in any::<bool>(),
        bg in any::<bool>(),
        h in any::<bool>(),
    ) {
        run(steps, u, false, bg, h);
    }

    #[test]
    fn weighted_standing_kernels_equal_recomputes_after_every_batch(
        steps in prop::collection::vec(step(true), 1..30),
        u in any::<bool>(),
        bg in any::<bool>(),
        h in any::<bool>(),
    ) {
        run(steps, u, true, bg, h);
    }
}

/// The handle: kept current by its thread, waited for by ticket, changes since a commit.
#[test]
fn a_standing_handle_follows_the_writer() {
    let g = Graph::in_memory(Options::new().threads(2)).unwrap();
    g.insert_edges(&[(1, 2), (3, 4)]).unwrap();
    let h = standing::maintain(&g, Kernel::Wcc, &Params::default()).unwrap();
    let start = h.lsn();
    let label = |h: &standing::Standing, x: u64| {
        let (vals, s, _) = h.values().unwrap();
        let v = g.dense_id(x).unwrap().unwrap();
        match vals[v as usize] {
            Some(Value::Vertex(l)) => s.external_id(l),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(label(&h, 4), 3);
    let t = g.submit(&[Record::Insert(2, 3)]).unwrap();
    g.wait(t).unwrap();
    assert!(h.wait(t.lsn(), Duration::from_secs(20)).unwrap());
    assert_eq!(label(&h, 4), 1);
    let since = h.changes_since(start).unwrap();
    let moved: Vec<u64> = since
        .iter()
        .map(|c| h.values().unwrap().1.external_id(c.vertex))
        .collect();
    assert_eq!(moved, vec![3, 4]);
    let t = g.submit(&[Record::Delete(2, 3)]).unwrap();
    assert!(h.wait(t.lsn(), Duration::from_secs(20)).unwrap());
    assert_eq!(label(&h, 4), 3);
    assert!(
        h.changes_since(start).unwrap().is_empty(),
        "back where it started"
    );
    assert_eq!(h.recomputes(), 0);
    h.stop().unwrap();
}

/// Batches are patched over the graph the maintainers read until the patch is full, when
/// a step seals and patching starts over, those that delete vertices or bring them back
/// too (a stream touching vertices once sealed a run per batch); the values equal a
/// recompute after every batch either way.
#[test]
fn edge_batches_are_patched_until_the_patch_is_full() {
    use rand::{Rng, SeedableRng};
    for undirected in [false, true] {
        let g = Graph::in_memory(Options::new().threads(2).undirected(Some(undirected))).unwrap();
        let n = 3000u64;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(50);
        // A ring, so that every vertex exists, and enough edges that a batch is not large.
        let mut edges: Vec<(u64, u64)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
        edges.extend((0..40_000).map(|_| (rng.random_range(0..n), rng.random_range(0..n))));
        g.insert_edges(&edges).unwrap();
        let mut p = Params::default();
        p.source = g.dense_id(SOURCE).unwrap();
        let mut ms: Vec<Maintainer> = [Kernel::Wcc, Kernel::Bfs, Kernel::Sssp]
            .iter()
            .map(|&k| Maintainer::new(k, &p).unwrap())
            .collect();
        ms.iter_mut()
            .for_each(|m| assert!(m.step(&g).unwrap().unwrap().initial));
        let (mut patched, mut sealed, mut vertices_patched) = (0, 0, 0);
        for round in 0..30 {
            let mut batch: Vec<Record> = (0..1500)
                .map(|_| {
                    let (u, v) = (rng.random_range(0..n), rng.random_range(0..n));
                    match rng.random_bool(0.3) {
                        true => Record::Delete(u, v),
                        false => Record::Insert(u, v),
                    }
                })
                .collect();
            let touches_vertices = round % 3 == 1;
            if touches_vertices {
                // Deletes (with their edges), and vertices deleted before brought back.
                let gone: Vec<Record> = (0..4)
                    .map(|_| Record::DeleteVertex(rng.random_range(1..n)))
                    .collect();
                let back = (0..2).map(|_| Record::InsertVertex(rng.random_range(1..n)));
                batch.extend(gone.into_iter().chain(back.collect::<Vec<_>>()));
            }
            g.wait(g.submit(&batch).unwrap()).unwrap();
            let s = g.snapshot().unwrap();
            for m in &mut ms {
                let step = m.step(&g).unwrap().unwrap();
                assert_eq!(step.recomputed, None);
                match step.patched {
                    true => patched += 1,
                    false => sealed += 1,
                }
                vertices_patched += (step.patched && touches_vertices) as usize;
                let ctx = format!("round {round}, undirected {undirected}");
                same_graph(m.graph().unwrap(), &s, &ctx);
                check(m, &s, &ctx);
            }
        }
        assert!(
            patched > 3 * sealed && sealed > 0 && vertices_patched > 20,
            "{patched} patched ({vertices_patched} touching vertices), {sealed} sealed"
        );
    }
}

/// Stepping to one past commit after another (what a rolling computation does) patches
/// the net changes between them over the graph instead of rebuilding each past graph,
/// vertices deleted and new ones included, until the patch is full; the values equal a
/// recompute on the graph as of each commit, and the patched graph is that graph.
#[test]
fn steps_to_later_past_commits_patch_their_net_changes() {
    use evograph::store::Point;
    use rand::{Rng, SeedableRng};
    for undirected in [false, true] {
        let opts = Options::new()
            .threads(2)
            .undirected(Some(undirected))
            .history(History::All);
        let g = Graph::in_memory(opts).unwrap();
        let n = 2000u64;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(65);
        let mut edges: Vec<(u64, u64)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
        edges.extend((0..20_000).map(|_| (rng.random_range(0..n), rng.random_range(0..n))));
        g.insert_edges(&edges).unwrap();
        let mut lsns = vec![g.last_commit().unwrap().lsn];
        for round in 0..30u64 {
            let mut batch: Vec<Record> = (0..300)
                .map(|_| {
                    // New vertices too: ids past the ring's.
                    let (u, v) = (rng.random_range(0..n + 40), rng.random_range(0..n));
                    match rng.random_bool(0.3) {
                        true => Record::Delete(u, v),
                        false => Record::Insert(u, v),
                    }
                })
                .collect();
            if round % 4 == 1 {
                batch.push(Record::DeleteVertex(rng.random_range(1..n)));
            }
            g.apply(&batch).unwrap();
            lsns.push(g.last_commit().unwrap().lsn);
        }
        let mut p = Params::default();
        p.source = g.dense_id(SOURCE).unwrap();
        for k in [Kernel::Wcc, Kernel::Bfs, Kernel::Sssp] {
            let mut m = Maintainer::new(k, &p).unwrap();
            let (mut patched, mut sealed) = (0, 0);
            for (i, &lsn) in lsns.iter().enumerate().step_by(2) {
                let step = m.step_upto(&g, Some(Point::Lsn(lsn))).unwrap().unwrap();
                assert_eq!(step.lsn, lsn);
                match (i, step.patched) {
                    (0, _) => assert!(step.initial),
                    (_, true) => patched += 1,
                    (_, false) => sealed += 1,
                }
                let (s, _) = g.snapshot_at(Point::Lsn(lsn)).unwrap();
                let ctx = format!(
                    "{k} at commit {i}, undirected {undirected}, patched {}, n {} vs {}",
                    step.patched,
                    m.graph().unwrap().num_vertices(),
                    s.num_vertices()
                );
                same_graph(m.graph().unwrap(), &s, &ctx);
                check(&m, &s, &ctx);
            }
            assert!(patched >= 12, "{k}: {patched} patched, {sealed} sealed");
        }
        steps_over_masked_points_seal_over_plain_runs(&g, &lsns, &p, undirected);
    }
}

/// Once compacted, the store's run has versions: a step that seals reads a past commit
/// through the run's mask, later steps patch over it, and a snapshot of the patched graph
/// (sealed over the same commit's plain runs) is the graph of the step's commit. pr-tol,
/// which copies the mask's in-lists for its sweeps, stays within its tolerance.
fn steps_over_masked_points_seal_over_plain_runs(
    g: &Graph,
    lsns: &[u64],
    p: &Params,
    undirected: bool,
) {
    use evograph::store::Point;
    g.compact().unwrap();
    let mut p = p.clone();
    p.tolerance = TOLERANCE;
    for k in [Kernel::Wcc, Kernel::PrTol] {
        let mut m = Maintainer::new(k, &p).unwrap();
        let mut over_mask = 0;
        for (i, &lsn) in lsns.iter().enumerate().step_by(2) {
            let step = m.step_upto(g, Some(Point::Lsn(lsn))).unwrap().unwrap();
            let (s, _) = g.snapshot_at(Point::Lsn(lsn)).unwrap();
            let ctx = format!("{k} over a mask at commit {i}, undirected {undirected}");
            let graph = m.graph().unwrap();
            same_graph(graph, &s, &ctx);
            match k {
                Kernel::PrTol => check_rank(&m.values(), &s, &ctx),
                _ => check(&m, &s, &ctx),
            }
            if step.patched && graph.base().point().is_some() {
                over_mask += 1;
                same_graph(&m.snapshot().unwrap().unwrap(), &s, &ctx);
            }
        }
        if k == Kernel::Wcc {
            assert!(over_mask >= 5, "{over_mask} patched steps over a mask");
        }
    }
}
