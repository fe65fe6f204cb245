//! GAP kernels on random graphs: each result passes its GAPBS-style verifier, on a plain
//! CSR and on store snapshots that are one compacted run, several runs with unflushed
//! updates, and one taken while another thread keeps inserting.

use evograph::algo::gap::{bc, bfs, cc, pr, sssp, tc};
use evograph::snapshot::Csr;
use evograph::VertexId;
use evograph::{Graph, GraphView, Options, Record, Snapshot};
use proptest::prelude::*;

fn check_all<G: GraphView>(g: &G, what: &str) -> (Vec<i64>, u64) {
    let n = g.num_vertices();
    let mut depths = Vec::new();
    for s in [(0 as VertexId), (n / 2) as VertexId] {
        if (s as usize) < n {
            let p = bfs::bfs(g, s);
            bfs::verify(g, s, &p).unwrap_or_else(|e| panic!("{what}: bfs from {s}: {e}"));
            depths.extend(p.iter().map(|&x| (x >= 0) as i64));
        }
    }
    let (scores, iters) = pr::pagerank(g, 0.85, 1e-6, 100);
    if iters < 100 {
        pr::verify(g, &scores, 0.85, 1e-5).unwrap_or_else(|e| panic!("{what}: pr: {e}"));
    }
    let comp = cc::afforest(g);
    cc::verify(g, &comp).unwrap_or_else(|e| panic!("{what}: cc: {e}"));
    let sources: Vec<VertexId> = (0..n as VertexId).step_by((n / 3).max(1)).take(3).collect();
    let b = bc::brandes(g, &sources);
    bc::verify(g, &sources, &b).unwrap_or_else(|e| panic!("{what}: bc: {e}"));
    let t = tc::ordered_count(g);
    tc::verify(g, t).unwrap_or_else(|e| panic!("{what}: tc: {e}"));
    // Unweighted graphs take sssp's hop-count path; any bucket width gives the same.
    for &s in &sources {
        for delta in [0.3, 1.0, 2.5] {
            let d = sssp::delta_stepping(g, s, delta);
            sssp::verify(g, s, &d)
                .unwrap_or_else(|e| panic!("{what}: sssp from {s}, delta {delta}: {e}"));
        }
    }
    (depths, t)
}

type Edges = Vec<(VertexId, VertexId)>;

fn edges_strategy() -> impl Strategy<Value = (usize, Edges, Edges)> {
    (2usize..60).prop_flat_map(|n| {
        let e = prop::collection::vec((0..n as VertexId, 0..n as VertexId), 0..n * 4);
        let d = prop::collection::vec((0..n as VertexId, 0..n as VertexId), 0..n);
        (Just(n), e, d)
    })
}

fn store(undirected: bool) -> Graph {
    Graph::in_memory(
        Options::new()
            .undirected(Some(undirected))
            .background(false)
            .threads(2),
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, .. ProptestConfig::default() })]

    #[test]
    fn gap_kernels_verify_on_csr_and_snapshots((n, edges, dels) in edges_strategy(), undirected in any::<bool>()) {
        // Dense ids equal external ids when every vertex is inserted first, in order.
        let g = store(undirected);
        let verts: Vec<Record> = (0..n as u64).map(Record::InsertVertex).collect();
        g.apply(&verts).unwrap();
        let half = edges.len() / 2;
        let recs = |es: &[(VertexId, VertexId)]| es.iter().map(|&(u, v)| Record::Insert(u as u64, v as u64)).collect::<Vec<_>>();
        g.apply(&recs(&edges[..half])).unwrap();
        g.flush().unwrap();
        g.apply(&recs(&edges[half..])).unwrap();
        let dels: Vec<Record> = dels.iter().map(|&(u, v)| Record::Delete(u as u64, v as u64)).collect();
        g.apply(&dels).unwrap();
        let live: Snapshot = g.snapshot().unwrap();
        let (d_live, t_live) = check_all(&live, "multi-run snapshot");
        g.compact().unwrap();
        let compacted = g.snapshot().unwrap();
        let (d_comp, t_comp) = check_all(&compacted, "compacted snapshot");
        // A compacted store is one dense run: its flat CSR view gives the same answers.
        let flat = compacted.flat();
        prop_assert!(flat.is_some() || compacted.num_edges() == 0);
        if let Some(f) = flat {
            let (d_flat, t_flat) = check_all(&f, "flat view");
            prop_assert_eq!(&d_flat, &d_comp);
            prop_assert_eq!(t_flat, t_comp);
        }
        // The same edges in a plain CSR.
        let mut es = Vec::new();
        for v in 0..compacted.num_vertices() as VertexId {
            compacted.for_each_out(v, |w| es.push((v, w)));
        }
        let csr = Csr::from_edges(n, &es, false);
        let (d_csr, t_csr) = check_all(&csr, "csr");
        prop_assert_eq!(&d_live, &d_comp);
        prop_assert_eq!(&d_comp, &d_csr);
        prop_assert_eq!(t_live, t_comp);
        prop_assert_eq!(t_comp, t_csr);
    }
}

