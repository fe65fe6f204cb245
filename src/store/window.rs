//! [`crate::Graph::snapshot_window`]: the graph over a window of history, as Raphtory's
//! persistent graph reads `window(A, B)`: the graph as of A with every edge and vertex
//! that a moment inside the window added (`history::window`) laid over it.

use super::history::{vertices_at, Point};
use super::{CommitPoint, Inner};
use crate::history::window;
use crate::memtable::history::Sealed;
use crate::snapshot::Snapshot;
use crate::types::bits;
use crate::types::VertexId;
use crate::{Error, Result};
use std::sync::Arc;

/// The commits a window spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSpan {
    /// The commit its start names (the last at or before it), read as `--at` reads it.
    pub start: CommitPoint,
    /// The last commit before its end whose graph it includes (`start` if none).
    pub last: CommitPoint,
    /// The moments after the start it includes: commits, those sharing one time counted once.
    pub moments: usize,
}

impl Inner {
    /// Every edge and vertex present in the graph as of `a` or after any commit after it
    /// and before `b` (a time: commits timed before it; an LSN: commits below it), the
    /// commits of one time counting as one moment (the state after the last of them).
    pub(super) fn snapshot_window(&self, a: Point, b: Point) -> Result<(Snapshot, WindowSpan)> {
        let parts = self.snapshot_parts()?;
        let pieces = self.pieces()?;
        let commits = Self::commits_of(&pieces, parts.lsn);
        let ia = self.resolve(&commits, a)?;
        let start = commits[ia];
        refuse_empty(a, b, start)?;
        let before_b = |c: &CommitPoint| match b {
            Point::Lsn(k) => c.lsn < k,
            Point::Time(t) => c.unix_nanos < t,
        };
        let ib = commits.partition_point(before_b).max(ia + 1);
        // A commit is a moment when it is the last of its time.
        let moments: Vec<u64> = (ia + 1..ib)
            .filter(|&i| {
                commits
                    .get(i + 1)
                    .is_none_or(|n| n.unix_nanos != commits[i].unix_nanos)
            })
            .map(|i| commits[i].lsn)
            .collect();
        let last_lsn = moments.last().copied().unwrap_or(start.lsn);
        let loaded = self.changes_between(&pieces, start.lsn, last_lsn)?;
        let refs: Vec<&Sealed> = loaded.iter().map(|s| &**s).collect();
        let ids = vertices_at(&pieces, start.lsn);
        let added = self
            .pool
            .install(|| window::added(&refs, start.lsn, &moments, ids));
        drop(loaded);
        // Runs, not a mask: one more run is laid over them.
        let shape = super::versions::PointShape::Runs;
        let mut parts = self.parts_as_of(parts, &pieces, &commits, ia, shape)?;
        if !added.edges.is_empty() {
            let ups: Vec<[VertexId; 2]> = added.edges.iter().map(|e| [e.0, e.1]).collect();
            let weights: Vec<f64> = match self.weighted {
                true => added.edges.iter().map(|e| e.2).collect(),
                false => Vec::new(),
            };
            let run = self.layer_run(&parts.runs, parts.n, &ups, &weights);
            parts.runs.push(Arc::new(run));
        }
        if !added.vertices.is_empty() {
            let mut gone = (*parts.deleted).clone();
            added
                .vertices
                .iter()
                .for_each(|&v| bits::assign(&mut gone, v, false));
            parts.deleted = Arc::new(gone);
        }
        let last = commits
            .iter()
            .find(|c| c.lsn == last_lsn)
            .copied()
            .unwrap_or(start);
        let span = WindowSpan {
            start,
            last,
            moments: moments.len(),
        };
        Ok((parts.build(self), span))
    }
}

/// Refuses a window whose end does not come after its start (`start` is the commit the
/// start names).
fn refuse_empty(a: Point, b: Point, start: CommitPoint) -> Result<()> {
    let empty = match (a, b) {
        (Point::Lsn(x), Point::Lsn(y)) => y <= x,
        (Point::Time(x), Point::Time(y)) => y <= x,
        (_, Point::Lsn(y)) => y <= start.lsn,
        (_, Point::Time(y)) => y <= start.unix_nanos,
    };
    match empty {
        true => Err(Error::Invalid(format!(
            "a window's end must come after its start: {b} is not after {a}"
        ))),
        false => Ok(()),
    }
}
