//! Betweenness centrality by Brandes' algorithm from a sample of sources, as GAPBS does:
//! a level-synchronous BFS counts shortest paths, then dependencies flow back level by
//! level. Scores are normalized so the largest is 1.
//!
//! Unlike GAPBS's BC, the BFS is direction-optimizing (Beamer et al.): a level whose
//! frontier has many out-edges is pulled by the unreached vertices, each summing its
//! in-neighbors' path counts with plain loads, instead of pushed with a CAS per new vertex
//! and an atomic add per path. On Kron20 the forward pass takes a third of the time.
//!
//! GAPBS's convention, not the textbook's: a source's own dependency δ_s(s) (the sum of
//! `σ_s/σ_w · (1 + δ_s(w))` over its BFS children `w`) is added to its score, where Brandes'
//! paper skips the source. So a source's score grows with its reach; every other vertex
//! scores the same either way, before normalization.

use crate::snapshot::GraphView;
use crate::types::VertexId;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// Depth of a vertex the BFS has not reached.
const UNSEEN: u32 = u32::MAX;

/// An f64 that threads share through relaxed loads and stores of its bits.
struct F64(AtomicU64);

impl F64 {
    fn zero() -> F64 {
        F64(AtomicU64::new(0f64.to_bits()))
    }
    #[inline]
    fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Relaxed))
    }
    /// A plain store: for values one thread owns at a time.
    #[inline]
    fn set(&self, x: f64) {
        self.0.store(x.to_bits(), Relaxed)
    }
    /// An atomic add, for path counts several parents raise at once.
    #[inline]
    fn add(&self, x: f64) {
        let mut cur = self.0.load(Relaxed);
        loop {
            let new = (f64::from_bits(cur) + x).to_bits();
            match self.0.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
                Ok(_) => return,
                Err(c) => cur = c,
            }
        }
    }
}

fn zeros(n: usize) -> Vec<F64> {
    (0..n).into_par_iter().map(|_| F64::zero()).collect()
}

/// A level is found by pulling (bottom-up) when the frontier's out-edges times this exceed
/// the in-edges of the vertices not yet reached, which a pull reads. A push pays a CAS per
/// new vertex and an atomic add per path; a pull pays plain loads and one store per vertex.
const PULL_RATIO: u64 = 2;

/// Whether a source's own dependency counts in its score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Credit {
    /// GAPBS's convention: it does (see the module documentation).
    Source,
    /// Brandes' paper's (and NetworkX's): it does not, so each score is the sum, over the
    /// sources, of the shortest paths from them through the vertex.
    NotSource,
}

/// Betweenness scores from `sources`, normalized to a maximum of 1.
#[must_use = "the kernel's result is its return value"]
pub fn brandes<G: GraphView>(g: &G, sources: &[VertexId]) -> Vec<f64> {
    let mut scores = dependencies(g, sources, Credit::Source);
    let max = scores.iter().cloned().fold(0.0, f64::max);
    if max > 0.0 {
        scores.iter_mut().for_each(|x| *x /= max);
    }
    scores
}

/// Each vertex's dependencies summed over `sources`, not normalized, a source's own
/// counted as `credit` says.
#[must_use = "the kernel's result is its return value"]
pub fn dependencies<G: GraphView>(g: &G, sources: &[VertexId], credit: Credit) -> Vec<f64> {
    let n = g.num_vertices();
    // Depths are u32, as GAPBS's are int32: both passes read one per edge at random, and
    // half the bytes stay in cache longer.
    let depth: Vec<AtomicU32> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU32::new(UNSEEN))
        .collect();
    let sigma = zeros(n);
    let delta = zeros(n);
    let scores = zeros(n);
    for &s in sources {
        if (s as usize) >= n || !g.vertex_exists(s) {
            continue;
        }
        let levels = levels_from(g, s, &depth, &sigma);
        for (d, level) in levels.iter().enumerate().rev() {
            let scored = match (d, credit) {
                (0, Credit::NotSource) => None,
                _ => Some(&scores[..]),
            };
            add_dependencies(g, level, d as u32, &depth, &sigma, &delta, scored);
        }
        // Whole arrays, in order: most of the graph was reached, and a sequential fill is
        // cheaper than a random reset of the reached vertices.
        depth.par_iter().for_each(|d| d.store(UNSEEN, Relaxed));
        sigma.par_iter().for_each(|x| x.set(0.0));
        delta.par_iter().for_each(|x| x.set(0.0));
    }
    scores.into_iter().map(|x| x.get()).collect()
}