/// Graphalytics results in comparable form (floats rounded to 1e-9 relative).
fn graphalytics_results<G: GraphView>(g: &G) -> Vec<Vec<i64>> {
    use evograph::algo::graphalytics as ga;
    let round = |x: f64| (x * 1e9).round() as i64;
    let labels: Vec<u64> = (0..g.num_vertices() as u64).collect();
    vec![
        ga::bfs(g, 0),
        ga::pagerank(g, 0.85, 10).into_iter().map(round).collect(),
        ga::wcc(g).into_iter().map(|x| x as i64).collect(),
        ga::cdlp(g, 5, &labels)
            .into_iter()
            .map(|x| x as i64)
            .collect(),
        ga::lcc(g).into_iter().map(round).collect(),
    ]
}

#[test]
fn snapshot_taken_while_inserting_stays_consistent() {
    let g = std::sync::Arc::new(store(false));
    let first: Vec<Record> = (0..2000u64)
        .map(|i| Record::Insert(i % 300, (i * 7) % 300))
        .collect();
    g.apply(&first).unwrap();
    let writer = {
        let g = g.clone();
        std::thread::spawn(move || {
            for round in 0..50u64 {
                let recs: Vec<Record> = (0..200u64)
                    .map(|i| Record::Insert((i * 13 + round) % 400, (i * 31 + round * 7) % 400))
                    .collect();
                g.apply(&recs).unwrap();
            }
        })
    };
    for _ in 0..5 {
        let s = g.snapshot().unwrap();
        let (d1, t1) = check_all(&s, "snapshot under ingest");
        let ga1 = graphalytics_results(&s);
        // The snapshot does not move while ingestion goes on...
        let (d2, t2) = check_all(&s, "same snapshot again");
        assert_eq!(d1, d2);
        assert_eq!(t1, t2);
        assert_eq!(ga1, graphalytics_results(&s));
        // ...and the Graphalytics kernels agree with a plain CSR of its edges.
        let mut es = Vec::new();
        for v in 0..s.num_vertices() as VertexId {
            s.for_each_out(v, |w| es.push((v, w)));
        }
        let csr = Csr::from_edges(s.num_vertices(), &es, false);
        assert_eq!(ga1, graphalytics_results(&csr));
    }
    writer.join().unwrap();
}

#[test]
fn verifiers_reject_wrong_answers() {
    // Two triangles sharing vertex 2, plus an isolated vertex 5.
    let es = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)];
    let g = Csr::from_edges(6, &es, true);
    let mut p = bfs::bfs(&g, 0);
    assert!(bfs::verify(&g, 0, &p).is_ok());
    p[3] = 0; // 0 is not adjacent to 3
    assert!(bfs::verify(&g, 0, &p).is_err());
    p[3] = -1; // 3 is reachable
    assert!(bfs::verify(&g, 0, &p).is_err());
    let mut c = cc::afforest(&g);
    assert!(cc::verify(&g, &c).is_ok());
    c[5] = c[0]; // 5 is not connected to 0
    assert!(cc::verify(&g, &c).is_err());
    let t = tc::ordered_count(&g);
    assert_eq!(t, 2);
    assert!(tc::verify(&g, t + 1).is_err());
    let (mut s, _) = pr::pagerank(&g, 0.85, 1e-9, 100);
    assert!(pr::verify(&g, &s, 0.85, 1e-6).is_ok());
    s[0] += 0.01;
    assert!(pr::verify(&g, &s, 0.85, 1e-6).is_err());
    let mut b = bc::brandes(&g, &[0, 3]);
    assert!(bc::verify(&g, &[0, 3], &b).is_ok());
    assert!(
        (b[2] - 1.0).abs() < 1e-12,
        "the cut vertex has the top score"
    );
    b[1] += 0.1;
    assert!(bc::verify(&g, &[0, 3], &b).is_err());
}

