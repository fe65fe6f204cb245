//! Compressed neighbor lists: the byte code of a packed direction (FORMAT.md, "Packed
//! directions").
//!
//! Each vertex's sorted neighbors are one *stream*: its degree, then the ids as gaps
//! (`x[i] - x[i-1] - 1`, the lists being strictly increasing) bit-packed in blocks of 16 with
//! one width byte per block. Long lists are cut into chunks of [`CHUNK`] ids whose first ids
//! and byte positions sit in a skip table at the front, so a lookup binary-searches the table
//! and decodes one chunk: O(log d + CHUNK).
//!
//! The code was chosen by measurement on Kronecker graphs (ids of a random permutation, the
//! hardest case: gaps of 10-14 bits) against LEB128 varints, stream-vbyte, Elias-Fano and
//! blocks of 32 and 128: blocks of 16 give the smallest lists of the fast codes (1.52 B per
//! id at Kron20, 1.63 at Kron22, against 1.69/1.85 for varints), and fixed-width blocks
//! decode without a data-dependent branch per id, where varints mispredict on every change of
//! length (a scan with varints took 2.7x a plain array; with these blocks 1.2-1.3x when each
//! id is used). No maintained crate packs sorted lists of both id widths in partial blocks
//! (`bitpacking` is u32-only and packs whole blocks of 32 or 128), so the code is here.
//!
//! Decoding reads 8 bytes at a time with unaligned loads and relies on two facts checked
//! before any list is read (see [`check_stream`], run when a run is verified): every stream
//! ends exactly where the index says, with widths the id type can hold, and the section has
//! [`SLACK`] zero bytes after the last stream.

use crate::types::{VertexId, ID_BYTES, ID_WIDTH};

#[cfg(all(target_arch = "x86_64", not(feature = "wide-ids")))]
mod simd;

/// Ids per chunk of a long list (1 first id + 128 gaps: 8 full blocks).
pub const CHUNK: usize = 129;
/// Gaps per block.
pub const BLOCK: usize = 16;
/// Zero bytes after the last stream: a block is decoded with 8-byte loads (16-byte ones for
/// gaps wider than 56 bits, in 64-bit builds).
pub const SLACK: usize = 16;
/// The widest gap a block may hold.
pub const MAX_WIDTH: u32 = ID_WIDTH;

