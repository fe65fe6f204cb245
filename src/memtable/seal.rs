//! Sealing: a frozen memtable becomes a resolved, sorted in-DRAM run.
//!
//! Per vertex: gather its updates, keep the last update of each neighbor, then compare with
//! the state the older runs give: an insert of an edge they lack becomes an add, a delete of
//! an edge they hold becomes a tombstone, and everything else (re-inserts, deletes of missing
//! edges) vanishes. This is where set semantics is enforced. A directed store's in
//! direction is then the out direction transposed ([`super::transpose`]), with nothing left
//! to resolve or sort.

use super::block_log::{BlockLog, Grouped, BLOCK};
use super::history::{self, Changes};
use super::transpose::Transposer;
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

/// Seals into an in-DRAM run (for snapshots taken before the flusher gets to it), with
/// the effective edge changes when `history` says to emit them (in vertex order).
pub(super) fn seal(
    m: Memtable,
    older: &[Arc<Run>],
    meta: RunMeta,
    history: bool,
) -> (Run, Changes) {
    let vops = last_vertex_ops(&m.vertex_ops);
    let mut sink = Collect {
        space: meta.vertex_space,
        weighted: m.weighted,
        parts: Vec::new(),
        built: Vec::new(),
    };
    let changes = seal_directions(m, older, MIN_TASK_ENTRIES, history, &mut sink)
        .expect("collecting in DRAM cannot fail");
    let (out, inn) = sink.finish();
    (build::finish(meta, out, inn, vops), changes)
}

/// Seals straight into a run file: neighbor ids are written wave by wave and each block's
/// buffers are freed as soon as it is sealed, so sealing needs little DRAM of its own. The
/// file is written in full but not persisted.
pub(super) fn seal_to_file(
    m: Memtable,
    older: &[Arc<Run>],
    meta: RunMeta,
    medium: &Arc<dyn Medium>,
    history: bool,
) -> Result<(Run, Unpersisted, Changes)> {
    let vops = last_vertex_ops(&m.vertex_ops);
    let mut sink = ToFile {
        w: RunWriter::create(medium, meta.id, meta.compression)?,
        space: meta.vertex_space,
        ix: IndexBuilder::new(meta.vertex_space),
        built: Vec::new(),
    };
    let changes = seal_directions(m, older, MIN_TASK_ENTRIES, history, &mut sink)?;
    let (out, inn) = finish_dirs(sink.built);
    let (run, file) = sink
        .w
        .finish_unpersisted(&meta, &out, inn.as_ref(), &vops)?;
    Ok((run, file, changes))
}

/// Where a seal's output goes, direction by direction: the out direction's parts, its
/// end, then (directed stores only) the in direction's parts and its end.
trait Sink: Send {
    /// Takes one wave's parts of the direction being sealed, in vertex order.
    fn parts(&mut self, parts: Vec<DirPart>) -> Result<()>;
    /// The direction being sealed is complete.
    fn end(&mut self) -> Result<()>;
}

/// Assembles each direction in DRAM.
struct Collect {
    space: u64,
    weighted: bool,
    parts: Vec<DirPart>,
    built: Vec<DirData>,
}

impl Sink for Collect {
    fn parts(&mut self, parts: Vec<DirPart>) -> Result<()> {
        self.parts.extend(parts);
        Ok(())
    }

    fn end(&mut self) -> Result<()> {
        let parts = std::mem::take(&mut self.parts);
        self.built
            .push(build::assemble(parts, self.space, self.weighted));
        Ok(())
    }
}

impl Collect {
    fn finish(self) -> (DirData, Option<DirData>) {
        finish_dirs(self.built)
    }
}

/// Streams each direction's neighbor ids to a run file, keeping its index.
struct ToFile {
    w: RunWriter,
    space: u64,
    ix: IndexBuilder,
    built: Vec<DirData>,
}

impl Sink for ToFile {
    fn parts(&mut self, parts: Vec<DirPart>) -> Result<()> {
        self.w.put_parts(&parts)?;
        parts.iter().for_each(|p| self.ix.add(p));
        Ok(())
    }

    fn end(&mut self) -> Result<()> {
        self.w.end_direction()?;
        let ix = std::mem::replace(&mut self.ix, IndexBuilder::new(self.space));
        self.built.push(ix.finish(Vec::new()));
        Ok(())
    }
}

/// The out direction and, when there are two, the in direction.
fn finish_dirs(mut built: Vec<DirData>) -> (DirData, Option<DirData>) {
    assert!(matches!(built.len(), 1 | 2), "one or two directions sealed");
    let inn = (built.len() == 2).then(|| built.pop()).flatten();
    (built.pop().expect("out direction"), inn)
}

