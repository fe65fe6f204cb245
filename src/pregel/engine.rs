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
use super::program::{Combiner, Delivery, Edges, Message, Program};
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
    Engine::new(g, program, cfg).run()
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

    fn run(self) -> Result<Outcome<P::Value>> {
        let (n, words) = (self.n, self.n.div_ceil(64));
        let g = self.g;
        let push = self.delivery == Delivery::Push;
        let mut values: Vec<P::Value> = crate::types::par_vertices(n)
            .map(|v| self.p.init(v))
            .collect();
        let mut active: Vec<u64> = (0..words)
            .into_par_iter()
            .map(|w| {
                (w * 64..((w + 1) * 64).min(n))
                    .filter(|&v| g.vertex_exists(v as VertexId))
                    .fold(0u64, |acc, v| acc | 1 << (v % 64))
            })
            .collect();
        let live: usize = active.iter().map(|w| w.count_ones() as usize).sum();
        let atomics = |len: usize, x: u64| -> Vec<AtomicU64> {
            (0..len)
                .into_par_iter()
                .map(|_| AtomicU64::new(x))
                .collect()
        };
        let id = self.identity_bits();
        let slot_len = if push && self.combined { n } else { 0 };
        let (mut cur_slots, mut next_slots) = (atomics(slot_len, id), atomics(slot_len, id));
        let has_len = if push { words } else { 0 };
        let (mut cur_has, mut next_has) = (atomics(has_len, 0), atomics(has_len, 0));
        let mut inbox: Option<Inbox<P::Message>> = None;
        let bval_len = if push { 0 } else { n };
        let blank = P::Message::from_bits(id);
        let (mut cur_bval, mut next_bval) = (vec![blank; bval_len], vec![blank; bval_len]);
        let (mut cur_bbit, mut next_bbit) = (
            vec![0u64; words * !push as usize],
            vec![0u64; words * !push as usize],
        );
        let mail = atomics(if push { 0 } else { words }, 0);
        let pushed_slots = atomics(if !push && self.combined { n } else { 0 }, id);
        let mut gather = Gather::Nothing;
        let senders = if push { 0 } else { self.senders() };
        let edges_along = g.num_edges() * (1 + self.both as u64);

        let mut aggregated: Vec<f64> = P::AGGREGATES.iter().map(|a| a.identity()).collect();
        let (mut supersteps, mut edges, mut messages) = (0u32, 0u64, 0u64);
        let (mut active_count, mut in_flight) = (live as u64, 0u64);
        let mut steps = Vec::new();
        let stop = loop {
            if active_count == 0 && in_flight == 0 {
                break Stop::Halted;
            }
            if supersteps >= self.cfg.max_supersteps {
                break Stop::SuperstepLimit {
                    active: active_count,
                    in_flight,
                };
            }
            let outbox = match (push, self.combined) {
                (false, _) => Outbox::Pull,
                (true, true) => Outbox::Combined {
                    slots: &next_slots,
                    has: &next_has,
                },
                (true, false) => Outbox::Lists,
            };
            let step = Step {
                superstep: supersteps,
                live,
                n,
                aggregated: &aggregated,
                outbox,
                both: self.both,
                degrees: &self.degrees,
            };
            let pull_in = PullIn {
                bval: &cur_bval,
                bbit: &cur_bbit,
                gather,
            };
            let b = &self.chunks.bounds;
            let started = std::time::Instant::now();
            let parts = self.parts(
                &mut values,
                &mut active,
                &mut cur_slots,
                &mut cur_has,
                &mut next_bval,
                &mut next_bbit,
            );
            let results: Vec<PartResult<P::Message>> = parts
                .into_par_iter()
                .map(|part| self.run_part(part, &step, &pull_in, inbox.as_ref()))
                .collect();
            debug_assert_eq!(results.len(), b.len().saturating_sub(1));
            supersteps += 1;
            let mut lists = Vec::new();
            let (mut act, mut fly, mut bcasters, mut computed) = (0, 0, 0, 0);
            let edges_before = edges;
            let mut aggs: Vec<f64> = P::AGGREGATES.iter().map(|a| a.identity()).collect();
            // Folded in range order, so float aggregates come out the same on every run.
            for r in results {
                if let Some(e) = r.error {
                    return Err(Error::Invalid(format!("superstep {}: {e}", supersteps - 1)));
                }
                computed += r.computed;
                act += r.active;
                fly += r.in_flight;
                bcasters += r.broadcasters;
                edges += r.edges;
                for ((a, x), kind) in aggs.iter_mut().zip(r.aggs).zip(P::AGGREGATES) {
                    *a = kind.fold(*a, x);
                }
                if !r.lists.is_empty() {
                    lists.push(r.lists);
                }
            }
            aggregated = aggs;
            messages += fly;
            (active_count, in_flight) = (act, fly);
            if push {
                debug_assert!(cur_has.iter().all(|w| w.load(Relaxed) == 0));
                std::mem::swap(&mut cur_slots, &mut next_slots);
                std::mem::swap(&mut cur_has, &mut next_has);
                if !self.combined {
                    inbox = Some(deliver_lists(n, lists, &cur_has));
                }
            } else {
                std::mem::swap(&mut cur_bval, &mut next_bval);
                std::mem::swap(&mut cur_bbit, &mut next_bbit);
                gather = if fly == 0 {
                    Gather::Nothing
                } else if self.combined && fly * PUSH_DIVISOR < edges_along {
                    self.push_broadcasts(&cur_bbit, &cur_bval, &pushed_slots, &mail);
                    edges += fly;
                    Gather::Pushed {
                        slots: &pushed_slots,
                        has: &mail,
                    }
                } else if !self.combined && fly * SPARSE_DIVISOR < edges_along {
                    self.mark_recipients(&cur_bbit, &mail);
                    Gather::Sparse(&mail)
                } else {
                    Gather::Dense {
                        all: bcasters == senders,
                    }
                };
            }
            steps.push(StepStats {
                computed,
                active: act,
                messages: fly,
                edges: edges - edges_before,
                seconds: started.elapsed().as_secs_f64(),
            });
        };
        Ok(Outcome {
            values,
            supersteps,
            stop,
            edges,
            messages,
            aggregates: aggregated,
            delivery: self.delivery,
            steps,
        })
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
        part: Part<'_, P::Value, P::Message>,
        step: &Step<'_>,
        pull: &PullIn<'_, P::Message>,
        inbox: Option<&Inbox<P::Message>>,
    ) -> PartResult<P::Message> {
        let local = Local::new(P::AGGREGATES);
        let push = self.delivery == Delivery::Push;
        let (lo, hi) = (part.lo, part.hi);
        let first_word = lo / 64;
        let (mut active, mut broadcasters, mut bcast_edges) = (0u64, 0u64, 0u64);
        let mut computed = 0u64;
        let mut scratch: Vec<P::Message> = Vec::new();
        let identity = P::Message::from_bits(self.identity_bits());
        for wi in 0..part.active.len() {
            let act = part.active[wi];
            let mail = if push {
                std::mem::take(part.has[wi].get_mut())
            } else {
                // This buffer was last written two supersteps ago: clear its broadcasts.
                let mut old = std::mem::take(&mut part.bbit[wi]);
                while old != 0 {
                    part.bval[wi * 64 + old.trailing_zeros() as usize] = identity;
                    old &= old - 1;
                }
                match pull.gather {
                    Gather::Nothing => 0,
                    Gather::Sparse(m) => m[first_word + wi].load(Relaxed),
                    Gather::Pushed { has, .. } => has[first_word + wi].swap(0, Relaxed),
                    Gather::Dense { .. } => !0,
                }
            };
            let mut sched = act | mail;
            let mut now_active = 0u64;
            while sched != 0 {
                let b = sched.trailing_zeros() as usize;
                sched &= sched - 1;
                let v = (first_word + wi) * 64 + b;
                if v >= hi {
                    break;
                }
                let bit = 1u64 << b;
                // Pushed mail is taken (and the slot emptied) whether or not the vertex
                // still exists: a deleted vertex drops what was sent to it.
                let pushed = match pull.gather {
                    _ if mail & bit == 0 => None,
                    _ if push && self.combined => {
                        let bits =
                            std::mem::replace(part.slots[v - lo].get_mut(), self.identity_bits());
                        Some(Messages::one(P::Message::from_bits(bits)))
                    }
                    _ if push => {
                        let ib = inbox.expect("list delivery fills an inbox");
                        let (a, z) = (ib.offsets[v] as usize, ib.offsets[v + 1] as usize);
                        Some(Messages::many(&ib.msgs[a..z]))
                    }
                    Gather::Pushed { slots, .. } => {
                        let bits = slots[v].swap(self.identity_bits(), Relaxed);
                        Some(Messages::one(P::Message::from_bits(bits)))
                    }
                    _ => None,
                };
                let vid = v as VertexId;
                if !self.g.vertex_exists(vid) {
                    continue;
                }
                let messages = match pushed {
                    Some(m) => m,
                    None if push || mail & bit == 0 => Messages::none(),
                    None => self.gather(vid, pull, &local, &mut scratch),
                };
                if act & bit == 0 && messages.is_empty() {
                    continue;
                }
                let mut ctx = Context {
                    g: self.g,
                    v: vid,
                    value: &mut part.values[v - lo],
                    halted: false,
                    step,
                    local: &local,
                    broadcast: None,
                };
                self.p.compute(&mut ctx, messages);
                computed += 1;
                if !ctx.halted {
                    now_active |= bit;
                }
                if let Some(m) = ctx.broadcast {
                    part.bval[v - lo] = m;
                    part.bbit[wi] |= bit;
                    // Only broadcasts with an edge to travel count towards "every sender
                    // broadcast" (`Gather::Dense { all }`), as `senders` counts.
                    let d = self.degree_along(vid);
                    broadcasters += (d > 0) as u64;
                    bcast_edges += d;
                }
            }
            debug_assert_eq!(now_active & !(act | mail), 0);
            part.active[wi] = now_active;
            active += now_active.count_ones() as u64;
        }
        PartResult {
            computed,
            active,
            in_flight: if push { local.sent.get() } else { bcast_edges },
            broadcasters,
            edges: local.edges.get(),
            aggs: local.aggs.iter().map(|c| c.get()).collect(),
            error: local.error.into_inner(),
            lists: local.lists.into_inner(),
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
