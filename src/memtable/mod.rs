//! The memtable: DRAM buffers that absorb random updates (XPGraph's buffering, by vertex
//! block rather than by vertex).
//!
//! Updates are appended, unsorted and unresolved, to one log per block of vertices
//! ([`block_log::BlockLog`]) keyed by source (by either end in an undirected store). A
//! batch is applied in parallel, chunks of it scattered into the logs ([`apply`]). When
//! the memtable is frozen it is *sealed* ([`seal`]) into a run: per vertex, sorted, last
//! update wins, resolved against the runs before it. A directed store's in-direction is
//! not buffered at all: the seal transposes the sealed out-direction ([`transpose`]).
//!
//! DRAM: the memtable costs its entries (6 B each, 18 B weighted: one per directed update,
//! two per undirected one) and a few dozen bytes per block of 2^14 vertices, nothing per
//! vertex: a small budget holds as many updates at 2^24 vertices as at 2^10.

mod apply;
pub mod block_log;
pub mod history;
mod seal;
mod transpose;

#[cfg(test)]
mod history_tests;

use crate::run::{build::RunMeta, Run};
use crate::types::VertexId;
use block_log::{BlockLog, BLOCK, BLOCK_BITS};
use std::sync::Arc;

/// Unflushed updates of one LSN range.
pub struct Memtable {
    undirected: bool,
    weighted: bool,
    /// Edge updates keyed by source (and, undirected, by destination too), per block.
    out: Vec<BlockLog>,
    /// A directed store's edge updates keyed by destination: kept only once a vertex
    /// delete has asked for them (see [`Memtable::index_destinations`]), since only that
    /// reads them.
    inn: Option<Vec<BlockLog>>,
    vertex_ops: Vec<VertexId>,
    /// First LSN this memtable holds.
    pub min_lsn: u64,
    /// LSN after the last one applied.
    pub max_lsn: u64,
    /// Vertex ids applied are below this.
    pub vertex_space: VertexId,
    /// The commit time of the newest batch applied (Unix nanoseconds), if known.
    pub last_time: Option<i64>,
    /// In a memtable keeping history: its commits, and where each one's updates are.
    history: Option<history::Log>,
    bytes: usize,
}

impl Memtable {
    /// An empty memtable starting at `lsn`.
    pub fn new(undirected: bool, weighted: bool, lsn: u64, vertex_space: VertexId) -> Self {
        Memtable {
            undirected,
            weighted,
            out: Vec::new(),
            inn: None,
            vertex_ops: Vec::new(),
            min_lsn: lsn,
            max_lsn: lsn,
            vertex_space,
            last_time: None,
            history: None,
            bytes: 0,
        }
    }

    /// The same memtable keeping history (see [`history`]) when `keep` says so; call it
    /// before anything is applied.
    pub fn keeping_history(mut self, keep: bool) -> Self {
        debug_assert!(self.is_empty(), "history is kept from the first update");
        self.history = keep.then(history::Log::default);
        self
    }

    /// Whether it records its commits' changes (see [`history`]).
    pub fn keeps_history(&self) -> bool {
        self.history.is_some()
    }

    /// Ends the commit whose updates were applied since the last one: it is named by
    /// `lsn` (after its last record), committed at `time`, with `vertices` dense ids
    /// handed out by then. Only a memtable keeping history records it.
    pub fn end_commit(&mut self, lsn: u64, time: i64, vertices: u64) {
        if let Some(h) = &mut self.history {
            debug_assert!(h
                .commits
                .last()
                .is_none_or(|c| c.lsn < lsn && c.time <= time));
            h.commits.push(history::Commit {
                lsn,
                time,
                vertices,
            });
            self.bytes += std::mem::size_of::<history::Commit>();
        }
    }

    /// Grows the vertex space to `n` (ids below `n` may now be applied).
    pub fn ensure_vertices(&mut self, n: VertexId) {
        self.vertex_space = self.vertex_space.max(n);
    }

