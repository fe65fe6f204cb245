//! Building one direction of a layered view's index (see the parent module): offsets for
//! the sparse runs, the dead positions of the vertices newer runs delete from, and, when
//! the budget holds the whole graph, a sorted copy of every live list.

use super::{Layer, Offsets, Side, SweepCopy, CLEAN};
use crate::medium::dram::HugeArray;
use crate::run::{Dir, DirData};
use crate::snapshot::{GraphView, Snapshot};
use crate::types::{gallop, VertexId, VERTEX_TASK};
use rayon::prelude::*;

impl Snapshot {
    /// Builds direction `d`'s index; `None` if more vertices are cut than `cut_of` can
    /// number.
    pub(super) fn layer(&self, d: Dir) -> Option<Layer> {
        let runs: Vec<Offsets> = (self.runs.par_iter())
            .map(|r| offsets_of(r.dir(d)))
            .collect();
        let at = (self.runs.iter())
            .scan(0u64, |sum, r| {
                let start = *sum;
                *sum += r.dir(d).adds.get().len() as u64;
                Some(start)
            })
            .collect();
        let mut l = Layer {
            runs,
            at,
            cut_of: Vec::new(),
            cuts: Vec::new(),
            dels: Vec::new(),
            copy: Default::default(),
        };
        if self.runs[1..].iter().any(|r| r.dir(d).n_tombs() > 0) {
            let blocks = self.dead_blocks(d, &l);
            l.set_cuts(self.n, blocks)?;
        }
        Some(l)
    }

    /// DRAM a copy of direction `d`'s live lists takes (offsets, ids, weights), in bytes.
    pub(super) fn copy_bytes(&self, d: Dir) -> u64 {
        let unit =
            (std::mem::size_of::<VertexId>() + if self.is_weighted() { 8 } else { 0 }) as u64;
        let live: i64 = (self.runs.iter())
            .map(|r| r.dir(d).adds.get().len() as i64 - r.dir(d).n_tombs() as i64)
            .sum();
        live.max(0) as u64 * unit + (self.n as u64 + 1) * 8
    }

    /// Per block of `VERTEX_TASK` vertices, in parallel: its dead positions, sorted.
    fn dead_blocks(&self, d: Dir, l: &Layer) -> Vec<Vec<(VertexId, u64)>> {
        let side = Side::new(self, d, l);
        let tombed: Vec<usize> = (1..self.runs.len())
            .filter(|&j| self.runs[j].dir(d).n_tombs() > 0)
            .collect();
        (0..self.n.div_ceil(VERTEX_TASK))
            .into_par_iter()
            .map(|c| {
                let (lo, hi) = (c * VERTEX_TASK, ((c + 1) * VERTEX_TASK).min(self.n));
                let mut dead: Vec<(VertexId, u64)> = Vec::new();
                for &j in &tombed {
                    let dd = self.runs[j].dir(d);
                    kill(&side, j, dd, lo as VertexId..hi as VertexId, &mut dead);
                }
                // Sorted already when one run kills in one older run (a base and the
                // changes since); else tombstones kill in several runs, whose positions
                // interleave, and several runs' tombstones interleave by vertex.
                if tombed != [1] {
                    dead.sort_unstable();
                }
                dead
            })
            .collect()
    }
}

/// The offsets a view reads run direction `dd` through: its own when it is dense; else
/// built by vertex over the range it holds, each vertex it does not hold an empty range
/// (in parallel: the newest run of a Kron24 ingest, sparse, took 70 ms in one thread).
fn offsets_of(dd: &DirData) -> Offsets {
    if dd.dense {
        return Offsets::Own;
    }
    let (vids, o) = (dd.vids.get(), dd.offs.get());
    let (Some(&lo), Some(&last)) = (vids.first(), vids.last()) else {
        return Offsets::Built {
            lo: 0,
            offs: Vec::new(),
        };
    };
    let mut offs = vec![0u64; (last - lo) as usize + 2];
    offs.par_chunks_mut(VERTEX_TASK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let first = lo + (c * VERTEX_TASK) as VertexId;
            // `v`'s list starts where the first held vertex at or after it starts: an
            // empty range for a vertex the run does not hold (and the end past the last).
            let mut i = vids.partition_point(|&x| x < first);
            for (k, slot) in chunk.iter_mut().enumerate() {
                let v = first + k as VertexId;
                while i < vids.len() && vids[i] < v {
                    i += 1;
                }
                *slot = o[i];
            }
        });
    Offsets::Built { lo, offs }
}

