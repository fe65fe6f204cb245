//! What a vertex program declares: its value and message types, how messages combine and
//! travel, its global aggregators, and the compute function itself.

use super::{Context, Messages};
use crate::{GraphView, VertexId};

/// A vertex program (Pregel's `Vertex::Compute`, iPregel's `ip_compute`).
///
/// Supersteps run `compute` on every scheduled vertex: in superstep 0 on every existing
/// vertex, later on the vertices that have not voted to halt or that received messages
/// (selective scheduling). A vertex reads and sets its value, reads its edges, sends
/// messages that arrive in the next superstep, contributes to aggregators and votes to halt.
/// The run ends when every vertex has halted and no message is in flight, or at the
/// superstep limit of [`Config`](super::Config).
///
/// `compute` runs on many threads at once, one vertex per call; it sees only its own vertex's
/// value, so it needs no locks.
pub trait Program: Sync {
    /// Per-vertex state, kept in DRAM.
    type Value: Copy + Send + Sync;
    /// What vertices send each other.
    type Message: Message;
    /// How two messages to one vertex become one: [`Sum`], [`Min`], [`Max`], an own
    /// implementation of [`Combiner`], or [`NoCombiner`] to receive every message.
    type Combiner: Combiner<Self::Message>;
    /// How messages reach their recipients; [`Config::delivery`](super::Config) may override it.
    const DELIVERY: Delivery = Delivery::Push;
    /// Which edges [`Context::broadcast`] travels along.
    const EDGES: Edges = Edges::Out;
    /// The global aggregators, numbered by position (see [`Context::aggregate`]).
    const AGGREGATES: &'static [Aggregate] = &[];

    /// The value of `v` before superstep 0.
    fn init(&self, v: VertexId) -> Self::Value;

    /// Runs vertex `ctx.vertex()` for one superstep, with the messages sent to it in the
    /// previous one (combined into at most one when the program has a combiner).
    fn compute<G: GraphView>(
        &self,
        ctx: &mut Context<'_, Self, G>,
        messages: Messages<'_, Self::Message>,
    ) where
        Self: Sized;
}

/// How messages travel (iPregel's two versions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// The sender writes into each recipient's mailbox (combining atomically there, or into
    /// per-thread buffers without a combiner). Supports [`Context::send`] to any vertex and
    /// per-edge messages.
    Push,
    /// Each vertex gathers the values its in-neighbours broadcast in the previous superstep;
    /// every write is to the vertex being computed, so no locks or atomics. Only
    /// [`Context::broadcast`] is allowed. With a combiner, a superstep whose broadcasts
    /// travel along few edges (under half of them) is delivered by pushing those instead of
    /// letting every vertex gather: the messages received are the same, the work is
    /// proportional to the broadcasts (direction-optimising BFS's trade).
    Pull,
}

impl std::fmt::Display for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Delivery::Push => "push",
            Delivery::Pull => "pull",
        })
    }
}

impl std::str::FromStr for Delivery {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "push" => Ok(Delivery::Push),
            "pull" => Ok(Delivery::Pull),
            _ => Err(format!("'{s}' is not a delivery mode: want push or pull")),
        }
    }
}

/// The edges a broadcast travels along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edges {
    /// From a vertex to its out-neighbours (Pregel's default).
    Out,
    /// Along out- and in-edges, as if the graph were undirected (weak connectivity). The same
    /// as `Out` on an undirected store.
    Both,
}

/// A global aggregator over `f64` contributions; the result of superstep `s` is readable in
/// superstep `s + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    /// Sum (0 when nothing was contributed).
    Sum,
    /// Minimum (+infinity when nothing was contributed).
    Min,
    /// Maximum (−infinity when nothing was contributed).
    Max,
}

impl Aggregate {
    /// The value before any contribution.
    pub(crate) fn identity(self) -> f64 {
        match self {
            Aggregate::Sum => 0.0,
            Aggregate::Min => f64::INFINITY,
            Aggregate::Max => f64::NEG_INFINITY,
        }
    }

    /// Folds `x` into `acc`.
    pub(crate) fn fold(self, acc: f64, x: f64) -> f64 {
        match self {
            Aggregate::Sum => acc + x,
            Aggregate::Min => acc.min(x),
            Aggregate::Max => acc.max(x),
        }
    }
}

/// A message type: `Copy`, at most 64 bits, so push delivery combines it into a mailbox with
/// one compare-and-swap. Implemented for the integers, floats, `bool` and pairs of 32-bit
/// values; a larger payload travels as an index into a table the program owns.
pub trait Message: Copy + Send + Sync + 'static {
    /// The value's bits.
    fn to_bits(self) -> u64;
    /// The value back from [`Message::to_bits`].
    fn from_bits(bits: u64) -> Self;
}

macro_rules! int_message {
    ($($t:ty => $u:ty),*) => {$(
        impl Message for $t {
            #[inline]
            fn to_bits(self) -> u64 {
                self as $u as u64
            }
            #[inline]
            fn from_bits(bits: u64) -> Self {
                bits as $u as $t
            }
        }
    )*};
}
int_message!(u8 => u8, u16 => u16, u32 => u32, u64 => u64, usize => usize,
    i8 => u8, i16 => u16, i32 => u32, i64 => u64);

