//! Single-source shortest paths (Graphalytics SSSP) as a vertex program: a vertex that hears
//! a shorter distance takes it and offers each out-neighbour that distance plus the edge's
//! weight (a per-edge message, so push delivery). Same results as
//! [`crate::algo::graphalytics::sssp`].

use crate::pregel::{Context, Messages, Min, Monotone, Program};
use crate::{GraphView, VertexId};

/// Distance from `source` over edge weights (`f64::INFINITY` where unreachable).
pub struct Sssp {
    /// The root.
    pub source: VertexId,
}

impl Program for Sssp {
    type Value = f64;
    type Message = f64;
    type Combiner = Min;

    #[inline]
    fn init(&self, _: VertexId) -> f64 {
        f64::INFINITY
    }

    #[inline]
    fn compute<G: GraphView>(&self, ctx: &mut Context<'_, Self, G>, messages: Messages<'_, f64>) {
        let heard = if ctx.vertex() == self.source {
            Some(0.0)
        } else {
            messages.into_iter().reduce(f64::min)
        };
        let announced = match ctx.announcing() {
            true => heard.or(Some(*ctx.value())).filter(|d| d.is_finite()),
            false => heard.filter(|&d| d < *ctx.value()),
        };
        if let Some(d) = announced {
            ctx.set_value(d);
            ctx.for_each_out_edge(|w, weight| ctx.send(w, d + weight));
        }
        ctx.vote_to_halt();
    }
}

/// A distance is an in-neighbor's plus the edge's weight.
impl Monotone for Sssp {
    fn depends(&self, x: &f64, weight: f64, y: &f64) -> bool {
        y.is_finite() && *y == *x + weight
    }
}
