//! A snapshot of a compacted base plus the runs written since, seen as a CSR with patches.
//!
//! This is the common shape of a live store: everything up to the last compaction in one
//! dense run (the base), and the changes since then in newer runs (the memtable sealed when
//! the snapshot was taken, runs flushed and merged since). Runs are resolved (see
//! [`crate::run`]), so against the base the newer runs amount to, per vertex, some base
//! neighbors deleted and some neighbors added. The index built here records exactly that:
//! where the vertex's list starts in the base, which positions of it are dead, and where
//! its surviving additions start. A kernel then reads a vertex as its base slice cut at the
//! dead positions, followed by its added slice: no run list to walk, no tombstone to look
//! up per neighbor, and a vertex the newer runs did not delete from reads as on a CSR.

use super::flat::Adj;
use super::{FlatView, GraphView, Snapshot};
use crate::run::{Dir, DirData};
use crate::types::{VertexId, VERTEX_TASK};
use rayon::prelude::*;

/// Where one vertex's lists start in one direction: its base slice, its dead base
/// positions and its added neighbors.
///
/// The three offsets of a vertex sit in one 12-byte entry, a CSR offset array for three
/// (a vertex's lists end where the next vertex's start): a kernel that jumps to a random
/// vertex (BFS, SSSP, BC pushing along edges) takes one cache miss for the index, not one
/// per layer.
#[derive(Clone, Copy, Default, Debug)]
#[repr(C)]
pub(crate) struct Span {
    base: u32,
    dels: u32,
    adds: u32,
}

/// One direction's index: the spans of every vertex plus one end entry.
#[derive(Default)]
pub(crate) struct Layer {
    spans: Vec<Span>,
    /// Dead positions in the base's neighbor array, ascending (per vertex, then overall).
    dels: Vec<u32>,
    /// The surviving additions of the newer runs, sorted per vertex, when they had to be
    /// gathered from several runs or a sparse one; empty when `spans` point into the single
    /// newer run's own arrays.
    ids: Vec<VertexId>,
    /// Weights beside `ids` (empty when unweighted or borrowed).
    wts: Vec<f64>,
    /// Whether additions are read from the single newer run in place.
    borrowed: bool,
}

/// The index of both directions (`inn` unused in undirected stores), shared by every view
/// of one snapshot.
#[derive(Default)]
pub(crate) struct SpanIndex {
    out: Layer,
    inn: Layer,
}

/// The newer runs' additions and dead base positions of one block of vertices, with
/// offsets local to the block until the blocks are stitched together.
#[derive(Default)]
struct Block {
    dels: Vec<u32>,
    ids: Vec<VertexId>,
    wts: Vec<f64>,
}

/// Where the added neighbors come from.
#[derive(Clone, Copy)]
enum Adds<'a> {
    /// The one newer run, dense and plain: its arrays are read in place.
    Borrowed(&'a DirData),
    /// Several runs, or a sparse one: survivors are gathered per vertex.
    Gathered,
}

