//! External → dense lookup tuned for the common case of smallish integer ids.
//!
//! Generated graphs and most edge lists use ids below a few times the vertex count; those
//! go to a flat array (one cache line touch per lookup, and lock-free parallel reads). Ids
//! far larger than the vertex count go to a hash map.

use crate::types::VertexId;
use rustc_hash::FxHashMap;

const NONE: u32 = u32::MAX;
/// The flat array may always cover ids below this.
const MIN_FLAT: u64 = 1 << 20;
/// ... and otherwise ids below this many times the number of vertices.
const FLAT_FACTOR: u64 = 8;

/// The lookup structure: a flat array for small ids, a hash map for the rest.
#[derive(Default)]
pub struct Lookup {
    flat: Vec<u32>,
    map: FxHashMap<u64, u32>,
}

impl Lookup {
    /// The dense id of `ext`, if any.
    #[inline]
    /// DRAM the lookup holds (the flat array, and the hash map at its capacity with one
    /// control byte per slot).
    pub fn dram_bytes(&self) -> usize {
        self.flat.capacity() * 4 + self.map.capacity() * (12 + 1)
    }

    pub fn get(&self, ext: u64) -> Option<VertexId> {
        match self.flat.get(ext as usize) {
            Some(&v) if v != NONE => Some(v),
            Some(_) => None,
            None => self.map.get(&ext).copied(),
        }
    }

    /// Hints that `get(ext)` comes soon.
    #[inline]
    pub fn prefetch(&self, ext: u64) {
        if let Some(slot) = self.flat.get(ext as usize) {
            crate::prefetch::prefetch(slot);
        }
    }

    /// Records `ext -> v`; `count` is the number of vertices after this insert.
    pub fn insert(&mut self, ext: u64, v: VertexId, count: usize) {
        if (ext as usize) < self.flat.len() {
            self.flat[ext as usize] = v;
            return;
        }
        let limit = MIN_FLAT.max(FLAT_FACTOR * count as u64).min(1 << 31);
        if ext < limit {
            let new_len = (ext + 1).next_power_of_two().min(limit) as usize;
            self.flat.resize(new_len.max(ext as usize + 1), NONE);
            // Ids that now fit move out of the map, so `get` never needs to look in both.
            let moved: Vec<(u64, u32)> = self
                .map
                .iter()
                .filter(|(&e, _)| (e as usize) < self.flat.len())
                .map(|(&e, &d)| (e, d))
                .collect();
            for (e, d) in moved {
                self.map.remove(&e);
                self.flat[e as usize] = d;
            }
            self.flat[ext as usize] = v;
        } else {
            self.map.insert(ext, v);
        }
    }
}
