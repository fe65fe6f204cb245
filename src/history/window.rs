//! A window of history: every edge and vertex present in the graph as of its start or
//! after any of the commits inside it that count as moments (the last commit of each
//! commit time: several commits with one time are one moment). This is what the window
//! adds to its start's graph, read from the pieces of history (each a [`Sealed`]).
//!
//! An edge's changes are in commit order once the pieces (in LSN order) are concatenated
//! and stably sorted by edge. Its first change in the window says whether it existed at the
//! start (a removal first: it did, and the start's graph has it). After each commit that
//! changes it, it is present at every moment up to its next change: so it is in the window
//! if some moment lies in that stretch while it is present. Vertices alike, with the ids
//! handed out inside the window born absent.

use crate::batch::{id_of, is_del};
use crate::memtable::history::Sealed;
use crate::types::VertexId;
use rayon::prelude::*;

/// What a window adds to the graph as of its start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Added {
    /// Edges absent at the start and present at a moment (an undirected store's smaller end
    /// first), with the weight they had at the last such moment.
    pub edges: Vec<(VertexId, VertexId, f64)>,
    /// Vertices absent at the start (deleted, or not handed out yet) and live at a moment.
    pub vertices: Vec<VertexId>,
}

/// One change of one edge or vertex, at a commit (its LSN), in the order it happened.
#[derive(Clone, Copy)]
struct Step {
    key: (VertexId, VertexId),
    lsn: u64,
    present: bool,
    weight: f64,
}

/// What the commits of `pieces` (in LSN order) after `start` and up to the last of
/// `moments` (sorted LSNs of commits after `start`) add to the graph as of `start`, where
/// `ids_at_start` dense ids had been handed out.
pub fn added(pieces: &[&Sealed], start: u64, moments: &[u64], ids_at_start: u64) -> Added {
    let Some(&last) = moments.last() else {
        return Added::default();
    };
    let mut edges = edge_steps(pieces, start, last);
    edges.par_sort_by_key(|s| s.key);
    let mut vertices = vertex_steps(pieces, start, last, ids_at_start);
    vertices.par_sort_by_key(|s| s.key);
    Added {
        edges: (present_at_a_moment(&edges, moments).into_iter())
            .map(|s| (s.key.0, s.key.1, s.weight))
            .collect(),
        vertices: (present_at_a_moment(&vertices, moments).into_iter())
            .map(|s| s.key.0)
            .collect(),
    }
}

/// Every edge change in commits `start+1 ..= last`, piece after piece.
fn edge_steps(pieces: &[&Sealed], start: u64, last: u64) -> Vec<Step> {
    let mut out = Vec::new();
    for s in pieces {
        let inside = |lsn: u64| lsn > start && lsn <= last;
        out.extend(s.edges.iter().enumerate().filter_map(|(i, c)| {
            let lsn = s.commits[c.commit as usize].lsn;
            inside(lsn).then_some(Step {
                key: (c.src, id_of(c.dst)),
                lsn,
                present: !c.removes(),
                weight: s.weight(i),
            })
        }));
    }
    out
}

/// Every vertex change in commits `start+1 ..= last`: each id handed out (born present,
/// before its commit's updates), then the updates.
fn vertex_steps(pieces: &[&Sealed], start: u64, last: u64, ids_at_start: u64) -> Vec<Step> {
    let mut out = Vec::new();
    let mut handed = ids_at_start;
    let step = |v: VertexId, lsn: u64, present: bool| Step {
        key: (v, 0),
        lsn,
        present,
        weight: 0.0,
    };
    for s in pieces {
        for (i, c) in s.commits.iter().enumerate() {
            if c.lsn <= start || c.lsn > last {
                continue;
            }
            out.extend((handed..c.vertices).map(|v| step(v as VertexId, c.lsn, true)));
            handed = handed.max(c.vertices);
            let from = s.vertices.partition_point(|u| u.0 < i as u32);
            let mine = s.vertices[from..].iter().take_while(|u| u.0 == i as u32);
            out.extend(mine.map(|&(_, x)| step(id_of(x), c.lsn, !is_del(x))));
        }
    }
    out
}

/// The last step after which each key, absent before its first step, is present at a
/// moment, for the keys that are: `steps` sorted by key, in order within one.
fn present_at_a_moment(steps: &[Step], moments: &[u64]) -> Vec<Step> {
    let mut out = Vec::new();
    for one in steps.chunk_by(|a, b| a.key == b.key) {
        // A removal first means it existed at the start: the start's graph has it.
        if !one[0].present {
            continue;
        }
        let mut found = None;
        let commits: Vec<&[Step]> = one.chunk_by(|a, b| a.lsn == b.lsn).collect();
        for (k, c) in commits.iter().enumerate() {
            let now = c[c.len() - 1];
            if !now.present {
                continue;
            }
            let next = commits.get(k + 1).map_or(u64::MAX, |n| n[0].lsn);
            let m = moments.partition_point(|&m| m < now.lsn);
            if moments.get(m).is_some_and(|&m| m < next) {
                found = Some(now);
            }
        }
        out.extend(found);
    }
    out
}