    fn ensure_blocks(&mut self) {
        let nb = (self.vertex_space as usize).div_ceil(BLOCK);
        let weighted = self.weighted;
        let block = || {
            if weighted {
                BlockLog::weighted()
            } else {
                BlockLog::default()
            }
        };
        while self.out.len() < nb {
            self.out.push(block());
        }
        if let Some(inn) = &mut self.inn {
            inn.resize_with(nb, block);
        }
    }

    /// Applies edge updates (`[src, dst | DEL?]`, with parallel weights in weighted
    /// memtables) in order, using the current rayon pool.
    pub fn apply_edges(&mut self, edges: &[[VertexId; 2]], weights: &[f64]) {
        if edges.is_empty() {
            return;
        }
        self.ensure_blocks();
        let w = if self.weighted { weights } else { &[] };
        let commit = self.history.as_ref().map(history::Log::ordinal);
        apply::apply(
            &mut self.out,
            self.inn.as_deref_mut(),
            self.undirected,
            edges,
            w,
            commit,
        );
        self.bytes = self.measure();
    }

    fn measure(&self) -> usize {
        self.out
            .iter()
            .chain(self.inn.iter().flatten())
            .map(|b| b.bytes())
            .sum::<usize>()
            + self.vertex_ops.capacity() * crate::types::ID_BYTES
            + self.history_reserve()
    }

    /// DRAM a seal of this memtable's history takes on top of its buffers: one effective
    /// change per buffered out-entry (two for an entry that changes a weight, which is
    /// rare), with its weight in a weighted store. Counted in [`Memtable::bytes`] so that
    /// a store keeping history stays within its memtable budget, as one keeping none does:
    /// uncounted, a Kron22 load sealed 1.6 GB of changes from a 512 MiB memtable (3.5 GB
    /// peak against 0.77 GB without history). The segment encoded from the changes after
    /// the seal (at most 4 + 8 + 8 bytes a change) fits in the buffers the seal freed.
    fn history_reserve(&self) -> usize {
        let Some(h) = &self.history else { return 0 };
        let per = std::mem::size_of::<history::Change>() + if self.weighted { 8 } else { 0 };
        let entries: u64 = self.out.iter().map(|b| b.ops()).sum();
        entries as usize * per + h.commits.capacity() * std::mem::size_of::<history::Commit>()
    }

    /// Keys a directed store's updates by destination too, from now on, so that
    /// [`Memtable::gather`] can read a vertex's in-updates from one block's log (a scan
    /// of every log per vertex delete cost 3.9 ms at 4 M buffered updates). Vertex deletes ask for it: each reads the deleted vertex's
    /// in-updates. Uses the current rayon pool; a no-op once done, and when undirected.
    pub fn index_destinations(&mut self) {
        if self.undirected || self.inn.is_some() {
            return;
        }
        self.ensure_blocks();
        self.inn = Some(transpose::by_destination(&self.out, self.weighted));
        self.bytes = self.measure();
    }

    /// Records a vertex's new state (`v`, with `DEL` when deleted).
    pub fn apply_vertex(&mut self, x: VertexId) {
        if let Some(h) = &mut self.history {
            let (at, c) = (self.vertex_ops.len() as u32, h.ordinal());
            if h.vertex_marks.last().is_none_or(|m| m.1 != c) {
                h.vertex_marks.push((at, c));
            }
        }
        self.vertex_ops.push(x);
    }

    /// Updates buffered: edge entries (one per directed update, two per undirected one
    /// between distinct vertices) plus vertex updates.
    pub fn ops(&self) -> u64 {
        self.out.iter().map(|b| b.ops()).sum::<u64>() + self.vertex_ops.len() as u64
    }

    /// Whether nothing was applied or committed (a commit that changed nothing still takes
    /// LSNs, which a flush must put behind the log's start).
    pub fn is_empty(&self) -> bool {
        self.ops() == 0 && self.max_lsn == self.min_lsn
    }

