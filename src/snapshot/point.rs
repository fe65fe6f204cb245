//! A past graph read in place: one run's lists with the entries that came after the
//! commit masked out, and the run versions' spells of edges present then that the run does
//! not list, masked to those that hold the commit.
//!
//! A compacted store with run versions holds the graph as of any commit inside its run's
//! range: the run's entries born by then, plus the edges its versions' spells say were
//! present then (removed after the commit). Copying that graph out costs its size in fresh
//! DRAM, which a VM zeroes page by page (0.3 s at Kron20). Read in place it costs a bit per
//! entry and per spell (the masks, 4.5 MB at Kron20) and where each vertex's spells start
//! (4 B a vertex); the spells' neighbors are read where the versions file is mapped.
//!
//! A list is read word by word of its mask: a word with no entry masked hands its slice
//! over as it is, else its live entries are picked by their bits, without a branch per
//! entry. The run's list comes first, then the spells that hold: each is ascending, and
//! sorted reads merge them.

use super::flat::{meta_methods, side_methods, Adj, Meta};
use super::point_copy::PointCopy;
use super::{Dir, GraphView, Snapshot};
use crate::build_once::BuildOnce;
use crate::run::Sec;
use crate::types::VertexId;

/// One direction of a point: which of the run's entries it leaves out, and the spells
/// of edges it holds that the run does not list.
pub(crate) struct PointLists {
    /// Bit `p` set: the run's entry `p` came after the point.
    dead: Vec<u64>,
    /// Vertex `v`'s spells are `spells[spell_at[v]..spell_at[v + 1]]`, ascending;
    /// `spell_at` has one more entry than the snapshot has vertices.
    spell_at: Vec<u32>,
    spells: Sec<VertexId>,
    /// Bit `i` set: spell `i` does not hold the point.
    spell_dead: Vec<u64>,
}

impl PointLists {
    /// The lists of a direction whose run has `entries` neighbor entries, for `n`
    /// vertices; `None` when the parts do not fit one another.
    pub(crate) fn new(
        dead: Vec<u64>,
        spell_at: Vec<u32>,
        spells: Sec<VertexId>,
        spell_dead: Vec<u64>,
        (entries, n): (usize, usize),
    ) -> Option<PointLists> {
        let fits = dead.len() == entries.div_ceil(64)
            && spell_at.len() == n + 1
            && spell_at.last().map(|&e| e as usize) == Some(spells.get().len())
            && spell_dead.len() == spells.get().len().div_ceil(64);
        // The starts are built as running ends, so they never fall; a read past that
        // would panic on its slice, not read astray. Checked where tests run: a pass over
        // every vertex is a few ms of each open at Kron20.
        debug_assert!(spell_at.windows(2).all(|w| w[0] <= w[1]));
        fits.then_some(PointLists {
            dead,
            spell_at,
            spells,
            spell_dead,
        })
    }

    /// Entries of the run that the point leaves out, less the spells it keeps.
    fn net_dead(&self) -> i64 {
        let ones = |w: &[u64]| w.iter().map(|w| i64::from(w.count_ones())).sum::<i64>();
        let held = self.spells.get().len() as i64 - ones(&self.spell_dead);
        ones(&self.dead) - held
    }

    /// DRAM held, in bytes (the spells are read where their file is mapped).
    fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&self.dead[..])
            + size_of_val(&self.spell_at[..])
            + size_of_val(&self.spell_dead[..])
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

/// A point's lists of both directions (`inn` unused in undirected stores), and the copies
/// of those a kernel sweeps ([`Snapshot::plan_point_sweeps`]), made on first use.
pub(crate) struct PointIndex {
    out: PointLists,
    inn: Option<PointLists>,
    copies: [BuildOnce<Option<PointCopy>>; 2],
}

impl PointIndex {
    /// The point's lists.
    pub(crate) fn new(out: PointLists, inn: Option<PointLists>) -> PointIndex {
        PointIndex {
            out,
            inn,
            copies: Default::default(),
        }
    }

    /// The copy of direction `d`'s lists, once made (`None` inside: not made, it did not
    /// fit).
    pub(crate) fn copy(&self, d: Dir) -> &BuildOnce<Option<PointCopy>> {
        &self.copies[usize::from(d == Dir::In && self.inn.is_some())]
    }

    /// The copy of `d`'s lists, if made.
    fn copied(&self, d: Dir) -> Option<&PointCopy> {
        self.copy(d).get()?.as_ref()
    }

