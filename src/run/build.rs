//! Assembling a run from per-vertex output produced in parallel.
//!
//! Producers (memtable seal, merge) work on disjoint vertex ranges in parallel, each filling
//! a [`DirPart`] in vertex order. An [`IndexBuilder`] takes the parts in order and keeps the
//! index (vertex list, offsets, tombstones) while the neighbor ids go elsewhere: into one
//! DRAM array ([`assemble`]) or straight to a run file (a streaming merge). The index is
//! dense when the run touches a large share of the vertex space.

use super::format::{
    DirCounts, RunHeader, HAS_IN, IN_DENSE, OUT_DENSE, STAMPED, THIS_WIDTH, WEIGHTED,
};
use super::{DirData, Run, Sec};
use crate::stamp::Stamp;
use crate::types::VertexId;
use rayon::prelude::*;

/// Whether a part counts the self loops it records: an undirected store's edge count needs
/// them (a loop is one adjacency entry, every other edge two), a directed store's does not,
/// and the search per vertex cost a Kron22 ingest at a 64 MiB budget 4 % more CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loops {
    /// Counted: the run's header records them.
    Count,
    /// Not counted: the header says nothing of them.
    Skip,
}

/// Output for one vertex range of one direction, vertices ascending.
#[derive(Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
pub struct DirPart {
    vids: Vec<VertexId>,
    counts: Vec<u32>,
    /// Neighbor ids of the pushed vertices, concatenated.
    pub adds: Vec<VertexId>,
    /// Their weights (weighted runs only), parallel to `adds`.
    pub wts: Vec<f64>,
    tcounts: Vec<u32>,
    tombs: Vec<VertexId>,
    /// Neighbors recorded, in `adds` or wherever the caller placed them.
    listed: u64,
    /// Self loops recorded, added less tombstoned; `None` when not counted.
    loops: Option<i64>,
}

impl DirPart {
    /// An empty part that counts self loops or not (`default()` counts none).
    pub fn new(loops: Loops) -> Self {
        DirPart {
            loops: (loops == Loops::Count).then_some(0),
            ..Default::default()
        }
    }

    /// Records vertex `v`'s sorted neighbors and tombstones (skipped when both are empty).
    #[inline]
    pub fn push(&mut self, v: VertexId, adds: &[VertexId], tombs: &[VertexId]) {
        self.adds.extend_from_slice(adds);
        self.close(v, adds.len(), tombs);
    }

    /// Records vertex `v`'s sorted neighbors with their weights, and tombstones.
    #[inline]
    pub fn push_weighted(
        &mut self,
        v: VertexId,
        adds: &[VertexId],
        wts: &[f64],
        tombs: &[VertexId],
    ) {
        debug_assert_eq!(adds.len(), wts.len());
        self.wts.extend_from_slice(wts);
        self.push(v, adds, tombs);
    }

    /// Records vertex `v` whose `n` neighbors the caller already appended to `adds`. A
    /// part that counts loops must hold the neighbors in `adds`; one that does not may
    /// have had them placed anywhere.
    #[inline]
    pub fn close(&mut self, v: VertexId, n: usize, tombs: &[VertexId]) {
        if self.loops.is_some() {
            let added = &self.adds[self.adds.len() - n..];
            // Most lists hold no loop, and many lie wholly below or above their vertex.
            let has = |xs: &[VertexId]| match (xs.first(), xs.last()) {
                (Some(&lo), Some(&hi)) if lo <= v && v <= hi => {
                    i64::from(xs.binary_search(&v).is_ok())
                }
                _ => 0,
            };
            let looped = has(added) - has(tombs);
            self.loops = self.loops.map(|l| l + looped);
        }
        if n == 0 && tombs.is_empty() {
            return;
        }
        debug_assert!(self.vids.last().is_none_or(|&l| l < v));
        self.vids.push(v);
        self.counts.push(n as u32);
        self.listed += n as u64;
        self.tcounts.push(tombs.len() as u32);
        self.tombs.extend_from_slice(tombs);
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.vids.is_empty()
    }

    /// Appends `next`, whose vertices all come after this part's.
    #[cfg(test)]
    pub fn append(&mut self, next: DirPart) {
        debug_assert!(self.vids.last() < next.vids.first() || next.vids.is_empty());
        self.vids.extend(next.vids);
        self.counts.extend(next.counts);
        self.adds.extend(next.adds);
        self.wts.extend(next.wts);
        self.tcounts.extend(next.tcounts);
        self.tombs.extend(next.tombs);
        self.listed += next.listed;
        self.loops = self.loops.zip(next.loops).map(|(a, b)| a + b);
    }

