//! The updates of one block of `BLOCK` consecutive vertices in one direction, as an
//! append-only log in arrival order: `(local vertex, neighbor entry[, weight])`.
//!
//! An earlier design gave every vertex its own chain of chunks (XPGraph's vertex buffers).
//! Its per-vertex table cost 16 B per vertex and direction whether the vertex was touched
//! or not, and it was charged to the memtable budget: at 2^24 vertices that table alone
//! was 512 MiB, so a small budget froze after every batch. A log costs nothing per vertex
//! and 2 B plus an id per entry (6 B with 32-bit ids; weights add 8 B); grouping by vertex is deferred to the seal,
//! which sorts each block once by counting sort (`O(entries + BLOCK)`).
//!
//! Entries are neighbor ids with [`crate::batch::DEL`] marking a delete.

use crate::types::{VertexId, ID_BYTES};
use rayon::prelude::*;
/// Vertices per block. Blocks are the unit of parallel apply and seal.
pub const BLOCK_BITS: u32 = 14;
/// `1 << BLOCK_BITS`.
pub const BLOCK: usize = 1 << BLOCK_BITS;
const _: () = assert!(BLOCK_BITS <= 16, "local vertex ids are stored as u16");

/// The update log of one vertex block.
#[derive(Default)]
pub struct BlockLog {
    local: Vec<u16>,
    entries: Vec<VertexId>,
    /// Parallel to `entries` in weighted logs, empty otherwise.
    weights: Vec<f64>,
    weighted: bool,
    /// In a memtable keeping history: `(first entry, commit)` where each commit's entries
    /// start, commits ascending (a commit's entries are contiguous: batches are applied
    /// one at a time). Empty otherwise.
    marks: Vec<(u32, u32)>,
}

impl BlockLog {
    /// A log whose updates carry weights.
    pub fn weighted() -> Self {
        BlockLog {
            weighted: true,
            ..Self::default()
        }
    }

