//! When one edge or one vertex lived: the commits that added and removed it, read from the
//! pieces of history (each a [`Sealed`]: a segment's or a sealed memtable's commits and
//! effective changes) without building any graph.
//!
//! A piece lists its edge changes by (source, destination, commit), so one edge's changes
//! are a binary search away in each piece; its vertex updates by commit, so a vertex costs
//! a scan of them. Within one commit an edge can change more than once (a weight change is
//! its removal then its addition); what counts is its state before and after the commit,
//! and only a commit that changes whether it exists is an event.

use crate::batch::{id_of, is_del};
use crate::memtable::history::{Commit, Sealed};
use crate::types::VertexId;

/// Whether a commit added or removed an edge or a vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LifeOp {
    /// It exists after the commit and did not before.
    Add,
    /// It existed before the commit and does not after.
    Remove,
}

/// A commit that added or removed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// The commit.
    pub commit: Commit,
    /// What the commit did to it.
    pub op: LifeOp,
}

/// The events of edge (`src`, `dst`) (an undirected store's smaller end first) among the
/// commits of `pieces` (in LSN order) with LSNs in `from ..= upto`, oldest first.
pub fn edge_events(
    pieces: &[&Sealed],
    src: VertexId,
    dst: VertexId,
    from: u64,
    upto: u64,
) -> Vec<Event> {
    let mut out = Vec::new();
    for s in pieces {
        let key = |c: &crate::memtable::history::Change| (c.src, id_of(c.dst));
        let lo = s.edges.partition_point(|c| key(c) < (src, dst));
        let hi = lo + s.edges[lo..].partition_point(|c| key(c) == (src, dst));
        for group in s.edges[lo..hi].chunk_by(|a, b| a.commit == b.commit) {
            let commit = s.commits[group[0].commit as usize];
            // A removal first means it existed before; an addition last that it exists after.
            let (before, after) = (group[0].removes(), !group[group.len() - 1].removes());
            push_event(&mut out, commit, before, after, from, upto);
        }
    }
    out
}

/// The events of vertex `v` among the commits of `pieces` (in LSN order) with LSNs in
/// `from ..= upto`, oldest first; `ids_before` is how many dense ids were handed out before
/// the first piece's first commit (`None` if unknown: an id below its first commit's count
/// is then taken as born before it).
pub fn vertex_events(
    pieces: &[&Sealed],
    v: VertexId,
    ids_before: Option<u64>,
    from: u64,
    upto: u64,
) -> Vec<Event> {
    let mut out = Vec::new();
    let mut ids = ids_before;
    for s in pieces {
        // The commit that handed out `v`'s id, if this piece holds it.
        let born = s.commits.iter().enumerate().find_map(|(i, c)| {
            let before = if i == 0 {
                ids
            } else {
                Some(s.commits[i - 1].vertices)
            };
            let fresh = before.is_some_and(|b| b <= v as u64) && (v as u64) < c.vertices;
            fresh.then_some(i as u32)
        });
        ids = s.commits.last().map(|c| c.vertices).or(ids);
        let mine: Vec<(u32, bool)> = (s.vertices.iter())
            .filter(|(_, x)| id_of(*x) == v)
            .map(|&(c, x)| (c, !is_del(x)))
            .collect();
        let mut commits: Vec<u32> = mine.iter().map(|m| m.0).chain(born).collect();
        commits.sort_unstable();
        commits.dedup();
        for c in commits {
            let ops: Vec<bool> = mine.iter().filter(|m| m.0 == c).map(|m| m.1).collect();
            // The writer logs a revival only of a deleted vertex and a delete only of a live
            // one, so the first update says the state before; a birth says it was absent.
            let before = born != Some(c) && ops.first().is_some_and(|add| !add);
            let after = ops.last().copied().unwrap_or(true);
            push_event(&mut out, s.commits[c as usize], before, after, from, upto);
        }
    }
    out
}

fn push_event(
    out: &mut Vec<Event>,
    commit: Commit,
    before: bool,
    after: bool,
    from: u64,
    upto: u64,
) {
    if before == after || commit.lsn < from || commit.lsn > upto {
        return;
    }
    let op = if after { LifeOp::Add } else { LifeOp::Remove };
    debug_assert!(
        out.last()
            .is_none_or(|e: &Event| e.op != op && e.commit.lsn < commit.lsn),
        "a lifetime alternates between additions and removals, in commit order"
    );
    out.push(Event { commit, op });
}
