//! Helpers shared by the integration tests: a plain model of the graph and comparisons.
#![allow(dead_code)]

use evograph::{GraphView, Record, Snapshot};
use std::collections::BTreeSet;

/// The trivial reference: sets of existing vertices and directed edges (external ids).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    pub undirected: bool,
    pub vertices: BTreeSet<u64>,
    pub edges: BTreeSet<(u64, u64)>,
}

impl Model {
    pub fn new(undirected: bool) -> Self {
        Model {
            undirected,
            ..Default::default()
        }
    }

    pub fn apply(&mut self, r: &Record) {
        match *r {
            Record::Insert(u, v) => {
                self.vertices.insert(u);
                self.vertices.insert(v);
                self.edges.insert((u, v));
                if self.undirected {
                    self.edges.insert((v, u));
                }
            }
            Record::Delete(u, v) => {
                self.edges.remove(&(u, v));
                if self.undirected {
                    self.edges.remove(&(v, u));
                }
            }
            Record::InsertVertex(x) => {
                self.vertices.insert(x);
            }
            Record::DeleteVertex(x) => {
                if self.vertices.remove(&x) {
                    self.edges.retain(|&(a, b)| a != x && b != x);
                }
            }
        }
    }
}

/// Reads vertices and edges out of a snapshot, in external ids.
pub fn read(s: &Snapshot) -> (BTreeSet<u64>, BTreeSet<(u64, u64)>) {
    let mut vs = BTreeSet::new();
    let mut es = BTreeSet::new();
    for v in 0..s.num_vertices() as u32 {
        if s.vertex_exists(v) {
            vs.insert(s.external_id(v));
        }
        s.for_each_out(v, |w| {
            es.insert((s.external_id(v), s.external_id(w)));
        });
    }
    (vs, es)
}

/// Asserts that the snapshot shows exactly the model, including degrees, in-adjacency and lookups.
pub fn assert_matches(s: &Snapshot, m: &Model, ctx: &str) {
    let (vs, es) = read(s);
    assert_eq!(vs, m.vertices, "{ctx}: vertices differ");
    assert_eq!(es, m.edges, "{ctx}: edges differ");
    assert_eq!(s.num_edges(), m.edges.len() as u64, "{ctx}: edge count");
    for v in 0..s.num_vertices() as u32 {
        let x = s.external_id(v);
        let out: Vec<u64> = m.edges.iter().filter(|e| e.0 == x).map(|e| e.1).collect();
        let inn: Vec<u64> = m.edges.iter().filter(|e| e.1 == x).map(|e| e.0).collect();
        assert_eq!(s.out_degree(v), out.len(), "{ctx}: out-degree of {x}");
        assert_eq!(s.in_degree(v), inn.len(), "{ctx}: in-degree of {x}");
        let mut got_in = Vec::new();
        s.for_each_in(v, |w| got_in.push(s.external_id(w)));
        got_in.sort_unstable();
        let mut want_in = inn.clone();
        want_in.sort_unstable();
        assert_eq!(got_in, want_in, "{ctx}: in-neighbors of {x}");
        for w in 0..s.num_vertices() as u32 {
            let y = s.external_id(w);
            assert_eq!(
                s.has_edge(v, w),
                m.edges.contains(&(x, y)),
                "{ctx}: has_edge({x}, {y})"
            );
        }
    }
}
