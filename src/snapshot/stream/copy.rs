//! Every live list of one direction merged from all of a snapshot's runs into one DRAM
//! CSR, for a kernel that reads them in no order (SSSP's relaxations, BC's traversals and
//! dependency sums) or sweeps them pass after pass (CDLP with 12 iterations or more; PageRank
//! merges window by window instead) on runs no layered view reads: compressed runs, or more
//! than it takes.
//!
//! Read as they lie, such runs cost a kernel a lookup per run and visit (a compressed
//! run's stream head decoded, a plain one's index searched) and, in a compressed run, the
//! list decoded again at every visit: bc on Kron24 ingested at a 64 MiB budget and
//! compressed (46 runs) took 3.6x the compacted store, gap-sssp 2.7x. The copy is the
//! merge of the streamed sweeps ([`super::merge`]) over all vertices at once, made from
//! the mappings in parallel: each run's part decoded once, newer runs' tombstones applied,
//! neighbors run by run, oldest first (the general path's order, so a kernel's sums come
//! out the same), with their weights in a weighted store. It is made within the copy
//! budget.

use super::merge::{count, merge_into};
use super::runs::mapped_parts;
use crate::medium::dram::AnonArray;
use crate::run::{Dir, Run};
use crate::snapshot::Snapshot;
use crate::types::{VertexId, ID_BYTES};
use std::sync::Arc;

/// One direction's live lists, each vertex's runs end to end: a CSR whose lists are
/// sorted within each run's stretch, not across them.
pub(crate) struct RunsCopy {
    offs: AnonArray<u64>,
    ids: AnonArray<VertexId>,
    /// Weights beside `ids` (empty when the store is unweighted).
    wts: AnonArray<f64>,
}

impl RunsCopy {
    /// `v`'s live neighbors (none past the snapshot's vertices).
    #[inline(always)]
    pub(crate) fn list(&self, v: VertexId) -> &[VertexId] {
        let v = v as usize;
        match (self.offs.get(v), self.offs.get(v + 1)) {
            (Some(&a), Some(&b)) => &self.ids[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The weights of `v`'s neighbors, beside [`RunsCopy::list`] (empty in an unweighted
    /// store).
    #[inline(always)]
    pub(crate) fn weights(&self, v: VertexId) -> &[f64] {
        let v = v as usize;
        match (self.wts.is_empty(), self.offs.get(v), self.offs.get(v + 1)) {
            (false, Some(&a), Some(&b)) => &self.wts[a as usize..b as usize],
            _ => &[],
        }
    }

    /// DRAM it holds, in bytes.
    fn bytes(&self) -> u64 {
        use std::mem::size_of_val;
        (size_of_val(&self.offs[..]) + size_of_val(&self.ids[..]) + size_of_val(&self.wts[..]))
            as u64
    }

    /// Bytes a copy of `dir` of `runs` over `n` vertices takes at most: every run's
    /// neighbors (tombstones ignored), their weights if `weighted`, and an offset per
    /// vertex.
    fn bytes_at_most(runs: &[Arc<Run>], dir: Dir, n: usize, weighted: bool) -> u64 {
        let ids: u64 = runs.iter().map(|r| r.dir(dir).n_adds()).sum();
        let per_id = ID_BYTES as u64 + if weighted { 8 } else { 0 };
        ids * per_id + (n as u64 + 1) * 8
    }

    /// Merges `dir` of `runs` over vertices `0..n` (see [`merge_lists`]).
    fn merge(runs: &[Arc<Run>], dir: Dir, n: usize, weighted: bool) -> Option<RunsCopy> {
        let (offs, ids, wts) = merge_lists(runs, dir, n, weighted)?;
        Some(RunsCopy { offs, ids, wts })
    }
}

/// A CSR of live lists: offsets (one more than vertices), neighbor ids, and weights beside
/// them (empty when unweighted).
pub(crate) type Lists = (AnonArray<u64>, AnonArray<VertexId>, AnonArray<f64>);

/// The live lists of `dir` of `runs` over vertices `0..n` merged into one CSR, with
/// weights if `weighted`: each vertex's runs end to end, oldest first. Part by part, in
/// parallel over tasks of vertices, so each run is read in order; a layered view's copy
/// is made this way too (walking each vertex's chain instead took 1.9 s for Kron24's
/// in-lists at a 64 MiB budget, 46 runs). `None` when a compressed run is unchecked, the
/// merge's cut indices (u32) cannot number the vertices, or the DRAM cannot be mapped.
pub(crate) fn merge_lists(runs: &[Arc<Run>], dir: Dir, n: usize, weighted: bool) -> Option<Lists> {
    if u32::try_from(n).is_err() {
        return None;
    }
    let parts = mapped_parts(runs, dir, 0..n)?;
    let counts = count(&parts, 0..n);
    let mut offs = AnonArray::<u64>::zeroed(n + 1).ok()?;
    counts.offsets_into(&mut offs);
    let total = offs[n] as usize;
    let mut ids = AnonArray::<VertexId>::zeroed(total).ok()?;
    let mut wts = AnonArray::<f64>::zeroed(if weighted { total } else { 0 }).ok()?;
    merge_into(&parts, 0..n, &counts, &offs, (&mut ids, &mut wts));
    Some((offs, ids, wts))
}

impl Snapshot {
    /// A kernel is about to read every list of `dirs` in no order (or pass after pass):
    /// on runs no layered view reads, each direction is merged into a [`RunsCopy`] if it
    /// fits what is left of `budget` bytes; later reads of the snapshot and its clones
    /// use it. Nothing for a snapshot of one run (read as it lies), a past graph, or runs
    /// whose sweeps stream.
    pub(crate) fn copy_runs(&self, dirs: &[Dir], budget: u64) {
        let streams = self.runs_stream().is_some() || self.runs_stream_out().is_some();
        let streams = streams || self.streams_pending();
        if self.runs.len() < 2 || self.point.is_some() || streams {
            return;
        }
        let mut left = budget;
        for &d in dirs {
            let slot = &self.copies[self.copy_slot(d)];
            if slot.get().is_some() {
                continue;
            }
            let made = slot.get_or_build(|| {
                let weighted = self.weighted;
                (RunsCopy::bytes_at_most(&self.runs, d, self.n, weighted) <= left)
                    .then(|| RunsCopy::merge(&self.runs, d, self.n, weighted))
                    .flatten()
            });
            let bytes = super::super::budget_taken(made, RunsCopy::bytes, || {
                RunsCopy::bytes_at_most(&self.runs, d, self.n, self.weighted)
            });
            left = left.saturating_sub(bytes);
        }
    }

    /// Where a copy of direction `d` is kept: an undirected store's in-lists are its
    /// out-lists.
    #[inline(always)]
    fn copy_slot(&self, d: Dir) -> usize {
        match (d, self.undirected) {
            (Dir::In, false) => 1,
            _ => 0,
        }
    }

    /// The copy of direction `d`'s lists, if one was made.
    #[inline(always)]
    pub(crate) fn runs_copy(&self, d: Dir) -> Option<&RunsCopy> {
        self.copies[self.copy_slot(d)].get()?.as_ref()
    }

    /// Whether some direction's lists were merged into a copy.
    pub(crate) fn runs_copied(&self) -> bool {
        self.copies
            .iter()
            .any(|c| c.get().is_some_and(Option::is_some))
    }
}
