//! Standing kernels: results kept current as batches commit.
//!
//! Rerunning a kernel on the whole graph after every batch costs the whole graph each time,
//! however small the batch. A standing kernel keeps its values and brings them forward by
//! the net changes between two commits (what [`crate::Graph::diff`] lists), reading the
//! graph only around them:
//!
//! - `wcc`: labels and a spanning forest behind them;
//! - `bfs` and `sssp` from a source: distances and a shortest-path tree;
//! - `pr-tol`: PageRank within a tolerance of its fixed point, warm-started.
//!
//! Deletions are handled by *trimming* (KickStarter): the values that depended on a
//! deleted edge are reset before the rest is brought forward, so the results equal a
//! recompute's exactly (`pr-tol`: within the same tolerance of the fixed point).
//!
//! This layer sits above `store` and `algo`: the store knows nothing of kernels. It
//! registers a follower ([`crate::Graph`] keeps each commit's changes for it, see the
//! store's `follow.rs`) and reads snapshots like any reader.
//!
//! - [`maintain`] starts a [`Standing`] handle: a thread keeps the kernel current, and the
//!   handle gives the values, the commit they reflect, a wait for a commit, and what
//!   changed since a commit.
//! - [`Maintainer`] is the same by hand: each [`Maintainer::step`] brings it to a store's
//!   newest commit and says what changed (what `evograph watch` prints).
//!
//! When the store no longer holds the changes a step needs (the follower fell behind by
//! more than the memtable budget, or a reader's writer flushed past it in a store without
//! history), the step recomputes and says so ([`Step::recomputed`]).

mod before;
mod changes;
mod engine;
mod forest;
mod handle;
mod paths;
mod rank;
mod vertex_program;
mod wcc;

pub use engine::{Maintainer, KERNELS};
pub use handle::{maintain, Standing};

use crate::types::VertexId;

/// What a kernel's values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Integers (BFS depths).
    Int,
    /// Reals (distances, scores).
    Float,
    /// Vertices, by dense id (component labels).
    Vertex,
}

/// One vertex's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer: a BFS depth ([`crate::algo::graphalytics::UNREACHABLE`] when unreached).
    Int(i64),
    /// A real: a distance (infinite when unreached) or a score.
    Float(f64),
    /// A vertex, by dense id: a component's smallest member.
    Vertex(VertexId),
}

impl Value {
    fn to_bits(self) -> u64 {
        match self {
            Value::Int(x) => x as u64,
            Value::Float(x) => x.to_bits(),
            Value::Vertex(v) => v as u64,
        }
    }

    fn from_bits(kind: Kind, bits: u64) -> Value {
        match kind {
            Kind::Int => Value::Int(bits as i64),
            Kind::Float => Value::Float(f64::from_bits(bits)),
            Kind::Vertex => Value::Vertex(bits as VertexId),
        }
    }

    /// Whether `self` and `other` differ by more than `slack` (any difference when 0).
    fn differs(self, other: Value, slack: f64) -> bool {
        match (self, other) {
            (Value::Float(a), Value::Float(b)) if slack > 0.0 => (a - b).abs() > slack,
            (Value::Float(a), Value::Float(b)) => a.to_bits() != b.to_bits(),
            (a, b) => a != b,
        }
    }
}

/// A vertex whose value changed: `None` where it does not exist.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// The vertex (dense id).
    pub vertex: VertexId,
    /// Its value before (as last reported).
    pub old: Option<Value>,
    /// Its value now.
    pub new: Option<Value>,
}

/// What one step of a [`Maintainer`] did.
#[derive(Clone, Debug)]
pub struct Step {
    /// The LSN of the commit the values now reflect.
    pub lsn: u64,
    /// The vertices whose values changed (empty on the first step, which computes them).
    pub changes: Vec<Change>,
    /// Why the values were recomputed instead of brought forward, if they were (never on
    /// the first step, which computes them).
    pub recomputed: Option<Recomputed>,
    /// Whether this was the first step.
    pub initial: bool,
    /// Whether the step read the batches applied since the last one and patched their edge
    /// changes over its graph, instead of taking a snapshot (which seals them).
    pub patched: bool,
    /// Seconds the step took, snapshot included.
    pub seconds: f64,
    /// Where they went.
    pub phases: Phases,
}

/// Why a step recomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recomputed {
    /// The store no longer held the changes since the last step: the follower fell behind
    /// by more than the memtable budget, or a reader's writer flushed past them in a store
    /// without history.
    ChangesGone,
    /// The changes touched more edges than a step is worth (an eighth of them; wcc, whose
    /// recompute is parallel and its step sequential, one in 128): a recompute costs less.
    LargeBatch,
}

/// Where a [`Step`]'s time went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Seconds taking the snapshot (sealing the batch's memtable).
    pub snapshot: f64,
    /// Seconds reading the net changes since the last step.
    pub changes: f64,
    /// Seconds bringing the values forward (or recomputing them).
    pub kernel: f64,
    /// Rounds the kernel ran, where it counts them (pr-tol's sweeps).
    pub rounds: u32,
}
