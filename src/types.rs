//! Small shared types: vertex ids, update records, durability modes.

/// A dense internal vertex id: `u32`, or `u64` in builds with the `wide-ids` feature.
///
/// Every layer (WAL, memtable, runs, dictionary, kernels) is written against this one type.
/// Stores record their id width in the manifest and in every run file, and a build refuses a
/// store of the other width. The top bit is reserved to mark deletions (WAL records,
/// memtable entries, vertex states), so a store holds at most [`MAX_VERTICES`] vertices.
#[cfg(not(feature = "wide-ids"))]
pub type VertexId = u32;
/// A dense internal vertex id, 64-bit in this `wide-ids` build (see the 32-bit definition).
#[cfg(feature = "wide-ids")]
pub type VertexId = u64;

/// An atomic [`VertexId`], for kernels that update ids in place (labels, parents).
#[cfg(not(feature = "wide-ids"))]
pub type AtomicVertexId = std::sync::atomic::AtomicU32;
/// An atomic [`VertexId`], for kernels that update ids in place (labels, parents).
#[cfg(feature = "wide-ids")]
pub type AtomicVertexId = std::sync::atomic::AtomicU64;

/// Bits in a [`VertexId`]: the id width this build reads and writes.
pub const ID_WIDTH: u32 = VertexId::BITS;

/// Bytes of one [`VertexId`] on the medium.
pub const ID_BYTES: usize = std::mem::size_of::<VertexId>();

/// The largest number of vertices a store of this build's id width can hold.
pub const MAX_VERTICES: u64 = (1u64 << (ID_WIDTH - 1)) - 1;

/// Reads a little-endian [`VertexId`] from the first [`ID_BYTES`] bytes of `b`.
#[inline]
pub(crate) fn id_from_le(b: &[u8]) -> VertexId {
    VertexId::from_le_bytes(b[..ID_BYTES].try_into().expect("ID_BYTES bytes"))
}

/// The message for a store (or a request) whose id width is not this build's.
pub(crate) fn width_mismatch(what: &str, width: u64) -> String {
    let how = if width == 64 {
        "a build with 64-bit ids (cargo install --path . --features wide-ids)"
    } else {
        "a build with 32-bit ids (one without the wide-ids feature)"
    };
    format!(
        "{what} uses {width}-bit vertex ids but this evograph was built for {ID_WIDTH}-bit \
         ids: it needs {how}"
    )
}

/// The depth Graphalytics gives a vertex a BFS does not reach (`i64::MAX`): what the
/// BFS kernel and the BFS vertex program return for it.
pub const UNREACHABLE: i64 = i64::MAX;

/// One update as it comes from a user or an input file, in external (user) ids.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Record {
    /// Insert the edge `src -> dst` (a no-op if present). Creates missing endpoints.
    /// In a weighted store the edge gets weight 1.
    Insert(u64, u64),
    /// Insert the edge `src -> dst` with a weight; re-inserting an edge updates its weight.
    /// Unweighted stores refuse it.
    InsertWeighted(u64, u64, f64),
    /// Delete the edge `src -> dst` (a no-op if absent).
    Delete(u64, u64),
    /// Make the vertex exist (a no-op if it does).
    InsertVertex(u64),
    /// Delete the vertex and every edge that touches it.
    DeleteVertex(u64),
}

/// When an update is acknowledged, and so what a crash can lose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Acknowledge only once the WAL block holding the update is durable on the medium.
    Sync,
    /// Acknowledge on apply; a background thread persists the WAL every `n` milliseconds,
    /// so a crash loses at most about that window.
    Interval(u64),
    /// No WAL at all: updates reach the medium only when a flush writes a run.
    None,
}

impl std::str::FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sync" => Ok(Durability::Sync),
            "none" => Ok(Durability::None),
            _ => match s.strip_prefix("interval=") {
                Some(ms) => ms
                    .trim_end_matches("ms")
                    .parse::<u64>()
                    .ok()
                    .filter(|&m| m > 0)
                    .map(Durability::Interval)
                    .ok_or_else(|| format!("bad interval in '{s}': want interval=<milliseconds>")),
                None => Err(format!(
                    "unknown durability '{s}': want sync, interval=<ms> or none"
                )),
            },
        }
    }
}

