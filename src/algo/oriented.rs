//! The graph's undirected projection, oriented by degree: the ground on which triangle
//! counting (GAP TC) and the local clustering coefficient (Graphalytics LCC) enumerate
//! triangles.
//!
//! Vertices are renumbered by degree, highest first, when degrees are skewed (GAPBS's
//! test), and each keeps only its neighbors of smaller new id: every undirected edge once,
//! pointing at the higher-degree end. A triangle `w < v < u` is then found exactly once, at
//! `u`, as a `v` in `N+(u)` and a `w` in both `N+(u)` and `N+(v)`; and a hub, whose `N+`
//! holds only the few vertices of higher degree, is never scanned for each of its many
//! small neighbors. Enumeration marks `N+(u)` in a per-thread table and looks each `w` of
//! each `N+(v)` up in it: no merge, no branch on the comparison of two lists.

use crate::snapshot::GraphView;
use crate::types::{par_vertices, VertexId};
use rayon::prelude::*;
use std::cell::RefCell;

/// The oriented projection: per new id, its neighbors of smaller new id, sorted.
pub(crate) struct Oriented {
    /// The dense id of each new id.
    pub(crate) order: Vec<VertexId>,
    /// The undirected degree (neighbors other than itself, each once) of each dense id.
    pub(crate) degree: Vec<usize>,
    off: Vec<u64>,
    adj: Vec<VertexId>,
    /// Beside `adj`: how many of the two directed edges between the pair exist (1 or 2;
    /// always 2 in an undirected graph). Empty unless asked for.
    mult: Vec<u8>,
}

/// Whether enumeration needs each pair's count of directed edges.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Multiplicity {
    /// Triangles only.
    Ignore,
    /// Keep how many directions each edge has (LCC counts directed edges).
    Keep,
}

impl Oriented {
    /// Orients the undirected projection of `g` (self-loops dropped).
    pub(crate) fn build<G: GraphView>(g: &G, m: Multiplicity) -> Oriented {
        let n = g.num_vertices();
        let lists: Vec<(Vec<VertexId>, Vec<u8>)> = par_vertices(n)
            .with_min_len(256)
            .map_init(
                || (Vec::new(), Vec::new()),
                |(out, inn), v| undirected(g, v, m, out, inn),
            )
            .collect();
        let degree: Vec<usize> = lists.iter().map(|l| l.0.len()).collect();
        let order = by_degree(&degree);
        let mut rank = vec![0 as VertexId; n];
        for (r, &v) in order.iter().enumerate() {
            rank[v as usize] = r as VertexId;
        }
        let oriented: Vec<(Vec<VertexId>, Vec<u8>)> = order
            .par_iter()
            .with_max_len(crate::types::VERTEX_TASK)
            .enumerate()
            .map(|(r, &v)| {
                let (ids, ms) = &lists[v as usize];
                let mut pairs: Vec<(VertexId, u8)> = (ids.iter().enumerate())
                    .map(|(k, &x)| (rank[x as usize], ms.get(k).copied().unwrap_or(2)))
                    .filter(|&(x, _)| (x as usize) < r)
                    .collect();
                pairs.sort_unstable_by_key(|p| p.0);
                let keep = m == Multiplicity::Keep;
                (
                    pairs.iter().map(|p| p.0).collect(),
                    if keep {
                        pairs.iter().map(|p| p.1).collect()
                    } else {
                        Vec::new()
                    },
                )
            })
            .collect();
        drop(lists);
        let mut off = vec![0u64; n + 1];
        for (r, l) in oriented.iter().enumerate() {
            off[r + 1] = off[r] + l.0.len() as u64;
        }
        let mut adj = Vec::with_capacity(off[n] as usize);
        let mut mult = Vec::new();
        for (ids, ms) in &oriented {
            adj.extend_from_slice(ids);
            mult.extend_from_slice(ms);
        }
        Oriented {
            order,
            degree,
            off,
            adj,
            mult,
        }
    }

    /// Number of vertices.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// `N+(u)`: the neighbors of new id `u` of smaller new id, sorted.
    #[inline]
    pub(crate) fn up(&self, u: usize) -> &[VertexId] {
        &self.adj[self.off[u] as usize..self.off[u + 1] as usize]
    }

    /// The directions each edge of `N+(u)` has (see [`Multiplicity::Keep`]).
    #[inline]
    pub(crate) fn up_mult(&self, u: usize) -> &[u8] {
        &self.mult[self.off[u] as usize..self.off[u + 1] as usize]
    }
}

