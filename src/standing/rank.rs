//! PageRank kept within its tolerance of the fixed point (`pr-tol`).
//!
//! Graphalytics' PageRank spreads the sinks' rank over every vertex, a term that couples
//! every vertex to every change. Written as `x = z / Σz`, where `z` solves
//!
//! ```text
//! z = 1 + d · Pᵀ z        (Pᵀz)(v) = Σ_{u → v} z(u) / |N_out(u)|, sinks sending nothing
//! ```
//!
//! over the existing vertices (0 for deleted ones), the coupling goes: a change to the
//! graph moves `z` only where the change reaches. So the state kept is `z` and its
//! residual `r = 1 + d·Pᵀz − z`, and:
//!
//! - a batch adds to `r` exactly what it changed: for each vertex whose out-edges changed,
//!   the difference between what it sends each out-neighbor now and what it sent;
//! - two bounds on how far `x` is from the fixed point, from one pass over the state:
//!   - `‖x − x*‖₁ ≤ 2‖r‖₁ / ((1 − d) Σz)` (`(I − dPᵀ)⁻¹` has L1 norm at most `1/(1 − d)`,
//!     and normalizing at most doubles a distance);
//!   - `pr-tol`'s own: one Jacobi sweep `F` (a contraction by `d` in L1) would move `x` by
//!     `δ = ‖F(x) − x‖₁`, so `‖x − x*‖₁ ≤ δ / (1 − d)`; and `F(x) − x = r / Σz + κ` on
//!     the existing vertices (`r / Σz` on deleted ones), where
//!     `κ = (1 − d + d·s) / |V| − 1 / Σz` is how far the teleport share `x` implies (`s`
//!     the sinks' share) is from the one `z` was scaled to: so
//!     `δ ≤ ‖r‖₁ / Σz + |V|·|κ|`.
//!
//!   While either is within the tolerance nothing more is done: a small batch costs the
//!   out-lists of the vertices it touched;
//! - otherwise residual is pushed, vertex by vertex, to the out-neighbors while the work
//!   stays local (unless a push gave up at a residual as large before), then by sweeps
//!   over every vertex (`z += r`, `r = d·Pᵀr`, each dividing
//!   `‖r‖₁` by `1/d` at least) until the bound is met;
//! - a batch whose residual may need more sweeps than a recompute's is recomputed instead,
//!   by `pr-tol` started from the scores kept (4-5 sweeps at Kron20 after 10,000 changes,
//!   where the uniform vector takes 7).
//!   A sweep shrinks the residual by `d` at least, and at first often by much more (by 5
//!   on Kron20 after a few thousand changes, then by about `d` once what is left
//!   circulates): the estimate uses the average shrink of the last settle's sweeps, and a
//!   settle that reaches a recompute's sweeps without getting there recomputes.
//!
//! The first computation is `pr-tol` itself ([`crate::algo::pr_tolerance`]), its scores
//! turned into `z`. Every score moves a little with every batch; a change is reported only
//! when a score moved by more than `tolerance / |V|` since it was last reported, so that
//! scores rebuilt from the reports stay within the tolerance of the ones kept (L1).

use super::before::Old;
use super::changes::{Changes, Known};
use super::engine::Maintained;
use super::{Kind, Value};
use crate::algo::pr_tolerance::{pagerank_from, pagerank_to};
use crate::history::net::EdgeChange;
use crate::snapshot::{Patched, Snapshot, SweepIn};
use crate::types::{par_vertex_chunks_mut, VertexId};
use crate::{GraphView, Result};
use rayon::prelude::*;
use std::collections::VecDeque;
use std::ops::Range;

/// Pushes, counted in edges read, before the residual left is swept instead: a push reads
/// one list at random, a sweep every list in order, several times faster per edge.
const PUSH_SHARE_OF_EDGES: u64 = 32;

