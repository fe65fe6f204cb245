//! Per-vertex buffers for one block of vertices in one direction (XPGraph's vertex-centric
//! buffering): each vertex owns a chain of chunks that grow from 16 B to 1 KiB, so small
//! vertices waste little and hubs take few hops.
//!
//! Chunk layout: `[next chunk address][entries ...]`. Entries are neighbor ids with
//! [`crate::batch::DEL`] marking a delete, in arrival order.

use super::arena::Arena;
use crate::prefetch::prefetch;

/// Vertices per block. Blocks are the unit of parallel apply and seal.
pub const BLOCK_BITS: u32 = 14;
/// `1 << BLOCK_BITS`.
pub const BLOCK: usize = 1 << BLOCK_BITS;
const MAX_CLASS: u8 = 6;

/// Entries a chunk of `class` holds (one slot is the link).
#[inline]
fn cap(class: u8) -> u32 {
    (4u32 << class) - 1
}

#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Entry {
    head: u32,
    tail: u32,
    count: u32,
    left: u16,
    class: u8,
    _pad: u8,
}

/// Buffers of `BLOCK` consecutive vertices.
pub struct VBlock {
    entries: Vec<Entry>,
    arena: Arena,
    ops: u64,
}

impl Default for VBlock {
    fn default() -> Self {
        VBlock {
            entries: vec![Entry::default(); BLOCK],
            arena: Arena::default(),
            ops: 0,
        }
    }
}

impl VBlock {
    /// A block whose updates carry weights.
    pub fn weighted() -> Self {
        VBlock {
            arena: Arena::weighted(),
            ..Self::default()
        }
    }
}

impl VBlock {
    /// Appends `x` to local vertex `lv`'s buffer.
    #[inline]
    pub fn push(&mut self, lv: usize, x: u32, w: f64) {
        let e = &mut self.entries[lv];
        if e.left == 0 {
            let class = if e.count == 0 {
                0
            } else {
                (e.class + 1).min(MAX_CLASS)
            };
            let n = cap(class) as usize + 1;
            let addr = self.arena.alloc(n);
            *self.arena.slot_mut(addr) = 0;
            let e = &mut self.entries[lv];
            if e.count == 0 {
                e.head = addr;
            } else {
                let tail = e.tail;
                *self.arena.slot_mut(tail) = addr;
            }
            let e = &mut self.entries[lv];
            e.tail = addr;
            e.class = class;
            e.left = cap(class) as u16;
        }
        let e = &mut self.entries[lv];
        let pos = cap(e.class) - e.left as u32 + 1;
        let addr = e.tail + pos;
        e.left -= 1;
        e.count += 1;
        *self.arena.slot_mut(addr) = x;
        if self.arena.is_weighted() {
            *self.arena.weight_mut(addr) = w;
        }
        self.ops += 1;
    }

    /// Appends a run of `(vertex, entry)` updates (vertices of this block, by their low bits),
    /// prefetching the vertex entries and buffer slots of updates a little ahead.
    /// `weights` is parallel to `items` (empty for unweighted blocks).
    pub fn push_all(&mut self, items: &[(u32, u32)], weights: &[f64]) {
        const AHEAD_ENTRY: usize = 16;
        const AHEAD_SLOT: usize = 8;
        let lv = |k: u32| (k as usize) & (BLOCK - 1);
        for j in 0..items.len() {
            if let Some(&(k, _)) = items.get(j + AHEAD_ENTRY) {
                prefetch(&self.entries[lv(k)]);
            }
            if let Some(&(k, _)) = items.get(j + AHEAD_SLOT) {
                let e = &self.entries[lv(k)];
                if e.left != 0 {
                    let pos = cap(e.class) - e.left as u32 + 1;
                    prefetch(self.arena.slot_ptr(e.tail + pos));
                }
            }
            let (k, x) = items[j];
            self.push(lv(k), x, weights.get(j).copied().unwrap_or(0.0));
        }
    }

    /// Number of entries of local vertex `lv`.
    #[inline]
    pub fn count(&self, lv: usize) -> u32 {
        self.entries[lv].count
    }

    /// Calls `f(address, n)` for each chunk of local vertex `lv`, in order: `n` entries
    /// start at `address`.
    fn chunks(&self, lv: usize, mut f: impl FnMut(u32, usize)) {
        let e = &self.entries[lv];
        let mut remaining = e.count;
        let mut addr = e.head;
        let mut class = 0u8;
        while remaining > 0 {
            let n = cap(class).min(remaining);
            f(addr + 1, n as usize);
            remaining -= n;
            addr = self.arena.slots(addr, 1)[0];
            class = (class + 1).min(MAX_CLASS);
        }
    }

    /// Appends local vertex `lv`'s entries, in arrival order, to `out`.
    pub fn gather(&self, lv: usize, out: &mut Vec<u32>) {
        self.chunks(lv, |a, n| out.extend_from_slice(self.arena.slots(a, n)));
    }

    /// Appends local vertex `lv`'s weights, parallel to [`VBlock::gather`] (weighted blocks).
    pub fn gather_weights(&self, lv: usize, out: &mut Vec<f64>) {
        self.chunks(lv, |a, n| out.extend_from_slice(self.arena.weights(a, n)));
    }

    /// Entries held.
    pub fn ops(&self) -> u64 {
        self.ops
    }

    /// DRAM held.
    pub fn bytes(&self) -> usize {
        self.entries.len() * std::mem::size_of::<Entry>() + self.arena.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_keep_order() {
        let mut b = VBlock::default();
        let sizes = [0usize, 1, 3, 4, 10, 600, 5000];
        for round in 0..5000u32 {
            for (lv, &n) in sizes.iter().enumerate() {
                if (round as usize) < n {
                    b.push(lv, round * 10 + lv as u32, 0.0);
                }
            }
        }
        for (lv, &n) in sizes.iter().enumerate() {
            let mut out = vec![];
            b.gather(lv, &mut out);
            let want: Vec<u32> = (0..n as u32).map(|r| r * 10 + lv as u32).collect();
            assert_eq!(out, want, "vertex {lv}");
            assert_eq!(b.count(lv), n as u32);
        }
    }
}
