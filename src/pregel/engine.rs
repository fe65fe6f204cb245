//! The superstep loop: schedule, compute, deliver, until every vertex halts.
//!
//! Threads: one rayon task per edge-balanced range of vertices ([`Chunks`]). Within a
//! superstep a task owns its range's slice of every per-vertex array it writes (values,
//! active bits, its own mailboxes and broadcast slots), so those need no synchronisation.
//! The only memory written across ranges is the *next* superstep's push mailboxes, and those
//! are atomics ([`deliver`]) or per-task buffers sorted out after the superstep. A superstep
//! ends when every task has returned (rayon's join is the barrier); nothing is held across
//! supersteps but the arrays themselves.

use super::chunks::{self, Chunks};
use super::context::{Context, Local, Messages, Outbox, Step};
use super::degrees::{Degrees, InDegrees};
use super::program::{Aggregate, Combiner, Delivery, Edges, Message, Program};
use super::{Combining, Config, Outcome, StepStats, Stop};
use crate::{Error, GraphView, Result, VertexId};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Pull delivery without a combiner switches from "every vertex checks its in-neighbours"
/// to "mark the recipients of the few broadcasters first" when the broadcasters' edges are
/// fewer than this fraction of all edges (GAPBS's direction-optimising BFS uses 1/15 for
/// the same trade).
const SPARSE_DIVISOR: u64 = 20;

/// Pull delivery with a combiner pushes the broadcasts into the recipients' mailboxes
/// instead of letting every vertex gather when the broadcasters' edges are fewer than this
/// fraction of all edges: a pushed edge (a compare-and-swap on a random mailbox) costs about
/// twice a gathered one (a sequential read and a combine) on Kron20.
const PUSH_DIVISOR: u64 = 2;

/// Runs `program` on `g` until every vertex halts or the superstep limit.
pub(crate) fn run<P: Program, G: GraphView>(
    g: &G,
    program: &P,
    cfg: &Config,
) -> Result<Outcome<P::Value>> {
    Engine::new(g, program, cfg).run(None)
}

/// Where a resumed run starts: every vertex's value, and the vertices that announce theirs
/// in its first superstep (see [`super::resume`]).
pub(crate) struct Start<V> {
    pub values: Vec<V>,
    /// One bit per vertex.
    pub announce: Vec<u64>,
}

/// Runs `program` on `g` from `start`: its first superstep (numbered 1, so that no
/// program takes it for its superstep 0) runs the announcing vertices only, with
/// [`super::Context::announcing`] true; then supersteps go on as in [`run`].
pub(crate) fn run_from<P: Program, G: GraphView>(
    g: &G,
    program: &P,
    cfg: &Config,
    start: Start<P::Value>,
) -> Result<Outcome<P::Value>> {
    debug_assert_eq!(start.values.len(), g.num_vertices());
    Engine::new(g, program, cfg).run(Some(start))
}

/// What a range of vertices reports at the end of a superstep.
struct PartResult<M> {
    /// Vertices whose compute ran.
    computed: u64,
    /// Vertices that did not vote to halt.
    active: u64,
    /// Push: messages sent. Pull: edges the broadcasts travel along.
    in_flight: u64,
    /// Pull: vertices that broadcast along at least one edge.
    broadcasters: u64,
    edges: u64,
    aggs: Vec<f64>,
    error: Option<String>,
    lists: Vec<(VertexId, M)>,
}

/// The per-vertex arrays a range owns in one superstep.
struct Part<'s, V, M> {
    lo: usize,
    hi: usize,
    values: &'s mut [V],
    active: &'s mut [u64],
    /// Push, combined: this superstep's mailboxes (emptied as they are read).
    slots: &'s mut [AtomicU64],
    /// Push: which vertices have mail this superstep (cleared as read).
    has: &'s mut [AtomicU64],
    /// Pull: the broadcast values and bits written this superstep.
    bval: &'s mut [M],
    bbit: &'s mut [u64],
}