    /// Each pushed vertex with its neighbors, their weights (empty when unweighted) and its
    /// tombstones, vertices ascending.
    pub fn vertices(
        &self,
    ) -> impl Iterator<Item = (VertexId, &[VertexId], &[f64], &[VertexId])> + '_ {
        let (mut at, mut tat) = (0usize, 0usize);
        (0..self.vids.len()).map(move |k| {
            let r = at..at + self.counts[k] as usize;
            let t = tat..tat + self.tcounts[k] as usize;
            at = r.end;
            tat = t.end;
            let w = if self.wts.is_empty() {
                &[][..]
            } else {
                &self.wts[r.clone()]
            };
            (self.vids[k], &self.adds[r], w, &self.tombs[t])
        })
    }

    /// Entries held: neighbors and tombstones.
    pub fn entries(&self) -> usize {
        self.adds.len() + self.tombs.len()
    }

    /// Each pushed vertex's neighbors and their weights (empty when unweighted), in order.
    pub fn lists(&self) -> impl Iterator<Item = (&[VertexId], &[f64])> {
        let mut at = 0usize;
        self.counts.iter().map(move |&c| {
            let r = at..at + c as usize;
            at = r.end;
            let w = if self.wts.is_empty() {
                &[][..]
            } else {
                &self.wts[r.clone()]
            };
            (&self.adds[r], w)
        })
    }
}

/// The index of one direction, built from parts in vertex order.
pub struct IndexBuilder {
    space: u64,
    /// Whether a listed index may turn dense (one slot per vertex of `0..space`); never for
    /// a partition's run, whose vertices start far above 0.
    may_densify: bool,
    tombs: Vec<VertexId>,
    n_adds: u64,
    /// Self loops of the parts taken, added less tombstoned; `None` once a part that
    /// holds vertices did not count them.
    loops: Option<i64>,
    shape: Shape,
}

enum Shape {
    /// The listed vertices and their counts; dense or sparse is decided at the end.
    Listed {
        vids: Vec<VertexId>,
        counts: Vec<u32>,
        tcounts: Vec<u32>,
    },
    /// Offsets filled in as parts arrive: 8 B per vertex of the space (16 B with
    /// tombstones) and nothing else per vertex, where listing would also keep an id and a
    /// count per vertex until the end (a merge into the base holds this for the whole
    /// graph, both directions, so it sets the merge's DRAM).
    Dense {
        offs: Vec<u64>,
        /// Empty until the first tombstone.
        toffs: Vec<u64>,
        /// Vertices below this have their offsets filled.
        next: usize,
        tombs_so_far: u64,
    },
}

impl IndexBuilder {
    /// A builder for vertex ids below `space`.
    pub fn new(space: u64) -> Self {
        IndexBuilder {
            space,
            may_densify: true,
            tombs: Vec::new(),
            n_adds: 0,
            loops: Some(0),
            shape: Shape::Listed {
                vids: Vec::new(),
                counts: Vec::new(),
                tcounts: Vec::new(),
            },
        }
    }

    /// A builder whose index stays sparse (a partition's run).
    pub fn sparse(space: u64) -> Self {
        IndexBuilder {
            may_densify: false,
            ..Self::new(space)
        }
    }

    /// A builder whose index is dense whatever the run holds: the base run is, so that a
    /// compacted store reads as a plain CSR.
    pub fn dense(space: u64) -> Self {
        IndexBuilder {
            shape: Shape::Dense {
                offs: vec![0u64; space as usize + 1],
                toffs: Vec::new(),
                next: 0,
                tombs_so_far: 0,
            },
            ..Self::new(space)
        }
    }