impl Snapshot {
    /// The snapshot as a compacted base plus the changes of the runs written since (see the
    /// module doc), when its oldest run is a dense, plain, tombstone-free base, it has newer
    /// runs, none of them compressed, and every offset fits 32 bits. `None` otherwise: use
    /// [`Snapshot::flat`] or the snapshot itself.
    ///
    /// The first call builds the index: O(vertices) plus, per vertex the newer runs touch,
    /// a search of its base list per deleted neighbor and a sort of its added ones (in
    /// parallel). Later calls and clones of the snapshot share it.
    pub fn layered(&self) -> Option<LayeredView<'_>> {
        if self.runs.len() < 2 || self.runs[1..].iter().any(|r| is_packed(r)) {
            return None;
        }
        let base = self.flat_of(0)?;
        let idx = self
            .spans
            .get_or_init(|| {
                let out = self.layer(Dir::Out, &base.out)?;
                let inn = if self.undirected {
                    Layer::default()
                } else {
                    self.layer(Dir::In, &base.inn)?
                };
                Some(SpanIndex { out, inn })
            })
            .as_ref()?;
        let out = Side::new(&idx.out, base.out, &self.runs[1], Dir::Out);
        let inn = if self.undirected {
            out
        } else {
            Side::new(&idx.inn, base.inn, &self.runs[1], Dir::In)
        };
        Some(LayeredView { base, out, inn })
    }

    /// Builds direction `d`'s index over `base`, or `None` if an offset would not fit 32
    /// bits (such a snapshot is read through the general path).
    fn layer(&self, d: Dir, base: &Adj) -> Option<Layer> {
        if base.len() > u32::MAX as u64 {
            return None;
        }
        let adds = match &self.runs[1..] {
            [r] if r.dir(d).dense => Adds::Borrowed(r.dir(d)),
            _ => Adds::Gathered,
        };
        if let Adds::Borrowed(dd) = adds {
            if dd.n_adds() > u32::MAX as u64 {
                return None;
            }
        }
        let weighted = self.is_weighted();
        let mut spans = vec![Span::default(); self.n + 1];
        let blocks: Vec<Block> = spans[..self.n]
            .par_chunks_mut(VERTEX_TASK)
            .enumerate()
            .map(|(c, chunk)| {
                let mut b = Block::default();
                let mut held = Vec::new();
                let lo = c * VERTEX_TASK;
                for (k, sp) in chunk.iter_mut().enumerate() {
                    let v = (lo + k) as VertexId;
                    self.resolve(d, base, adds, weighted, v, sp, &mut b, &mut held);
                }
                b
            })
            .collect();
        let (mut dels_at, mut ids_at) = (0u64, 0u64);
        let starts: Vec<(u32, u32)> = blocks
            .iter()
            .map(|b| {
                let s = (dels_at as u32, ids_at as u32);
                dels_at += b.dels.len() as u64;
                ids_at += b.ids.len() as u64;
                s
            })
            .collect();
        if ids_at > u32::MAX as u64 {
            return None;
        }
        // The dead positions are base positions, so they number fewer than the base's ids.
        debug_assert!(dels_at <= base.len());
        let borrowed = matches!(adds, Adds::Borrowed(_));
        spans[..self.n]
            .par_chunks_mut(VERTEX_TASK)
            .zip(starts.par_iter())
            .for_each(|(chunk, &(d0, a0))| {
                for sp in chunk {
                    sp.dels += d0;
                    if !borrowed {
                        sp.adds += a0;
                    }
                }
            });
        spans[self.n] = Span {
            base: base.len() as u32,
            dels: dels_at as u32,
            adds: match adds {
                Adds::Borrowed(dd) => dd.offs.get().last().copied().unwrap_or(0) as u32,
                Adds::Gathered => ids_at as u32,
            },
        };
        let mut l = Layer {
            spans,
            borrowed,
            ..Default::default()
        };
        for b in blocks {
            l.dels.extend_from_slice(&b.dels);
            l.ids.extend_from_slice(&b.ids);
            l.wts.extend_from_slice(&b.wts);
        }
        Some(l)
    }

    /// Fills `v`'s span (offsets local to its block) and appends its dead base positions
    /// and, when gathering, its surviving additions to `b`.
    #[allow(clippy::too_many_arguments)]
    fn resolve<'s>(
        &'s self,
        d: Dir,
        base: &Adj,
        adds: Adds,
        weighted: bool,
        v: VertexId,
        sp: &mut Span,
        b: &mut Block,
        held: &mut Vec<(&'s DirData, usize)>,
    ) {
        let (b0, b1) = (base.start(v), base.start(v + 1));
        let list = base.slice(b0, b1);
        sp.base = b0 as u32;
        sp.dels = b.dels.len() as u32;
        debug_assert_eq!(
            self.chains.of(v).first(),
            Some(&0),
            "the base is in every chain"
        );
        let newer = self.runs_of(v).skip(1).map(|r| r.dir(d));
        let mut dead = |x: VertexId| {
            if let Ok(k) = list.binary_search(&x) {
                b.dels.push((b0 + k as u64) as u32);
            }
        };
        match adds {
            Adds::Borrowed(dd) => {
                sp.adds = dd.offs.get()[(v as usize).min(dd.n_index())] as u32;
                dd.tombs(v).iter().for_each(|&x| dead(x));
            }
            Adds::Gathered => {
                sp.adds = b.ids.len() as u32;
                held.clear();
                held.extend(newer.filter_map(|dd| dd.index_of(v).map(|i| (dd, i))));
                for &(dd, i) in held.iter() {
                    dd.tombs_at(i).iter().for_each(|&x| dead(x));
                }
                let from = b.ids.len();
                gather_survivors(held, weighted, b);
                if held.len() > 1 {
                    let wfrom = from.min(b.wts.len());
                    sort_added(&mut b.ids[from..], &mut b.wts[wfrom..]);
                    // Runs' dead positions interleave, and a base edge tombstoned,
                    // re-added and tombstoned again is dead once. (One run's are
                    // ascending and distinct already: its tombstones are.)
                    let mine = &mut b.dels[sp.dels as usize..];
                    mine.sort_unstable();
                    let keep = crate::types::dedup_sorted(mine);
                    b.dels.truncate(sp.dels as usize + keep);
                }
            }
        }
        debug_assert!(
            b.dels[sp.dels as usize..].windows(2).all(|w| w[0] < w[1]),
            "a vertex's dead positions ascend"
        );
    }
}

