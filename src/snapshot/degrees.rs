//! Every vertex's degree at once, run by run.
//!
//! The general path answers one vertex's degree by searching each run of its partition's
//! chain (a binary search per sparse run): for a kernel that wants every degree of a store
//! of 47 runs (Kron24 as a 64 MiB budget leaves it) that was 2-3 s before PageRank's first
//! pass. Counted run by run over chunks of vertices, it is one walk over each run's index
//! in order, in parallel, and reads each run's offsets once, in file order.

use super::Snapshot;
use crate::run::Dir;
use crate::types::{VertexId, VERTEX_TASK};
use rayon::prelude::*;

impl Snapshot {
    /// Counts every vertex's degree in direction `d` once, run by run, for
    /// [`crate::GraphView::out_degree`] and `in_degree` to answer from DRAM (4 B per
    /// vertex), if it has several runs: each degree looked up would otherwise search every
    /// run of the vertex's chain. Through pages faulted at random, BFS's top-down step from
    /// 378 vertices of Kron24's 47 runs under a 768 MiB cap looked up the degrees of the
    /// 694 thousand it reached in 114 s; in DRAM, a layered view's lookups (a rank word and
    /// two offsets in each of about 10 runs) were a quarter of gap-bfs's kernel time on the
    /// same store. Nothing is kept if a degree exceeds `u32::MAX`.
    pub(crate) fn count_degrees(&self, d: Dir) {
        if self.runs.len() > 1 && self.point.is_none() {
            self.counted[super::dir_index(d)].get_or_build(|| self.degrees_u32(d));
        }
    }

    /// Every vertex's degree in direction `d`, if [`Snapshot::count_degrees`] counted them.
    pub(crate) fn counted_degrees(&self, d: Dir) -> Option<&[u32]> {
        self.counted[super::dir_index(d)].get()?.as_deref()
    }

    /// The degree of `v` in direction `d`, if [`Snapshot::count_degrees`] counted them.
    #[inline]
    pub(super) fn counted_degree(&self, d: Dir, v: VertexId) -> Option<usize> {
        self.counted_degrees(d).map(|deg| deg[v as usize] as usize)
    }

    /// Every vertex's degree in direction `d`, by dense id: [`Snapshot::degree`]'s for each
    /// (neighbors added less tombstones, over every run that holds the vertex).
    pub(super) fn degrees(&self, d: Dir) -> Vec<usize> {
        if let Some(p) = self.point_dir(d) {
            return crate::types::par_vertices(self.n)
                .map(|v| p.degree(v))
                .collect();
        }
        if let Some(Some(deg)) = self.counted[super::dir_index(d)].get() {
            return deg.iter().map(|&x| x as usize).collect();
        }
        let mut deg = vec![0usize; self.n];
        deg.par_chunks_mut(VERTEX_TASK)
            .enumerate()
            .for_each(|(c, chunk)| self.count_chunk(d, c * VERTEX_TASK, chunk));
        deg
    }

    /// [`Snapshot::degrees`] in 4 B each; `None` if one does not fit.
    fn degrees_u32(&self, d: Dir) -> Option<Vec<u32>> {
        let mut deg = vec![0u32; self.n];
        let fits = deg
            .par_chunks_mut(VERTEX_TASK)
            .enumerate()
            .all(|(c, chunk)| {
                let mut wide = vec![0usize; chunk.len()];
                self.count_chunk(d, c * VERTEX_TASK, &mut wide);
                chunk
                    .iter_mut()
                    .zip(wide)
                    .all(|(x, w)| u32::try_from(w).map(|w| *x = w).is_ok())
            });
        fits.then_some(deg)
    }

    /// The degrees of the vertices `lo..lo + chunk.len()` into `chunk` (zeroed).
    fn count_chunk(&self, d: Dir, lo: usize, chunk: &mut [usize]) {
        let hi = lo + chunk.len();
        for r in self.runs.iter() {
            let dd = r.dir(d);
            for i in dd.index_range(lo as VertexId, hi as VertexId) {
                let at = &mut chunk[dd.vid_at(i) as usize - lo];
                // A run's tombstones remove older runs' neighbors: only the sum over runs
                // is a degree, so one run's term may wrap on the way.
                *at = at
                    .wrapping_add(dd.degree_at(i))
                    .wrapping_sub(dd.tombs_at(i).len());
            }
        }
        // As `degree`: a damaged store never yields a negative degree.
        for x in chunk.iter_mut() {
            *x = (*x as isize).max(0) as usize;
        }
    }
}
