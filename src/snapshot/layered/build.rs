//! Building one direction of a layered view's index (see the parent module): resolve every
//! vertex against the newer runs, choose which changed vertices get their live list copied
//! within the budget, then lay out spans, copies and cut patches, each block of vertices in
//! parallel into its own pre-sized part of the arrays.

use super::{Cut, Layer, CUT};
use crate::run::{Dir, DirData};
use crate::snapshot::flat::Adj;
use crate::snapshot::{GraphView, Snapshot};
use crate::types::{gallop, VertexId, VERTEX_TASK};
use rayon::prelude::*;

/// A block's walk through the newer runs' vertex indexes, in vertex order.
struct Walk<'s> {
    /// The current vertex's entries in the newer runs, oldest first.
    held: Vec<(&'s DirData, usize)>,
    /// Per run of the snapshot, where the next search of its sparse index starts: a
    /// block's vertices ascend, so each search gallops forward from the last one's place
    /// instead of binary-searching the whole index (a cache miss per step, per vertex,
    /// per run: most of the build's time on a Kron20 store with one run of changes).
    cursors: Vec<usize>,
}

impl<'s> Walk<'s> {
    /// Fills `held` with `v`'s entries in direction `d` of the runs after the base.
    fn gather(&mut self, s: &'s Snapshot, d: Dir, v: VertexId) {
        self.held.clear();
        for &i in &s.chains.of(v)[1..] {
            let dd = s.runs[i as usize].dir(d);
            let (next, at) = dd.seek(self.cursors[i as usize], v);
            self.cursors[i as usize] = next;
            if let Some(k) = at {
                self.held.push((dd, k));
            }
        }
    }
}

/// What the newer runs do to one vertex: how many of its base positions are dead and how
/// many additions survive (its block's arrays hold them, vertex after vertex).
#[derive(Clone, Copy, Default)]
struct Patch {
    nd: u32,
    na: u32,
}

impl Patch {
    /// Whether the newer runs change the vertex's list.
    fn dirty(&self) -> bool {
        self.nd > 0 || self.na > 0
    }
}

/// The patches of one block of `VERTEX_TASK` vertices.
#[derive(Default)]
struct Block {
    patches: Vec<Patch>,
    /// Dead positions in the base's neighbor array, ascending per vertex.
    dels: Vec<u32>,
    /// Surviving additions, sorted per vertex.
    ids: Vec<VertexId>,
    /// Weights beside `ids` (empty when unweighted).
    wts: Vec<f64>,
}

/// Which vertices' lists are copied.
enum Copies {
    /// Every vertex's, changed or not: the whole graph fits the budget, and the view is a
    /// CSR in DRAM. Copying only the changed lists would leave a kernel's sweep reading
    /// two arrays, and it jumps in the base over every copied list: a cache and TLB miss
    /// per clean vertex that cost gap-pr 1.2-1.25x a CSR on Kron20 with every changed
    /// list copied.
    Every,
    /// Every changed vertex's: they fit the budget together.
    Changed,
    /// The changed vertices marked, by dense id.
    Marked(Vec<bool>),
}

impl Copies {
    /// Whether vertex `v`, which the newer runs change if `dirty`, is copied.
    fn of(&self, v: usize, dirty: bool) -> bool {
        match self {
            Copies::Every => true,
            Copies::Changed => dirty,
            Copies::Marked(m) => dirty && m[v],
        }
    }
}

/// Entries one block puts in each array of the index (or, summed over the blocks before
/// it, where its part of each array starts).
#[derive(Clone, Copy, Default, Debug)]
struct Sizes {
    copy: u64,
    cuts: u64,
    dels: u64,
    adds: u64,
}

impl std::ops::Add for Sizes {
    type Output = Sizes;
    fn add(self, o: Sizes) -> Sizes {
        Sizes {
            copy: self.copy + o.copy,
            cuts: self.cuts + o.cuts,
            dels: self.dels + o.dels,
            adds: self.adds + o.adds,
        }
    }
}

