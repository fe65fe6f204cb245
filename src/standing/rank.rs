//! PageRank kept within its tolerance of the fixed point (`pr-tol`).
//!
//! After a batch the scores of the graph before it are the start of Jacobi sweeps on the
//! graph after it ([`crate::algo::pr_tolerance::pagerank_from`]): the sweeps stop at the
//! same bound as a recompute's, so the maintained scores are as close to the new fixed
//! point as a recompute's are guaranteed to be, after the few sweeps a small change needs
//! instead of the many a uniform start does.
//!
//! Every score moves a little with every batch. A change is reported only when a score
//! has moved by more than `tolerance / |V|` since it was last reported, so that the scores
//! a reader rebuilt from the reports stay within the tolerance of the ones kept (L1).

use super::engine::{Changes, Maintained};
use super::{Kind, Value};
use crate::algo::pr_tolerance::pagerank_from;
use crate::snapshot::Snapshot;
use crate::types::VertexId;
use crate::{GraphView, Result};

pub(crate) struct Rank {
    damping: f64,
    tolerance: f64,
    scores: Vec<f64>,
    /// Sweeps of the last computation, and its bound.
    pub(crate) sweeps: u32,
}

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
            scores: Vec::new(),
            sweeps: 0,
        })
    }
}

impl Maintained for Rank {
    fn compute(&mut self, g: &Snapshot) {
        let s = pagerank_from(g, self.damping, self.tolerance, Vec::new());
        self.scores = s.scores;
        self.sweeps = s.sweeps;
    }

    fn update(&mut self, _old: &Snapshot, new: &Snapshot, _ch: &Changes) -> Vec<VertexId> {
        let start = std::mem::take(&mut self.scores);
        let s = pagerank_from(new, self.damping, self.tolerance, start);
        self.scores = s.scores;
        self.sweeps = s.sweeps;
        (0..new.num_vertices() as VertexId).collect()
    }

    fn value(&self, v: VertexId) -> Value {
        Value::Float(self.scores[v as usize])
    }

    fn len(&self) -> usize {
        self.scores.len()
    }

    fn bytes(&self) -> usize {
        self.scores.capacity() * 8
    }

    fn kind(&self) -> Kind {
        Kind::Float
    }

    fn slack(&self, g: &Snapshot) -> f64 {
        let live = (0..g.num_vertices() as VertexId)
            .filter(|&v| g.vertex_exists(v))
            .count();
        self.tolerance / live.max(1) as f64
    }
}
