//! Direction-optimizing breadth-first search (Beamer et al., SC'12), returning parents.
//!
//! Top-down steps expand the frontier along out-edges; when the frontier's out-edges exceed
//! the unexplored edges / ALPHA, bottom-up steps let every unvisited vertex look for a parent
//! among its in-neighbors instead, until the frontier shrinks below n / BETA.
//!
//! Bottom-up steps, and top-down steps from a frontier of more than n / SWEPT_FRONTIER
//! vertices or with more than m / SWEPT_EDGES out-edges, are sweeps ([`GraphView::sweep_in`], [`GraphView::sweep_out`]): a store whose
//! runs do not fit the DRAM streams each such step's lists window by window, in file order,
//! where looking each vertex up in every run faulted pages at random (Kron24's 47 runs
//! under a 768 MiB cap: 95 s). A view in DRAM hands itself over whole, and the steps are
//! GAPBS's.

use crate::snapshot::{GraphView, SweepIn};
use crate::types::bits::{AtomicBits, Writers};
use crate::types::VertexId;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use std::time::Instant;

const ALPHA: u64 = 15;
const BETA: u64 = 18;
/// A top-down step from more than n / SWEPT_FRONTIER vertices, or whose frontier has more
/// than m / SWEPT_EDGES out-edges, is a sweep of the out-lists; so is a smaller one that the
/// steps timed so far say would take longer looked up than swept ([`StepCosts`]). A sweep
/// costs nothing in DRAM (the view hands itself over whole); beyond memory it reads every
/// out-list once, where a smaller frontier's lists are looked up in place, in every run.
/// Kron24's 47 runs under a 768 MiB cap: 378 vertices with 1.5 M out-edges took 5.5 s
/// looked up, a sweep 1.2 s; Kron26's 141 runs under 2 GiB: 5,052 vertices with 124
/// thousand out-edges 29.7 s looked up, a sweep 2.9 s.
const SWEPT_FRONTIER: usize = 4096;
const SWEPT_EDGES: u64 = 1024;

/// Parent of every vertex in a BFS tree from `source`; the source is its own parent and
/// unreached vertices get -1.
#[must_use = "the kernel's result is its return value"]
pub fn bfs<G: GraphView>(g: &G, source: VertexId) -> Vec<i64> {
    search(g, source, -1, |parent, _| parent as i64)
}

/// Direction-optimizing BFS from `source` that records, for each vertex reached,
/// `value(parent, depth)` (the source is its own parent, at depth 0), and `unseen` for the
/// others. GAPBS's kernel records parents; Graphalytics BFS records depths. `value` must
/// never return `unseen`, which marks a vertex as unreached while the search runs.
pub(crate) fn search<G, V>(g: &G, source: VertexId, unseen: i64, value: V) -> Vec<i64>
where
    G: GraphView,
    V: Fn(VertexId, i64) -> i64 + Sync,
{
    let n = g.num_vertices();
    let s = Search {
        g,
        mark: (0..n)
            .into_par_iter()
            .map(|_| AtomicI64::new(unseen))
            .collect(),
        reached: AtomicBits::new(n),
        unseen,
        value,
    };
    if (source as usize) < n && g.vertex_exists(source) {
        s.set(source, source, 0);
        s.reached.insert_all(&[source]);
        s.levels(source);
    }
    s.mark.into_iter().map(|p| p.into_inner()).collect()
}

/// A search's graph, its marks (`unseen` until a vertex is reached) and what it records.
struct Search<'g, G, V> {
    g: &'g G,
    mark: Vec<AtomicI64>,
    /// The vertices reached before the current step: the marks as one bit each, so that a
    /// bottom-up step finds the unreached in 1/64 of the bytes (Kron22: 300 KB, where the
    /// marks are 19 MB read in full at every such step).
    reached: AtomicBits,
    unseen: i64,
    value: V,
}

