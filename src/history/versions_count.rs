//! How big a run's graph was as of a commit inside its range, counted from its versions
//! without building it: what `stats --at` shows. A filter (`versions::layer_at`) writes
//! every kept entry into a new run, hundreds of MB at Kron20; a count reads the same
//! born and died columns and spells and writes nothing.

use super::ordinals::with_ordinals;
use super::versions::{list_starts, Scratch, Versions};
use crate::run::{DirData, Run};
use crate::types::VertexId;
use rayon::prelude::*;

/// Whether a count also counts self loops (an undirected store's edge count needs them:
/// a loop is one adjacency entry, every other edge two).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loops {
    Count,
    Skip,
}

/// What a run contributes to its graph's size: adds less tombstones in its out-direction
/// (or its one direction), and the same for self loops when asked. Runs are resolved,
/// so the sums over a graph's runs are its adjacency entries and self loops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counted {
    pub entries: i64,
    pub loops: i64,
}

impl std::ops::Add for Counted {
    type Output = Counted;
    fn add(self, o: Counted) -> Counted {
        Counted {
            entries: self.entries + o.entries,
            loops: self.loops + o.loops,
        }
    }
}

/// `run`'s out-direction as of the commit with LSN `lsn` inside its range, counted as
/// [`super::versions::layer_at`] would filter it.
pub(crate) fn count_at(run: &Run, ver: &Versions, lsn: u64, loops: Loops) -> Counted {
    let q = ver.commits.get().partition_point(|&c| c <= lsn) as u32;
    let (d, v) = (&run.out, &ver.out);
    let n = d.n_index();
    let chunk = (n / (rayon::current_num_threads() * 8)).max(4096);
    let starts = list_starts(d);
    (0..n.div_ceil(chunk).max(1))
        .into_par_iter()
        .map(|c| (c * chunk, ((c + 1) * chunk).min(n)))
        .map(|(a, b)| {
            with_ordinals!(&v.ords, |o| {
                let cols = (v, o.born.get(), o.died.get());
                count_range(d, cols, &starts, q, (a, b), (a == 0, b == n), loops)
            })
        })
        .reduce(Counted::default, |x, y| x + y)
}

/// [`count_at`] for index positions `a..b` (and, at the ends, the changes of vertices the
/// index does not hold below or above it). The range's born and died columns are counted
/// whole, not vertex by vertex; only the vertices with spells are walked (and, counting
/// loops, each vertex's own entry looked up).
fn count_range<B: Copy + Into<u32>>(
    d: &DirData,
    (ver, born, died): (&super::versions::DirVersions, &[B], &[B]),
    offs: &[u64],
    q: u32,
    (a, b): (usize, usize),
    (first, last): (bool, bool),
    loops: Loops,
) -> Counted {
    let toffs = d.toffs.get();
    let span = |o: &[u64]| {
        o.get(a)
            .zip(o.get(b))
            .map_or(0..0, |(&x, &y)| x as usize..y as usize)
    };
    let mut out = kept(&born[span(offs)], q) - kept(&died[span(toffs)], q);
    Scratch::each_settled(d, ver, (a, b), (first, last), q, |s, v| {
        out = out + settled(s, v, loops);
    });
    if loops == Loops::Count {
        let mut buf = Vec::new();
        for i in a..b.max(a) {
            let v = d.vid_at(i);
            let born = &born[offs[i] as usize..offs[i + 1] as usize];
            let died = match toffs.is_empty() {
                true => &[][..],
                false => &died[toffs[i] as usize..toffs[i + 1] as usize],
            };
            let adds = d.adds_into(i, &mut buf);
            out.loops += own(adds, born, v, q) - own(d.tombs_at(i), died, v, q);
        }
    }
    out
}

impl std::ops::Sub for Counted {
    type Output = Counted;
    fn sub(self, o: Counted) -> Counted {
        Counted {
            entries: self.entries - o.entries,
            loops: self.loops - o.loops,
        }
    }
}

/// The entries of one list whose ordinal is `q` or before (loops are counted apart).
fn kept<B: Copy + Into<u32>>(at: &[B], q: u32) -> Counted {
    Counted {
        entries: at.iter().filter(|&&b| b.into() <= q).count() as i64,
        loops: 0,
    }
}

/// What the spells of vertex `v` settled add and remove.
fn settled(s: &Scratch, v: VertexId, loops: Loops) -> Counted {
    let has = |xs: &[VertexId]| (loops == Loops::Count && xs.binary_search(&v).is_ok()) as i64;
    Counted {
        entries: s.more_adds.len() as i64 - s.more_tombs.len() as i64,
        loops: has(&s.more_adds) - has(&s.more_tombs),
    }
}

/// 1 if `v` itself is in the sorted `ids` with an ordinal `q` or before in `at`.
fn own<B: Copy + Into<u32>>(ids: &[VertexId], at: &[B], v: VertexId, q: u32) -> i64 {
    ids.binary_search(&v)
        .is_ok_and(|p| at.get(p).is_some_and(|&b| b.into() <= q)) as i64
}

/// What a run wholly before the commit contributes: all of it (its loops from its header,
/// or a search per vertex in a run written before headers counted them).
pub(crate) fn whole(run: &Run, loops: Loops) -> Counted {
    let d = &run.out;
    let loops = match (loops, run.header.loops) {
        (Loops::Skip, _) => 0,
        (Loops::Count, Some(l)) => l,
        (Loops::Count, None) => (0..d.n_index())
            .into_par_iter()
            .map_init(Vec::new, |buf, i| {
                let v = d.vid_at(i);
                let has = |ids: &[VertexId]| ids.binary_search(&v).is_ok() as i64;
                has(d.adds_into(i, buf)) - has(d.tombs_at(i))
            })
            .sum(),
    };
    Counted {
        entries: d.n_adds() as i64 - d.n_tombs() as i64,
        loops,
    }
}
