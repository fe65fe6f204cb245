//! Compaction: merging consecutive runs into one.
//!
//! Because runs are resolved (see the module docs), the events for one edge across
//! consecutive runs alternate add, tombstone, add, ... So the merged run needs only the
//! first and last event of each edge: both adds, the edge is new (add); both tombstones, an
//! older edge is gone (tombstone); mixed, nothing changed. Merging into the base (the oldest
//! run) drops tombstones entirely: finding one there means a run is damaged.

use super::build::{DirPart, IndexBuilder, Loops, RunMeta};
use super::file::RunWriter;
use super::format::WEIGHTED;
use super::{Dir, Run};
use crate::batch::{id_of, is_del};
use crate::medium::Medium;
use crate::types::VertexId;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Arc;

/// How a merge cuts its vertex range into parallel tasks and the tasks into waves. A wave's
/// output sits in DRAM until it is written, so waves are bounded by the neighbor ids they
/// hold, not by vertex count: dense ids come by first appearance, so a skewed graph's hubs
/// crowd the low ids, and a wave of 2^18 of them once held most of a Kron24 graph.
#[derive(Clone, Copy, Debug)]
struct Sizing {
    /// Vertices one task starts from (split further while it holds over `task_load`).
    task_vertices: u64,
    /// Ids (neighbors and tombstones) one task merges, at most, unless it is one vertex.
    task_load: u64,
    /// Tasks one wave runs in parallel, at most.
    wave_tasks: usize,
    /// Ids one wave holds, at most, unless it is one task.
    wave_load: u64,
}

impl Sizing {
    /// A wave holds about 2^23 ids: 32 MiB of them (64 with 64-bit ids), plus as much again
    /// in encoded bytes for a packed run and twice that in weights for a weighted one.
    const DEFAULT: Sizing = Sizing {
        task_vertices: 1 << 14,
        task_load: 1 << 20,
        wave_tasks: 16,
        wave_load: 1 << 23,
    };
}

/// One parallel task: the vertices `lo..hi` and the ids the inputs hold for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Task {
    lo: VertexId,
    hi: VertexId,
    load: u64,
}

/// Cuts `range` into tasks of direction `d` that each hold at most `s.task_load` ids, by
/// halving vertex ranges (a hub may end up a task on its own, however large).
fn plan_tasks(inputs: &[Arc<Run>], d: Dir, range: &std::ops::Range<u64>, s: Sizing) -> Vec<Task> {
    let load = |lo: VertexId, hi: VertexId| -> u64 {
        (inputs.iter().map(|r| r.dir(d)))
            .map(|x| x.load(x.index_range(lo, hi)))
            .sum()
    };
    let step = s.task_vertices;
    let mut todo: Vec<(VertexId, VertexId)> = (range.start / step..range.end.div_ceil(step))
        .rev()
        .map(|c| {
            let lo = (c * step).max(range.start);
            let hi = ((c + 1) * step).min(range.end);
            (lo as VertexId, hi as VertexId)
        })
        .collect();
    let mut tasks = Vec::with_capacity(todo.len());
    while let Some((lo, hi)) = todo.pop() {
        let l = load(lo, hi);
        if l > s.task_load && hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            todo.push((mid, hi));
            todo.push((lo, mid));
        } else {
            tasks.push(Task { lo, hi, load: l });
        }
    }
    tasks
}

/// Groups consecutive tasks into waves of at most `s.wave_tasks` tasks and `s.wave_load`
/// ids (a task over that alone is a wave on its own).
fn plan_waves(tasks: &[Task], s: Sizing) -> Vec<&[Task]> {
    let mut waves = Vec::new();
    let (mut start, mut load) = (0, 0u64);
    for (i, t) in tasks.iter().enumerate() {
        let n = i - start;
        if n > 0 && (n == s.wave_tasks || load + t.load > s.wave_load) {
            waves.push(&tasks[start..i]);
            (start, load) = (i, 0);
        }
        load += t.load;
    }
    if start < tasks.len() {
        waves.push(&tasks[start..]);
    }
    waves
}