pub(crate) struct Rank {
    damping: f64,
    tolerance: f64,
    z: Vec<f64>,
    r: Vec<f64>,
    /// Out-degrees as of the last step: what each vertex sent its out-neighbors.
    deg: Vec<u32>,
    /// `z / Σz` (0 for deleted vertices).
    scores: Vec<f64>,
    /// Sweeps of the last step (a recompute's included).
    pub(crate) sweeps: u32,
    /// Steps since the residual was last taken afresh.
    steps: u32,
    /// Sweeps of the last recompute: from the uniform vector for the first computation, from
    /// the kept scores for a batch too large to settle.
    recompute_sweeps: u32,
    /// The changes of the last batch that was recomputed rather than settled, while no
    /// residual has been taken since: a batch at least as large is recomputed too, without
    /// taking the residual first (a sweep it would waste).
    recomputed_at: Option<usize>,
    /// The residual, in multiples of what is allowed, at which pushing last gave up: from
    /// there on a step sweeps at once (a push that gives up costs its whole budget, about a
    /// sweep, for nothing).
    push_gave_up_at: f64,
    /// How much a sweep shrank `‖r‖₁` on average in the last settle that swept (`d` at
    /// most, and `d` until one did): what the sweeps a residual needs are estimated with.
    /// Sweeps shrink it fast at first and by about `d` once what is left circulates.
    shrink: f64,
}

/// How a settle ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Settled {
    /// The residual was within what is allowed already: `z` is as it was.
    Already,
    /// `z` moved, and the residual is now within what is allowed.
    Moved,
    /// It took as many sweeps as it was allowed and is not there: recompute instead.
    GaveUp,
}

/// What the bound on the scores' distance from the fixed point is made of: one pass over
/// the state.
#[derive(Clone, Copy, Debug)]
struct Sums {
    /// `Σz` (the scores are `z / Σz`).
    z: f64,
    /// `‖r‖₁`.
    r: f64,
    /// `Σz` over the existing vertices without out-edges.
    sinks: f64,
}

/// A step sweeps toward the tolerance only while it may need fewer sweeps than this share
/// of a recompute's (estimated by the last settle's shrink per sweep, and given up at a
/// recompute's sweeps when the estimate was wrong); beyond, it recomputes.
const WARM_SHARE: f64 = 1.0;

/// Steps between two residuals taken afresh (one sweep each).
const REFRESH_STEPS: u32 = 64;

impl Rank {
    pub(crate) fn new(damping: f64, tolerance: f64) -> Result<Rank> {
        if tolerance <= 0.0 {
            return Err(crate::Error::Invalid(
                "pr-tol: the tolerance must be above 0".into(),
            ));
        }
        Ok(Rank {
            damping,
            tolerance,
            z: Vec::new(),
            r: Vec::new(),
            deg: Vec::new(),
            scores: Vec::new(),
            sweeps: 0,
            steps: 0,
            recompute_sweeps: 0,
            recomputed_at: None,
            push_gave_up_at: f64::INFINITY,
            shrink: damping,
        })
    }

    /// `Σz`, `‖r‖₁` and the sinks' `Σz` on `g`, in one pass.
    fn sums(&self, g: &Snapshot) -> Sums {
        let zero = Sums {
            z: 0.0,
            r: 0.0,
            sinks: 0.0,
        };
        (self.z.par_iter().zip(&self.r).zip(&self.deg))
            .enumerate()
            .fold(
                || zero,
                |mut a, (v, ((&z, &r), &d))| {
                    a.z += z;
                    a.r += r.abs();
                    if d == 0 && g.vertex_exists(v as VertexId) {
                        a.sinks += z;
                    }
                    a
                },
            )
            .reduce(
                || zero,
                |a, b| Sums {
                    z: a.z + b.z,
                    r: a.r + b.r,
                    sinks: a.sinks + b.sinks,
                },
            )
    }

    /// The most `‖r‖₁` may be for the scores to be within the tolerance, a tenth less for
    /// the rounding of the sums: by whichever of the module's two bounds allows more.
    /// Mostly the sweep's (twice the other's), unless the batch moved the teleport share
    /// (`κ`, when sinks gain out-edges or lose their last), which only the normalization's
    /// bound absorbs.
    fn allowed(&self, s: Sums, g: &Snapshot) -> f64 {
        let live = g.live_vertices().max(1) as f64;
        let d = self.damping;
        let tol = 0.9 * self.tolerance * (1.0 - d);
        let kappa = (1.0 - d + d * s.sinks / s.z) / live - 1.0 / s.z;
        let by_sweep = s.z * (tol - live * kappa.abs());
        let by_norm = s.z * tol / 2.0;
        by_sweep.max(by_norm)
    }

