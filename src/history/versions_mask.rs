//! A run read in place as of a commit: which of its entries came after the commit (a bit
//! each), and which edges present then it does not list (its spells that hold the commit,
//! a bit each over the spells, which are read where the versions file is mapped).
//!
//! This is the filter of [`super::versions::layer_at`] without the copy: the filter writes
//! the kept entries out, which costs the graph's size in fresh DRAM; the mask marks the
//! others and leaves the run where it is (the snapshot's point view reads it). It holds for
//! a run with nothing before it (a compacted store's one run): no tombstones, and no
//! spells of edges older runs hold.

use super::ordinals::{with_ordinals, Spans};
use super::versions::{vertex_ops_as_of, DirVersions, Spells, Versions};
use crate::run::{DirData, Run, Sec};
use crate::types::VertexId;
use rayon::prelude::*;

/// One direction of a run as of a commit.
pub(crate) struct DirMask {
    /// Bit `p` set: the run's entry `p` was born after the commit.
    pub dead: Vec<u64>,
    /// Vertex `v`'s present spells are `spells[spell_at[v]..spell_at[v + 1]]` (their
    /// neighbors, read where the versions file is mapped); `spell_at` has `n + 1` entries.
    pub spell_at: Vec<u32>,
    pub spells: Sec<VertexId>,
    /// Bit `i` set: spell `i` does not hold the commit (the edge is not present then by
    /// this spell; the run's entry says whether it is by that).
    pub spell_dead: Vec<u64>,
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
/// entries; the spells' mask from their two ordinal columns, one word per 64 spells; and
/// where each vertex's spells start. Nothing proportional to the spells is copied: a read
/// of a vertex picks its spells that hold `q` by their bits, as it picks the run's entries.
fn dir_mask(d: &DirData, ver: &DirVersions, q: u32, n: usize) -> Option<DirMask> {
    if !d.dense || d.is_packed() || d.n_tombs() > 0 || ver.absent.len() > 0 {
        return None;
    }
    let sp = &ver.present;
    if sp.vid.get().last().is_some_and(|&v| v as usize >= n) {
        return None;
    }
    let (dead, spell_dead) = with_ordinals!(&ver.ords, |c| rayon::join(
        || born_after(c.born.get(), q),
        || not_holding(&c.present, q)
    ));
    if dead.len() != d.adds.get().len().div_ceil(64) {
        return None;
    }
    Some(DirMask {
        dead,
        spell_at: spell_starts(sp, n),
        spells: sp.nbr.shared()?,
        spell_dead,
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

/// The spells' `[from, to)` columns as bits: one per spell, set when it does not hold
/// `q`, by the compare-and-pack of [`born_after`]. Bits past the last spell stay clear.
fn not_holding<B>(ends: &Spans<B>, q: u32) -> Vec<u64>
where
    B: bytemuck::Pod + Into<u32> + Sync,
{
    let word = |(from, to): (&[B], &[B])| {
        let mut bytes = [0u8; 64];
        for ((x, &f), &t) in bytes.iter_mut().zip(from).zip(to) {
            *x = u8::from((q < f.into()) | (t.into() <= q));
        }
        pack(&bytes)
    };
    (ends.from.get().par_chunks(64))
        .zip(ends.to.get().par_chunks(64))
        .with_min_len(1024)
        .map(word)
        .collect()
}

/// Where each of `n` vertices' spells start, and one past the last: vertex `v`'s are
/// positions `at[v]..at[v + 1]`. Built in chunks of the vertices with spells, each writing
/// its own share of the array: from its first vertex's end up to the next chunk's first
/// vertex (those between hold no spell, and end where the one before ends).
fn spell_starts(sp: &Spells, n: usize) -> Vec<u32> {
    let vid = sp.vid.get();
    let mut at = vec![0u32; n + 1];
    if vid.is_empty() {
        return at;
    }
    let per = (vid.len() / (rayon::current_num_threads() * 8)).max(4096);
    let firsts: Vec<usize> = (0..vid.len()).step_by(per).collect();
    let mut shares = Vec::with_capacity(firsts.len());
    let mut rest = &mut at[vid[0] as usize + 1..];
    for (c, &j0) in firsts.iter().enumerate() {
        let next = firsts.get(c + 1).map_or(n + 1, |&k| vid[k] as usize + 1);
        let (share, tail) = std::mem::take(&mut rest).split_at_mut(next - vid[j0] as usize - 1);
        shares.push((j0..(j0 + per).min(vid.len()), share));
        rest = tail;
    }
    shares
        .into_par_iter()
        .for_each(|(js, share)| fill_starts(sp, js, share));
    at
}

/// The starts of [`spell_starts`] for the vertices `vid[js]`, into `share`: the array from
/// the first one's end on.
fn fill_starts(sp: &Spells, js: std::ops::Range<usize>, share: &mut [u32]) {
    let (vid, end) = (sp.vid.get(), sp.end.get());
    let first = vid[js.start] as usize + 1;
    let mut filled = 0;
    for j in js.clone() {
        let place = vid[j] as usize + 1 - first;
        let before = if j == 0 { 0 } else { end[j - 1] };
        share[filled..place].fill(before);
        share[place] = end[j];
        filled = place + 1;
    }
    share[filled..].fill(end[js.end - 1]);
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

    /// Spells over vertex sets sparse and dense, with gaps at the start and the end, cut
    /// into chunks or not: each vertex's spells start where counting them by hand says,
    /// and each spell's bit says whether it does not hold `q`, as `[from, to)` says.
    #[test]
    fn spell_starts_and_bits_match_the_spells_counted_by_hand() {
        let mut seed = 11u64;
        let mut next = move |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for (n, share) in [
            (0, 0),
            (1, 100),
            (7, 50),
            (300, 30),
            (20_000, 90),
            (70_000, 3),
        ] {
            let (mut vid, mut end, mut count) = (Vec::new(), Vec::new(), vec![0u32; n]);
            let mut total = 0;
            for (v, c) in count.iter_mut().enumerate() {
                if next(100) < share {
                    *c = 1 + next(5) as u32;
                    total += *c;
                    vid.push(v as VertexId);
                    end.push(total);
                }
            }
            let (from, to): (Vec<u16>, Vec<u16>) = (0..total)
                .map(|_| {
                    let f = next(300) as u16;
                    (f, f + 1 + next(40) as u16)
                })
                .unzip();
            let sp = Spells {
                vid: Sec::owned(vid),
                end: Sec::owned(end),
                nbr: Sec::owned(vec![0; total as usize]),
            };
            let mut want = vec![0u32];
            for c in &count {
                want.push(want.last().unwrap() + c);
            }
            assert_eq!(
                spell_starts(&sp, n),
                want,
                "{n} vertices, {share}% with spells"
            );
            let ends = Spans {
                from: Sec::owned(from.clone()),
                to: Sec::owned(to.clone()),
            };
            for q in [0, 1, 150, 299, 340, 70_000] {
                let mut words = vec![0u64; from.len().div_ceil(64)];
                for (i, (&f, &t)) in from.iter().zip(&to).enumerate() {
                    let holds = u32::from(f) <= q && q < u32::from(t);
                    words[i / 64] |= u64::from(!holds) << (i % 64);
                }
                assert_eq!(not_holding(&ends, q), words, "{total} spells, q {q}");
            }
        }
    }
}