    /// DRAM held by buffers, as last measured.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether updates carry weights.
    pub fn is_weighted(&self) -> bool {
        self.weighted
    }

    /// Appends `v`'s buffered updates in direction `d` (neighbors, with the delete bit of
    /// a delete) to `out`, each neighbor's in arrival order. A directed store's in-updates
    /// need the destination index: call [`Memtable::index_destinations`] first.
    pub fn gather(&self, d: crate::run::Dir, v: VertexId, out: &mut Vec<VertexId>) {
        let logs = match d {
            crate::run::Dir::In if !self.undirected => self
                .inn
                .as_ref()
                .expect("index_destinations before gathering in-updates"),
            _ => &self.out,
        };
        let (b, lv) = split(v);
        if let Some(blk) = logs.get(b) {
            blk.gather(lv, out);
        }
    }

    fn meta(&self, id: u64) -> RunMeta {
        RunMeta {
            id,
            level: 0,
            min_lsn: self.min_lsn,
            max_lsn: self.max_lsn,
            vertex_space: self.vertex_space as u64,
            weighted: self.weighted,
            part_shift: 0,
            compression: crate::run::Compression::None,
            // A DRAM run is stamped when it is written to a file.
            stamp: crate::stamp::Stamp::default(),
            last_time: self.last_time,
        }
    }

    /// Seals a memtable that keeps no history into an in-DRAM run resolved against `older`
    /// (oldest first).
    pub fn seal(self, older: &[Arc<Run>], id: u64) -> Run {
        assert!(
            self.history.is_none(),
            "a memtable keeping history seals with it"
        );
        self.seal_with_history(older, id).0
    }

    /// [`Memtable::seal`], with the memtable's history if it keeps one.
    pub fn seal_with_history(
        mut self,
        older: &[Arc<Run>],
        id: u64,
    ) -> (Run, Option<history::Sealed>) {
        let meta = self.meta(id);
        let (log, vertices) = self.take_history();
        let (run, edges) = seal::seal(self, older, meta, log.is_some());
        (run, log.map(|l| sealed_history(l, edges, vertices)))
    }

    /// The history log, and the vertex updates with their commits, taken for a seal.
    fn take_history(&mut self) -> (Option<history::Log>, Vec<(u32, VertexId)>) {
        let Some(log) = self.history.take() else {
            return (None, Vec::new());
        };
        let commits = log.vertex_commits(self.vertex_ops.len());
        let vertices = commits
            .into_iter()
            .zip(self.vertex_ops.iter().copied())
            .collect();
        (Some(log), vertices)
    }

    /// Seals the memtable straight into run file `id`, resolved against `older`, its lists
    /// stored as `compression` says and its header stamped with `stamp`: written in full,
    /// durable once the returned [`Unpersisted`] is persisted.
    pub fn seal_to_file(
        self,
        older: &[Arc<Run>],
        id: u64,
        medium: &Arc<dyn crate::medium::Medium>,
        compression: crate::run::Compression,
        stamp: crate::stamp::Stamp,
    ) -> crate::Result<(Run, crate::run::file::Unpersisted, Option<history::Sealed>)> {
        let meta = RunMeta {
            compression,
            stamp,
            ..self.meta(id)
        };
        let mut m = self;
        let (log, vertices) = m.take_history();
        let (run, file, edges) = seal::seal_to_file(m, older, meta, medium, log.is_some())?;
        Ok((run, file, log.map(|l| sealed_history(l, edges, vertices))))
    }
}

/// The history a seal hands out: `changes` as the seal emitted them, vertex by vertex.
fn sealed_history(
    log: history::Log,
    changes: history::Changes,
    vertices: Vec<(u32, VertexId)>,
) -> history::Sealed {
    history::Sealed {
        edges: changes.edges,
        weights: changes.weights,
        commits: log.commits,
        vertices,
    }
}

#[inline]
fn split(v: VertexId) -> (usize, usize) {
    ((v >> BLOCK_BITS) as usize, (v as usize) & (BLOCK - 1))
}