impl<G: GraphView, V: Fn(VertexId, i64) -> i64 + Sync> Search<'_, G, V> {
    /// Marks `v` reached from `parent` at `depth`.
    #[inline]
    fn set(&self, v: VertexId, parent: VertexId, depth: i64) {
        let x = (self.value)(parent, depth);
        debug_assert_ne!(x, self.unseen, "a reached vertex marked as unreached");
        self.mark[v as usize].store(x, Relaxed);
    }

    /// Whether `v` is still unreached.
    #[inline]
    fn unseen(&self, v: VertexId) -> bool {
        self.mark[v as usize].load(Relaxed) == self.unseen
    }

    /// Visits every level from the (marked) source, choosing each step's direction.
    fn levels(&self, source: VertexId) {
        let n = self.g.num_vertices();
        let mut depth = 0;
        let mut frontier = vec![source];
        let mut edges_to_check = self.g.num_edges();
        let mut scout = self.g.out_degree(source) as u64;
        let mut costs = StepCosts::default();
        while !frontier.is_empty() {
            if scout > edges_to_check / ALPHA {
                // Bottom-up while the frontier is large.
                let mut front = AtomicBits::of(n, &frontier);
                let mut awake = frontier.len() as u64;
                loop {
                    depth += 1;
                    let prev = awake;
                    let next = AtomicBits::new(n);
                    let t = Instant::now();
                    awake = self.bottom_up_step(&front, &next, depth);
                    costs.sweep = Some(t.elapsed().as_secs_f64());
                    self.reached.union(&next);
                    front = next;
                    if awake == 0 || (awake < prev && awake <= n as u64 / BETA) {
                        break;
                    }
                }
                frontier = front.members();
                scout = 1;
            } else {
                depth += 1;
                edges_to_check = edges_to_check.saturating_sub(scout);
                (frontier, scout) = self.top_down_step(frontier, scout, depth, &mut costs);
                self.reached.insert_all(&frontier);
            }
        }
    }

    /// Every unreached vertex with an in-neighbour in `front` is reached from it, and put
    /// in `next`; how many were. One sweep of the in-lists (an undirected store's out-lists
    /// are the same lists, and the ones its views stream).
    fn bottom_up_step(&self, front: &AtomicBits, next: &AtomicBits, depth: i64) -> u64 {
        let mut step = BottomUp {
            search: self,
            front,
            next,
            depth,
            awake: 0,
        };
        match self.g.is_undirected() {
            true => self.g.sweep_out(&mut step),
            false => self.g.sweep_in(&mut step),
        }
        step.awake
    }

    /// The unreached out-neighbours of `frontier` (with `scout` out-edges), reached from
    /// it: the next frontier, and its out-edges (the scout count that picks the next step's
    /// direction).
    fn top_down_step(
        &self,
        frontier: Vec<VertexId>,
        scout: u64,
        depth: i64,
        costs: &mut StepCosts,
    ) -> (Vec<VertexId>, u64) {
        let (n, m) = (self.g.num_vertices(), self.g.num_edges());
        let t = Instant::now();
        let large = frontier.len() > n / SWEPT_FRONTIER || scout > m / SWEPT_EDGES;
        if !large && !costs.sweep_pays(frontier.len()) {
            let g = self.g;
            let next = self.expand(g, &frontier, depth, |v| g.out_degree(v) as u64);
            costs.looked_up(frontier.len(), t.elapsed().as_secs_f64());
            return next;
        }
        let mut step = TopDown {
            search: self,
            frontier,
            sorted: false,
            depth,
            next: Vec::new(),
            scout: 0,
        };
        self.g.sweep_out(&mut step);
        costs.sweep = Some(t.elapsed().as_secs_f64());
        (step.next, step.scout)
    }

    /// Reaches the unreached out-neighbours of `frontier` (whose lists `g` holds): the
    /// vertices reached, and the sum of their `degree`s.
    fn expand<W: GraphView>(
        &self,
        g: &W,
        frontier: &[VertexId],
        depth: i64,
        degree: impl Fn(VertexId) -> u64 + Sync,
    ) -> (Vec<VertexId>, u64) {
        let unseen = self.unseen;
        // Each task counts its own scout edges: one counter shared by the threads bounced
        // its cache line between cores once per vertex reached.
        frontier
            .par_iter()
            .with_min_len(64)
            .fold(
                || (Vec::new(), 0u64),
                |(mut next, mut scout), &u| {
                    let x = (self.value)(u, depth);
                    debug_assert_ne!(x, unseen, "a reached vertex marked as unreached");
                    g.for_each_out(u, |v| {
                        let m = &self.mark[v as usize];
                        if m.load(Relaxed) == unseen
                            && m.compare_exchange(unseen, x, Relaxed, Relaxed).is_ok()
                        {
                            next.push(v);
                            scout += degree(v);
                        }
                    });
                    (next, scout)
                },
            )
            .reduce(
                || (Vec::new(), 0),
                |(mut a, sa), (b, sb)| {
                    a.extend(b);
                    (a, sa + sb)
                },
            )
    }
}

