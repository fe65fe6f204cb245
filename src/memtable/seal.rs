//! Sealing: a frozen memtable becomes a resolved, sorted in-DRAM run.
//!
//! Per vertex: gather its updates, keep the last update of each neighbor, then compare with
//! the state the older runs give: an insert of an edge they lack becomes an add, a delete of
//! an edge they hold becomes a tombstone, and everything else (re-inserts, deletes of missing
//! edges) vanishes. This is where set semantics is enforced.

use super::block_log::{BlockLog, Grouped, BLOCK};
use super::Memtable;
use crate::batch::{id_of, is_del};
use crate::medium::Medium;
use crate::run::build::{self, DirPart, IndexBuilder, RunMeta};
use crate::run::file::{RunWriter, Unpersisted};
use crate::run::{Dir, DirData, Run};
use crate::types::VertexId;
use crate::Result;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// Vertex blocks grouped together before their output is taken away.
const WAVE: usize = 8;

/// Sealing tasks per worker thread in a wave. A block is cut into vertex ranges of about
/// equal entries, not sealed as one task: dense ids come by first appearance, so the hubs
/// crowd the first block (at Kron20 it holds 43% of all entries), and as one task it left
/// every other thread idle while one sealed it.
const TASKS_PER_THREAD: usize = 4;

/// Fewest entries worth a task of their own.
const MIN_TASK_ENTRIES: usize = 1 << 14;

/// Seals into an in-DRAM run (for snapshots taken before the flusher gets to it).
pub(super) fn seal(m: Memtable, older: &[Arc<Run>], meta: RunMeta) -> Run {
    let space = meta.vertex_space;
    let vops = last_vertex_ops(&m.vertex_ops);
    let dram = |blocks: Vec<BlockLog>, d: Dir| -> DirData {
        let mut all = Vec::new();
        seal_dir(blocks, older, d, m.weighted, MIN_TASK_ENTRIES, |parts| {
            all.extend(parts);
            Ok(())
        })
        .expect("collecting in DRAM cannot fail");
        build::assemble(all, space, m.weighted)
    };
    let out = dram(m.out, Dir::Out);
    let inn = (!m.undirected).then(|| dram(m.inn, Dir::In));
    build::finish(meta, out, inn, vops)
}

/// Seals straight into a run file: neighbor ids are written wave by wave and each block's
/// buffers are freed as soon as it is sealed, so sealing needs little DRAM of its own. The
/// file is written in full but not persisted.
pub(super) fn seal_to_file(
    m: Memtable,
    older: &[Arc<Run>],
    meta: RunMeta,
    medium: &Arc<dyn Medium>,
) -> Result<(Run, Unpersisted)> {
    let space = meta.vertex_space;
    let vops = last_vertex_ops(&m.vertex_ops);
    let mut w = RunWriter::create(medium, meta.id, meta.compression)?;
    let mut built = Vec::new();
    let dirs = if m.undirected {
        vec![(m.out, Dir::Out)]
    } else {
        vec![(m.out, Dir::Out), (m.inn, Dir::In)]
    };
    for (blocks, d) in dirs {
        let mut ix = IndexBuilder::new(space);
        seal_dir(blocks, older, d, m.weighted, MIN_TASK_ENTRIES, |parts| {
            w.put_parts(&parts)?;
            for p in &parts {
                ix.add(p);
            }
            Ok(())
        })?;
        w.end_direction()?;
        built.push(ix.finish(Vec::new()));
    }
    let inn = if m.undirected { None } else { built.pop() };
    let out = built.pop().expect("out direction");
    w.finish_unpersisted(&meta, &out, inn.as_ref(), &vops)
}

/// Seals `blocks` wave by wave, handing each wave's parts (in vertex order) to `sink`.
/// A wave's parts are handed over while the next wave seals, so the writes they cause
/// overlap the sorting instead of leaving the workers idle.
fn seal_dir<S>(
    blocks: Vec<BlockLog>,
    older: &[Arc<Run>],
    d: Dir,
    weighted: bool,
    min_task: usize,
    mut sink: S,
) -> Result<()>
where
    S: FnMut(Vec<DirPart>) -> Result<()> + Send,
{
    debug_assert!(
        older.iter().all(|r| r.is_verified()),
        "resolving against unverified runs"
    );
    let mut it = blocks.into_iter().enumerate();
    let mut ready: Option<Vec<DirPart>> = None;
    loop {
        let wave: Vec<(usize, BlockLog)> = it.by_ref().take(WAVE).collect();
        if wave.is_empty() {
            return ready.map_or(Ok(()), sink);
        }
        let handed = ready.take();
        let (parts, res) = rayon::join(
            || seal_wave(wave, older, d, weighted, min_task),
            || handed.map_or(Ok(()), &mut sink),
        );
        res?;
        ready = Some(parts);
    }
}