/// Whether any direction of run `r` is compressed.
fn is_packed(r: &crate::run::Run) -> bool {
    r.out.is_packed() || r.inn.as_ref().is_some_and(|d| d.is_packed())
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
fn sort_added(ids: &mut [VertexId], wts: &mut [f64]) {
    if wts.is_empty() {
        ids.sort_unstable();
        return;
    }
    let mut pairs: Vec<(VertexId, f64)> = ids.iter().copied().zip(wts.iter().copied()).collect();
    pairs.sort_unstable_by_key(|p| p.0);
    for (k, (x, w)) in pairs.into_iter().enumerate() {
        ids[k] = x;
        wts[k] = w;
    }
}

/// One direction as a view reads it.
#[derive(Clone, Copy)]
struct Side<'a> {
    spans: &'a [Span],
    base: Adj<'a>,
    dels: &'a [u32],
    ids: &'a [VertexId],
    wts: &'a [f64],
}

impl<'a> Side<'a> {
    /// The side of index `l` over `base`; `newer` is the run its additions are borrowed
    /// from, if they are.
    fn new(l: &'a Layer, base: Adj<'a>, newer: &'a crate::run::Run, d: Dir) -> Side<'a> {
        let (ids, wts) = if l.borrowed {
            let dd = newer.dir(d);
            (dd.adds.get(), dd.wts.get())
        } else {
            (&l.ids[..], &l.wts[..])
        };
        Side {
            spans: &l.spans,
            base,
            dels: &l.dels,
            ids,
            wts,
        }
    }

    /// `v`'s entry and the next one (`None` past the index).
    #[inline]
    fn span(&self, v: VertexId) -> Option<(Span, Span)> {
        Some((
            *self.spans.get(v as usize)?,
            *self.spans.get(v as usize + 1)?,
        ))
    }

    #[inline]
    fn degree(&self, v: VertexId) -> usize {
        self.span(v).map_or(0, |(s, e)| {
            (e.base - s.base - (e.dels - s.dels) + e.adds - s.adds) as usize
        })
    }

    /// Folds `v`'s live base neighbors, then its additions.
    #[inline]
    fn fold<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, mut f: F) -> A {
        let Some((s, e)) = self.span(v) else {
            return init;
        };
        let mut acc = init;
        let mut at = s.base;
        for &p in &self.dels[s.dels as usize..e.dels as usize] {
            acc = self
                .base
                .slice(at as u64, p as u64)
                .iter()
                .fold(acc, |a, &x| f(a, x));
            at = p + 1;
        }
        acc = (self.base.slice(at as u64, e.base as u64).iter()).fold(acc, |a, &x| f(a, x));
        self.ids[s.adds as usize..e.adds as usize]
            .iter()
            .fold(acc, |a, &x| f(a, x))
    }