/// What the search's steps took so far, to choose between looking a small frontier's lists
/// up and sweeping them all. The work is the same in DRAM (a sweep is one visit of the
/// whole view): the choice matters only where a sweep reads the medium.
/// The seconds per vertex looked up are the last top-down step's, whose frontier (the
/// source and its first neighbors) has the longest lists: it errs towards sweeping, whose
/// cost is bounded by one read of the lists.
#[derive(Default)]
struct StepCosts {
    /// Seconds of the last sweep (a bottom-up or a swept top-down step).
    sweep: Option<f64>,
    /// Seconds per vertex of the last top-down step that looked its lists up.
    per_vertex: Option<f64>,
}

impl StepCosts {
    /// Whether looking up `frontier` vertices' lists would take longer than a sweep.
    fn sweep_pays(&self, frontier: usize) -> bool {
        match (self.sweep, self.per_vertex) {
            (Some(sweep), Some(per_vertex)) => frontier as f64 * per_vertex > sweep,
            _ => false,
        }
    }

    /// Records a top-down step that looked up `frontier` vertices' lists in `secs`.
    fn looked_up(&mut self, frontier: usize, secs: f64) {
        self.per_vertex = Some(secs / frontier.max(1) as f64);
    }
}

/// A bottom-up step as a sweep: each unreached vertex of a window looks for a parent in
/// `front` among its in-neighbors, stopping at the first.
struct BottomUp<'s, S> {
    search: &'s S,
    front: &'s AtomicBits,
    next: &'s AtomicBits,
    depth: i64,
    awake: u64,
}

impl<G, V> SweepIn for BottomUp<'_, Search<'_, G, V>>
where
    G: GraphView,
    V: Fn(VertexId, i64) -> i64 + Sync,
{
    /// Tasks take whole words of `next` (64 vertices), so each sets its words with a plain
    /// store; only a word the window shares with its neighbor window is or-ed atomically.
    fn visit<W: GraphView>(&mut self, vs: Range<usize>, g: &W) {
        let (s, front, next, depth) = (self.search, self.front, self.next, self.depth);
        self.awake += (vs.start / 64..vs.end.div_ceil(64))
            .into_par_iter()
            .with_min_len(16)
            .map(|w| {
                let (lo, hi) = ((w * 64).max(vs.start), ((w + 1) * 64).min(vs.end));
                let mut todo = !s.reached.word(w) & window_mask(lo - w * 64, hi - w * 64);
                let mut bits = 0u64;
                while todo != 0 {
                    let v = (w * 64) as VertexId + todo.trailing_zeros() as VertexId;
                    todo &= todo - 1;
                    debug_assert!(
                        s.unseen(v),
                        "a vertex reached before the step was not marked"
                    );
                    let found = g.find_in(v, |u| {
                        let parent = front.contains(u);
                        if parent {
                            s.set(v, u, depth);
                        }
                        parent
                    });
                    bits |= (found as u64) << (v % 64);
                }
                let writers = match hi - lo == 64 {
                    true => Writers::One,
                    false => Writers::Many,
                };
                next.or_word(w, bits, writers);
                bits.count_ones() as u64
            })
            .sum::<u64>();
    }
}

/// Bits `lo .. hi` of a word (`lo < hi <= 64`).
#[inline]
fn window_mask(lo: usize, hi: usize) -> u64 {
    let below_hi = if hi == 64 { !0 } else { (1u64 << hi) - 1 };
    below_hi & !((1u64 << lo) - 1)
}

