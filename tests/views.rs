//! The fast read views of a snapshot (`FlatView` for one compacted run, `LayeredView` for a
//! few runs read in place, with deletes or without, and with the lists a sweeping kernel
//! reads copied or not) read exactly what the snapshot reads: every `GraphView` method
//! agrees, so every kernel does.

use evograph::algo::kernel::{self, Kernel};
use evograph::snapshot::{Dir, LayeredView};
use evograph::VertexId;
use evograph::{Graph, GraphView, Options, Record, Snapshot};
use proptest::prelude::*;

/// Everything a kernel can ask of a view, in comparable form.
#[derive(Debug, PartialEq)]
struct Dump {
    counts: (usize, u64, bool, bool),
    exists: Vec<bool>,
    degrees: Vec<(usize, usize)>,
    out: Vec<Vec<(VertexId, u64)>>,
    inn: Vec<Vec<VertexId>>,
    sorted: Vec<(Vec<VertexId>, Vec<VertexId>)>,
    has_edge: Vec<bool>,
    /// Whether `find_out` finds a neighbor above the vertex, and `find_in` one below.
    found: Vec<(bool, bool)>,
}

fn dump<G: GraphView>(g: &G) -> Dump {
    dump_asking(g, Lookups::Every)
}

/// Which edges a dump looks up with `has_edge`.
#[derive(Clone, Copy)]
enum Lookups {
    /// Every pair of vertices.
    Every,
    /// From each vertex, to every 61st vertex and to each out-neighbor (graphs of
    /// thousands of vertices, where every pair is too many).
    Sampled,
}

fn dump_asking<G: GraphView>(g: &G, lookups: Lookups) -> Dump {
    let n = g.num_vertices() as VertexId;
    let mut d = Dump {
        counts: (
            g.num_vertices(),
            g.num_edges(),
            g.is_undirected(),
            g.is_weighted(),
        ),
        exists: (0..n).map(|v| g.vertex_exists(v)).collect(),
        degrees: (0..n).map(|v| (g.out_degree(v), g.in_degree(v))).collect(),
        out: Vec::new(),
        inn: Vec::new(),
        sorted: Vec::new(),
        has_edge: Vec::new(),
        found: Vec::new(),
    };
    for v in 0..n {
        let mut o = Vec::new();
        g.for_each_out_weighted(v, |w, x| o.push((w, x.to_bits())));
        let mut plain = Vec::new();
        g.for_each_out(v, |w| plain.push(w));
        assert_eq!(plain, o.iter().map(|p| p.0).collect::<Vec<_>>());
        let folded = g.fold_out(v, Vec::new(), |mut acc, w| {
            acc.push(w);
            acc
        });
        assert_eq!(plain, folded, "fold_out visits what for_each_out does");
        // Neighbor order is unspecified: compare sets.
        o.sort_unstable();
        d.out.push(o);
        let mut i = Vec::new();
        g.for_each_in(v, |w| i.push(w));
        let folded = g.fold_in(v, Vec::new(), |mut acc, w| {
            acc.push(w);
            acc
        });
        assert_eq!(i, folded, "fold_in visits what for_each_in does");
        i.sort_unstable();
        d.inn.push(i);
        let (mut so, mut si) = (Vec::new(), Vec::new());
        g.out_neighbors_sorted(v, &mut so);
        g.in_neighbors_sorted(v, &mut si);
        d.sorted.push((so, si));
        d.found
            .push((g.find_out(v, |w| w > v), g.find_in(v, |w| w < v)));
        match lookups {
            Lookups::Every => d.has_edge.extend((0..n).map(|w| g.has_edge(v, w))),
            Lookups::Sampled => {
                let mut ws: Vec<VertexId> = (0..n).step_by(61).collect();
                ws.extend(d.out[v as usize].iter().map(|p| p.0));
                d.has_edge.extend(ws.iter().map(|&w| g.has_edge(v, w)));
            }
        }
    }
    d
}

