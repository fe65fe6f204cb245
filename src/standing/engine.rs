//! The maintainer: one kernel's values brought from commit to commit, by the changes
//! between them where the store holds them, by a recompute where it does not.

use super::vertex_program::VertexProgram;
use super::{paths, rank, wcc, Change, Kind, Recomputed, Step, Value};
use crate::algo::kernel::{Kernel, Params};
use crate::pregel::programs;
use crate::snapshot::Snapshot;
use crate::store::follow::{Follower, NetChanges};
use crate::store::{CommitPoint, Point};
use crate::types::VertexId;
use crate::{Error, Graph, GraphView, Result};
use std::time::Instant;

/// The net changes a maintained kernel is brought forward by.
pub(crate) type Changes = NetChanges;

/// A kernel's state kept current; each kernel file implements it.
pub(crate) trait Maintained: Send {
    /// Computes the values on `g` from nothing.
    fn compute(&mut self, g: &Snapshot);
    /// Brings the values from `old` to `new`, which differ by `ch`; returns the vertices
    /// whose values may have changed (repeats allowed).
    fn update(&mut self, old: &Snapshot, new: &Snapshot, ch: &Changes) -> Vec<VertexId>;
    /// Vertex `v`'s value (below [`Maintained::len`]).
    fn value(&self, v: VertexId) -> Value;
    /// Vertices it holds values for.
    fn len(&self) -> usize;
    /// What its values are.
    fn kind(&self) -> Kind;
    /// DRAM its state takes, in bytes.
    fn bytes(&self) -> usize;
    /// Rounds its last computation ran (sweeps, supersteps), where it counts them.
    fn rounds(&self) -> u32 {
        0
    }
    /// How far a value may move unreported (0: every change is reported).
    fn slack(&self, _g: &Snapshot) -> f64 {
        0.0
    }
}

/// Changes to more edges than one in this many of the graph's are not worth bringing
/// forward: a recompute reads every edge once, while a step reads the changes and, for each,
/// the lists around it.
const LARGE_BATCH_SHARE: u64 = 8;

/// Whether `ch` is too large a change to bring the values forward by ([`LARGE_BATCH_SHARE`]).
fn too_large(ch: &Changes, new: &Snapshot) -> bool {
    ch.edges.len() as u64 > (new.num_edges() / LARGE_BATCH_SHARE).max(64)
}

/// The source a kernel's parameters give; an error if none.
fn source_of(kernel: Kernel, p: &Params) -> Result<VertexId> {
    (p.source).ok_or_else(|| Error::Invalid(format!("{kernel} needs a source vertex")))
}

/// A kernel kept current by hand: call [`Maintainer::step`] to bring it to a store's
/// newest commit. [`super::Standing`] does that on a thread of its own.
pub struct Maintainer {
    kernel: Kernel,
    state: Box<dyn Maintained>,
    snap: Option<Snapshot>,
    lsn: u64,
    /// The values last reported, as bits, and whether each vertex existed then.
    reported: Vec<u64>,
    present: Vec<bool>,
    follower: Option<Follower>,
}

/// The kernels that can be kept current, by name: the hand-written ones, then the shipped
/// monotone vertex programs.
pub const KERNELS: [Kernel; 7] = [
    Kernel::Wcc,
    Kernel::Bfs,
    Kernel::Sssp,
    Kernel::PrTol,
    Kernel::PregelCc,
    Kernel::PregelBfs,
    Kernel::PregelSssp,
];