    /// The directed edges of the point, over a run of `run_entries` out-entries.
    pub(crate) fn edges(&self, run_entries: u64) -> u64 {
        (run_entries as i64 - self.out.net_dead()) as u64
    }
}

/// A list of ids with a bit per id that masks it out, as a view reads it: the run's
/// entries (masked when born after the point) or the spells (masked when they do not hold
/// it).
#[derive(Clone, Copy)]
struct MaskedIds<'a> {
    ids: &'a [VertexId],
    dead: &'a [u64],
}

impl MaskedIds<'_> {
    /// The live ids at positions `a..b`.
    #[inline(always)]
    fn count(&self, a: usize, b: usize) -> usize {
        if self.dead.is_empty() {
            return b - a;
        }
        let mut dead = 0;
        let mut p = a;
        while p < b {
            let end = ((p | 63) + 1).min(b);
            dead += ((self.dead[p >> 6] >> (p & 63)) & low(end - p)).count_ones() as usize;
            p = end;
        }
        b - a - dead
    }

    /// Folds the live ids at positions `a..b`.
    #[inline(always)]
    fn fold<A, F: FnMut(A, VertexId) -> A>(&self, a: usize, b: usize, init: A, f: &mut F) -> A {
        if self.dead.is_empty() {
            return self.ids[a..b].iter().fold(init, |a, &x| f(a, x));
        }
        let mut acc = init;
        let mut p = a;
        while p < b {
            let end = ((p | 63) + 1).min(b);
            let dead = (self.dead[p >> 6] >> (p & 63)) & low(end - p);
            if dead == 0 {
                acc = self.ids[p..end].iter().fold(acc, |a, &x| f(a, x));
            } else {
                let mut live = !dead & low(end - p);
                while live != 0 {
                    acc = f(acc, self.ids[p + live.trailing_zeros() as usize]);
                    live &= live - 1;
                }
            }
            p = end;
        }
        acc
    }

    /// Calls `f` on the live ids at positions `a..b` until it returns true.
    #[inline(always)]
    fn find<F: FnMut(VertexId) -> bool>(&self, a: usize, b: usize, f: &mut F) -> bool {
        if self.dead.is_empty() {
            return self.ids[a..b].iter().any(|&x| f(x));
        }
        let mut p = a;
        while p < b {
            let end = ((p | 63) + 1).min(b);
            let dead = (self.dead[p >> 6] >> (p & 63)) & low(end - p);
            if dead == 0 {
                if self.ids[p..end].iter().any(|&x| f(x)) {
                    return true;
                }
            } else {
                let mut live = !dead & low(end - p);
                while live != 0 {
                    if f(self.ids[p + live.trailing_zeros() as usize]) {
                        return true;
                    }
                    live &= live - 1;
                }
            }
            p = end;
        }
        false
    }

    /// Whether `w` is live among positions `a..b` (ascending; an id may repeat).
    fn has(&self, a: usize, b: usize, w: VertexId) -> bool {
        let from = a + self.ids[a..b].partition_point(|&x| x < w);
        (from..b)
            .take_while(|&p| self.ids[p] == w)
            .any(|p| self.dead.is_empty() || (self.dead[p >> 6] >> (p & 63)) & 1 == 0)
    }
}

