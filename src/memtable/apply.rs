//! Parallel apply of a batch of edge updates: a radix partition by vertex block.
//!
//! The batch is cut into consecutive chunks. Each chunk counts its updates per block; a
//! prefix sum over the chunks then gives every chunk its own slot range at the end of each
//! block's log, and the chunks scatter their updates there in parallel. Each update is read
//! twice and written once, straight into its log, and no lock is taken: the slot ranges
//! are disjoint `&mut` slices. Chunks keep their order, and so each vertex's updates keep
//! their arrival order.
//!
//! An earlier version split the *blocks* among tasks, each scanning the whole batch for
//! its blocks' updates into a buffer, then copying them into the logs; its per-block counts
//! were taken on the calling thread. A profile of a Kron20 ingest put a third of the worker
//! time in those scans and copies.

use super::block_log::{BlockLog, Tail, BLOCK_BITS};
use crate::batch::{id_of, DEL};
use crate::types::VertexId;
use rayon::prelude::*;

/// Chunks per worker thread: more than one, so a thread slowed by its neighbours on the
/// machine does not hold up the batch.
const CHUNKS_PER_THREAD: usize = 4;

/// Fewest updates a chunk is given, and fewest per block of the memtable: each chunk
/// pays for a count and a slot range per block, which must stay small beside its updates.
const MIN_CHUNK: usize = 4096;
const MIN_CHUNK_PER_BLOCK: usize = 4;

/// Which ends of an edge update key a log entry.
#[derive(Clone, Copy)]
enum Key {
    /// The source, with the destination as payload (directed stores).
    Source,
    /// Both ends, each with the other as payload (undirected stores; a self-loop once).
    BothEnds,
    /// The destination, with the source as payload (a directed store's destination
    /// index, see [`super::Memtable::index_destinations`]).
    Destination,
}

#[inline]
fn emit(key: Key, e: [VertexId; 2], mut f: impl FnMut(VertexId, VertexId)) {
    let d = id_of(e[1]);
    if matches!(key, Key::Destination) {
        return f(d, e[0] | (e[1] & DEL));
    }
    f(e[0], e[1]);
    if matches!(key, Key::BothEnds) && d != e[0] {
        f(d, e[0] | (e[1] & DEL));
    }
}

/// Applies `edges` (with parallel `weights`, empty when unweighted) to the logs keyed by
/// source, and to a directed store's destination index `inn` if it keeps one.
/// With `commit` (a memtable keeping history), the out-logs mark where the commit's
/// entries start.
pub fn apply(
    out: &mut [BlockLog],
    inn: Option<&mut [BlockLog]>,
    undirected: bool,
    edges: &[[VertexId; 2]],
    weights: &[f64],
    commit: Option<u32>,
) {
    debug_assert!(weights.is_empty() || weights.len() == edges.len());
    debug_assert!(
        !undirected || inn.is_none(),
        "undirected logs key both ends"
    );
    let chunk = chunk_len(edges.len(), out.len());
    let key = if undirected {
        Key::BothEnds
    } else {
        Key::Source
    };
    match inn {
        None => scatter(out, key, edges, weights, chunk, commit),
        Some(inn) => {
            rayon::join(
                || scatter(out, key, edges, weights, chunk, commit),
                || scatter(inn, Key::Destination, edges, weights, chunk, None),
            );
        }
    }
}

/// Updates per chunk for a batch of `n` updates over `blocks` blocks.
fn chunk_len(n: usize, blocks: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    let least = MIN_CHUNK.max(blocks * MIN_CHUNK_PER_BLOCK);
    n.div_ceil(threads * CHUNKS_PER_THREAD).max(least)
}

/// Appends the updates `key` routes to `blocks`, chunk by chunk in parallel.
fn scatter(
    blocks: &mut [BlockLog],
    key: Key,
    edges: &[[VertexId; 2]],
    weights: &[f64],
    chunk: usize,
    commit: Option<u32>,
) {
    let nb = blocks.len();
    let counts: Vec<Vec<u32>> = edges
        .par_chunks(chunk)
        .map(|c| {
            let mut h = vec![0u32; nb];
            for &e in c {
                emit(key, e, |k, _| h[(k >> BLOCK_BITS) as usize] += 1);
            }
            h
        })
        .collect();
    if let Some(c) = commit {
        for (b, blk) in blocks.iter_mut().enumerate() {
            if counts.iter().any(|h| h[b] > 0) {
                blk.mark(c);
            }
        }
    }
    let tails = cut_tails(blocks, &counts);
    let wchunks = weights
        .chunks(chunk)
        .map(Some)
        .chain(std::iter::repeat(None));
    edges
        .chunks(chunk)
        .zip(wchunks)
        .zip(tails)
        .collect::<Vec<_>>()
        .into_par_iter()
        .for_each(|((c, w), mut t)| fill(key, c, w.unwrap_or(&[]), &mut t));
}