/// GAPBS credits a source with its own dependency (Brandes' paper does not): on the path
/// 0 -> 1 -> 2 from source 0, dependencies are 2, 1, 0, so normalized scores 1, 0.5, 0
/// (the textbook gives 0, 1, 0).
#[test]
fn bc_credits_the_source_as_gapbs_does() {
    let g = Csr::from_edges(3, &[(0, 1), (1, 2)], false);
    let b = bc::brandes(&g, &[0]);
    assert_eq!(b, vec![1.0, 0.5, 0.0]);
    assert!(bc::verify(&g, &[0], &b).is_ok());
    assert!(
        bc::verify(&g, &[0], &[0.0, 1.0, 0.0]).is_err(),
        "the textbook convention"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    /// Delta-stepping agrees with Dijkstra on weighted stores: several runs with weight
    /// updates and deletes, compacted, and through the flat view; any bucket width.
    #[test]
    fn sssp_matches_dijkstra_on_weighted_snapshots(
        (n, edges, dels) in edges_strategy(),
        weights in prop::collection::vec(prop::sample::select(vec![0.0, 0.25, 1.0, 3.5, 100.0]), 0..240),
        undirected in any::<bool>(),
        delta in prop::sample::select(vec![0.1, 1.0, 50.0]),
    ) {
        let g = Graph::in_memory(Options::new()
            .undirected(Some(undirected))
            .weighted(Some(true))
            .background(false)
            .threads(2))
        .unwrap();
        let verts: Vec<Record> = (0..n as u64).map(Record::InsertVertex).collect();
        g.apply(&verts).unwrap();
        let recs: Vec<Record> = edges
            .iter()
            .enumerate()
            .map(|(i, &(u, v))| Record::InsertWeighted(u as u64, v as u64, weights.get(i).copied().unwrap_or(2.0)))
            .collect();
        let half = recs.len() / 2;
        g.apply(&recs[..half]).unwrap();
        g.flush().unwrap();
        g.apply(&recs[half..]).unwrap();
        // Re-insert a few edges with new weights, and delete some.
        let again: Vec<Record> = edges.iter().take(5).map(|&(u, v)| Record::InsertWeighted(u as u64, v as u64, 0.5)).collect();
        g.apply(&again).unwrap();
        g.apply(&dels.iter().map(|&(u, v)| Record::Delete(u as u64, v as u64)).collect::<Vec<_>>()).unwrap();
        let live = g.snapshot().unwrap();
        for s in [(0 as VertexId), (n / 2) as VertexId] {
            let d = sssp::delta_stepping(&live, s, delta);
            sssp::verify(&live, s, &d).map_err(|e| TestCaseError::fail(format!("live: {e}")))?;
        }
        g.compact().unwrap();
        let comp = g.snapshot().unwrap();
        let f = comp.flat();
        prop_assert!(f.is_some() || comp.num_edges() == 0);
        for s in [(0 as VertexId), (n / 2) as VertexId] {
            let d = sssp::delta_stepping(&comp, s, delta);
            sssp::verify(&comp, s, &d).map_err(|e| TestCaseError::fail(format!("compacted: {e}")))?;
            if let Some(f) = &f {
                let df = sssp::delta_stepping(f, s, delta);
                prop_assert_eq!(&df, &d);
            }
        }
    }
}

/// A distance whose bucket `floor(d / delta)` is b while `delta * b` rounds above d (0.7
/// and 0.01: bucket 70, and 0.01 * 70 = 0.7000000000000001) is relaxed in its bucket, not
/// taken for a stale entry and skipped, which left everything behind it unreached.
#[test]
fn sssp_relaxes_a_vertex_whose_bucket_bound_rounds_above_it() {
    let g = Graph::in_memory(
        Options::new()
            .undirected(Some(false))
            .weighted(Some(true))
            .background(false)
            .threads(2),
    )
    .unwrap();
    let verts: Vec<Record> = (0..3).map(Record::InsertVertex).collect();
    g.apply(&verts).unwrap();
    g.apply(&[
        Record::InsertWeighted(0, 1, 0.7),
        Record::InsertWeighted(1, 2, 1.0),
    ])
    .unwrap();
    let s = g.snapshot().unwrap();
    let d = sssp::delta_stepping(&s, 0, 0.01);
    assert_eq!(d, vec![0.0, 0.7, 1.7]);
    sssp::verify(&s, 0, &d).unwrap();
}