/// Seals every direction of `m` into `sink`: the out direction from the buffered updates,
/// and a directed store's in direction transposed from the out direction's parts as they
/// come (see [`super::transpose`]).
fn seal_directions(
    m: Memtable,
    older: &[Arc<Run>],
    min_task: usize,
    history: bool,
    sink: &mut impl Sink,
) -> Result<Changes> {
    let weighted = m.weighted;
    let updates = Source::Updates {
        older,
        history: history.then_some(m.undirected),
        loops: match m.undirected {
            true => build::Loops::Count,
            false => build::Loops::Skip,
        },
    };
    if m.undirected {
        let changes = seal_dir(m.out, updates, weighted, min_task, |p| sink.parts(p))?;
        sink.end()?;
        return Ok(changes);
    }
    let mut inn = Transposer::new(&m.out, weighted);
    let changes = seal_dir(m.out, updates, weighted, min_task, |p| {
        inn.add(&p);
        sink.parts(p)
    })?;
    sink.end()?;
    let logs = inn.into_logs();
    seal_dir(logs, Source::Transposed, weighted, min_task, |p| {
        sink.parts(p)
    })?;
    sink.end()?;
    Ok(changes)
}

/// What a block log holds, and so how its lists are sealed.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// Updates in arrival order keyed by source, to be resolved against the older runs'
    /// out direction; with `history` (whether the store is undirected), their effective
    /// changes emitted too.
    Updates {
        older: &'a [Arc<Run>],
        history: Option<bool>,
        /// Whether the parts count self loops (undirected stores).
        loops: build::Loops,
    },
    /// A sealed out direction transposed: each list final, sources ascending.
    Transposed,
}

/// Seals `blocks` wave by wave, handing each wave's parts (in vertex order) to `sink`.
/// A wave's parts are handed over while the next wave seals, so the writes they cause
/// overlap the sorting instead of leaving the workers idle. Returns the effective changes
/// the source asked for, in vertex order.
fn seal_dir<S>(
    blocks: Vec<BlockLog>,
    src: Source<'_>,
    weighted: bool,
    min_task: usize,
    mut sink: S,
) -> Result<Changes>
where
    S: FnMut(Vec<DirPart>) -> Result<()> + Send,
{
    if let Source::Updates { older, .. } = src {
        debug_assert!(
            older.iter().all(|r| r.is_verified()),
            "resolving against unverified runs"
        );
    }
    let mut it = blocks.into_iter().enumerate();
    let mut ready: Option<Vec<DirPart>> = None;
    // Each task's changes, concatenated once at the end: copying them wave by wave into
    // one growing vector cost a bulk load's history two more copies and their page faults.
    let mut changes: Vec<Changes> = Vec::new();
    loop {
        let wave: Vec<(usize, BlockLog)> = it.by_ref().take(WAVE).collect();
        if wave.is_empty() {
            ready.map_or(Ok(()), sink)?;
            return Ok(Changes::join(changes));
        }
        let handed = ready.take();
        let ((parts, emitted), res) = rayon::join(
            || seal_wave(wave, src, weighted, min_task),
            || handed.map_or(Ok(()), &mut sink),
        );
        res?;
        changes.extend(emitted);
        ready = Some(parts);
    }
}

/// Seals one wave of blocks into parts, in vertex order, with the changes each task
/// emitted.
fn seal_wave(
    wave: Vec<(usize, BlockLog)>,
    src: Source<'_>,
    weighted: bool,
    min_task: usize,
) -> (Vec<DirPart>, Vec<Changes>) {
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
    let done: Vec<(DirPart, Changes)> = tasks
        .into_par_iter()
        .map(|(b, g, lvs)| match src {
            Source::Updates {
                older,
                history,
                loops,
            } => seal_range(b, g, lvs, older, (weighted, loops), history),
            Source::Transposed => (take_transposed(b, g, lvs, weighted), Changes::default()),
        })
        .collect();
    done.into_iter().unzip()
}

