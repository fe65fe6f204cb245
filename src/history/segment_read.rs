//! A history segment's edge changes read where they lie, a range of sources at a time.
//!
//! Decoding a segment ([`super::segment::read`]) makes 12 bytes of every change the file
//! holds in 5: a Kron24 load's ten segments (1.96 GB) decode to 3.2 GB, and a derivation
//! of versions that held them all, gathered and sorted beside them, would need about 20 GB.
//! Format 3 lists each source's changes together, with an index of sources, so a reader can
//! take one range of sources from the mapped file and leave the rest to the page cache:
//! what [`ChangeSet::sources_in`] does. The file is checked as a decode checks it (both
//! checksums, its sources ascending and covering every change, every change's commit in its
//! table) before a change is handed out.

use super::segment::{self, Header};
use crate::medium::{Access, Mapped, Medium};
use crate::memtable::history::{Commit, Sealed};
use crate::types::{id_from_le, VertexId, ID_BYTES};
use crate::{Error, Result};
use std::sync::Arc;

/// One segment's changes: decoded in DRAM (a flush's own, still at hand), or read in place.
pub(crate) enum ChangeSet {
    Decoded(Arc<Sealed>),
    InPlace(InPlace),
}

/// A format 3 segment of an unweighted store, mapped, with where its columns start.
pub(crate) struct InPlace {
    bytes: Mapped,
    commits: Vec<Commit>,
    vertices: Vec<(u32, VertexId)>,
    changes: usize,
    sources: usize,
    width: usize,
    /// Byte offsets of the sources, their ends, the changes' commits and destinations.
    at_src: usize,
    at_end: usize,
    at_commit: usize,
    at_dst: usize,
}

impl InPlace {
    /// Segment `name` mapped and checked; `None` for one that cannot be read in place (of
    /// format 2, which has no index of sources, or of a weighted store).
    pub(crate) fn open(medium: &dyn Medium, name: &str) -> Result<Option<(Header, InPlace)>> {
        let bytes = medium.open(name)?.map()?;
        bytes.advise(Access::Sequential);
        let b = bytes.bytes();
        let head = segment::decode_head(b, name)?;
        if head.format() != 3 || head.header.weighted {
            return Ok(None);
        }
        let body = segment::checked_body(b, &head, name)?;
        let (ne, nv) = head.counts;
        let (ns, width) = (head.sources, head.width);
        let at_src = b.len() - body.len();
        let at_end = at_src + (ns * ID_BYTES).next_multiple_of(8);
        let at_commit = at_end + ns * 8;
        let at_dst = at_commit + (ne * width).next_multiple_of(8);
        let at_vx = at_dst + (ne * ID_BYTES).next_multiple_of(8);
        let vertices = segment::vertex_changes(&b[at_vx..], &head.ends, nv);
        let header = head.header;
        let set = InPlace {
            commits: head.commits,
            vertices,
            changes: ne,
            sources: ns,
            width,
            at_src,
            at_end,
            at_commit,
            at_dst,
            bytes,
        };
        set.check()
            .map_err(|m| Error::corrupt(format!("history segment {name}: {m}")))?;
        Ok(Some((header, set)))
    }

    /// What a decode checks of the changes: sources ascending, each with a change, their
    /// ends covering every change; every change's commit one the table holds.
    fn check(&self) -> std::result::Result<(), String> {
        let mut from = 0;
        for k in 0..self.sources {
            let end = self.end(k);
            if (k > 0 && self.src(k - 1) >= self.src(k)) || end <= from || end > self.changes {
                return Err("its sources are out of order or their changes out of range".into());
            }
            from = end;
        }
        if from != self.changes {
            return Err("its sources do not hold every change".into());
        }
        let nc = self.commits.len();
        match (0..self.changes).all(|i| (self.commit(i) as usize) < nc) {
            true => Ok(()),
            false => Err("a change names a commit it does not hold".into()),
        }
    }

    fn src(&self, k: usize) -> VertexId {
        id_from_le(&self.bytes.bytes()[self.at_src + k * ID_BYTES..])
    }

    /// Where source `k`'s changes end.
    fn end(&self, k: usize) -> usize {
        let at = self.at_end + k * 8;
        let w = u64::from_le_bytes(self.bytes.bytes()[at..at + 8].try_into().unwrap());
        usize::try_from(w).unwrap_or(usize::MAX)
    }

    fn commit(&self, i: usize) -> u32 {
        segment::commit_at(&self.bytes.bytes()[self.at_commit..], i, self.width)
    }

    fn dst(&self, i: usize) -> VertexId {
        id_from_le(&self.bytes.bytes()[self.at_dst + i * ID_BYTES..])
    }

    /// The changes of sources `k0..k1`, in the file's order.
    fn sources_between(&self, k0: usize, k1: usize, f: &mut impl FnMut(VertexId, VertexId, u32)) {
        let mut from = if k0 == 0 { 0 } else { self.end(k0 - 1) };
        for k in k0..k1 {
            let (src, end) = (self.src(k), self.end(k));
            for i in from..end {
                f(src, self.dst(i), self.commit(i));
            }
            from = end;
        }
    }
}

impl ChangeSet {
    /// The commits, oldest first.
    pub(crate) fn commits(&self) -> &[Commit] {
        match self {
            ChangeSet::Decoded(s) => &s.commits,
            ChangeSet::InPlace(p) => &p.commits,
        }
    }

    /// The vertex changes, by commit: the commit's position and the vertex (with `DEL`).
    pub(crate) fn vertices(&self) -> &[(u32, VertexId)] {
        match self {
            ChangeSet::Decoded(s) => &s.vertices,
            ChangeSet::InPlace(p) => &p.vertices,
        }
    }

    /// How many edge changes.
    pub(crate) fn len(&self) -> usize {
        match self {
            ChangeSet::Decoded(s) => s.edges.len(),
            ChangeSet::InPlace(p) => p.changes,
        }
    }

    /// Hands `f` each edge change whose source lies in `lo..hi` as (source, destination
    /// with `DEL` when the edge went, commit position), ordered by source, destination,
    /// then commit.
    pub(crate) fn sources_in(&self, lo: u64, hi: u64, mut f: impl FnMut(VertexId, VertexId, u32)) {
        match self {
            ChangeSet::Decoded(s) => {
                let a = s.edges.partition_point(|c| (c.src as u64) < lo);
                let b = a + s.edges[a..].partition_point(|c| (c.src as u64) < hi);
                s.edges[a..b].iter().for_each(|c| f(c.src, c.dst, c.commit));
            }
            ChangeSet::InPlace(p) => {
                let first = |bound: u64| partition(p.sources, |k| (p.src(k) as u64) < bound);
                p.sources_between(first(lo), first(hi), &mut f);
            }
        }
    }

    /// Hands `f` every edge change, as [`ChangeSet::sources_in`] does.
    pub(crate) fn each(&self, f: impl FnMut(VertexId, VertexId, u32)) {
        self.sources_in(0, u64::MAX, f)
    }
}

/// The first of `0..n` for which `below` is false (it holds for a prefix).
pub(super) fn partition(n: usize, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match below(mid) {
            true => lo = mid + 1,
            false => hi = mid,
        }
    }
    lo
}
