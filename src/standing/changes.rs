//! What a step brings a kernel's values forward by: the edges and vertices updated between
//! two commits.
//!
//! A sealed step reads the store's net changes, each edge's state at both commits. A
//! patched step takes the batches' edge updates as they are, without looking up what each
//! edge was before (that lookup was most of its cost): an insert may be of an edge already
//! there, a delete of an edge never there. The kernels that take patched steps need no more
//! than that: an update that changed nothing offers nothing, and trimming starts only where
//! a deleted or reweighted edge was a tree edge, which only an edge that was there can be.

use crate::history::net::{EdgeChange, VertexChange};
use crate::store::follow::NetChanges;

/// How much of each edge's state the changes know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Known {
    /// Its state at both commits: net changes, each edge changed.
    Both,
    /// Its state after only (each `before` is `None`, meaning unknown): updates, some of
    /// which may have changed nothing.
    After,
}

/// Edge and vertex changes between the commits of a step.
pub(crate) struct Changes {
    /// Edges, once each (an undirected one by its smaller end first).
    pub(crate) edges: Vec<EdgeChange>,
    /// Vertices updated, with their states at both commits (none in a patched step).
    pub(crate) vertices: Vec<VertexChange>,
    /// Whether each edge's `before` is known.
    pub(crate) known: Known,
}

impl From<NetChanges> for Changes {
    fn from(n: NetChanges) -> Changes {
        Changes {
            edges: n.edges,
            vertices: n.vertices,
            known: Known::Both,
        }
    }
}

impl Changes {
    /// Whether `e` may have removed an edge.
    pub(crate) fn may_remove(&self, e: &EdgeChange) -> bool {
        e.after.is_none() && (self.known == Known::After || e.before.is_some())
    }

    /// Whether `e` may have added an edge.
    pub(crate) fn may_add(&self, e: &EdgeChange) -> bool {
        e.after.is_some() && (self.known == Known::After || e.before.is_none())
    }

    /// Whether `e` may have made a present edge heavier (or removed it).
    pub(crate) fn may_weaken(&self, e: &EdgeChange) -> bool {
        match (e.before, e.after, self.known) {
            (_, None, _) => self.may_remove(e),
            (Some(b), Some(a), Known::Both) => a > b,
            (None, Some(_), Known::Both) => false,
            (_, Some(_), Known::After) => true,
        }
    }
}