/// Pull delivery: which vertices gather in a superstep.
#[derive(Clone, Copy)]
enum Gather<'s> {
    /// Nobody broadcast: nobody has mail.
    Nothing,
    /// Few broadcasters, no combiner: their recipients were marked in this bitmap.
    Sparse(&'s [AtomicU64]),
    /// Few broadcasters, a combiner: the broadcasts were already combined into these
    /// mailboxes, and the recipients marked in the bitmap, as push delivery leaves them.
    Pushed {
        slots: &'s [AtomicU64],
        has: &'s [AtomicU64],
    },
    /// Many: every vertex checks its in-neighbours; `all` when every vertex that has an
    /// edge to follow broadcast, so no broadcast bit needs checking.
    Dense { all: bool },
}

/// Pull delivery: the previous superstep's broadcasts, read by every range. With a
/// combiner, `bval` holds the combiner's identity wherever `bbit` is clear, so gathering
/// combines every in-neighbour's value without a branch on its bit.
struct PullIn<'s, M> {
    bval: &'s [M],
    bbit: &'s [u64],
    gather: Gather<'s>,
}

/// Push delivery without a combiner: the messages of one superstep, grouped by recipient.
struct Inbox<M> {
    offsets: Vec<u64>,
    msgs: Vec<M>,
}

/// A run's messages, double-buffered: what the current superstep reads (`cur_*`) and what
/// it writes for the next (`next_*`), swapped between supersteps.
struct Mailboxes<M> {
    /// Push, combined: one mailbox per vertex (a message's bits).
    cur_slots: Vec<AtomicU64>,
    next_slots: Vec<AtomicU64>,
    /// Push: which vertices have mail.
    cur_has: Vec<AtomicU64>,
    next_has: Vec<AtomicU64>,
    /// Push without a combiner: the messages of the superstep, by recipient.
    inbox: Option<Inbox<M>>,
    /// Pull: each vertex's broadcast value and bit.
    cur_bval: Vec<M>,
    next_bval: Vec<M>,
    cur_bbit: Vec<u64>,
    next_bbit: Vec<u64>,
}

impl<M: Message> Mailboxes<M> {
    /// After a push superstep: what it sent becomes what the next reads (`lists`, without
    /// a combiner, delivered into an inbox).
    fn after_push(&mut self, n: usize, combined: bool, lists: Vec<Vec<(VertexId, M)>>) {
        debug_assert!(self.cur_has.iter().all(|w| w.load(Relaxed) == 0));
        std::mem::swap(&mut self.cur_slots, &mut self.next_slots);
        std::mem::swap(&mut self.cur_has, &mut self.next_has);
        if !combined {
            self.inbox = Some(deliver_lists(n, lists, &self.cur_has));
        }
    }

    /// After a pull superstep: its broadcasts become what the next gathers.
    fn after_pull(&mut self) {
        std::mem::swap(&mut self.cur_bval, &mut self.next_bval);
        std::mem::swap(&mut self.cur_bbit, &mut self.next_bbit);
    }
}

/// What a run's supersteps add up to so far.
struct Totals {
    supersteps: u32,
    edges: u64,
    messages: u64,
    /// Vertices that did not vote to halt in the last superstep.
    active: u64,
    /// Messages (pull: broadcast edges) the last superstep sent.
    in_flight: u64,
    /// The aggregators' results of the last superstep.
    aggregated: Vec<f64>,
    steps: Vec<StepStats>,
    /// The next superstep is a resumed run's first: its vertices announce their values.
    announcing: bool,
}

impl Totals {
    /// Why the run stops before another superstep, if it does.
    fn stop(&self, max_supersteps: u32) -> Option<Stop> {
        if self.active == 0 && self.in_flight == 0 {
            return Some(Stop::Halted);
        }
        (self.supersteps >= max_supersteps).then_some(Stop::SuperstepLimit {
            active: self.active,
            in_flight: self.in_flight,
        })
    }

