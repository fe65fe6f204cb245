//! What `compute` sees of the world: its vertex, its edges, its messages, and the ways out
//! (messages, aggregators, the vote to halt).

use super::degrees::Degrees;
use super::program::{Aggregate, Combiner, Message, Program};
use crate::{GraphView, VertexId};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The messages a vertex received in the previous superstep: at most one when the program
/// combines them, else all of them, in no particular order.
#[derive(Clone, Copy, Debug)]
pub struct Messages<'a, M> {
    one: Option<M>,
    many: &'a [M],
}

impl<'a, M: Copy> Messages<'a, M> {
    /// No message.
    pub(crate) fn none() -> Self {
        Messages {
            one: None,
            many: &[],
        }
    }

    pub(crate) fn one(m: M) -> Self {
        Messages {
            one: Some(m),
            many: &[],
        }
    }

    pub(crate) fn many(ms: &'a [M]) -> Self {
        Messages {
            one: None,
            many: ms,
        }
    }

    /// Whether no message arrived.
    pub fn is_empty(&self) -> bool {
        self.one.is_none() && self.many.is_empty()
    }

    /// How many messages arrived (after combining).
    pub fn len(&self) -> usize {
        self.one.is_some() as usize + self.many.len()
    }

    /// The messages, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = M> + 'a {
        self.one.into_iter().chain(self.many.iter().copied())
    }
}

impl<'a, M: Copy> IntoIterator for Messages<'a, M> {
    type Item = M;
    type IntoIter =
        std::iter::Chain<std::option::IntoIter<M>, std::iter::Copied<std::slice::Iter<'a, M>>>;
    fn into_iter(self) -> Self::IntoIter {
        self.one.into_iter().chain(self.many.iter().copied())
    }
}

/// Where push-mode sends go in the current superstep.
pub(crate) enum Outbox<'a> {
    /// Combined in place: one message slot (its bits) and one "has mail" bit per vertex.
    Combined {
        slots: &'a [AtomicU64],
        has: &'a [AtomicU64],
    },
    /// Appended to the sending thread's buffer, sorted out after the superstep.
    Lists,
    /// Pull delivery: only broadcasts, recorded per vertex by the engine.
    Pull,
}

/// What every vertex of one superstep shares (read-only).
pub(crate) struct Step<'a> {
    pub superstep: u32,
    /// A resumed run's first superstep ([`Context::announcing`]).
    pub announcing: bool,
    /// Existing vertices.
    pub live: usize,
    /// Size of the id space.
    pub n: usize,
    /// The aggregators' results of the previous superstep.
    pub aggregated: &'a [f64],
    pub outbox: Outbox<'a>,
    /// Broadcasts travel along in-edges too.
    pub both: bool,
    pub degrees: &'a Degrees,
}

/// One thread's tallies while it runs a range of vertices (no sharing, hence cells).
pub(crate) struct Local<M> {
    /// Messages sent (combined or not).
    pub sent: Cell<u64>,
    /// Edges read by the engine and by `compute`.
    pub edges: Cell<u64>,
    /// This range's contributions to each aggregator.
    pub aggs: Vec<Cell<f64>>,
    /// The first misuse of the API, reported after the superstep.
    pub error: RefCell<Option<String>>,
    /// Push sends without a combiner.
    pub lists: RefCell<Vec<(VertexId, M)>>,
}

impl<M> Local<M> {
    pub(crate) fn new(aggregates: &[Aggregate]) -> Self {
        Local {
            sent: Cell::new(0),
            edges: Cell::new(0),
            aggs: aggregates.iter().map(|a| Cell::new(a.identity())).collect(),
            error: RefCell::new(None),
            lists: RefCell::new(Vec::new()),
        }
    }

    pub(crate) fn fail(&self, msg: impl FnOnce() -> String) {
        let mut e = self.error.borrow_mut();
        if e.is_none() {
            *e = Some(msg());
        }
    }