/// Takes local vertices `lvs` of block `b` of a transposed direction: each list is final,
/// and only its tombstones need to be split from its neighbors.
fn take_transposed(b: usize, grouped: &Grouped, lvs: Range<usize>, weighted: bool) -> DirPart {
    let mut part = DirPart::default();
    let (mut adds, mut addw, mut tombs) = (Vec::new(), Vec::new(), Vec::new());
    let first = (b * BLOCK) as VertexId;
    for lv in lvs {
        let xs = grouped.entries(lv);
        if xs.is_empty() {
            continue;
        }
        let v = first + lv as VertexId;
        let ws = if weighted {
            grouped.weights(lv)
        } else {
            &[][..]
        };
        if !xs.iter().any(|&x| is_del(x)) {
            debug_assert!(xs.windows(2).all(|p| p[0] < p[1]), "in-list of {v} sorted");
            part.adds.extend_from_slice(xs);
            part.wts.extend_from_slice(ws);
            part.close(v, xs.len(), &[]);
            continue;
        }
        adds.clear();
        addw.clear();
        tombs.clear();
        for (i, &x) in xs.iter().enumerate() {
            if is_del(x) {
                tombs.push(id_of(x));
            } else {
                adds.push(x);
                if weighted {
                    addw.push(ws[i]);
                }
            }
        }
        debug_assert!(
            adds.windows(2).all(|p| p[0] < p[1]),
            "in-list of {v} sorted"
        );
        debug_assert!(
            tombs.windows(2).all(|p| p[0] < p[1]),
            "in-tombs of {v} sorted"
        );
        if weighted {
            part.push_weighted(v, &adds, &addw, &tombs);
        } else {
            part.push(v, &adds, &tombs);
        }
    }
    part
}

/// Emits the history of one vertex's updates `u` into `changes` and its lists into `part`:
/// for a `fresh` vertex (no older run holds it, inserts only, unweighted) from the one sort
/// both need, else from one lookup of each neighbor's older state.
fn emit_history(
    u: &history::Updates<'_>,
    prior: &[(&DirData, usize)],
    fresh: bool,
    undirected: bool,
    (scratch, res): (&mut history::Scratch, &mut history::Resolved),
    (part, changes): (&mut DirPart, &mut Changes),
) {
    if fresh {
        let n = history::emit_inserts(u, undirected, scratch, &mut part.adds, changes);
        part.close(u.v, n, &[]);
        return;
    }
    history::emit(u, prior, undirected, scratch, (changes, res));
    match u.weights.is_empty() {
        true => part.push(u.v, &res.adds, &res.tombs),
        false => part.push_weighted(u.v, &res.adds, &res.addw, &res.tombs),
    }
}

/// Seals local vertices `lvs` of block `b` (out direction: keyed by source), emitting
/// their effective changes with `history` (whether the store is undirected).
fn seal_range(
    b: usize,
    grouped: &Grouped,
    lvs: Range<usize>,
    older: &[Arc<Run>],
    (weighted, loops): (bool, build::Loops),
    history: Option<bool>,
) -> (DirPart, Changes) {
    let mut part = DirPart::new(loops);
    // One change per update at most but for weight changes: sized once, not doubled.
    let expect = match history {
        Some(_) => lvs.clone().map(|lv| grouped.entries(lv).len()).sum(),
        None => 0,
    };
    let mut changes = Changes::with_capacity(expect, weighted);
    let mut hist_scratch = history::Scratch::default();
    let mut resolved = history::Resolved::default();
    let mut scratch = Resolve::default();
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
        .map(|r| r.dir(Dir::Out))
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
        let fresh = !weighted && prior.is_empty() && updates.iter().all(|&x| !is_del(x));
        if let Some(undirected) = history {
            let u = history::Updates {
                v,
                entries: updates,
                commits: grouped.commits(lv),
                weights: if weighted { grouped.weights(lv) } else { &[] },
            };
            let out = (&mut part, &mut changes);
            let scratch = (&mut hist_scratch, &mut resolved);
            emit_history(&u, &prior, fresh, undirected, scratch, out);
            continue;
        }
        // Common case, inserts of a vertex no older run holds (unweighted): sort and dedup
        // in place in the output, with no intermediate copy.
        if fresh {
            let start = part.adds.len();
            part.adds.extend_from_slice(updates);
            let tail = &mut part.adds[start..];
            tail.sort_unstable();
            let n = crate::types::dedup_sorted(tail);
            part.adds.truncate(start + n);
            part.close(v, n, &[]);
            continue;
        }
        let raww = if weighted {
            grouped.weights(lv)
        } else {
            &[][..]
        };
        scratch.vertex(&prior, updates, raww, weighted);
        if weighted {
            part.push_weighted(v, &scratch.adds, &scratch.addw, &scratch.tombs);
        } else {
            part.push(v, &scratch.adds, &scratch.tombs);
        }
    }
    (part, changes)
}

/// Resolves one vertex's buffered updates against its older state: scratch space reused
/// from vertex to vertex, and the resolved adds (with weights) and tombstones.
#[derive(Default)]
struct Resolve {
    raw: Vec<VertexId>,
    keyed: Vec<(VertexId, u32)>,
    adds: Vec<VertexId>,
    addw: Vec<f64>,
    tombs: Vec<VertexId>,
}

