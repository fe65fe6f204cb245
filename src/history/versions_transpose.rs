//! A directed run's in-direction versions as the transpose of its out-direction's.
//!
//! Every in-list entry of a run that holds every vertex's lists is the transpose of one
//! out-list entry, added or tombstoned alike, and an edge's changes are the same whichever
//! end keys them. So the in-direction's born and died columns are the out-direction's
//! scattered to the transposed positions, and its spells are the out-direction's with
//! their two ends swapped. Deriving them that way reads each out-list entry once and sorts
//! only the spells, where gathering the in-direction's changes sorts every change by
//! destination and searches each one's list (about half of a Kron20 load's derivation).
//!
//! The scatter checks that the transpose holds as it goes (each out entry lands on its own
//! source in the in-list, and every in-list entry is reached); where it does not, it
//! answers `None` and the build gathers the changes instead, which names what disagrees.

use super::versions::{Columns, Spell};
use crate::prefetch::prefetch;
use crate::run::DirData;
use crate::types::VertexId;
use rayon::prelude::*;

/// One kind of list (adds, or tombstones) of a plain direction: index `i`'s are
/// `list[offs[i]..offs[i + 1]]`.
#[derive(Clone, Copy)]
struct Lists<'a> {
    d: &'a DirData,
    offs: &'a [u64],
    list: &'a [VertexId],
}

impl<'a> Lists<'a> {
    fn adds(d: &'a DirData) -> Lists<'a> {
        Lists {
            d,
            offs: d.offs.get(),
            list: d.adds.get(),
        }
    }

    /// Tombstones; a direction without any has no offsets, read as none per vertex.
    fn tombs(d: &'a DirData) -> Lists<'a> {
        Lists {
            d,
            offs: d.toffs.get(),
            list: d.tombs.get(),
        }
    }

    fn n(&self) -> usize {
        self.offs.len().saturating_sub(1)
    }
}

/// The in-direction's columns from the out-direction's `out` of a run that holds every
/// vertex's lists in both directions (`o` and `i`, plain), or `None` when the two
/// directions are not each other's transpose.
pub(super) fn columns(o: &DirData, i: &DirData, out: &Columns) -> Option<Columns> {
    if o.is_packed() || i.is_packed() {
        return None;
    }
    let (born, died) = rayon::join(
        || scatter(Lists::adds(o), &out.born, Lists::adds(i)),
        || scatter(Lists::tombs(o), &out.died, Lists::tombs(i)),
    );
    let (present, absent) = rayon::join(|| swapped(&out.present), || swapped(&out.absent));
    Some(Columns {
        born: born?,
        died: died?,
        present,
        absent,
    })
}

/// `vals` (one per entry of `from`) moved to the positions of the transposed entries in
/// `to`; `None` unless each entry of `from` has its transpose in `to` and every entry of
/// `to` is one. The destinations are split into one range per thread, by entries, and
/// each thread reads every entry of `from`, writing only its own range's positions.
fn scatter(from: Lists, vals: &[u32], to: Lists) -> Option<Vec<u32>> {
    if from.list.len() != to.list.len() || vals.len() != from.list.len() {
        return None;
    }
    if to.list.is_empty() {
        return Some(Vec::new());
    }
    let mut res = vec![0u32; to.list.len()];
    let bounds = split_by_entries(to.offs, rayon::current_num_threads());
    let mut slices = Vec::with_capacity(bounds.len());
    let mut rest = &mut res[..];
    for w in bounds.windows(2) {
        let len = (to.offs[w[1]] - to.offs[w[0]]) as usize;
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
        slices.push(((w[0], w[1]), head));
        rest = tail;
    }
    let ok = (slices.into_par_iter()).all(|(r, dst)| fill_range(from, vals, to, r, dst));
    ok.then_some(res)
}

/// Index positions `0..=n` cut into at most `parts` ranges of about equal entries.
fn split_by_entries(offs: &[u64], parts: usize) -> Vec<usize> {
    let n = offs.len() - 1;
    let total = offs[n] - offs[0];
    let mut cuts = vec![0];
    for k in 1..parts as u64 {
        let at = offs.partition_point(|&o| o - offs[0] < total * k / parts as u64);
        if at > *cuts.last().unwrap() && at < n {
            cuts.push(at);
        }
    }
    cuts.push(n);
    cuts
}

/// How many entries ahead [`fill_range`] asks for a destination's cursor, and half that
/// for the list position the cursor names: each entry touches a cursor, an in-list entry
/// and a value at random, and waiting for each miss in turn left the transpose most of a
/// Kron20 load's derivation. (Ranges of destinations small enough for the cache, each
/// searching every source's list for its stretch, were slower: 1.95 s against 1.64 s.)
const AHEAD: usize = 16;

/// [`scatter`] for the destinations at index positions `r`, whose values are `dst`.
fn fill_range(from: Lists, vals: &[u32], to: Lists, r: (usize, usize), dst: &mut [u32]) -> bool {
    let (lo, hi) = (to.d.vid_at(r.0), to.d.vid_at(r.1 - 1));
    let base = to.offs[r.0];
    let mut next: Vec<u64> = to.offs[r.0..r.1].to_vec();
    // A dense index is its own map from vertex to position, which the hints need.
    let slot = |x: VertexId| (to.d.dense && x >= lo && x <= hi).then(|| x as usize - r.0);
    let dst_at = dst.as_ptr().wrapping_sub(base as usize);
    let hint = |next: &[u64], p: usize| {
        if let Some(j) = from.list.get(p + AHEAD).and_then(|&x| slot(x)) {
            prefetch(&next[j]);
        }
        if let Some(j) = from.list.get(p + AHEAD / 2).and_then(|&x| slot(x)) {
            let at = next[j] as usize;
            prefetch(to.list.as_ptr().wrapping_add(at));
            prefetch(dst_at.wrapping_add(at));
        }
    };
    for k in 0..from.n() {
        let src = from.d.vid_at(k);
        let (a, b) = (from.offs[k] as usize, from.offs[k + 1] as usize);
        for (p, (&x, &val)) in (a..).zip(from.list[a..b].iter().zip(&vals[a..b])) {
            hint(&next, p);
            if x < lo || x > hi {
                continue;
            }
            let Some(j) = to.d.index_of(x).filter(|j| (r.0..r.1).contains(j)) else {
                return false;
            };
            let at = &mut next[j - r.0];
            if *at >= to.offs[j + 1] || to.list[*at as usize] != src {
                return false;
            }
            dst[(*at - base) as usize] = val;
            *at += 1;
        }
    }
    (r.0..r.1).all(|j| next[j - r.0] == to.offs[j + 1])
}

/// Spells with their two ends swapped, grouped by their new vertex: ascending, then by
/// neighbor and by when they began (an edge's spells never share a beginning).
fn swapped(s: &[Spell]) -> Vec<Spell> {
    let mut t: Vec<Spell> = s.iter().map(|&(v, x, a, b)| (x, v, a, b)).collect();
    t.par_sort_unstable_by_key(|w| (w.0, w.1, w.2));
    t
}

/// Whether [`columns`] transposes `o` into `i` (over ordinal `1` for every entry, and no
/// spells): for tests.
#[cfg(test)]
pub(crate) fn transposes(o: &DirData, i: &DirData) -> bool {
    let out = Columns {
        born: vec![1; o.adds.get().len()],
        died: vec![1; o.tombs.get().len()],
        ..Columns::default()
    };
    columns(o, i, &out).is_some()
}
