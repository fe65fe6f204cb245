//! PageRank as Graphalytics defines it (fixed iterations, the sinks' rank spread over every
//! vertex), in pull mode like iPregel's PageRank: every vertex broadcasts its share, every
//! vertex gathers its in-neighbours'. The sinks' mass travels through a sum aggregator.
//! Same results as [`crate::algo::graphalytics::pagerank`], up to summation order and that
//! kernel's rounding of contributions to `f32` (within 1e-6 relative): messages here are
//! `f64`.

use crate::pregel::{Aggregate, Context, Delivery, Messages, Program, Sum};
use crate::{GraphView, VertexId};

/// PageRank with `damping`, after exactly `iterations` rounds.
pub struct PageRank {
    /// Damping factor (0.85).
    pub damping: f64,
    /// Rounds after the initial 1/|V|.
    pub iterations: u32,
}

/// The aggregator that carries the sinks' total rank.
const SINKS: usize = 0;

impl Program for PageRank {
    type Value = f64;
    type Message = f64;
    type Combiner = Sum;
    const DELIVERY: Delivery = Delivery::Pull;
    const AGGREGATES: &'static [Aggregate] = &[Aggregate::Sum];

    #[inline]
    fn init(&self, _: VertexId) -> f64 {
        0.0
    }

    #[inline]
    fn compute<G: GraphView>(&self, ctx: &mut Context<'_, Self, G>, messages: Messages<'_, f64>) {
        let n = ctx.num_vertices() as f64;
        let rank = if ctx.superstep() == 0 {
            1.0 / n
        } else {
            let incoming: f64 = messages.into_iter().sum();
            (1.0 - self.damping) / n + self.damping * (incoming + ctx.aggregated(SINKS) / n)
        };
        ctx.set_value(rank);
        if ctx.superstep() == self.iterations {
            return ctx.vote_to_halt();
        }
        match ctx.out_degree() {
            0 => ctx.aggregate(SINKS, rank),
            d => ctx.broadcast(rank / d as f64),
        }
    }
}
