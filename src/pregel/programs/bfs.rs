//! Breadth-first search depths (Graphalytics BFS) as a vertex program: the source starts at
//! depth 0, and a vertex that first hears depth `d` takes it and tells its out-neighbours
//! `d + 1`. Same results as [`crate::algo::graphalytics::bfs`]. Pull delivery: a small
//! frontier is pushed and a large one gathered, as in direction-optimising BFS.

use crate::pregel::{Context, Delivery, Messages, Min, Monotone, Program};
use crate::types::UNREACHABLE;
use crate::{GraphView, VertexId};

/// Hop distance from `source` along out-edges ([`UNREACHABLE`] where none).
pub struct Bfs {
    /// The root.
    pub source: VertexId,
}

impl Program for Bfs {
    type Value = i64;
    type Message = u32;
    type Combiner = Min;
    const DELIVERY: Delivery = Delivery::Pull;

    #[inline]
    fn init(&self, _: VertexId) -> i64 {
        UNREACHABLE
    }

    #[inline]
    fn compute<G: GraphView>(&self, ctx: &mut Context<'_, Self, G>, messages: Messages<'_, u32>) {
        if ctx.announcing() {
            let d = if ctx.vertex() == self.source {
                0
            } else {
                *ctx.value()
            };
            if d != UNREACHABLE {
                ctx.set_value(d);
                ctx.broadcast(d as u32 + 1);
            }
            return ctx.vote_to_halt();
        }
        let heard = if ctx.vertex() == self.source {
            Some(0)
        } else {
            messages.into_iter().min()
        };
        if let Some(d) = heard.filter(|&d| i64::from(d) < *ctx.value()) {
            ctx.set_value(i64::from(d));
            ctx.broadcast(d + 1);
        }
        ctx.vote_to_halt();
    }
}

/// A depth is one more than an in-neighbor's.
impl Monotone for Bfs {
    fn depends(&self, x: &i64, _: f64, y: &i64) -> bool {
        *x != UNREACHABLE && *y == *x + 1
    }
}
