//! Single-source shortest paths by delta-stepping (Meyer & Sanders), as GAPBS does:
//! vertices are kept in buckets of width `delta` by tentative distance; the lowest bucket
//! is relaxed in parallel until it stays empty, then the next. Weights must be
//! non-negative; unweighted graphs use weight 1.

use crate::snapshot::GraphView;
use crate::types::VertexId;
use rayon::prelude::*;
use std::collections::btree_map::{BTreeMap, Entry};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// Vertices one task moved to a later (or the same) bucket, by bucket offset from the
/// current one: whole vectors per bucket, so the serial merge into the bucket map costs one
/// map operation per bucket, not one per vertex. Offsets past `NEAR` (weights far above
/// delta) are kept as pairs.
#[derive(Default)]
struct Moved {
    near: Vec<Vec<VertexId>>,
    far: Vec<(u64, VertexId)>,
}

/// Bucket offsets kept in `Moved::near`.
const NEAR: u64 = 64;

impl Moved {
    #[inline]
    fn push(&mut self, offset: u64, v: VertexId) {
        if offset < NEAR {
            let i = offset as usize;
            if self.near.len() <= i {
                self.near.resize_with(i + 1, Vec::new);
            }
            self.near[i].push(v);
        } else {
            self.far.push((offset, v));
        }
    }

    fn merge(mut self, mut other: Moved) -> Moved {
        if self.near.len() < other.near.len() {
            std::mem::swap(&mut self.near, &mut other.near);
        }
        for (mine, theirs) in self.near.iter_mut().zip(other.near) {
            if mine.is_empty() {
                *mine = theirs;
            } else {
                mine.extend(theirs);
            }
        }
        self.far.extend(other.far);
        self
    }

    /// Adds the moved vertices to the buckets, `b` being the current one.
    fn into_bins(self, b: u64, bins: &mut BTreeMap<u64, Vec<VertexId>>) {
        let near = (b..).zip(self.near).filter(|(_, vs)| !vs.is_empty());
        let far = self
            .far
            .into_iter()
            .map(|(offset, v)| (b + offset, vec![v]));
        for (bin, vs) in near.chain(far) {
            match bins.entry(bin) {
                Entry::Vacant(e) => {
                    e.insert(vs);
                }
                Entry::Occupied(mut e) => e.get_mut().extend(vs),
            }
        }
    }
}