impl Maintainer {
    /// A maintainer of `kernel` with parameters `p` (a source for `bfs` and `sssp`, the
    /// damping and tolerance for `pr-tol`; `pr` is kept as `pr-tol`); nothing is computed
    /// until the first step.
    pub fn new(kernel: Kernel, p: &Params) -> Result<Maintainer> {
        p.check()?;
        // A fixed number of iterations has no fixed point to keep near: pr is kept as
        // pr-tol, within the tolerance of the fixed point.
        let kernel = match kernel {
            Kernel::Pr => Kernel::PrTol,
            k => k,
        };
        let state: Box<dyn Maintained> = match kernel {
            Kernel::Wcc => Box::<wcc::Wcc>::default(),
            Kernel::Bfs | Kernel::Sssp => {
                let length = match kernel {
                    Kernel::Bfs => paths::Length::Hops,
                    _ => paths::Length::Weights,
                };
                Box::new(paths::Paths::new(source_of(kernel, p)?, length))
            }
            Kernel::PregelCc => Box::new(VertexProgram::new(
                programs::Components,
                Kind::Vertex,
                |&l| Value::Vertex(l),
            )),
            Kernel::PregelBfs => Box::new(VertexProgram::new(
                programs::Bfs {
                    source: source_of(kernel, p)?,
                },
                Kind::Int,
                |&d| Value::Int(d),
            )),
            Kernel::PregelSssp => Box::new(VertexProgram::new(
                programs::Sssp {
                    source: source_of(kernel, p)?,
                },
                Kind::Float,
                |&d| Value::Float(d),
            )),
            Kernel::PrTol => Box::new(rank::Rank::new(p.damping, p.tolerance)?),
            k => {
                let names: Vec<&str> = KERNELS.iter().map(|k| k.name()).collect();
                return Err(Error::Invalid(format!(
                    "{k} cannot be kept current (kernels that can: {})",
                    names.join(", ")
                )));
            }
        };
        Ok(Maintainer {
            kernel,
            state,
            snap: None,
            lsn: 0,
            reported: Vec::new(),
            present: Vec::new(),
            follower: None,
        })
    }

    /// Brings the values to `g`'s newest commit; `None` when they reflect it already.
    /// Follows the same store from step to step; a new handle on it (a reader reopened
    /// to see a writer's newer commits) takes over from the old one.
    pub fn step(&mut self, g: &Graph) -> Result<Option<Step>> {
        self.step_upto(g, None)
    }

    /// [`Maintainer::step`] to the commit `at` names (the last at or before it) instead
    /// of the newest: a first step there starts the values at a past commit. An error if
    /// the store does not hold the changes since that commit, or if the values reflect a
    /// later commit already.
    pub fn step_upto(&mut self, g: &Graph, at: Option<Point>) -> Result<Option<Step>> {
        if !self.follower.as_ref().is_some_and(|f| f.is_of(g)) {
            self.follower = Some(g.follow()?);
        }
        self.step_followed(at)
    }

    /// [`Maintainer::step_upto`] with the follower already registered.
    pub(crate) fn step_followed(&mut self, at: Option<Point>) -> Result<Option<Step>> {
        let f = self.follower.as_ref().expect("a follower is registered");
        let started = Instant::now();
        let (new, lsn) = match at {
            None => f.snapshot()?,
            Some(p) => match f.snapshot_upto(p)? {
                Some((s, c)) => (s, c.lsn),
                None => {
                    return Err(Error::Invalid(format!(
                        "the store no longer holds the changes since the commit {p} names"
                    )))
                }
            },
        };
        if self.snap.is_some() && lsn <= self.lsn {
            return match lsn == self.lsn {
                true => Ok(None),
                false => Err(Error::Invalid(format!(
                    "the values reflect LSN {} already, after LSN {lsn}",
                    self.lsn
                ))),
            };
        }
        let snapshot_s = started.elapsed().as_secs_f64();
        let changes = match &self.snap {
            None => None,
            Some(_) => f.changes(self.lsn, lsn)?,
        };
        let changes_s = started.elapsed().as_secs_f64() - snapshot_s;
        let mut step = self.advance(new, lsn, changes, started);
        step.phases.snapshot = snapshot_s;
        step.phases.changes = changes_s;
        if let Some(f) = &self.follower {
            f.reached(lsn);
        }
        Ok(Some(step))
    }

