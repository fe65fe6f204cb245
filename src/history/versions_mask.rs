//! A run read in place as of a commit: which of its entries came after the commit (a bit
//! each), and which edges present then it does not list (settled from its events).
//!
//! This is the filter of [`super::versions::layer_at`] without the copy: the filter writes
//! the kept entries out, which costs the graph's size in fresh DRAM; the mask marks the
//! others and leaves the run where it is (the snapshot's point view reads it). It holds for
//! a run with nothing before it (a compacted store's one run): no tombstones, and no edge
//! its events settle absent over older runs.

use super::ordinals::with_ordinals;
use super::versions::{
    event_span, vertex_ops_as_of, DirVersions, Range, Versions, ENTRY, HELD, ORD, REMOVED,
};
use crate::run::{DirData, Run};
use crate::types::VertexId;
use rayon::prelude::*;

/// One direction of a run as of a commit.
pub(crate) struct DirMask {
    /// Bit `p` set: the run's entry `p` was born after the commit.
    pub dead: Vec<u64>,
    /// Vertex `v`'s edges present at the commit that the run does not list live then are
    /// `extra[extra_at[v]..extra_at[v + 1]]`, ascending.
    pub extra_at: Vec<u32>,
    pub extra: Vec<VertexId>,
}

/// A run as of a commit.
pub(crate) struct RunMask {
    pub out: DirMask,
    /// `None` when the run has no in-direction (undirected stores).
    pub inn: Option<DirMask>,
    /// The vertex states as of the commit, as the run's own states are kept.
    pub vertex_ops: Vec<VertexId>,
}

/// `run` as of the commit with LSN `lsn` inside its range, by its versions `ver`, for a
/// snapshot of `n` vertices; `None` when a mask cannot read it (it has tombstones or
/// compressed lists, or its events settle an edge absent that older runs would hold).
pub(crate) fn mask_at(run: &Run, ver: &Versions, lsn: u64, n: usize) -> Option<RunMask> {
    let q = ver.commits.get().partition_point(|&c| c <= lsn) as u32;
    let out = dir_mask(&run.out, &ver.out, q, n)?;
    let inn = match (&run.inn, &ver.inn) {
        (Some(d), Some(v)) => Some(dir_mask(d, v, q, n)?),
        (None, None) => None,
        _ => return None,
    };
    Some(RunMask {
        out,
        inn,
        vertex_ops: vertex_ops_as_of(run, ver, lsn),
    })
}

/// One direction as of ordinal `q`: the mask from the born column, one word per 64
/// entries; the settled edges vertex range by vertex range.
fn dir_mask(d: &DirData, ver: &DirVersions, q: u32, n: usize) -> Option<DirMask> {
    if !d.dense || d.is_packed() || d.n_tombs() > 0 {
        return None;
    }
    let dead: Vec<u64> = with_ordinals!(&ver.ords, |c| born_after(c.born.get(), q));
    if dead.len() != d.adds.get().len().div_ceil(64) {
        return None;
    }
    let (extra_at, extra) = settle_all(d, ver, q, n)?;
    Some(DirMask {
        dead,
        extra_at,
        extra,
    })
}

/// The born column as bits: one per entry, set when it was born after `q`.
fn born_after<B: Copy + Into<u32> + Sync>(born: &[B], q: u32) -> Vec<u64> {
    born.par_chunks(64)
        .with_min_len(1024)
        .map(|c| (c.iter().enumerate()).fold(0u64, |w, (i, &o)| w | (u64::from(o.into() > q) << i)))
        .collect()
}

