//! Deterministic in-place shuffling of edge lists.

use super::{below, stream_rng, STREAM_SHUFFLE};
use rand::RngCore;

/// Shuffles `edges` in place; the same `seed` always gives the same order.
///
/// Uses its own RNG stream, so shuffling a generated graph with the generator's seed does not
/// reuse the generator's random numbers.
pub fn shuffle(edges: &mut [(u32, u32)], seed: u64) {
    fisher_yates(edges, &mut stream_rng(seed, STREAM_SHUFFLE, 0));
}

/// Fisher–Yates with our own bounded sampler, so the order is fixed by this code rather than by
/// a library's choice of sampling algorithm.
fn fisher_yates<T>(items: &mut [T], rng: &mut impl RngCore) {
    for i in (1..items.len()).rev() {
        let j = below(rng, i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_is_a_deterministic_permutation() {
        let orig: Vec<(u32, u32)> = (0..10_000u32).map(|i| (i, i.wrapping_mul(7))).collect();
        let mut a = orig.clone();
        shuffle(&mut a, 11);
        assert_ne!(a, orig, "nothing moved");
        let mut b = orig.clone();
        shuffle(&mut b, 11);
        assert_eq!(a, b, "same seed, different order");
        let mut c = orig.clone();
        shuffle(&mut c, 12);
        assert_ne!(a, c, "seed ignored");
        a.sort_unstable();
        assert_eq!(a, orig, "not a permutation");
    }

    #[test]
    fn shuffle_handles_tiny_inputs() {
        let mut empty: Vec<(u32, u32)> = Vec::new();
        shuffle(&mut empty, 1);
        let mut one = vec![(3, 4)];
        shuffle(&mut one, 1);
        assert_eq!(one, vec![(3, 4)]);
    }
}