/// One block's parts of the index's arrays.
struct Part<'x> {
    spans: &'x mut [[u32; 2]],
    /// Its vertices' CSR offsets, when every list is copied (else empty).
    offs: &'x mut [u64],
    copy_ids: &'x mut [VertexId],
    copy_wts: &'x mut [f64],
    cuts: &'x mut [Cut],
    dels: &'x mut [u32],
    add_ids: &'x mut [VertexId],
    add_wts: &'x mut [f64],
    /// Where the parts start in the whole arrays.
    at: Sizes,
}

/// `v`'s neighbor count in the base.
fn base_len(base: &Adj, v: usize) -> u64 {
    base.start(v as VertexId + 1) - base.start(v as VertexId)
}

/// `v`'s live neighbor count under patch `p`.
fn live_len(base: &Adj, v: usize, p: &Patch) -> u64 {
    base_len(base, v) - p.nd as u64 + p.na as u64
}

impl Snapshot {
    /// Builds direction `d`'s index over `base`, copying changed lists while they fit
    /// `budget` bytes, or `None` if a position would not fit 31 bits (such a snapshot is
    /// read through the general path).
    pub(super) fn layer(&self, d: Dir, base: &Adj, budget: usize) -> Option<Layer> {
        if base.len() >= CUT as u64 {
            return None;
        }
        let weighted = self.is_weighted();
        let blocks = self.resolve_blocks(d, base, weighted);
        let copies = choose_copies(&blocks, base, weighted, budget as u64);
        let sizes: Vec<Sizes> = (blocks.par_iter().enumerate())
            .map(|(c, b)| b.sizes(c * VERTEX_TASK, base, &copies))
            .collect();
        let total = sizes.iter().fold(Sizes::default(), |a, &s| a + s);
        let fits = base.len() + total.copy < CUT as u64
            && total.cuts < CUT as u64
            && total.dels <= u32::MAX as u64
            && total.adds <= u32::MAX as u64;
        if !fits {
            return None;
        }
        let mut l = Layer {
            spans: vec![[0; 2]; self.n],
            split: base.len() as u32,
            offs: match copies {
                Copies::Every => vec![0; self.n + 1],
                _ => Vec::new(),
            },
            copy_ids: vec![0; total.copy as usize],
            copy_wts: vec![0.0; if weighted { total.copy as usize } else { 0 }],
            cuts: vec![Cut::default(); total.cuts as usize + 1],
            dels: vec![0; total.dels as usize],
            add_ids: vec![0; total.adds as usize],
            add_wts: vec![0.0; if weighted { total.adds as usize } else { 0 }],
        };
        let split = l.split;
        let parts = l.parts(&sizes);
        (blocks.par_iter().zip(parts).enumerate())
            .for_each(|(c, (b, part))| b.fill(c * VERTEX_TASK, base, split, &copies, part));
        if let Some(end) = l.offs.last_mut() {
            *end = total.copy;
        }
        l.cuts[total.cuts as usize] = Cut {
            base: 0,
            base_end: 0,
            dels: total.dels as u32,
            adds: total.adds as u32,
        };
        Some(l)
    }

    /// Every vertex's patch, by blocks of `VERTEX_TASK` vertices (in parallel).
    fn resolve_blocks(&self, d: Dir, base: &Adj, weighted: bool) -> Vec<Block> {
        (0..self.n.div_ceil(VERTEX_TASK))
            .into_par_iter()
            .map(|c| {
                let (lo, hi) = (c * VERTEX_TASK, ((c + 1) * VERTEX_TASK).min(self.n));
                let adds = self.newer_entries(d, lo as VertexId, hi as VertexId);
                let mut b = Block {
                    patches: Vec::with_capacity(hi - lo),
                    ids: Vec::with_capacity(adds),
                    wts: Vec::with_capacity(if weighted { adds } else { 0 }),
                    ..Default::default()
                };
                let mut walk = Walk {
                    held: Vec::new(),
                    cursors: vec![0; self.runs.len()],
                };
                for v in lo..hi {
                    let p = self.resolve(d, base, weighted, v as VertexId, &mut b, &mut walk);
                    b.patches.push(p);
                }
                b
            })
            .collect()
    }

