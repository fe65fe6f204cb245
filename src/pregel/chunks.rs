//! Edge-balanced ranges of vertices: the unit of parallel work in a superstep.
//!
//! On power-law graphs equal vertex counts are very unequal work (one Kronecker hub has a
//! hundred thousand edges), so ranges are cut to equal *edges* plus vertices. Many more
//! ranges than threads let rayon's work stealing even out what selective scheduling leaves
//! uneven. Every cut is a multiple of 64, so each word of a per-vertex bitmap belongs to one
//! range and its owner writes it without atomics.

use crate::VertexId;
use rayon::prelude::*;

/// Ranges per thread: enough for work stealing to balance, few enough that per-range
/// overhead (a few allocations, one result) stays invisible.
const PER_THREAD: usize = 64;

/// Consecutive vertex ranges `bounds[i]..bounds[i + 1]`, covering `0..n`.
pub(crate) struct Chunks {
    pub bounds: Vec<usize>,
}

impl Chunks {
    /// Cuts `0..n` into ranges of about equal `1 + degree(v)`.
    pub(crate) fn new(
        n: usize,
        threads: usize,
        degree: impl Fn(VertexId) -> usize + Sync,
    ) -> Chunks {
        let words = n.div_ceil(64);
        let per_word: Vec<u64> = (0..words)
            .into_par_iter()
            .map(|w| {
                (w * 64..((w + 1) * 64).min(n))
                    .map(|v| 1 + degree(v as VertexId) as u64)
                    .sum()
            })
            .collect();
        let total: u64 = per_word.iter().sum();
        let target = (total / (threads.max(1) * PER_THREAD) as u64).max(1);
        let mut bounds = vec![0];
        let mut acc = 0;
        for (w, &x) in per_word.iter().enumerate() {
            acc += x;
            if acc >= target && w + 1 < words {
                bounds.push((w + 1) * 64);
                acc = 0;
            }
        }
        if n > 0 {
            bounds.push(n);
        }
        debug_assert!(bounds.windows(2).all(|b| b[0] < b[1]));
        Chunks { bounds }
    }

    /// Number of ranges.
    pub(crate) fn len(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }
}

/// Splits a per-vertex slice into one piece per range.
pub(crate) fn split<'a, T>(s: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    split_at(s, bounds.windows(2).map(|b| b[1] - b[0]))
}

/// Splits a per-vertex bitmap (one bit per vertex) into one piece of words per range.
pub(crate) fn split_words<'a, T>(s: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    split_at(
        s,
        bounds
            .windows(2)
            .map(|b| b[1].div_ceil(64) - b[0].div_ceil(64)),
    )
}

fn split_at<T>(mut s: &mut [T], lens: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    for k in lens {
        let (a, b) = std::mem::take(&mut s).split_at_mut(k);
        out.push(a);
        s = b;
    }
    debug_assert!(s.is_empty(), "ranges cover the whole slice");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Csr;
    use crate::GraphView;

    #[test]
    fn ranges_cover_the_ids_and_cut_at_words() {
        // A star: vertex 0 has most of the edges, so it gets a range of its own word.
        let mut edges: Vec<(VertexId, VertexId)> = (1..5000).map(|v| (0, v)).collect();
        edges.extend((1..4999).map(|v| (v, v + 1)));
        let g = Csr::from_edges(5000, &edges, false);
        let c = Chunks::new(5000, 2, |v| g.out_degree(v));
        assert_eq!(c.bounds[0], 0);
        assert_eq!(*c.bounds.last().unwrap(), 5000);
        assert!(c.bounds[1..c.len()].iter().all(|b| b % 64 == 0));
        assert_eq!(c.bounds[1], 64, "the hub's word is a range by itself");
        assert!(c.len() > 2);
        let mut xs: Vec<u32> = (0..5000).collect();
        let parts = split(&mut xs, &c.bounds);
        assert_eq!(parts.len(), c.len());
        assert_eq!(parts.iter().map(|p| p.len()).sum::<usize>(), 5000);
        let mut words = vec![0u64; 5000usize.div_ceil(64)];
        let wp = split_words(&mut words, &c.bounds);
        assert_eq!(wp.iter().map(|p| p.len()).sum::<usize>(), words.len());
    }

    #[test]
    fn an_empty_graph_has_no_ranges() {
        let g = Csr::from_edges(0, &[], false);
        assert_eq!(Chunks::new(0, 4, |v| g.out_degree(v)).len(), 0);
    }
}
