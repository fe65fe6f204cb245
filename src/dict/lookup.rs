//! External → dense lookup tuned for the common case of smallish integer ids.
//!
//! Generated graphs and most edge lists use ids below a few times the vertex count; those
//! go to a flat array (one cache line touch per lookup, and lock-free parallel reads). Ids
//! far larger than the vertex count go to a hash map.

use crate::types::VertexId;
use rustc_hash::FxHashMap;

const NONE: VertexId = VertexId::MAX;
/// The flat array may always cover ids below this.
const MIN_FLAT: u64 = 1 << 20;
/// ... and otherwise ids below this many times the number of vertices.
const FLAT_FACTOR: u64 = 8;

/// The lookup structure: a flat array for small ids, a hash map for the rest.
#[derive(Default)]
pub struct Lookup {
    flat: Vec<VertexId>,
    map: FxHashMap<u64, VertexId>,
}

impl Lookup {
    /// DRAM the lookup holds (the flat array, and the hash map at its capacity with one
    /// control byte per slot).
    pub fn dram_bytes(&self) -> usize {
        self.flat.capacity() * 4 + self.map.capacity() * (12 + 1)
    }

    /// The dense id of `ext`, if any.
    #[inline]
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

    /// The lookup of `to_ext` (dense id `i` is `to_ext[i]`), built in one pass with the
    /// flat array allocated once (reopening a store of 2^24 vertices spent most of its time
    /// growing it entry by entry). The first external id found twice is an error.
    ///
    /// Sequential on purpose: the fill is random writes bound by memory latency, and a
    /// parallel fill plus the pass that then finds duplicates measured slower on two cores.
    pub fn build(to_ext: &[u64]) -> Result<Lookup, u64> {
        let limit = flat_limit(to_ext.len());
        let small = to_ext.iter().copied().filter(|&e| e < limit).max();
        let flat_len = small.map_or(0, |m| flat_len_for(m, limit));
        let mut l = Lookup {
            flat: vec![NONE; flat_len],
            map: FxHashMap::default(),
        };
        for (v, &ext) in to_ext.iter().enumerate() {
            let v = v as VertexId;
            let fresh = match l.flat.get_mut(ext as usize) {
                Some(slot) => std::mem::replace(slot, v) == NONE,
                None => l.map.insert(ext, v).is_none(),
            };
            if !fresh {
                return Err(ext);
            }
        }
        Ok(l)
    }

    /// Records `ext -> v`; `count` is the number of vertices after this insert.
    pub fn insert(&mut self, ext: u64, v: VertexId, count: usize) {
        if (ext as usize) < self.flat.len() {
            self.flat[ext as usize] = v;
            return;
        }
        let limit = flat_limit(count);
        if ext < limit {
            self.flat.resize(flat_len_for(ext, limit), NONE);
            // Ids that now fit move out of the map, so `get` never needs to look in both.
            let moved: Vec<(u64, VertexId)> = self
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

/// Ids below this go to the flat array when the dictionary holds `count` vertices.
fn flat_limit(count: usize) -> u64 {
    MIN_FLAT.max(FLAT_FACTOR * count as u64).min(1 << 31)
}

/// Length of a flat array that covers id `ext` (below `limit`): grown by powers of two.
fn flat_len_for(ext: u64, limit: u64) -> usize {
    (ext + 1).next_power_of_two().min(limit).max(ext + 1) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_lookup_answers_like_one_grown_by_inserts() {
        // Small ids (flat array) and huge ones (hash map), in a scrambled order.
        let ids: Vec<u64> = (0..5000u64)
            .map(|i| {
                if i % 7 == 0 {
                    u64::MAX - i
                } else {
                    (i * 7919) % 20011
                }
            })
            .collect();
        let built = Lookup::build(&ids).unwrap();
        let mut grown = Lookup::default();
        for (v, &e) in ids.iter().enumerate() {
            grown.insert(e, v as VertexId, v + 1);
        }
        for probe in ids.iter().copied().chain([1, 20011, u64::MAX - 1, 1 << 40]) {
            assert_eq!(built.get(probe), grown.get(probe), "id {probe}");
        }
    }

    #[test]
    fn a_duplicate_id_is_refused_in_either_part() {
        assert_eq!(Lookup::build(&[3, 9, 3]).err(), Some(3));
        assert_eq!(
            Lookup::build(&[u64::MAX, 1, u64::MAX]).err(),
            Some(u64::MAX)
        );
    }
}
