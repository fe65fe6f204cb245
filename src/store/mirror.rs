//! `check`'s mirror test: the in-adjacency holds exactly the reversed out-edges (in an
//! undirected store, every edge has its reverse).
//!
//! Looking up each edge's mirror is a random read per edge, which on a store larger than
//! memory faults in a page per edge: at Kron24 in a 1 GiB cgroup it had not finished after
//! 16 minutes. Instead each direction is streamed once into an order-independent
//! fingerprint of its edge set, and only when the fingerprints differ are the mirrors
//! looked up, to count the edges that lack one.

use crate::snapshot::GraphView;
use crate::types::{par_vertices, VertexId};
use rayon::prelude::*;

/// An order-independent fingerprint of a multiset of edges: the wrapping sums of a 64-bit
/// hash of each edge under two seeds. Equal multisets give equal fingerprints; for unequal
/// ones, each sum matches by chance with probability about 2^-64.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct EdgeFingerprint([u64; 2]);

const SEEDS: [u64; 2] = [0x9e37_79b9_7f4a_7c15, 0xc2b2_ae3d_27d4_eb4f];

/// SplitMix64's finalizer: a bijection of u64 that mixes every input bit into every output
/// bit.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl EdgeFingerprint {
    /// Adds the edge `u -> w`.
    #[inline]
    pub(crate) fn add(&mut self, u: VertexId, w: VertexId) {
        for (sum, seed) in self.0.iter_mut().zip(SEEDS) {
            *sum = sum.wrapping_add(mix(mix(u as u64 ^ seed) ^ w as u64));
        }
    }

    /// The fingerprint of both multisets together.
    pub(crate) fn merge(self, o: EdgeFingerprint) -> EdgeFingerprint {
        EdgeFingerprint([
            self.0[0].wrapping_add(o.0[0]),
            self.0[1].wrapping_add(o.0[1]),
        ])
    }
}

/// What the mirror test found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Mirror {
    /// Out-degrees summed (edges as the out-adjacency lists them).
    pub(crate) out_sum: u64,
    /// In-degrees summed.
    pub(crate) in_sum: u64,
    /// Out-edges without their mirror, plus vertices whose listed out-edges differ from
    /// their out-degree; 0 when the fingerprints agree.
    pub(crate) unmirrored: u64,
}

/// Runs the mirror test on `g` in the current rayon pool: one streaming pass over both
/// directions, and a pass of lookups only if their fingerprints differ.
pub(crate) fn mirror<G: GraphView + Sync>(g: &G) -> Mirror {
    let undirected = g.is_undirected();
    let (out_sum, in_sum, listed_vs_degree, fwd, back) = par_vertices(g.num_vertices())
        .map(|v| {
            let (mut fwd, mut back) = (EdgeFingerprint::default(), EdgeFingerprint::default());
            let mut od = 0u64;
            g.for_each_out(v, |w| {
                od += 1;
                fwd.add(v, w);
                if undirected {
                    back.add(w, v);
                }
            });
            if !undirected {
                g.for_each_in(v, |w| back.add(w, v));
            }
            let bad = u64::from(od != g.out_degree(v) as u64);
            (od, g.in_degree(v) as u64, bad, fwd, back)
        })
        .reduce(
            || {
                (
                    0,
                    0,
                    0,
                    EdgeFingerprint::default(),
                    EdgeFingerprint::default(),
                )
            },
            |a, b| {
                (
                    a.0 + b.0,
                    a.1 + b.1,
                    a.2 + b.2,
                    a.3.merge(b.3),
                    a.4.merge(b.4),
                )
            },
        );
    let unmirrored = if fwd == back {
        listed_vs_degree
    } else {
        listed_vs_degree + count_unmirrored(g).max(1)
    };
    Mirror {
        out_sum,
        in_sum,
        unmirrored,
    }
}

