//! Which of a snapshot's runs can hold a vertex.
//!
//! Above level 0 a store keeps one run per partition of `2^s` vertex ids per level (see
//! the store's merge policy), so a snapshot of a big store holds many runs, each of which
//! can hold only a small part of the vertices. Reading a vertex visits only the runs of its
//! partition's chain: the runs that can hold any vertex, and those of its own partition.

use crate::run::Run;
use crate::types::VertexId;
use std::sync::Arc;

/// Per partition, the positions (oldest first) of the runs that can hold its vertices.
pub(crate) struct Chains {
    shift: u32,
    lists: Vec<Box<[u32]>>,
}

impl Chains {
    /// The chains of `runs` over vertex ids below `n`.
    pub(crate) fn new(runs: &[Arc<Run>], n: usize) -> Chains {
        // Runs of one store share one shift; were they mixed, the finest one still gives
        // correct chains (a coarser run overlaps several partitions and joins each).
        let shift = (runs.iter())
            .map(|r| r.header.part_shift())
            .filter(|&s| s > 0)
            .min()
            .unwrap_or(63);
        let parts = (((n as u64).max(1) - 1) >> shift) + 1;
        let headers: Vec<&crate::run::RunHeader> = runs.iter().map(|r| &r.header).collect();
        let lists = crate::run::format::chains_by_partition(&headers, shift, parts)
            .into_iter()
            .map(Vec::into_boxed_slice)
            .collect();
        Chains { shift, lists }
    }

    /// Positions of the runs that can hold `v`, oldest first.
    #[inline]
    pub(crate) fn of(&self, v: VertexId) -> &[u32] {
        let j = (v as u64 >> self.shift) as usize;
        &self.lists[j.min(self.lists.len() - 1)]
    }
}

impl super::Snapshot {
    /// A directory of every sparse run index (see `DirData::build_directory`) when kernels read
    /// this snapshot through the general path (more runs than a layered view reads), which
    /// looks each vertex up in every run of its chain: on Kron24 at a 64 MiB budget (46
    /// runs) those searches were most of gap-sssp's time, 7x the compacted store's.
    pub(crate) fn plan_lookups(&self) {
        use rayon::prelude::*;
        if self.runs.len() < 2 || super::layered::layers(&self.runs) {
            return;
        }
        self.runs.par_iter().for_each(|r| {
            r.dir(crate::run::Dir::Out).build_directory();
            r.dir(crate::run::Dir::In).build_directory();
        });
    }
}