    /// `r` from scratch on `g`: `t + d·Pᵀz − z`, by one sweep.
    fn residual(&mut self, g: &Snapshot) {
        let exists = crate::algo::vertex_arrays::exists_flags(g);
        let send: Vec<f64> = (self.z.par_iter().zip(&self.deg))
            .map(|(&z, &d)| if d == 0 { 0.0 } else { z / d as f64 })
            .collect();
        let (d, z) = (self.damping, &self.z);
        let mut r = vec![0.0; z.len()];
        let mut pull = Pull {
            out: &mut r,
            send: &send,
            f: |v: usize, sum: f64| match exists[v] {
                true => 1.0 + d * sum - z[v],
                false => -z[v],
            },
        };
        crate::with_view!(g, |view| view.sweep_in(&mut pull));
        self.r = r;
    }

    /// Adds to `r` what the batch changed: new existing vertices' 1 (deleted ones' −1),
    /// and what each vertex whose out-edges changed sends now less what it sent.
    fn absorb(&mut self, old: &impl GraphView, new: &Snapshot, ch: &Changes) {
        let n = new.num_vertices();
        self.z.resize(n, 0.0);
        self.r.resize(n, 0.0);
        self.deg.resize(n, 0);
        let born = old.num_vertices().min(n) as VertexId..n as VertexId;
        let mut flipped: Vec<VertexId> = ch
            .vertices
            .iter()
            .map(|c| c.v)
            .chain(born.clone())
            .collect();
        flipped.sort_unstable();
        flipped.dedup();
        for v in flipped {
            let was = born.start > v && old.vertex_exists(v);
            match (was, new.vertex_exists(v)) {
                (false, true) => self.r[v as usize] += 1.0,
                (true, false) => self.r[v as usize] -= 1.0,
                _ => {}
            }
        }
        let mut arcs = directed(
            ch.edges
                .iter()
                .filter(|e| e.before.is_some() != e.after.is_some()),
            new.is_undirected(),
        );
        arcs.sort_unstable_by_key(|a| (a.0, a.1));
        for group in arcs.chunk_by(|a, b| a.0 == b.0) {
            self.resend(new, group);
        }
    }

    /// Vertex `u`'s out-edges changed (`arcs`: (u, v, appeared), by v): every out-neighbor
    /// now gets `d·z(u)/deg now` instead of `d·z(u)/deg before` (or nothing), and the
    /// edges gone get nothing instead.
    fn resend(&mut self, new: &Snapshot, arcs: &[(VertexId, VertexId, bool)]) {
        let u = arcs[0].0;
        let (d0, d1) = (self.deg[u as usize], new.out_degree(u) as u32);
        let zu = self.damping * self.z[u as usize];
        let (c0, c1) = (share(zu, d0), share(zu, d1));
        let appeared = |v: VertexId| {
            let i = arcs.partition_point(|a| a.1 < v);
            arcs.get(i).is_some_and(|a| a.1 == v && a.2)
        };
        let r = &mut self.r;
        new.for_each_out(u, |v| {
            r[v as usize] += c1 - if appeared(v) { 0.0 } else { c0 };
        });
        for &(_, v, _) in arcs.iter().filter(|a| !a.2) {
            r[v as usize] -= c0;
        }
        self.deg[u as usize] = d1;
    }