    /// Neighbors the runs after the base hold for vertices `lo..hi` in direction `d`: at
    /// least the additions a block of them gathers, so that its arrays are sized once
    /// instead of copied into fresh pages at each doubling (on Kron24 as ingest leaves
    /// it, five runs of one level, a block gathers most of its vertices' lists).
    fn newer_entries(&self, d: Dir, lo: VertexId, hi: VertexId) -> usize {
        (self.runs[1..].iter().map(|r| r.dir(d)))
            .map(|dd| {
                let (a, b) = match dd.dense {
                    true => (
                        (lo as usize).min(dd.n_index()),
                        (hi as usize).min(dd.n_index()),
                    ),
                    false => {
                        let (a, _) = dd.seek(0, lo);
                        (a, dd.seek(a, hi).0)
                    }
                };
                let o = dd.offs.get();
                (o[b] - o[a]) as usize
            })
            .sum()
    }

    /// Appends `v`'s dead base positions and surviving additions to `b`; returns how many.
    fn resolve<'s>(
        &'s self,
        d: Dir,
        base: &Adj,
        weighted: bool,
        v: VertexId,
        b: &mut Block,
        walk: &mut Walk<'s>,
    ) -> Patch {
        let (b0, b1) = (base.start(v), base.start(v + 1));
        let list = base.slice(b0, b1);
        debug_assert_eq!(
            self.chains.of(v).first(),
            Some(&0),
            "the base is in every chain"
        );
        let (dels, adds) = (b.dels.len(), b.ids.len());
        walk.gather(self, d, v);
        let held = &walk.held;
        for &(dd, i) in held.iter() {
            // One run's tombstones ascend: each search gallops on from the last one's
            // place, so a hub's thousands of deletions cost a walk of its list, not a
            // cache-missing binary search each.
            let mut from = 0;
            for &x in dd.tombs_at(i) {
                let (at, found) = gallop(list, from, x);
                if found {
                    b.dels.push((b0 + at as u64) as u32);
                }
                from = at;
            }
        }
        gather_survivors(held, weighted, b);
        if held.len() > 1 {
            let wfrom = adds.min(b.wts.len());
            sort_added(&mut b.ids[adds..], &mut b.wts[wfrom..]);
            // Runs' dead positions interleave, and a base edge tombstoned, re-added and
            // tombstoned again is dead once. (One run's are ascending and distinct
            // already: its tombstones are.)
            let mine = &mut b.dels[dels..];
            mine.sort_unstable();
            let keep = crate::types::dedup_sorted(mine);
            b.dels.truncate(dels + keep);
        }
        debug_assert!(
            b.dels[dels..].windows(2).all(|w| w[0] < w[1]),
            "a vertex's dead positions ascend"
        );
        Patch {
            nd: (b.dels.len() - dels) as u32,
            na: (b.ids.len() - adds) as u32,
        }
    }
}

impl Block {
    /// What this block, whose first vertex is `lo`, puts in the index.
    fn sizes(&self, lo: usize, base: &Adj, copies: &Copies) -> Sizes {
        let mut s = Sizes::default();
        for (k, p) in self.patches.iter().enumerate() {
            if copies.of(lo + k, p.dirty()) {
                s.copy += live_len(base, lo + k, p);
            } else if p.dirty() {
                s.cuts += 1;
                s.dels += p.nd as u64;
                s.adds += p.na as u64;
            }
        }
        s
    }