/// A top-down step as a sweep: each window expands the frontier's vertices it holds.
struct TopDown<'s, S> {
    search: &'s S,
    frontier: Vec<VertexId>,
    /// Whether `frontier` is sorted: only a view that hands over windows needs it.
    sorted: bool,
    depth: i64,
    next: Vec<VertexId>,
    scout: u64,
}

impl<G, V> SweepIn for TopDown<'_, Search<'_, G, V>>
where
    G: GraphView,
    V: Fn(VertexId, i64) -> i64 + Sync,
{
    fn visit<W: GraphView>(&mut self, vs: Range<usize>, g: &W) {
        let s = self.search;
        let whole = vs.len() == g.num_vertices();
        if !whole && !self.sorted {
            self.frontier.par_sort_unstable();
            self.sorted = true;
        }
        let part = match whole {
            true => &self.frontier[..],
            false => {
                let lo = self.frontier.partition_point(|&v| (v as usize) < vs.start);
                let hi = self.frontier.partition_point(|&v| (v as usize) < vs.end);
                &self.frontier[lo..hi]
            }
        };
        // The window reads the lists it holds; any other would be looked up in every run.
        debug_assert!(whole || part.iter().all(|&v| vs.contains(&(v as usize))));
        // A window knows its own vertices' degrees; looking up the others' would read
        // every run at random, so they count as the mean degree (the scout count only
        // picks the next step's direction).
        let mean = g.num_edges().div_ceil(g.num_vertices().max(1) as u64);
        let degree = |v: VertexId| match whole || vs.contains(&(v as usize)) {
            true => g.out_degree(v) as u64,
            false => mean,
        };
        let (next, scout) = s.expand(g, part, self.depth, degree);
        self.next.extend(next);
        self.scout += scout;
    }
}

/// GAPBS's check: serial BFS depths; every reached vertex's parent is an in-neighbor one
/// level closer to the source, and exactly the reachable vertices are reached.
pub fn verify<G: GraphView>(g: &G, source: VertexId, parent: &[i64]) -> Result<(), String> {
    let n = g.num_vertices();
    let mut depth = vec![-1i64; n];
    let mut queue = std::collections::VecDeque::new();
    if (source as usize) < n && g.vertex_exists(source) {
        depth[source as usize] = 0;
        queue.push_back(source);
    }
    while let Some(u) = queue.pop_front() {
        g.for_each_out(u, |v| {
            if depth[v as usize] < 0 {
                depth[v as usize] = depth[u as usize] + 1;
                queue.push_back(v);
            }
        });
    }
    // Messages name vertices by the user's ids.
    let id = |v: usize| g.external_id(v as VertexId);
    let pid = |p: i64| {
        if p < 0 {
            "none".to_string()
        } else {
            id(p as usize).to_string()
        }
    };
    for v in 0..n {
        match (depth[v], parent[v]) {
            (-1, -1) => {}
            (-1, p) => {
                return Err(format!(
                    "vertex {} is unreachable but has parent {}",
                    id(v),
                    pid(p)
                ))
            }
            (_, -1) => return Err(format!("vertex {} is reachable but has no parent", id(v))),
            (0, p) if p != v as i64 => {
                return Err(format!("source {} has parent {}", id(v), pid(p)))
            }
            (0, _) => {}
            (d, p) => {
                let p = p as usize;
                if p >= n || depth[p] != d - 1 {
                    return Err(format!(
                        "vertex {} at depth {d} has parent {} not at depth {}",
                        id(v),
                        if p >= n {
                            format!("#{p} (out of range)")
                        } else {
                            id(p).to_string()
                        },
                        d - 1
                    ));
                }
                if !g.has_edge(p as VertexId, v as VertexId) {
                    return Err(format!(
                        "parent {} of vertex {} is not an in-neighbor",
                        id(p),
                        id(v)
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_window_mask_holds_the_bits_of_its_window() {
        assert_eq!(super::window_mask(0, 64), !0);
        assert_eq!(super::window_mask(3, 5), 0b11000);
        assert_eq!(super::window_mask(63, 64), 1 << 63);
        assert_eq!(super::window_mask(0, 1), 1);
    }
}