    /// Adds a superstep's ranges' results, in range order (so float aggregates come out the
    /// same on every run); aggregates fold as `kinds` say.
    fn fold<M>(&mut self, results: Vec<PartResult<M>>, kinds: &[Aggregate]) -> Result<Folded<M>> {
        self.supersteps += 1;
        self.announcing = false;
        let mut f = Folded {
            lists: Vec::new(),
            broadcasters: 0,
            computed: 0,
        };
        let (mut act, mut fly) = (0, 0);
        let mut aggs: Vec<f64> = kinds.iter().map(|a| a.identity()).collect();
        for r in results {
            if let Some(e) = r.error {
                return Err(Error::Invalid(format!(
                    "superstep {}: {e}",
                    self.supersteps - 1
                )));
            }
            f.computed += r.computed;
            act += r.active;
            fly += r.in_flight;
            f.broadcasters += r.broadcasters;
            self.edges += r.edges;
            for ((a, x), kind) in aggs.iter_mut().zip(r.aggs).zip(kinds) {
                *a = kind.fold(*a, x);
            }
            if !r.lists.is_empty() {
                f.lists.push(r.lists);
            }
        }
        self.aggregated = aggs;
        self.messages += fly;
        (self.active, self.in_flight) = (act, fly);
        Ok(f)
    }
}

/// What one superstep's ranges sent and did, beyond the totals.
struct Folded<M> {
    /// Push without a combiner: each range's messages.
    lists: Vec<Vec<(VertexId, M)>>,
    /// Pull: vertices that broadcast along an edge.
    broadcasters: u64,
    /// Vertices whose compute ran.
    computed: u64,
}

/// What every vertex of a range reads in a superstep.
struct Reads<'r, 's, M> {
    step: &'r Step<'s>,
    pull: &'r PullIn<'s, M>,
    inbox: Option<&'r Inbox<M>>,
    local: &'r Local<M>,
}

/// What a range's vertices did in a superstep, counted as they run.
#[derive(Default)]
struct Tally {
    computed: u64,
    /// Vertices that did not vote to halt.
    active: u64,
    /// Pull: vertices that broadcast along at least one edge, and those edges.
    broadcasters: u64,
    bcast_edges: u64,
}

/// A vector of atomics, each `x`.
fn atomics(len: usize, x: u64) -> Vec<AtomicU64> {
    (0..len)
        .into_par_iter()
        .map(|_| AtomicU64::new(x))
        .collect()
}

struct Engine<'g, P: Program, G: GraphView> {
    g: &'g G,
    p: &'g P,
    cfg: &'g Config,
    n: usize,
    delivery: Delivery,
    combined: bool,
    /// Broadcasts follow in-edges too (`Edges::Both` on a directed graph).
    both: bool,
    chunks: Chunks,
    degrees: Degrees,
}

impl<'g, P: Program, G: GraphView> Engine<'g, P, G> {
    fn new(g: &'g G, p: &'g P, cfg: &'g Config) -> Self {
        let delivery = cfg.delivery.unwrap_or(P::DELIVERY);
        let both = P::EDGES == Edges::Both && !g.is_undirected();
        // Pull gathers along in-edges: balance by them, and keep them for a Both broadcast.
        let pull = delivery == Delivery::Pull;
        let inn = if both || pull {
            InDegrees::Cached
        } else {
            InDegrees::FromGraph
        };
        let degrees = Degrees::new(g, inn);
        let threads = rayon::current_num_threads();
        let chunks = Chunks::new(g.num_vertices(), threads, |v| match (pull, both) {
            (_, true) => degrees.out(g, v) + degrees.inn(g, v),
            (false, false) => degrees.out(g, v),
            (true, false) => degrees.inn(g, v),
        });
        Engine {
            g,
            p,
            cfg,
            n: g.num_vertices(),
            delivery,
            combined: <P::Combiner as Combiner<P::Message>>::COMBINES
                && cfg.combining == Combining::Combine,
            both,
            chunks,
            degrees,
        }
    }

    fn identity_bits(&self) -> u64 {
        if self.combined {
            <P::Combiner as Combiner<P::Message>>::identity().to_bits()
        } else {
            0
        }
    }

