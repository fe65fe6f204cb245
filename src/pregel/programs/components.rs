//! Weakly connected components by minimum-label propagation (the classic Pregel program):
//! each vertex starts with its own id, and passes on any smaller label it hears along its
//! out- and in-edges. A vertex's final label is the smallest dense id in its component, the
//! same label [`crate::algo::graphalytics::wcc`] gives. Pull delivery: the dense early
//! supersteps gather, and the sparse late ones push the few changed labels.

use crate::pregel::{Context, Delivery, Edges, Messages, Min, Monotone, Program};
use crate::{GraphView, VertexId};

/// Weakly connected components: labels are the smallest dense id of each component.
pub struct Components;

impl Program for Components {
    type Value = VertexId;
    type Message = VertexId;
    type Combiner = Min;
    const DELIVERY: Delivery = Delivery::Pull;
    const EDGES: Edges = Edges::Both;

    #[inline]
    fn init(&self, v: VertexId) -> VertexId {
        v
    }

    #[inline]
    fn compute<G: GraphView>(
        &self,
        ctx: &mut Context<'_, Self, G>,
        messages: Messages<'_, VertexId>,
    ) {
        let label = *ctx.value();
        let best = if ctx.superstep() == 0 {
            // The neighbours' ids are their initial labels: reading them now gives what
            // the first round of messages would bring, one superstep sooner.
            let mut m = label;
            ctx.for_each_out_neighbor(|u| m = m.min(u));
            if !ctx.graph().is_undirected() {
                ctx.for_each_in_neighbor(|u| m = m.min(u));
            }
            m
        } else {
            messages.into_iter().fold(label, VertexId::min)
        };
        if ctx.superstep() == 0 || best < label || ctx.announcing() {
            ctx.set_value(best);
            ctx.broadcast(best);
        }
        ctx.vote_to_halt();
    }
}

/// A label is the smallest one heard: it came from a neighbor holding the same label.
impl Monotone for Components {
    fn depends(&self, x: &VertexId, _: f64, y: &VertexId) -> bool {
        x == y
    }
}
