//! Connected components by Afforest (Sutton, Ben-Nun, Barak, IPDPS'18), as in GAPBS:
//! link each vertex to a couple of its neighbors, compress, guess the largest component
//! by sampling, then finish linking only vertices outside it. Directions are ignored
//! (weak connectivity).

use super::par_range;
use crate::snapshot::{Dir, GraphView, SweepIn};
use crate::types::AtomicVertexId;
use crate::types::VertexId;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::Ordering::Relaxed;

/// Out-neighbors each vertex is linked to before the giant component is guessed. GAPBS
/// links them in as many rounds, compressing between; here they are linked in one sweep,
/// so that a store streamed from the medium reads its lists once (the components, and so
/// the labels, are the same).
const SAMPLED_NEIGHBORS: usize = 2;
const SAMPLES: usize = 1024;

/// Lock-free union: hook the larger root under the smaller.
fn link(u: VertexId, v: VertexId, comp: &[AtomicVertexId]) {
    let mut p1 = comp[u as usize].load(Relaxed);
    let mut p2 = comp[v as usize].load(Relaxed);
    while p1 != p2 {
        let (high, low) = if p1 > p2 { (p1, p2) } else { (p2, p1) };
        let p_high = comp[high as usize].load(Relaxed);
        if p_high == low
            || (p_high == high
                && comp[high as usize]
                    .compare_exchange(high, low, Relaxed, Relaxed)
                    .is_ok())
        {
            break;
        }
        p1 = comp[comp[high as usize].load(Relaxed) as usize].load(Relaxed);
        p2 = comp[low as usize].load(Relaxed);
    }
}

fn compress(comp: &[AtomicVertexId]) {
    (0..comp.len())
        .into_par_iter()
        .with_min_len(4096)
        .for_each(|v| {
            while comp[v].load(Relaxed) != comp[comp[v].load(Relaxed) as usize].load(Relaxed) {
                let gp = comp[comp[v].load(Relaxed) as usize].load(Relaxed);
                comp[v].store(gp, Relaxed);
            }
        });
}

/// Component id of every vertex (the smallest dense id in its component after compression).
///
/// Each phase is a sweep ([`GraphView::sweep_out`], [`GraphView::sweep_in`]), so a store
/// whose lists do not fit in DRAM streams them, window by window.
#[must_use = "the kernel's result is its return value"]
pub fn afforest<G: GraphView>(g: &G) -> Vec<VertexId> {
    let n = g.num_vertices();
    let comp: Vec<AtomicVertexId> = crate::types::par_vertices(n)
        .map(AtomicVertexId::new)
        .collect();
    // Sample: link each vertex to its first out-neighbors, in one sweep.
    g.sweep_out(&mut Sample { comp: &comp });
    compress(&comp);
    // The most frequent component in a sample is probably the giant one.
    let giant = {
        let mut counts = std::collections::HashMap::new();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x2545_f491_4f6c_dd1d);
        for _ in 0..SAMPLES.min(n) {
            let v = rng.random_range(0..n);
            *counts.entry(comp[v].load(Relaxed)).or_insert(0) += 1;
        }
        counts
            .into_iter()
            .max_by_key(|&(c, k)| (k, std::cmp::Reverse(c)))
            .map(|(c, _)| c)
    };
    // Finish: remaining out-neighbors, and in-neighbors for directed graphs: in one pass
    // when the in-sweep hands the view over whole, as GAPBS does, else a sweep each.
    let mut finish = Finish {
        giant,
        comp: &comp,
        dir: if g.is_undirected() { Dir::Out } else { Dir::In },
        out_done: false,
    };
    if !g.is_undirected() {
        g.sweep_in(&mut finish);
    }
    if !finish.out_done {
        finish.dir = Dir::Out;
        g.sweep_out(&mut finish);
    }
    compress(&comp);
    comp.into_iter().map(|c| c.into_inner()).collect()
}

/// The sampling: each vertex linked to its first [`SAMPLED_NEIGHBORS`] out-neighbors.
///
/// A view that hands itself over whole (in DRAM) links them as GAPBS does, one neighbor
/// per round with a compression between, so each round's links climb trees the last one
/// flattened (with the labels initialised in parallel, gap-cc took 0.88x the time of one
/// round linking both on relabelled Kron22). The lists are read once even so, in the first
/// round, which keeps the later neighbors for the rounds after it: a layered view finds a
/// vertex's place in each run of its chain at every read, and a round each cost gap-cc's
/// sampling 2.5x the compacted store's on Kron24's 46 runs. A view that streams its lists
/// window by window links them all in its one pass; the components are the same.
struct Sample<'c> {
    comp: &'c [AtomicVertexId],
}

