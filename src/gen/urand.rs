//! Uniform random edges: both endpoints uniform over all vertices.

use rand::RngCore;

/// Fills `chunk` with edges whose endpoints are uniform in `0..2^scale`.
pub(super) fn fill(chunk: &mut [(u32, u32)], rng: &mut impl RngCore, scale: u32) {
    // n is a power of two, so masking is exactly uniform; one draw yields both endpoints.
    let mask = ((1u64 << scale) - 1) as u32;
    for edge in chunk {
        let r = rng.next_u64();
        *edge = (r as u32 & mask, (r >> 32) as u32 & mask);
    }
}
