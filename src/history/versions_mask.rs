//! A run read in place as of a commit: which of its entries came after the commit (a bit
//! each), and which edges present then it does not list (its spells that hold the commit).
//!
//! This is the filter of [`super::versions::layer_at`] without the copy: the filter writes
//! the kept entries out, which costs the graph's size in fresh DRAM; the mask marks the
//! others and leaves the run where it is (the snapshot's point view reads it). It holds for
//! a run with nothing before it (a compacted store's one run): no tombstones, and no
//! spells of edges older runs hold.

use super::ordinals::{with_ordinals, Spans};
use super::versions::{vertex_ops_as_of, DirVersions, Spells, Versions};
use crate::run::{DirData, Run};
use crate::types::VertexId;
use rayon::prelude::*;

/// One direction of a run as of a commit.
pub(crate) struct DirMask {
    /// Bit `p` set: the run's entry `p` was born after the commit.
    pub dead: Vec<u64>,
    /// Vertex `v`'s edges present at the commit that the run does not list live then are
    /// `extra[extra_at[v]..extra_at[v + 1]]`, ascending.
    pub extra_at: Vec<u32>,
    pub extra: Vec<VertexId>,
}

/// A run as of a commit.
pub(crate) struct RunMask {
    pub out: DirMask,
    /// `None` when the run has no in-direction (undirected stores).
    pub inn: Option<DirMask>,
    /// The vertex states as of the commit, as the run's own states are kept.
    pub vertex_ops: Vec<VertexId>,
}

/// `run` as of the commit with LSN `lsn` inside its range, by its versions `ver`, for a
/// snapshot of `n` vertices; `None` when a mask cannot read it (it has tombstones or
/// compressed lists, or spells of edges that older runs hold).
pub(crate) fn mask_at(run: &Run, ver: &Versions, lsn: u64, n: usize) -> Option<RunMask> {
    let q = ver.commits.get().partition_point(|&c| c <= lsn) as u32;
    let out = dir_mask(&run.out, &ver.out, q, n)?;
    let inn = match (&run.inn, &ver.inn) {
        (Some(d), Some(v)) => Some(dir_mask(d, v, q, n)?),
        (None, None) => None,
        _ => return None,
    };
    Some(RunMask {
        out,
        inn,
        vertex_ops: vertex_ops_as_of(run, ver, lsn),
    })
}

/// One direction as of ordinal `q`: the mask from the born column, one word per 64
/// entries; the settled edges from the spells that hold `q`.
fn dir_mask(d: &DirData, ver: &DirVersions, q: u32, n: usize) -> Option<DirMask> {
    if !d.dense || d.is_packed() || d.n_tombs() > 0 || ver.absent.len() > 0 {
        return None;
    }
    let (dead, settled) = with_ordinals!(&ver.ords, |c| (
        born_after(c.born.get(), q),
        settle_all(&ver.present, &c.present, q, n)
    ));
    if dead.len() != d.adds.get().len().div_ceil(64) {
        return None;
    }
    let (extra_at, extra) = settled?;
    Some(DirMask {
        dead,
        extra_at,
        extra,
    })
}

/// The born column as bits: one per entry, set when it was born after `q`. Each 64 entries
/// are compared at the column's own width into 64 bytes of 0 or 1 (a loop the compiler
/// turns into vector compares), which [`pack`] folds into the word: 0.37 ns an entry where
/// shifting each compare into place took 1 ns (33 M entries at Kron20).
fn born_after<B>(born: &[B], q: u32) -> Vec<u64>
where
    B: Copy + PartialOrd + TryFrom<u32> + Sync,
{
    // An ordinal past the width's largest was born by then, as every entry was.
    let Ok(q) = B::try_from(q) else {
        return vec![0; born.len().div_ceil(64)];
    };
    let word = |c: &[B]| {
        let mut bytes = [0u8; 64];
        for (x, &o) in bytes.iter_mut().zip(c) {
            *x = u8::from(o > q);
        }
        pack(&bytes)
    };
    born.par_chunks(64).with_min_len(1024).map(word).collect()
}

