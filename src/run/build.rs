//! Assembling a run from per-vertex output produced in parallel.
//!
//! Producers (memtable seal, merge) work on disjoint vertex ranges in parallel, each filling
//! a [`DirPart`] in vertex order; [`assemble`] concatenates the parts into one direction and
//! picks a dense index when the run touches a large share of the vertex space.

use super::format::{DirCounts, RunHeader, HAS_IN, IN_DENSE, OUT_DENSE};
use super::{DirData, Run, Sec};
use crate::types::VertexId;
use rayon::prelude::*;

/// Output for one vertex range of one direction, vertices ascending.
#[derive(Default)]
pub struct DirPart {
    vids: Vec<u32>,
    counts: Vec<u32>,
    adds: Vec<u32>,
    tcounts: Vec<u32>,
    tombs: Vec<u32>,
}

impl DirPart {
    /// Records vertex `v`'s sorted neighbors and tombstones (skipped when both are empty).
    #[inline]
    pub fn push(&mut self, v: VertexId, adds: &[u32], tombs: &[u32]) {
        if adds.is_empty() && tombs.is_empty() {
            return;
        }
        debug_assert!(self.vids.last().is_none_or(|&l| l < v));
        self.vids.push(v);
        self.counts.push(adds.len() as u32);
        self.adds.extend_from_slice(adds);
        self.tcounts.push(tombs.len() as u32);
        self.tombs.extend_from_slice(tombs);
    }

    /// Neighbor ids pushed so far.
    pub fn len(&self) -> usize {
        self.adds.len()
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.vids.is_empty()
    }
}

/// Concatenates `parts` (in vertex order, disjoint ranges) into one direction.
pub fn assemble(parts: Vec<DirPart>, vertex_space: u64) -> DirData {
    let n_vids: usize = parts.iter().map(|p| p.vids.len()).sum();
    let n_adds: usize = parts.iter().map(|p| p.adds.len()).sum();
    let n_tombs: usize = parts.iter().map(|p| p.tombs.len()).sum();
    // Dense costs 8 bytes per vertex of the space, sparse 12 per listed vertex plus a
    // binary search per lookup: go dense once a quarter of the space is touched.
    let dense = n_vids as u64 * 4 >= vertex_space;
    let n_index = if dense { vertex_space as usize } else { n_vids };
    let mut offs = vec![0u64; n_index + 1];
    let mut toffs = if n_tombs > 0 {
        vec![0u64; n_index + 1]
    } else {
        Vec::new()
    };
    let mut vids = Vec::with_capacity(if dense { 0 } else { n_vids });
    {
        let (mut a, mut t, mut i) = (0u64, 0u64, 0usize);
        for p in &parts {
            for k in 0..p.vids.len() {
                let v = p.vids[k] as usize;
                if dense {
                    // Vertices between the previous listed one and v hold nothing.
                    while i < v {
                        offs[i + 1] = a;
                        if n_tombs > 0 {
                            toffs[i + 1] = t;
                        }
                        i += 1;
                    }
                } else {
                    vids.push(p.vids[k]);
                }
                a += p.counts[k] as u64;
                t += p.tcounts[k] as u64;
                offs[i + 1] = a;
                if n_tombs > 0 {
                    toffs[i + 1] = t;
                }
                i += 1;
            }
        }
        while i < n_index {
            offs[i + 1] = a;
            if n_tombs > 0 {
                toffs[i + 1] = t;
            }
            i += 1;
        }
    }
    let adds = concat(&parts, |p| &p.adds, n_adds);
    let tombs = concat(&parts, |p| &p.tombs, n_tombs);
    DirData {
        dense,
        vids: Sec::Owned(vids),
        offs: Sec::Owned(offs),
        adds: Sec::Owned(adds),
        toffs: Sec::Owned(toffs),
        tombs: Sec::Owned(tombs),
    }
}

fn concat(parts: &[DirPart], f: impl Fn(&DirPart) -> &Vec<u32> + Sync, n: usize) -> Vec<u32> {
    let mut out = vec![0u32; n];
    let mut rest = out.as_mut_slice();
    let mut jobs = Vec::with_capacity(parts.len());
    for p in parts {
        let (head, tail) = rest.split_at_mut(f(p).len());
        jobs.push((head, f(p)));
        rest = tail;
    }
    jobs.into_par_iter()
        .with_min_len(4)
        .for_each(|(dst, src)| dst.copy_from_slice(src));
    out
}

/// Everything but the adjacency that a new run's header needs.
pub struct RunMeta {
    /// Unique run id.
    pub id: u64,
    /// Compaction level.
    pub level: u64,
    /// First LSN covered.
    pub min_lsn: u64,
    /// LSN after the last one covered.
    pub max_lsn: u64,
    /// Vertex ids are below this.
    pub vertex_space: u64,
}

/// Builds an in-DRAM run from assembled directions and vertex states.
pub fn finish(meta: RunMeta, out: DirData, inn: Option<DirData>, vertex_ops: Vec<u32>) -> Run {
    let counts = |d: &DirData| DirCounts {
        n_index: d.n_index() as u64,
        n_adds: d.n_adds(),
        n_tombs: d.n_tombs(),
    };
    let mut flags = 0;
    if out.dense {
        flags |= OUT_DENSE;
    }
    if let Some(i) = &inn {
        flags |= HAS_IN;
        if i.dense {
            flags |= IN_DENSE;
        }
    }
    let mut header = RunHeader {
        flags,
        id: meta.id,
        level: meta.level,
        min_lsn: meta.min_lsn,
        max_lsn: meta.max_lsn,
        vertex_space: meta.vertex_space,
        n_vertex_ops: vertex_ops.len() as u64,
        dirs: [counts(&out), inn.as_ref().map(counts).unwrap_or_default()],
        ..Default::default()
    };
    header.lay_out();
    Run {
        header,
        out,
        inn,
        vertex_ops: Sec::Owned(vertex_ops),
        file: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> Vec<DirPart> {
        let mut a = DirPart::default();
        a.push(1, &[2, 3], &[]);
        a.push(4, &[], &[9]);
        let mut b = DirPart::default();
        b.push(6, &[0], &[1, 5]);
        vec![a, DirPart::default(), b]
    }

    #[test]
    fn sparse_and_dense_agree() {
        for space in [8u64, 1000] {
            let d = assemble(parts(), space);
            assert_eq!(d.dense, space == 8);
            assert_eq!(d.adds(1), &[2, 3]);
            assert_eq!(d.tombs(1), &[] as &[u32]);
            assert_eq!(d.tombs(4), &[9]);
            assert_eq!(d.adds(6), &[0]);
            assert_eq!(d.tombs(6), &[1, 5]);
            assert_eq!(d.adds(5), &[] as &[u32]);
            assert_eq!(d.adds(7), &[] as &[u32]);
            assert_eq!(d.n_adds(), 3);
            assert_eq!(d.n_tombs(), 3);
        }
    }
}
