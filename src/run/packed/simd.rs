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

/// Bytes past a block's first byte that [`unpack16`] may read: the second half's 16-byte
/// load starts at most `w + w / 2` bytes in.
pub(super) const fn reach(w: u32) -> usize {
    (w + w / 2) as usize + 16
}

/// How one width's 8 lanes are gathered: lane `i` takes the 4 bytes at its first byte
/// (counted from its 128-bit half's base: byte 0 for lanes 0-3, byte `4w / 8` for 4-7) and
/// shifts them right by its first bit within that byte.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Plan {
    shuffle: [u8; 32],
    shift: [u32; 8],
}

const fn plan(w: u32) -> Plan {
    let mut p = Plan {
        shuffle: [0; 32],
        shift: [0; 8],
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

/// Whether this CPU can run [`unpack16`] (cached by the standard library after the first
/// call: a relaxed load).
#[inline]
pub(super) fn available() -> bool {
    std::is_x86_feature_detected!("avx2")
}

/// Decodes the 16 gaps of width `w` at `q` into the ids following `x`; returns the last.
///
/// # Safety
/// The CPU must have AVX2 ([`available`]), `w` must be at most [`MAX_W`], and
/// [`reach`]`(w)` bytes at `q` must be readable.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn unpack16(w: u32, q: *const u8, x: VertexId, out: &mut [VertexId; 16]) {
    debug_assert!(w <= MAX_W);
    let p = &PLANS[w as usize];
    // SAFETY: `Plan` is 32-byte aligned and its arrays are 32 bytes each.
    let (shuffle, shift) = unsafe {
        (
            _mm256_load_si256(p.shuffle.as_ptr().cast()),
            _mm256_load_si256(p.shift.as_ptr().cast()),
        )
    };
    let mask = _mm256_set1_epi32(((1u64 << w) - 1) as u32 as i32);
    let one = _mm256_set1_epi32(1);
    let upper = _mm256_blend_epi32::<0xF0>(_mm256_setzero_si256(), _mm256_set1_epi32(-1));
    let mut base = _mm256_set1_epi32(x as i32);
    let hi = (4 * w / 8) as usize;
    for half in 0..2 {
        // The second 8 gaps start at bit 8w: byte w, with the same lane plan.
        let r = q.wrapping_add(half * w as usize);
        // SAFETY: the caller guarantees `reach(w)` readable bytes; this reads up to
        // `w + hi + 16` of them.
        let v = unsafe { _mm256_loadu2_m128i(r.add(hi).cast(), r.cast()) };
        let gaps = _mm256_and_si256(
            _mm256_srlv_epi32(_mm256_shuffle_epi8(v, shuffle), shift),
            mask,
        );
        // Prefix sum of gap + 1 within each 128-bit half, then across the halves.
        let mut s = _mm256_add_epi32(gaps, one);
        s = _mm256_add_epi32(s, _mm256_slli_si256::<4>(s));
        s = _mm256_add_epi32(s, _mm256_slli_si256::<8>(s));
        let low_total = _mm256_permutevar8x32_epi32(s, _mm256_set1_epi32(3));
        s = _mm256_add_epi32(s, _mm256_and_si256(low_total, upper));
        s = _mm256_add_epi32(s, base);
        // SAFETY: `out` has room for 16 ids; this writes 8 at 8 * half.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(half * 8).cast(), s) };
        base = _mm256_permutevar8x32_epi32(s, _mm256_set1_epi32(7));
    }
}

/// Decodes a chunk: `first`, then `len - 1` gaps in blocks at `b[*p..]`, into
/// `out[..len]`, and moves `*p` past the blocks. Blocks wider than [`MAX_W`], or too near
/// the end of `b` for the vector loads, are decoded by the scalar decoder.
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
    let mut x = first;
    let mut at = 1;
    while at < len {
        // SAFETY: the checker saw a width byte here, and a block of this width after it.
        let w = u32::from(unsafe { *b.get_unchecked(*p) });
        let k = (len - at).min(BLOCK);
        // SAFETY: a block's 16 slots start at 1 + 16j <= 113, inside the CHUNK (129) the
        // caller provides; both decoders only write them, and `slot[k - 1]` is read after.
        let slot = unsafe { &mut *out.add(at).cast::<[VertexId; BLOCK]>() };
        if w <= MAX_W && *p + 1 + reach(w) <= b.len() {
            // SAFETY: AVX2 and the bytes reached are checked; the block is in the section.
            unsafe { unpack16(w, b.as_ptr().add(*p + 1), x, slot) };
            *p += 1 + (k * w as usize).div_ceil(8);
        } else {
            let mut j = 0;
            // SAFETY: a checked block of `k` gaps at `*p`, with SLACK bytes after the
            // section; the scalar decoder moves `*p` past it.
            unsafe {
                super::gaps(b, p, k, x, &mut |y| {
                    slot[j] = y;
                    j += 1;
                    false
                })
            };
        }
        x = slot[k - 1];
        at += k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every width, against the scalar decoder, on gaps that use every bit of the width.
    #[test]
    fn unpack16_matches_the_scalar_decoder() {
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
                bytes.remove(0);
                bytes.resize(reach(w) + 8, 0);
                let want = &ids[1..];
                let mut out = [0; 16];
                // SAFETY: AVX2 checked, w <= MAX_W, `bytes` holds reach(w) bytes.
                unsafe { unpack16(w, bytes.as_ptr(), x, &mut out) };
                assert_eq!(&out[..], want, "width {w}, round {round}");
            }
        }
    }
}
