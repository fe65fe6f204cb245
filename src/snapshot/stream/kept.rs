//! Merged windows that a streamed sweep keeps in DRAM for its later passes, compressed.
//!
//! A kernel sweeping several runs' lists from the files pass after pass keeps the windows
//! its first pass merged, within the DRAM left beside its state (`RunsStream::keep_within`),
//! so that later passes neither read nor merge them. Kept as plain ids (4 B per id and 8 B
//! per vertex), Kron22's in-lists at a 64 MiB budget (11 runs) under a 384 MiB cap fit 126
//! MB of their 280 MB, and every pass still read 172 MB of the runs: gap-pr took 2.3x its
//! time uncapped. Packed as a compressed run's streams are ([`crate::run::packed`]: 1.6 B
//! per id at Kron22, each list sorted first), the same lists took 116 MB: all of them.
//!
//! The price is a sort and an encoding of each kept list once, in the first pass, and a
//! decode at every visit: with every window kept, gap-pr's 20 passes took 1.9-2.4 s packed
//! against 1.3-1.6 s as merged. So `keep_within` packs only where that keeps most of the
//! lists, and keeps as merged what fits that way.

use super::super::{GraphView, Snapshot};
use super::{window_dir_methods, window_meta_methods};
use crate::run::{packed, Dir};
use crate::types::{task_starts, VertexId};
use rayon::prelude::*;
use std::ops::Range;

/// A merged window's lists, each sorted and packed into one stream
/// ([`packed::encode`]), with [`packed::SLACK`] zero bytes after the last.
pub(super) struct PackedLists {
    /// Vertex `i` of the window's stream is `bytes[starts[i]..starts[i + 1]]` (empty: no
    /// neighbors).
    starts: Vec<u32>,
    bytes: Vec<u8>,
}

impl PackedLists {
    /// Packs the merged window `offs` (from 0, one more than its vertices) and `ids`.
    /// `None` if a list holds an id twice (runs resolved against each other never do; such
    /// a window stays merged again at every pass, as a window not kept is) or the streams
    /// outgrow 32-bit positions.
    pub(super) fn pack(offs: &[u64], ids: &[VertexId]) -> Option<PackedLists> {
        let n = offs.len() - 1;
        let tasks = task_starts(offs, n);
        let packed: Vec<(Vec<u32>, Vec<u8>)> = (tasks.par_windows(2))
            .map(|t| pack_task(offs, ids, t[0]..t[1]))
            .collect::<Option<_>>()?;
        let total: usize = packed.iter().map(|(_, b)| b.len()).sum();
        u32::try_from(total + packed::SLACK).ok()?;
        let mut starts = Vec::with_capacity(n + 1);
        let mut bytes = Vec::with_capacity(total + packed::SLACK);
        for (s, b) in packed {
            let base = bytes.len() as u32;
            starts.extend(s.iter().map(|&x| base + x));
            bytes.extend_from_slice(&b);
        }
        starts.push(bytes.len() as u32);
        bytes.resize(total + packed::SLACK, 0);
        debug_assert_eq!(starts.len(), n + 1);
        Some(PackedLists { starts, bytes })
    }

    /// The DRAM the lists hold.
    pub(super) fn dram_bytes(&self) -> u64 {
        (self.starts.len() * 4 + self.bytes.len()) as u64
    }

    /// The head of window vertex `i`'s stream (`None`: no neighbors).
    #[inline]
    fn head(&self, i: usize) -> Option<packed::Head> {
        let (s, t) = (self.starts[i] as usize, self.starts[i + 1] as usize);
        packed::head(&self.bytes, s, t, false)
    }
}

/// Packs the lists of window vertices `vs`: their starts, relative to the task's first,
/// and their streams.
fn pack_task(offs: &[u64], ids: &[VertexId], vs: Range<usize>) -> Option<(Vec<u32>, Vec<u8>)> {
    let entries = (offs[vs.end] - offs[vs.start]) as usize;
    let mut starts = Vec::with_capacity(vs.len());
    let mut bytes = Vec::with_capacity(entries * 2);
    let mut list = Vec::new();
    for v in vs {
        starts.push(u32::try_from(bytes.len()).ok()?);
        let l = &ids[offs[v] as usize..offs[v + 1] as usize];
        if l.is_empty() {
            continue;
        }
        list.clear();
        list.extend_from_slice(l);
        list.sort_unstable();
        if list.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
        packed::encode(&list, None, &mut bytes);
    }
    Some((starts, bytes))
}

