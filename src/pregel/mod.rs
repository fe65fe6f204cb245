//! Vertex-centric programs (Pregel), as iPregel runs them: vertex state and mailboxes in
//! DRAM, edges read in place from a snapshot's runs on the medium.
//!
//! A program ([`Program`]) says what a vertex holds, what it sends, how messages to one
//! vertex combine ([`Sum`], [`Min`], [`Max`], any associative function, or [`NoCombiner`]),
//! and what one vertex does in one superstep ([`Program::compute`], through a [`Context`]).
//! [`run`] executes it in supersteps on any [`GraphView`]; [`run_snapshot`] picks a
//! snapshot's fastest view. A snapshot is consistent, so a program runs on one version of
//! the graph while ingestion goes on.
//!
//! - **Delivery** ([`Delivery`]): *push*, where senders combine into the recipient's mailbox
//!   with a compare-and-swap (or into per-thread buffers without a combiner), or *pull*,
//!   where each vertex gathers what its in-neighbours broadcast, writing only its own state
//!   (and, with a combiner, supersteps with few broadcasts push them instead, so late sparse
//!   supersteps cost what they send). Chosen per program, overridable per run.
//! - **Selective scheduling**: after superstep 0 only vertices that have not voted to halt or
//!   that have mail run. Pull gathering marks the recipients of few broadcasters instead of
//!   letting every vertex look (the same trade as direction-optimising BFS).
//! - **Balance**: supersteps run on rayon over ranges cut to equal edges, not vertices.
//! - **Aggregators** ([`Aggregate`]): global sums, minima and maxima, visible one superstep
//!   later.
//!
//! Shipped programs, each a short file: [`programs::PageRank`], [`programs::Components`],
//! [`programs::Bfs`], [`programs::Sssp`]. A custom one (k-core decomposition) is in
//! `examples/kcore.rs`.

mod chunks;
mod context;
mod degrees;
mod engine;
mod program;
pub mod programs;
mod resume;

pub use context::{Context, Messages};
pub use program::{
    Aggregate, Combiner, Delivery, Edges, Max, Message, Message32, Min, NoCombiner, Number,
    Program, Sum,
};

pub use resume::{resume, Monotone};

use crate::{GraphView, Result, Snapshot};

/// How to run a program.
#[derive(Clone, Debug)]
pub struct Config {
    /// Supersteps to run at most; the run stops there with [`Stop::SuperstepLimit`].
    pub max_supersteps: u32,
    /// Overrides the program's [`Program::DELIVERY`].
    pub delivery: Option<Delivery>,
    /// Whether to use the program's combiner.
    pub combining: Combining,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_supersteps: 10_000,
            delivery: None,
            combining: Combining::Combine,
        }
    }
}

/// Whether messages to one vertex are combined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Combining {
    /// With the program's combiner (unless it is [`NoCombiner`]).
    #[default]
    Combine,
    /// Every message delivered on its own, as without a combiner (for testing a combiner,
    /// or programs whose compute needs each message).
    DeliverEach,
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every vertex voted to halt and no message was in flight.
    Halted,
    /// The superstep limit was reached first.
    SuperstepLimit {
        /// Vertices that had not voted to halt.
        active: u64,
        /// Messages sent in the last superstep (for pull delivery: edges its broadcasts
        /// travel along).
        in_flight: u64,
    },
}

/// The result of a run.
#[derive(Clone, Debug)]
#[must_use = "a run's values are its result, and `stop` says whether it finished"]
pub struct Outcome<V> {
    /// Each vertex's final value, by dense id (deleted vertices keep their initial value).
    pub values: Vec<V>,
    /// Supersteps run.
    pub supersteps: u32,
    /// Why the run ended.
    pub stop: Stop,
    /// Edges read, by the engine and by `compute` (the paper's traversed edges).
    pub edges: u64,
    /// Messages sent in all (for pull delivery: edges broadcasts travelled along).
    pub messages: u64,
    /// The aggregators' results over the last superstep.
    pub aggregates: Vec<f64>,
    /// The delivery mode used.
    pub delivery: Delivery,
    /// What each superstep did, in order (a profile: where the supersteps and edges went).
    pub steps: Vec<StepStats>,
}

/// One superstep of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Vertices whose `compute` ran (active, or with mail).
    pub computed: u64,
    /// Vertices that had not voted to halt at its end.
    pub active: u64,
    /// Messages sent (pull delivery: edges its broadcasts travel along).
    pub messages: u64,
    /// Edges read.
    pub edges: u64,
    /// Wall-clock seconds, delivery included.
    pub seconds: f64,
}

impl<V> Outcome<V> {
    /// Whether the run ended because every vertex halted.
    pub fn halted(&self) -> bool {
        self.stop == Stop::Halted
    }
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Halted => write!(f, "every vertex halted"),
            Stop::SuperstepLimit { active, in_flight } => write!(
                f,
                "stopped at the superstep limit with {active} vertices active and {in_flight} messages in flight; the values are not final"
            ),
        }
    }
}

/// Runs `program` on `g` until every vertex halts or `cfg.max_supersteps` have run.
///
/// # Errors
/// [`crate::Error::Invalid`] when the program misuses the API: a message to an id outside
/// the graph, or [`Context::send`] under pull delivery.
pub fn run<P: Program, G: GraphView>(
    g: &G,
    program: &P,
    cfg: &Config,
) -> Result<Outcome<P::Value>> {
    engine::run(g, program, cfg)
}

/// [`run`] on a snapshot, through its fastest view (the flat CSR of a compacted store, the
/// layered index of a live one).
pub fn run_snapshot<P: Program>(
    s: &Snapshot,
    program: &P,
    cfg: &Config,
) -> Result<Outcome<P::Value>> {
    crate::with_view!(s, |g| run(g, program, cfg))
}

#[cfg(test)]
mod tests;