    /// Pushes residual vertex by vertex from the vertices holding more than their share of
    /// `allowed`, until none does or the edges read pass `budget`; whether it finished.
    fn push(&mut self, g: &Snapshot, allowed: f64, budget: u64) -> bool {
        let live = g.live_vertices().max(1) as f64;
        let eps = allowed / live;
        let mut queue: VecDeque<VertexId> = (0..self.r.len() as VertexId)
            .filter(|&v| self.r[v as usize].abs() > eps)
            .collect();
        let mut queued = vec![false; self.r.len()];
        queue.iter().for_each(|&v| queued[v as usize] = true);
        let mut read = 0u64;
        while let Some(v) = queue.pop_front() {
            queued[v as usize] = false;
            let rv = std::mem::take(&mut self.r[v as usize]);
            self.z[v as usize] += rv;
            let s = share(self.damping * rv, self.deg[v as usize]);
            if s == 0.0 {
                continue;
            }
            read += u64::from(self.deg[v as usize]);
            let (r, queued) = (&mut self.r, &mut queued);
            g.for_each_out(v, |w| {
                r[w as usize] += s;
                if r[w as usize].abs() > eps && !queued[w as usize] {
                    queued[w as usize] = true;
                    queue.push_back(w);
                }
            });
            if read > budget {
                return false;
            }
        }
        true
    }

    /// One sweep: `z += r`, `r = d·Pᵀr`.
    fn sweep(&mut self, g: &Snapshot) {
        let send: Vec<f64> = (self.r.par_iter().zip(&self.deg))
            .map(|(&r, &d)| if d == 0 { 0.0 } else { r / d as f64 })
            .collect();
        self.z
            .par_iter_mut()
            .zip(&self.r)
            .for_each(|(z, r)| *z += r);
        let d = self.damping;
        let mut pull = Pull {
            out: &mut self.r,
            send: &send,
            f: |_: usize, sum: f64| d * sum,
        };
        crate::with_view!(g, |view| view.sweep_in(&mut pull));
        self.sweeps += 1;
    }

    /// Brings `‖r‖₁` within what the tolerance allows, from the state's `sums`, in at
    /// most `most` sweeps: pushes while the work stays local, sweeps after; the sums it
    /// leaves, and how it ended.
    fn settle(&mut self, g: &Snapshot, mut sums: Sums, most: u32) -> (Sums, Settled) {
        let allowed = self.allowed(sums, g);
        if sums.r <= allowed {
            return (sums, Settled::Already);
        }
        let over = sums.r / allowed;
        if over < self.push_gave_up_at {
            let budget = g.num_edges() / PUSH_SHARE_OF_EDGES;
            let done = self.push(g, allowed, budget);
            sums = self.sums(g);
            if done {
                return (sums, Settled::Moved);
            }
            self.push_gave_up_at = over;
        }
        let (first, mut swept) = (sums.r, 0);
        while sums.r > self.allowed(sums, g) {
            if swept == most {
                // The estimate was wrong: start over from what is safe.
                self.shrink = self.damping;
                return (sums, Settled::GaveUp);
            }
            self.sweep(g);
            sums = self.sums(g);
            swept += 1;
        }
        if swept > 0 {
            self.learn((sums.r / first).powf(1.0 / f64::from(swept)));
        }
        (sums, Settled::Moved)
    }

    /// Whether bringing the residual within the tolerance costs less than a recompute: the
    /// sweeps it may need (each shrinking the residual as the last ones did) against the
    /// last recompute's.
    fn worth_settling(&self, sums: Sums, g: &Snapshot) -> bool {
        let allowed = self.allowed(sums, g);
        if sums.r <= allowed || self.recompute_sweeps == 0 {
            return true;
        }
        let needed = (sums.r / allowed).ln() / (1.0 / self.shrink).ln();

        needed < WARM_SHARE * f64::from(self.recompute_sweeps)
    }

    /// Keeps `shrink`, how much a sweep just shrank the residual by on average, for
    /// estimates: never above `d` (which bounds it) nor so low that one lucky sweep makes
    /// every batch look cheap.
    fn learn(&mut self, shrink: f64) {
        self.shrink = shrink.clamp(0.05, self.damping);
    }

    /// A recompute for a batch too large to bring forward, once the batch is absorbed:
    /// `pr-tol`'s scores started from the kept ones (within the tolerance, by its own
    /// bound), their `z`, and no residual yet (the next step takes it, so that this one
    /// costs what a recompute does).
    fn recompute(&mut self, g: &Snapshot, size: usize) {
        self.recomputed_at = Some(size);
        // `pr-tol` started from the scores kept (within the tolerance of the graph before
        // the batch): on Kron20 it needs 4-5 sweeps after 10,000-65,536 changes, against
        // 7 from the uniform vector, and its bound holds just the same.
        let start = std::mem::take(&mut self.scores);
        let s = crate::with_view!(g, |view| pagerank_from(
            view,
            self.damping,
            self.tolerance,
            start
        ));
        self.sweeps = s.sweeps;
        self.recompute_sweeps = s.sweeps;
        // `deg` is `g`'s already: the step absorbed the batch (or rebased) before this.
        debug_assert_eq!(self.deg.len(), g.num_vertices());
        self.z = z_of(&s.scores, &self.deg, self.damping, g.live_vertices());
        self.scores = s.scores;
        self.r.clear();
    }