/// Merges `inputs` (consecutive, oldest first) into run file `meta.id` and returns it,
/// mapped. `base` says the inputs start at the oldest run, so no tombstone may survive.
/// Neighbor ids stream to the file wave by wave; only the index is held in DRAM.
pub fn merge_to_file(
    inputs: &[Arc<Run>],
    meta: RunMeta,
    base: bool,
    medium: &Arc<dyn Medium>,
) -> Result<Run> {
    let never = || false;
    merge_to_file_until(inputs, meta, base, medium, &never)
        .map(|r| r.expect("a merge that is never stopped finishes"))
}

/// As [`merge_to_file`], but checks `stop` between waves of vertex chunks and, once it
/// returns true, removes the partial file and returns `None`: a store closing mid-merge
/// waits for one wave, not for the rest of a merge it can do at the next open.
pub fn merge_to_file_until(
    inputs: &[Arc<Run>],
    meta: RunMeta,
    base: bool,
    medium: &Arc<dyn Medium>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Option<Run>> {
    debug_assert_eq!(
        meta.part_shift, 0,
        "a whole merge writes one run of any vertex"
    );
    let range = 0..meta.vertex_space;
    match merge_range_to_file(
        inputs,
        &meta,
        base,
        range,
        Keep::Always,
        medium,
        stop,
        Sizing::DEFAULT,
    )? {
        Step::Done(r) => Ok(Some(*r)),
        Step::Stopped => Ok(None),
        Step::Empty => unreachable!("Keep::Always writes empty runs"),
    }
}

/// Merges `inputs` into one run per partition of `2^shift` vertex ids in `parts` (partition
/// numbers), skipping partitions the inputs hold nothing of (but always writing at least
/// one run, so the merged LSN range stays covered). `meta` is the template: each run takes
/// a fresh id from `next_id`, its partition's end as vertex space, and `shift`. Returns the
/// runs in partition order, or `None` once `stop` said so (every file of this merge then
/// removed).
#[allow(clippy::too_many_arguments)]
pub fn merge_partitions_until(
    inputs: &[Arc<Run>],
    meta: &RunMeta,
    base: bool,
    shift: u32,
    parts: std::ops::Range<u64>,
    next_id: &dyn Fn() -> u64,
    medium: &Arc<dyn Medium>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Option<Vec<Run>>> {
    assert!(shift > 0 && !parts.is_empty());
    let mut out: Vec<Run> = Vec::new();
    let last = parts.end - 1;
    for j in parts {
        let lo = j << shift;
        let hi = ((j + 1) << shift).min(meta.vertex_space);
        debug_assert!(lo < hi, "partition {j} lies beyond the vertex space");
        let m = RunMeta {
            id: next_id(),
            vertex_space: hi,
            part_shift: shift,
            ..*meta
        };
        let keep = if j == last && out.is_empty() {
            Keep::Always
        } else {
            Keep::IfAny
        };
        match merge_range_to_file(
            inputs,
            &m,
            base,
            lo..hi,
            keep,
            medium,
            stop,
            Sizing::DEFAULT,
        )? {
            Step::Done(r) => out.push(*r),
            Step::Empty => {}
            Step::Stopped => {
                for r in &out {
                    r.retire();
                }
                return Ok(None);
            }
        }
    }
    Ok(Some(out))
}

/// Whether a merge writes a run that holds nothing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    Always,
    IfAny,
}

enum Step {
    Done(Box<Run>),
    Empty,
    Stopped,
}

/// Merges the vertices `range` of `inputs` into run file `meta.id`.
#[allow(clippy::too_many_arguments)]
fn merge_range_to_file(
    inputs: &[Arc<Run>],
    meta: &RunMeta,
    base: bool,
    range: std::ops::Range<u64>,
    keep: Keep,
    medium: &Arc<dyn Medium>,
    stop: &(dyn Fn() -> bool + Sync),
    sizing: Sizing,
) -> Result<Step> {
    let space = meta.vertex_space;
    debug_assert!(range.end <= space);
    let has_in = inputs.first().is_some_and(|r| r.inn.is_some());
    let dirs: &[Dir] = if has_in {
        &[Dir::Out, Dir::In]
    } else {
        &[Dir::Out]
    };
    let mut w = RunWriter::create(medium, meta.id, meta.compression)?;
    let mut built = Vec::new();
    for &d in dirs {
        // A dense input lists a quarter of the space or more, and so will the output:
        // filling dense offsets as parts arrive needs less DRAM than listing vertices. A
        // partition's run is sparse: its vertices start far above 0.
        let mut ix = if meta.part_shift > 0 {
            IndexBuilder::sparse(space)
        } else if base || inputs.iter().any(|r| r.dir(d).dense) {
            IndexBuilder::dense(space)
        } else {
            IndexBuilder::new(space)
        };
        let tasks = plan_tasks(inputs, d, &range, sizing);
        for wave in plan_waves(&tasks, sizing) {
            if stop() {
                w.abandon();
                return Ok(Step::Stopped);
            }
            let parts = wave
                .par_iter()
                .map(|t| merge_range(inputs, d, t.lo, t.hi, base))
                .collect::<Result<Vec<DirPart>>>()?;
            w.put_parts(&parts)?;
            for p in &parts {
                ix.add(p);
            }
        }
        w.end_direction()?;
        built.push(ix.finish(Vec::new()));
    }
    let inn = if has_in { built.pop() } else { None };
    let out = built.pop().expect("out direction");
    let vops = merge_vertex_ops(inputs, base, &range);
    let empty = out.n_index() == 0 && inn.as_ref().is_none_or(|i| i.n_index() == 0);
    if keep == Keep::IfAny && empty && vops.is_empty() {
        w.abandon();
        return Ok(Step::Empty);
    }
    w.finish(meta, &out, inn.as_ref(), &vops)
        .map(|r| Step::Done(Box::new(r)))
}

fn merge_range(
    inputs: &[Arc<Run>],
    d: Dir,
    lo: VertexId,
    hi: VertexId,
    base: bool,
) -> Result<DirPart> {
    let dirs: Vec<_> = inputs.iter().map(|r| r.dir(d)).collect();
    let mut cur: Vec<std::ops::Range<usize>> = dirs.iter().map(|x| x.index_range(lo, hi)).collect();
    let mut m = RangeMerge {
        inputs,
        weighted: inputs
            .first()
            .is_some_and(|r| r.header.flags & WEIGHTED != 0),
        base,
        // A directed run (one with in-lists) needs no loop count.
        part: DirPart::new(match inputs.first().is_some_and(|r| r.inn.is_some()) {
            true => Loops::Skip,
            false => Loops::Count,
        }),
        scratch: Vec::new(),
        events: Vec::new(),
        adds: Vec::new(),
        addw: Vec::new(),
        tombs: Vec::new(),
        bufs: vec![Vec::new(); dirs.len()],
        dirs,
    };
    let mut hits: Vec<usize> = Vec::with_capacity(inputs.len());
    // Each round takes the next vertex any input holds.
    while let Some(v) = (0..m.dirs.len())
        .filter(|&i| !cur[i].is_empty())
        .map(|i| m.dirs[i].vid_at(cur[i].start))
        .min()
    {
        hits.clear();
        let mut any_tomb = false;
        for (i, c) in cur.iter().enumerate() {
            if !c.is_empty() && m.dirs[i].vid_at(c.start) == v {
                any_tomb |= !m.dirs[i].tombs_at(c.start).is_empty();
                hits.push(i);
            }
        }
        let at: Vec<(usize, usize)> = hits.iter().map(|&i| (i, cur[i].start)).collect();
        match (any_tomb, m.weighted) {
            (false, false) => m.plain(v, &at),
            (false, true) => m.weighted_adds(v, &at),
            (true, _) => m.resolve(v, &at)?,
        }
        for &i in &hits {
            cur[i].start += 1;
        }
    }
    Ok(m.part)
}

/// The state of one task of a merge: its inputs' lists of one direction, the part it
/// builds, and scratch space reused from vertex to vertex.
struct RangeMerge<'a> {
    inputs: &'a [Arc<Run>],
    dirs: Vec<&'a super::DirData>,
    weighted: bool,
    base: bool,
    part: DirPart,
    scratch: Vec<(VertexId, f64)>,
    /// (neighbor, input << 1 | is_add, weight): within one input a tombstone sorts before
    /// the add of the same edge (a weight update).
    events: Vec<(VertexId, u32, f64)>,
    adds: Vec<VertexId>,
    addw: Vec<f64>,
    tombs: Vec<VertexId>,
    bufs: Vec<Vec<VertexId>>,
}

