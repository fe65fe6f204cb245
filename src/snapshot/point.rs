//! A past graph read in place: one run's lists with the entries that came after the
//! commit masked out, and the few edges present then that the run no longer lists.
//!
//! A compacted store with run versions holds the graph as of any commit inside its run's
//! range: the run's entries born by then, plus the edges its versions settle present then
//! that the run does not list (removed after the commit). Copying that graph out costs its
//! size in fresh DRAM, which a VM zeroes page by page (0.3 s at Kron20). Read in place it
//! costs a bit per entry (the mask, 4 MB at Kron20) and the settled edges (a few percent).
//!
//! A list is read word by word of the mask: a word with no entry masked hands its slice
//! over as it is, else its live entries are picked by their bits, without a branch per
//! entry. The run's list comes first, then the settled edges: each is ascending, and
//! sorted reads merge them.

use super::flat::{meta_methods, Adj, Meta};
use super::{GraphView, Snapshot};
use crate::types::VertexId;

/// One direction of a point: which of the run's entries it leaves out, and the edges it
/// holds that the run does not list.
pub(crate) struct PointLists {
    /// Bit `p` set: the run's entry `p` came after the point.
    dead: Vec<u64>,
    /// Vertex `v`'s settled edges are `extra[extra_at[v]..extra_at[v + 1]]`, ascending;
    /// `extra_at` has one more entry than the snapshot has vertices.
    extra_at: Vec<u32>,
    extra: Vec<VertexId>,
}

impl PointLists {
    /// The lists of a direction whose run has `entries` neighbor entries, for `n`
    /// vertices; `None` when the parts do not fit one another.
    pub(crate) fn new(
        dead: Vec<u64>,
        extra_at: Vec<u32>,
        extra: Vec<VertexId>,
        entries: usize,
        n: usize,
    ) -> Option<PointLists> {
        let fits = dead.len() == entries.div_ceil(64)
            && extra_at.len() == n + 1
            && extra_at.last().map(|&e| e as usize) == Some(extra.len());
        // The mask builds `extra_at` as running ends, so it never falls; a read past that
        // would panic on its slice, not read astray. Checked where tests run: a pass over
        // every vertex is a few ms of each open at Kron20.
        debug_assert!(extra_at.windows(2).all(|w| w[0] <= w[1]));
        fits.then_some(PointLists {
            dead,
            extra_at,
            extra,
        })
    }

    /// Entries of the run that the point leaves out.
    fn dead_count(&self) -> u64 {
        self.dead.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// DRAM held, in bytes.
    fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&self.dead[..]) + size_of_val(&self.extra_at[..]) + size_of_val(&self.extra[..])
    }
}

/// Whether a point's mask can read `run`: every direction dense, plain and without
/// tombstones (a compacted store's one run), and unweighted.
pub(crate) fn point_reads(run: &crate::run::Run) -> bool {
    let plain = |d: &crate::run::DirData| Adj::of(d).is_some() && d.wts.get().is_empty();
    plain(&run.out)
        && run.inn.as_ref().is_none_or(plain)
        && run.header.flags & crate::run::format::WEIGHTED == 0
}

/// A point's lists of both directions (`inn` unused in undirected stores).
pub(crate) struct PointIndex {
    out: PointLists,
    inn: Option<PointLists>,
}

impl PointIndex {
    /// The point's lists.
    pub(crate) fn new(out: PointLists, inn: Option<PointLists>) -> PointIndex {
        PointIndex { out, inn }
    }

    /// The directed edges of the point, over a run of `run_entries` out-entries.
    pub(crate) fn edges(&self, run_entries: u64) -> u64 {
        run_entries - self.out.dead_count() + self.out.extra.len() as u64
    }
}

/// One direction as a view reads it.
#[derive(Clone, Copy)]
struct Masked<'a> {
    run: Adj<'a>,
    dead: &'a [u64],
    extra_at: &'a [u32],
    extra: &'a [VertexId],
}

/// The low `k` bits (`k <= 64`).
#[inline(always)]
fn low(k: usize) -> u64 {
    match k {
        64 => u64::MAX,
        k => (1u64 << k) - 1,
    }
}