    fn run(self, start: Option<Start<P::Value>>) -> Result<Outcome<P::Value>> {
        let (n, words) = (self.n, self.n.div_ceil(64));
        let push = self.delivery == Delivery::Push;
        let resumed = start.is_some();
        let (mut values, mut active, live) = self.starting(start);
        let mut mail = self.mailboxes();
        // Pull delivery's recipients of few broadcasters, and their combined mail.
        let recipients = atomics(if push { 0 } else { words }, 0);
        let pushed_slots = atomics(
            if !push && self.combined { n } else { 0 },
            self.identity_bits(),
        );
        let mut gather = Gather::Nothing;
        let senders = if push { 0 } else { self.senders() };
        let mut t = Totals {
            supersteps: resumed as u32,
            announcing: resumed,
            edges: 0,
            messages: 0,
            active: live as u64,
            in_flight: 0,
            aggregated: P::AGGREGATES.iter().map(|a| a.identity()).collect(),
            steps: Vec::new(),
        };
        let stop = loop {
            if let Some(stop) = t.stop(self.cfg.max_supersteps) {
                break stop;
            }
            let started = std::time::Instant::now();
            let results = self.superstep(&mut values, &mut active, &mut mail, gather, (&t, live));
            let edges_before = t.edges;
            let f = t.fold(results, P::AGGREGATES)?;
            gather = if push {
                mail.after_push(n, self.combined, f.lists);
                Gather::Nothing
            } else {
                mail.after_pull();
                let (fly, all) = (t.in_flight, f.broadcasters == senders);
                self.next_gather(&mail, fly, all, &pushed_slots, &recipients, &mut t.edges)
            };
            t.steps.push(StepStats {
                computed: f.computed,
                active: t.active,
                messages: t.in_flight,
                edges: t.edges - edges_before,
                seconds: started.elapsed().as_secs_f64(),
            });
        };
        Ok(Outcome {
            values,
            supersteps: t.supersteps,
            stop,
            edges: t.edges,
            messages: t.messages,
            aggregates: t.aggregated,
            delivery: self.delivery,
            steps: t.steps,
        })
    }

    /// The values a run starts from, the vertices scheduled first and the existing ones'
    /// count: every existing vertex with its initial value, or where `start` says.
    fn starting(&self, start: Option<Start<P::Value>>) -> (Vec<P::Value>, Vec<u64>, usize) {
        let existing = self.existing_bits();
        let live = existing.iter().map(|w| w.count_ones() as usize).sum();
        match start {
            Some(s) => (s.values, s.announce, live),
            None => {
                let init = crate::types::par_vertices(self.n).map(|v| self.p.init(v));
                (init.collect(), existing, live)
            }
        }
    }

    /// One bit per vertex, set for the existing ones: every vertex runs superstep 0.
    fn existing_bits(&self) -> Vec<u64> {
        let (g, n) = (self.g, self.n);
        (0..n.div_ceil(64))
            .into_par_iter()
            .map(|w| {
                (w * 64..((w + 1) * 64).min(n))
                    .filter(|&v| g.vertex_exists(v as VertexId))
                    .fold(0u64, |acc, v| acc | 1 << (v % 64))
            })
            .collect()
    }

    /// Empty mailboxes for this run's delivery.
    fn mailboxes(&self) -> Mailboxes<P::Message> {
        let (n, words) = (self.n, self.n.div_ceil(64));
        let push = self.delivery == Delivery::Push;
        let id = self.identity_bits();
        let slot_len = if push && self.combined { n } else { 0 };
        let has_len = if push { words } else { 0 };
        let bval_len = if push { 0 } else { n };
        let blank = P::Message::from_bits(id);
        let bbit_len = words * !push as usize;
        Mailboxes {
            cur_slots: atomics(slot_len, id),
            next_slots: atomics(slot_len, id),
            cur_has: atomics(has_len, 0),
            next_has: atomics(has_len, 0),
            inbox: None,
            cur_bval: vec![blank; bval_len],
            next_bval: vec![blank; bval_len],
            cur_bbit: vec![0u64; bbit_len],
            next_bbit: vec![0u64; bbit_len],
        }
    }