/// A vertex's sampled neighbors after the first; the vertex itself where it has fewer
/// (linking a vertex to itself changes nothing).
type Later = [VertexId; SAMPLED_NEIGHBORS - 1];

impl SweepIn for Sample<'_> {
    fn visit<W: GraphView>(&mut self, vs: Range<usize>, g: &W) {
        let comp = self.comp;
        if vs.len() < g.num_vertices() {
            return par_range(vs).with_min_len(1024).for_each(|u| {
                let (first, later) = sampled(g, u);
                first
                    .into_iter()
                    .chain(later)
                    .for_each(|v| link(u, v, comp));
            });
        }
        // The whole view: `later[u]` is vertex `u`'s.
        debug_assert_eq!(vs.start, 0, "a whole view's range starts at vertex 0");
        let later: Vec<Later> = par_range(vs)
            .with_min_len(1024)
            .map(|u| {
                let (first, later) = sampled(g, u);
                first.into_iter().for_each(|v| link(u, v, comp));
                later
            })
            .collect();
        for r in 0..SAMPLED_NEIGHBORS - 1 {
            compress(comp);
            (later.par_iter().with_min_len(1024).enumerate())
                .for_each(|(u, l)| link(u as VertexId, l[r], comp));
        }
    }
}

/// `u`'s first out-neighbor, if any, and the next ones (`u` itself where it has fewer).
fn sampled<W: GraphView>(g: &W, u: VertexId) -> (Option<VertexId>, Later) {
    let (mut first, mut later, mut i) = (None, [u; SAMPLED_NEIGHBORS - 1], 0);
    g.find_out(u, |v| {
        match i {
            0 => first = Some(v),
            _ => later[i - 1] = v,
        }
        i += 1;
        i == SAMPLED_NEIGHBORS
    });
    (first, later)
}

/// The final links of the vertices outside the giant component: their out-neighbors
/// past those sampled, or all their in-neighbors, or both when an in-sweep hands the view
/// over whole (it is in DRAM: one pass over the labels instead of two, and each vertex's
/// lists read together).
struct Finish<'c> {
    giant: Option<VertexId>,
    comp: &'c [AtomicVertexId],
    dir: Dir,
    /// Whether the out-neighbors were linked already, by a whole in-sweep.
    out_done: bool,
}

impl SweepIn for Finish<'_> {
    fn visit<W: GraphView>(&mut self, vs: Range<usize>, g: &W) {
        let (giant, comp) = (self.giant, self.comp);
        let both = self.dir == Dir::In && vs.len() == g.num_vertices();
        let (out, inn) = (self.dir == Dir::Out || both, self.dir == Dir::In);
        par_range(vs).with_min_len(256).for_each(|u| {
            if Some(comp[u as usize].load(Relaxed)) == giant {
                return;
            }
            if out {
                let mut i = 0;
                g.for_each_out(u, |v| {
                    if i >= SAMPLED_NEIGHBORS {
                        link(u, v, comp);
                    }
                    i += 1;
                });
            }
            if inn {
                g.for_each_in(u, |v| link(u, v, comp));
            }
        });
        self.out_done |= both;
    }
}

/// GAPBS's check: labels agree with a serial BFS over the undirected view, in both
/// directions (same label exactly when connected).
pub fn verify<G: GraphView>(g: &G, comp: &[VertexId]) -> Result<(), String> {
    let n = g.num_vertices();
    let mut seen = vec![false; n];
    let mut label_owner: std::collections::HashMap<VertexId, VertexId> = Default::default();
    let mut nbrs = Vec::new();
    for s in 0..n as VertexId {
        if seen[s as usize] {
            continue;
        }
        let label = comp[s as usize];
        if let Some(&other) = label_owner.get(&label) {
            return Err(format!(
                "vertices {} and {} share label {} but are not connected",
                g.external_id(other),
                g.external_id(s),
                g.external_id(label)
            ));
        }
        label_owner.insert(label, s);
        seen[s as usize] = true;
        let mut stack = vec![s];
        while let Some(u) = stack.pop() {
            if comp[u as usize] != label {
                return Err(format!(
                    "vertices {} and {} are connected but labelled apart",
                    g.external_id(s),
                    g.external_id(u)
                ));
            }
            super::undirected_neighbors(g, u, &mut nbrs);
            for &w in &nbrs {
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    stack.push(w);
                }
            }
        }
    }
    Ok(())
}
