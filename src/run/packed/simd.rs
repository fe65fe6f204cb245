//! AVX2 unpacking of gap blocks, chosen at run time: a block's 16 gaps are gathered into
//! lanes with one byte shuffle per 8, shifted and masked per lane, and turned into ids by an
//! in-register prefix sum, where the scalar decoder spends a load, shift, mask and add per
//! id. Used where a kernel folds over whole lists (LCC's bitmap scans, bound by that
//! per-id work); kernels whose per-id work is a load that misses (PageRank) run faster on
//! the scalar decoder inlined into their loop (see `packed::fold`).
//!
//! Only 32-bit id builds on x86-64: a lane holds a gap of at most [`MAX_W`] bits read from
//! 4 bytes at its first byte.

use super::{BLOCK, CHUNK};
use crate::types::VertexId;
use std::arch::x86_64::*;

/// Widest gap unpacked here: a lane's 4 bytes hold its gap shifted by up to 7 bits.
pub(super) const MAX_W: u32 = 25;

/// Bytes past a block's first byte that [`steps16`] may read: the second half's 16-byte
/// load starts at most `w + w / 2` bytes in.
pub(super) const fn reach(w: u32) -> usize {
    (w + w / 2) as usize + 16
}

/// How one width's 8 lanes are gathered: lane `i` takes the 4 bytes at its first byte
/// (counted from its 128-bit half's base: byte 0 for lanes 0-3, byte `4w / 8` for 4-7) and
/// shifts them right by its first bit within that byte, then masks it to `w` bits.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Plan {
    shuffle: [u8; 32],
    shift: [u32; 8],
    mask: [u32; 8],
}

const fn plan(w: u32) -> Plan {
    let mut p = Plan {
        shuffle: [0; 32],
        shift: [0; 8],
        mask: [((1u64 << w) - 1) as u32; 8],
    };
    let mut i = 0;
    while i < 8 {
        let bit = i * w;
        let half_base = if i < 4 { 0 } else { 4 * w / 8 };
        let first = bit / 8 - half_base;
        let mut k = 0;
        while k < 4 {
            p.shuffle[(i * 4 + k) as usize] = (first + k) as u8;
            k += 1;
        }
        p.shift[i as usize] = bit % 8;
        i += 1;
    }
    p
}

static PLANS: [Plan; MAX_W as usize + 1] = {
    let mut ps = [plan(0); MAX_W as usize + 1];
    let mut w = 1;
    while w <= MAX_W {
        ps[w as usize] = plan(w);
        w += 1;
    }
    ps
};

/// Whether this CPU can run [`decode_chunk`] (cached by the standard library after the first
/// call: a relaxed load).
#[inline]
pub(super) fn available() -> bool {
    std::is_x86_feature_detected!("avx2")
}

/// The 16 gaps of width `w` at `q`, each plus one, as two vectors of 8 (gaps 0-7, 8-15).
///
/// # Safety
/// The CPU must have AVX2 ([`available`]), `w` must be at most [`MAX_W`], and
/// [`reach`]`(w)` bytes at `q` must be readable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn steps16(w: u32, q: *const u8) -> [__m256i; 2] {
    debug_assert!(w <= MAX_W);
    let p = &PLANS[w as usize];
    // SAFETY: `Plan` is 32-byte aligned and its arrays are 32 bytes each.
    let (shuffle, shift, mask) = unsafe {
        (
            _mm256_load_si256(p.shuffle.as_ptr().cast()),
            _mm256_load_si256(p.shift.as_ptr().cast()),
            _mm256_load_si256(p.mask.as_ptr().cast()),
        )
    };
    let one = _mm256_set1_epi32(1);
    let hi = (4 * w / 8) as usize;
    // The second 8 gaps start at bit 8w: byte w, with the same lane plan.
    [0, w as usize].map(|at| {
        let r = q.wrapping_add(at);
        // SAFETY: the caller guarantees `reach(w)` readable bytes; this reads up to
        // `w + hi + 16` of them.
        let v = unsafe { _mm256_loadu2_m128i(r.add(hi).cast(), r.cast()) };
        let gaps = _mm256_srlv_epi32(_mm256_shuffle_epi8(v, shuffle), shift);
        _mm256_add_epi32(_mm256_and_si256(gaps, mask), one)
    })
}

/// Inclusive prefix sum of the 8 lanes of `s`.
#[inline]
#[target_feature(enable = "avx2")]
fn prefix8(s: __m256i) -> __m256i {
    let s = _mm256_add_epi32(s, _mm256_slli_si256::<4>(s));
    let s = _mm256_add_epi32(s, _mm256_slli_si256::<8>(s));
    // Lane 3's sum, added to the upper half (lanes 4-7).
    let low3 = _mm256_shuffle_epi32::<0xFF>(s);
    _mm256_add_epi32(s, _mm256_permute2x128_si256::<0x08>(low3, low3))
}

/// Lane 7 of `s` in every lane.
#[inline]
#[target_feature(enable = "avx2")]
fn last_lane(s: __m256i) -> __m256i {
    _mm256_permutevar8x32_epi32(s, _mm256_set1_epi32(7))
}