    /// Grows the arrays to `g` and takes the residual afresh there (`deg` is `g`'s).
    fn rebase(&mut self, g: &Snapshot) {
        self.z.resize(g.num_vertices(), 0.0);
        self.residual(g);
    }

    /// Brings `deg` to `g`, which differs from the graph it is of by `ch`: the out-degree of
    /// each tail of a changed edge, read again.
    fn degrees(&mut self, g: &Snapshot, ch: &Changes) {
        self.deg.resize(g.num_vertices(), 0);
        for (u, _, _) in directed(ch.edges.iter(), g.is_undirected()) {
            self.deg[u as usize] = g.out_degree(u) as u32;
        }
    }

    /// The scores from `z`, whose sum is `total`.
    fn normalize(&mut self, total: f64) {
        let scale = if total > 0.0 { 1.0 / total } else { 0.0 };
        self.scores = self.z.par_iter().map(|z| z * scale).collect();
    }
}

/// `z` of scores `x`: `x / c`, where `c = (1 − d + d·Σ_sinks x) / |V|` is every vertex's
/// teleport share.
fn z_of(x: &[f64], deg: &[u32], damping: f64, live: usize) -> Vec<f64> {
    let sinks: f64 = (x.iter().zip(deg))
        .filter(|(_, &d)| d == 0)
        .map(|(x, _)| x)
        .sum();
    let c = (1.0 - damping + damping * sinks) / live.max(1) as f64;
    x.iter().map(|x| x / c).collect()
}

/// `x / d`, 0 for a vertex without out-edges.
fn share(x: f64, d: u32) -> f64 {
    if d == 0 {
        0.0
    } else {
        x / d as f64
    }
}

/// The arcs whose presence changed, as (tail, head, appeared): both directions of an
/// undirected store's edges.
fn directed<'a>(
    edges: impl Iterator<Item = &'a EdgeChange>,
    undirected: bool,
) -> Vec<(VertexId, VertexId, bool)> {
    let mut out = Vec::new();
    for e in edges {
        let appeared = e.after.is_some();
        out.push((e.src, e.dst, appeared));
        if undirected && e.src != e.dst {
            out.push((e.dst, e.src, appeared));
        }
    }
    out
}

/// A pull over every vertex's in-list: `out[v] = f(v, Σ send[u])`.
struct Pull<'a, F> {
    out: &'a mut [f64],
    send: &'a [f64],
    f: F,
}

impl<F: Fn(usize, f64) -> f64 + Sync> SweepIn for Pull<'_, F> {
    fn visit<W: GraphView>(&mut self, vs: Range<usize>, g: &W) {
        let (send, f) = (self.send, &self.f);
        par_vertex_chunks_mut(&mut self.out[vs.clone()]).for_each(|(first, chunk)| {
            for (v, o) in (vs.start + first..).zip(chunk.iter_mut()) {
                let mut sum = 0.0;
                g.for_each_in(v as VertexId, |u| sum += send[u as usize]);
                *o = f(v, sum);
            }
        });
    }
}

impl Maintained for Rank {
    fn compute(&mut self, g: &Snapshot) {
        let s = crate::with_view!(g, |view| pagerank_to(view, self.damping, self.tolerance));
        self.sweeps = s.sweeps;
        self.recompute_sweeps = s.sweeps;
        self.deg = g.out_degrees().into_iter().map(|d| d as u32).collect();
        self.z = z_of(&s.scores, &self.deg, self.damping, g.live_vertices());
        self.residual(g);
        self.steps = 0;
        self.push_gave_up_at = f64::INFINITY;
        let most = crate::algo::pr_tolerance::MAX_SWEEPS;
        match self.settle(g, self.sums(g), most) {
            (sums, Settled::Moved | Settled::GaveUp) => self.normalize(sums.z),
            (_, Settled::Already) => self.scores = s.scores,
        }
    }