impl RangeMerge<'_> {
    /// Vertex `v` held by inputs `at` (input, list), with adds only and no weights: the
    /// lists' union (disjoint: runs are resolved).
    fn plain(&mut self, v: VertexId, at: &[(usize, usize)]) {
        if let [(i, k)] = at[..] {
            let list = self.dirs[i].adds_into(k, &mut self.bufs[i]);
            self.part.push(v, list, &[]);
            return;
        }
        self.adds.clear();
        for &(i, k) in at {
            self.dirs[i].find_at(k, |x| {
                self.adds.push(x);
                false
            });
        }
        self.adds.sort_unstable();
        self.part.push(v, &self.adds, &[]);
    }

    /// As [`RangeMerge::plain`], with weights.
    fn weighted_adds(&mut self, v: VertexId, at: &[(usize, usize)]) {
        self.scratch.clear();
        for &(i, k) in at {
            let a = self.dirs[i].adds_into(k, &mut self.bufs[i]);
            let w = self.dirs[i].wts_at(k);
            self.scratch
                .extend(a.iter().copied().zip(w.iter().copied()));
        }
        self.scratch.sort_unstable_by_key(|e| e.0);
        self.adds.clear();
        self.addw.clear();
        self.adds.extend(self.scratch.iter().map(|e| e.0));
        self.addw.extend(self.scratch.iter().map(|e| e.1));
        self.part.push_weighted(v, &self.adds, &self.addw, &[]);
    }

    /// Vertex `v` where some input holds tombstones: each neighbor's events, oldest input
    /// first, resolve to an add, a tombstone (kept unless this merge is the base) or
    /// nothing.
    fn resolve(&mut self, v: VertexId, at: &[(usize, usize)]) -> Result<()> {
        self.events.clear();
        for &(i, k) in at {
            let tag = (i as u32) << 1;
            let a = self.dirs[i].adds_into(k, &mut self.bufs[i]);
            // Unweighted lists have no weights: every add weighs 0 here.
            let w = self.dirs[i]
                .wts_at(k)
                .iter()
                .copied()
                .chain(std::iter::repeat(0.0));
            self.events
                .extend(a.iter().zip(w).map(|(&x, w)| (x, tag | 1, w)));
            (self.events).extend(self.dirs[i].tombs_at(k).iter().map(|&x| (x, tag, 0.0)));
        }
        self.events.sort_unstable_by_key(|e| (e.0, e.1));
        self.adds.clear();
        self.addw.clear();
        self.tombs.clear();
        for g in self.events.chunk_by(|a, b| a.0 == b.0) {
            let (first, last) = (g[0], g[g.len() - 1]);
            let x = first.0;
            match (first.1 & 1, last.1 & 1) {
                // Absent before, present after.
                (1, 1) => {
                    self.adds.push(x);
                    self.addw.push(last.2);
                }
                // Present before, absent after.
                (0, 0) if self.base => {
                    return Err(Error::corrupt(format!(
                        "run {} tombstones edge {v}->{x} that no older run holds",
                        self.inputs[(first.1 >> 1) as usize].header.id
                    )))
                }
                (0, 0) => self.tombs.push(x),
                // Present before and after: only a weight can have changed.
                (0, 1) if self.weighted => {
                    if !self.base {
                        self.tombs.push(x);
                    }
                    self.adds.push(x);
                    self.addw.push(last.2);
                }
                _ => {}
            }
        }
        match self.weighted {
            true => self
                .part
                .push_weighted(v, &self.adds, &self.addw, &self.tombs),
            false => self.part.push(v, &self.adds, &self.tombs),
        }
        Ok(())
    }
}