fn store(undirected: bool, weighted: bool) -> Graph {
    store_copying(undirected, weighted, None)
}

/// A store whose layered views copy changed lists within `copy` bytes (the memtable
/// budget's when `None`).
fn store_copying(undirected: bool, weighted: bool, copy: Option<usize>) -> Graph {
    Graph::in_memory(
        Options::new()
            .undirected(Some(undirected))
            .weighted(Some(weighted))
            .background(false)
            .threads(2)
            .view_copy_bytes(copy),
    )
    .unwrap()
}

/// Copy budgets for the lists a sweeping kernel reads: none, too little (the runs are
/// read in place), all (copied).
fn copy_budget() -> impl Strategy<Value = usize> {
    prop_oneof![Just(0), Just(64), Just(usize::MAX)]
}

/// The most runs a layered view reads (`snapshot::layered::MAX_RUNS`).
const LAYERED_RUNS: std::ops::RangeInclusive<usize> = 2..=64;

/// The snapshot's layered view after a kernel planned sweeps of both directions, which
/// copies their lists when they fit the `copy` bytes of its store's budget.
fn swept(s: &Snapshot, copy: usize) -> LayeredView<'_> {
    s.plan_sweeps(&[Dir::Out, Dir::In]);
    let l = s.layered().expect("a layered snapshot stays layered");
    match copy {
        0 => assert!(!l.copied(), "no budget, no copy"),
        usize::MAX => assert!(l.copied(), "an unlimited budget copies"),
        _ => {}
    }
    l
}

fn inserts(es: &[(VertexId, VertexId, u8)], weighted: bool) -> Vec<Record> {
    es.iter()
        .map(|&(u, v, w)| {
            if weighted {
                Record::InsertWeighted(u as u64, v as u64, w as f64 / 4.0)
            } else {
                Record::Insert(u as u64, v as u64)
            }
        })
        .collect()
}

/// Base edges compacted, then the delta inserted and left in the memtable; the snapshot
/// seals it into a second run.
fn two_layers(
    n: VertexId,
    base: &[(VertexId, VertexId, u8)],
    delta: &[(VertexId, VertexId, u8)],
    und: bool,
    w: bool,
    copy: usize,
) -> Snapshot {
    let g = store_copying(und, w, Some(copy));
    let verts: Vec<Record> = (0..n as u64).map(Record::InsertVertex).collect();
    g.apply(&verts).unwrap();
    g.apply(&inserts(base, w)).unwrap();
    g.compact().unwrap();
    g.apply(&inserts(delta, w)).unwrap();
    g.snapshot().unwrap()
}

/// Whether the snapshot is a base plus one dense, tombstone-free run, which a layered view
/// reads in place.
fn base_plus_plain_delta(s: &Snapshot) -> bool {
    s.runs().len() == 2
        && s.runs().iter().all(|r| {
            [&r.out]
                .into_iter()
                .chain(r.inn.as_ref())
                .all(|d| d.dense && d.n_tombs() == 0)
        })
}

#[test]
fn a_compacted_base_plus_a_dense_delta_is_layered() {
    // Every vertex gets a new edge after the compaction, so the delta run is dense.
    for (und, w) in [(false, false), (true, false), (false, true), (true, true)] {
        let base: Vec<_> = (0..(20 as VertexId))
            .map(|i| (i, (i * 7 + 3) % 20, 3))
            .collect();
        let delta: Vec<_> = (0..(20 as VertexId))
            .map(|i| (i, (i * 11 + 1) % 20, 5))
            .filter(|e| !base.iter().any(|b| b.0 == e.0 && b.1 == e.1))
            .collect();
        // Read in place, and through the copies a sweeping kernel asks for.
        for copy in [0, usize::MAX] {
            let s = two_layers(20, &base, &delta, und, w, copy);
            assert!(
                base_plus_plain_delta(&s),
                "test setup: expected two dense tombstone-free runs"
            );
            let l = s.layered().expect("layered view of base + dense delta");
            assert!(s.flat().is_none());
            assert_eq!(dump(&l), dump(&s), "undirected {und} weighted {w}");
            let picked = evograph::with_view!(&s, |g| std::any::type_name_of_val(g).to_string());
            assert!(picked.contains("LayeredView"), "with_view! picked {picked}");
            let l = swept(&s, copy);
            assert_eq!(dump(&l), dump(&s), "undirected {und} weighted {w} copied");
        }
    }
}