/// The backward pass over one level at depth `d`, every deeper level done: each vertex's
/// dependency from its children one level down, added to its score (unless `scores` is
/// `None`: the source's level, not credited).
fn add_dependencies<G: GraphView>(
    g: &G,
    level: &[VertexId],
    d: u32,
    depth: &[AtomicU32],
    sigma: &[F64],
    delta: &[F64],
    scores: Option<&[F64]>,
) {
    level.par_iter().with_min_len(64).for_each(|&v| {
        let sv = sigma[v as usize].get();
        let mut acc = 0.0;
        g.for_each_out(v, |w| {
            if depth[w as usize].load(Relaxed) == d + 1 {
                acc += sv / sigma[w as usize].get() * (1.0 + delta[w as usize].get());
            }
        });
        // Each vertex sits in one level and only the task holding it writes it: plain
        // stores, no CAS.
        delta[v as usize].set(acc);
        if let Some(scores) = scores {
            scores[v as usize].set(scores[v as usize].get() + acc);
        }
    });
}

/// The forward pass from `s`: BFS levels, with `depth` and path counts `sigma` set for
/// every vertex reached (all UNSEEN and 0 on entry). Each level is pushed from the last
/// or pulled by the unreached vertices, whichever reads fewer edges (Beamer's direction
/// optimization; GAPBS's BC only pushes).
fn levels_from<G: GraphView>(
    g: &G,
    s: VertexId,
    depth: &[AtomicU32],
    sigma: &[F64],
) -> Vec<Vec<VertexId>> {
    depth[s as usize].store(0, Relaxed);
    sigma[s as usize].set(1.0);
    let mut levels: Vec<Vec<VertexId>> = vec![vec![s]];
    let mut unreached_in = g.num_edges().saturating_sub(g.in_degree(s) as u64);
    loop {
        // Each level holds at least one vertex, so there are fewer levels than vertices
        // and a vertex count a u32 depth can reach; saturating keeps UNSEEN unreachable.
        let d = u32::try_from(levels.len()).map_or(UNSEEN - 1, |d| d.min(UNSEEN - 1));
        let frontier = levels.last().expect("levels start with the source");
        let frontier_out: u64 = frontier.par_iter().map(|&u| g.out_degree(u) as u64).sum();
        let next = if frontier_out * PULL_RATIO > unreached_in {
            pull_level(g, d, depth, sigma)
        } else {
            push_level(g, frontier, d, depth, sigma)
        };
        if next.is_empty() {
            return levels;
        }
        let reached_in: u64 = next.par_iter().map(|&v| g.in_degree(v) as u64).sum();
        unreached_in = unreached_in.saturating_sub(reached_in);
        levels.push(next);
    }
}

/// Level `d` from the frontier at `d - 1`, along its out-edges.
fn push_level<G: GraphView>(
    g: &G,
    frontier: &[VertexId],
    d: u32,
    depth: &[AtomicU32],
    sigma: &[F64],
) -> Vec<VertexId> {
    frontier
        .par_iter()
        .with_min_len(64)
        .fold(Vec::new, |mut next, &u| {
            let su = sigma[u as usize].get();
            g.for_each_out(u, |v| {
                let dv = &depth[v as usize];
                if dv.load(Relaxed) == UNSEEN
                    && dv.compare_exchange(UNSEEN, d, Relaxed, Relaxed).is_ok()
                {
                    next.push(v);
                }
                if dv.load(Relaxed) == d {
                    sigma[v as usize].add(su);
                }
            });
            next
        })
        .reduce(Vec::new, |mut a, b| {
            a.extend(b);
            a
        })
}

/// Level `d`: every unreached vertex sums the path counts of its in-neighbors at `d - 1`.
/// A vertex only ever moves from UNSEEN to `d` here, so a thread checking an in-neighbor
/// for `d - 1` is never misled by another thread's write.
fn pull_level<G: GraphView>(g: &G, d: u32, depth: &[AtomicU32], sigma: &[F64]) -> Vec<VertexId> {
    crate::types::par_vertices(depth.len())
        .filter(|&v| depth[v as usize].load(Relaxed) == UNSEEN)
        .filter_map(|v| {
            let paths = g.fold_in(v, 0.0, |acc, u| {
                if depth[u as usize].load(Relaxed) == d - 1 {
                    acc + sigma[u as usize].get()
                } else {
                    acc
                }
            });
            // Every reached vertex has at least one path, so a sum of zero means no
            // in-neighbor is at d - 1.
            (paths > 0.0).then(|| {
                depth[v as usize].store(d, Relaxed);
                sigma[v as usize].set(paths);
                v
            })
        })
        .collect()
}

