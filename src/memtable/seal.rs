//! Sealing: a frozen memtable becomes a resolved, sorted in-DRAM run.
//!
//! Per vertex: gather its updates, keep the last update of each neighbor, then compare with
//! the state the older runs give: an insert of an edge they lack becomes an add, a delete of
//! an edge they hold becomes a tombstone, and everything else (re-inserts, deletes of missing
//! edges) vanishes. This is where set semantics is enforced.

use super::block_log::{BlockLog, BLOCK};
use super::Memtable;
use crate::batch::{id_of, is_del};
use crate::medium::Medium;
use crate::run::build::{self, DirPart, IndexBuilder, RunMeta};
use crate::run::file::{RunWriter, Unpersisted};
use crate::run::{Dir, DirData, Run};
use crate::types::VertexId;
use crate::Result;
use rayon::prelude::*;
use std::sync::Arc;

/// Vertex blocks sealed in parallel before their output is taken away.
const WAVE: usize = 8;

/// Seals into an in-DRAM run (for snapshots taken before the flusher gets to it).
pub(super) fn seal(m: Memtable, older: &[Arc<Run>], meta: RunMeta) -> Run {
    let space = meta.vertex_space;
    let vops = last_vertex_ops(&m.vertex_ops);
    let dram = |blocks: Vec<BlockLog>, d: Dir| -> DirData {
        let mut all = Vec::new();
        seal_dir(blocks, older, d, m.weighted, |parts| {
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
        seal_dir(blocks, older, d, m.weighted, |parts| {
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
fn seal_dir(
    blocks: Vec<BlockLog>,
    older: &[Arc<Run>],
    d: Dir,
    weighted: bool,
    mut sink: impl FnMut(Vec<DirPart>) -> Result<()>,
) -> Result<()> {
    debug_assert!(
        older.iter().all(|r| r.is_verified()),
        "resolving against unverified runs"
    );
    let mut it = blocks.into_iter().enumerate();
    loop {
        let wave: Vec<(usize, BlockLog)> = it.by_ref().take(WAVE).collect();
        if wave.is_empty() {
            return Ok(());
        }
        let parts: Vec<DirPart> = wave
            .into_par_iter()
            .map(|(b, blk)| seal_block(b, &blk, older, d, weighted))
            .collect();
        sink(parts)?;
    }
}

fn seal_block(b: usize, blk: &BlockLog, older: &[Arc<Run>], d: Dir, weighted: bool) -> DirPart {
    let mut part = DirPart::default();
    if blk.ops() == 0 {
        return part;
    }
    let mut raw = Vec::new();
    let mut keyed: Vec<(VertexId, u32)> = Vec::new();
    let mut adds = Vec::new();
    let mut addw = Vec::new();
    let mut tombs = Vec::new();
    // Older runs holding v, each with v's index there.
    let mut prior: Vec<(&DirData, usize)> = Vec::with_capacity(older.len());
    let grouped = blk.by_vertex();
    // Older runs that can hold the block's vertices (not other partitions' runs), newest
    // first, each with a cursor into its index: vertices come in increasing order, so each
    // lookup gallops forward from the last one.
    let first = (b * BLOCK) as VertexId;
    let block = (b * BLOCK) as u64..((b + 1) * BLOCK) as u64;
    let mut olds: Vec<(&DirData, usize)> = older
        .iter()
        .rev()
        .filter(|r| r.header.overlaps(&block))
        .map(|r| r.dir(d))
        .map(|dd| (dd, dd.index_range(first, first).start))
        .collect();
    for lv in 0..BLOCK {
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