impl<'a> Masked<'a> {
    fn new(run: Adj<'a>, l: &'a PointLists) -> Masked<'a> {
        Masked {
            run,
            dead: &l.dead,
            extra_at: &l.extra_at,
            extra: &l.extra,
        }
    }

    /// `v`'s positions in the run's neighbor array.
    #[inline(always)]
    fn range(&self, v: VertexId) -> (usize, usize) {
        let a = self.run.start(v) as usize;
        (a, a + self.run.at(v).len())
    }

    /// `v`'s settled edges.
    #[inline(always)]
    fn extras(&self, v: VertexId) -> &'a [VertexId] {
        let v = v as usize;
        match self.extra_at.get(v + 1) {
            Some(&e) => &self.extra[self.extra_at[v] as usize..e as usize],
            None => &[],
        }
    }

    #[inline(always)]
    fn degree(&self, v: VertexId) -> usize {
        let (a, b) = self.range(v);
        let mut dead = 0;
        let mut p = a;
        while p < b {
            let end = ((p | 63) + 1).min(b);
            dead += ((self.dead[p >> 6] >> (p & 63)) & low(end - p)).count_ones() as usize;
            p = end;
        }
        b - a - dead + self.extras(v).len()
    }

    /// Folds `v`'s neighbors: the run's live entries, then the settled edges.
    #[inline(always)]
    fn fold<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, mut f: F) -> A {
        let (a, b) = self.range(v);
        let ids = self.run.ids();
        let mut acc = init;
        let mut p = a;
        while p < b {
            let end = ((p | 63) + 1).min(b);
            let dead = (self.dead[p >> 6] >> (p & 63)) & low(end - p);
            if dead == 0 {
                acc = ids[p..end].iter().fold(acc, |a, &x| f(a, x));
            } else {
                let mut live = !dead & low(end - p);
                while live != 0 {
                    acc = f(acc, ids[p + live.trailing_zeros() as usize]);
                    live &= live - 1;
                }
            }
            p = end;
        }
        self.extras(v).iter().fold(acc, |a, &x| f(a, x))
    }

    /// Calls `f` on `v`'s neighbors until it returns true; returns whether it did.
    #[inline(always)]
    fn find<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        let (a, b) = self.range(v);
        let ids = self.run.ids();
        let mut p = a;
        while p < b {
            let end = ((p | 63) + 1).min(b);
            let dead = (self.dead[p >> 6] >> (p & 63)) & low(end - p);
            if dead == 0 {
                if ids[p..end].iter().any(|&x| f(x)) {
                    return true;
                }
            } else {
                let mut live = !dead & low(end - p);
                while live != 0 {
                    if f(ids[p + live.trailing_zeros() as usize]) {
                        return true;
                    }
                    live &= live - 1;
                }
            }
            p = end;
        }
        self.extras(v).iter().any(|&x| f(x))
    }

    /// Whether `w` is a neighbor of `v` at the point: a live entry of the run's list, or
    /// a settled edge (an entry masked out may be settled present again).
    fn has(&self, v: VertexId, w: VertexId) -> bool {
        let (a, _) = self.range(v);
        let live = match self.run.at(v).binary_search(&w) {
            Ok(i) => (self.dead[(a + i) >> 6] >> ((a + i) & 63)) & 1 == 0,
            Err(_) => false,
        };
        live || self.extras(v).binary_search(&w).is_ok()
    }

    /// `v`'s neighbors, sorted, into `out`.
    fn sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        self.fold(v, (), |(), x| out.push(x));
        if !self.extras(v).is_empty() {
            // Two ascending runs end to end: the stable sort finds them and merges.
            out.sort();
        }
    }
}

/// A borrowed view of a past graph read in place (see the module doc and
/// [`Snapshot::point`]).
#[derive(Clone, Copy)]
pub struct PointView<'a> {
    meta: Meta<'a>,
    out: Masked<'a>,
    inn: Masked<'a>,
    idx: &'a PointIndex,
}

impl Snapshot {
    /// The snapshot as a past graph read in place (a compacted run with the entries after
    /// its commit masked), when it is one: `Graph::snapshot_at` makes it of a store whose
    /// one run has versions. `None` otherwise.
    pub fn point(&self) -> Option<PointView<'_>> {
        let idx = self.point.as_deref()?;
        let run = &self.runs[0];
        let out = Masked::new(Adj::of(&run.out)?, &idx.out);
        let inn = match (&run.inn, &idx.inn) {
            (Some(d), Some(l)) => Masked::new(Adj::of(d)?, l),
            _ => out,
        };
        Some(PointView {
            meta: self.meta(),
            out,
            inn,
            idx,
        })
    }
}

impl Snapshot {
    /// One direction of the point this snapshot is, for a read of one list: cheaper than
    /// the whole [`PointView`], which the snapshot's own reads would otherwise build per
    /// call (a model check's lookup of every pair of vertices did, at twice the cost).
    #[inline]
    pub(crate) fn point_dir(&self, d: super::Dir) -> Option<PointDir<'_>> {
        let idx = self.point.as_deref()?;
        let run = &self.runs[0];
        let m = match (d, &run.inn, &idx.inn) {
            (super::Dir::In, Some(dd), Some(l)) => Masked::new(Adj::of(dd)?, l),
            _ => Masked::new(Adj::of(&run.out)?, &idx.out),
        };
        Some(PointDir(m))
    }
}

