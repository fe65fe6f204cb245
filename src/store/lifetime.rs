//! [`crate::Graph::edge_history`] and [`crate::Graph::vertex_history`]: when one edge or
//! vertex lived within the history kept, from the pieces of history (`history.rs`) and the
//! latest graph, which says its state where no kept commit changed it.

use super::history::{window, Piece};
use super::{CommitPoint, Inner};
use crate::history::lifetime::{self, Event, LifeOp};
use crate::memtable::history::Sealed;
use crate::snapshot::GraphView;
use crate::types::VertexId;
use crate::{Error, Result};

/// What a lifetime is of.
#[derive(Clone, Copy, Debug)]
pub(super) enum Of {
    /// An edge: its source and destination (dense ids).
    Edge(VertexId, VertexId),
    /// A vertex (dense id).
    Vertex(VertexId),
}

/// When an edge or a vertex lived within the history kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lifetime {
    /// The oldest commit kept: the events are those of it and of every later commit.
    pub from: CommitPoint,
    /// Whether it existed before that commit.
    pub existed_before: bool,
    /// The commits that added and removed it, oldest first: additions and removals
    /// alternate (a weight change is no event).
    pub events: Vec<LifeEvent>,
}

/// A commit that added or removed an edge or a vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LifeEvent {
    /// The commit.
    pub commit: CommitPoint,
    /// Whether it added or removed it.
    pub op: LifeOp,
}

impl Inner {
    /// The lifetime of `of` within the window kept, as of the latest commit.
    pub(super) fn lifetime(&self, of: Of) -> Result<Lifetime> {
        if !self.history.lock().unwrap().setting.keeps() {
            return Err(Error::Invalid(
                "the store keeps no history (`evograph ingest --history all` or `set_history` keeps it)".into(),
            ));
        }
        let parts = self.snapshot_parts()?;
        let pieces = self.pieces()?;
        let commits = Self::commits_of(&pieces, parts.lsn);
        let start = {
            let kept = self.history.lock().unwrap();
            window(kept.setting, kept.floor, &commits)
        };
        let Some(mut i) = start.filter(|&i| i < commits.len()) else {
            return Err(Error::Invalid("no commit is kept yet".into()));
        };
        let ids = first_ids(&pieces);
        // Which ids the oldest piece's first commit handed out is not kept unless history
        // starts with the store: a vertex's lifetime then starts after that commit.
        if let (Of::Vertex(_), None, Some(p)) = (of, ids, pieces.first()) {
            if p.commits.first().map(|c| c.lsn) == Some(commits[i].lsn) && i + 1 < commits.len() {
                i += 1;
            }
        }
        let from = commits[i];
        let loaded = self.changes_between(&pieces, 0, parts.lsn)?;
        let refs: Vec<&Sealed> = loaded.iter().map(|s| &**s).collect();
        let events = match of {
            Of::Edge(u, v) => {
                let (u, v) = if self.undirected && v < u {
                    (v, u)
                } else {
                    (u, v)
                };
                lifetime::edge_events(&refs, u, v, from.lsn, parts.lsn)
            }
            Of::Vertex(v) => lifetime::vertex_events(&refs, v, ids, from.lsn, parts.lsn),
        };
        let existed_before = match events.first() {
            Some(e) => e.op == LifeOp::Remove,
            None => {
                let latest = parts.build(self);
                match of {
                    Of::Edge(u, v) => latest.vertex_exists(u) && latest.has_edge(u, v),
                    Of::Vertex(v) => latest.vertex_exists(v),
                }
            }
        };
        Ok(Lifetime {
            from,
            existed_before,
            events: events.iter().map(life_event).collect(),
        })
    }
}

/// Dense ids handed out before the first piece's first commit: none when history starts
/// at the store's first record, else unknown.
fn first_ids(pieces: &[Piece]) -> Option<u64> {
    pieces.first().filter(|p| p.min_lsn == 0).map(|_| 0)
}

fn life_event(e: &Event) -> LifeEvent {
    LifeEvent {
        commit: CommitPoint {
            lsn: e.commit.lsn,
            unix_nanos: e.commit.time,
        },
        op: e.op,
    }
}