/// One direction as a view reads it.
#[derive(Clone, Copy)]
struct Masked<'a> {
    run: Adj<'a>,
    entries: MaskedIds<'a>,
    spell_at: &'a [u32],
    spells: MaskedIds<'a>,
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
            entries: MaskedIds {
                ids: run.ids(),
                dead: &l.dead,
            },
            spell_at: &l.spell_at,
            spells: MaskedIds {
                ids: l.spells.get(),
                dead: &l.spell_dead,
            },
        }
    }

    /// A direction copied out: its lists as they are, nothing masked, no spells.
    fn copied(c: &'a PointCopy) -> Masked<'a> {
        let run = Adj::new(&c.offs, &c.ids, &[]);
        let none = MaskedIds {
            ids: &[],
            dead: &[],
        };
        Masked {
            run,
            entries: MaskedIds {
                ids: run.ids(),
                dead: &[],
            },
            spell_at: &[],
            spells: none,
        }
    }

    /// `v`'s positions in the run's neighbor array.
    #[inline(always)]
    fn range(&self, v: VertexId) -> (usize, usize) {
        let a = self.run.start(v) as usize;
        (a, a + self.run.at(v).len())
    }

    /// `v`'s positions among the spells.
    #[inline(always)]
    fn spell_range(&self, v: VertexId) -> (usize, usize) {
        let v = v as usize;
        match self.spell_at.get(v + 1) {
            Some(&e) => (self.spell_at[v] as usize, e as usize),
            None => (0, 0),
        }
    }

    #[inline(always)]
    fn degree(&self, v: VertexId) -> usize {
        let ((a, b), (c, d)) = (self.range(v), self.spell_range(v));
        self.entries.count(a, b) + self.spells.count(c, d)
    }

    /// Folds `v`'s neighbors: the run's live entries, then the spells that hold.
    #[inline(always)]
    fn fold<A, F: FnMut(A, VertexId) -> A>(&self, v: VertexId, init: A, mut f: F) -> A {
        let ((a, b), (c, d)) = (self.range(v), self.spell_range(v));
        let acc = self.entries.fold(a, b, init, &mut f);
        self.spells.fold(c, d, acc, &mut f)
    }

    /// Calls `f` on `v`'s neighbors until it returns true; returns whether it did.
    #[inline(always)]
    fn find<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        let ((a, b), (c, d)) = (self.range(v), self.spell_range(v));
        self.entries.find(a, b, &mut f) || self.spells.find(c, d, &mut f)
    }

    /// Whether `w` is a neighbor of `v` at the point: a live entry of the run's list, or
    /// a spell that holds (an entry masked out may be present again by a spell).
    fn has(&self, v: VertexId, w: VertexId) -> bool {
        let ((a, b), (c, d)) = (self.range(v), self.spell_range(v));
        self.entries.has(a, b, w) || self.spells.has(c, d, w)
    }

    /// `v`'s neighbors, sorted, into `out`.
    fn sorted(&self, v: VertexId, out: &mut Vec<VertexId>) {
        out.clear();
        self.fold(v, (), |(), x| out.push(x));
        let (c, d) = self.spell_range(v);
        if self.spells.count(c, d) > 0 {
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
        let out = self.point_side(idx, Dir::Out)?;
        let inn = match idx.inn {
            Some(_) => self.point_side(idx, Dir::In)?,
            None => out,
        };
        Some(PointView {
            meta: self.meta(),
            out,
            inn,
            idx,
        })
    }

    /// One direction of the point `idx` (out-lists stand for in-lists when undirected):
    /// its copy if one was made, else the run read through the masks.
    fn point_side<'a>(&'a self, idx: &'a PointIndex, d: Dir) -> Option<Masked<'a>> {
        if let Some(c) = idx.copied(d) {
            return Some(Masked::copied(c));
        }
        let run = &self.runs[0];
        match (d, &run.inn, &idx.inn) {
            (Dir::In, Some(dd), Some(l)) => Some(Masked::new(Adj::of(dd)?, l)),
            _ => Some(Masked::new(Adj::of(&run.out)?, &idx.out)),
        }
    }

    /// One direction of the point this snapshot is, for a read of one list: cheaper than
    /// the whole [`PointView`], which the snapshot's own reads would otherwise build per
    /// call (a model check's lookup of every pair of vertices did, at twice the cost).
    #[inline]
    pub(crate) fn point_dir(&self, d: Dir) -> Option<PointDir<'_>> {
        let idx = self.point.as_deref()?;
        self.point_side(idx, d).map(PointDir)
    }

    /// One direction of the point read through its masks, never its copy (what a copy is
    /// made from).
    pub(crate) fn point_dir_masked(&self, d: Dir) -> Option<PointDir<'_>> {
        let idx = self.point.as_deref()?;
        let run = &self.runs[0];
        let m = match (d, &run.inn, &idx.inn) {
            (Dir::In, Some(dd), Some(l)) => Masked::new(Adj::of(dd)?, l),
            _ => Masked::new(Adj::of(&run.out)?, &idx.out),
        };
        Some(PointDir(m))
    }
}

/// One direction of a point, as [`Snapshot::point_dir`] reads it.
pub(crate) struct PointDir<'a>(Masked<'a>);