/// 64 bytes, each 0 or 1, as the bits of a word (byte `i` is bit `i`). Eight bytes at a
/// time: the multiply moves byte `i`'s bit to bit `56 + i`, and no two of its partial
/// products meet (so nothing carries into those bits).
#[inline(always)]
fn pack(bytes: &[u8; 64]) -> u64 {
    let mut w = 0;
    for (k, b) in bytes.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        w |= (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    w
}

/// Every vertex's settled edges, as `extra_at` (one more than `n`) and the edges: those
/// whose spell holds `q`, ascending per vertex. The vertices with spells are cut into
/// chunks; a first pass counts what each chunk keeps (two narrow columns read), so that
/// the second writes each chunk's edges straight into its own share of an array of
/// exactly their number, and each vertex's end into its place in `extra_at` (no array is
/// larger than what it holds, and nothing is moved after). `None` when a vertex lies
/// past `n`.
fn settle_all<B: bytemuck::Pod + Into<u32> + Sync>(
    sp: &Spells,
    ends: &Spans<B>,
    q: u32,
    n: usize,
) -> Option<(Vec<u32>, Vec<VertexId>)> {
    let vid = sp.vid.get();
    if vid.last().is_some_and(|&v| v as usize >= n) {
        return None;
    }
    let per = (vid.len() / (rayon::current_num_threads() * 8)).max(1024);
    let chunks: Vec<(usize, usize)> = (0..vid.len().div_ceil(per))
        .map(|c| (c * per, ((c + 1) * per).min(vid.len())))
        .collect();
    let kept: Vec<usize> = (chunks.par_iter())
        .map(|&(j0, j1)| count_holding(ends, sp.group(j0).start..sp.group(j1 - 1).end, q))
        .collect();
    let mut spans = Vec::with_capacity(chunks.len());
    let mut total = 0;
    for k in &kept {
        spans.push((total, total + k));
        total += k;
    }
    u32::try_from(total).ok()?;
    // Chunk `c`'s vertices `v` take `extra_at[v + 1]`: ascending, so chunks' places do not
    // meet.
    let places: Vec<(usize, usize)> = (chunks.iter())
        .map(|&(j0, j1)| (vid[j0] as usize + 1, vid[j1 - 1] as usize + 2))
        .collect();
    let (mut extra, mut extra_at) = (vec![0 as VertexId; total], vec![0u32; n + 1]);
    let shares = split_shares(&mut extra, &spans);
    let at = split_shares(&mut extra_at, &places);
    (chunks
        .par_iter()
        .zip(&spans)
        .zip(shares.into_iter().zip(at).collect::<Vec<_>>()))
    .for_each(|((&js, &(base, _)), (x, e))| settle_chunk(sp, ends, js, q, x, (e, base as u32)));
    // A vertex without spells ends where the one before it ends.
    for v in 1..extra_at.len() {
        extra_at[v] = extra_at[v].max(extra_at[v - 1]);
    }
    Some((extra_at, extra))
}

/// How many of the spells at positions `r` hold `q`: a count over two narrow columns,
/// which the compiler vectorizes.
fn count_holding<B: bytemuck::Pod + Into<u32>>(
    ends: &Spans<B>,
    r: std::ops::Range<usize>,
    q: u32,
) -> usize {
    let (from, to) = (&ends.from.get()[r.clone()], &ends.to.get()[r]);
    (from.iter().zip(to))
        .map(|(&f, &t)| usize::from((f.into() <= q) & (q < t.into())))
        .sum()
}

/// `all` cut into one share per span of positions (contiguous, ascending).
fn split_shares<'a, T>(all: &'a mut [T], spans: &[(usize, usize)]) -> Vec<&'a mut [T]> {
    let mut shares = Vec::with_capacity(spans.len());
    let (mut rest, mut at) = (all, 0);
    for &(lo, hi) in spans {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(lo - at);
        let (share, tail) = tail.split_at_mut(hi - lo);
        shares.push(share);
        rest = tail;
        at = hi;
    }
    shares
}

/// The spells of the vertices `vid[j0..j1]` settled as of `q`: the neighbor of each that
/// holds `q` written to `out` (which has room for exactly those), and where each vertex
/// `v`'s edges end, from `base` on, to `at[v - vid[j0]]` (the chunk's places in
/// `extra_at`). Each spell's neighbor is written and the next write covers it unless the
/// spell holds `q`: no branch on the spell, whose outcome varies spell by spell.
fn settle_chunk<B: bytemuck::Pod + Into<u32>>(
    sp: &Spells,
    ends: &Spans<B>,
    (j0, j1): (usize, usize),
    q: u32,
    out: &mut [VertexId],
    (at, base): (&mut [u32], u32),
) {
    let (from, to, nbr, vid) = (ends.from.get(), ends.to.get(), sp.nbr.get(), sp.vid.get());
    let mut k = 0;
    for j in j0..j1 {
        for i in sp.group(j) {
            // Past the last edge kept, a spell that does not hold `q` has no room, and
            // needs none.
            if let Some(x) = out.get_mut(k) {
                *x = nbr[i];
            }
            k += usize::from((from[i].into() <= q) & (q < to[i].into()));
        }
        at[(vid[j] - vid[j0]) as usize] = base + k as u32;
    }
    assert_eq!(k, out.len(), "the count and the settling disagree");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit `p` of word `p / 64`, one compare at a time.
    fn by_hand(born: &[u32], q: u32) -> Vec<u64> {
        let mut words = vec![0u64; born.len().div_ceil(64)];
        for (p, &o) in born.iter().enumerate() {
            words[p / 64] |= u64::from(o > q) << (p % 64);
        }
        words
    }

    #[test]
    fn born_after_sets_the_bit_of_each_entry_born_after_the_commit() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for len in [0, 1, 63, 64, 65, 130, 64 * 1024 + 3] {
            let born: Vec<u32> = (0..len).map(|_| next() % 300).collect();
            for q in [0, 1, 150, 254, 255, 299, 300, 70_000] {
                let want = by_hand(&born, q);
                let narrow: Vec<u16> = born.iter().map(|&o| o as u16).collect();
                assert_eq!(born_after(&born, q), want, "u32, {len} entries, q {q}");
                assert_eq!(born_after(&narrow, q), want, "u16, {len} entries, q {q}");
                let bytes: Vec<u8> = born.iter().map(|&o| o.min(255) as u8).collect();
                let clipped: Vec<u32> = bytes.iter().map(|&o| u32::from(o)).collect();
                assert_eq!(
                    born_after(&bytes, q),
                    by_hand(&clipped, q),
                    "u8, {len}, q {q}"
                );
            }
        }
    }
}