/// `v`'s neighbors ignoring direction, sorted, without itself, into `out`; with
/// [`Multiplicity::Keep`], each one's count of directed edges with `v` into `ms`.
fn undirected<G: GraphView>(
    g: &G,
    v: VertexId,
    m: Multiplicity,
    out: &mut Vec<VertexId>,
    inn: &mut Vec<VertexId>,
) -> (Vec<VertexId>, Vec<u8>) {
    g.out_neighbors_sorted(v, out);
    if g.is_undirected() {
        let ids: Vec<VertexId> = out.iter().copied().filter(|&x| x != v).collect();
        return (ids, Vec::new());
    }
    g.in_neighbors_sorted(v, inn);
    let mut ids = Vec::with_capacity(out.len() + inn.len());
    let mut ms = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < out.len() || j < inn.len() {
        let (x, k) = match (out.get(i), inn.get(j)) {
            (Some(&a), Some(&b)) if a == b => {
                i += 1;
                j += 1;
                (a, 2)
            }
            (Some(&a), Some(&b)) if a < b => {
                i += 1;
                (a, 1)
            }
            (Some(&a), None) => {
                i += 1;
                (a, 1)
            }
            (_, Some(&b)) => {
                j += 1;
                (b, 1)
            }
            (None, None) => unreachable!("the loop runs while a list has ids"),
        };
        if x != v {
            ids.push(x);
            if m == Multiplicity::Keep {
                ms.push(k);
            }
        }
    }
    (ids, ms)
}

/// New ids in dense-id order: by degree, highest first, when the average degree is far
/// above the median (GAPBS's test for a skewed graph); else the identity.
fn by_degree(degree: &[usize]) -> Vec<VertexId> {
    let n = degree.len();
    let mut order: Vec<VertexId> = (0..n as VertexId).collect();
    let total: usize = degree.iter().sum();
    let avg = total as f64 / n.max(1) as f64;
    let mut sample: Vec<usize> = degree.iter().step_by((n / 1000).max(1)).copied().collect();
    sample.sort_unstable();
    let median = sample.get(sample.len() / 2).copied().unwrap_or(0) as f64;
    if n > 0 && avg / median.max(1.0) > 1.3 {
        order.par_sort_by_key(|&v| std::cmp::Reverse(degree[v as usize]));
    }
    order
}

/// A table over the new ids, one byte each, for marking `N+(u)`; kept per thread, since
/// zeroing one per vertex would cost more than the enumeration.
pub(crate) struct Marks(Vec<u8>);

thread_local! {
    static SPARE: RefCell<Option<Marks>> = const { RefCell::new(None) };
}

impl Marks {
    /// Runs `f` with this thread's cleared table for `n` ids; `f` must clear what it marks.
    pub(crate) fn with<R>(n: usize, f: impl FnOnce(&mut Marks) -> R) -> R {
        let mut m = SPARE
            .with(|s| s.borrow_mut().take())
            .filter(|m| m.0.len() == n)
            .unwrap_or_else(|| Marks(vec![0; n]));
        let r = f(&mut m);
        SPARE.with(|s| *s.borrow_mut() = Some(m));
        r
    }

    /// Marks each id of `ids` with the byte beside it (or 1).
    #[inline]
    pub(crate) fn set(&mut self, ids: &[VertexId], with: &[u8]) {
        for (k, &x) in ids.iter().enumerate() {
            self.0[x as usize] = with.get(k).copied().unwrap_or(1);
        }
    }

    /// Clears the marks of `ids`.
    #[inline]
    pub(crate) fn clear(&mut self, ids: &[VertexId]) {
        for &x in ids {
            self.0[x as usize] = 0;
        }
    }

    /// The mark of `x` (0: unmarked).
    #[inline]
    pub(crate) fn get(&self, x: VertexId) -> u8 {
        self.0[x as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Csr;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

        /// Every undirected edge (self-loops dropped) appears once, at its end of larger new
        /// id, lists are sorted, and each carries its count of directions.
        #[test]
        fn each_edge_once_towards_the_smaller_new_id(
            n in 1usize..40,
            raw in prop::collection::vec((0u32..40, 0u32..40), 0..200),
            hub in any::<bool>(),
        ) {
            let mut es: Vec<(VertexId, VertexId)> = raw
                .into_iter()
                .map(|(a, b)| ((a as usize % n) as VertexId, (b as usize % n) as VertexId))
                .collect();
            if hub {
                // Skewed degrees: the relabeling path.
                es.extend((1..n as VertexId).map(|x| (0, x)));
            }
            let g = Csr::from_edges(n, &es, false);
            let o = Oriented::build(&g, Multiplicity::Keep);
            let mut want: BTreeMap<(VertexId, VertexId), u8> = BTreeMap::new();
            for &(a, b) in es.iter().collect::<BTreeSet<_>>() {
                if a != b {
                    *want.entry((a.min(b), a.max(b))).or_default() += 1;
                }
            }
            let mut seen = vec![false; n];
            for &v in &o.order {
                prop_assert!(!std::mem::replace(&mut seen[v as usize], true));
            }
            let mut got = BTreeMap::new();
            for u in 0..o.len() {
                let (up, ms) = (o.up(u), o.up_mult(u));
                prop_assert!(up.windows(2).all(|w| w[0] < w[1]));
                for (&v, &m) in up.iter().zip(ms) {
                    prop_assert!((v as usize) < u);
                    let (a, b) = (o.order[u], o.order[v as usize]);
                    got.insert((a.min(b), a.max(b)), m);
                }
            }
            prop_assert_eq!(got, want.clone());
            for v in 0..n as VertexId {
                let k = want.keys().filter(|&&(a, b)| a == v || b == v).count();
                prop_assert_eq!(o.degree[v as usize], k);
            }
        }
    }
}