impl std::fmt::Display for Durability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Durability::Sync => write!(f, "sync"),
            Durability::Interval(ms) => write!(f, "interval={ms}"),
            Durability::None => write!(f, "none"),
        }
    }
}

/// Most vertices one rayon task of a vertex loop takes.
///
/// A vertex's work usually follows its degree, and dense ids come by first appearance, so a
/// skewed graph's hubs crowd the low ids (Kron20: the first half of the ids holds 96% of the
/// in-edges). Rayon splits a range only about log2(threads) + 1 times unless a thread steals,
/// which left one thread a first piece holding most of the work: gap-pr on 2 threads ran
/// 1.55x its one-thread speed, 2.0x with tasks of at most this many vertices. A task of
/// 4096 vertices costs its scheduling many times over, even for a loop that does little.
pub(crate) const VERTEX_TASK: usize = 4096;

/// Most entries one task of a copy of lists takes (see [`task_starts`]), unless one
/// vertex holds more.
pub(crate) const ENTRY_TASK: u64 = 1 << 18;

/// Where the tasks of a copy of CSR lists start (`offs`: one more than `n` vertices),
/// ending with `n`: blocks of [`VERTEX_TASK`] vertices, a block cut further at vertex
/// boundaries into tasks of at most [`ENTRY_TASK`] entries (or one vertex). Ingest numbers
/// a skewed graph's hubs first, so Kron24's first block held so many entries that one
/// thread copied it for 0.7 s while the other sat idle.
pub(crate) fn task_starts(offs: &[u64], n: usize) -> Vec<usize> {
    debug_assert_eq!(offs.len(), n + 1);
    let mut starts = Vec::with_capacity(n / VERTEX_TASK + 2);
    for lo in (0..n).step_by(VERTEX_TASK) {
        let hi = (lo + VERTEX_TASK).min(n);
        let mut at = lo;
        while at < hi {
            starts.push(at);
            // The first vertex after `at` whose list ends more than `ENTRY_TASK` past
            // where `at`'s starts (`offs[v + 1]` is where `v`'s list ends).
            let limit = offs[at] + ENTRY_TASK;
            at += 1 + offs[at + 2..=hi].partition_point(|&o| o <= limit);
        }
    }
    starts.push(n);
    starts
}

/// The vertices `0..n` as a parallel iterator that can be split by index (rayon indexes
/// ranges of `usize` and `u32`, not of `u64`), whatever the id width, in rayon tasks of at
/// most 4096 vertices, so that the hubs crowding the low dense ids do not leave one thread
/// most of the work.
#[inline]
pub fn par_vertices(n: usize) -> impl rayon::iter::IndexedParallelIterator<Item = VertexId> {
    use rayon::prelude::*;
    (0..n)
        .into_par_iter()
        .with_max_len(VERTEX_TASK)
        .map(|v| v as VertexId)
}

/// A per-vertex array in chunks of [`VERTEX_TASK`] entries, one rayon task each, with the
/// dense id of each chunk's first entry: for loops whose work per vertex is small, a plain
/// loop over a chunk instead of a closure called per vertex through rayon's fold (which
/// cost PageRank's sweep 7 %).
#[inline]
pub(crate) fn par_vertex_chunks_mut<T: Send>(
    xs: &mut [T],
) -> impl rayon::iter::IndexedParallelIterator<Item = (usize, &mut [T])> {
    use rayon::prelude::*;
    xs.par_chunks_mut(VERTEX_TASK)
        .enumerate()
        .with_max_len(1)
        .map(|(c, chunk)| (c * VERTEX_TASK, chunk))
}

/// Removes adjacent duplicates from a sorted slice in place; returns the new length (the
/// slice form of `Vec::dedup`, for a tail of a vector that is being appended to).
pub(crate) fn dedup_sorted<T: Copy + PartialEq>(xs: &mut [T]) -> usize {
    if xs.is_empty() {
        return 0;
    }
    let mut n = 1;
    for i in 1..xs.len() {
        if xs[i] != xs[n - 1] {
            xs[n] = xs[i];
            n += 1;
        }
    }
    n
}

