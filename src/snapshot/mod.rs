//! Snapshots: consistent, immutable views of a store at one moment.
//!
//! A snapshot is the list of runs live when it was taken (files and sealed memtables) plus
//! the vertex states of that moment. Ingestion continues while it is read; compaction never
//! changes a run a snapshot holds (it makes new ones), and retired run files are removed only
//! when the last snapshot holding them is dropped.

mod csr;
mod view;

pub use csr::Csr;
pub use view::GraphView;

use crate::run::{Dir, Run};
use crate::types::VertexId;
use std::sync::Arc;

/// A consistent view of the graph; implements [`GraphView`].
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) runs: Arc<[Arc<Run>]>,
    pub(crate) deleted: Arc<Vec<u64>>,
    pub(crate) n: usize,
    pub(crate) undirected: bool,
    pub(crate) externals: Arc<[u64]>,
    pub(crate) edges: u64,
}

impl Snapshot {
    pub(crate) fn new(
        runs: Arc<[Arc<Run>]>,
        deleted: Arc<Vec<u64>>,
        n: usize,
        undirected: bool,
        externals: Arc<[u64]>,
    ) -> Snapshot {
        let edges = runs
            .iter()
            .map(|r| r.out.n_adds() as i64 - r.out.n_tombs() as i64)
            .sum::<i64>()
            .max(0) as u64;
        Snapshot {
            runs,
            deleted,
            n,
            undirected,
            externals,
            edges,
        }
    }

    /// The runs the snapshot reads, oldest first.
    pub fn runs(&self) -> &[Arc<Run>] {
        &self.runs
    }

    /// External id of dense id `v`.
    pub fn external_id(&self, v: VertexId) -> u64 {
        self.externals[v as usize]
    }

    /// External ids indexed by dense id.
    pub fn external_ids(&self) -> &[u64] {
        &self.externals
    }

    /// Number of vertices that exist (the id space minus deleted vertices).
    pub fn live_vertices(&self) -> usize {
        self.n
            - self
                .deleted
                .iter()
                .map(|w| w.count_ones() as usize)
                .sum::<usize>()
    }

    fn degree(&self, d: Dir, v: VertexId) -> usize {
        let mut n = 0i64;
        for r in self.runs.iter() {
            let dd = r.dir(d);
            if let Some(i) = dd.index_of(v) {
                n += dd.adds_at(i).len() as i64 - dd.tombs_at(i).len() as i64;
            }
        }
        n.max(0) as usize
    }

    fn for_each<F: FnMut(VertexId)>(&self, d: Dir, v: VertexId, mut f: F) {
        let mut parts: [(&[u32], &[u32]); 16] = [(&[], &[]); 16];
        let mut k = 0;
        let mut tombs = false;
        let mut overflow: Vec<(&[u32], &[u32])> = Vec::new();
        for r in self.runs.iter() {
            let dd = r.dir(d);
            if let Some(i) = dd.index_of(v) {
                let p = (dd.adds_at(i), dd.tombs_at(i));
                tombs |= !p.1.is_empty();
                if k < parts.len() {
                    parts[k] = p;
                    k += 1;
                } else {
                    overflow.push(p);
                }
            }
        }
        let all: Vec<(&[u32], &[u32])>;
        let parts: &[(&[u32], &[u32])] = if overflow.is_empty() {
            &parts[..k]
        } else {
            all = parts.iter().copied().chain(overflow).collect();
            &all
        };
        if !tombs {
            for (a, _) in parts {
                a.iter().copied().for_each(&mut f);
            }
            return;
        }
        // An add survives unless a newer part tombstones it (a re-add there is reported
        // from that newer part).
        for (i, (a, _)) in parts.iter().enumerate() {
            for &x in a.iter() {
                if !parts[i + 1..]
                    .iter()
                    .any(|(_, t)| t.binary_search(&x).is_ok())
                {
                    f(x);
                }
            }
        }
    }
}

impl GraphView for Snapshot {
    fn num_vertices(&self) -> usize {
        self.n
    }
    fn num_edges(&self) -> u64 {
        self.edges
    }
    fn is_undirected(&self) -> bool {
        self.undirected
    }
    fn vertex_exists(&self, v: VertexId) -> bool {
        (v as usize) < self.n
            && self
                .deleted
                .get(v as usize / 64)
                .is_none_or(|w| w >> (v % 64) & 1 == 0)
    }
    fn out_degree(&self, v: VertexId) -> usize {
        self.degree(Dir::Out, v)
    }
    fn in_degree(&self, v: VertexId) -> usize {
        self.degree(Dir::In, v)
    }
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
        self.for_each(Dir::Out, v, f)
    }
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
        self.for_each(Dir::In, v, f)
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.has_dir_edge(Dir::Out, u, v)
    }
}

impl Snapshot {
    /// Whether `v` is in `u`'s adjacency in direction `d`.
    pub(crate) fn has_dir_edge(&self, dir: Dir, u: VertexId, v: VertexId) -> bool {
        for r in self.runs.iter().rev() {
            let d = r.dir(dir);
            if let Some(i) = d.index_of(u) {
                if d.tombs_at(i).binary_search(&v).is_ok() {
                    return false;
                }
                if d.adds_at(i).binary_search(&v).is_ok() {
                    return true;
                }
            }
        }
        false
    }
}