/// Seals one wave of blocks into parts, in vertex order.
fn seal_wave(
    wave: Vec<(usize, BlockLog)>,
    older: &[Arc<Run>],
    d: Dir,
    weighted: bool,
    min_task: usize,
) -> Vec<DirPart> {
    // Each log is dropped once grouped, so the wave holds one copy of its entries.
    let grouped: Vec<(usize, Grouped)> = wave
        .into_par_iter()
        .filter(|(_, blk)| blk.ops() > 0)
        .map(|(b, blk)| (b, blk.by_vertex()))
        .collect();
    let entries: usize = grouped.iter().map(|(_, g)| g.len()).sum();
    let per_task = (entries / (rayon::current_num_threads() * TASKS_PER_THREAD)).max(min_task);
    let tasks: Vec<(usize, &Grouped, Range<usize>)> = grouped
        .iter()
        .flat_map(|(b, g)| g.split(per_task).map(move |r| (*b, g, r)))
        .collect();
    tasks
        .into_par_iter()
        .map(|(b, g, lvs)| seal_range(b, g, lvs, older, d, weighted))
        .collect()
}

/// Seals local vertices `lvs` of block `b`.
fn seal_range(
    b: usize,
    grouped: &Grouped,
    lvs: Range<usize>,
    older: &[Arc<Run>],
    d: Dir,
    weighted: bool,
) -> DirPart {
    let mut part = DirPart::default();
    let mut raw = Vec::new();
    let mut keyed: Vec<(VertexId, u32)> = Vec::new();
    let mut adds = Vec::new();
    let mut addw = Vec::new();
    let mut tombs = Vec::new();
    // Older runs holding v, each with v's index there.
    let mut prior: Vec<(&DirData, usize)> = Vec::with_capacity(older.len());
    // Older runs that can hold the block's vertices (not other partitions' runs), newest
    // first, each with a cursor into its index: vertices come in increasing order, so each
    // lookup gallops forward from the last one.
    let first = (b * BLOCK) as VertexId;
    let from = first + lvs.start as VertexId;
    let block = (b * BLOCK) as u64..((b + 1) * BLOCK) as u64;
    let mut olds: Vec<(&DirData, usize)> = older
        .iter()
        .rev()
        .filter(|r| r.header.overlaps(&block))
        .map(|r| r.dir(d))
        .map(|dd| (dd, dd.index_range(from, from).start))
        .collect();
    for lv in lvs {
        let updates = grouped.entries(lv);
        if updates.is_empty() {
            continue;
        }
        let v = first + lv as VertexId;
        // The older state of v, newest run first, skipping runs that hold nothing for it.
        prior.clear();
        for (dd, at) in olds.iter_mut() {
            let (next, hit) = dd.seek(*at, v);
            *at = next;
            if let Some(i) = hit {
                prior.push((dd, i));
            }
        }
        // Common case, inserts of a vertex no older run holds (unweighted): sort and dedup
        // in place in the output, with no intermediate copy.
        if !weighted && prior.is_empty() && updates.iter().all(|&x| !is_del(x)) {
            let start = part.adds.len();
            part.adds.extend_from_slice(updates);
            let tail = &mut part.adds[start..];
            tail.sort_unstable();
            let n = crate::types::dedup_sorted(tail);
            part.adds.truncate(start + n);
            part.close(v, n, &[]);
            continue;
        }
        raw.clear();
        raw.extend_from_slice(updates);
        let raww = if weighted {
            grouped.weights(lv)
        } else {
            &[][..]
        };
        adds.clear();
        addw.clear();
        tombs.clear();
        // Whether x was an edge before this memtable: the newest run that mentions it
        // decides (an add there means yes, even beside a tombstone: a weight update).
        let existed = |x: VertexId| {
            for &(dd, i) in &prior {
                if dd.position_at(i, x).is_some() {
                    return true;
                }
                let t = dd.tombs_at(i);
                if !t.is_empty() && t.binary_search(&x).is_ok() {
                    return false;
                }
            }
            false
        };
        if !weighted && raw.iter().all(|&x| !is_del(x)) {
            raw.sort_unstable();
            raw.dedup();
            adds.extend(raw.iter().copied().filter(|&x| !existed(x)));
        } else {
            // Last update per neighbor wins: sort by (neighbor, arrival << 1 | delete).
            keyed.clear();
            keyed.extend(
                raw.iter()
                    .enumerate()
                    .map(|(i, &x)| (id_of(x), (i as u32) << 1 | is_del(x) as u32)),
            );
            keyed.sort_unstable();
            for g in keyed.chunk_by(|a, b| a.0 == b.0) {
                let (x, last) = g[g.len() - 1];
                let w = if weighted {
                    raww[(last >> 1) as usize]
                } else {
                    0.0
                };
                match (last & 1 == 1, existed(x)) {
                    (false, false) => {
                        adds.push(x);
                        addw.push(w);
                    }
                    (true, true) => tombs.push(x),
                    // A re-insert: in weighted stores it replaces the weight (tombstone the
                    // old edge, add it anew); otherwise a no-op.
                    (false, true) if weighted => {
                        tombs.push(x);
                        adds.push(x);
                        addw.push(w);
                    }
                    _ => {}
                }
            }
        }
        if weighted {
            part.push_weighted(v, &adds, &addw, &tombs);
        } else {
            part.push(v, &adds, &tombs);
        }
    }
    part
}