impl PointDir<'_> {
    /// The positions it reads: the run's entries and the spells (an upper bound on its
    /// edges).
    pub(crate) fn entries(&self) -> usize {
        self.0.entries.ids.len() + self.0.spells.ids.len()
    }

    /// Writes `v`'s neighbors, ascending, to the front of `out`, and returns how many:
    /// the run's live entries, then the spells that hold (gathered in `spare`) merged in
    /// from the back, as both are ascending.
    pub(crate) fn write_sorted(
        &self,
        v: VertexId,
        out: &mut [VertexId],
        spare: &mut Vec<VertexId>,
    ) -> usize {
        let ((a, b), (c, d)) = (self.0.range(v), self.0.spell_range(v));
        let mut i = 0;
        self.0.entries.find(a, b, &mut |x| {
            out[i] = x;
            i += 1;
            false
        });
        spare.clear();
        self.0.spells.find(c, d, &mut |x| {
            spare.push(x);
            false
        });
        let (mut j, len) = (spare.len(), i + spare.len());
        for w in (0..len).rev() {
            if j == 0 {
                break;
            }
            if i > 0 && out[i - 1] > spare[j - 1] {
                out[w] = out[i - 1];
                i -= 1;
            } else {
                out[w] = spare[j - 1];
                j -= 1;
            }
        }
        len
    }

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
        let copies = [Dir::Out, Dir::In].map(|d| self.idx.copied(d).map_or(0, PointCopy::bytes));
        self.idx.out.bytes()
            + self.idx.inn.as_ref().map_or(0, PointLists::bytes)
            + copies[0]
            + usize::from(self.idx.inn.is_some()) * copies[1]
    }
}

impl GraphView for PointView<'_> {
    meta_methods!();
    side_methods!();
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
    /// masked at one of three densities, and spells beside some (an id twice, one spell
    /// masked; an id the run lists masked): every read of the masked view equals the same
    /// read of the lists filtered by hand.
    #[test]
    fn masked_reads_equal_the_lists_filtered() {
        let mut seed = 3;
        let n = 60usize;
        let (mut offs, mut ids, mut dead_of) = (vec![0u64], Vec::new(), Vec::new());
        let (mut spell_at, mut spells, mut spell_dead_of) = (vec![0u32], Vec::new(), Vec::new());
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
            // Spells: ids above every listed one, each twice (held once at most), and
            // in every fifth vertex one more per listed id that is masked out.
            let masked: Vec<VertexId> = (offs[v] as usize..ids.len())
                .filter(|&p| dead_of[p] && v % 5 == 0)
                .map(|p| ids[p])
                .collect();
            let mut mine: Vec<(VertexId, bool)> = masked
                .iter()
                .map(|&w| (w, next(&mut seed).is_multiple_of(2)))
                .collect();
            for k in 0..[0, 1, 40, 70][v % 4] as u64 {
                let w = (x + 1 + k) as VertexId;
                let held = next(&mut seed) % 3;
                mine.push((w, held != 1));
                mine.push((w, held != 2));
            }
            mine.sort_by_key(|s| s.0);
            for (w, dead) in mine {
                spells.push(w);
                spell_dead_of.push(dead);
            }
            spell_at.push(spells.len() as u32);
        }
        let bits = |of: &[bool]| {
            let mut words = vec![0u64; of.len().div_ceil(64)];
            for (p, _) in of.iter().enumerate().filter(|(_, &d)| d) {
                words[p >> 6] |= 1 << (p & 63);
            }
            words
        };
        let sec = Sec::owned(spells.clone());
        let lists = PointLists::new(
            bits(&dead_of),
            spell_at.clone(),
            sec,
            bits(&spell_dead_of),
            (ids.len(), n),
        )
        .unwrap();
        let m = Masked::new(Adj::new(&offs, &ids, &[]), &lists);
        let mut edges = 0;
        for v in 0..n as VertexId {
            let (a, b) = (offs[v as usize] as usize, offs[v as usize + 1] as usize);
            let mut want: Vec<VertexId> = (a..b).filter(|&p| !dead_of[p]).map(|p| ids[p]).collect();
            let (c, d) = (
                spell_at[v as usize] as usize,
                spell_at[v as usize + 1] as usize,
            );
            want.extend((c..d).filter(|&i| !spell_dead_of[i]).map(|i| spells[i]));
            edges += want.len();
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
            let (mut buf, mut spare) = (vec![0; want.len() + 3], Vec::new());
            let k = PointDir(m).write_sorted(v, &mut buf, &mut spare);
            assert_eq!(buf[..k], by_hand, "vertex {v}: written sorted");
            for &x in ids[a..b].iter().chain(&spells[c..d]) {
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
        let idx = PointIndex::new(lists, None);
        assert_eq!(
            idx.edges(ids.len() as u64),
            edges as u64,
            "the point's edge count"
        );
        let none = || Sec::owned(Vec::new());
        assert!(PointLists::new(vec![], vec![0], none(), vec![], (1, 0)).is_none());
        assert!(PointLists::new(vec![], vec![0, 1], none(), vec![], (0, 1)).is_none());
    }
}
