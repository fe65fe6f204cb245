//! The updates of one block of `BLOCK` consecutive vertices in one direction, as an
//! append-only log in arrival order: `(local vertex, neighbor entry[, weight])`.
//!
//! An earlier design gave every vertex its own chain of chunks (XPGraph's vertex buffers).
//! Its per-vertex table cost 16 B per vertex and direction whether the vertex was touched
//! or not, and it was charged to the memtable budget: at 2^24 vertices that table alone
//! was 512 MiB, so a small budget froze after every batch. A log costs nothing per vertex
//! and 2 B plus an id per entry (6 B with 32-bit ids; weights add 8 B); grouping by vertex is deferred to the seal,
//! which sorts each block once by counting sort (`O(entries + BLOCK)`).
//!
//! Entries are neighbor ids with [`crate::batch::DEL`] marking a delete.

use crate::types::{VertexId, ID_BYTES};
/// Vertices per block. Blocks are the unit of parallel apply and seal.
pub const BLOCK_BITS: u32 = 14;
/// `1 << BLOCK_BITS`.
pub const BLOCK: usize = 1 << BLOCK_BITS;
const _: () = assert!(BLOCK_BITS <= 16, "local vertex ids are stored as u16");

/// The update log of one vertex block.
#[derive(Default)]
pub struct BlockLog {
    local: Vec<u16>,
    entries: Vec<VertexId>,
    /// Parallel to `entries` in weighted logs, empty otherwise.
    weights: Vec<f64>,
    weighted: bool,
}

impl BlockLog {
    /// A log whose updates carry weights.
    pub fn weighted() -> Self {
        BlockLog {
            weighted: true,
            ..Self::default()
        }
    }

    /// Appends a run of `(vertex, entry)` updates (vertices of this block; only their low
    /// bits are kept). `weights` is parallel to `items` (empty for unweighted logs).
    pub fn push_all(&mut self, items: &[(VertexId, VertexId)], weights: &[f64]) {
        self.local.reserve(items.len());
        self.entries.reserve(items.len());
        self.local.extend(
            items
                .iter()
                .map(|&(k, _)| (k as usize & (BLOCK - 1)) as u16),
        );
        self.entries.extend(items.iter().map(|&(_, x)| x));
        if self.weighted {
            debug_assert_eq!(weights.len(), items.len());
            self.weights.extend_from_slice(weights);
        }
    }

    /// Entries held.
    pub fn ops(&self) -> u64 {
        self.entries.len() as u64
    }

    /// DRAM held (capacities, since that is what the allocator gave).
    pub fn bytes(&self) -> usize {
        self.local.capacity() * 2 + self.entries.capacity() * ID_BYTES + self.weights.capacity() * 8
    }

    /// Appends local vertex `lv`'s entries, in arrival order, to `out`: a scan of the whole
    /// log, for the rare single-vertex read (deleting a vertex).
    pub fn gather(&self, lv: usize, out: &mut Vec<VertexId>) {
        out.extend(
            self.local
                .iter()
                .zip(&self.entries)
                .filter(|(&l, _)| l as usize == lv)
                .map(|(_, &x)| x),
        );
    }

    /// The log grouped by vertex, arrival order kept within each vertex.
    pub fn by_vertex(&self) -> Grouped {
        let mut start = vec![0u32; BLOCK + 1];
        for &l in &self.local {
            start[l as usize + 1] += 1;
        }
        for i in 0..BLOCK {
            start[i + 1] += start[i];
        }
        let mut pos = start.clone();
        let mut entries = vec![0 as VertexId; self.entries.len()];
        let mut weights = vec![0f64; self.weights.len()];
        for (i, (&l, &x)) in self.local.iter().zip(&self.entries).enumerate() {
            let p = &mut pos[l as usize];
            entries[*p as usize] = x;
            if self.weighted {
                weights[*p as usize] = self.weights[i];
            }
            *p += 1;
        }
        Grouped {
            start,
            entries,
            weights,
        }
    }
}

/// A block's updates grouped by local vertex (see [`BlockLog::by_vertex`]).
pub struct Grouped {
    start: Vec<u32>,
    entries: Vec<VertexId>,
    weights: Vec<f64>,
}

impl Grouped {
    /// Local vertex `lv`'s entries in arrival order.
    #[inline]
    pub fn entries(&self, lv: usize) -> &[VertexId] {
        &self.entries[self.start[lv] as usize..self.start[lv + 1] as usize]
    }

    /// Local vertex `lv`'s weights, parallel to [`Grouped::entries`] (weighted logs only).
    #[inline]
    pub fn weights(&self, lv: usize) -> &[f64] {
        &self.weights[self.start[lv] as usize..self.start[lv + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_keeps_arrival_order_per_vertex() {
        let mut b = BlockLog::weighted();
        let sizes = [0usize, 1, 3, 4, 10, 600, 5000];
        for round in 0..5000 as VertexId {
            for (lv, &n) in sizes.iter().enumerate() {
                if (round as usize) < n {
                    let x = round * 10 + lv as VertexId;
                    // Vertices of a later block keep only their low bits.
                    b.push_all(&[((BLOCK + lv) as VertexId, x)], &[x as f64]);
                }
            }
        }
        let g = b.by_vertex();
        for (lv, &n) in sizes.iter().enumerate() {
            let want: Vec<VertexId> = (0..n as VertexId)
                .map(|r| r * 10 + lv as VertexId)
                .collect();
            assert_eq!(g.entries(lv), want, "vertex {lv}");
            let wts: Vec<f64> = want.iter().map(|&x| x as f64).collect();
            assert_eq!(g.weights(lv), wts, "vertex {lv}");
            let mut one = vec![];
            b.gather(lv, &mut one);
            assert_eq!(one, want, "gather of vertex {lv}");
        }
        assert_eq!(b.ops() as usize, sizes.iter().sum::<usize>());
    }
}