/// The last state of each vertex, sorted by vertex.
fn last_vertex_ops(ops: &[VertexId]) -> Vec<VertexId> {
    let mut keyed: Vec<(VertexId, usize, VertexId)> = ops
        .iter()
        .enumerate()
        .map(|(i, &x)| (id_of(x), i, x))
        .collect();
    keyed.sort_unstable();
    keyed
        .chunk_by(|a, b| a.0 == b.0)
        .map(|g| g[g.len() - 1].2)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::DEL;

    fn random_edges(seed: u64, n: usize, space: u64, del_every: u64) -> Vec<[VertexId; 2]> {
        let mut x = seed | 1;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        (0..n)
            .map(|_| {
                // A quarter of the updates go to 16 hubs, so that hub lists span tasks.
                let s = if next(4) == 0 { next(16) } else { next(space) };
                let d = next(space) as VertexId;
                let del = del_every > 0 && next(del_every) == 0;
                [s as VertexId, if del { d | DEL } else { d }]
            })
            .collect()
    }

    fn memtable(edges: &[[VertexId; 2]], weighted: bool, space: VertexId) -> Memtable {
        let mut m = Memtable::new(false, weighted, 0, space);
        let w: Vec<f64> = (0..edges.len()).map(|i| (i % 7) as f64).collect();
        m.apply_edges(edges, if weighted { &w } else { &[] });
        m
    }

    /// The parts of a seal with at least `min_task` entries per task, concatenated.
    fn sealed(m: Memtable, older: &[Arc<Run>], d: Dir, min_task: usize) -> DirPart {
        let blocks = match d {
            Dir::Out => m.out,
            Dir::In => m.inn,
        };
        let mut all = DirPart::default();
        seal_dir(blocks, older, d, m.weighted, min_task, |parts| {
            parts.into_iter().for_each(|p| all.append(p));
            Ok(())
        })
        .unwrap();
        all
    }

    /// Cutting blocks into small tasks (each task's cursors into the older runs starting
    /// mid-block) seals exactly what one task per block seals.
    #[test]
    fn tasks_cut_mid_block_seal_what_whole_blocks_seal() {
        let space = (2 * BLOCK + 100) as VertexId;
        for weighted in [false, true] {
            let base = memtable(&random_edges(7, 40_000, space as u64, 0), weighted, space);
            let older = vec![Arc::new(base.seal(&[], 1))];
            let edges = random_edges(11, 30_000, space as u64, 3);
            for d in [Dir::Out, Dir::In] {
                let whole = sealed(memtable(&edges, weighted, space), &older, d, usize::MAX);
                for min_task in [1, 5, 1000] {
                    let cut = sealed(memtable(&edges, weighted, space), &older, d, min_task);
                    assert!(
                        whole == cut,
                        "weighted {weighted}, {d:?}, tasks of {min_task}"
                    );
                }
                assert!(!whole.is_empty());
            }
        }
    }
}