/// Grows every block by the chunks' counts and hands each chunk its slot range in each
/// block (`result[chunk][block]`), chunks in batch order.
pub(super) fn cut_tails<'a>(blocks: &'a mut [BlockLog], counts: &[Vec<u32>]) -> Vec<Vec<Tail<'a>>> {
    let mut tails: Vec<Vec<Tail<'a>>> = counts
        .iter()
        .map(|_| Vec::with_capacity(blocks.len()))
        .collect();
    for (b, blk) in blocks.iter_mut().enumerate() {
        let total: usize = counts.iter().map(|h| h[b] as usize).sum();
        let mut rest = blk.grow(total);
        for (c, h) in counts.iter().enumerate() {
            let (mine, after) = rest.split_at(h[b] as usize);
            tails[c].push(mine);
            rest = after;
        }
        debug_assert!(rest.is_empty());
    }
    tails
}

/// Writes one chunk's updates into its slot ranges, filling each exactly.
fn fill(key: Key, edges: &[[VertexId; 2]], weights: &[f64], tails: &mut [Tail<'_>]) {
    let weighted = !weights.is_empty();
    let mut at = vec![0usize; tails.len()];
    for (i, &e) in edges.iter().enumerate() {
        emit(key, e, |k, x| {
            let b = (k >> BLOCK_BITS) as usize;
            let w = if weighted { weights[i] } else { 0.0 };
            tails[b].set(at[b], k, x, w);
            at[b] += 1;
        });
    }
    debug_assert!(tails.iter().zip(&at).all(|(t, &n)| t.len() == n));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memtable::block_log::BLOCK;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::collections::HashMap;

    /// Each vertex's (entry, weight) updates in arrival order, as a one-at-a-time apply
    /// would leave them.
    type Expected = HashMap<VertexId, Vec<(VertexId, u64)>>;

    /// Written out rather than through `emit`, so that a mistake there shows here.
    fn expected(edges: &[[VertexId; 2]], weights: &[f64], undirected: bool) -> Expected {
        let mut want = Expected::new();
        for (i, &[s, d]) in edges.iter().enumerate() {
            let w = weights.get(i).map_or(0, |w| w.to_bits());
            want.entry(s).or_default().push((d, w));
            if undirected && id_of(d) != s {
                want.entry(id_of(d)).or_default().push((s | (d & DEL), w));
            }
        }
        want
    }

    #[test]
    fn chunked_apply_keeps_arrival_order_per_vertex() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let space = 3 * BLOCK as VertexId;
        // A few hot vertices, so that each is updated in every chunk; and deletes, whose
        // order against the inserts of the same edge decides what the seal keeps.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x9e37_79b9_7f4a_7c15);
        let mut next = |m: u64| rng.random_range(0..m);
        let edges: Vec<[VertexId; 2]> = (0..60_000)
            .map(|_| {
                let s = if next(4) == 0 {
                    next(8)
                } else {
                    next(space as u64)
                } as VertexId;
                let d = next(space as u64) as VertexId;
                [s, if next(5) == 0 { d | DEL } else { d }]
            })
            .collect();
        let weights: Vec<f64> = (0..edges.len()).map(|i| i as f64).collect();
        assert!(
            chunk_len(edges.len(), 3) * 4 < edges.len(),
            "several chunks"
        );
        for undirected in [false, true] {
            for w in [&weights[..], &[]] {
                let log = || {
                    if w.is_empty() {
                        BlockLog::default()
                    } else {
                        BlockLog::weighted()
                    }
                };
                let mut out: Vec<BlockLog> = (0..3).map(|_| log()).collect();
                // Two batches, so the second appends behind the first.
                let (a, b) = edges.split_at(25_000);
                let (wa, wb) = w.split_at(if w.is_empty() { 0 } else { 25_000 });
                pool.install(|| {
                    apply(&mut out, None, undirected, a, wa, None);
                    apply(&mut out, None, undirected, b, wb, None);
                });
                let want = expected(&edges, w, undirected);
                let mut seen = 0;
                for (b, blk) in out.iter().enumerate() {
                    let g = blk.by_vertex();
                    for lv in 0..BLOCK {
                        let v = (b * BLOCK + lv) as VertexId;
                        let got: Vec<(VertexId, u64)> = if w.is_empty() {
                            g.entries(lv).iter().map(|&e| (e, 0)).collect()
                        } else {
                            let ws = g.weights(lv).iter().map(|w| w.to_bits());
                            g.entries(lv).iter().copied().zip(ws).collect()
                        };
                        let exp = want.get(&v).cloned().unwrap_or_default();
                        assert_eq!(got, exp, "vertex {v}, undirected {undirected}");
                        seen += got.len();
                    }
                }
                assert_eq!(seen, want.values().map(Vec::len).sum::<usize>());
            }
        }
    }
}