/// One direction of a point, as [`Snapshot::point_dir`] reads it.
pub(crate) struct PointDir<'a>(Masked<'a>);

impl PointDir<'_> {
    /// The degree of `v`.
    pub(crate) fn degree(&self, v: VertexId) -> usize {
        self.0.degree(v)
    }

    /// Calls `f` on `v`'s neighbors until it returns true; returns whether it did.
    pub(crate) fn find<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        self.0.find(v, f)
    }

    /// Whether `w` is a neighbor of `v`.
    pub(crate) fn has(&self, v: VertexId, w: VertexId) -> bool {
        self.0.has(v, w)
    }

    /// `v`'s neighbors, sorted, into `out`.
    pub(crate) fn sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.0.sorted(v, out)
    }
}

impl PointView<'_> {
    /// DRAM the view holds (masks and settled edges of both directions), in bytes.
    pub fn index_bytes(&self) -> usize {
        self.idx.out.bytes() + self.idx.inn.as_ref().map_or(0, PointLists::bytes)
    }
}

impl GraphView for PointView<'_> {
    meta_methods!();
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
    fn out_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.out.sorted(v, out)
    }
    fn in_neighbors_sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        self.inn.sorted(v, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of numbers.
    fn next(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    /// Lists of lengths from 0 to 300 (crossing mask words at every offset), each entry
    /// masked at one of three densities, and settled edges beside some: every read of the
    /// masked view equals the same read of the lists filtered by hand.
    #[test]
    fn masked_reads_equal_the_lists_filtered() {
        let mut seed = 3;
        let n = 60usize;
        let (mut offs, mut ids, mut dead_of) = (vec![0u64], Vec::new(), Vec::new());
        let mut extra_at = vec![0u32];
        let mut extra = Vec::new();
        for v in 0..n {
            let len = [0, 1, 63, 64, 65, 130, 300][v % 7] as u64;
            let density = [0, 10, 90][v % 3];
            let mut x = 0;
            for _ in 0..len {
                x += 1 + next(&mut seed) % 3;
                ids.push(x as VertexId);
                dead_of.push(next(&mut seed) % 100 < density);
            }
            offs.push(ids.len() as u64);
            // Settled edges: above every listed one, or between them (never a live one).
            for k in 0..(v % 4) as u64 {
                extra.push((x + 1 + k) as VertexId);
            }
            extra_at.push(extra.len() as u32);
        }
        let mut dead = vec![0u64; ids.len().div_ceil(64)];
        for (p, _) in dead_of.iter().enumerate().filter(|(_, &d)| d) {
            dead[p >> 6] |= 1 << (p & 63);
        }
        let lists = PointLists::new(dead, extra_at, extra.clone(), ids.len(), n).unwrap();
        let m = Masked::new(Adj::new(&offs, &ids, &[]), &lists);
        for v in 0..n as VertexId {
            let (a, b) = (offs[v as usize] as usize, offs[v as usize + 1] as usize);
            let mut want: Vec<VertexId> = (a..b).filter(|&p| !dead_of[p]).map(|p| ids[p]).collect();
            let (e0, e1) = (lists.extra_at[v as usize], lists.extra_at[v as usize + 1]);
            want.extend_from_slice(&extra[e0 as usize..e1 as usize]);
            let got = m.fold(v, Vec::new(), |mut acc, x| {
                acc.push(x);
                acc
            });
            assert_eq!(got, want, "vertex {v}: fold");
            assert_eq!(m.degree(v), want.len(), "vertex {v}: degree");
            let mut sorted = Vec::new();
            m.sorted(v, &mut sorted);
            let mut by_hand = want.clone();
            by_hand.sort_unstable();
            assert_eq!(sorted, by_hand, "vertex {v}: sorted");
            for &x in &ids[a..b] {
                assert_eq!(m.has(v, x), want.contains(&x), "vertex {v}: has {x}");
            }
            for &x in &want {
                assert!(m.has(v, x), "vertex {v}: has its neighbor {x}");
                let mut seen = 0;
                assert!(m.find(v, |y| {
                    seen += 1;
                    y == x
                }));
                assert_eq!(seen, want.iter().position(|&y| y == x).unwrap() + 1);
            }
            assert!(!m.find(v, |_| false));
        }
        assert!(PointLists::new(vec![], vec![0], vec![], 1, 0).is_none());
    }
}