    /// Takes a part's index (its neighbor ids are the caller's to place).
    pub fn add(&mut self, p: &DirPart) {
        self.tombs.extend_from_slice(&p.tombs);
        if !p.is_empty() {
            self.loops = self.loops.zip(p.loops).map(|(a, b)| a + b);
        }
        match &mut self.shape {
            Shape::Listed {
                vids,
                counts,
                tcounts,
            } => {
                vids.extend_from_slice(&p.vids);
                counts.extend_from_slice(&p.counts);
                tcounts.extend_from_slice(&p.tcounts);
                self.n_adds += p.listed;
            }
            Shape::Dense {
                offs,
                toffs,
                next,
                tombs_so_far,
            } => {
                let mut a = self.n_adds;
                for k in 0..p.vids.len() {
                    let slot = p.vids[k] as usize;
                    assert!(slot >= *next, "parts come in vertex order");
                    // Vertices between the previous listed one and this one hold nothing.
                    offs[*next + 1..=slot].fill(a);
                    if p.tcounts[k] > 0 && toffs.is_empty() {
                        *toffs = vec![0u64; offs.len()];
                    }
                    if !toffs.is_empty() {
                        toffs[*next + 1..=slot].fill(*tombs_so_far);
                        *tombs_so_far += p.tcounts[k] as u64;
                        toffs[slot + 1] = *tombs_so_far;
                    }
                    a += p.counts[k] as u64;
                    offs[slot + 1] = a;
                    *next = slot + 1;
                }
                debug_assert_eq!(a - self.n_adds, p.listed);
                self.n_adds = a;
            }
        }
    }

    /// The finished index; `adds` is the neighbor array (empty when streamed to a file).
    pub fn finish(self, adds: Vec<VertexId>) -> DirData {
        self.finish_with(Sec::owned(adds))
    }

    /// [`IndexBuilder::finish`] with the neighbor array in any section.
    pub(crate) fn finish_with(self, adds: Sec<VertexId>) -> DirData {
        let (dense, vids, offs, toffs) = match self.shape {
            Shape::Dense {
                mut offs,
                mut toffs,
                next,
                tombs_so_far,
            } => {
                offs[next + 1..].fill(self.n_adds);
                if !toffs.is_empty() {
                    toffs[next + 1..].fill(tombs_so_far);
                }
                (true, Vec::new(), offs, toffs)
            }
            Shape::Listed {
                vids,
                counts,
                tcounts,
            } => {
                let dense = self.may_densify && vids.len() as u64 * 4 >= self.space;
                let (offs, toffs) = listed_offsets(
                    &vids,
                    &counts,
                    &tcounts,
                    dense,
                    self.space,
                    self.tombs.len(),
                );
                debug_assert_eq!(offs.last().copied().unwrap_or(0), self.n_adds);
                (dense, if dense { Vec::new() } else { vids }, offs, toffs)
            }
        };
        DirData {
            dense,
            vids: Sec::owned(vids),
            offs: Sec::owned(offs),
            adds,
            wts: Sec::owned(Vec::new()),
            toffs: Sec::owned(toffs),
            tombs: Sec::owned(self.tombs),
            n_adds: self.n_adds,
            loops: self.loops,
            packed: None,
            directory: Default::default(),
        }
    }
}

/// Offsets (and tombstone offsets, when there are tombstones) of listed vertices: dense
/// (one slot per vertex of the space) or one slot per listed vertex. Dense costs 8 bytes
/// per vertex of the space, sparse 12 per listed vertex plus a binary search per lookup:
/// callers go dense once a quarter of the space is listed.
fn listed_offsets(
    vids: &[VertexId],
    counts: &[u32],
    tcounts: &[u32],
    dense: bool,
    space: u64,
    n_tombs: usize,
) -> (Vec<u64>, Vec<u64>) {
    let n_vids = vids.len();
    let n_index = if dense { space as usize } else { n_vids };
    let mut offs = vec![0u64; n_index + 1];
    let mut toffs = if n_tombs > 0 {
        vec![0u64; n_index + 1]
    } else {
        Vec::new()
    };
    let (mut a, mut t) = (0u64, 0u64);
    let mut i = 0usize;
    for k in 0..n_vids {
        let slot = if dense { vids[k] as usize } else { k };
        // Vertices between the previous listed one and this one hold nothing.
        while i < slot {
            offs[i + 1] = a;
            if n_tombs > 0 {
                toffs[i + 1] = t;
            }
            i += 1;
        }
        a += counts[k] as u64;
        t += tcounts[k] as u64;
        offs[slot + 1] = a;
        if n_tombs > 0 {
            toffs[slot + 1] = t;
        }
        i = slot + 1;
    }
    while i < n_index {
        offs[i + 1] = a;
        if n_tombs > 0 {
            toffs[i + 1] = t;
        }
        i += 1;
    }
    (offs, toffs)
}