/// A streamed sweep's kept window, packed: the lists of direction `dir` of the vertices
/// `vs` from [`PackedLists`], everything else from the snapshot.
pub(super) struct PackedWindow<'v> {
    pub(super) dir: Dir,
    pub(super) view: &'v Snapshot,
    pub(super) lists: &'v PackedLists,
    pub(super) vs: Range<usize>,
}

impl PackedWindow<'_> {
    /// Whether the window holds `v`'s list of direction `d` (an undirected store's lists
    /// are both directions'), and its stream's head if it has neighbors.
    #[inline]
    fn list(&self, d: Dir, v: VertexId) -> Option<Option<packed::Head>> {
        if d != self.dir && !self.view.is_undirected() {
            return None;
        }
        let i = (v as usize).checked_sub(self.vs.start)?;
        (i < self.vs.len()).then(|| self.lists.head(i))
    }
}

/// The [`GraphView`] methods of direction `$dir` that a packed window answers from its
/// streams for its vertices, and through the snapshot for the rest.
///
/// SAFETY (every `unsafe` block below): the streams were written by [`packed::encode`]
/// in this process from sorted lists without repeats, followed by [`packed::SLACK`] zero
/// bytes, and are never changed after; `h` heads one of them. That is what a checked
/// packed section promises its readers.
macro_rules! packed_dir_methods {
    ($dir:expr, $degree:ident, $each:ident, $fold:ident, $find:ident, $sorted:ident) => {
        #[inline(always)]
        fn $degree(&self, v: VertexId) -> usize {
            match self.list($dir, v) {
                Some(h) => h.map_or(0, |h| h.degree),
                None => self.view.$degree(v),
            }
        }
        #[inline(always)]
        fn $each<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
            match self.list($dir, v) {
                // `find` hands ids over as it decodes them: faster than a buffered fold when
                // the work per id is a load that misses, as PageRank's is (`packed::fold`).
                // SAFETY: see the macro's docs.
                Some(Some(h)) => unsafe {
                    packed::find(&self.lists.bytes, h, |x| {
                        f(x);
                        false
                    });
                },
                Some(None) => {}
                None => self.view.$each(v, f),
            }
        }
        #[inline(always)]
        fn $fold<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
            match self.list($dir, v) {
                // SAFETY: see the macro's docs.
                Some(Some(h)) => unsafe { packed::fold(&self.lists.bytes, h, init, f) },
                Some(None) => init,
                None => self.view.$fold(v, init, f),
            }
        }
        #[inline(always)]
        fn $find<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
            match self.list($dir, v) {
                // SAFETY: see the macro's docs.
                Some(Some(h)) => unsafe { packed::find(&self.lists.bytes, h, f) },
                Some(None) => false,
                None => self.view.$find(v, f),
            }
        }
        fn $sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
            match self.list($dir, v) {
                // SAFETY: see the macro's docs.
                Some(Some(h)) => unsafe { packed::decode_into(&self.lists.bytes, h, out) },
                Some(None) => out.clear(),
                None => self.view.$sorted(v, out),
            }
        }
    };
}

impl GraphView for PackedWindow<'_> {
    window_dir_methods!(packed_dir_methods);
    window_meta_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every list comes back as its sorted ids, empty lists and lists longer than a chunk
    /// of the skip table included; a list holding an id twice is not packed.
    #[test]
    fn packed_lists_decode_to_each_list_sorted() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for case in 0..50 {
            let n = 1 + next(300) as usize;
            let (mut offs, mut ids) = (vec![0u64], Vec::new());
            for _ in 0..n {
                let d = match next(10) {
                    0 => 0,
                    1 => 100 + next(400),
                    _ => next(12),
                };
                let mut l: Vec<VertexId> = Vec::new();
                while (l.len() as u64) < d {
                    let y = next(1 << 20) as VertexId;
                    if !l.contains(&y) {
                        l.push(y);
                    }
                }
                ids.extend(l);
                offs.push(ids.len() as u64);
            }
            let p = PackedLists::pack(&offs, &ids).expect("no repeats");
            for v in 0..n {
                let mut want = ids[offs[v] as usize..offs[v + 1] as usize].to_vec();
                want.sort_unstable();
                let mut got = Vec::new();
                if let Some(h) = p.head(v) {
                    // SAFETY: `p` was packed above and is not changed.
                    unsafe { packed::decode_into(&p.bytes, h, &mut got) };
                }
                assert_eq!(got, want, "case {case}, vertex {v}");
            }
            if let Some(v) = (0..n).find(|&v| offs[v + 1] > offs[v]) {
                ids.insert(offs[v] as usize, ids[offs[v] as usize]);
                offs[v + 1..].iter_mut().for_each(|o| *o += 1);
                assert!(PackedLists::pack(&offs, &ids).is_none(), "case {case}");
            }
        }
    }
}