/// Every vertex's settled edges, as `extra_at` (one more than `n`) and the edges: those
/// each range's events settle present and the run does not list live then, ascending per
/// vertex. Each range writes into its own share of two arrays (the edges and their
/// vertices: a range settles at most as many edges as it has events), whose untouched
/// pages are never faulted in, and the shares are then moved together. `None` when an
/// edge is settled absent (one older runs hold, which a mask cannot read), a vertex lies
/// past `n`, or there are too many.
fn settle_all(
    d: &DirData,
    ver: &DirVersions,
    q: u32,
    n: usize,
) -> Option<(Vec<u32>, Vec<VertexId>)> {
    let spans: Vec<(usize, usize)> = (Range::split(d.n_index()).iter())
        .map(|r| event_span(d, ver, r.at, r.ends))
        .collect();
    let total = spans.last().map_or(0, |s| s.1);
    u32::try_from(total).ok()?;
    let (mut extra, mut of): (Vec<VertexId>, Vec<VertexId>) = (vec![0; total], vec![0; total]);
    let shares = split_shares(&mut extra, &spans)
        .into_iter()
        .zip(split_shares(&mut of, &spans));
    let kept: Vec<Option<usize>> = (spans.par_iter().zip(shares.collect::<Vec<_>>()))
        .map(|(&span, (x, v))| settle_span(ver, span, q, x, v))
        .collect();
    let mut end = 0;
    for (k, &(lo, _)) in kept.into_iter().zip(&spans) {
        let k = k?;
        extra.copy_within(lo..lo + k, end);
        of.copy_within(lo..lo + k, end);
        end += k;
    }
    extra.truncate(end);
    let mut extra_at = vec![0u32; n + 1];
    for (k, &v) in of[..end].iter().enumerate() {
        *extra_at.get_mut(v as usize + 1)? = k as u32 + 1;
    }
    // Vertices without settled edges end where the one before them ends.
    for v in 1..extra_at.len() {
        extra_at[v] = extra_at[v].max(extra_at[v - 1]);
    }
    Some((extra_at, extra))
}

/// `all` cut into one share per span of event positions (contiguous, ascending).
fn split_shares<'a>(all: &'a mut [VertexId], spans: &[(usize, usize)]) -> Vec<&'a mut [VertexId]> {
    let mut shares = Vec::with_capacity(spans.len());
    let (mut rest, mut at) = (all, 0);
    for &(lo, hi) in spans {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(lo - at);
        let (share, tail) = tail.split_at_mut(hi - lo);
        shares.push(share);
        rest = tail;
        at = hi;
    }
    shares
}

/// The events `lo..hi` (whole vertices) settled as of `q`: each edge present then that the
/// run does not list live written to `out` (from its start) with its vertex beside it in
/// `of`; how many. An edge is present at `q` if its last change by then added it, or, with
/// none by then, if its first change removed it; an edge whose own entry was born by `q`
/// is the mask's (a live entry). Each event is looked at once, without a branch on what it
/// says: the events of one edge are few and their number varies, which a branch per edge
/// mispredicted at 10 ns an event. `None` when an edge is one older runs hold (which a
/// mask cannot read).
fn settle_span(
    ver: &DirVersions,
    (lo, hi): (usize, usize),
    q: u32,
    out: &mut [VertexId],
    of: &mut [VertexId],
) -> Option<usize> {
    let (ev_v, nbr, at) = (
        &ver.ev_v.get()[lo..hi],
        &ver.ev_nbr.get()[lo..hi],
        &ver.ev_at.get()[lo..hi],
    );
    let (mut k, mut held) = (0, 0);
    for i in 0..at.len() {
        let a = at[i];
        let same_as = |j: usize| nbr[j] == nbr[i] && ev_v[j] == ev_v[i];
        let first = i == 0 || !same_as(i - 1);
        let next_by_q = i + 1 < at.len() && same_as(i + 1) && at[i + 1] & ORD <= q;
        let by_q = a & ORD <= q;
        // The last change by `q`, unless it is the run's own entry; or, with none by `q`,
        // the first change.
        let last = by_q & !next_by_q & (a & ENTRY == 0);
        let present = (last & (a & REMOVED == 0)) | (first & !by_q & (a & REMOVED != 0));
        held |= a & HELD;
        out[k] = nbr[i];
        of[k] = ev_v[i];
        k += present as usize;
    }
    (held == 0).then_some(k)
}