/// The last state of each vertex of `range` the inputs set.
fn merge_vertex_ops(
    inputs: &[Arc<Run>],
    base: bool,
    range: &std::ops::Range<u64>,
) -> Vec<VertexId> {
    let mut all: Vec<(VertexId, usize, VertexId)> = Vec::new();
    for (i, r) in inputs.iter().enumerate() {
        all.extend(
            r.vertex_ops
                .get()
                .iter()
                .filter(|&&x| range.contains(&(id_of(x) as u64)))
                .map(|&x| (id_of(x), i, x)),
        );
    }
    all.sort_unstable();
    let mut out = Vec::new();
    for g in all.chunk_by(|a, b| a.0 == b.0) {
        let last = g[g.len() - 1].2;
        // Alive is every vertex's default; the base keeps only deletions.
        if !base || is_del(last) {
            out.push(last);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::memory::MemoryMedium;
    use crate::memtable::Memtable;
    use crate::run::Compression;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn sealed(edges: &[[VertexId; 2]], older: &[Arc<Run>], id: u64) -> Arc<Run> {
        let mut m = Memtable::new(false, false, 0, 1 << 16);
        m.apply_edges(edges, &[]);
        Arc::new(m.seal(older, id))
    }

    #[test]
    fn a_split_merge_writes_each_partition_once_and_skips_empty_ones() {
        // Vertices 0..256 and 768..1024 only: of four partitions of 256 ids, 1 and 2 hold
        // nothing (and 2, not the last, is skipped too).
        let edges: Vec<[VertexId; 2]> = (0..4000u64)
            .map(|i| {
                let u = (i * 37) % 512;
                let u = if u < 256 { u } else { u + 512 };
                [u as VertexId, ((i * 101) % 256) as VertexId]
            })
            .collect();
        let a = sealed(&edges[..2000], &[], 1);
        let b = sealed(&edges[2000..], std::slice::from_ref(&a), 2);
        let inputs = [a, b];
        let medium: Arc<dyn Medium> = Arc::new(MemoryMedium::new());
        let meta = RunMeta {
            id: 0,
            level: 1,
            min_lsn: 0,
            max_lsn: 4000,
            vertex_space: 1024,
            weighted: false,
            part_shift: 0,
            compression: Compression::Packed,
            stamp: crate::stamp::Stamp::new(1, 1),
            last_time: None,
        };
        let ids = AtomicUsize::new(10);
        let next = || ids.fetch_add(1, Ordering::Relaxed) as u64;
        let never = || false;
        let parts = merge_partitions_until(&inputs, &meta, true, 8, 0..4, &next, &medium, &never)
            .unwrap()
            .unwrap();
        let spans: Vec<_> = parts.iter().map(|r| r.header.span()).collect();
        assert_eq!(spans, vec![0..256, 768..1024]);
        let whole = merge_to_file(&inputs, RunMeta { id: 99, ..meta }, true, &medium).unwrap();
        for d in [Dir::Out, Dir::In] {
            let split: Vec<(VertexId, Vec<VertexId>)> = (parts.iter())
                .flat_map(|r| {
                    let dd = r.dir(d);
                    assert!(!dd.dense, "a partition's run is sparse");
                    (0..dd.n_index())
                        .map(move |i| (dd.vid_at(i), dd.adds_into(i, &mut Vec::new()).to_vec()))
                })
                .filter(|(_, a)| !a.is_empty())
                .collect();
            let wd = whole.dir(d);
            let all: Vec<(VertexId, Vec<VertexId>)> = (0..wd.n_index())
                .map(|i| (wd.vid_at(i), wd.adds_into(i, &mut Vec::new()).to_vec()))
                .filter(|(_, a)| !a.is_empty())
                .collect();
            assert_eq!(split, all, "direction {d:?}");
        }
    }

    #[test]
    fn a_stopped_merge_removes_its_file_and_a_finished_one_keeps_every_edge() {
        // One wave per direction: stopping at the second check lands between the out- and
        // the in-direction, mid-merge.
        let edges: Vec<[VertexId; 2]> = (0..60_000u64)
            .map(|i| {
                [
                    ((i * 7919) % 65_536) as VertexId,
                    ((i * 104_729) % 65_536) as VertexId,
                ]
            })
            .collect();
        let a = sealed(&edges[..30_000], &[], 1);
        let b = sealed(&edges[30_000..], std::slice::from_ref(&a), 2);
        let inputs = [a, b];
        let medium: Arc<dyn Medium> = Arc::new(MemoryMedium::new());
        let meta = |id| RunMeta {
            id,
            level: 1,
            min_lsn: 0,
            max_lsn: 60_000,
            vertex_space: 1 << 16,
            weighted: false,
            part_shift: 0,
            compression: Compression::Packed,
            stamp: crate::stamp::Stamp::new(1, 1),
            last_time: None,
        };
        let asked = AtomicUsize::new(0);
        let stop_second_time = || asked.fetch_add(1, Ordering::Relaxed) >= 1;
        let r = merge_to_file_until(&inputs, meta(3), true, &medium, &stop_second_time).unwrap();
        assert!(r.is_none(), "the merge went on after stop said so");
        assert!(
            !medium.exists(&Run::file_name(3)),
            "a stopped merge left its partial file"
        );
        let done = merge_to_file(&inputs, meta(4), true, &medium).unwrap();
        let distinct: std::collections::BTreeSet<_> = edges.iter().collect();
        assert_eq!(done.out.n_adds() as usize, distinct.len());
    }

    /// Lists of every indexed vertex of direction `d`, with tombstones.
    fn lists(r: &Run, d: Dir) -> Vec<(VertexId, Vec<VertexId>, Vec<VertexId>)> {
        let dd = r.dir(d);
        (0..dd.n_index())
            .map(|i| {
                let a = dd.adds_into(i, &mut Vec::new()).to_vec();
                (dd.vid_at(i), a, dd.tombs_at(i).to_vec())
            })
            .filter(|(_, a, t)| !a.is_empty() || !t.is_empty())
            .collect()
    }

    /// A hub at vertex 0 (4,000 neighbors), a few more around 300, and a sprinkling of
    /// small lists; then a second run that deletes some of the hub's edges and adds more.
    fn skewed() -> [Arc<Run>; 2] {
        let mut first: Vec<[VertexId; 2]> = (1..4001).map(|x| [0, x]).collect();
        first.extend((300..310).flat_map(|u| (0..700).map(move |x| [u, x * 3])));
        first.extend((0..3000u64).map(|i| [((i * 7919) % 4096) as VertexId, (i % 97) as VertexId]));
        let a = sealed(&first, &[], 1);
        let mut m = Memtable::new(false, false, 0, 1 << 16);
        let mut second: Vec<[VertexId; 2]> = (1..1500)
            .map(|x| [0, (x * 2) | crate::batch::DEL])
            .collect();
        second.extend((5000..5600).map(|x| [0, x]));
        m.apply_edges(&second, &[]);
        let b = Arc::new(m.seal(std::slice::from_ref(&a), 2));
        [a, b]
    }

    const TINY: Sizing = Sizing {
        task_vertices: 64,
        task_load: 500,
        wave_tasks: 4,
        wave_load: 1200,
    };

    #[test]
    fn tasks_and_waves_are_bounded_by_ids_not_vertices() {
        let inputs = skewed();
        for d in [Dir::Out, Dir::In] {
            let range = 0..1u64 << 13;
            let tasks = plan_tasks(&inputs, d, &range, TINY);
            assert_eq!(tasks[0].lo, 0);
            assert_eq!(tasks.last().unwrap().hi as u64, range.end);
            for (t, next) in tasks.iter().zip(&tasks[1..]) {
                assert_eq!(t.hi, next.lo, "tasks must tile the range");
            }
            for t in &tasks {
                assert!(
                    t.load <= TINY.task_load || t.hi - t.lo == 1,
                    "{t:?} too big"
                );
            }
            // Plain inputs count exactly: every id and tombstone once.
            let total: u64 = inputs
                .iter()
                .map(|r| r.dir(d).n_adds() + r.dir(d).n_tombs())
                .sum();
            assert_eq!(tasks.iter().map(|t| t.load).sum::<u64>(), total);
            if d == Dir::Out {
                let hub = tasks[0];
                assert!(
                    (hub.lo, hub.hi) == (0, 1) && hub.load > TINY.task_load,
                    "{hub:?}"
                );
            }
            let waves = plan_waves(&tasks, TINY);
            assert_eq!(waves.iter().map(|w| w.len()).sum::<usize>(), tasks.len());
            for w in &waves {
                let load: u64 = w.iter().map(|t| t.load).sum();
                assert!(w.len() <= TINY.wave_tasks);
                assert!(load <= TINY.wave_load || w.len() == 1, "wave of {load} ids");
            }
            assert!(waves.len() > 4, "the hub's ids must spread over waves");
        }
    }

    #[test]
    fn small_waves_merge_what_large_ones_do_plain_and_packed() {
        let plain = skewed();
        let medium: Arc<dyn Medium> = Arc::new(MemoryMedium::new());
        let meta = |id, compression| RunMeta {
            id,
            level: 1,
            min_lsn: 0,
            max_lsn: 10_000,
            vertex_space: 1 << 13,
            weighted: false,
            part_shift: 0,
            compression,
            stamp: crate::stamp::Stamp::new(1, 1),
            last_time: None,
        };
        let never = || false;
        let merge = |inputs: &[Arc<Run>], id, c, base, s| -> Run {
            let range = 0..1u64 << 13;
            match merge_range_to_file(
                inputs,
                &meta(id, c),
                base,
                range,
                Keep::Always,
                &medium,
                &never,
                s,
            )
            .unwrap()
            {
                Step::Done(r) => *r,
                _ => panic!("Keep::Always writes the run"),
            }
        };
        // Packed inputs too: the first run rewritten packed, the second kept in DRAM.
        let packed_first = Arc::new(merge(
            &plain[..1],
            10,
            Compression::Packed,
            true,
            Sizing::DEFAULT,
        ));
        let packed = [packed_first, plain[1].clone()];
        let mut id = 20;
        for inputs in [&plain, &packed] {
            for c in [Compression::None, Compression::Packed] {
                for base in [true, false] {
                    let big = merge(inputs, id, c, base, Sizing::DEFAULT);
                    let small = merge(inputs, id + 1, c, base, TINY);
                    id += 2;
                    for d in [Dir::Out, Dir::In] {
                        let l = lists(&big, d);
                        assert!(l.len() > 100);
                        assert_eq!(l, lists(&small, d), "{c:?} base {base} {d:?}");
                    }
                }
            }
        }
    }
}
