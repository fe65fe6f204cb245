//! A point's lists copied out for a kernel that sweeps them pass after pass.
//!
//! A point reads the run through its mask, and the spells through theirs: per vertex two
//! ranges and a word of bits per 64 entries, where a compacted run hands over one slice.
//! A kernel that reads every list once pays that once; PageRank pays it at each of its 20
//! sweeps, 1.5x the plain run at Kron20's middle round. Its swept lists are copied once,
//! as the layered view copies a several-run store's ([`Snapshot::plan_sweeps`]), and it
//! reads the copy as it reads a compacted run.

use super::point::PointDir;
use super::{Dir, Snapshot};
use crate::types::{VertexId, VERTEX_TASK};
use rayon::prelude::*;

/// One direction of a point as plain lists: `ids[offs[v]..offs[v + 1]]` are `v`'s,
/// ascending. In pages of the base size: asking for huge ones stalled a fresh process
/// 0.2-0.4 s on this VM, against 25 ms of faults for Kron20's in-lists (72 MB); see
/// `medium::dram::AnonArray`.
pub(crate) struct PointCopy {
    pub(crate) offs: Vec<u64>,
    pub(crate) ids: Vec<VertexId>,
}

impl PointCopy {
    /// DRAM held, in bytes.
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of_val(&self.offs[..]) + std::mem::size_of_val(&self.ids[..])
    }
}

/// `n` vertices' lists of one direction of a point, copied and sorted: degrees first, so
/// each block of vertices writes its own share of one array.
pub(crate) fn copy_dir(n: usize, side: &PointDir) -> PointCopy {
    let mut offs = vec![0u64; n + 1];
    (offs[1..].par_iter_mut().enumerate())
        .with_max_len(VERTEX_TASK)
        .for_each(|(v, d)| *d = side.degree(v as VertexId) as u64);
    for v in 0..n {
        offs[v + 1] += offs[v];
    }
    let mut ids = vec![0 as VertexId; offs[n] as usize];
    let mut parts = Vec::new();
    let mut rest = &mut ids[..];
    for lo in (0..n).step_by(VERTEX_TASK) {
        let hi = (lo + VERTEX_TASK).min(n);
        let (part, tail) = std::mem::take(&mut rest).split_at_mut((offs[hi] - offs[lo]) as usize);
        parts.push((lo..hi, part));
        rest = tail;
    }
    parts.into_par_iter().for_each(|(vs, part)| {
        let (mut k, mut spare) = (0, Vec::new());
        for v in vs {
            // Sorted as every list is, so that lookups and sorted reads of the copy hold.
            k += side.write_sorted(v as VertexId, &mut part[k..], &mut spare);
        }
        debug_assert_eq!(k, part.len(), "a block fills exactly its part");
    });
    PointCopy { offs, ids }
}

impl Snapshot {
    /// Copies the lists of `dirs` of the point this snapshot is, where not done yet and
    /// where they fit the copy budget (as [`Snapshot::plan_sweeps`] does for several runs);
    /// returns whether every direction asked for is copied. `false` when not a point.
    pub(crate) fn plan_point_sweeps(&self, dirs: &[Dir]) -> bool {
        let Some(idx) = self.point.as_deref() else {
            return false;
        };
        let mut left = self.copy_budget_now();
        let mut all = true;
        for &d in dirs {
            let Some(side) = self.point_dir_masked(d) else {
                return false;
            };
            let need = (self.n + 1) * 8 + side.entries() * std::mem::size_of::<VertexId>();
            let made = (idx.copy(d))
                .get_or_build(|| (need as u64 <= left).then(|| copy_dir(self.n, &side)));
            let bytes = super::budget_taken(made, |c| c.bytes() as u64, || need as u64);
            left = left.saturating_sub(bytes);
            all &= made.is_some_and(|c| c.is_some());
        }
        all
    }
}