    /// Writes this block's spans, copies and cut patches into `part`.
    fn fill(&self, lo: usize, base: &Adj, split: u32, copies: &Copies, part: Part) {
        let mut f = Fill {
            part,
            ci: 0,
            ki: 0,
            di: 0,
            ai: 0,
        };
        // Where the vertex's patch starts in the block's arrays.
        let (mut pd, mut pa) = (0usize, 0usize);
        for (k, p) in self.patches.iter().enumerate() {
            let v = lo + k;
            let (b0, b1) = (base.start(v as VertexId), base.start(v as VertexId + 1));
            let dead = &self.dels[pd..pd + p.nd as usize];
            let (a0, a1) = (pa, pa + p.na as usize);
            (pd, pa) = (pd + p.nd as usize, a1);
            let added = (
                &self.ids[a0..a1],
                if self.wts.is_empty() {
                    &[][..]
                } else {
                    &self.wts[a0..a1]
                },
            );
            if copies.of(v, p.dirty()) {
                let len = live_len(base, v, p) as usize;
                f.copy(k, base, (b0, b1, dead), added, len, split);
            } else if !p.dirty() {
                f.part.spans[k] = [b0 as u32, b1 as u32];
            } else {
                f.cut(k, (b0, b1, dead), added);
            }
        }
        let Fill {
            part,
            ci,
            ki,
            di,
            ai,
        } = f;
        debug_assert_eq!(
            (ci, ki, di, ai),
            (
                part.copy_ids.len(),
                part.cuts.len(),
                part.dels.len(),
                part.add_ids.len()
            ),
            "a block fills exactly the parts its sizes gave it"
        );
        debug_assert_eq!(
            (pd, pa),
            (self.dels.len(), self.ids.len()),
            "every patch read"
        );
    }
}

/// A block's part of the index being filled, with a cursor into each of its arrays.
struct Fill<'x> {
    part: Part<'x>,
    /// Copied neighbors, cut vertices, dead positions and added neighbors written so far.
    ci: usize,
    ki: usize,
    di: usize,
    ai: usize,
}

impl Fill<'_> {
    /// Vertex `k` of the block, copied: its live list (`len` neighbors: the base's `b0..b1`
    /// but `dead`, then `added`) written into the copies, its span pointing there.
    fn copy(
        &mut self,
        k: usize,
        base: &Adj,
        cut: (u64, u64, &[u32]),
        added: (&[VertexId], &[f64]),
        len: usize,
        split: u32,
    ) {
        let p = &mut self.part;
        let ci = self.ci;
        let w = if p.copy_wts.is_empty() {
            &mut [][..]
        } else {
            &mut p.copy_wts[ci..ci + len]
        };
        write_live(base, cut, added, &mut p.copy_ids[ci..ci + len], w);
        if let Some(o) = p.offs.get_mut(k) {
            *o = p.at.copy + ci as u64;
        }
        let start = split + (p.at.copy as usize + ci) as u32;
        p.spans[k] = [start, start + len as u32];
        self.ci += len;
    }

    /// Vertex `k` of the block, cut: the base's `b0..b1` with `dead` positions, plus
    /// `added`, recorded as a cut patch for readers to apply.
    fn cut(&mut self, k: usize, (b0, b1, dead): (u64, u64, &[u32]), added: (&[VertexId], &[f64])) {
        let p = &mut self.part;
        let (di, ai, n) = (self.di, self.ai, added.0.len());
        p.cuts[self.ki] = Cut {
            base: b0 as u32,
            base_end: b1 as u32,
            dels: (p.at.dels as usize + di) as u32,
            adds: (p.at.adds as usize + ai) as u32,
        };
        p.dels[di..di + dead.len()].copy_from_slice(dead);
        p.add_ids[ai..ai + n].copy_from_slice(added.0);
        if !p.add_wts.is_empty() {
            p.add_wts[ai..ai + n].copy_from_slice(added.1);
        }
        p.spans[k] = [CUT | (p.at.cuts as usize + self.ki) as u32, 0];
        self.ki += 1;
        self.di += dead.len();
        self.ai += n;
    }
}

