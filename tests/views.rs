//! The fast read views of a snapshot (`FlatView` for one compacted run, `LayeredView` for a
//! compacted base plus one run of newer edges) read exactly what the snapshot reads: every
//! `GraphView` method agrees, so every kernel does.

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
    first_out_above: Vec<Option<VertexId>>,
}

fn dump<G: GraphView>(g: &G) -> Dump {
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
        first_out_above: Vec::new(),
    };
    for v in 0..n {
        let mut o = Vec::new();
        g.for_each_out_weighted(v, |w, x| o.push((w, x.to_bits())));
        let mut plain = Vec::new();
        g.for_each_out(v, |w| plain.push(w));
        assert_eq!(plain, o.iter().map(|p| p.0).collect::<Vec<_>>());
        d.out.push(o);
        let mut i = Vec::new();
        g.for_each_in(v, |w| i.push(w));
        d.inn.push(i);
        let (mut so, mut si) = (Vec::new(), Vec::new());
        g.out_neighbors_sorted(v, &mut so);
        g.in_neighbors_sorted(v, &mut si);
        d.sorted.push((so, si));
        let mut seen = None;
        g.find_out(v, |w| {
            seen = Some(w);
            w > v
        });
        d.first_out_above.push(seen);
        d.has_edge.extend((0..n).map(|w| g.has_edge(v, w)));
    }
    d
}

fn store(undirected: bool, weighted: bool) -> Graph {
    Graph::in_memory(Options {
        undirected: Some(undirected),
        weighted: Some(weighted),
        background: false,
        threads: 2,
        ..Default::default()
    })
    .unwrap()
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
) -> Snapshot {
    let g = store(und, w);
    let verts: Vec<Record> = (0..n as u64).map(Record::InsertVertex).collect();
    g.apply(&verts).unwrap();
    g.apply(&inserts(base, w)).unwrap();
    g.compact().unwrap();
    g.apply(&inserts(delta, w)).unwrap();
    g.snapshot().unwrap()
}

/// Whether the snapshot has the shape a layered view serves.
fn layerable(s: &Snapshot) -> bool {
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
        let s = two_layers(20, &base, &delta, und, w);
        assert!(
            layerable(&s),
            "test setup: expected two dense tombstone-free runs"
        );
        let l = s.layered().expect("layered view of base + dense delta");
        assert!(s.flat().is_none());
        assert_eq!(dump(&l), dump(&s), "undirected {und} weighted {w}");
        // The macro picks it too.
        let picked = evograph::with_view!(&s, |g| std::any::type_name_of_val(g).to_string());
        assert!(picked.contains("LayeredView"), "with_view! picked {picked}");
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn fast_views_read_what_the_snapshot_reads((n, base, delta) in case(), und in any::<bool>(), w in any::<bool>()) {
        let s = two_layers(n, &base, &delta, und, w);
        // Re-inserting a weighted edge with a new weight tombstones the old one: then no
        // layered view, and the snapshot serves.
        prop_assert_eq!(s.layered().is_some(), layerable(&s));
        if let Some(l) = s.layered() {
            prop_assert_eq!(dump(&l), dump(&s));
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
        let mut a = dump(&s);
        let mut b = dump(&c);
        for d in [&mut a, &mut b] {
            d.out.iter_mut().for_each(|o| o.sort_unstable());
            d.inn.iter_mut().for_each(|o| o.sort_unstable());
            d.first_out_above.clear();
        }
        prop_assert_eq!(a, b);
    }
}
