//! Vertices in the order of their keys, as `run` prints values and `export` writes lists.
//!
//! Each vertex has a number that sorts it (`Snapshot::key_order`: its external id, or its
//! rank in name order), all distinct. When those numbers are few beyond the vertices, as a
//! store's ids and every rank are, each vertex is placed in a slot per number and the slots
//! read in order: no comparison. Sorting (number, vertex) pairs instead took 9 % of
//! `run gap-sssp`'s CPU on Kron24 (8.9 M vertices), start to exit. Sparse numbers (ids
//! hashed over 64 bits) are sorted.

use evograph::VertexId;
use rayon::prelude::*;

/// Slots per vertex the placement may take before sorting is cheaper in DRAM and time.
const SLOTS_PER_VERTEX: u64 = 4;

/// The vertices `0..order.len()` for which `keep` holds, each beside its number in
/// `order` (one per vertex, distinct in a sound store), ascending by that number.
pub(crate) fn by_key(
    order: &[u64],
    keep: impl Fn(VertexId) -> bool + Sync,
) -> Vec<(u64, VertexId)> {
    if let Some((slots, kept)) = placed(order, &keep) {
        let keyed: Vec<(u64, VertexId)> = (slots.par_iter().enumerate())
            .filter(|&(_, &v)| v != EMPTY)
            .map(|(k, &v)| (k as u64, v))
            .collect();
        if keyed.len() == kept {
            return keyed;
        }
    }
    sorted(order, keep)
}

/// The vertices `0..order.len()` ascending by their numbers in `order` (see [`by_key`]).
pub(crate) fn vertices_by_key(order: &[u64]) -> Vec<VertexId> {
    if let Some((slots, kept)) = placed(order, &|_| true) {
        let ids: Vec<VertexId> = slots.into_par_iter().filter(|&v| v != EMPTY).collect();
        if ids.len() == kept {
            return ids;
        }
    }
    (sorted(order, |_| true).into_par_iter())
        .map(|(_, v)| v)
        .collect()
}

/// Most tasks placing vertices at once: each reads every number, so on a machine of many
/// cores more tasks would read the numbers many times over for little more parallel
/// writing.
const PLACING_TASKS: usize = 4;

/// A slot that no vertex's number names.
const EMPTY: VertexId = VertexId::MAX;

/// Each kept vertex in the slot of its number (the others [`EMPTY`]), and how many were
/// kept, when the numbers are dense enough. Two vertices of one number (a damaged
/// dictionary, which a kernel's reader does not check) leave fewer slots filled than
/// vertices kept: the callers then sort, which keeps both. Each thread fills a range of
/// slots, reading every number: the numbers are read in order, and the slots written at
/// random and never read, so the misses overlap (a check of each slot before its write
/// made the placement wait for each miss: 9 % of `run gap-bfs`'s CPU on Kron24).
fn placed(
    order: &[u64],
    keep: &(impl Fn(VertexId) -> bool + Sync),
) -> Option<(Vec<VertexId>, usize)> {
    let max = order.par_iter().copied().max().unwrap_or(0);
    if max >= (order.len() as u64 + 1) * SLOTS_PER_VERTEX {
        return None;
    }
    let mut slots: Vec<VertexId> = vec![EMPTY; max as usize + 1];
    let tasks = rayon::current_num_threads().min(PLACING_TASKS);
    let per_task = slots.len().div_ceil(tasks).max(1 << 16);
    let kept = (slots.par_chunks_mut(per_task).enumerate())
        .map(|(t, mine)| {
            let lo = (t * per_task) as u64;
            let hi = lo + mine.len() as u64;
            let mut kept = 0;
            for (v, &k) in order.iter().enumerate() {
                if (lo..hi).contains(&k) && keep(v as VertexId) {
                    mine[(k - lo) as usize] = v as VertexId;
                    kept += 1;
                }
            }
            kept
        })
        .sum();
    Some((slots, kept))
}

/// [`by_key`] by sorting (number, vertex) pairs, each number gathered beside its vertex
/// first: a number looked up per comparison missed the cache on every one.
fn sorted(order: &[u64], keep: impl Fn(VertexId) -> bool + Sync) -> Vec<(u64, VertexId)> {
    let mut keyed: Vec<(u64, VertexId)> = (0..order.len() as VertexId)
        .into_par_iter()
        .filter(|&v| keep(v))
        .map(|v| (order[v as usize], v))
        .collect();
    keyed.par_sort_unstable();
    keyed
}

#[cfg(test)]
mod tests {
    use super::{by_key, placed, vertices_by_key};
    use evograph::VertexId;

    /// Placed (numbers near the vertices') or sorted (numbers far beyond, or a number
    /// twice), the kept vertices come out as sorting their (number, vertex) pairs gives;
    /// 2,000 cases from a fixed seed.
    #[test]
    fn vertices_come_out_as_sorted_by_their_numbers() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for case in 0..2000 {
            // The last cases fill several tasks' ranges of slots (65,536 each at least).
            let n = match case {
                1990.. => 100_000 + (next() % 200_000) as usize,
                _ => (next() % 100) as usize,
            };
            let spread = if case % 3 == 0 { 1 << 40 } else { 1 };
            // Distinct numbers up to 4 per vertex, in no order of the vertices.
            let mut order: Vec<u64> = (0..n as u64).map(|k| k * 4 + next() % 4).collect();
            for i in (1..n).rev() {
                order.swap(i, (next() % (i as u64 + 1)) as usize);
            }
            order.iter_mut().for_each(|k| *k *= spread);
            let twice = case % 7 == 0 && n > 1;
            if twice {
                // A damaged dictionary's: two vertices of one number.
                order[1] = order[0];
            }
            let dropped = next();
            let keep = |v: VertexId| (dropped >> (v % 64)) & 1 == 0;
            let mut want: Vec<(u64, VertexId)> = (0..n as VertexId)
                .filter(|&v| keep(v))
                .map(|v| (order[v as usize], v))
                .collect();
            want.sort_unstable();
            assert_eq!(by_key(&order, keep), want, "case {case}");
            let mut all: Vec<(u64, VertexId)> =
                (0..n as VertexId).map(|v| (order[v as usize], v)).collect();
            all.sort_unstable();
            let ids: Vec<VertexId> = all.iter().map(|&(_, v)| v).collect();
            assert_eq!(vertices_by_key(&order), ids, "case {case}: every vertex");
            if spread == 1 {
                // The placement fills a slot per kept vertex, fewer when two clash.
                let clash = twice && keep(0) && keep(1);
                let (slots, kept) = placed(&order, &keep).expect("dense numbers are placed");
                let filled = slots.iter().filter(|&&v| v != super::EMPTY).count();
                assert_eq!(kept, want.len(), "case {case}");
                assert_eq!(filled + usize::from(clash), kept, "case {case}: placed");
            }
        }
    }
}