/// Where `x` is or would go in the ascending `list`, searching from `from` (every item
/// before it below `x`) by doubling steps, then a binary search of the last step; and
/// whether it is there. Searches for ascending values each cost O(log distance) and touch
/// memory near the last one, where a binary search of the whole list misses the cache at
/// every step.
#[inline]
pub(crate) fn gallop<T: Copy + Ord>(list: &[T], from: usize, x: T) -> (usize, bool) {
    let n = list.len();
    let from = from.min(n);
    let (mut lo, mut hi, mut step) = (from, from, 1);
    while hi < n && list[hi] < x {
        lo = hi + 1;
        hi = from + step;
        step <<= 1;
    }
    let at = lo + list[lo..hi.min(n)].partition_point(|&y| y < x);
    (at, at < n && list[at] == x)
}

#[cfg(test)]
mod tests {
    use super::{dedup_sorted, gallop, task_starts, ENTRY_TASK, VERTEX_TASK};

    /// Tasks tile the vertices in order; each holds at most `VERTEX_TASK` vertices and at
    /// most `ENTRY_TASK` entries, or is one vertex holding more.
    #[test]
    fn copy_tasks_bound_vertices_and_entries() {
        // A hub of 3 tasks' worth first, small lists, then a run of mid-sized ones.
        let mut degrees = vec![3 * ENTRY_TASK];
        degrees.extend(std::iter::repeat_n(2, VERTEX_TASK + 7));
        degrees.extend(std::iter::repeat_n(ENTRY_TASK / 5, 40));
        degrees.push(0);
        let n = degrees.len();
        let mut offs = vec![0u64];
        for d in &degrees {
            offs.push(offs.last().unwrap() + d);
        }
        let starts = task_starts(&offs, n);
        assert_eq!((starts[0], *starts.last().unwrap()), (0, n));
        for (&lo, &hi) in starts.iter().zip(&starts[1..]) {
            assert!(lo < hi && hi - lo <= VERTEX_TASK, "task {lo}..{hi}");
            let entries = offs[hi] - offs[lo];
            assert!(
                entries <= ENTRY_TASK || hi - lo == 1,
                "task {lo}..{hi}: {entries}"
            );
        }
        // The hub is a task alone; the mid-sized lists are cut at five per task or fewer.
        assert_eq!(starts[1], 1);
        assert!(starts.len() > 40 / 5 + 2);
        assert_eq!(task_starts(&[0], 0), vec![0]);
    }

    /// From every start, every searched value: what a binary search of the rest finds.
    #[test]
    fn gallop_finds_what_a_binary_search_finds() {
        let list: Vec<u32> = (0..200).map(|i| i * 3 + (i % 7) / 5).collect();
        for from in 0..=list.len() {
            let floor = list.get(from.wrapping_sub(1)).map_or(0, |&y| y + 1);
            for x in floor..(list.last().unwrap() + 3) {
                let at = from + list[from..].partition_point(|&y| y < x);
                let want = (at, at < list.len() && list[at] == x);
                assert_eq!(gallop(&list, from, x), want, "from {from}, x {x}");
            }
        }
        assert_eq!(gallop(&[], 0, 5u32), (0, false));
    }

    #[test]
    fn dedup_sorted_keeps_one_of_each_in_order() {
        let mut xs = [1u32, 1, 2, 5, 5, 5, 9];
        let n = dedup_sorted(&mut xs);
        assert_eq!(&xs[..n], [1, 2, 5, 9]);
        let mut none: [u64; 0] = [];
        assert_eq!(dedup_sorted(&mut none), 0);
        let mut one = [7u64];
        assert_eq!(dedup_sorted(&mut one), 1);
    }
}