#[test]
fn runs_flushed_by_ingest_are_read_in_place() {
    // Four batches each flushed into a run of its own, none merged or compacted, as an
    // ingest leaves a store bigger than its memtable budget; the last batch re-inserts
    // some edges with new weights (a tombstone beside an add in one run).
    let n: VertexId = 60;
    let batch = |b: VertexId| -> Vec<(VertexId, VertexId, u8)> {
        (0..n)
            .map(|u| (u, (u * 7 + b * 13 + 1) % n, 1 + b as u8))
            .collect()
    };
    for (und, w) in [(false, false), (true, false), (false, true), (true, true)] {
        let g = Graph::in_memory(
            Options::new()
                .undirected(Some(und))
                .weighted(Some(w))
                .background(false)
                .fanout(16)
                .view_copy_bytes(usize::MAX),
        )
        .unwrap();
        let all: Vec<_> = (0..4).flat_map(batch).collect();
        for b in 0..4 {
            g.apply(&inserts(&batch(b), w)).unwrap();
            g.flush().unwrap();
        }
        let reweighed: Vec<_> = batch(1).iter().map(|&(u, v, _)| (u, v, 7)).collect();
        g.apply(&inserts(&reweighed, w)).unwrap();
        let s = g.snapshot().unwrap();
        assert_eq!(s.runs().len(), 5, "test setup: one run per batch");
        let l = s.layered().expect("a few plain runs are layered");
        let what = format!("undirected {und} weighted {w}");
        assert_eq!(
            l.cut_lists() > 0,
            w,
            "only re-weighed edges kill positions: {what}"
        );
        let picked = evograph::with_view!(&s, |g| std::any::type_name_of_val(g).to_string());
        assert!(picked.contains("LayeredView"), "with_view! picked {picked}");
        let c = store(und, w);
        c.apply(&inserts(&all, w)).unwrap();
        c.apply(&inserts(&reweighed, w)).unwrap();
        c.compact().unwrap();
        let want = dump(&c.snapshot().unwrap());
        assert_eq!(dump(&l), want, "{what}");
        assert_eq!(dump(&s), want, "{what}");
        assert_eq!(dump(&swept(&s, usize::MAX)), want, "{what}, copied");
    }
}