    /// Appends `n` slots to the log and hands them out, to be filled (every one of them)
    /// by whoever the caller gives them to.
    pub fn grow(&mut self, n: usize) -> Tail<'_> {
        let len = self.entries.len();
        self.local.resize(len + n, 0);
        self.entries.resize(len + n, 0);
        if self.weighted {
            self.weights.resize(len + n, 0.0);
        }
        Tail {
            local: &mut self.local[len..],
            entries: &mut self.entries[len..],
            weights: if self.weighted {
                &mut self.weights[len..]
            } else {
                &mut []
            },
        }
    }

    /// Says that the entries appended from now on belong to commit `ordinal` (the
    /// memtable's count of commits before it), for the history a seal records.
    pub fn mark(&mut self, ordinal: u32) {
        debug_assert!(
            self.marks.last().is_none_or(|&(_, o)| o <= ordinal),
            "commits in order"
        );
        let at = self.entries.len() as u32;
        match self.marks.last_mut() {
            Some(m) if m.1 == ordinal => {}
            Some(m) if m.0 == at => m.1 = ordinal,
            _ => self.marks.push((at, ordinal)),
        }
    }

    /// The commit of every entry, in arrival order (empty without marks).
    fn entry_commits(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(if self.marks.is_empty() {
            0
        } else {
            self.entries.len()
        });
        for (k, &(at, ordinal)) in self.marks.iter().enumerate() {
            let end = self
                .marks
                .get(k + 1)
                .map_or(self.entries.len(), |m| m.0 as usize);
            out.resize(out.len() + (end - at as usize), ordinal);
        }
        out
    }

    /// Reserves room for `n` more entries, so that growing by up to that many never moves
    /// the log (a transposed seal sizes its in-logs up front, see
    /// [`super::transpose`]).
    pub fn reserve(&mut self, n: usize) {
        self.local.reserve_exact(n);
        self.entries.reserve_exact(n);
        if self.weighted {
            self.weights.reserve_exact(n);
        }
    }

    /// The entries, in arrival order (of whichever local vertex).
    pub fn entries(&self) -> &[VertexId] {
        &self.entries
    }

    /// Calls `f(local vertex, entry, weight)` for every entry in arrival order (weight 0
    /// in unweighted logs).
    pub fn each(&self, mut f: impl FnMut(usize, VertexId, f64)) {
        for (i, (&l, &x)) in self.local.iter().zip(&self.entries).enumerate() {
            f(l as usize, x, self.weights.get(i).copied().unwrap_or(0.0));
        }
    }

    /// Entries held.
    pub fn ops(&self) -> u64 {
        self.entries.len() as u64
    }

    /// DRAM held (capacities, since that is what the allocator gave).
    pub fn bytes(&self) -> usize {
        self.local.capacity() * 2
            + self.entries.capacity() * ID_BYTES
            + self.weights.capacity() * 8
            + self.marks.capacity() * 8
    }

    /// Appends local vertex `lv`'s entries, in arrival order, to `out`: a scan of the whole
    /// log, for the rare single-vertex read (deleting a vertex).
    pub fn gather(&self, lv: usize, out: &mut Vec<VertexId>) {
        out.extend(
            self.local
                .iter()
                .zip(&self.entries)
                .filter(|(&l, _)| l as usize == lv)
                .map(|(_, &x)| x),
        );
    }

    /// The log grouped by vertex, arrival order kept within each vertex. A large log is
    /// grouped by all threads: dense ids come by first appearance, so the hubs crowd the
    /// first block (43% of all entries at Kron20), and grouped by one thread it left the
    /// others idle for a tenth of a Kron20 ingest.
    pub fn by_vertex(&self) -> Grouped {
        let chunks = if self.entries.len() >= PAR_GROUP {
            rayon::current_num_threads() * 2
        } else {
            1
        };
        self.grouped_in(chunks)
    }

    /// [`BlockLog::by_vertex`] with the log cut into `chunks` consecutive pieces, each
    /// counted and scattered by its own task.
    fn grouped_in(&self, chunks: usize) -> Grouped {
        if chunks <= 1 {
            return self.grouped_alone();
        }
        let per = self.local.len().div_ceil(chunks.max(1)).max(1);
        let counts: Vec<Vec<u32>> = self
            .local
            .par_chunks(per)
            .map(|c| {
                let mut h = vec![0u32; BLOCK];
                c.iter().for_each(|&l| h[l as usize] += 1);
                h
            })
            .collect();
        let mut start = vec![0u32; BLOCK + 1];
        for l in 0..BLOCK {
            start[l + 1] = start[l] + counts.iter().map(|h| h[l]).sum::<u32>();
        }
        let entries = scatter(&self.local, &self.entries, per, &counts);
        let weights = if self.weighted {
            scatter(&self.local, &self.weights, per, &counts)
        } else {
            Vec::new()
        };
        let commits = match self.marks.is_empty() {
            true => Vec::new(),
            false => scatter(&self.local, &self.entry_commits(), per, &counts),
        };
        Grouped {
            start,
            entries,
            weights,
            commits,
        }
    }
}

impl BlockLog {
    /// [`BlockLog::by_vertex`] by one thread: a counting sort.
    fn grouped_alone(&self) -> Grouped {
        let mut start = vec![0u32; BLOCK + 1];
        for &l in &self.local {
            start[l as usize + 1] += 1;
        }
        for i in 0..BLOCK {
            start[i + 1] += start[i];
        }
        let mut pos = start.clone();
        let mut entries = vec![0 as VertexId; self.entries.len()];
        let mut weights = vec![0f64; self.weights.len()];
        let of = self.entry_commits();
        let mut commits = vec![0u32; of.len()];
        for (i, (&l, &x)) in self.local.iter().zip(&self.entries).enumerate() {
            let p = &mut pos[l as usize];
            entries[*p as usize] = x;
            if self.weighted {
                weights[*p as usize] = self.weights[i];
            }
            if let Some(&c) = of.get(i) {
                commits[*p as usize] = c;
            }
            *p += 1;
        }
        Grouped {
            start,
            entries,
            weights,
            commits,
        }
    }
}

/// Logs at least this long are grouped by several tasks.
const PAR_GROUP: usize = 1 << 20;

