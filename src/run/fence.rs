//! A fence table over a sparse run's sorted vertex ids, so that finding a vertex's index
//! costs a table read and a search of a few ids instead of a binary search of them all.
//!
//! A kernel on a live snapshot looks every vertex up in every run of its chain. A level-0
//! run holds a fraction of all vertices in a sparse index, and at Kron24 its binary search
//! (21 steps over 7 MB, most of them cache misses) took a third of a PageRank sweep. The
//! table splits the id range of the run into buckets of 2^shift ids, about four indexed
//! ids per bucket, and records where each bucket starts in `vids`: 1 byte per indexed id.
//! It is built on the first lookup, in DRAM, and never written to the medium.

use crate::types::VertexId;
use std::sync::OnceLock;

/// Sparse indexes shorter than this are searched directly: they fit in a few cache lines.
const MIN_IDS: usize = 1024;

/// Indexed ids per bucket aimed at.
const IDS_PER_BUCKET: u64 = 4;

/// The fence table of one sparse index, built on first use.
#[derive(Default, Debug)]
pub struct Fence(OnceLock<Option<Table>>);

#[derive(Debug)]
struct Table {
    /// The smallest indexed id: bucket `b` covers ids `first + (b << shift)` onwards.
    first: u64,
    shift: u32,
    /// Where each bucket's ids start in `vids`, plus one entry for the end.
    starts: Vec<u32>,
}

impl Fence {
    /// The index of `v` in `vids` (sorted, distinct), if it is there.
    #[inline]
    pub fn find(&self, vids: &[VertexId], v: VertexId) -> Option<usize> {
        match self.0.get_or_init(|| Table::build(vids)) {
            Some(t) => t.find(vids, v),
            None => vids.binary_search(&v).ok(),
        }
    }
}

impl Table {
    /// The table of `vids`, or `None` when it is too short to need one or its positions
    /// do not fit 32 bits.
    fn build(vids: &[VertexId]) -> Option<Table> {
        if vids.len() < MIN_IDS || vids.len() > u32::MAX as usize {
            return None;
        }
        let first = vids[0] as u64;
        let span = vids[vids.len() - 1] as u64 - first + 1;
        let buckets_wanted = (vids.len() as u64).div_ceil(IDS_PER_BUCKET);
        let shift = (span.div_ceil(buckets_wanted))
            .next_power_of_two()
            .trailing_zeros();
        let buckets = ((span - 1) >> shift) as usize + 1;
        let mut starts = Vec::with_capacity(buckets + 1);
        let mut i = 0usize;
        for b in 0..buckets as u64 {
            let lo = first + (b << shift);
            while i < vids.len() && (vids[i] as u64) < lo {
                i += 1;
            }
            starts.push(i as u32);
        }
        starts.push(vids.len() as u32);
        debug_assert!(starts.windows(2).all(|w| w[0] <= w[1]));
        Some(Table {
            first,
            shift,
            starts,
        })
    }

    #[inline]
    fn find(&self, vids: &[VertexId], v: VertexId) -> Option<usize> {
        let off = (v as u64).checked_sub(self.first)?;
        let b = (off >> self.shift) as usize;
        if b + 1 >= self.starts.len() {
            return None;
        }
        let (lo, hi) = (self.starts[b] as usize, self.starts[b + 1] as usize);
        vids[lo..hi].binary_search(&v).ok().map(|k| lo + k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every id finds its position and every absent id finds nothing, for indexes
        /// dense or sparse, clustered or spread, starting anywhere.
        #[test]
        fn finds_what_a_binary_search_finds(
            mut ids in prop::collection::vec(0u32..1 << 24, 0..5000),
            base in 0u32..1 << 30,
            probes in prop::collection::vec(0u32..1 << 25, 0..200),
        ) {
            ids.sort_unstable();
            ids.dedup();
            let vids: Vec<VertexId> = ids.iter().map(|&x| (x + base) as VertexId).collect();
            let f = Fence::default();
            for (k, &v) in vids.iter().enumerate() {
                prop_assert_eq!(f.find(&vids, v), Some(k));
            }
            let probes = probes.iter().map(|&p| p.wrapping_add(base.saturating_sub(1 << 20)));
            for p in probes.chain([0, VertexId::MAX as u32]) {
                let p = p as VertexId;
                prop_assert_eq!(f.find(&vids, p), vids.binary_search(&p).ok());
            }
        }
    }

    #[test]
    fn a_table_is_built_for_long_indexes_only_and_stays_small() {
        let short: Vec<VertexId> = (0..MIN_IDS as VertexId - 1).map(|x| x * 3).collect();
        assert!(Table::build(&short).is_none());
        let long: Vec<VertexId> = (0..100_000).map(|x| x * 7 + 11).collect();
        let t = Table::build(&long).expect("a table");
        // About IDS_PER_BUCKET ids per bucket: at most one table entry per 2 ids.
        assert!(t.starts.len() <= long.len() / 2 + 2, "{}", t.starts.len());
        assert_eq!(Fence::default().find(&long, 11 + 7 * 99_999), Some(99_999));
    }
}
