//! Parallel apply of a batch of edge updates.
//!
//! The batch is partitioned into contiguous ranges of vertex blocks holding about equal
//! numbers of updates (not equal numbers of vertices: power-law graphs put most updates on
//! few vertices). Each task owns its blocks exclusively, so no locks are taken; within a
//! task, updates are bucketed by block first, so each block's log grows by one append of
//! its share of the batch.

use super::block_log::{BlockLog, BLOCK_BITS};
use crate::batch::{id_of, DEL};
use crate::types::VertexId;
use rayon::prelude::*;

#[derive(Clone, Copy)]
enum Key {
    /// Key by source, payload destination (out-buffers; undirected adds the reverse).
    Out { both: bool },
    /// Key by destination, payload source (in-buffers).
    In,
}

#[inline]
fn emit(key: Key, e: [VertexId; 2], mut f: impl FnMut(VertexId, VertexId)) {
    match key {
        Key::Out { both } => {
            f(e[0], e[1]);
            let d = id_of(e[1]);
            if both && d != e[0] {
                f(d, e[0] | (e[1] & DEL));
            }
        }
        Key::In => f(id_of(e[1]), e[0] | (e[1] & DEL)),
    }
}

/// Applies `edges` (with parallel `weights`, empty when unweighted) to out-blocks and
/// (unless undirected) in-blocks.
pub fn apply(
    out: &mut [BlockLog],
    inn: &mut [BlockLog],
    undirected: bool,
    edges: &[[VertexId; 2]],
    weights: &[f64],
) {
    let threads = rayon::current_num_threads().max(1);
    let mut tasks: Vec<Task> = Vec::new();
    let out_key = Key::Out { both: undirected };
    push_tasks(&mut tasks, out, out_key, edges, threads);
    if !undirected {
        push_tasks(&mut tasks, inn, Key::In, edges, threads);
    }
    if tasks.len() == 1 {
        tasks.pop().unwrap().run(edges, weights);
    } else {
        tasks.into_par_iter().for_each(|t| t.run(edges, weights));
    }
}

struct Task<'a> {
    blocks: &'a mut [BlockLog],
    first: usize,
    hist: Vec<usize>,
    key: Key,
}

fn push_tasks<'a>(
    tasks: &mut Vec<Task<'a>>,
    blocks: &'a mut [BlockLog],
    key: Key,
    edges: &[[VertexId; 2]],
    threads: usize,
) {
    let nb = blocks.len();
    let mut hist = vec![0usize; nb];
    for &e in edges {
        emit(key, e, |k, _| hist[(k >> BLOCK_BITS) as usize] += 1);
    }
    let total: usize = hist.iter().sum();
    let target = total.div_ceil(threads).max(1);
    let mut rest = blocks;
    let mut first = 0;
    while first < nb {
        let (mut end, mut acc) = (first, 0);
        while end < nb && (acc < target || end == first) {
            acc += hist[end];
            end += 1;
        }
        let (mine, tail) = rest.split_at_mut(end - first);
        rest = tail;
        if acc > 0 {
            tasks.push(Task {
                blocks: mine,
                first,
                hist: hist[first..end].to_vec(),
                key,
            });
        }
        first = end;
    }
}

impl Task<'_> {
    fn run(self, edges: &[[VertexId; 2]], weights: &[f64]) {
        let (lo, hi) = (self.first, self.first + self.blocks.len());
        // Bucket this task's updates by block (stable, so per-vertex order is kept).
        let mut start = Vec::with_capacity(self.hist.len() + 1);
        let mut acc = 0;
        for &h in &self.hist {
            start.push(acc);
            acc += h;
        }
        start.push(acc);
        let mut pos = start.clone();
        let mut buf = vec![(0 as VertexId, 0 as VertexId); acc];
        let weighted = !weights.is_empty();
        let mut wbuf = vec![0f64; if weighted { acc } else { 0 }];
        for (i, &e) in edges.iter().enumerate() {
            emit(self.key, e, |k, x| {
                let b = (k >> BLOCK_BITS) as usize;
                if b >= lo && b < hi {
                    buf[pos[b - lo]] = (k, x);
                    if weighted {
                        wbuf[pos[b - lo]] = weights[i];
                    }
                    pos[b - lo] += 1;
                }
            });
        }
        for (i, blk) in self.blocks.iter_mut().enumerate() {
            let w = if weighted {
                &wbuf[start[i]..start[i + 1]]
            } else {
                &[][..]
            };
            blk.push_all(&buf[start[i]..start[i + 1]], w);
        }
    }
}