/// Serial Brandes from the same sources; scores must agree to a relative 1e-6.
pub fn verify<G: GraphView>(g: &G, sources: &[VertexId], scores: &[f64]) -> Result<(), String> {
    let n = g.num_vertices();
    let mut want = vec![0.0f64; n];
    for &s in sources {
        if (s as usize) >= n || !g.vertex_exists(s) {
            continue;
        }
        let mut depth = vec![-1i64; n];
        let mut sigma = vec![0.0f64; n];
        let mut order = Vec::new();
        depth[s as usize] = 0;
        sigma[s as usize] = 1.0;
        let mut q = std::collections::VecDeque::from([s]);
        while let Some(u) = q.pop_front() {
            order.push(u);
            g.for_each_out(u, |v| {
                if depth[v as usize] < 0 {
                    depth[v as usize] = depth[u as usize] + 1;
                    q.push_back(v);
                }
                if depth[v as usize] == depth[u as usize] + 1 {
                    sigma[v as usize] += sigma[u as usize];
                }
            });
        }
        let mut delta = vec![0.0f64; n];
        for &w in order.iter().rev() {
            let mut acc = 0.0;
            g.for_each_out(w, |x| {
                if depth[x as usize] == depth[w as usize] + 1 {
                    acc += sigma[w as usize] / sigma[x as usize] * (1.0 + delta[x as usize]);
                }
            });
            delta[w as usize] = acc;
            want[w as usize] += acc; // the source included, as GAPBS's verifier does
        }
    }
    let max = want.iter().cloned().fold(0.0, f64::max);
    if max > 0.0 {
        want.iter_mut().for_each(|x| *x /= max);
    }
    for v in 0..n {
        if (want[v] - scores[v]).abs() > 1e-6 * want[v].abs().max(1e-9)
            && (want[v] - scores[v]).abs() > 1e-12
        {
            return Err(format!(
                "vertex {}: score {} but serial Brandes gives {}",
                g.external_id(v as VertexId),
                scores[v],
                want[v]
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Csr;
    use proptest::prelude::*;

    fn state(n: usize) -> (Vec<AtomicU32>, Vec<F64>) {
        ((0..n).map(|_| AtomicU32::new(UNSEEN)).collect(), zeros(n))
    }

    fn read(depth: &[AtomicU32], sigma: &[F64]) -> Vec<(u32, f64)> {
        depth
            .iter()
            .zip(sigma)
            .map(|(d, s)| (d.load(Relaxed), s.get()))
            .collect()
    }

    /// Brandes' sums without the source's credit: on a path 0-1-2-3 (undirected), the
    /// pairs through 1 are (0,2), (0,3) and back, so 4; GAPBS's credit adds each source's
    /// own dependency, and normalizes.
    #[test]
    fn dependencies_without_the_source_are_brandes_sums() {
        let g = Csr::from_edges(4, &[(0, 1), (1, 2), (2, 3)], true);
        let g = g.view();
        let all = [0, 1, 2, 3];
        assert_eq!(
            dependencies(&g, &all, Credit::NotSource),
            vec![0.0, 4.0, 4.0, 0.0]
        );
        let credited = dependencies(&g, &all, Credit::Source);
        assert!(credited[0] > 0.0 && credited[1] > 4.0, "{credited:?}");
        let top = credited.iter().cloned().fold(0.0, f64::max);
        let scaled: Vec<f64> = credited.iter().map(|x| x / top).collect();
        assert_eq!(brandes(&g, &all), scaled);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

        /// Whichever way each level is found, pushed or pulled, it holds the same
        /// vertices with the same depths and path counts.
        #[test]
        fn pushed_and_pulled_levels_agree(
            (n, edges) in (2usize..80).prop_flat_map(|n| {
                (Just(n), prop::collection::vec((0..n as VertexId, 0..n as VertexId), 0..n * 5))
            }),
            undirected in any::<bool>(),
        ) {
            let g = Csr::from_edges(n, &edges, undirected);
            let g = g.view();
            let (pd, ps) = state(n);
            let (qd, qs) = state(n);
            for (d, s) in [(&pd, &ps), (&qd, &qs)] {
                d[0].store(0, Relaxed);
                s[0].set(1.0);
            }
            let mut frontier = vec![0];
            for d in 1.. {
                let mut pushed = push_level(&g, &frontier, d, &pd, &ps);
                let mut pulled = pull_level(&g, d, &qd, &qs);
                pushed.sort_unstable();
                pulled.sort_unstable();
                prop_assert_eq!(&pushed, &pulled, "level {}", d);
                prop_assert_eq!(read(&pd, &ps), read(&qd, &qs), "level {}", d);
                if pushed.is_empty() {
                    break;
                }
                frontier = pushed;
            }
        }
    }
}