    /// Calls `f` on `v`'s neighbors until it returns true; returns whether it did.
    #[inline]
    fn find<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        let Some((s, e)) = self.span(v) else {
            return false;
        };
        let mut at = s.base;
        for &p in &self.dels[s.dels as usize..e.dels as usize] {
            if self.base.slice(at as u64, p as u64).iter().any(|&x| f(x)) {
                return true;
            }
            at = p + 1;
        }
        self.base
            .slice(at as u64, e.base as u64)
            .iter()
            .any(|&x| f(x))
            || self.ids[s.adds as usize..e.adds as usize]
                .iter()
                .any(|&x| f(x))
    }

    /// Calls `f` on `v`'s neighbors with their weights (1 when unweighted).
    #[inline]
    fn for_each_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, mut f: F) {
        let Some((s, e)) = self.span(v) else {
            return;
        };
        let mut at = s.base;
        for &p in &self.dels[s.dels as usize..e.dels as usize] {
            self.base.for_each_weighted_in(at as u64, p as u64, &mut f);
            at = p + 1;
        }
        self.base
            .for_each_weighted_in(at as u64, e.base as u64, &mut f);
        let (a0, a1) = (s.adds as usize, e.adds as usize);
        let ids = &self.ids[a0..a1];
        if self.wts.is_empty() {
            ids.iter().for_each(|&x| f(x, 1.0));
        } else {
            ids.iter()
                .zip(&self.wts[a0..a1])
                .for_each(|(&x, &w)| f(x, w));
        }
    }

    /// Whether `w` is a neighbor of `v`.
    fn has(&self, v: VertexId, w: VertexId) -> bool {
        let Some((s, e)) = self.span(v) else {
            return false;
        };
        if let Ok(k) = self
            .base
            .slice(s.base as u64, e.base as u64)
            .binary_search(&w)
        {
            let p = s.base + k as u32;
            if self.dels[s.dels as usize..e.dels as usize]
                .binary_search(&p)
                .is_err()
            {
                return true;
            }
        }
        self.ids[s.adds as usize..e.adds as usize]
            .binary_search(&w)
            .is_ok()
    }

    /// `v`'s neighbors, sorted, into `out`.
    fn sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        let Some((s, e)) = self.span(v) else {
            return;
        };
        out.reserve(self.degree(v));
        let mut at = s.base;
        for &p in &self.dels[s.dels as usize..e.dels as usize] {
            out.extend_from_slice(self.base.slice(at as u64, p as u64));
            at = p + 1;
        }
        out.extend_from_slice(self.base.slice(at as u64, e.base as u64));
        let added = &self.ids[s.adds as usize..e.adds as usize];
        if !added.is_empty() {
            out.extend_from_slice(added);
            // Two ascending runs: the stable sort finds them and merges in one pass.
            out.sort();
        }
    }
}

/// A borrowed view of a compacted base plus newer runs (see [`Snapshot::layered`]).
#[derive(Clone, Copy)]
pub struct LayeredView<'a> {
    base: FlatView<'a>,
    out: Side<'a>,
    inn: Side<'a>,
}

impl GraphView for LayeredView<'_> {
    fn num_vertices(&self) -> usize {
        self.base.num_vertices()
    }
    fn external_id(&self, v: VertexId) -> u64 {
        self.base.external_id(v)
    }
    fn num_edges(&self) -> u64 {
        self.base.num_edges()
    }
    fn is_undirected(&self) -> bool {
        self.base.is_undirected()
    }
    #[inline]
    fn vertex_exists(&self, v: VertexId) -> bool {
        self.base.vertex_exists(v)
    }
    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        self.out.degree(v)
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.inn.degree(v)
    }
    #[inline]
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.out.fold(v, (), |(), x| f(x))
    }
    #[inline]
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.inn.fold(v, (), |(), x| f(x))
    }
    #[inline]
    fn fold_out<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.out.fold(v, init, f)
    }
    #[inline]
    fn fold_in<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, f: F) -> A {
        self.inn.fold(v, init, f)
    }
    #[inline]
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.out.find(v, f)
    }
    #[inline]
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.inn.find(v, f)
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.out.has(u, v)
    }
    fn is_weighted(&self) -> bool {
        self.base.is_weighted()
    }
    #[inline]
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, f: F) {
        self.out.for_each_weighted(v, f)
    }
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.out.sorted(v, out)
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.inn.sorted(v, out)
    }
}