/// Partition runs above level 0 each hold a range of ids, so a vertex reads only the runs
/// whose range holds it (the layered view's chains, by block of 4096 ids), and a level-0
/// run holding few of its range's vertices is read through a bitmap of them. Ranges that
/// cross blocks, blocks that two partitions share, deletes across runs and a sparse
/// newest run are read as the compacted store reads them.
#[test]
fn partition_runs_are_read_by_the_runs_whose_range_holds_a_vertex() {
    let n: VertexId = 12_000;
    let edge = |u: VertexId, k: VertexId| (u, (u * 31 + k * 977 + 5) % n, (1 + k % 7) as u8);
    for (und, w) in [(false, false), (true, true)] {
        let what = format!("undirected {und} weighted {w}");
        let opts = || {
            Options::new()
                .undirected(Some(und))
                .weighted(Some(w))
                .background(false)
                // Flushes (and merges) every ~11,000 updates, as an ingest does.
                .memtable_bytes(1 << 17)
                .fanout(4)
                .partition_bits(13)
                .view_copy_bytes(usize::MAX)
        };
        let g = Graph::in_memory(opts()).unwrap();
        let c = Graph::in_memory(opts()).unwrap();
        let both = |recs: &[Record]| {
            for h in [&g, &c] {
                h.apply(recs).unwrap();
            }
        };
        for k in 0..4 as VertexId {
            both(&inserts(&(0..n).map(|u| edge(u, k)).collect::<Vec<_>>(), w));
        }
        g.flush().unwrap();
        // The newest run: deletes of edges older runs hold and a few inserts, from one
        // vertex in 7 and one in 40 (a run that holds few of its range's vertices).
        let mut last: Vec<Record> = (0..n)
            .step_by(7)
            .map(|u| edge(u, 1))
            .map(|(u, v, _)| Record::Delete(u as u64, v as u64))
            .collect();
        last.extend(inserts(
            &(0..n).step_by(40).map(|u| edge(u, 9)).collect::<Vec<_>>(),
            w,
        ));
        both(&last);
        g.flush().unwrap();
        c.compact().unwrap();
        let s = g.snapshot().unwrap();
        assert!(
            LAYERED_RUNS.contains(&s.runs().len()) && s.runs().iter().any(|r| r.header.level > 0),
            "test setup: partition runs and level-0 runs, layered ({} runs): {what}",
            s.runs().len()
        );
        let want = dump_asking(&c.snapshot().unwrap(), Lookups::Sampled);
        let l = s.layered().expect("a few plain runs are layered");
        assert!(l.cut_lists() > 0, "test setup: deletes cut lists: {what}");
        assert_eq!(dump_asking(&l, Lookups::Sampled), want, "{what}");
        // BFS has the out-degrees counted run by run, which the view then answers from.
        let counted = g.snapshot().unwrap();
        let p = kernel::Params::default();
        assert_eq!(kernel::prepare(&counted, Kernel::GapBfs, &p), "layered");
        let l = counted.layered().expect("still layered");
        assert_eq!(dump_asking(&l, Lookups::Sampled), want, "{what}, counted");
        let copied = swept(&s, usize::MAX);
        assert_eq!(
            dump_asking(&copied, Lookups::Sampled),
            want,
            "{what}, copied"
        );
    }
}

/// Edges as (source, destination, weight in quarters).
type Edges = Vec<(VertexId, VertexId, u8)>;

fn case() -> impl Strategy<Value = (VertexId, Edges, Edges)> {
    ((2 as VertexId)..40).prop_flat_map(|n| {
        let e = move |k| prop::collection::vec((0..n, 0..n, 1u8..8), 0..(n as usize * k));
        (Just(n), e(3), e(2))
    })
}

/// Proptest cases: `base` per run, times `EVOGRAPH_VIEWS_SOAK` (a soak's multiplier).
fn cases(base: u32) -> u32 {
    let soak: u32 = std::env::var("EVOGRAPH_VIEWS_SOAK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    base * soak.max(1)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(32), .. ProptestConfig::default() })]

    #[test]
    fn fast_views_read_what_the_snapshot_reads((n, base, delta) in case(), und in any::<bool>(), w in any::<bool>(), copy in copy_budget()) {
        let s = two_layers(n, &base, &delta, und, w, copy);
        // Re-inserting a weighted edge with a new weight tombstones the old one, which the
        // layered view reads too.
        prop_assert_eq!(s.layered().is_some(), LAYERED_RUNS.contains(&s.runs().len()));
        if let Some(l) = s.layered() {
            prop_assert_eq!(dump(&l), dump(&s));
            prop_assert_eq!(dump(&swept(&s, copy)), dump(&s));
        }
        let g = store(und, w);
        g.apply(&(0..n as u64).map(Record::InsertVertex).collect::<Vec<_>>()).unwrap();
        g.apply(&inserts(&base, w)).unwrap();
        g.apply(&inserts(&delta, w)).unwrap();
        g.compact().unwrap();
        let c = g.snapshot().unwrap();
        let f = c.flat().expect("a compacted store is one dense run");
        prop_assert_eq!(dump(&f), dump(&c));
        // Both stores hold the same graph.
        prop_assert_eq!(dump(&s), dump(&c));
    }
}

/// One update of a step after the compaction.
#[derive(Clone, Copy, Debug)]
enum Op {
    Insert(VertexId, VertexId, u8),
    Delete(VertexId, VertexId),
    DeleteVertex(VertexId),
}

fn op(n: VertexId) -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..n, 0..n, 1u8..8).prop_map(|(u, v, w)| Op::Insert(u, v, w)),
        4 => (0..n, 0..n).prop_map(|(u, v)| Op::Delete(u, v)),
        1 => (0..n).prop_map(Op::DeleteVertex),
    ]
}