    pub(crate) fn add_edges(&self, k: u64) {
        self.edges.set(self.edges.get() + k);
    }
}

/// Combines `m` into vertex `w`'s mailbox and marks that `w` has mail. Lock-free: a
/// compare-and-swap loop, skipped when the combined value would not change (a minimum that
/// is not smaller), which spares most writes in BFS, SSSP and label propagation.
#[inline]
pub(crate) fn deliver<M: Message, C: Combiner<M>>(
    slots: &[AtomicU64],
    has: &[AtomicU64],
    w: usize,
    m: M,
) {
    let slot = &slots[w];
    let mut old = slot.load(Relaxed);
    loop {
        let new = C::combine(M::from_bits(old), m).to_bits();
        if new == old {
            break;
        }
        match slot.compare_exchange_weak(old, new, Relaxed, Relaxed) {
            Ok(_) => break,
            Err(x) => old = x,
        }
    }
    let word = &has[w / 64];
    let bit = 1u64 << (w % 64);
    if word.load(Relaxed) & bit == 0 {
        word.fetch_or(bit, Relaxed);
    }
}

/// A vertex's view of the world during `compute`.
pub struct Context<'a, P: Program, G: GraphView> {
    pub(crate) g: &'a G,
    pub(crate) v: VertexId,
    pub(crate) value: &'a mut P::Value,
    pub(crate) halted: bool,
    pub(crate) step: &'a Step<'a>,
    pub(crate) local: &'a Local<P::Message>,
    /// Pull delivery: what this vertex broadcast this superstep.
    pub(crate) broadcast: Option<P::Message>,
}