/// `vals` grouped by their `local` vertex: the pieces of `per` entries each (with `counts`
/// per local vertex) scatter in parallel, each into its own slots of every vertex's range,
/// pieces in order, so arrival order holds within each vertex.
fn scatter<T: Copy + Default + Send + Sync>(
    local: &[u16],
    vals: &[T],
    per: usize,
    counts: &[Vec<u32>],
) -> Vec<T> {
    let mut out = vec![T::default(); vals.len()];
    // cursors[piece][vertex]: where the piece's next entry of that vertex goes. Vertex
    // ranges in order, and within each the pieces in order: the slots are disjoint.
    let mut cursors: Vec<Vec<u32>> = counts.iter().map(|_| vec![0u32; BLOCK]).collect();
    let mut at = 0u32;
    for l in 0..BLOCK {
        for (c, h) in cursors.iter_mut().zip(counts) {
            c[l] = at;
            at += h[l];
        }
    }
    assert_eq!(at as usize, out.len(), "counts cover the log");
    let dst = SharedOut(out.as_mut_ptr());
    local
        .par_chunks(per)
        .zip(vals.par_chunks(per))
        .zip(cursors)
        .for_each(|((ls, xs), mut pos)| {
            let dst = &dst;
            for (&l, &x) in ls.iter().zip(xs) {
                let p = &mut pos[l as usize];
                // SAFETY: `*p` lies in this piece's own slots of vertex `l` (the cursors
                // above give every (piece, vertex) pair a disjoint range of `out`, sized
                // by the piece's count of `l`), so no other task writes it and it is in
                // bounds; `out` outlives the scatter.
                unsafe { dst.0.add(*p as usize).write(x) };
                *p += 1;
            }
        });
    out
}

/// The output of a parallel scatter, written at disjoint positions by several tasks.
struct SharedOut<T>(*mut T);
// SAFETY: tasks write disjoint elements only (see `scatter`).
unsafe impl<T: Send> Sync for SharedOut<T> {}

/// Slots at the end of a log (from [`BlockLog::grow`]), for one writer to fill.
pub struct Tail<'a> {
    local: &'a mut [u16],
    entries: &'a mut [VertexId],
    /// Empty in unweighted logs.
    weights: &'a mut [f64],
}

impl<'a> Tail<'a> {
    /// Slots held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no slot is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first `n` slots, and the rest.
    pub fn split_at(self, n: usize) -> (Tail<'a>, Tail<'a>) {
        let (l0, l1) = self.local.split_at_mut(n);
        let (e0, e1) = self.entries.split_at_mut(n);
        let (w0, w1) = if self.weights.is_empty() {
            (&mut [][..], &mut [][..])
        } else {
            self.weights.split_at_mut(n)
        };
        (
            Tail {
                local: l0,
                entries: e0,
                weights: w0,
            },
            Tail {
                local: l1,
                entries: e1,
                weights: w1,
            },
        )
    }

    /// Fills slot `i` with an update of vertex `v` (of this block; only its low bits are
    /// kept), entry `x` and weight `w` (dropped by unweighted logs).
    #[inline]
    pub fn set(&mut self, i: usize, v: VertexId, x: VertexId, w: f64) {
        self.local[i] = (v as usize & (BLOCK - 1)) as u16;
        self.entries[i] = x;
        if !self.weights.is_empty() {
            self.weights[i] = w;
        }
    }
}

/// A block's updates grouped by local vertex (see [`BlockLog::by_vertex`]).
pub struct Grouped {
    start: Vec<u32>,
    entries: Vec<VertexId>,
    weights: Vec<f64>,
    /// Each entry's commit, when the log kept marks; empty otherwise.
    commits: Vec<u32>,
}

impl Grouped {
    /// Local vertex `lv`'s entries' commits (empty when the log kept none).
    #[inline]
    pub fn commits(&self, lv: usize) -> &[u32] {
        match self.commits.is_empty() {
            true => &[],
            false => &self.commits[self.start[lv] as usize..self.start[lv + 1] as usize],
        }
    }