/// Concatenates `parts` (in vertex order, disjoint ranges) into one in-DRAM direction.
pub fn assemble(parts: Vec<DirPart>, vertex_space: u64, weighted: bool) -> DirData {
    let mut ix = IndexBuilder::new(vertex_space);
    for p in &parts {
        ix.add(p);
    }
    let adds = concat(&parts, |p| &p.adds, ix.n_adds as usize);
    let wts = if weighted {
        concat(&parts, |p| &p.wts, ix.n_adds as usize)
    } else {
        Vec::new()
    };
    let mut d = ix.finish(adds);
    d.wts = Sec::owned(wts);
    d
}

/// One in-DRAM direction from `parts` (in vertex order, disjoint ranges) whose neighbors
/// their maker placed, in order, in `adds` (unweighted).
pub(crate) fn assemble_placed(parts: Vec<DirPart>, adds: Sec<VertexId>, space: u64) -> DirData {
    let mut ix = IndexBuilder::new(space);
    for p in &parts {
        debug_assert!(p.adds.is_empty(), "a placed part holds no neighbors itself");
        ix.add(p);
    }
    assert_eq!(
        ix.n_adds,
        adds.get().len() as u64,
        "the parts list every neighbor placed"
    );
    ix.finish_with(adds)
}

fn concat<T: Copy + Default + Send + Sync>(
    parts: &[DirPart],
    field: impl Fn(&DirPart) -> &Vec<T>,
    n: usize,
) -> Vec<T> {
    let mut out = vec![T::default(); n];
    let mut rest = out.as_mut_slice();
    let mut jobs = Vec::with_capacity(parts.len());
    for p in parts {
        let src = field(p);
        let (head, tail) = rest.split_at_mut(src.len());
        jobs.push((head, src));
        rest = tail;
    }
    jobs.into_par_iter()
        .with_min_len(4)
        .for_each(|(dst, src)| dst.copy_from_slice(src));
    out
}

/// Everything but the adjacency that a new run's header needs.
pub struct RunMeta {
    /// Unique run id.
    pub id: u64,
    /// Compaction level.
    pub level: u64,
    /// First LSN covered.
    pub min_lsn: u64,
    /// LSN after the last one covered.
    pub max_lsn: u64,
    /// Vertex ids are below this.
    pub vertex_space: u64,
    /// Whether neighbors carry weights.
    pub weighted: bool,
    /// Partition shift: 0 for a run of any vertices, else the run holds the partition
    /// ending at `vertex_space` (see [`super::format::RunHeader::span`]).
    pub part_shift: u32,
    /// How a run file stores the lists (DRAM runs are always plain).
    pub compression: crate::run::Compression,
    /// The store and commit a run file is written for (DRAM runs get theirs when written).
    pub stamp: Stamp,
    /// The time of the newest commit the run holds records of (Unix nanoseconds), if known.
    pub last_time: Option<i64>,
}

/// The header of a run with these directions and vertex states.
pub fn header(
    meta: &RunMeta,
    out: &DirData,
    inn: Option<&DirData>,
    n_vertex_ops: u64,
) -> RunHeader {
    let counts = |d: &DirData| DirCounts {
        n_index: d.n_index() as u64,
        n_adds: d.n_adds(),
        n_tombs: d.n_tombs(),
    };
    let mut flags = THIS_WIDTH | STAMPED | if meta.weighted { WEIGHTED } else { 0 };
    flags |= (meta.part_shift as u64) << super::format::PART_SHIFT_AT;
    if meta.last_time.is_some() {
        flags |= super::format::TIMED;
    }
    if out.loops.is_some() {
        flags |= super::format::LOOPS;
    }
    if out.dense {
        flags |= OUT_DENSE;
    }
    if let Some(i) = inn {
        flags |= HAS_IN;
        if i.dense {
            flags |= IN_DENSE;
        }
    }
    let mut h = RunHeader {
        flags,
        id: meta.id,
        level: meta.level,
        min_lsn: meta.min_lsn,
        max_lsn: meta.max_lsn,
        vertex_space: meta.vertex_space,
        n_vertex_ops,
        dirs: [counts(out), inn.map(counts).unwrap_or_default()],
        stamp: Some(meta.stamp),
        last_time: meta.last_time,
        loops: out.loops,
        ..Default::default()
    };
    h.lay_out();
    h
}