/// Appends `x` as a LEB128 varint.
#[inline]
fn put_varint(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push(x as u8 | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// Reads a varint at `*p` (bounds-checked: used on cold paths and by the checker).
#[inline]
fn get_varint(b: &[u8], p: &mut usize) -> Option<u64> {
    let mut x = 0u64;
    for shift in (0..64).step_by(7) {
        let c = *b.get(*p)?;
        *p += 1;
        x |= u64::from(c & 0x7f) << shift;
        if c < 0x80 {
            return Some(x);
        }
    }
    None
}

/// Bits needed for `g`.
#[inline]
fn width(g: u64) -> u32 {
    64 - g.leading_zeros()
}

/// Appends the stream of one vertex: `adds` sorted strictly ascending and non-empty; `eoff`,
/// in weighted runs, the position of its first neighbor in the direction's weights.
pub fn encode(adds: &[VertexId], eoff: Option<u64>, out: &mut Vec<u8>) {
    debug_assert!(!adds.is_empty());
    debug_assert!(
        adds.windows(2).all(|w| w[0] < w[1]),
        "lists are sorted, no repeats"
    );
    put_varint(out, adds.len() as u64);
    if let Some(e) = eoff {
        put_varint(out, e);
    }
    if adds.len() <= CHUNK {
        put_varint(out, adds[0] as u64);
        put_gaps(adds, out);
        return;
    }
    let table_at = out.len();
    let chunks = adds.chunks(CHUNK);
    let entry = ENTRY;
    out.resize(table_at + chunks.len() * entry, 0);
    let body = out.len();
    for (c, ids) in chunks.enumerate() {
        let rel = out.len() - body;
        // A stream of a u32 build stays far below 4 GiB: gaps sum to under 2^32, so wide
        // blocks are few (see FORMAT.md); 64-bit builds store 64-bit positions.
        assert!(
            ID_BYTES == 8 || rel <= u32::MAX as usize,
            "stream of {} ids outgrew 32-bit positions",
            adds.len()
        );
        let e = table_at + c * entry;
        out[e..e + ID_BYTES].copy_from_slice(&ids[0].to_le_bytes());
        out[e + ID_BYTES..e + entry].copy_from_slice(&(rel as u64).to_le_bytes()[..ID_BYTES]);
        put_gaps(ids, out);
    }
}

/// Appends the gaps of `ids` (after its first) in blocks of [`BLOCK`].
fn put_gaps(ids: &[VertexId], out: &mut Vec<u8>) {
    let gaps = ids.windows(2).map(|w| (w[1] - w[0] - 1) as u64);
    let gaps: Vec<u64> = gaps.collect();
    for blk in gaps.chunks(BLOCK) {
        let w = blk.iter().map(|&g| width(g)).max().unwrap_or(0);
        assert!(w <= MAX_WIDTH, "gap of {w} bits in a {ID_WIDTH}-bit build");
        out.push(w as u8);
        let start = out.len();
        out.resize(start + (blk.len() * w as usize).div_ceil(8), 0);
        let mut bit = 0usize;
        for &g in blk {
            // Spread over at most 9 bytes: w <= 64 and the shift is below 8.
            let v = u128::from(g) << (bit & 7);
            for (k, byte) in v.to_le_bytes().iter().enumerate() {
                if let Some(o) = out.get_mut(start + bit / 8 + k) {
                    *o |= byte;
                }
            }
            bit += w as usize;
        }
    }
}

/// The first bytes of a stream: degree, weight position (weighted runs) and where the ids
/// start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// Number of ids.
    pub degree: usize,
    /// Position of the first weight (0 in unweighted runs).
    pub eoff: u64,
    /// Byte position of the first id's encoding (the varint, or the skip table).
    pub body: usize,
}

/// Reads the head of the stream at `p`; `None` if the stream is empty (degree 0) or cut.
#[inline]
pub fn head(b: &[u8], p: usize, end: usize, weighted: bool) -> Option<Head> {
    if p >= end {
        return None;
    }
    let mut q = p;
    let degree = get_varint(b, &mut q)? as usize;
    let eoff = if weighted { get_varint(b, &mut q)? } else { 0 };
    Some(Head {
        degree,
        eoff,
        body: q,
    })
}

/// Number of ids of the stream `b[p..end]`.
#[inline]
pub fn degree(b: &[u8], p: usize, end: usize) -> usize {
    head(b, p, end, false).map_or(0, |h| h.degree)
}

/// Decodes a full block of width `W` at `q` after `x`, handing each id to `f` until it
/// returns true; leaves the last id decoded in `x`.
///
/// # Safety
/// `q` must point into a checked packed section (see the module docs): `16 * W` bits at
/// `q` plus 8 bytes are readable.
#[inline(always)]
unsafe fn emit16<const W: u32, F: FnMut(VertexId) -> bool + ?Sized>(
    q: *const u8,
    x: &mut VertexId,
    f: &mut F,
) -> bool {
    let mask: u64 = if W == 0 { 0 } else { u64::MAX >> (64 - W) };
    let mut i = 0usize;
    while i < BLOCK {
        let bit = i * W as usize;
        // SAFETY: the caller guarantees the block plus SLACK bytes are readable.
        let word = unsafe { std::ptr::read_unaligned(q.add(bit >> 3) as *const u64) };
        *x += ((u64::from_le(word) >> (bit & 7)) & mask) as VertexId + 1;
        if f(*x) {
            return true;
        }
        i += 1;
    }
    false
}

/// Calls [`emit16`] for width `$w`, one of the listed literals (the caller checks it is at
/// most 32).
macro_rules! dispatch_emit {
    ($w:expr, $q:expr, $x:expr, $f:expr; $($n:literal)*) => {
        match $w {
            $($n => emit16::<$n, _>($q, $x, $f),)*
            w => unreachable!("width {w} over 32 in a specialised block"),
        }
    };
}

/// Chunks of at least this many gaps decode their full blocks with [`emit16`].
const SPECIALISE_FROM: usize = 48;

/// Decodes `n` gaps in blocks starting at `*p`, continuing from `x`, handing each id to `f`
/// until it returns true.
///
/// Ids go to `f` as they are decoded: with the kernel's closure inlined (the views inline
/// `find` on purpose) its accumulators stay in registers and the decode overlaps the
/// kernel's loads.
///
/// Two decoders, chosen by the chunk's length, because two costs trade places:
/// - Short chunks (under [`SPECIALISE_FROM`] gaps, most lists of a sparse graph) go
///   through one loop with the width as a variable: a shift, mask and add per id, and
///   one mispredicted exit per block. A jump on each block's width to a loop specialised
///   for it mispredicted whenever a list's widths changed, which in short lists is
///   often: PageRank on Kron20 ran 1.5x a plain list that way, 1.33x with this loop.
/// - Long chunks' full blocks take that jump to [`emit16`], whose shifts are constants:
///   a hub's widths repeat, so the jump predicts, and fewer instructions per id keep
///   more of a kernel's cache misses in flight. PageRank on Kron24 (scores beyond L3)
///   ran 1.6-1.9x a plain list with the generic loop alone, about 1.4x this way.
///
/// # Safety
/// `b` must be a checked packed section and `*p..` the gap blocks of one chunk of a stream
/// that [`check_stream`] accepted.
#[inline(always)]
unsafe fn gaps<F: FnMut(VertexId) -> bool>(
    b: &[u8],
    p: &mut usize,
    n: usize,
    x: VertexId,
    f: &mut F,
) -> bool {
    // Debug builds (the tests') decode through one instance: 33 widths of `emit16` for
    // every kernel's closure were a sixth of the library's code and of its build time.
    #[cfg(debug_assertions)]
    let f: &mut dyn FnMut(VertexId) -> bool = f;
    // SAFETY: forwarded from the caller.
    unsafe { decode_gaps(b, p, n, x, f) }
}

/// The body of [`gaps`], generic over the closure in release builds only.
///
/// # Safety
/// As for [`gaps`].
#[inline(always)]
unsafe fn decode_gaps<F: FnMut(VertexId) -> bool + ?Sized>(
    b: &[u8],
    p: &mut usize,
    n: usize,
    mut x: VertexId,
    f: &mut F,
) -> bool {
    let base = b.as_ptr();
    let mut q = base.wrapping_add(*p);
    let mut left = n;
    while left > 0 {
        // SAFETY: the checker saw a width byte here, at most MAX_WIDTH.
        let w = unsafe { *q } as usize;
        q = q.wrapping_add(1);
        let mask = 1u64.checked_shl(w as u32).unwrap_or(0).wrapping_sub(1);
        let k = left.min(BLOCK);
        if n >= SPECIALISE_FROM && k == BLOCK && w <= 32 {
            // SAFETY: a full checked block, then SLACK bytes at the latest.
            let stop = unsafe {
                dispatch_emit!(w as u32, q, &mut x, f; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
            };
            if stop {
                return true;
            }
            q = q.wrapping_add(2 * w);
            left -= k;
            continue;
        }
        let mut bit = 0usize;
        for _ in 0..k {
            let gap = if MAX_WIDTH <= 56 || w <= 56 {
                // SAFETY: the checker saw this block; SLACK bytes follow the section.
                let word = unsafe { std::ptr::read_unaligned(q.add(bit >> 3) as *const u64) };
                (u64::from_le(word) >> (bit & 7)) & mask
            } else {
                // SAFETY: as above; SLACK covers a 16-byte load at the last gap.
                let word = unsafe { std::ptr::read_unaligned(q.add(bit >> 3) as *const u128) };
                ((u128::from_le(word) >> (bit & 7)) as u64) & mask
            };
            x += gap as VertexId + 1;
            bit += w;
            if f(x) {
                return true;
            }
        }
        q = q.wrapping_add((k * w).div_ceil(8));
        left -= k;
    }
    *p = q as usize - base as usize;
    false
}

/// Hands the ids of the stream at `h` to `f`, ascending, until it returns true; returns
/// whether it did.
///
/// # Safety
/// `b` must be a packed section whose streams [`check_stream`] accepted, and `h` the head of
/// one of them.
#[inline(always)]
pub unsafe fn find<F: FnMut(VertexId) -> bool>(b: &[u8], h: Head, mut f: F) -> bool {
    let mut p = h.body;
    if h.degree <= CHUNK {
        let Some(x) = get_varint(b, &mut p) else {
            return false;
        };
        let x = x as VertexId;
        // SAFETY: forwarded from the caller.
        return f(x) || unsafe { gaps(b, &mut p, h.degree - 1, x, &mut f) };
    }
    let chunks = h.degree.div_ceil(CHUNK);
    let mut p = h.body + chunks * ENTRY;
    for c in 0..chunks {
        let x = chunk_first(b, h, c);
        let len = CHUNK.min(h.degree - c * CHUNK);
        // SAFETY: forwarded from the caller; chunks follow each other.
        if f(x) || unsafe { gaps(b, &mut p, len - 1, x, &mut f) } {
            return true;
        }
    }
    false
}

/// Folds the ids of the stream at `h` into `acc`, ascending. With AVX2 each chunk is
/// decoded into a stack buffer (at most [`CHUNK`] ids, see `simd::decode_chunk`) first
/// and then folded in one loop, as a plain list is; that suits scans that use every id
/// (LCC's bitmap tests: 1.48x a plain list with [`find`], 1.2-1.3x this way). Folding
/// each block of 16 as it was unpacked, inside the AVX2 function, made LCC 1.46x. [`find`]
/// hands ids over as it decodes them instead, which is faster when the work per id is a
/// load that misses (PageRank's: 1.4x against 1.6x with a buffer) and stops early.
///
/// # Safety
/// As for [`find`].
#[inline(always)]
pub unsafe fn fold<A, F: FnMut(A, VertexId) -> A>(b: &[u8], h: Head, acc: A, mut f: F) -> A {
    #[cfg(all(target_arch = "x86_64", not(feature = "wide-ids")))]
    if simd::available() {
        let mut acc = acc;
        let mut buf = std::mem::MaybeUninit::<[VertexId; CHUNK]>::uninit();
        for c in 0..h.degree.div_ceil(CHUNK) {
            // SAFETY: forwarded from the caller; `c` is below the chunk count.
            let Some((first, mut p)) = (unsafe { chunk_at(b, h, c) }) else {
                return acc;
            };
            let len = CHUNK.min(h.degree - c * CHUNK);
            // SAFETY: forwarded; `buf` has room for CHUNK ids, and `decode_chunk` writes the
            // first `len`, which are all that is read.
            let ids = unsafe {
                simd::decode_chunk(b, &mut p, first, len, buf.as_mut_ptr().cast());
                std::slice::from_raw_parts(buf.as_ptr().cast::<VertexId>(), len)
            };
            for &y in ids {
                acc = f(acc, y);
            }
        }
        return acc;
    }
    let mut acc = Some(acc);
    // SAFETY: forwarded from the caller.
    unsafe {
        find(b, h, |y| {
            acc = acc.take().map(|a| f(a, y));
            false
        })
    };
    acc.expect("the fold keeps its value")
}

/// Bytes per skip-table entry: a chunk's first id and its offset.
const ENTRY: usize = 2 * ID_BYTES;

/// The first id of chunk `c` of a long stream, from its skip table.
fn chunk_first(b: &[u8], h: Head, c: usize) -> VertexId {
    read_id(b, h.body + c * ENTRY)
}

fn read_id(b: &[u8], at: usize) -> VertexId {
    VertexId::from_le_bytes(b[at..at + ID_BYTES].try_into().expect("id width"))
}

fn read_pos(b: &[u8], at: usize) -> usize {
    let mut w = [0u8; 8];
    w[..ID_BYTES].copy_from_slice(&b[at..at + ID_BYTES]);
    u64::from_le_bytes(w) as usize
}

/// Where chunk `c` of the stream at `h` starts: its first id and the position of its gap
/// blocks. Streams of at most [`CHUNK`] ids are one chunk whose first id is a varint.
///
/// # Safety
/// As for [`find`], with `c` below `h.degree.div_ceil(CHUNK)`.
#[inline]
unsafe fn chunk_at(b: &[u8], h: Head, c: usize) -> Option<(VertexId, usize)> {
    if h.degree <= CHUNK {
        debug_assert_eq!(c, 0);
        let mut p = h.body;
        let first = get_varint(b, &mut p)? as VertexId;
        return Some((first, p));
    }
    let chunks = h.degree.div_ceil(CHUNK);
    debug_assert!(c < chunks);
    let at = h.body + c * ENTRY;
    Some((
        chunk_first(b, h, c),
        h.body + chunks * ENTRY + read_pos(b, at + ID_BYTES),
    ))
}

/// The chunk of the stream at `h` that would hold `x`: the last one at or after `from`
/// whose first id is at most `x` (`from` itself when none is).
fn chunk_of(b: &[u8], h: Head, from: usize, x: VertexId) -> usize {
    if h.degree <= CHUNK {
        return 0;
    }
    let (mut lo, mut hi) = (from, h.degree.div_ceil(CHUNK));
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if chunk_first(b, h, mid) <= x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The position of `x` among the ids of the stream at `h`, if it holds `x`: a binary search
/// of the skip table, then one chunk decoded.
///
/// # Safety
/// As for [`find`].
pub unsafe fn position(b: &[u8], h: Head, x: VertexId) -> Option<usize> {
    let chunk = chunk_of(b, h, 0, x);
    // SAFETY: forwarded from the caller; `chunk_of` stays below the chunk count.
    let (first, mut p) = unsafe { chunk_at(b, h, chunk) }?;
    if x < first {
        return None;
    }
    let len = CHUNK.min(h.degree - chunk * CHUNK);
    let mut k = 0usize;
    let mut hit = x == first;
    if !hit {
        // SAFETY: forwarded from the caller.
        unsafe {
            gaps(b, &mut p, len - 1, first, &mut |y| {
                k += 1;
                hit = y == x;
                y >= x
            })
        };
    }
    hit.then_some(chunk * CHUNK + k)
}

/// How many of `ids` (ascending, no repeats) the stream at `h` holds. Each chunk that may
/// hold some of them is decoded once and merged with them, so intersecting a few ids with a
/// long list costs at most one chunk per id and never more than the list.
///
/// # Safety
/// As for [`find`].
pub unsafe fn count_among(b: &[u8], h: Head, mut ids: &[VertexId]) -> usize {
    debug_assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let chunks = h.degree.div_ceil(CHUNK);
    let mut hits = 0;
    let mut c = 0;
    while let Some(&x) = ids.first() {
        c = chunk_of(b, h, c, x);
        // The ids this chunk may hold: those below the next chunk's first id.
        let mine = if c + 1 < chunks {
            let next = chunk_first(b, h, c + 1);
            ids.partition_point(|&y| y < next)
        } else {
            ids.len()
        };
        let (here, later) = ids.split_at(mine);
        ids = later;
        // SAFETY: forwarded from the caller; `c` is below the chunk count.
        let Some((first, mut p)) = (unsafe { chunk_at(b, h, c) }) else {
            return hits;
        };
        let len = CHUNK.min(h.degree - c * CHUNK);
        let mut i = 0;
        let mut step = |y: VertexId| {
            while here[i] < y {
                i += 1;
                if i == here.len() {
                    return true;
                }
            }
            if here[i] == y {
                hits += 1;
                i += 1;
            }
            i == here.len()
        };
        if !step(first) {
            // SAFETY: forwarded from the caller.
            unsafe { gaps(b, &mut p, len - 1, first, &mut step) };
        }
        c += 1;
        if c == chunks {
            break;
        }
    }
    hits
}

/// Decodes the stream at `h` into `out` (cleared first).
///
/// # Safety
/// As for [`find`].
pub unsafe fn decode_into(b: &[u8], h: Head, out: &mut Vec<VertexId>) {
    out.clear();
    out.reserve(h.degree);
    // SAFETY: forwarded from the caller.
    unsafe {
        find(b, h, |x| {
            out.push(x);
            false
        })
    };
}

/// Checks the stream `b[p..end]` as a reader will walk it, bounds-checked: its head, skip
/// table, block widths and lengths, and that its ids increase and stay at or below `space`
/// (pass `VertexId::MAX` to allow any id). Returns
/// its head (`None` for an empty stream). `b` is the whole section, [`SLACK`] included.
pub fn check_stream(
    b: &[u8],
    p: usize,
    end: usize,
    weighted: bool,
    space: u64,
) -> Result<Option<Head>, String> {
    if p == end {
        return Ok(None);
    }
    let h = head(&b[..end], p, end, weighted).ok_or("stream head cut short")?;
    if h.degree == 0 {
        return Err("stream of a vertex without neighbors is not empty".into());
    }
    let mut c = StreamCheck {
        b,
        end,
        space,
        q: h.body,
        last: None,
        seen: 0,
    };
    let check_first = |first: u64| match first >= space {
        true => Err(format!(
            "neighbor id {first} is beyond the run's vertex space"
        )),
        false => Ok(first as VertexId),
    };
    if h.degree <= CHUNK {
        let first = get_varint(&b[..end], &mut c.q).ok_or("first id cut short")?;
        c.chunk(check_first(first)?, h.degree)?;
    } else {
        let chunks = h.degree.div_ceil(CHUNK);
        let body = h
            .body
            .checked_add(chunks.checked_mul(ENTRY).ok_or("degree out of range")?)
            .filter(|&x| x <= end)
            .ok_or("skip table cut short")?;
        c.q = body;
        for k in 0..chunks {
            let at = h.body + k * ENTRY;
            let first = check_first(read_id(b, at) as u64)?;
            if body + read_pos(b, at + ID_BYTES) != c.q {
                return Err("skip table does not point at its chunk".into());
            }
            c.chunk(first, CHUNK.min(h.degree - k * CHUNK))?;
        }
    }
    if c.q != end {
        return Err("stream is longer than its ids".into());
    }
    debug_assert_eq!(c.seen, h.degree);
    Ok(Some(h))
}

/// Where [`check_stream`] is in a stream: reading at `q` (below `end`), the last id read.
struct StreamCheck<'a> {
    b: &'a [u8],
    end: usize,
    space: u64,
    q: usize,
    last: Option<VertexId>,
    seen: usize,
}

impl StreamCheck<'_> {
    /// Checks a chunk of `len` ids starting at `first`: its gap blocks, bounds-checked.
    fn chunk(&mut self, first: VertexId, len: usize) -> Result<(), String> {
        if self.last.is_some_and(|l| first <= l) {
            return Err("ids do not increase".into());
        }
        let mut x = first as u64;
        let mut n = len - 1;
        while n > 0 {
            let k = n.min(BLOCK);
            x = self.block(x, k)?;
            n -= k;
        }
        if x > self.space {
            return Err(format!("neighbor id {x} is out of range"));
        }
        self.last = Some(x as VertexId);
        self.seen += len;
        Ok(())
    }

    /// Checks a gap block of `k` gaps after id `x`; returns the last id it gives.
    fn block(&mut self, mut x: u64, k: usize) -> Result<u64, String> {
        let b = self.b;
        let w = *b
            .get(self.q)
            .filter(|_| self.q < self.end)
            .ok_or("block cut short")? as u32;
        self.q += 1;
        if w > MAX_WIDTH {
            return Err(format!("block width {w} is out of range"));
        }
        let bytes = (k * w as usize).div_ceil(8);
        if self.q + bytes > self.end {
            return Err("block cut short".into());
        }
        let mask = if w == 0 { 0 } else { u64::MAX >> (64 - w) };
        for i in 0..k {
            let bit = i * w as usize;
            let mut word = [0u8; 16];
            let from = self.q + bit / 8;
            let avail = b.len().saturating_sub(from).min(16);
            word[..avail].copy_from_slice(&b[from..][..avail]);
            let gap = ((u128::from_le_bytes(word) >> (bit & 7)) as u64) & mask;
            x = (x.checked_add(gap))
                .and_then(|x| x.checked_add(1))
                .ok_or("neighbor id overflows")?;
        }
        self.q += bytes;
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn section(lists: &[Vec<VertexId>], weighted: bool) -> (Vec<u8>, Vec<usize>) {
        let mut b = Vec::new();
        let mut idx = vec![0];
        let mut e = 0u64;
        for l in lists {
            if !l.is_empty() {
                encode(l, weighted.then_some(e), &mut b);
                e += l.len() as u64;
            }
            idx.push(b.len());
        }
        b.resize(b.len() + SLACK, 0);
        (b, idx)
    }

    fn lists() -> impl Strategy<Value = Vec<Vec<VertexId>>> {
        let list = prop_oneof![
            proptest::collection::btree_set(0..1000 as VertexId, 0..40),
            proptest::collection::btree_set(0..VertexId::MAX, 0..300),
            proptest::collection::btree_set(0..5000 as VertexId, 100..1000),
        ];
        proptest::collection::vec(list.prop_map(|s| s.into_iter().collect()), 1..8)
    }

    /// Every width through every gap decoder: a list long enough for the specialised full
    /// blocks and one short enough for the generic loop, with gaps using every bit, and
    /// both folded (through the vector decoder where the CPU has one).
    #[test]
    fn both_gap_decoders_take_every_width() {
        for w in 0..=32.min(MAX_WIDTH) {
            let top = if w == 0 { 0 } else { u64::MAX >> (64 - w) };
            for n in [SPECIALISE_FROM + 17, SPECIALISE_FROM - 1] {
                let mut x = 3 as VertexId;
                let mut l = vec![x];
                for i in 0..n as u64 {
                    // The first gap sets the width (its top bit and most below it); the
                    // rest stay small, so even a width of 32 leaves the ids in range.
                    let gap = if i == 0 {
                        top & !(top >> 1) | top >> 2
                    } else {
                        (i * 7919) & 0xffff & top
                    };
                    x += gap as VertexId + 1;
                    l.push(x);
                }
                let (mut b, idx) = section(std::slice::from_ref(&l), false);
                let h = check_stream(&b, idx[0], idx[1], false, VertexId::MAX as u64)
                    .unwrap()
                    .unwrap();
                let mut out = Vec::new();
                // SAFETY: checked above.
                unsafe {
                    find(&b, h, |y| {
                        out.push(y);
                        false
                    })
                };
                assert_eq!(out, l, "width {w}, {n} gaps");
                // The folds: near the section's end (where the vector decoder leaves
                // blocks to the scalar one) and, with bytes after it, every block.
                for pad in [0, 64] {
                    b.resize(b.len() + pad, 0);
                    // SAFETY: as above; bytes after the section change nothing.
                    let folded = unsafe {
                        fold(&b, h, Vec::new(), |mut v, y| {
                            v.push(y);
                            v
                        })
                    };
                    assert_eq!(folded, l, "fold, width {w}, {n} gaps, {pad} bytes after");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn streams_decode_to_their_lists_and_find_every_id(ls in lists(), weighted: bool) {
            let (b, idx) = section(&ls, weighted);
            let mut e = 0u64;
            for (i, l) in ls.iter().enumerate() {
                let h = check_stream(&b, idx[i], idx[i + 1], weighted, VertexId::MAX as u64)
                    .unwrap();
                prop_assert_eq!(h.map_or(0, |h| h.degree), l.len());
                prop_assert_eq!(degree(&b, idx[i], idx[i + 1]), l.len());
                let Some(h) = h else { continue };
                prop_assert_eq!(h.eoff, if weighted { e } else { 0 });
                e += l.len() as u64;
                let mut out = Vec::new();
                // SAFETY: checked above.
                unsafe { decode_into(&b, h, &mut out) };
                prop_assert_eq!(&out, l);
                // SAFETY: as above.
                let folded = unsafe { fold(&b, h, Vec::new(), |mut v, x| { v.push(x); v }) };
                prop_assert_eq!(&folded, l);
                for (k, &x) in l.iter().enumerate() {
                    prop_assert_eq!(unsafe { position(&b, h, x) }, Some(k));
                    if x > 0 && (k == 0 || l[k - 1] != x - 1) {
                        prop_assert_eq!(unsafe { position(&b, h, x - 1) }, None);
                    }
                }
                prop_assert_eq!(unsafe { position(&b, h, l[l.len() - 1].saturating_add(1)) }
                    .filter(|_| l[l.len() - 1] != VertexId::MAX), None);
                // Early exit stops at the id asked for.
                let mid = l[l.len() / 2];
                let mut seen = 0;
                let found = unsafe { find(&b, h, |x| { seen += 1; x == mid }) };
                prop_assert!(found);
                prop_assert_eq!(seen, l.len() / 2 + 1);
            }
        }

        #[test]
        fn count_among_is_the_size_of_the_intersection(
            ls in lists(),
            probes in proptest::collection::vec(
                proptest::collection::btree_set(0..5000 as VertexId, 0..200),
                8,
            ),
        ) {
            let (b, idx) = section(&ls, false);
            for (i, l) in ls.iter().enumerate() {
                let h = check_stream(&b, idx[i], idx[i + 1], false, VertexId::MAX as u64).unwrap();
                let Some(h) = h else { continue };
                let set: std::collections::BTreeSet<VertexId> = l.iter().copied().collect();
                // Probes drawn apart from the list, and some of its own ids mixed in.
                let mut ids = probes[i].clone();
                ids.extend(l.iter().step_by(3).copied());
                let ids: Vec<VertexId> = ids.into_iter().collect();
                let want = ids.iter().filter(|x| set.contains(x)).count();
                // SAFETY: checked above.
                prop_assert_eq!(unsafe { count_among(&b, h, &ids) }, want);
                prop_assert_eq!(unsafe { count_among(&b, h, l) }, l.len());
                prop_assert_eq!(unsafe { count_among(&b, h, &[]) }, 0);
            }
        }
    }

    #[test]
    fn every_flipped_byte_is_refused_or_decodes_to_some_list_within_bounds() {
        // The checksums catch damage first; this is the second line: no flip makes the
        // checker pass a stream a reader would walk out of bounds.
        let ls: Vec<Vec<VertexId>> = vec![
            (0..400).map(|i| i * 7 + 3).collect(),
            vec![5, 9, 1000],
            (10..30).collect(),
        ];
        let (b, idx) = section(&ls, false);
        for at in 0..idx[3] {
            for bit in [0x01u8, 0x10, 0x80] {
                let mut c = b.clone();
                c[at] ^= bit;
                for i in 0..3 {
                    if let Ok(Some(h)) = check_stream(&c, idx[i], idx[i + 1], false, (1 << 20) - 1)
                    {
                        let mut out = Vec::new();
                        // SAFETY: the checker accepted it.
                        unsafe { decode_into(&c, h, &mut out) };
                        assert_eq!(out.len(), h.degree);
                        assert!(out.windows(2).all(|w| w[0] < w[1]));
                        assert!(out.iter().all(|&x| (x as u64) < 1 << 20));
                    }
                }
            }
        }
    }

    #[test]
    fn a_stream_past_the_vertex_space_or_cut_short_is_refused() {
        let (b, idx) = section(&[vec![3, 70, 900]], false);
        assert!(check_stream(&b, 0, idx[1], false, 899)
            .unwrap_err()
            .contains("out of range"));
        assert!(check_stream(&b, 0, idx[1] - 1, false, 1000).is_err());
        assert!(check_stream(&b, 0, idx[1], false, 1000).is_ok());
    }

    #[test]
    fn kronecker_like_gaps_take_under_two_bytes_per_id() {
        // A hub of 5000 random ids out of 2^20: gaps near 200, 8-9 bits.
        let mut x = 12345u64;
        let mut s = std::collections::BTreeSet::new();
        while s.len() < 5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s.insert((x >> 44) as VertexId);
        }
        let l: Vec<VertexId> = s.into_iter().collect();
        let mut b = Vec::new();
        encode(&l, None, &mut b);
        assert!(
            b.len() < l.len() * 3 / 2,
            "{} bytes for {} ids",
            b.len(),
            l.len()
        );
    }
}
