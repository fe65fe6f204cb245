//! Graph500 Kronecker edge generation and the vertex permutation that scatters its hubs.

use super::{stream_rng, STREAM_PERM};
use rand::RngCore;

/// Quadrant thresholds as fractions of 2^16 (rounded): a = 0.57, a+b = 0.76, a+b+c = 0.95,
/// so d = 0.05. Sixteen bits per decision put the probabilities within 1e-5 of the
/// parameters and let one 64-bit draw decide four levels, which halves the RNG cost.
const A: u32 = ((57 << 16) + 50) / 100;
const AB: u32 = ((76 << 16) + 50) / 100;
const ABC: u32 = ((95 << 16) + 50) / 100;

/// A seeded pseudo-random permutation of `0..2^scale`, computed rather than stored.
///
/// Without it the hubs would all sit at small ids (quadrant a is (0,0)), which real graphs
/// don't do and which flatters locality; Graph500 and GAPBS permute for the same reason. A
/// stored Fisher–Yates table costs a cache miss per endpoint (a third of the generation time
/// at scale 22) and 8 GiB at scale 31; this keyed mix of bijections (xor, odd multiply and
/// xor-shift, all modulo 2^scale) costs a few arithmetic operations instead.
pub(super) struct VertexPerm {
    mask: u64,
    shift: u32,
    mul: [u64; 3],
    add: [u64; 2],
}

impl VertexPerm {
    /// The permutation for `scale` under `seed`.
    pub(super) fn new(scale: u32, seed: u64) -> Self {
        let mut rng = stream_rng(seed, STREAM_PERM, 0);
        let mut odd = || rng.next_u64() | 1;
        let mul = [odd(), odd(), odd()];
        let mut rng = stream_rng(seed, STREAM_PERM, 1);
        VertexPerm {
            mask: (1u64 << scale) - 1,
            // Shifting by about half the width mixes high bits into the low ones, which odd
            // multiplication alone never changes.
            shift: scale.div_ceil(2),
            mul,
            add: [rng.next_u64(), rng.next_u64()],
        }
    }

    /// The new name of vertex `v` (which must be below `2^scale`).
    #[inline]
    pub(super) fn apply(&self, v: u32) -> u32 {
        let m = self.mask;
        let s = self.shift;
        let mut x = (u64::from(v) ^ self.add[0]) & m;
        x = x.wrapping_mul(self.mul[0]) & m;
        x ^= x >> s;
        x = x.wrapping_mul(self.mul[1]).wrapping_add(self.add[1]) & m;
        x ^= x >> s;
        x = x.wrapping_mul(self.mul[2]) & m;
        x ^= x >> s;
        x as u32
    }
}

/// Fills `chunk` with Kronecker edges over `2^scale` vertices, renamed through `perm`.
pub(super) fn fill(
    chunk: &mut [(u32, u32)],
    rng: &mut impl RngCore,
    scale: u32,
    perm: &VertexPerm,
) {
    for edge in chunk {
        let (mut src, mut dst) = (0u32, 0u32);
        // Whole words first, in a fixed-length inner loop the compiler unrolls.
        for _ in 0..scale / 4 {
            let (s4, d4) = four_levels(rng.next_u64());
            src = (src << 4) | s4;
            dst = (dst << 4) | d4;
        }
        if !scale.is_multiple_of(4) {
            descend(rng.next_u64(), scale % 4, &mut src, &mut dst);
        }
        *edge = (perm.apply(src), perm.apply(dst));
    }
}

/// Four quadrant choices from the 16-bit lanes of `word`, first lane most significant, as
/// `(src bits, dst bits)`. Same result as four `descend` steps, but the four comparisons
/// are independent instead of a chain of shifts.
#[inline(always)]
fn four_levels(word: u64) -> (u32, u32) {
    let mut s = 0;
    let mut d = 0;
    for lane in 0..4 {
        let r = ((word >> (16 * lane)) & 0xFFFF) as u32;
        let src_bit = (r >= AB) as u32;
        let dst_bit = ((r >= A) ^ (r >= AB) ^ (r >= ABC)) as u32;
        s |= src_bit << (3 - lane);
        d |= dst_bit << (3 - lane);
    }
    (s, d)
}

/// Appends `levels` (at most 4) quadrant choices, 16 bits of `word` each, to `src` and `dst`.
#[inline(always)]
fn descend(mut word: u64, levels: u32, src: &mut u32, dst: &mut u32) {
    for _ in 0..levels {
        let r = (word & 0xFFFF) as u32;
        word >>= 16;
        // Quadrants a=(0,0), b=(0,1), c=(1,0), d=(1,1), chosen branch-free.
        let src_bit = (r >= AB) as u32;
        let dst_bit = ((r >= A) ^ (r >= AB) ^ (r >= ABC)) as u32;
        *src = (*src << 1) | src_bit;
        *dst = (*dst << 1) | dst_bit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection_for_every_small_scale() {
        for scale in 1..=16 {
            for seed in [0, 1, 0xDEAD_BEEF] {
                let perm = VertexPerm::new(scale, seed);
                let n = 1u32 << scale;
                let mut seen = vec![false; n as usize];
                for v in 0..n {
                    let p = perm.apply(v);
                    assert!(p < n && !seen[p as usize], "scale {scale} seed {seed}");
                    seen[p as usize] = true;
                }
            }
        }
    }

    #[test]
    fn permutation_depends_on_seed_and_moves_vertices() {
        let a = VertexPerm::new(20, 1);
        let b = VertexPerm::new(20, 2);
        let moved = (0..1000).filter(|&v| a.apply(v) != v).count();
        let differ = (0..1000).filter(|&v| a.apply(v) != b.apply(v)).count();
        assert!(
            moved > 990 && differ > 990,
            "moved {moved}, differ {differ}"
        );
    }

    #[test]
    fn four_levels_at_once_equals_one_at_a_time() {
        let mut rng = stream_rng(3, 3, 3);
        for _ in 0..10_000 {
            let w = rng.next_u64();
            let (mut s, mut d) = (5u32, 9u32);
            descend(w, 4, &mut s, &mut d);
            let (s4, d4) = four_levels(w);
            assert_eq!((s, d), ((5 << 4) | s4, (9 << 4) | d4));
        }
    }

    #[test]
    fn quadrant_frequencies_match_parameters() {
        // Scale 1 with the identity renaming exposes the raw quadrant choice.
        let identity = VertexPerm {
            mask: 1,
            shift: 1,
            mul: [1; 3],
            add: [0; 2],
        };
        let mut edges = vec![(0u32, 0u32); 200_000];
        fill(&mut edges, &mut stream_rng(1, 99, 0), 1, &identity);
        let mut counts = [0usize; 4];
        for &(s, d) in &edges {
            counts[(s * 2 + d) as usize] += 1;
        }
        let freq: Vec<f64> = counts.iter().map(|&c| c as f64 / 200_000.0).collect();
        for (f, want) in freq.iter().zip([0.57, 0.19, 0.19, 0.05]) {
            assert!((f - want).abs() < 0.01, "quadrant frequencies {freq:?}");
        }
    }
}