/// Refuses a graph with a negative edge weight, naming the edge by the user's ids: shortest
/// paths by delta-stepping (or Dijkstra) are wrong there, silently. O(edges), in parallel.
pub fn check_weights<G: GraphView>(g: &G) -> Result<(), String> {
    if !g.is_weighted() {
        return Ok(());
    }
    let bad = (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .filter(|&u| g.vertex_exists(u))
        .find_map_any(|u| {
            let mut bad = None;
            g.for_each_out_weighted(u, |v, w| {
                if bad.is_none() && (w < 0.0 || w.is_nan()) {
                    bad = Some((u, v, w));
                }
            });
            bad
        });
    match bad {
        None => Ok(()),
        Some((u, v, w)) => Err(format!(
            "edge {} -> {} has weight {w}: shortest paths need non-negative weights",
            g.external_id(u),
            g.external_id(v)
        )),
    }
}

/// Distance of every vertex from `source` (`f64::INFINITY` when unreachable). Weights must
/// be non-negative ([`check_weights`]).
#[must_use = "the kernel's result is its return value"]
pub fn delta_stepping<G: GraphView>(g: &G, source: VertexId, delta: f64) -> Vec<f64> {
    let delta = if delta > 0.0 && delta.is_finite() {
        delta
    } else {
        1.0
    };
    // An unweighted graph's distances are hop counts. Kept in 4 bytes, as GAPBS keeps its
    // int32 distances, they halve the array the relaxations read and CAS at random, which
    // is nearly all of the kernel's time (Kron22: 19 MB of f64 against a 32 MB L3).
    // Delta only paces the buckets, so a whole number of hops is as good as any.
    if !g.is_weighted() && g.num_vertices() < u32::MAX as usize {
        let hops = steps::<G, u32>(g, source, delta.max(1.0) as u32);
        return hops
            .into_par_iter()
            .map(|d| match d {
                u32::MAX => f64::INFINITY,
                d => d as f64,
            })
            .collect();
    }
    steps::<G, f64>(g, source, delta)
}

/// A distance the buckets can hold: f64 for weighted graphs, u32 hop counts for unweighted
/// ones. Each is kept in an atomic slot of its own width.
trait Distance: Copy + PartialOrd + Send + Sync {
    type Slot: Send + Sync;
    const INFINITY: Self;
    const ZERO: Self;
    fn slot(d: Self) -> Self::Slot;
    fn load(slot: &Self::Slot) -> Self;
    fn into_inner(slot: Self::Slot) -> Self;
    /// Lowers `slot` to `d` if that is smaller; returns whether it did. A plain load
    /// first: most relaxations lower nothing, and an atomic write would take the line.
    fn fetch_min(slot: &Self::Slot, d: Self) -> bool;
    /// The bucket `self` falls in. Monotone in `self`, so a relaxation (which never
    /// shortens a distance) never lands below the bucket it came from.
    fn bucket(self, delta: Self) -> u64;
    /// Calls `f(v, du + w)` for each out-edge `(u, v, w)`.
    fn relax_each<G: GraphView>(g: &G, u: VertexId, du: Self, f: impl FnMut(VertexId, Self));
}

impl Distance for f64 {
    type Slot = AtomicU64;
    const INFINITY: f64 = f64::INFINITY;
    const ZERO: f64 = 0.0;
    fn slot(d: f64) -> AtomicU64 {
        AtomicU64::new(d.to_bits())
    }
    #[inline]
    fn load(slot: &AtomicU64) -> f64 {
        f64::from_bits(slot.load(Relaxed))
    }
    fn into_inner(slot: AtomicU64) -> f64 {
        f64::from_bits(slot.into_inner())
    }
    /// Distances are never negative (weights are checked, and 0.0 + -0.0 is 0.0), and
    /// non-negative f64 bit patterns order like the values, so the integer minimum is the
    /// distances' minimum.
    #[inline]
    fn fetch_min(slot: &AtomicU64, d: f64) -> bool {
        let d = d.to_bits();
        d < slot.load(Relaxed) && slot.fetch_min(d, Relaxed) > d
    }
    #[inline]
    fn bucket(self, delta: f64) -> u64 {
        (self / delta) as u64
    }
    #[inline]
    fn relax_each<G: GraphView>(g: &G, u: VertexId, du: f64, mut f: impl FnMut(VertexId, f64)) {
        g.for_each_out_weighted(u, |v, w| f(v, du + w));
    }
}

impl Distance for u32 {
    type Slot = AtomicU32;
    const INFINITY: u32 = u32::MAX;
    const ZERO: u32 = 0;
    fn slot(d: u32) -> AtomicU32 {
        AtomicU32::new(d)
    }
    #[inline]
    fn load(slot: &AtomicU32) -> u32 {
        slot.load(Relaxed)
    }
    fn into_inner(slot: AtomicU32) -> u32 {
        slot.into_inner()
    }
    #[inline]
    fn fetch_min(slot: &AtomicU32, d: u32) -> bool {
        d < slot.load(Relaxed) && slot.fetch_min(d, Relaxed) > d
    }
    #[inline]
    fn bucket(self, delta: u32) -> u64 {
        (self / delta) as u64
    }
    /// Every edge weighs one hop; hop counts stay below the vertex count, which the caller
    /// keeps below `u32::MAX`, so `du + 1` cannot reach infinity.
    #[inline]
    fn relax_each<G: GraphView>(g: &G, u: VertexId, du: u32, mut f: impl FnMut(VertexId, u32)) {
        g.for_each_out(u, |v| f(v, du + 1));
    }
}

/// Delta-stepping in distances of type `D`: the lowest bucket is relaxed in parallel until
/// it stays empty, then the next.
fn steps<G: GraphView, D: Distance>(g: &G, source: VertexId, delta: D) -> Vec<D> {
    let n = g.num_vertices();
    let dist: Vec<D::Slot> = (0..n)
        .into_par_iter()
        .map(|_| D::slot(D::INFINITY))
        .collect();
    if (source as usize) < n && g.vertex_exists(source) {
        D::fetch_min(&dist[source as usize], D::ZERO);
        let mut bins: BTreeMap<u64, Vec<VertexId>> = BTreeMap::from([(0, vec![source])]);
        while let Some((b, frontier)) = bins.pop_first() {
            let moved = frontier
                .par_iter()
                .with_min_len(64)
                .fold(Moved::default, |mut out, &u| {
                    let du = D::load(&dist[u as usize]);
                    // Skip entries whose vertex has since moved to a lower bucket (and was
                    // relaxed there): the same bucket function placed it, so no rounding
                    // can make a current entry look stale.
                    if du.bucket(delta) >= b {
                        D::relax_each(g, u, du, |v, nd| {
                            if D::fetch_min(&dist[v as usize], nd) {
                                let to = nd.bucket(delta);
                                debug_assert!(to >= b, "a relaxation moved below its bucket");
                                out.push(to.saturating_sub(b), v);
                            }
                        });
                    }
                    out
                })
                .reduce(Moved::default, Moved::merge);
            moved.into_bins(b, &mut bins);
        }
    }
    dist.into_iter().map(D::into_inner).collect()
}

/// Serial Dijkstra from the same source; distances must agree to a relative 1e-9.
pub fn verify<G: GraphView>(g: &G, source: VertexId, dist: &[f64]) -> Result<(), String> {
    let n = g.num_vertices();
    let mut want = vec![f64::INFINITY; n];
    let mut heap = std::collections::BinaryHeap::new();
    if (source as usize) < n && g.vertex_exists(source) {
        want[source as usize] = 0.0;
        heap.push((std::cmp::Reverse(0u64), source));
    }
    while let Some((std::cmp::Reverse(bits), u)) = heap.pop() {
        let du = f64::from_bits(bits);
        if du > want[u as usize] {
            continue;
        }
        g.for_each_out_weighted(u, |v, w| {
            let nd = du + w;
            if nd < want[v as usize] {
                want[v as usize] = nd;
                // Non-negative f64 bit patterns order like the values.
                heap.push((std::cmp::Reverse(nd.to_bits()), v));
            }
        });
    }
    for v in 0..n {
        let (a, b) = (dist[v], want[v]);
        let ok =
            (a.is_infinite() && b.is_infinite()) || (a - b).abs() <= 1e-9 * b.abs().max(1e-300);
        if !ok {
            return Err(format!(
                "vertex {}: distance {a}, Dijkstra gives {b}",
                g.external_id(v as VertexId)
            ));
        }
    }
    Ok(())
}