    /// Local vertex `lv`'s entries in arrival order.
    #[inline]
    pub fn entries(&self, lv: usize) -> &[VertexId] {
        &self.entries[self.start[lv] as usize..self.start[lv + 1] as usize]
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The local vertices cut into consecutive ranges, each (but the last) holding at
    /// least `entries` entries: units of parallel work of about equal size.
    pub fn split(&self, entries: usize) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let entries = entries.max(1);
        let mut lo = 0;
        std::iter::from_fn(move || {
            if lo >= BLOCK {
                return None;
            }
            let goal = self.start[lo] as usize + entries;
            // The first local vertex whose list starts at or past the goal ends the range.
            let hi = lo + 1 + self.start[lo + 1..BLOCK].partition_point(|&s| (s as usize) < goal);
            let r = lo..hi;
            lo = hi;
            Some(r)
        })
    }

    /// Local vertex `lv`'s weights, parallel to [`Grouped::entries`] (weighted logs only).
    #[inline]
    pub fn weights(&self, lv: usize) -> &[f64] {
        &self.weights[self.start[lv] as usize..self.start[lv + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// The parallel grouping agrees with the one-thread counting sort for logs over
        /// the whole block (both ends of it included), weighted or not, whatever the
        /// number of pieces.
        #[test]
        fn parallel_grouping_matches_one_thread(
            locals in proptest::collection::vec(
                prop_oneof![0..BLOCK, Just(0usize), Just(BLOCK - 1), Just(127usize), Just(128usize)],
                0..20_000,
            ),
            chunks in 2usize..9,
            weighted in any::<bool>(),
        ) {
            let mut b = if weighted { BlockLog::weighted() } else { BlockLog::default() };
            for (i, &lv) in locals.iter().enumerate() {
                b.grow(1).set(0, lv as VertexId, i as VertexId, i as f64 * 0.5);
            }
            let one = b.grouped_alone();
            let cut = b.grouped_in(chunks);
            prop_assert_eq!(&cut.start, &one.start);
            prop_assert_eq!(&cut.entries, &one.entries);
            prop_assert_eq!(&cut.weights, &one.weights);
            // Arrival order within each vertex: entries are arrival indexes, so increasing.
            for lv in 0..BLOCK {
                prop_assert!(cut.entries(lv).windows(2).all(|w| w[0] < w[1]), "vertex {}", lv);
            }
        }
    }

    #[test]
    fn grouping_keeps_arrival_order_per_vertex() {
        let mut b = BlockLog::weighted();
        let sizes = [0usize, 1, 3, 4, 10, 600, 5000];
        for round in 0..5000 as VertexId {
            for (lv, &n) in sizes.iter().enumerate() {
                if (round as usize) < n {
                    let x = round * 10 + lv as VertexId;
                    // Vertices of a later block keep only their low bits.
                    b.grow(1).set(0, (BLOCK + lv) as VertexId, x, x as f64);
                }
            }
        }
        let g = b.by_vertex();
        for (lv, &n) in sizes.iter().enumerate() {
            let want: Vec<VertexId> = (0..n as VertexId)
                .map(|r| r * 10 + lv as VertexId)
                .collect();
            assert_eq!(g.entries(lv), want, "vertex {lv}");
            let wts: Vec<f64> = want.iter().map(|&x| x as f64).collect();
            assert_eq!(g.weights(lv), wts, "vertex {lv}");
            let mut one = vec![];
            b.gather(lv, &mut one);
            assert_eq!(one, want, "gather of vertex {lv}");
        }
        for chunks in [2, 3, 8] {
            let cut = b.grouped_in(chunks);
            assert_eq!(cut.start, g.start, "{chunks} pieces");
            assert_eq!(cut.entries, g.entries, "{chunks} pieces");
            assert_eq!(cut.weights, g.weights, "{chunks} pieces");
        }
        assert_eq!(b.ops() as usize, sizes.iter().sum::<usize>());
        assert_eq!(g.len(), b.ops() as usize);
        for per in [1, 7, 600, 5000, 6000, usize::MAX] {
            let ranges: Vec<_> = g.split(per).collect();
            // Consecutive, covering the block, each but the last at least `per` entries.
            assert_eq!(ranges.first().map(|r| r.start), Some(0));
            assert_eq!(ranges.last().map(|r| r.end), Some(BLOCK));
            for w in ranges.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
            for r in &ranges[..ranges.len() - 1] {
                let n: usize = r.clone().map(|lv| g.entries(lv).len()).sum();
                assert!(n >= per, "range {r:?} holds {n} < {per}");
            }
        }
    }
}