impl Layer {
    /// The arrays cut into one part per block of `sizes`.
    fn parts(&mut self, sizes: &[Sizes]) -> Vec<Part<'_>> {
        let (cw, aw) = (!self.copy_wts.is_empty(), !self.add_wts.is_empty());
        let csr = !self.offs.is_empty();
        let mut spans = &mut self.spans[..];
        let mut offs = &mut self.offs[..];
        let mut copy_ids = &mut self.copy_ids[..];
        let mut copy_wts = &mut self.copy_wts[..];
        let mut cuts = &mut self.cuts[..];
        let mut dels = &mut self.dels[..];
        let mut add_ids = &mut self.add_ids[..];
        let mut add_wts = &mut self.add_wts[..];
        let mut at = Sizes::default();
        let mut parts = Vec::with_capacity(sizes.len());
        for s in sizes {
            let n = VERTEX_TASK.min(spans.len());
            let weighted = |k: u64, has: bool| if has { k as usize } else { 0 };
            parts.push(Part {
                spans: take(&mut spans, n),
                offs: take(&mut offs, if csr { n } else { 0 }),
                copy_ids: take(&mut copy_ids, s.copy as usize),
                copy_wts: take(&mut copy_wts, weighted(s.copy, cw)),
                cuts: take(&mut cuts, s.cuts as usize),
                dels: take(&mut dels, s.dels as usize),
                add_ids: take(&mut add_ids, s.adds as usize),
                add_wts: take(&mut add_wts, weighted(s.adds, aw)),
                at,
            });
            at = at + *s;
        }
        parts
    }
}

/// Splits the first `n` items off `s`.
fn take<'x, T>(s: &mut &'x mut [T], n: usize) -> &'x mut [T] {
    let (head, tail) = std::mem::take(s).split_at_mut(n);
    *s = tail;
    head
}