impl Message for f32 {
    #[inline]
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    #[inline]
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

impl Message for f64 {
    #[inline]
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    #[inline]
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

impl Message for bool {
    #[inline]
    fn to_bits(self) -> u64 {
        self as u64
    }
    #[inline]
    fn from_bits(bits: u64) -> Self {
        bits != 0
    }
}

impl<A: Message32, B: Message32> Message for (A, B) {
    #[inline]
    fn to_bits(self) -> u64 {
        (self.0.to_bits() & 0xffff_ffff) << 32 | (self.1.to_bits() & 0xffff_ffff)
    }
    #[inline]
    fn from_bits(bits: u64) -> Self {
        (A::from_bits(bits >> 32), B::from_bits(bits & 0xffff_ffff))
    }
}

/// A message of at most 32 bits, which pairs with another into one [`Message`].
pub trait Message32: Message {}
impl Message32 for u32 {}
impl Message32 for i32 {}
impl Message32 for f32 {}
impl Message32 for u16 {}
impl Message32 for u8 {}
impl Message32 for bool {}

/// Combines the messages sent to one vertex in one superstep into one. It must be
/// associative and commutative: messages arrive in no particular order.
pub trait Combiner<M>: 'static {
    /// Whether messages are combined at all; false only for [`NoCombiner`].
    const COMBINES: bool = true;
    /// The message `i` with `combine(i, m) == m` for every `m` (0 for a sum, the largest
    /// value for a minimum).
    fn identity() -> M;
    /// Two messages as one.
    fn combine(a: M, b: M) -> M;
}

/// Delivers every message on its own (no combining); `compute` receives them all.
pub struct NoCombiner;

impl<M> Combiner<M> for NoCombiner {
    const COMBINES: bool = false;
    fn identity() -> M {
        unreachable!("the engine never asks NoCombiner for an identity")
    }
    fn combine(_: M, _: M) -> M {
        unreachable!("the engine never combines with NoCombiner")
    }
}

/// Numbers the built-in combiners work on.
pub trait Number: Message + PartialOrd {
    /// 0.
    const ZERO: Self;
    /// The smallest value (−infinity for floats).
    const LOWEST: Self;
    /// The largest value (+infinity for floats).
    const HIGHEST: Self;
    /// `a + b` (wrapping for integers).
    fn add(a: Self, b: Self) -> Self;
}

macro_rules! int_number {
    ($($t:ty),*) => {$(
        impl Number for $t {
            const ZERO: Self = 0;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline]
            fn add(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
        }
    )*};
}
int_number!(u8, u16, u32, u64, usize, i8, i16, i32, i64);

macro_rules! float_number {
    ($($t:ty),*) => {$(
        impl Number for $t {
            const ZERO: Self = 0.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            #[inline]
            fn add(a: Self, b: Self) -> Self {
                a + b
            }
        }
    )*};
}
float_number!(f32, f64);

/// Adds messages.
pub struct Sum;
/// Keeps the smallest message.
pub struct Min;
/// Keeps the largest message.
pub struct Max;

impl<M: Number> Combiner<M> for Sum {
    #[inline]
    fn identity() -> M {
        M::ZERO
    }
    #[inline]
    fn combine(a: M, b: M) -> M {
        M::add(a, b)
    }
}

impl<M: Number> Combiner<M> for Min {
    #[inline]
    fn identity() -> M {
        M::HIGHEST
    }
    #[inline]
    fn combine(a: M, b: M) -> M {
        if b < a {
            b
        } else {
            a
        }
    }
}

impl<M: Number> Combiner<M> for Max {
    #[inline]
    fn identity() -> M {
        M::LOWEST
    }
    #[inline]
    fn combine(a: M, b: M) -> M {
        if b > a {
            b
        } else {
            a
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivery_names_round_trip() {
        for d in [Delivery::Push, Delivery::Pull] {
            assert_eq!(d.to_string().parse::<Delivery>(), Ok(d));
        }
        let e = "both".parse::<Delivery>().unwrap_err();
        assert!(e.contains("want push or pull"), "{e}");
    }

    #[test]
    fn messages_round_trip_through_bits() {
        for x in [0u32, 1, u32::MAX] {
            assert_eq!(u32::from_bits(x.to_bits()), x);
        }
        for x in [i64::MIN, -1, 0, i64::MAX] {
            assert_eq!(i64::from_bits(x.to_bits()), x);
        }
        for x in [-1i32, i32::MIN] {
            assert_eq!(<i32 as Message>::from_bits(Message::to_bits(x)), x);
        }
        for x in [0.0f64, -0.5, f64::INFINITY, f64::MIN_POSITIVE] {
            assert_eq!(<f64 as Message>::from_bits(Message::to_bits(x)), x);
        }
        let p = (7u32, -2.5f32);
        assert_eq!(<(u32, f32)>::from_bits(p.to_bits()), p);
        let q = (-3i32, u32::MAX);
        assert_eq!(<(i32, u32)>::from_bits(q.to_bits()), q);
    }

    #[test]
    fn built_in_combiners_have_identities() {
        for m in [0u32, 5, u32::MAX] {
            assert_eq!(<Min as Combiner<u32>>::combine(Min::identity(), m), m);
            assert_eq!(<Max as Combiner<u32>>::combine(Max::identity(), m), m);
            assert_eq!(<Sum as Combiner<u32>>::combine(Sum::identity(), m), m);
        }
        assert_eq!(<Min as Combiner<f64>>::combine(2.0, 1.0), 1.0);
        assert_eq!(<Max as Combiner<f64>>::combine(2.0, 1.0), 2.0);
        assert_eq!(<Sum as Combiner<f64>>::combine(2.0, 1.0), 3.0);
        assert_eq!(Aggregate::Min.fold(Aggregate::Min.identity(), 3.0), 3.0);
    }
}
