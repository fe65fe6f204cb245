//! A monotone vertex program kept current: the shipped `Components`, `Bfs` and `Sssp`, or
//! any program that implements [`crate::pregel::Monotone`]. Each step resumes the program
//! from its values on the graph before the batch ([`crate::pregel::resume`]).

use super::before::Old;
use super::changes::{Changes, Known};
use super::engine::Maintained;
use super::{Kind, Value};
use crate::pregel::{self, Config, Monotone};
use crate::snapshot::{Patched, Snapshot};
use crate::types::VertexId;
use crate::GraphView;

/// A program, its values, and how they read as [`Value`]s.
pub(crate) struct VertexProgram<P: Monotone> {
    program: P,
    values: Vec<P::Value>,
    cfg: Config,
    kind: Kind,
    to_value: fn(&P::Value) -> Value,
}

impl<P: Monotone> VertexProgram<P> {
    pub(crate) fn new(program: P, kind: Kind, to_value: fn(&P::Value) -> Value) -> Self {
        VertexProgram {
            program,
            values: Vec::new(),
            cfg: Config::default(),
            kind,
            to_value,
        }
    }
}

impl<P> Maintained for VertexProgram<P>
where
    P: Monotone + Send,
    P::Value: PartialEq,
{
    fn compute(&mut self, g: &Snapshot) {
        // A superstep limit is the only way a run of these programs fails: their values
        // then stand as far as they got, as `run` leaves them.
        self.values = match pregel::run_snapshot(g, &self.program, &self.cfg) {
            Ok(out) => out.values,
            Err(_) => (0..g.num_vertices() as VertexId)
                .map(|v| self.program.init(v))
                .collect(),
        };
    }

    fn update(&mut self, old: &Old<'_>, new: &Patched, ch: &Changes) -> Vec<VertexId> {
        debug_assert!(!new.is_patched(), "kernels that sweep take snapshots");
        // Their updates read each edge's state before: only net changes have it.
        assert!(
            ch.known == Known::Both,
            "kernels that sweep take net changes"
        );
        let new = new.base();
        let before = self.values.clone();
        let resumed = pregel::resume(
            old,
            new,
            &self.program,
            &self.cfg,
            std::mem::take(&mut self.values),
            &ch.edges,
            &ch.vertices,
        );
        match resumed {
            Ok(out) => self.values = out.values,
            Err(_) => self.compute(new),
        }
        (0..self.values.len())
            .filter(|&v| before.get(v) != Some(&self.values[v]))
            .map(|v| v as VertexId)
            .collect()
    }

    fn value(&self, v: VertexId) -> Value {
        (self.to_value)(&self.values[v as usize])
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    fn kind(&self) -> Kind {
        self.kind
    }

    fn bytes(&self) -> usize {
        self.values.capacity() * std::mem::size_of::<P::Value>()
    }
}
