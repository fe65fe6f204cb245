//! The size of the graph now (`Graph::size`), from the runs' headers, and as of a commit
//! (`Graph::size_at`), counted without building it where the runs holding the commit have
//! versions: `stats --at` reads the born and died columns it would filter, and writes
//! nothing.

use super::history::Piece;
use super::write::SnapshotParts;
use super::{CommitPoint, Inner, Point};
use crate::history::versions::vertex_ops_as_of;
use crate::history::versions_count::{count_at, whole, Counted, Loops};
use crate::history::versions_file;
use crate::types::VertexId;
use crate::{Result, Snapshot};
use std::borrow::Cow;

/// How big a graph is, counted as `export` lists it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GraphSize {
    /// Edges: an undirected edge once.
    pub edges: u64,
    /// Adjacency entries of the out-lists: an undirected edge twice (a self loop once).
    pub entries: u64,
    /// Vertices that exist.
    pub vertices: u64,
}

impl GraphSize {
    /// The size of the graph `s` holds.
    pub fn of(s: &Snapshot) -> GraphSize {
        GraphSize {
            edges: s.edge_count(),
            entries: crate::GraphView::num_edges(s),
            vertices: s.live_vertices() as u64,
        }
    }
}

impl Inner {
    /// The size of everything applied so far, counted from the runs' headers and the
    /// vertex states (a run's adds less its tombstones: runs are resolved), so no list is
    /// read and none is verified: `stats` on Kron24 spent three quarters of its time
    /// checking 2.2 GB it never read. An undirected store's edges are its entries with
    /// the self loops counted twice, halved; where a run predates its header's loop count
    /// (`FORMAT.md`, flag 65536), they are counted in the lists, from a snapshot, verified
    /// as every snapshot is.
    pub(super) fn size(&self) -> Result<GraphSize> {
        let parts = self.unchecked_parts()?;
        let entries = crate::snapshot::out_entries(&parts.runs);
        let vertices = crate::snapshot::live_vertices(parts.n, &parts.deleted) as u64;
        if !self.undirected {
            return Ok(GraphSize {
                edges: entries,
                entries,
                vertices,
            });
        }
        let loops: Option<i64> = parts.runs.iter().map(|r| r.header.loops).sum();
        match loops {
            Some(loops) => Ok(GraphSize {
                edges: (entries + loops.max(0) as u64) / 2,
                entries,
                vertices,
            }),
            None => Ok(GraphSize::of(&self.snapshot()?)),
        }
    }

    /// The size of the graph right after the commit `at` names, and that commit: counted
    /// from the runs' versions where they hold it, else from the graph built.
    pub(super) fn size_at(&self, at: Point) -> Result<(GraphSize, CommitPoint)> {
        let parts = self.snapshot_parts()?;
        let pieces = self.pieces()?;
        let commits = Self::commits_of(&pieces, parts.lsn);
        let i = self.resolve(&commits, at)?;
        if let Some(size) = self.size_versioned(&parts, &pieces, commits[i].lsn)? {
            return Ok((size, commits[i]));
        }
        let shape = super::versions::PointShape::Masked;
        let (s, c) = self.snapshot_of(parts, &pieces, &commits, i, shape)?;
        Ok((GraphSize::of(&s), c))
    }

    /// [`Inner::size_at`] from the versions, as `parts_versioned` reads the graph: `None`
    /// when a run that holds `lsn` has none usable.
    pub(super) fn size_versioned(
        &self,
        parts: &SnapshotParts,
        pieces: &[Piece],
        lsn: u64,
    ) -> Result<Option<GraphSize>> {
        if !super::versions::every_partition_reaches(&parts.runs, lsn, self.part_shift, parts.n) {
            return Ok(None);
        }
        let loops = match self.undirected {
            true => Loops::Count,
            false => Loops::Skip,
        };
        let store_id = self.store_id();
        let mut total = Counted::default();
        let mut states: Vec<Cow<'_, [VertexId]>> = Vec::with_capacity(parts.runs.len());
        for r in &parts.runs {
            let (lo, hi) = (r.header.min_lsn, r.header.max_lsn);
            if hi <= lsn {
                total = total + self.pool.install(|| whole(r, loops));
                states.push(Cow::Borrowed(r.vertex_ops.get()));
                continue;
            }
            if lo >= lsn {
                continue;
            }
            if r.in_dram() {
                return Ok(None);
            }
            let Ok(Some(v)) = versions_file::read(&*self.medium, r, store_id) else {
                return Ok(None);
            };
            r.verify()?;
            total = total + self.pool.install(|| count_at(r, &v, lsn, loops));
            states.push(Cow::Owned(vertex_ops_as_of(r, &v, lsn)));
        }
        let mut gone = super::history::vertex_states_of(states.iter().map(|s| &s[..]));
        let existed = super::history::vertices_at(pieces, lsn);
        super::history::mark_unborn(&mut gone, existed, parts.n);
        let deleted: usize = gone.iter().map(|w| w.count_ones() as usize).sum();
        debug_assert!(
            total.entries >= 0 && total.loops >= 0,
            "a graph has no fewer than no edges"
        );
        let entries = total.entries.max(0) as u64;
        Ok(Some(GraphSize {
            edges: match self.undirected {
                true => (entries + total.loops.max(0) as u64) / 2,
                false => entries,
            },
            entries,
            vertices: parts.n.saturating_sub(deleted) as u64,
        }))
    }
}