impl<P: Program, G: GraphView> Context<'_, P, G> {
    /// The vertex being computed (its dense id).
    #[inline]
    pub fn vertex(&self) -> VertexId {
        self.v
    }

    /// The current superstep, from 0.
    #[inline]
    pub fn superstep(&self) -> u32 {
        self.step.superstep
    }

    /// Whether this is the first superstep of a resumed run ([`crate::pregel::resume`]):
    /// the vertex has no messages and should send what it sends after improving its value
    /// (its value is current: it may have been reset by trimming). Always false in a run
    /// from scratch.
    #[inline]
    pub fn announcing(&self) -> bool {
        self.step.announcing
    }

    /// Existing vertices in the graph (deleted ones excluded).
    #[inline]
    pub fn num_vertices(&self) -> usize {
        self.step.live
    }

    /// The graph being run on, for anything the methods here do not cover (external ids).
    #[inline]
    pub fn graph(&self) -> &G {
        self.g
    }

    /// The vertex's value.
    #[inline]
    pub fn value(&self) -> &P::Value {
        self.value
    }

    /// The vertex's value, to change in place.
    #[inline]
    pub fn value_mut(&mut self) -> &mut P::Value {
        self.value
    }

    /// Replaces the vertex's value.
    #[inline]
    pub fn set_value(&mut self, x: P::Value) {
        *self.value = x;
    }

    /// Out-degree of the vertex.
    #[inline]
    pub fn out_degree(&self) -> usize {
        self.step.degrees.out(self.g, self.v)
    }

    /// In-degree of the vertex.
    #[inline]
    pub fn in_degree(&self) -> usize {
        self.step.degrees.inn(self.g, self.v)
    }

    /// Calls `f(neighbour, weight)` for each out-edge (weight 1 in unweighted stores).
    #[inline]
    pub fn for_each_out_edge(&self, mut f: impl FnMut(VertexId, f64)) {
        let mut k = 0;
        self.g.for_each_out_weighted(self.v, |w, x| {
            k += 1;
            f(w, x)
        });
        self.local.add_edges(k);
    }

    /// Calls `f` for each out-neighbour.
    #[inline]
    pub fn for_each_out_neighbor(&self, mut f: impl FnMut(VertexId)) {
        let mut k = 0;
        self.g.for_each_out(self.v, |w| {
            k += 1;
            f(w)
        });
        self.local.add_edges(k);
    }

    /// Calls `f` for each in-neighbour.
    #[inline]
    pub fn for_each_in_neighbor(&self, mut f: impl FnMut(VertexId)) {
        let mut k = 0;
        self.g.for_each_in(self.v, |w| {
            k += 1;
            f(w)
        });
        self.local.add_edges(k);
    }

    /// Sends `m` to vertex `to` for the next superstep (push delivery only). A message to a
    /// deleted vertex is dropped; one to an id outside the graph, or any `send` under pull
    /// delivery, makes the run fail with an error after this superstep.
    #[inline]
    pub fn send(&self, to: VertexId, m: P::Message) {
        let w = to as usize;
        if w >= self.step.n {
            let n = self.step.n;
            self.local.fail(|| {
                format!("vertex program sent a message to vertex {to}, outside the graph's 0..{n}")
            });
            return;
        }
        self.local.sent.set(self.local.sent.get() + 1);
        match self.step.outbox {
            Outbox::Combined { slots, has } => deliver::<_, P::Combiner>(slots, has, w, m),
            Outbox::Lists => self.local.lists.borrow_mut().push((to, m)),
            Outbox::Pull => self.local.fail(|| {
                "vertex program called send() under pull delivery, which allows only broadcast(); run it with push delivery".into()
            }),
        }
    }

    /// Sends `m` to every neighbour along the program's [`Edges`](super::Edges): out-neighbours,
    /// and in-neighbours too for `Edges::Both`. Under pull delivery a vertex broadcasts at
    /// most one value per superstep (several are combined, or fail without a combiner).
    #[inline]
    pub fn broadcast(&mut self, m: P::Message) {
        if let Outbox::Pull = self.step.outbox {
            self.broadcast = match self.broadcast {
                None => Some(m),
                Some(old) if <P::Combiner as Combiner<_>>::COMBINES => {
                    Some(<P::Combiner as Combiner<_>>::combine(old, m))
                }
                Some(old) => {
                    self.local.fail(|| {
                        "vertex program broadcast twice in one superstep under pull delivery without a combiner".into()
                    });
                    Some(old)
                }
            };
            return;
        }
        let (g, v, both) = (self.g, self.v, self.step.both);
        let mut k = 0u64;
        match self.step.outbox {
            Outbox::Combined { slots, has } => {
                let mut put = |w: VertexId| {
                    k += 1;
                    deliver::<_, P::Combiner>(slots, has, w as usize, m)
                };
                g.for_each_out(v, &mut put);
                if both {
                    g.for_each_in(v, &mut put);
                }
            }
            _ => {
                let mut lists = self.local.lists.borrow_mut();
                let mut put = |w: VertexId| {
                    k += 1;
                    lists.push((w, m))
                };
                g.for_each_out(v, &mut put);
                if both {
                    g.for_each_in(v, &mut put);
                }
            }
        }
        self.local.add_edges(k);
        self.local.sent.set(self.local.sent.get() + k);
    }

    /// Votes to halt: the vertex is not run again until a message arrives for it.
    #[inline]
    pub fn vote_to_halt(&mut self) {
        self.halted = true;
    }

    /// Contributes `x` to aggregator `i` (an index into [`Program::AGGREGATES`]).
    ///
    /// # Panics
    /// If the program declares no aggregator `i` (a bug in the program).
    #[inline]
    pub fn aggregate(&self, i: usize, x: f64) {
        let c = &self.local.aggs[i];
        c.set(P::AGGREGATES[i].fold(c.get(), x));
    }

    /// Aggregator `i`'s result over the previous superstep (its identity in superstep 0).
    ///
    /// # Panics
    /// If the program declares no aggregator `i` (a bug in the program).
    #[inline]
    pub fn aggregated(&self, i: usize) -> f64 {
        self.step.aggregated[i]
    }
}