    /// Applies one step: incremental with `changes`, else a recompute.
    fn advance(&mut self, new: Snapshot, lsn: u64, changes: Option<Changes>, t: Instant) -> Step {
        let first = self.snap.is_none();
        let kernel_t = Instant::now();
        let recomputed = match &changes {
            _ if first => None,
            None => Some(Recomputed::ChangesGone),
            Some(ch) if too_large(ch, &new) => Some(Recomputed::LargeBatch),
            Some(_) => None,
        };
        let touched: Vec<VertexId> = match (&self.snap, &changes) {
            (Some(old), Some(ch)) if recomputed.is_none() => {
                let mut t = self.state.update(old, &new, ch);
                t.extend(ch.vertices.iter().map(|c| c.v));
                t.extend(old.num_vertices() as VertexId..new.num_vertices() as VertexId);
                t
            }
            _ => {
                self.state.compute(&new);
                (0..new.num_vertices() as VertexId).collect()
            }
        };
        let kernel = kernel_t.elapsed().as_secs_f64();
        let changes_out = self.report(&new, touched, first);
        self.snap = Some(new);
        self.lsn = lsn;
        Step {
            lsn,
            changes: changes_out,
            recomputed,
            initial: first,
            seconds: t.elapsed().as_secs_f64(),
            phases: super::Phases {
                kernel,
                rounds: self.state.rounds(),
                ..Default::default()
            },
        }
    }

    /// The values of `touched` that differ from what was last reported (by more than the
    /// kernel's slack), which become the reported ones.
    fn report(&mut self, g: &Snapshot, mut touched: Vec<VertexId>, first: bool) -> Vec<Change> {
        let n = self.state.len();
        self.reported.resize(n, 0);
        self.present.resize(n, false);
        touched.sort_unstable();
        touched.dedup();
        let slack = self.state.slack(g);
        let kind = self.state.kind();
        let mut out = Vec::new();
        for v in touched {
            let i = v as usize;
            let now = g.vertex_exists(v).then(|| self.state.value(v));
            let was = self.present[i].then(|| Value::from_bits(kind, self.reported[i]));
            let moved = match (was, now) {
                (Some(a), Some(b)) => a.differs(b, slack),
                (None, None) => false,
                _ => true,
            };
            if moved {
                if !first {
                    out.push(Change {
                        vertex: v,
                        old: was,
                        new: now,
                    });
                }
                self.present[i] = now.is_some();
                self.reported[i] = now.map_or(0, Value::to_bits);
            }
        }
        out
    }

    /// A waiter on the store followed (after a first step).
    pub(crate) fn waiter(&self) -> crate::store::follow::Waiter {
        self.follower
            .as_ref()
            .expect("a follower is registered")
            .waiter()
    }

    /// Stops following: the store is let go of.
    pub(crate) fn release(&mut self) {
        self.follower = None;
    }

    /// The newest commit of the store followed (after a first step).
    pub fn last_commit(&self) -> Result<Option<CommitPoint>> {
        match &self.follower {
            Some(f) => f.last_commit(),
            None => Ok(None),
        }
    }

    /// DRAM the maintainer keeps between steps, in bytes: the kernel's state and the
    /// values last reported (a step's work and the snapshot come on top).
    pub fn dram_bytes(&self) -> usize {
        self.state.bytes() + self.reported.capacity() * 8 + self.present.capacity()
    }

    /// The kernel maintained.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The LSN of the commit the values reflect (0 before the first step).
    pub fn lsn(&self) -> u64 {
        self.lsn
    }

    /// The snapshot of the commit the values reflect.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snap.as_ref()
    }

    /// Vertex `v`'s value at the commit reflected; `None` if it does not exist there.
    pub fn value(&self, v: VertexId) -> Option<Value> {
        let g = self.snap.as_ref()?;
        ((v as usize) < self.state.len() && g.vertex_exists(v)).then(|| self.state.value(v))
    }

    /// Every vertex's value at the commit reflected, by dense id (`None` where it does not
    /// exist).
    pub fn values(&self) -> Vec<Option<Value>> {
        (0..self.state.len() as VertexId)
            .map(|v| self.value(v))
            .collect()
    }
}