impl Resolve {
    /// Resolves `updates` (with weights `raww` in a weighted store) of a vertex whose
    /// older lists are `prior` (newest run first).
    fn vertex(
        &mut self,
        prior: &[(&DirData, usize)],
        updates: &[VertexId],
        raww: &[f64],
        weighted: bool,
    ) {
        self.raw.clear();
        self.raw.extend_from_slice(updates);
        self.adds.clear();
        self.addw.clear();
        self.tombs.clear();
        // Whether x was an edge before this memtable: the newest run that mentions it
        // decides (an add there means yes, even beside a tombstone: a weight update).
        let existed = |x: VertexId| {
            for &(dd, i) in prior {
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
        if !weighted && self.raw.iter().all(|&x| !is_del(x)) {
            self.raw.sort_unstable();
            self.raw.dedup();
            (self.adds).extend(self.raw.iter().copied().filter(|&x| !existed(x)));
            return;
        }
        // Last update per neighbor wins: sort by (neighbor, arrival << 1 | delete).
        self.keyed.clear();
        self.keyed.extend(
            (self.raw.iter().enumerate())
                .map(|(i, &x)| (id_of(x), (i as u32) << 1 | is_del(x) as u32)),
        );
        self.keyed.sort_unstable();
        for g in self.keyed.chunk_by(|a, b| a.0 == b.0) {
            let (x, last) = g[g.len() - 1];
            let w = if weighted {
                raww[(last >> 1) as usize]
            } else {
                0.0
            };
            match (last & 1 == 1, existed(x)) {
                (false, false) => {
                    self.adds.push(x);
                    self.addw.push(w);
                }
                (true, true) => self.tombs.push(x),
                // A re-insert: in weighted stores it replaces the weight (tombstone the
                // old edge, add it anew); otherwise a no-op.
                (false, true) if weighted => {
                    self.tombs.push(x);
                    self.adds.push(x);
                    self.addw.push(w);
                }
                _ => {}
            }
        }
    }
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
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::collections::{BTreeMap, BTreeSet};

    fn random_edges(seed: u64, n: usize, space: u64, del_every: u64) -> Vec<[VertexId; 2]> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut next = |m: u64| rng.random_range(0..m);
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

    /// Collects each direction's parts, concatenated: the out direction's until the first
    /// end, the in direction's until the second.
    #[derive(Default)]
    struct Parts {
        out: DirPart,
        inn: DirPart,
        ended: usize,
    }

    impl Sink for Parts {
        fn parts(&mut self, parts: Vec<DirPart>) -> Result<()> {
            let all = match self.ended {
                0 => &mut self.out,
                1 => &mut self.inn,
                n => panic!("parts after {n} directions ended"),
            };
            parts.into_iter().for_each(|p| all.append(p));
            Ok(())
        }

        fn end(&mut self) -> Result<()> {
            self.ended += 1;
            Ok(())
        }
    }

    /// The parts of a seal with at least `min_task` entries per task, concatenated.
    fn sealed(m: Memtable, older: &[Arc<Run>], min_task: usize) -> Parts {
        let mut sink = Parts::default();
        seal_directions(m, older, min_task, false, &mut sink).unwrap();
        assert_eq!(sink.ended, 2, "a directed seal ends two directions");
        sink
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
            let whole = sealed(memtable(&edges, weighted, space), &older, usize::MAX);
            for min_task in [1, 5, 1000] {
                let cut = sealed(memtable(&edges, weighted, space), &older, min_task);
                assert!(
                    whole.out == cut.out,
                    "weighted {weighted}, tasks of {min_task}"
                );
                assert!(
                    whole.inn == cut.inn,
                    "weighted {weighted}, tasks of {min_task}"
                );
            }
            assert!(!whole.out.is_empty() && !whole.inn.is_empty());
        }
    }

    /// Per vertex: neighbors with weight bits, and tombstones.
    type Lists = BTreeMap<VertexId, (Vec<(VertexId, u64)>, Vec<VertexId>)>;

    fn lists(p: &DirPart) -> Lists {
        p.vertices()
            .map(|(v, adds, wts, tombs)| {
                let w = |i: usize| wts.get(i).map_or(0, |w| w.to_bits());
                let a = adds.iter().enumerate().map(|(i, &x)| (x, w(i))).collect();
                (v, (a, tombs.to_vec()))
            })
            .collect()
    }

    /// What a seal must produce, from the edge sets before and after the updates, written
    /// out edge by edge: adds for edges that appear (and, weighted, for re-inserts, which
    /// replace the weight), tombstones for edges that go (and for re-inserts, weighted).
    fn model(base: &[[VertexId; 2]], updates: &[[VertexId; 2]], weighted: bool) -> (Lists, Lists) {
        let wt = |i: usize| {
            if weighted {
                ((i % 7) as f64).to_bits()
            } else {
                0
            }
        };
        let before: BTreeSet<(VertexId, VertexId)> = base.iter().map(|&[s, d]| (s, d)).collect();
        let mut last: BTreeMap<(VertexId, VertexId), Option<u64>> = BTreeMap::new();
        for (i, &[s, d]) in updates.iter().enumerate() {
            last.insert((s, id_of(d)), (!is_del(d)).then(|| wt(i)));
        }
        let (mut out, mut inn) = (Lists::new(), Lists::new());
        for ((s, d), now) in last {
            let was = before.contains(&(s, d));
            let (add, tomb) = match (now, was) {
                (Some(w), false) => (Some(w), false),
                (Some(w), true) if weighted => (Some(w), true),
                (None, true) => (None, true),
                _ => (None, false),
            };
            if let Some(w) = add {
                out.entry(s).or_default().0.push((d, w));
                inn.entry(d).or_default().0.push((s, w));
            }
            if tomb {
                out.entry(s).or_default().1.push(d);
                inn.entry(d).or_default().1.push(s);
            }
        }
        for l in inn.values_mut() {
            l.0.sort_unstable();
            l.1.sort_unstable();
        }
        (out, inn)
    }

    /// Both directions of a seal over an older run hold exactly the model's adds and
    /// tombstones: the out direction resolved, the in direction its transpose.
    #[test]
    fn seal_matches_the_edge_set_model_in_both_directions() {
        let space = (2 * BLOCK + 100) as VertexId;
        for weighted in [false, true] {
            for del_every in [0, 3] {
                let base_edges = random_edges(7, 40_000, space as u64, 0);
                let base = memtable(&base_edges, weighted, space);
                let older = vec![Arc::new(base.seal(&[], 1))];
                let edges = random_edges(11, 30_000, space as u64, del_every);
                let got = sealed(memtable(&edges, weighted, space), &older, 5);
                let (out, inn) = model(&base_edges, &edges, weighted);
                let tag = format!("weighted {weighted}, deletes 1/{del_every}");
                assert!(lists(&got.out) == out, "out direction, {tag}");
                assert!(lists(&got.inn) == inn, "in direction, {tag}");
                assert!(!inn.is_empty());
                let tombs = inn.values().any(|l| !l.1.is_empty());
                assert_eq!(tombs, del_every > 0 || weighted, "{tag}");
            }
        }
    }

    /// A directed memtable's in-updates, gathered from the destination index (built from
    /// the logs keyed by source, then kept up by later applies), are each source's updates
    /// of the vertex in arrival order, and the seal does not depend on whether the index
    /// exists.
    #[test]
    fn in_updates_are_gathered_from_a_destination_index() {
        let space = (2 * BLOCK + 100) as VertexId;
        let edges = random_edges(5, 20_000, space as u64, 3);
        let (first, later) = edges.split_at(12_000);
        let gathered = |m: &Memtable, x: VertexId, upto: usize| {
            let mut got = Vec::new();
            m.gather(Dir::In, x, &mut got);
            let mut want: Vec<VertexId> = edges[..upto]
                .iter()
                .filter(|e| id_of(e[1]) == x)
                .map(|e| e[0] | (e[1] & DEL))
                .collect();
            // Sources come block by block: order holds per source, not across them.
            got.sort_by_key(|&y| id_of(y));
            want.sort_by_key(|&y| id_of(y));
            assert_eq!(got, want, "vertex {x}");
        };
        let mut m = memtable(first, false, space);
        // Destinations of early, late and later-only updates, and one no update names.
        let mut probes: Vec<VertexId> = [0, 1, 11_999, 15_000, 19_999]
            .iter()
            .map(|&i| id_of(edges[i][1]))
            .collect();
        probes.push(
            (0..space)
                .find(|x| edges.iter().all(|e| id_of(e[1]) != *x))
                .unwrap(),
        );
        let plain = m.bytes();
        m.index_destinations();
        assert!(m.bytes() > plain, "the index is charged to the memtable");
        probes.iter().for_each(|&x| gathered(&m, x, first.len()));
        m.apply_edges(later, &[]);
        probes.iter().for_each(|&x| gathered(&m, x, edges.len()));
        let indexed = sealed(m, &[], 5);
        let plain = sealed(memtable(&edges, false, space), &[], 5);
        assert!(indexed.out == plain.out && indexed.inn == plain.inn);
    }
}
