//! Single-source shortest paths by delta-stepping (Meyer & Sanders), as GAPBS does:
//! vertices are kept in buckets of width `delta` by tentative distance; the lowest bucket
//! is relaxed in parallel until it stays empty, then the next. Weights must be
//! non-negative; unweighted graphs use weight 1.

use crate::snapshot::GraphView;
use crate::types::VertexId;
use rayon::prelude::*;
use std::collections::btree_map::{BTreeMap, Entry};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Atomically lowers `slot` to `d` if that is smaller; returns whether it did.
#[inline]
fn fetch_min(slot: &AtomicU64, d: f64) -> bool {
    let mut cur = slot.load(Relaxed);
    while d < f64::from_bits(cur) {
        match slot.compare_exchange_weak(cur, d.to_bits(), Relaxed, Relaxed) {
            Ok(_) => return true,
            Err(c) => cur = c,
        }
    }
    false
}

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
    let n = g.num_vertices();
    let dist: Vec<AtomicU64> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU64::new(f64::INFINITY.to_bits()))
        .collect();
    if (source as usize) >= n || !g.vertex_exists(source) {
        return dist
            .into_iter()
            .map(|d| f64::from_bits(d.into_inner()))
            .collect();
    }
    let delta = if delta > 0.0 && delta.is_finite() {
        delta
    } else {
        1.0
    };
    dist[source as usize].store(0f64.to_bits(), Relaxed);
    let mut bins: BTreeMap<u64, Vec<VertexId>> = BTreeMap::from([(0, vec![source])]);
    while let Some((b, frontier)) = bins.pop_first() {
        let lower = delta * b as f64;
        let moved = frontier
            .par_iter()
            .with_min_len(64)
            .fold(Moved::default, |mut out, &u| {
                let du = f64::from_bits(dist[u as usize].load(Relaxed));
                // Skip entries whose vertex has since moved to a lower bucket.
                if du >= lower {
                    g.for_each_out_weighted(u, |v, w| {
                        let nd = du + w;
                        if fetch_min(&dist[v as usize], nd) {
                            out.push(((nd / delta) as u64).saturating_sub(b), v);
                        }
                    });
                }
                out
            })
            .reduce(Moved::default, Moved::merge);
        moved.into_bins(b, &mut bins);
    }
    dist.into_iter()
        .map(|d| f64::from_bits(d.into_inner()))
        .collect()
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