    /// What every vertex of the next superstep shares: where its messages go, the
    /// aggregates of the last one.
    fn step<'s>(
        &'s self,
        t: &'s Totals,
        live: usize,
        (slots, has): (&'s [AtomicU64], &'s [AtomicU64]),
    ) -> Step<'s> {
        let outbox = match (self.delivery == Delivery::Push, self.combined) {
            (false, _) => Outbox::Pull,
            (true, true) => Outbox::Combined { slots, has },
            (true, false) => Outbox::Lists,
        };
        Step {
            superstep: t.supersteps,
            announcing: t.announcing,
            live,
            n: self.n,
            aggregated: &t.aggregated,
            outbox,
            both: self.both,
            degrees: &self.degrees,
        }
    }

    /// Runs one superstep (after `t`'s, with `live` vertices) on every range in parallel;
    /// the ranges' results, in range order.
    fn superstep(
        &self,
        values: &mut [P::Value],
        active: &mut [u64],
        mail: &mut Mailboxes<P::Message>,
        gather: Gather<'_>,
        (t, live): (&Totals, usize),
    ) -> Vec<PartResult<P::Message>> {
        let Mailboxes {
            cur_slots,
            next_slots,
            cur_has,
            next_has,
            inbox,
            cur_bval,
            next_bval,
            cur_bbit,
            next_bbit,
        } = mail;
        let step = &self.step(t, live, (next_slots, next_has));
        let pull_in = PullIn {
            bval: cur_bval,
            bbit: cur_bbit,
            gather,
        };
        let parts = self.parts(values, active, cur_slots, cur_has, next_bval, next_bbit);
        let results: Vec<PartResult<P::Message>> = parts
            .into_par_iter()
            .map(|part| self.run_part(part, step, &pull_in, inbox.as_ref()))
            .collect();
        debug_assert_eq!(results.len(), self.chunks.bounds.len().saturating_sub(1));
        results
    }

    /// Pull delivery: how the next superstep gathers the `fly` edges the broadcasts just
    /// made travel along (`all`: every vertex with an edge to follow broadcast). Few of
    /// them are pushed into `slots` (with a combiner) or their recipients marked in
    /// `recipients` (without), counting the edges pushed.
    fn next_gather<'s>(
        &self,
        mail: &Mailboxes<P::Message>,
        fly: u64,
        all: bool,
        slots: &'s [AtomicU64],
        recipients: &'s [AtomicU64],
        edges: &mut u64,
    ) -> Gather<'s> {
        let edges_along = self.g.num_edges() * (1 + self.both as u64);
        if fly == 0 {
            Gather::Nothing
        } else if self.combined && fly * PUSH_DIVISOR < edges_along {
            self.push_broadcasts(&mail.cur_bbit, &mail.cur_bval, slots, recipients);
            *edges += fly;
            Gather::Pushed {
                slots,
                has: recipients,
            }
        } else if !self.combined && fly * SPARSE_DIVISOR < edges_along {
            self.mark_recipients(&mail.cur_bbit, recipients);
            Gather::Sparse(recipients)
        } else {
            Gather::Dense { all }
        }
    }

    /// Splits the arrays a superstep writes into one [`Part`] per range.
    #[allow(clippy::too_many_arguments)]
    fn parts<'s>(
        &self,
        values: &'s mut [P::Value],
        active: &'s mut [u64],
        slots: &'s mut [AtomicU64],
        has: &'s mut [AtomicU64],
        bval: &'s mut [P::Message],
        bbit: &'s mut [u64],
    ) -> Vec<Part<'s, P::Value, P::Message>> {
        let b = &self.chunks.bounds;
        let k = self.chunks.len();
        let mut values = chunks::split(values, b).into_iter();
        let mut active = chunks::split_words(active, b).into_iter();
        let mut slots = split_maybe(slots, k, |s| chunks::split(s, b));
        let mut has = split_maybe(has, k, |s| chunks::split_words(s, b));
        let mut bval = split_maybe(bval, k, |s| chunks::split(s, b));
        let mut bbit = split_maybe(bbit, k, |s| chunks::split_words(s, b));
        (0..k)
            .map(|i| Part {
                lo: b[i],
                hi: b[i + 1],
                values: values.next().expect("one piece per range"),
                active: active.next().expect("one piece per range"),
                slots: slots.next().expect("one piece per range"),
                has: has.next().expect("one piece per range"),
                bval: bval.next().expect("one piece per range"),
                bbit: bbit.next().expect("one piece per range"),
            })
            .collect()
    }

    /// Runs one superstep on one range of vertices.
    fn run_part(
        &self,
        mut part: Part<'_, P::Value, P::Message>,
        step: &Step<'_>,
        pull: &PullIn<'_, P::Message>,
        inbox: Option<&Inbox<P::Message>>,
    ) -> PartResult<P::Message> {
        let local = Local::new(P::AGGREGATES);
        let reads = Reads {
            step,
            pull,
            inbox,
            local: &local,
        };
        let mut tally = Tally::default();
        let mut scratch: Vec<P::Message> = Vec::new();
        for wi in 0..part.active.len() {
            let act = part.active[wi];
            let mail = self.word_mail(&mut part, wi, pull);
            let now_active =
                self.run_word(&mut part, wi, (act, mail), &reads, &mut tally, &mut scratch);
            debug_assert_eq!(
                now_active & !(act | mail),
                0,
                "only scheduled vertices stay active"
            );
            part.active[wi] = now_active;
            tally.active += now_active.count_ones() as u64;
        }
        let push = self.delivery == Delivery::Push;
        PartResult {
            computed: tally.computed,
            active: tally.active,
            in_flight: if push {
                local.sent.get()
            } else {
                tally.bcast_edges
            },
            broadcasters: tally.broadcasters,
            edges: local.edges.get(),
            aggs: local.aggs.iter().map(|c| c.get()).collect(),
            error: local.error.into_inner(),
            lists: local.lists.into_inner(),
        }
    }

    /// The vertices of word `wi` of the range that have mail this superstep.
    #[inline]
    fn word_mail(
        &self,
        part: &mut Part<'_, P::Value, P::Message>,
        wi: usize,
        pull: &PullIn<'_, P::Message>,
    ) -> u64 {
        if self.delivery == Delivery::Push {
            return std::mem::take(part.has[wi].get_mut());
        }
        // This buffer was last written two supersteps ago: clear its broadcasts.
        let identity = P::Message::from_bits(self.identity_bits());
        let mut old = std::mem::take(&mut part.bbit[wi]);
        while old != 0 {
            part.bval[wi * 64 + old.trailing_zeros() as usize] = identity;
            old &= old - 1;
        }
        let word = part.lo / 64 + wi;
        match pull.gather {
            Gather::Nothing => 0,
            Gather::Sparse(m) => m[word].load(Relaxed),
            Gather::Pushed { has, .. } => has[word].swap(0, Relaxed),
            Gather::Dense { .. } => !0,
        }
    }

    /// Runs compute on the vertices of word `wi` that are active (`act`) or have mail
    /// (`mail`); the bits of those that did not vote to halt.
    #[inline]
    fn run_word(
        &self,
        part: &mut Part<'_, P::Value, P::Message>,
        wi: usize,
        (act, mail): (u64, u64),
        reads: &Reads<'_, '_, P::Message>,
        tally: &mut Tally,
        scratch: &mut Vec<P::Message>,
    ) -> u64 {
        let mut sched = act | mail;
        let mut now_active = 0u64;
        while sched != 0 {
            let b = sched.trailing_zeros() as usize;
            sched &= sched - 1;
            let v = (part.lo / 64 + wi) * 64 + b;
            if v >= part.hi {
                break;
            }
            let bit = 1u64 << b;
            // Pushed mail is taken (and the slot emptied) whether or not the vertex still
            // exists: a deleted vertex drops what was sent to it.
            let pushed = if mail & bit == 0 {
                None
            } else {
                self.take_pushed(part, v, reads)
            };
            let vid = v as VertexId;
            if !self.g.vertex_exists(vid) {
                continue;
            }
            let messages = match pushed {
                Some(m) => m,
                None if self.delivery == Delivery::Push || mail & bit == 0 => Messages::none(),
                None => self.gather(vid, reads.pull, reads.local, scratch),
            };
            if act & bit == 0 && messages.is_empty() {
                continue;
            }
            let mut ctx = Context {
                g: self.g,
                v: vid,
                value: &mut part.values[v - part.lo],
                halted: false,
                step: reads.step,
                local: reads.local,
                broadcast: None,
            };
            self.p.compute(&mut ctx, messages);
            tally.computed += 1;
            if !ctx.halted {
                now_active |= bit;
            }
            if let Some(m) = ctx.broadcast {
                part.bval[v - part.lo] = m;
                part.bbit[wi] |= bit;
                // Only broadcasts with an edge to travel count towards "every sender
                // broadcast" (`Gather::Dense { all }`), as `senders` counts.
                let d = self.degree_along(vid);
                tally.broadcasters += (d > 0) as u64;
                tally.bcast_edges += d;
            }
        }
        now_active
    }

    /// The mail already delivered to `v` (which has some): its combined mailbox, emptied,
    /// or its inbox's list; `None` where pull delivery still has to gather it.
    #[inline]
    fn take_pushed<'r>(
        &self,
        part: &mut Part<'_, P::Value, P::Message>,
        v: usize,
        reads: &Reads<'r, '_, P::Message>,
    ) -> Option<Messages<'r, P::Message>> {
        let push = self.delivery == Delivery::Push;
        match reads.pull.gather {
            _ if push && self.combined => {
                let slot = part.slots[v - part.lo].get_mut();
                let bits = std::mem::replace(slot, self.identity_bits());
                Some(Messages::one(P::Message::from_bits(bits)))
            }
            _ if push => {
                let ib = reads.inbox.expect("list delivery fills an inbox");
                let (a, z) = (ib.offsets[v] as usize, ib.offsets[v + 1] as usize);
                Some(Messages::many(&ib.msgs[a..z]))
            }
            Gather::Pushed { slots, .. } => {
                let bits = slots[v].swap(self.identity_bits(), Relaxed);
                Some(Messages::one(P::Message::from_bits(bits)))
            }
            _ => None,
        }
    }

    /// Pull delivery: combines the broadcasts of `v`'s in-neighbours (and out-neighbours for
    /// `Edges::Both`), or collects them into `scratch` without a combiner.
    #[inline]
    fn gather<'s>(
        &self,
        v: VertexId,
        pull: &PullIn<'_, P::Message>,
        local: &Local<P::Message>,
        scratch: &'s mut Vec<P::Message>,
    ) -> Messages<'s, P::Message> {
        type C<P> = <P as Program>::Combiner;
        let (bval, bbit) = (pull.bval, pull.bbit);
        let sent = |u: VertexId| bbit[u as usize / 64] >> (u % 64) & 1 != 0;
        let mut k = 0u64;
        let msgs = if self.combined {
            let mut acc = <C<P> as Combiner<P::Message>>::identity();
            self.for_each_source(v, |u| {
                k += 1;
                acc = <C<P> as Combiner<P::Message>>::combine(acc, bval[u as usize]);
            });
            // A vertex that did not broadcast holds the identity, so combining needed no
            // look at the bits; only a result equal to the identity leaves open whether
            // anyone broadcast (the identity itself, say), and then the bits say.
            let got = match pull.gather {
                Gather::Dense { all: true } => k > 0,
                _ if acc.to_bits() != self.identity_bits() => true,
                _ => {
                    let mut any = 0u64;
                    self.for_each_source(v, |u| any |= bbit[u as usize / 64] >> (u % 64));
                    any & 1 != 0
                }
            };
            if got {
                Messages::one(acc)
            } else {
                Messages::none()
            }
        } else {
            scratch.clear();
            self.for_each_source(v, |u| {
                k += 1;
                if sent(u) {
                    scratch.push(bval[u as usize]);
                }
            });
            Messages::many(scratch)
        };
        local.add_edges(k);
        msgs
    }

    /// Calls `f` for every vertex whose broadcast `v` gathers: its in-neighbours, and its
    /// out-neighbours too for `Edges::Both`.
    #[inline]
    fn for_each_source(&self, v: VertexId, mut f: impl FnMut(VertexId)) {
        self.g.for_each_in(v, &mut f);
        if self.both {
            self.g.for_each_out(v, &mut f);
        }
    }

    /// Edges a broadcast from `v` travels along.
    fn degree_along(&self, v: VertexId) -> u64 {
        let out = self.degrees.out(self.g, v) as u64;
        if self.both {
            out + self.degrees.inn(self.g, v) as u64
        } else {
            out
        }
    }

    /// Existing vertices that some other vertex gathers from (they have an edge to follow).
    fn senders(&self) -> u64 {
        crate::types::par_vertices(self.n)
            .filter(|&v| self.g.vertex_exists(v) && self.degree_along(v) > 0)
            .count() as u64
    }

    /// Pull with a combiner and few broadcasters: combines each broadcast in `bbit`/`bval`
    /// into its recipients' `slots` and marks them in `has`, as push delivery would have.
    /// `slots` hold the identity and `has` is clear on entry: every mark is taken, and its
    /// slot emptied, by the next superstep.
    fn push_broadcasts(
        &self,
        bbit: &[u64],
        bval: &[P::Message],
        slots: &[AtomicU64],
        has: &[AtomicU64],
    ) {
        type C<P> = <P as Program>::Combiner;
        debug_assert!(has.iter().all(|w| w.load(Relaxed) == 0));
        bbit.par_iter().enumerate().for_each(|(wi, &word)| {
            let mut b = word;
            while b != 0 {
                let u = wi * 64 + b.trailing_zeros() as usize;
                b &= b - 1;
                let m = bval[u];
                let send = |x: VertexId| {
                    super::context::deliver::<P::Message, C<P>>(slots, has, x as usize, m)
                };
                self.g.for_each_out(u as VertexId, send);
                if self.both {
                    self.g.for_each_in(u as VertexId, send);
                }
            }
        });
    }

    /// Sparse pull: marks in `mail` every vertex that gathers from a broadcaster in `bbit`.
    fn mark_recipients(&self, bbit: &[u64], mail: &[AtomicU64]) {
        mail.par_iter().for_each(|w| w.store(0, Relaxed));
        let mark = |x: VertexId| {
            let (w, bit) = (&mail[x as usize / 64], 1u64 << (x % 64));
            if w.load(Relaxed) & bit == 0 {
                w.fetch_or(bit, Relaxed);
            }
        };
        bbit.par_iter().enumerate().for_each(|(wi, &word)| {
            let mut b = word;
            while b != 0 {
                let u = (wi * 64 + b.trailing_zeros() as usize) as VertexId;
                b &= b - 1;
                self.g.for_each_out(u, mark);
                if self.both {
                    self.g.for_each_in(u, mark);
                }
            }
        });
    }
}

