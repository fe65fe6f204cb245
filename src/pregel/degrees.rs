//! Every vertex's degrees, read once per run. A snapshot of many runs answers a degree by
//! walking the vertex's chain of runs, and the engine needs degrees over and over (edge
//! balancing, broadcast fan-out, PageRank's share in every superstep): on a live Kron24
//! store of 48 runs those walks were more than half of a CC run.

use crate::{GraphView, VertexId};
use rayon::prelude::*;

/// A degree too large for the cache: read from the graph instead.
const TOO_LARGE: u32 = u32::MAX;

/// Out-degrees, and in-degrees when a run needs them, by dense id (4 bytes each).
pub(crate) struct Degrees {
    out: Vec<u32>,
    inn: Vec<u32>,
}

/// Whether in-degrees are worth caching for a run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum InDegrees {
    Cached,
    FromGraph,
}

fn cache<G: GraphView>(g: &G, degree: impl Fn(&G, VertexId) -> usize + Sync) -> Vec<u32> {
    crate::types::par_vertices(g.num_vertices())
        .map(|v| u32::try_from(degree(g, v)).unwrap_or(TOO_LARGE))
        .collect()
}

impl Degrees {
    pub(crate) fn new<G: GraphView>(g: &G, inn: InDegrees) -> Degrees {
        Degrees {
            out: cache(g, G::out_degree),
            inn: match inn {
                InDegrees::Cached => cache(g, G::in_degree),
                InDegrees::FromGraph => Vec::new(),
            },
        }
    }

    /// Out-degree of `v`.
    #[inline]
    pub(crate) fn out<G: GraphView>(&self, g: &G, v: VertexId) -> usize {
        match self.out[v as usize] {
            TOO_LARGE => g.out_degree(v),
            d => d as usize,
        }
    }

    /// In-degree of `v`.
    #[inline]
    pub(crate) fn inn<G: GraphView>(&self, g: &G, v: VertexId) -> usize {
        match self.inn.get(v as usize) {
            Some(&d) if d != TOO_LARGE => d as usize,
            _ => g.in_degree(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Csr;

    #[test]
    fn cached_degrees_are_the_graphs() {
        let e = [(0, 1), (0, 2), (1, 2), (3, 2), (2, 2)];
        let g = Csr::from_edges(5, &e, false);
        for inn in [InDegrees::Cached, InDegrees::FromGraph] {
            let d = Degrees::new(&g, inn);
            for v in 0..5 {
                assert_eq!(d.out(&g, v), g.out_degree(v));
                assert_eq!(d.inn(&g, v), g.in_degree(v));
            }
        }
    }
}