/// Decodes a chunk: `first`, then `len - 1` gaps in blocks at `b[*p..]`, into
/// `out[..len]`, and moves `*p` past the blocks. Blocks wider than [`MAX_W`], or too near
/// the end of `b` for the vector loads, are decoded by the scalar decoder.
///
/// The running id stays a vector of 8 equal lanes: a block's prefix sums do not depend on
/// it, so the only step from one block to the next is one vector add (and the width byte
/// of the next block, whose position depends on this one's width).
///
/// # Safety
/// The CPU must have AVX2 ([`available`]); `b` must be a checked packed section and `*p..`
/// the gap blocks of a chunk of `len` ids of a stream [`super::check_stream`] accepted.
/// `out` must point to room for [`CHUNK`] ids.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn decode_chunk(
    b: &[u8],
    p: &mut usize,
    first: VertexId,
    len: usize,
    out: *mut VertexId,
) {
    debug_assert!((1..=CHUNK).contains(&len));
    // SAFETY: room for CHUNK ids per the caller.
    unsafe { out.write(first) };
    let mut base = _mm256_set1_epi32(first as i32);
    let mut at = 1;
    let mut q = *p;
    // Blocks starting before this have `reach(MAX_W)` bytes after their width byte.
    let vector_until = b.len().saturating_sub(1 + reach(MAX_W));
    while at < len {
        // SAFETY: the checker saw a width byte here, and a block of this width after it.
        let w = u32::from(unsafe { *b.get_unchecked(q) });
        let k = (len - at).min(BLOCK);
        // A block's 16 slots start at 1 + 16j <= 113, inside the CHUNK (129) the caller
        // provides; lanes past `k` of a chunk's last block are written and never read.
        let slot = out.wrapping_add(at);
        if w <= MAX_W && q < vector_until {
            // SAFETY: AVX2, w <= MAX_W and reach(w) bytes after the width byte, checked.
            let [lo, hi] = unsafe { steps16(w, b.as_ptr().add(q + 1)) };
            // Sums within the block first, off the chain from `base`.
            let lo = prefix8(lo);
            let hi = _mm256_add_epi32(prefix8(hi), last_lane(lo));
            // SAFETY: 16 slots at `slot`, as above.
            unsafe {
                _mm256_storeu_si256(slot.cast(), _mm256_add_epi32(lo, base));
                _mm256_storeu_si256(slot.add(8).cast(), _mm256_add_epi32(hi, base));
            }
            // Only a chunk's last block is partial, so `base` is wrong only when unused.
            base = _mm256_add_epi32(base, last_lane(hi));
            q += 1 + (k * w as usize).div_ceil(8);
        } else {
            let mut j = 0;
            let x = _mm256_extract_epi32::<0>(base) as VertexId;
            // SAFETY: a checked block of `k` gaps at `q`, with SLACK bytes after the
            // section; the scalar decoder moves `q` past it. `slot` has room for 16.
            unsafe {
                super::gaps(b, &mut q, k, x, &mut |y| {
                    slot.add(j).write(y);
                    j += 1;
                    false
                });
                base = _mm256_set1_epi32(slot.add(k - 1).read() as i32);
            }
        }
        at += k;
    }
    *p = q;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every width through the vector path of [`decode_chunk`] (a chunk of one full block,
    /// with room after it for the vector loads), against the encoder's input, on gaps that
    /// use every bit of the width.
    #[test]
    fn vector_blocks_decode_every_width() {
        if !available() {
            eprintln!("no AVX2 on this CPU: the scalar decoder is the only one");
            return;
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for w in 0..=MAX_W {
            for round in 0..50 {
                let gaps: Vec<u64> = (0..16)
                    .map(|i| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        let top = if w == 0 { 0 } else { u64::MAX >> (64 - w) };
                        if round == 0 || i % 5 == 0 {
                            top
                        } else {
                            seed & top
                        }
                    })
                    .collect();
                let x = 1000 as VertexId;
                let ids: Vec<VertexId> = std::iter::once(x)
                    .chain(gaps.iter().scan(x, |x, &g| {
                        *x += g as VertexId + 1;
                        Some(*x)
                    }))
                    .collect();
                // Packed by the encoder itself: a width byte, then the block.
                let mut bytes = Vec::new();
                super::super::put_gaps(&ids, &mut bytes);
                assert_eq!(u32::from(bytes[0]), w, "round {round} uses the full width");
                let used = bytes.len();
                assert_eq!(used, 1 + 2 * w as usize, "a full block is 2w bytes");
                bytes.resize(2 + reach(MAX_W) + 8, 0);
                let mut out = [0 as VertexId; CHUNK];
                let mut p = 0;
                // SAFETY: AVX2 checked; `bytes` is one block of 16 gaps as the checker
                // accepts them, and `out` has room for CHUNK ids.
                unsafe { decode_chunk(&bytes, &mut p, x, 17, out.as_mut_ptr()) };
                assert_eq!(&out[..17], &ids[..], "width {w}, round {round}");
                assert_eq!(p, used, "width {w}: moved past the block");
            }
        }
    }
}