/// Splits `s` by `f`, or hands out `k` empty slices when the array is not used (length 0).
fn split_maybe<'s, T>(
    s: &'s mut [T],
    k: usize,
    f: impl FnOnce(&'s mut [T]) -> Vec<&'s mut [T]>,
) -> std::vec::IntoIter<&'s mut [T]> {
    if s.is_empty() {
        (0..k)
            .map(|_| <&mut [T]>::default())
            .collect::<Vec<_>>()
            .into_iter()
    } else {
        f(s).into_iter()
    }
}

/// Push delivery without a combiner: groups the ranges' `(recipient, message)` buffers by
/// recipient (a parallel counting sort) and marks the recipients in `has`.
fn deliver_lists<M: Message>(
    n: usize,
    lists: Vec<Vec<(VertexId, M)>>,
    has: &[AtomicU64],
) -> Inbox<M> {
    let count: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    lists.par_iter().for_each(|l| {
        for &(d, _) in l {
            if count[d as usize].fetch_add(1, Relaxed) == 0 {
                has[d as usize / 64].fetch_or(1 << (d % 64), Relaxed);
            }
        }
    });
    let mut offsets = Vec::with_capacity(n + 1);
    let mut at = 0u64;
    for c in &count {
        offsets.push(at);
        at += c.load(Relaxed);
        c.store(offsets[offsets.len() - 1], Relaxed);
    }
    offsets.push(at);
    let slots: Vec<AtomicU64> = (0..at).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    lists.par_iter().for_each(|l| {
        for &(d, m) in l {
            let p = count[d as usize].fetch_add(1, Relaxed);
            slots[p as usize].store(m.to_bits(), Relaxed);
        }
    });
    let msgs = slots
        .into_par_iter()
        .map(|s| M::from_bits(s.into_inner()))
        .collect();
    Inbox { offsets, msgs }
}