/// Sets of vertices as bits in 64-bit words (bit `v % 64` of word `v / 64`): the deleted
/// vertices a store keeps and its snapshots share, and the frontiers kernels build in
/// parallel. One module for both, rather than a crate: the deleted set is shared as plain
/// words (`Arc<Vec<u64>>`) with every snapshot, and frontiers need an atomic set, which
/// the well-kept bitset crates (fixedbitset) do not offer.
pub(crate) mod bits {
    use super::VertexId;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    /// Whether `v` is in `words` (no word for it: not in the set).
    #[inline]
    pub(crate) fn get(words: &[u64], v: VertexId) -> bool {
        (words.get(v as usize / 64)).is_some_and(|w| w >> (v % 64) & 1 == 1)
    }

    /// Puts `v` in `words` or takes it out, growing `words` to hold it.
    pub(crate) fn assign(words: &mut Vec<u64>, v: VertexId, member: bool) {
        let i = v as usize / 64;
        if words.len() <= i {
            words.resize(i + 1, 0);
        }
        match member {
            true => words[i] |= 1 << (v % 64),
            false => words[i] &= !(1 << (v % 64)),
        }
    }

    /// Who writes a word of an [`AtomicBits`] at a time.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Writers {
        /// One thread: it owns the word.
        One,
        /// Any number of threads at once.
        Many,
    }

    /// A set of vertices below `n` that threads add to at once.
    pub(crate) struct AtomicBits(Vec<AtomicU64>);

    impl AtomicBits {
        /// The empty set of vertices below `n`.
        pub(crate) fn new(n: usize) -> Self {
            AtomicBits((0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
        }

        /// The set of `vs`, all below `n`.
        pub(crate) fn of(n: usize, vs: &[VertexId]) -> Self {
            let mut s = AtomicBits::new(n);
            for &v in vs {
                *s.0[v as usize / 64].get_mut() |= 1 << (v % 64);
            }
            s
        }

        /// Ors `bits` into word `i` (members `64 i .. 64 i + 64`). `Writers::One`: the
        /// caller alone writes that word while others may read the set, so a plain store
        /// will do: an atomic or (`lock or` on x86) is a barrier that holds every later
        /// load back, and setting each bit that way cost BFS's bottom-up steps a fifth of
        /// their time in a loop of cache-missing loads. `Writers::Many`: others may write
        /// the word too.
        #[inline]
        pub(crate) fn or_word(&self, i: usize, bits: u64, writers: Writers) {
            match writers {
                Writers::One => self.0[i].store(self.0[i].load(Relaxed) | bits, Relaxed),
                Writers::Many if bits != 0 => _ = self.0[i].fetch_or(bits, Relaxed),
                Writers::Many => {}
            }
        }

        /// Word `i`: members `64 i .. 64 i + 64`, one bit each.
        #[inline]
        pub(crate) fn word(&self, i: usize) -> u64 {
            self.0[i].load(Relaxed)
        }

        /// Adds every member of `other` (a set of the same size), in parallel.
        pub(crate) fn union(&self, other: &AtomicBits) {
            use rayon::prelude::*;
            (self.0.par_iter().zip(&other.0))
                .with_min_len(1 << 12)
                .for_each(|(a, b)| _ = a.fetch_or(b.load(Relaxed), Relaxed));
        }

        /// Adds `vs`, in parallel.
        pub(crate) fn insert_all(&self, vs: &[VertexId]) {
            use rayon::prelude::*;
            vs.par_iter()
                .with_min_len(1 << 10)
                .for_each(|&v| _ = self.0[v as usize / 64].fetch_or(1 << (v % 64), Relaxed));
        }

        /// Whether `v` is in the set.
        #[inline]
        pub(crate) fn contains(&self, v: VertexId) -> bool {
            self.0[v as usize / 64].load(Relaxed) >> (v % 64) & 1 == 1
        }

        /// The members, ascending.
        pub(crate) fn members(&self) -> Vec<VertexId> {
            let mut out = Vec::new();
            for (i, w) in self.0.iter().enumerate() {
                let mut w = w.load(Relaxed);
                while w != 0 {
                    out.push((i * 64) as VertexId + w.trailing_zeros() as VertexId);
                    w &= w - 1;
                }
            }
            out
        }
    }
}