fn record(o: Op, weighted: bool) -> Record {
    match o {
        Op::Insert(u, v, w) => inserts(&[(u, v, w)], weighted)[0],
        Op::Delete(u, v) => Record::Delete(u as u64, v as u64),
        Op::DeleteVertex(v) => Record::DeleteVertex(v as u64),
    }
}

/// A store that merges every two runs into partitions of 8 ids, so that a few flushes
/// leave level-0 runs, partition runs and the base side by side.
fn merging_store(undirected: bool, weighted: bool, copy: usize) -> Graph {
    Graph::in_memory(
        Options::new()
            .view_copy_bytes(Some(copy))
            .undirected(Some(undirected))
            .weighted(Some(weighted))
            .background(false)
            .threads(2)
            .fanout(2)
            .partition_bits(3),
    )
    .unwrap()
}

/// How a history of updates is laid out in runs.
#[derive(Clone, Copy)]
enum Shape {
    /// Base edges compacted, then each step applied and flushed into a run, the last step
    /// left in the memtable for the snapshot to seal; layered views copy changed lists
    /// within the budget given.
    Layers(usize),
    /// As ingest leaves a store: base edges and each step flushed into runs of their own
    /// (merged as the policy merges them), the last step left in the memtable; nothing
    /// compacted.
    Flushed(usize),
    /// Everything applied, then fully compacted: the graph the layered view must read.
    Compacted,
}

fn replay(
    n: VertexId,
    base: &[(VertexId, VertexId, u8)],
    steps: &[Vec<Op>],
    (und, w): (bool, bool),
    shape: Shape,
) -> Snapshot {
    let g = match shape {
        Shape::Layers(copy) | Shape::Flushed(copy) => merging_store(und, w, copy),
        Shape::Compacted => store(und, w),
    };
    g.apply(&(0..n as u64).map(Record::InsertVertex).collect::<Vec<_>>())
        .unwrap();
    g.apply(&inserts(base, w)).unwrap();
    match shape {
        Shape::Layers(_) => g.compact().unwrap(),
        Shape::Flushed(_) => g.flush().unwrap(),
        Shape::Compacted => {}
    }
    for (i, step) in steps.iter().enumerate() {
        let recs: Vec<Record> = step.iter().map(|&o| record(o, w)).collect();
        g.apply(&recs).unwrap();
        if !matches!(shape, Shape::Compacted) && i + 1 < steps.len() {
            g.flush().unwrap();
        }
    }
    if let Shape::Compacted = shape {
        g.compact().unwrap();
    }
    g.snapshot().unwrap()
}

/// Random updates over a base in which vertices 0 and 1, when there are more than 64
/// vertices, are hubs linked both ways to every vertex: the layered view must read long
/// base lists cut at many dead positions as exactly as short ones.
fn deleting_case() -> impl Strategy<Value = (VertexId, Edges, Vec<Vec<Op>>)> {
    ((2 as VertexId)..100).prop_flat_map(|n| {
        let base = prop::collection::vec((0..n, 0..n, 1u8..8), 0..(n as usize * 3)).prop_map(
            move |mut es| {
                if n > 64 {
                    for h in 0..2 {
                        es.extend((0..n).flat_map(|x| [(h, x, 3), (x, h, 3)]));
                    }
                }
                es
            },
        );
        let step = prop::collection::vec(op(n), 0..(n as usize * 2));
        (Just(n), base, prop::collection::vec(step, 1..6))
    })
}