    fn update(&mut self, old: &Old<'_>, new: &Patched, ch: &Changes) -> Vec<VertexId> {
        debug_assert!(!new.is_patched(), "kernels that sweep take snapshots");
        // Their updates read each edge's state before: only net changes have it.
        assert!(
            ch.known == Known::Both,
            "kernels that sweep take net changes"
        );
        let new = new.base();
        self.sweeps = 0;
        let size = ch.edges.len() + ch.vertices.len();
        if self.r.len() != self.z.len() {
            // After a recompute the residual is taken afresh, here, on the graph it is for,
            // unless this batch is to be recomputed as well.
            self.degrees(new, ch);
            if self.recomputed_at.is_some_and(|at| size >= at) {
                self.recompute(new, size);
                return (0..new.num_vertices() as VertexId).collect();
            }
            self.rebase(new);
        } else {
            self.absorb(old, new, ch);
        }
        self.recomputed_at = None;
        self.steps += 1;
        if self.steps.is_multiple_of(REFRESH_STEPS) {
            // Rounding errors of the residual's updates add up: take it afresh now and then.
            self.residual(new);
        }
        let sums = self.sums(new);
        match self.worth_settling(sums, new) {
            true => match self.settle(new, sums, self.recompute_sweeps.max(1)) {
                (_, Settled::GaveUp) => self.recompute(new, size),
                (sums, _) => self.normalize(sums.z),
            },
            false => self.recompute(new, size),
        }
        (0..new.num_vertices() as VertexId).collect()
    }

    fn value(&self, v: VertexId) -> Value {
        Value::Float(self.scores[v as usize])
    }

    fn len(&self) -> usize {
        self.scores.len()
    }

    fn bytes(&self) -> usize {
        (self.z.capacity() + self.r.capacity() + self.scores.capacity()) * 8
            + self.deg.capacity() * 4
    }

    fn rounds(&self) -> u32 {
        self.sweeps
    }

    fn kind(&self) -> Kind {
        Kind::Float
    }

    fn slack(&self, g: &Snapshot) -> f64 {
        self.tolerance / g.live_vertices().max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Graph, Options, Record};

    /// After each batch the residual kept equals the residual taken afresh.
    #[test]
    fn the_residual_kept_is_the_residual() {
        for undirected in [false, true] {
            let g =
                Graph::in_memory(Options::new().threads(2).undirected(Some(undirected))).unwrap();
            g.insert_edges(&[(1, 2), (2, 3), (3, 1), (3, 4), (5, 5)])
                .unwrap();
            let f = g.follow().unwrap();
            let (mut old, mut lsn) = f.snapshot().unwrap();
            let mut rank = Rank::new(0.85, 1e-9).unwrap();
            rank.compute(&old);
            let batches: Vec<Vec<Record>> = vec![
                vec![Record::Insert(4, 1)],
                vec![Record::Delete(3, 4), Record::Insert(6, 2)],
                vec![Record::DeleteVertex(2)],
                vec![Record::Insert(2, 5), Record::InsertVertex(9)],
            ];
            for b in batches {
                g.apply(&b).unwrap();
                let (new, l) = f.snapshot().unwrap();
                let ch = Changes::from(f.changes(lsn, l).unwrap().unwrap());
                rank.sweeps = 0;
                rank.absorb(&old, &new, &ch);
                let kept = rank.r.clone();
                rank.residual(&new);
                for (v, (a, b)) in kept.iter().zip(&rank.r).enumerate() {
                    assert!(
                        (a - b).abs() < 1e-9,
                        "{b:?} undirected {undirected}: r[{v}] kept {a}, afresh {b}"
                    );
                }
                let most = crate::algo::pr_tolerance::MAX_SWEEPS;
                let (sums, _) = rank.settle(&new, rank.sums(&new), most);
                rank.normalize(sums.z);
                (old, lsn) = (new, l);
            }
        }
    }
}
