//! A slab arena of `u32` slots, carved into chunks that are never freed one by one: the
//! whole arena goes when its memtable is sealed. No per-edge heap allocation.

/// Slots addressable within one slab (the low 16 bits of an address).
const SLAB_BITS: u32 = 16;
const MAX_SLAB: usize = 1 << SLAB_BITS;
const FIRST_SLAB: usize = 1 << 12;

/// Slabs that grow from 16 KiB to 256 KiB, addressed by `slab << 16 | offset`.
#[derive(Default)]
pub struct Arena {
    slabs: Vec<Box<[u32]>>,
    /// With weights: one f64 slab per slab, same addresses (a neighbor's weight sits at
    /// its neighbor id's address).
    wslabs: Option<Vec<Box<[f64]>>>,
    used: usize,
    bytes: usize,
}

impl Arena {
    /// An arena that also keeps an f64 weight per slot.
    pub fn weighted() -> Self {
        Arena {
            wslabs: Some(Vec::new()),
            ..Self::default()
        }
    }

    /// Mutable access to the weight at `addr` (weighted arenas only).
    #[inline]
    pub fn weight_mut(&mut self, addr: u32) -> &mut f64 {
        let s = &mut self.wslabs.as_mut().expect("weighted arena")[(addr >> SLAB_BITS) as usize];
        &mut s[(addr & (MAX_SLAB as u32 - 1)) as usize]
    }

    /// The `n` weights starting at `addr` (weighted arenas only).
    #[inline]
    pub fn weights(&self, addr: u32, n: usize) -> &[f64] {
        let s = &self.wslabs.as_ref().expect("weighted arena")[(addr >> SLAB_BITS) as usize];
        let o = (addr & (MAX_SLAB as u32 - 1)) as usize;
        &s[o..o + n]
    }

    /// Whether the arena keeps weights.
    pub fn is_weighted(&self) -> bool {
        self.wslabs.is_some()
    }

    /// Allocates a chunk of `n` slots (`n <= 65536`) and returns its address.
    #[inline]
    pub fn alloc(&mut self, n: usize) -> u32 {
        let fits = self.slabs.last().is_some_and(|s| self.used + n <= s.len());
        if !fits {
            let size = self
                .slabs
                .last()
                .map_or(FIRST_SLAB, |s| (s.len() * 2).min(MAX_SLAB))
                .max(n);
            self.slabs.push(vec![0u32; size].into_boxed_slice());
            self.bytes += size * 4;
            if let Some(w) = &mut self.wslabs {
                w.push(vec![0f64; size].into_boxed_slice());
                self.bytes += size * 8;
            }
            self.used = 0;
        }
        let addr = ((self.slabs.len() - 1) as u32) << SLAB_BITS | self.used as u32;
        self.used += n;
        addr
    }

    /// The `n` slots starting at `addr`.
    #[inline]
    pub fn slots(&self, addr: u32, n: usize) -> &[u32] {
        let s = &self.slabs[(addr >> SLAB_BITS) as usize];
        let o = (addr & (MAX_SLAB as u32 - 1)) as usize;
        &s[o..o + n]
    }

    /// Mutable access to the slot at `addr`.
    #[inline]
    pub fn slot_mut(&mut self, addr: u32) -> &mut u32 {
        let s = &mut self.slabs[(addr >> SLAB_BITS) as usize];
        &mut s[(addr & (MAX_SLAB as u32 - 1)) as usize]
    }

    /// Address of the slot at `addr`, for prefetching.
    #[inline]
    pub fn slot_ptr(&self, addr: u32) -> *const u32 {
        let s = &self.slabs[(addr >> SLAB_BITS) as usize];
        s[(addr & (MAX_SLAB as u32 - 1)) as usize..].as_ptr()
    }

    /// DRAM held by the slabs.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_do_not_overlap() {
        let mut a = Arena::default();
        let mut chunks = vec![];
        for i in 0..5000u32 {
            let n = 4 << (i % 7);
            let addr = a.alloc(n);
            for k in 0..n as u32 {
                *a.slot_mut(addr + k) = i;
            }
            chunks.push((addr, n, i));
        }
        for (addr, n, i) in chunks {
            assert!(a.slots(addr, n).iter().all(|&x| x == i));
        }
    }
}
