//! Resuming a monotone program after the graph changed, instead of running it again.
//!
//! A *monotone* program's values only improve as a run goes on (smaller labels, shorter
//! distances), and a vertex's value is what one neighbor offered it. After edges are added
//! the old values are still reachable, only not the best: the ends of the new edges
//! announce their values and the run goes on from there. After edges are deleted, a value
//! may rest on an edge that is gone. KickStarter's *trimming* finds those: the head of a
//! deleted edge whose value came along it ([`Monotone::depends`]), then every vertex whose
//! value came from one already found, are reset to their initial values. Their neighbors
//! that still have values announce them, and the run settles on exactly what a run from
//! scratch gives: for a monotone program, the best value any path offers.
//!
//! [`resume`] does the trimming on the graph before the change, then runs the program on
//! the graph after it, starting from the values kept, with only the vertices the change
//! touched scheduled. The first superstep runs those with [`super::Context::announcing`]
//! set: a program that opts in sends then what it sends after improving its value.
//!
//! Where trimming resets more than a thirty-second of the vertices, a run from scratch costs
//! less, and is what it does: `Components` is such a case, a deletion inside a component
//! resetting all of it (a label rests on every neighbor holding it; the hand-written
//! standing `wcc` keeps a spanning forest instead, and trims only a subtree).

use super::engine::{self, Start};
use super::{Config, Edges, Outcome, Program};
use crate::history::net::{EdgeChange, VertexChange};
use crate::types::bits;
use crate::{GraphView, Result, Snapshot, VertexId};

/// A resume that trims more than one vertex in this many runs from scratch instead: the
/// trimming itself and the supersteps after it then cost about what a run does.
const FROM_SCRATCH_SHARE: usize = 32;

/// A program whose run can be resumed after the graph changed ([`resume`]). Its values
/// must only improve during a run, each coming from one neighbor's offer, and its
/// `compute` must send, when [`super::Context::announcing`] is true, what it sends after
/// improving its value.
pub trait Monotone: Program {
    /// Whether a vertex's value `y` may have come from a neighbor whose value is `x`,
    /// along an edge of weight `weight` (from the neighbor to the vertex; along either
    /// direction for [`Edges::Both`] programs). Saying yes too often costs only work.
    fn depends(&self, x: &Self::Value, weight: f64, y: &Self::Value) -> bool;
}

/// Runs `program` on `new` from the values it had on `old` (`previous`, by dense id),
/// where the two differ by the net `edges` and `vertices` changes (see
/// [`crate::Graph::diff`]); the outcome is what a run from scratch on `new` gives.
pub fn resume<P: Monotone, O: GraphView>(
    old: &O,
    new: &Snapshot,
    program: &P,
    cfg: &Config,
    previous: Vec<P::Value>,
    edges: &[EdgeChange],
    vertices: &[VertexChange],
) -> Result<Outcome<P::Value>> {
    let n = new.num_vertices();
    let mut values = previous;
    let kept = values.len().min(n);
    values.truncate(kept);
    values.extend((kept..n).map(|v| program.init(v as VertexId)));
    let both = P::EDGES == Edges::Both || new.is_undirected();
    let Some(trimmed) = trim(old, program, &values, edges, both, n / FROM_SCRATCH_SHARE) else {
        // Resetting that many costs more than it saves: a component's labels all rest on
        // one another, and a deletion inside it trims it whole.
        return crate::with_view!(new, |g| engine::run(g, program, cfg));
    };
    for &v in &trimmed {
        values[v as usize] = program.init(v);
    }
    let mut announce = vec![0u64; n.div_ceil(64)];
    let mut mark = |v: VertexId| {
        if (v as usize) < n {
            bits::assign(&mut announce, v, true);
        }
    };
    for &v in &trimmed {
        mark(v);
        new.for_each_in(v, &mut mark);
        if both && !new.is_undirected() {
            new.for_each_out(v, &mut mark);
        }
    }
    for e in edges.iter().filter(|e| stronger(e, new.is_weighted())) {
        mark(e.src);
        if both {
            mark(e.dst);
        }
    }
    vertices.iter().for_each(|c| mark(c.v));
    (old.num_vertices().min(n)..n).for_each(|v| mark(v as VertexId));
    let start = Start { values, announce };
    crate::with_view!(new, |g| engine::run_from(g, program, cfg, start))
}

/// Whether an edge change can only improve values: the edge appeared, or got lighter.
fn stronger(e: &EdgeChange, weighted: bool) -> bool {
    match (e.before, e.after) {
        (None, Some(_)) => true,
        (Some(b), Some(a)) => weighted && a < b,
        _ => false,
    }
}

/// Whether an edge change can take a value away: the edge went, or got heavier.
fn weaker(e: &EdgeChange, weighted: bool) -> bool {
    match (e.before, e.after) {
        (Some(_), None) => true,
        (Some(b), Some(a)) => weighted && a > b,
        _ => false,
    }
}

/// The vertices whose values rest on a weakened edge, directly or through each other,
/// found on the graph before the change (`old`); `None` once they are more than `limit`, or
/// their lists more than a [`FROM_SCRATCH_SHARE`]th of the edges.
fn trim<P: Monotone, O: GraphView>(
    old: &O,
    p: &P,
    values: &[P::Value],
    edges: &[EdgeChange],
    both: bool,
    limit: usize,
) -> Option<Vec<VertexId>> {
    let mut seen = vec![0u64; values.len().div_ceil(64)];
    let mut stack = Vec::new();
    let weighted = old.is_weighted();
    for e in edges.iter().filter(|e| weaker(e, weighted)) {
        let w = if weighted {
            e.before.unwrap_or(1.0)
        } else {
            1.0
        };
        let mut tail_head = vec![(e.src, e.dst)];
        if both {
            tail_head.push((e.dst, e.src));
        }
        for (u, v) in tail_head {
            let (ui, vi) = (u as usize, v as usize);
            if vi < values.len() && ui < values.len() && p.depends(&values[ui], w, &values[vi]) {
                stack.push(v);
            }
        }
    }
    let mut trimmed = Vec::new();
    let mut read = 0u64;
    while let Some(x) = stack.pop() {
        if bits::get(&seen, x) {
            continue;
        }
        bits::assign(&mut seen, x, true);
        trimmed.push(x);
        read += old.out_degree(x) as u64;
        if trimmed.len() > limit || read > old.num_edges() / FROM_SCRATCH_SHARE as u64 {
            return None;
        }
        if x as usize >= old.num_vertices() {
            continue;
        }
        let vx = &values[x as usize];
        let mut follow = |y: VertexId, w: f64| {
            let yi = y as usize;
            if yi < values.len() && !bits::get(&seen, y) && p.depends(vx, w, &values[yi]) {
                stack.push(y);
            }
        };
        old.for_each_out_weighted(x, &mut follow);
        if both && !old.is_undirected() {
            old.for_each_in(x, |y| follow(y, 1.0));
        }
    }
    Some(trimmed)
}
