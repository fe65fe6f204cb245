//! A directed memtable's in-direction, transposed from its sealed out-direction.
//!
//! An edge's in-entry resolves exactly as its out-entry does: the same updates in the same
//! order, against older runs that hold the same edges in both directions. So the sealed
//! in-direction is the transpose of the sealed out-direction, and the memtable need not
//! buffer updates by destination at all: the apply writes half as much and a budget holds
//! twice the updates. The seal hands its out-parts here wave by wave, sources ascending;
//! each entry is appended to its destination's block log, and grouping a block by vertex
//! (a stable counting sort) then leaves every in-list sorted by source, free of duplicates
//! and resolved. No comparison sort, no lookup in older runs. A profile of a Kron20 ingest
//! had put a fifth of its time in per-vertex sorts, half of them the in-direction's.

use super::apply::cut_tails;
use super::block_log::{BlockLog, Tail, BLOCK, BLOCK_BITS};
use crate::batch::{id_of, DEL};
use crate::run::build::DirPart;
use crate::types::VertexId;
use rayon::prelude::*;

/// In-logs being filled from a seal's out-parts.
pub(super) struct Transposer {
    logs: Vec<BlockLog>,
}

impl Transposer {
    /// In-logs for the destinations of `out`'s entries, each reserved for every entry that
    /// names one of its vertices. The seal keeps at most that many, so the logs never move
    /// or double while they fill: they hold what the out-logs freed, and no more.
    pub fn new(out: &[BlockLog], weighted: bool) -> Self {
        let nb = out.len();
        // By pieces of logs, not whole logs: the hub block alone holds 43% at Kron20.
        let sizes = out
            .par_iter()
            .flat_map(|blk| blk.entries().par_chunks(1 << 16))
            .map(|piece| {
                let mut h = vec![0usize; nb];
                for &e in piece {
                    h[block_of(id_of(e))] += 1;
                }
                h
            })
            .reduce(
                || vec![0usize; nb],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let logs = sizes
            .into_iter()
            .map(|n| {
                let mut log = if weighted {
                    BlockLog::weighted()
                } else {
                    BlockLog::default()
                };
                log.reserve(n);
                log
            })
            .collect();
        Transposer { logs }
    }

    /// Appends the in-entries of `parts`: sealed out-parts in vertex order, whose sources
    /// all come after those of the parts added before.
    pub fn add(&mut self, parts: &[DirPart]) {
        let nb = self.logs.len();
        let counts: Vec<Vec<u32>> = parts
            .par_iter()
            .map(|p| {
                let mut h = vec![0u32; nb];
                for (_, adds, _, tombs) in p.vertices() {
                    adds.iter().chain(tombs).for_each(|&x| h[block_of(x)] += 1);
                }
                h
            })
            .collect();
        let tails = cut_tails(&mut self.logs, &counts);
        parts
            .par_iter()
            .zip(tails)
            .for_each(|(p, mut t)| fill(p, &mut t));
    }

    /// The in-logs, each vertex's entries its sources ascending (a tombstone's with
    /// [`DEL`]; a weighted re-insert's tombstone and add share a source).
    pub fn into_logs(self) -> Vec<BlockLog> {
        self.logs
    }
}

#[inline]
fn block_of(x: VertexId) -> usize {
    (x >> BLOCK_BITS) as usize
}

/// Writes one part's entries, transposed, into its slot ranges, filling each exactly.
fn fill(p: &DirPart, tails: &mut [Tail<'_>]) {
    let mut at = vec![0usize; tails.len()];
    let mut put = |x: VertexId, entry: VertexId, w: f64| {
        let b = block_of(x);
        tails[b].set(at[b], x, entry, w);
        at[b] += 1;
    };
    for (v, adds, wts, tombs) in p.vertices() {
        if wts.is_empty() {
            adds.iter().for_each(|&x| put(x, v, 0.0));
        } else {
            adds.iter().zip(wts).for_each(|(&x, &w)| put(x, v, w));
        }
        tombs.iter().for_each(|&x| put(x, v | DEL, 0.0));
    }
    debug_assert!(tails.iter().zip(&at).all(|(t, &n)| t.len() == n));
}

/// The buffered updates `out` (keyed by source) keyed by destination instead, each
/// destination's entries in source block order and, per source, in arrival order: what
/// [`super::Memtable::gather`] needs of a vertex's in-updates.
pub(super) fn by_destination(out: &[BlockLog], weighted: bool) -> Vec<BlockLog> {
    let nb = out.len();
    let counts: Vec<Vec<u32>> = out
        .par_iter()
        .map(|blk| {
            let mut h = vec![0u32; nb];
            blk.entries()
                .iter()
                .for_each(|&e| h[block_of(id_of(e))] += 1);
            h
        })
        .collect();
    let mut logs: Vec<BlockLog> = (0..nb)
        .map(|_| {
            if weighted {
                BlockLog::weighted()
            } else {
                BlockLog::default()
            }
        })
        .collect();
    let tails = cut_tails(&mut logs, &counts);
    out.par_iter()
        .enumerate()
        .zip(tails)
        .for_each(|((b, blk), mut t)| {
            let first = (b * BLOCK) as VertexId;
            let mut at = vec![0usize; nb];
            blk.each(|lv, e, w| {
                let x = id_of(e);
                let i = block_of(x);
                t[i].set(at[i], x, (first + lv as VertexId) | (e & DEL), w);
                at[i] += 1;
            });
        });
    logs
}