#[test]
fn deletes_in_several_newer_runs_are_read_through_the_layered_view() {
    // Half the base edges deleted over three flushed runs and the memtable, with
    // re-inserts between. Vertex 0 is a hub of about 200 neighbors: its base is cut at many
    // dead positions and its additions come from several runs.
    let n: VertexId = 200;
    let mut base: Vec<_> = (0..n)
        .flat_map(|u| (1..5).map(move |k| (u, (u + k * 5) % n, 2)))
        .collect();
    base.extend((5..n).map(|x| (0, x, 1)));
    let steps: Vec<Vec<Op>> = (0..4)
        .map(|s| {
            base.iter()
                .enumerate()
                .filter(|(i, _)| i % 8 == s)
                .flat_map(|(i, &(u, v, _))| {
                    let del = Op::Delete(u, v);
                    if i % 3 == 0 {
                        vec![del, Op::Insert(u, (v + 1) % n, 6)]
                    } else {
                        vec![del]
                    }
                })
                .collect()
        })
        .collect();
    for (und, w) in [(false, false), (true, false), (false, true), (true, true)] {
        let want = dump(&replay(n, &base, &steps, (und, w), Shape::Compacted));
        // Copy budgets: none (the runs read in place, deleted neighbors skipped), too
        // little for the graph (the same), all (a CSR copy).
        let mut cut = Vec::new();
        for copy in [0, 2048, usize::MAX] {
            let s = replay(n, &base, &steps, (und, w), Shape::Layers(copy));
            assert!(
                s.runs().len() > 2,
                "test setup: expected several newer runs"
            );
            let tombs: u64 = s.runs()[1..].iter().map(|r| r.out.n_tombs()).sum();
            assert!(
                tombs > 0,
                "test setup: expected tombstones in the newer runs"
            );
            let l = s
                .layered()
                .expect("a compacted base plus newer runs is layered");
            let what = format!("undirected {und} weighted {w} copy budget {copy}");
            assert_eq!(dump(&l), dump(&s), "{what}");
            assert_eq!(dump(&l), want, "{what}");
            let picked = evograph::with_view!(&s, |g| std::any::type_name_of_val(g).to_string());
            assert!(
                picked.contains("LayeredView"),
                "with_view! picked {picked}, {what}"
            );
            cut.push(l.cut_lists());
            assert_eq!(dump(&swept(&s, copy)), want, "{what}, copied");
        }
        // The lists deleted from are read cut, whatever the budget.
        assert!(cut[0] > 0, "undirected {und} weighted {w}: no budget");
        assert!(cut.iter().all(|&c| c == cut[0]), "{cut:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), .. ProptestConfig::default() })]

    #[test]
    fn layered_views_over_deletes_read_what_the_snapshot_reads((n, base, steps) in deleting_case(), und in any::<bool>(), w in any::<bool>(), copy in copy_budget(), compacted in any::<bool>()) {
        let shape = match compacted {
            true => Shape::Layers(copy),
            false => Shape::Flushed(copy),
        };
        let s = replay(n, &base, &steps, (und, w), shape);
        let want = replay(n, &base, &steps, (und, w), Shape::Compacted);
        prop_assert_eq!(dump(&s), dump(&want));
        prop_assert_eq!(s.layered().is_some(), LAYERED_RUNS.contains(&s.runs().len()));
        if let Some(l) = s.layered() {
            prop_assert_eq!(dump(&l), dump(&s));
            prop_assert_eq!(dump(&swept(&s, copy)), dump(&s));
        }
    }
}