/// Builds an in-DRAM run from assembled directions and vertex states.
pub fn finish(meta: RunMeta, out: DirData, inn: Option<DirData>, vertex_ops: Vec<VertexId>) -> Run {
    let header = header(&meta, &out, inn.as_ref(), vertex_ops.len() as u64);
    Run {
        header,
        out,
        inn,
        vertex_ops: Sec::owned(vertex_ops),
        file: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Compression, Verify};

    fn parts() -> Vec<DirPart> {
        let mut a = DirPart::default();
        a.push(1, &[2, 3], &[]);
        a.push(4, &[], &[9]);
        let mut b = DirPart::default();
        b.push(6, &[0], &[1, 5]);
        vec![a, DirPart::default(), b]
    }

    #[test]
    fn a_run_file_is_never_written_twice() {
        use crate::medium::{memory::MemoryMedium, Medium};
        let meta = RunMeta {
            id: 7,
            level: 0,
            min_lsn: 0,
            max_lsn: 3,
            vertex_space: 8,
            weighted: false,
            part_shift: 0,
            compression: Compression::None,
            stamp: crate::stamp::Stamp::new(1, 1),
            last_time: None,
        };
        let run = finish(meta, assemble(parts(), 8, false), None, Vec::new());
        let medium: std::sync::Arc<dyn Medium> = std::sync::Arc::new(MemoryMedium::new());
        let first = crate::run::file::write(
            &run,
            &medium,
            Compression::None,
            crate::stamp::Stamp::new(1, 1),
        )
        .unwrap();
        let e = crate::run::file::write(
            &run,
            &medium,
            Compression::None,
            crate::stamp::Stamp::new(1, 1),
        )
        .err()
        .expect("a second write of run 7 was allowed");
        assert!(e.to_string().contains("already exists"), "{e}");
        // The first file is whole: the refused write did not cut it.
        let back = crate::run::file::open(&medium, &Run::file_name(7), Verify::AtOpen).unwrap();
        assert_eq!(back.header.file_len, first.header.file_len);
    }

    #[test]
    fn ids_at_the_top_of_the_width_survive_a_run_file() {
        use crate::medium::{memory::MemoryMedium, Medium};
        let top = crate::types::MAX_VERTICES as VertexId - 1;
        let mut p = DirPart::default();
        p.push(3, &[top], &[]);
        p.push(top, &[0, 3, top - 1], &[7]);
        let space = top as u64 + 1;
        let out = assemble(vec![p], space, false);
        assert!(!out.dense);
        let meta = RunMeta {
            id: 1,
            level: 0,
            min_lsn: 0,
            max_lsn: 5,
            vertex_space: space,
            weighted: false,
            part_shift: 0,
            compression: Compression::None,
            stamp: crate::stamp::Stamp::new(1, 1),
            last_time: None,
        };
        let run = finish(meta, out, None, vec![top | crate::batch::DEL]);
        for c in [Compression::None, Compression::Packed] {
            let medium: std::sync::Arc<dyn Medium> = std::sync::Arc::new(MemoryMedium::new());
            let written =
                crate::run::file::write(&run, &medium, c, crate::stamp::Stamp::new(1, 1)).unwrap();
            assert_eq!(written.header.is_packed(), c == Compression::Packed);
            // Read back from the medium, checked as a reader of another process would.
            let back = crate::run::file::open(&medium, &Run::file_name(1), Verify::AtOpen).unwrap();
            let d = &back.out;
            let mut buf = Vec::new();
            let i = |v| d.index_of(v).unwrap();
            assert_eq!(d.adds_into(i(3), &mut buf), &[top]);
            assert_eq!(d.adds_into(i(top), &mut buf), &[0, 3, top - 1]);
            assert_eq!(d.position_at(i(top), top - 1), Some(2));
            assert_eq!(d.position_at(i(top), 4), None);
            assert_eq!(back.out.tombs(top), &[7]);
            assert_eq!(back.vertex_ops.get(), &[top | crate::batch::DEL]);
            assert_eq!(
                back.header.flags & super::super::format::WIDE_IDS != 0,
                crate::types::ID_WIDTH == 64
            );
        }
    }

    /// A counting part counts each vertex's own entry, added or tombstoned, wherever it
    /// falls in its list; an index over parts keeps the sum only while every part that
    /// holds vertices counted.
    #[test]
    fn loops_are_counted_where_asked_and_only_there() {
        let mut a = DirPart::new(Loops::Count);
        a.push(2, &[0, 2, 9], &[]);
        a.push(3, &[3], &[]);
        a.push(4, &[1], &[4]);
        a.push(5, &[6], &[1]);
        assert_eq!(a.loops, Some(1));
        let mut b = DirPart::new(Loops::Count);
        b.push(9, &[1, 2], &[9]);
        let mut ix = IndexBuilder::new(16);
        for p in [&a, &DirPart::new(Loops::Skip), &b] {
            ix.add(p);
        }
        assert_eq!(ix.finish(Vec::new()).loops, Some(0));
        let mut skip = DirPart::new(Loops::Skip);
        skip.push(12, &[12], &[]);
        assert_eq!(skip.loops, None);
        let mut ix = IndexBuilder::new(16);
        ix.add(&a);
        ix.add(&skip);
        assert_eq!(ix.finish(Vec::new()).loops, None);
    }

    #[test]
    fn sparse_and_dense_agree() {
        for space in [8u64, 1000] {
            let d = assemble(parts(), space, false);
            assert_eq!(d.dense, space == 8);
            assert_eq!(d.adds(1), &[2, 3]);
            assert_eq!(d.tombs(1), &[] as &[VertexId]);
            assert_eq!(d.tombs(4), &[9]);
            assert_eq!(d.adds(6), &[0]);
            assert_eq!(d.tombs(6), &[1, 5]);
            assert_eq!(d.adds(5), &[] as &[VertexId]);
            assert_eq!(d.adds(7), &[] as &[VertexId]);
            assert_eq!(d.n_adds(), 3);
            assert_eq!(d.n_tombs(), 3);
        }
    }

    #[test]
    fn seeking_forward_finds_what_index_of_finds() {
        // A sparse index of every third vertex, probed in increasing order with gaps of
        // every size, from every starting cursor a forward scan could leave.
        let mut p = DirPart::default();
        for v in (0..3000 as VertexId).step_by(3) {
            p.push(v, &[v + 1], &[]);
        }
        let d = assemble(vec![p], 1 << 20, false);
        assert!(!d.dense);
        for stride in [1usize, 2, 5, 64, 999] {
            let mut at = 0;
            for v in (0..3100 as VertexId).step_by(stride) {
                let (next, hit) = d.seek(at, v);
                assert_eq!(hit, d.index_of(v), "vertex {v}, stride {stride}");
                assert!(next >= at && next <= d.n_index());
                at = next;
            }
        }
    }

    #[test]
    fn a_dense_builder_fills_the_offsets_listing_would() {
        // Parts with gaps, tombstones first appearing late, and trailing empty vertices.
        let mut a = DirPart::default();
        a.push(0, &[5], &[]);
        a.push(3, &[1, 2], &[]);
        let mut b = DirPart::default();
        b.push(4, &[], &[7]);
        b.push(9, &[0, 1, 2], &[3, 4]);
        for space in [10u64, 40] {
            let mut listed = IndexBuilder::new(space);
            let mut dense = IndexBuilder::dense(space);
            for p in [&a, &DirPart::default(), &b] {
                listed.add(p);
                dense.add(p);
            }
            let (l, d) = (listed.finish(Vec::new()), dense.finish(Vec::new()));
            assert!(d.dense && l.dense == (space == 10));
            assert_eq!(d.n_adds(), l.n_adds());
            assert_eq!(d.n_tombs(), l.n_tombs());
            for v in 0..space as VertexId {
                assert_eq!(
                    d.index_of(v).map(|i| (d.offs.get()[i], d.toffs.get()[i])),
                    Some(match l.index_of(v) {
                        Some(i) => (l.offs.get()[i], l.toffs.get()[i]),
                        // Not listed: empty, at the offsets of the next listed vertex.
                        None => {
                            let i = l.vids.get().partition_point(|&x| x < v);
                            (l.offs.get()[i], l.toffs.get()[i])
                        }
                    }),
                    "vertex {v}, space {space}"
                );
            }
            assert_eq!(d.offs.get().len(), space as usize + 1);
            assert_eq!(*d.offs.get().last().unwrap(), 6);
            assert_eq!(*d.toffs.get().last().unwrap(), 3);
        }
    }
}