/// Out-edges whose mirror is missing, found by a lookup per edge. At least one exists when
/// the fingerprints differ unless only the in-adjacency holds extra edges, which the
/// caller counts as one.
fn count_unmirrored<G: GraphView + Sync>(g: &G) -> u64 {
    par_vertices(g.num_vertices())
        .map(|v| {
            let mut missing = 0u64;
            g.for_each_out(v, |w| {
                let ok = if g.is_undirected() {
                    g.has_edge(w, v)
                } else {
                    g.find_in(w, |x| x == v)
                };
                missing += u64::from(!ok);
            });
            missing
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Csr;

    /// Out-lists from one CSR, in-lists from another: a store whose directions disagree.
    struct Skewed {
        out: Csr,
        inn: Csr,
        n: usize,
    }

    impl GraphView for Skewed {
        fn num_vertices(&self) -> usize {
            self.n
        }
        fn num_edges(&self) -> u64 {
            self.out.view().num_edges()
        }
        fn is_undirected(&self) -> bool {
            false
        }
        fn vertex_exists(&self, v: VertexId) -> bool {
            (v as usize) < self.n
        }
        fn out_degree(&self, v: VertexId) -> usize {
            self.out.out(v).len()
        }
        fn in_degree(&self, v: VertexId) -> usize {
            self.inn.inn(v).len()
        }
        fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
            self.out.out(v).iter().copied().for_each(f)
        }
        fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
            self.inn.inn(v).iter().copied().for_each(f)
        }
        fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
            self.out.out(u).contains(&v)
        }
    }

    fn skewed(out: &[(VertexId, VertexId)], inn: &[(VertexId, VertexId)]) -> Skewed {
        Skewed {
            out: Csr::from_edges(8, out, false),
            inn: Csr::from_edges(8, inn, false),
            n: 8,
        }
    }

    const EDGES: [(VertexId, VertexId); 6] = [(0, 1), (1, 2), (2, 0), (2, 3), (5, 7), (7, 5)];

    #[test]
    fn fingerprints_ignore_order_and_tell_sets_apart() {
        let fp = |es: &[(VertexId, VertexId)]| {
            let mut f = EdgeFingerprint::default();
            es.iter().for_each(|&(u, w)| f.add(u, w));
            f
        };
        let mut rev = EDGES.to_vec();
        rev.reverse();
        assert_eq!(fp(&EDGES), fp(&rev));
        // Every single change of one endpoint of one edge is seen, and so are swapped
        // endpoints (the hash is not symmetric).
        for i in 0..EDGES.len() {
            for x in 0..64 {
                let mut es = EDGES.to_vec();
                if es[i].1 == x {
                    continue;
                }
                es[i].1 = x;
                assert_ne!(fp(&EDGES), fp(&es), "edge {i} to {x}");
            }
            let mut es = EDGES.to_vec();
            es[i] = (es[i].1, es[i].0);
            if !EDGES.contains(&es[i]) {
                assert_ne!(fp(&EDGES), fp(&es), "edge {i} reversed");
            }
        }
        assert_ne!(fp(&EDGES), fp(&EDGES[1..]));
    }

    #[test]
    fn agreeing_directions_pass() {
        let g = skewed(&EDGES, &EDGES);
        let m = mirror(&g);
        assert_eq!((m.out_sum, m.in_sum, m.unmirrored), (6, 6, 0));
        let csr = Csr::from_edges(8, &EDGES, true);
        let m = mirror(&csr.view());
        assert_eq!((m.out_sum, m.in_sum, m.unmirrored), (10, 10, 0));
    }

    #[test]
    fn an_edge_missing_from_either_direction_is_counted() {
        // The in-adjacency lacks 2 -> 3: that out-edge has no mirror.
        let lacking: Vec<_> = EDGES.iter().copied().filter(|&e| e != (2, 3)).collect();
        let m = mirror(&skewed(&EDGES, &lacking));
        assert_eq!((m.out_sum, m.in_sum, m.unmirrored), (6, 5, 1));
        // The in-adjacency holds 2 -> 3 as 3 -> 2: same degree sums, one edge unmirrored.
        let mut wrong = EDGES.to_vec();
        wrong[3] = (3, 2);
        let m = mirror(&skewed(&EDGES, &wrong));
        assert_eq!((m.out_sum, m.in_sum, m.unmirrored), (6, 6, 1));
        // Only the in-adjacency has an extra edge: every out-edge is mirrored, but the
        // sets differ, which counts once.
        let mut extra = EDGES.to_vec();
        extra.push((4, 6));
        let m = mirror(&skewed(&EDGES, &extra));
        assert_eq!((m.out_sum, m.in_sum, m.unmirrored), (6, 7, 1));
    }
}