/// Which lists to copy: every vertex's when the whole graph fits `budget` bytes, else
/// every changed one's when they fit together; else the changed ones whose cut reading
/// costs most per byte copied (dead positions and an added slice are each an extra loop
/// per read), greedily, while they fit.
fn choose_copies(blocks: &[Block], base: &Adj, weighted: bool, budget: u64) -> Copies {
    let unit = (std::mem::size_of::<VertexId>() + if weighted { 8 } else { 0 }) as u64;
    // Copies are addressed after the base in 31-bit positions.
    let budget = budget.min((CUT as u64 - 1 - base.len()) * unit);
    let (every, changed) = (blocks.par_iter().enumerate())
        .map(|(c, b)| {
            let lo = c * VERTEX_TASK;
            let mut sums = (0u64, 0u64);
            for (k, p) in b.patches.iter().enumerate() {
                let len = live_len(base, lo + k, p);
                sums.0 += len;
                sums.1 += if p.dirty() { len } else { 0 };
            }
            sums
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    if every * unit <= budget {
        return Copies::Every;
    }
    if changed * unit <= budget {
        return Copies::Changed;
    }
    if budget == 0 {
        // Nothing can be copied: ranking the changed vertices would cost a sort for none.
        return Copies::Marked(vec![false; blocks.iter().map(|b| b.patches.len()).sum()]);
    }
    // (priority, vertex, bytes); non-negative f32s order as their bits do.
    let mut by_gain: Vec<(u32, u32, u64)> = (blocks.par_iter().enumerate())
        .flat_map_iter(|cb| {
            dirty(cb).into_iter().map(|(v, p)| {
                let len = live_len(base, v, p);
                let loops = p.nd + u32::from(p.na > 0);
                let gain = loops as f32 / len.max(1) as f32;
                (gain.to_bits(), v as u32, len * unit)
            })
        })
        .collect();
    by_gain.par_sort_unstable_by(|a, b| b.cmp(a));
    let n: usize = blocks.iter().map(|b| b.patches.len()).sum();
    let mut marked = vec![false; n];
    let mut left = budget;
    for (_, v, b) in by_gain {
        if b <= left {
            left -= b;
            marked[v as usize] = true;
        }
    }
    Copies::Marked(marked)
}

/// The changed vertices of block `c`, with their patches.
fn dirty((c, b): (usize, &Block)) -> Vec<(usize, &Patch)> {
    let lo = c * VERTEX_TASK;
    (b.patches.iter().enumerate())
        .filter(|(_, p)| p.dirty())
        .map(move |(k, p)| (lo + k, p))
        .collect()
}

/// Writes a vertex's live list: its base positions `b0..b1` but the `dead` ones (ascending)
/// merged with its additions (sorted, none of them a live base neighbor), weights beside
/// when `wts` is not empty.
fn write_live(
    base: &Adj,
    (b0, b1, dead): (u64, u64, &[u32]),
    (adds, add_wts): (&[VertexId], &[f64]),
    ids: &mut [VertexId],
    wts: &mut [f64],
) {
    if adds.is_empty() {
        return copy_cut(base, (b0, b1, dead), ids, wts);
    }
    let (bids, bwts) = (base.ids(), base.weights());
    let weighted = !wts.is_empty();
    let base_w = |p: usize| bwts.get(p).copied().unwrap_or(1.0);
    let add_w = |a: usize| add_wts.get(a).copied().unwrap_or(1.0);
    let mut dead = dead.iter().peekable();
    let (mut a, mut k) = (0usize, 0usize);
    let mut put = |k: &mut usize, x: VertexId, w: f64| {
        ids[*k] = x;
        if weighted {
            wts[*k] = w;
        }
        *k += 1;
    };
    for (p, &x) in (b0 as usize..).zip(&bids[b0 as usize..b1 as usize]) {
        if dead.next_if(|&&d| d as usize == p).is_some() {
            continue;
        }
        while a < adds.len() && adds[a] < x {
            put(&mut k, adds[a], add_w(a));
            a += 1;
        }
        debug_assert!(
            a == adds.len() || adds[a] != x,
            "an addition is a live base neighbor"
        );
        put(&mut k, x, base_w(p));
    }
    for (i, &x) in adds.iter().enumerate().skip(a) {
        put(&mut k, x, add_w(i));
    }
    debug_assert_eq!(k, ids.len(), "a live list fills its copy");
}

/// Writes base positions `b0..b1` but the `dead` ones (ascending) into `ids` (and their
/// weights into `wts` unless it is empty), a slice copy per stretch between dead positions:
/// most lists an index copies have no additions, clean ones not even a dead position.
fn copy_cut(base: &Adj, (b0, b1, dead): (u64, u64, &[u32]), ids: &mut [VertexId], wts: &mut [f64]) {
    let (bids, bwts) = (base.ids(), base.weights());
    let mut k = 0;
    let mut at = b0 as usize;
    for end in dead.iter().map(|&d| d as usize).chain([b1 as usize]) {
        let n = end - at;
        ids[k..k + n].copy_from_slice(&bids[at..end]);
        if !wts.is_empty() {
            match bwts.is_empty() {
                true => wts[k..k + n].fill(1.0),
                false => wts[k..k + n].copy_from_slice(&bwts[at..end]),
            }
        }
        k += n;
        at = end + 1;
    }
    debug_assert_eq!(k, ids.len(), "a live list fills its copy");
}

/// Appends to `b` the additions `held` (a vertex's entries in the newer runs, oldest
/// first) that no later run among them tombstones: what the general walk reports of them.
fn gather_survivors(held: &[(&DirData, usize)], weighted: bool, b: &mut Block) {
    for (j, &(dd, i)) in held.iter().enumerate() {
        let later = &held[j + 1..];
        let w = dd.wts_at(i);
        for (k, &x) in dd.adds_at(i).iter().enumerate() {
            let dead = later
                .iter()
                .any(|&(l, li)| l.tombs_at(li).binary_search(&x).is_ok());
            if !dead {
                b.ids.push(x);
                if weighted {
                    b.wts.push(w.get(k).copied().unwrap_or(1.0));
                }
            }
        }
    }
}

/// Sorts one vertex's additions (gathered run by run) by neighbor, weights alongside.
/// They are a few sorted runs end to end, which the standard library's stable sort
/// finds and merges (O(n log runs)); an unstable sort starts from nothing.
fn sort_added(ids: &mut [VertexId], wts: &mut [f64]) {
    if wts.is_empty() {
        ids.sort();
        return;
    }
    let mut pairs: Vec<(VertexId, f64)> = ids.iter().copied().zip(wts.iter().copied()).collect();
    pairs.sort_by_key(|p| p.0);
    for (k, (x, w)) in pairs.into_iter().enumerate() {
        ids[k] = x;
        wts[k] = w;
    }
}