/// Appends to `dead` the positions that run `j`'s tombstones (direction `dd`) kill among
/// the older runs' lists of the vertices in `vs`: for each tombstone, the newest older run
/// holding its neighbor (runs are resolved: that copy is the live one).
fn kill(
    side: &Side,
    j: usize,
    dd: &DirData,
    vs: std::ops::Range<VertexId>,
    dead: &mut Vec<(VertexId, u64)>,
) {
    let older = &side.slabs()[..j];
    let mut from = vec![0usize; j];
    for i in dd.index_range(vs.start, vs.end) {
        let tombs = dd.tombs_at(i);
        if tombs.is_empty() {
            continue;
        }
        let v = dd.vid_at(i);
        from.fill(0);
        // One run's tombstones ascend: each search gallops on from the last one's place in
        // every older list, so a hub's thousands of deletions cost a walk of its lists.
        for &x in tombs {
            for (k, s) in older.iter().enumerate().rev() {
                let (a, b) = s.range(v);
                let (p, found) = gallop(&s.ids[a..b], from[k], x);
                from[k] = p;
                if found {
                    dead.push((v, s.at + (a + p) as u64));
                    break;
                }
            }
        }
    }
}

impl Layer {
    /// Records the dead positions of `blocks` (each sorted, blocks in vertex order) among
    /// `n` vertices; `None` if more vertices are cut than `cut_of` can number.
    fn set_cuts(&mut self, n: usize, blocks: Vec<Vec<(VertexId, u64)>>) -> Option<()> {
        self.cut_of = vec![CLEAN; n];
        self.dels = Vec::with_capacity(blocks.iter().map(Vec::len).sum());
        for (v, p) in blocks.into_iter().flatten() {
            if self.cut_of[v as usize] == CLEAN {
                if self.cuts.len() >= CLEAN as usize {
                    return None;
                }
                self.cut_of[v as usize] = self.cuts.len() as u32;
                self.cuts.push(self.dels.len() as u64);
            }
            debug_assert!(self.dels.last() != Some(&p), "a position dies once");
            self.dels.push(p);
        }
        self.cuts.push(self.dels.len() as u64);
        Some(())
    }
}

/// Every vertex's live list, its runs end to end, weights beside (when any run is
/// weighted), as a CSR: a block of vertices per task, each writing its own part.
pub(super) fn copy_lists(n: usize, side: Side) -> std::io::Result<SweepCopy> {
    let weighted = side.slabs().iter().any(|s| !s.wts.is_empty());
    let mut offs = HugeArray::<u64>::zeroed(n + 1)?;
    (offs[1..].par_iter_mut().enumerate())
        .with_max_len(VERTEX_TASK)
        .for_each(|(v, d)| *d = side.degree(v as VertexId) as u64);
    for v in 0..n {
        offs[v + 1] += offs[v];
    }
    let total = offs[n] as usize;
    let mut ids = HugeArray::<VertexId>::zeroed(total)?;
    let mut wts = HugeArray::<f64>::zeroed(if weighted { total } else { 0 })?;
    let mut parts = Vec::new();
    let (mut ids_rest, mut wts_rest) = (&mut ids[..], &mut wts[..]);
    for lo in (0..n).step_by(VERTEX_TASK) {
        let hi = (lo + VERTEX_TASK).min(n);
        let len = (offs[hi] - offs[lo]) as usize;
        let (a, b) = std::mem::take(&mut ids_rest).split_at_mut(len);
        ids_rest = b;
        let (c, e) = std::mem::take(&mut wts_rest).split_at_mut(if weighted { len } else { 0 });
        wts_rest = e;
        parts.push((lo..hi, a, c));
    }
    parts.into_par_iter().for_each(|(vs, ids, wts)| {
        let mut k = 0;
        for v in vs {
            side.find_stretch_in_runs(v as VertexId, |xs, ws| {
                put(&mut ids[k..k + xs.len()], xs);
                if weighted {
                    match ws.is_empty() {
                        true => wts[k..k + xs.len()].fill(1.0),
                        false => put(&mut wts[k..k + xs.len()], ws),
                    }
                }
                k += xs.len();
                false
            });
        }
        debug_assert_eq!(k, ids.len(), "a block fills exactly its part");
    });
    Ok(SweepCopy { offs, ids, wts })
}

/// Copies `from` into `to` (of the same length) by a plain loop: most slices are a few
/// ids, for which a `memcpy` call costs more than the copy.
#[inline(always)]
fn put<T: Copy>(to: &mut [T], from: &[T]) {
    for (t, &f) in to.iter_mut().zip(from) {
        *t = f;
    }
}
