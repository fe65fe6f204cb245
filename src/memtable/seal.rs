//! Sealing: a frozen memtable becomes a resolved, sorted in-DRAM run.
//!
//! Per vertex: gather its updates, keep the last update of each neighbor, then compare with
//! the state the older runs give: an insert of an edge they lack becomes an add, a delete of
//! an edge they hold becomes a tombstone, and everything else (re-inserts, deletes of missing
//! edges) vanishes. This is where set semantics is enforced.

use super::vbuf::{VBlock, BLOCK};
use super::Memtable;
use crate::batch::{id_of, is_del};
use crate::run::build::{self, DirPart, RunMeta};
use crate::run::{Dir, Run};
use rayon::prelude::*;
use std::sync::Arc;

pub(super) fn seal(m: &Memtable, older: &[Arc<Run>], meta: RunMeta) -> Run {
    let space = meta.vertex_space;
    let out = seal_dir(&m.out, older, Dir::Out, space);
    let inn = (!m.undirected).then(|| seal_dir(&m.inn, older, Dir::In, space));
    build::finish(meta, out, inn, last_vertex_ops(&m.vertex_ops))
}

fn seal_dir(blocks: &[VBlock], older: &[Arc<Run>], d: Dir, space: u64) -> crate::run::DirData {
    let parts: Vec<DirPart> = blocks
        .par_iter()
        .enumerate()
        .map(|(b, blk)| seal_block(b, blk, older, d))
        .collect();
    build::assemble(parts, space)
}

fn seal_block(b: usize, blk: &VBlock, older: &[Arc<Run>], d: Dir) -> DirPart {
    let mut part = DirPart::default();
    if blk.ops() == 0 {
        return part;
    }
    let mut raw = Vec::new();
    let mut keyed: Vec<u64> = Vec::new();
    let mut adds = Vec::new();
    let mut tombs = Vec::new();
    let mut prior: Vec<(&[u32], &[u32])> = Vec::with_capacity(older.len());
    for lv in 0..BLOCK {
        if blk.count(lv) == 0 {
            continue;
        }
        let v = (b * BLOCK + lv) as u32;
        raw.clear();
        blk.gather(lv, &mut raw);
        adds.clear();
        tombs.clear();
        // The older state of v, newest run first, skipping runs that hold nothing for it.
        prior.clear();
        for r in older.iter().rev() {
            let dd = r.dir(d);
            if let Some(i) = dd.index_of(v) {
                prior.push((dd.adds_at(i), dd.tombs_at(i)));
            }
        }
        let existed = |x: u32| {
            for &(a, t) in &prior {
                if !t.is_empty() && t.binary_search(&x).is_ok() {
                    return false;
                }
                if a.binary_search(&x).is_ok() {
                    return true;
                }
            }
            false
        };
        if raw.iter().all(|&x| !is_del(x)) {
            raw.sort_unstable();
            raw.dedup();
            if prior.is_empty() {
                part.push(v, &raw, &[]);
                continue;
            }
            adds.extend(raw.iter().copied().filter(|&x| !existed(x)));
        } else {
            // Last update per neighbor wins: sort by (neighbor, arrival).
            keyed.clear();
            keyed.extend(
                raw.iter()
                    .enumerate()
                    .map(|(i, &x)| (id_of(x) as u64) << 33 | (i as u64) << 1 | is_del(x) as u64),
            );
            keyed.sort_unstable();
            for g in keyed.chunk_by(|a, b| a >> 33 == b >> 33) {
                let last = g[g.len() - 1];
                let x = (last >> 33) as u32;
                match (last & 1 == 1, existed(x)) {
                    (false, false) => adds.push(x),
                    (true, true) => tombs.push(x),
                    _ => {}
                }
            }
        }
        part.push(v, &adds, &tombs);
    }
    part
}

/// The last state of each vertex, sorted by vertex.
fn last_vertex_ops(ops: &[u32]) -> Vec<u32> {
    let mut keyed: Vec<(u32, usize, u32)> = ops
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
