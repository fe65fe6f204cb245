//! Versions of a run: when each of its entries came, and what came and went before it.
//!
//! A run holds the net effect of its LSN range: its adds (edges absent before the range and
//! present after it) and tombstones (present before, absent after). Its versions say, per
//! direction, for each add the commit that added it last (`born`), for each tombstone the
//! commit that removed the edge last (`died`), and every earlier change of an edge inside
//! the range (`events`: an edge added and removed again, an add before the one that stuck).
//! Commits are ordinals into the versions' own commit table: `k >= 1` is `commits[k - 1]`,
//! `0` is before all of them (a change older than the history kept).
//!
//! The graph as of commit `P` inside the range is then the runs before the range read in
//! place with this run *filtered*: its adds born by `P`, its tombstones dead by `P`, and
//! each changed edge set to its state after the last of its changes by `P` ([`layer_at`]).
//! That costs one pass over the run, however many changes came after `P`, where undoing
//! them costs what they do. The latest graph never reads versions: they sit in their own
//! file beside the run (`versions_file`), derived from the run and the history segments of
//! its range, and a point whose run has none is built as before.
//!
//! Invariants asserted where they must hold ([`build`] refuses a run they do not hold
//! for): an edge's changes alternate, add and removal; an add's last change is an add and
//! a tombstone's a removal. Each direction is derived on its own from the changes of the
//! vertices the run holds (a partition run holds one vertex range's lists in each).

use super::ordinals::{with_ordinals, Ordinals};
use crate::batch::{id_of, is_del};
use crate::medium::dram::HugeArray;
use crate::memtable::history::Sealed;
use crate::run::build::{self, DirPart, RunMeta};
use crate::run::{Compression, DirData, Run, Sec};
use crate::types::VertexId;
use rayon::prelude::*;

/// The top bit of an event's commit ordinal: the edge went.
pub(crate) const REMOVED: u32 = 1 << 31;
/// An event's flag: it is the run's own add or tombstone of the edge (the last of its
/// changes, whose commit `born` or `died` also holds), listed after the edge's earlier
/// changes so that a reader needs no search for it.
pub(crate) const ENTRY: u32 = 1 << 30;
/// An event's flag: the runs before this one hold the edge (it was present before the
/// range).
pub(crate) const HELD: u32 = 1 << 29;
/// The commit ordinal bits of an event.
pub(crate) const ORD: u32 = HELD - 1;

/// One direction's versions, parallel to the run's direction.
#[derive(Default)]
pub(crate) struct DirVersions {
    /// Per add, the ordinal of the commit that added it last; per tombstone, of the one
    /// that removed it last; in the run's order, as narrow as the commits allow.
    pub ords: Ordinals,
    /// Earlier changes, sorted by (vertex, neighbor, commit): the vertex.
    pub ev_v: Sec<VertexId>,
    /// Their neighbors.
    pub ev_nbr: Sec<VertexId>,
    /// Their commit ordinals ([`ORD`] bits), with [`REMOVED`] set when the edge went,
    /// [`ENTRY`] on the change that is the run's own add or tombstone, [`HELD`] on each
    /// change of an edge the runs before this one hold.
    pub ev_at: Sec<u32>,
}

/// A run's versions.
#[derive(Default)]
pub(crate) struct Versions {
    /// The run they describe, and its range.
    pub run_id: u64,
    pub min_lsn: u64,
    pub max_lsn: u64,
    /// The LSNs of the commits ordinals name (`k` names `commits[k - 1]`).
    pub commits: Sec<u64>,
    pub out: DirVersions,
    /// `None` when the run has no in-direction (undirected stores).
    pub inn: Option<DirVersions>,
    /// Vertex changes inside the range, in commit order: the ordinal...
    pub vx_at: Sec<u32>,
    /// ...and the vertex, with [`crate::batch::DEL`] when it was deleted.
    pub vx: Sec<VertexId>,
}

/// An edge change as a build gathers it, keyed by the vertex whose list it is in:
/// (vertex, neighbor, ordinal | REMOVED).
type Gathered = (VertexId, VertexId, u32);

/// One direction's columns as a build makes them: born, died, earlier events.
type Columns = (Vec<u32>, Vec<u32>, Vec<Gathered>);

/// Which lists a build gathers changes for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lists {
    /// Out-lists: keyed by source.
    Out,
    /// In-lists: keyed by destination.
    In,
    /// Both ends' (an undirected store's one adjacency): each change keyed by either end.
    Both,
}

/// The versions of `run` from the history `pieces` (in LSN order) holding the changes of
/// its range; `Err` says why they cannot be built (the run and the history disagree, or
/// the store is weighted, which versions do not cover yet).
pub(crate) fn build(run: &Run, pieces: &[&Sealed]) -> Result<Versions, String> {
    let h = &run.header;
    if h.flags & crate::run::format::WEIGHTED != 0 {
        return Err("versions cover unweighted stores only".into());
    }
    let (commits, ords) = commit_table(pieces, h.min_lsn, h.max_lsn);
    if commits.len() >= ORD as usize {
        return Err("too many commits in one run's range".into());
    }
    let span = h.span();
    let n_commits = commits.len();
    let dir = |d: &DirData, lists: Lists| -> Result<DirVersions, String> {
        let changes = gather(pieces, &ords, lists, &span);
        let (born, died, evs) = dir_versions(d, &changes)?;
        drop(changes);
        Ok(DirVersions {
            ords: Ordinals::narrow(born, died, n_commits),
            ev_v: Sec::owned(evs.iter().map(|e| e.0).collect()),
            ev_nbr: Sec::owned(evs.iter().map(|e| e.1).collect()),
            ev_at: Sec::owned(evs.iter().map(|e| e.2).collect()),
        })
    };
    let (out, inn) = match &run.inn {
        Some(i) => (dir(&run.out, Lists::Out)?, Some(dir(i, Lists::In)?)),
        None => (dir(&run.out, Lists::Both)?, None),
    };
    let (vx_at, vx) = vertex_changes(pieces, &ords, &span);
    Ok(Versions {
        run_id: h.id,
        min_lsn: h.min_lsn,
        max_lsn: h.max_lsn,
        commits: Sec::owned(commits),
        out,
        inn,
        vx_at: Sec::owned(vx_at),
        vx: Sec::owned(vx),
    })
}

/// The LSNs of the commits inside `lo+1 ..= hi` among `pieces`, and per piece the ordinal
/// of each of its commits (0 for one outside the range).
fn commit_table(pieces: &[&Sealed], lo: u64, hi: u64) -> (Vec<u64>, Vec<Vec<u32>>) {
    let mut lsns = Vec::new();
    let ords = (pieces.iter())
        .map(|p| {
            (p.commits.iter())
                .map(|c| match c.lsn > lo && c.lsn <= hi {
                    true => {
                        lsns.push(c.lsn);
                        lsns.len() as u32
                    }
                    false => 0,
                })
                .collect()
        })
        .collect();
    (lsns, ords)
}

/// Every edge change inside the range whose list lies in the run's vertex `span`, keyed
/// as `lists` says and sorted by (vertex, neighbor, commit), the order of one commit's
/// changes kept (a stable sort).
fn gather(
    pieces: &[&Sealed],
    ords: &[Vec<u32>],
    lists: Lists,
    span: &std::ops::Range<u64>,
) -> Vec<Gathered> {
    let mut out: Vec<Gathered> = Vec::new();
    let mut keep = |v: VertexId, nbr: VertexId, at: u32| {
        if span.contains(&(v as u64)) {
            out.push((v, nbr, at));
        }
    };
    for (p, ord) in pieces.iter().zip(ords) {
        for c in &p.edges {
            let o = ord[c.commit as usize];
            if o == 0 {
                continue;
            }
            let (src, dst) = (c.src, id_of(c.dst));
            let at = o | if is_del(c.dst) { REMOVED } else { 0 };
            match lists {
                Lists::Out => keep(src, dst, at),
                Lists::In => keep(dst, src, at),
                Lists::Both => {
                    keep(src, dst, at);
                    if src != dst {
                        keep(dst, src, at);
                    }
                }
            }
        }
    }
    let key = |e: &Gathered| (e.0, e.1, e.2 & !REMOVED);
    match out.is_sorted_by_key(key) {
        // A flushed run's changes, keyed by source, come as its segment holds them.
        true => out,
        false => sort_by_vertex(out),
    }
}

/// `changes` sorted by (vertex, neighbor, commit), stably: a counting sort by vertex,
/// then each vertex's few changes sorted by neighbor and commit.
fn sort_by_vertex(changes: Vec<Gathered>) -> Vec<Gathered> {
    let space = changes.iter().map(|e| e.0 as usize + 1).max().unwrap_or(0);
    let mut at = vec![0usize; space + 1];
    for e in &changes {
        at[e.0 as usize + 1] += 1;
    }
    for i in 1..at.len() {
        at[i] += at[i - 1];
    }
    let mut out = vec![(0, 0, 0); changes.len()];
    for e in changes {
        let p = &mut at[e.0 as usize];
        out[*p] = e;
        *p += 1;
    }
    out.par_chunk_by_mut(|a, b| a.0 == b.0)
        .for_each(|c| c.sort_by_key(|e| (e.1, e.2 & !REMOVED)));
    out
}

/// A direction's born and died columns and earlier events, vertex range by range.
fn dir_versions(d: &DirData, changes: &[Gathered]) -> Result<Columns, String> {
    let n = d.n_index();
    let chunk = (n / (rayon::current_num_threads() * 8)).max(4096);
    let ranges: Vec<(usize, usize)> = (0..n.div_ceil(chunk))
        .map(|c| (c * chunk, ((c + 1) * chunk).min(n)))
        .collect();
    let parts: Vec<Columns> = (ranges.par_iter())
        .map(|&(a, b)| dir_range(d, changes, a, b, a == 0, b == n))
        .collect::<Result<_, String>>()?;
    let (mut born, mut died, mut evs) = (Vec::new(), Vec::new(), Vec::new());
    for (b, t, e) in parts {
        born.extend_from_slice(&b);
        died.extend_from_slice(&t);
        evs.extend_from_slice(&e);
    }
    if n == 0 {
        unlisted(changes, &mut evs)?;
    }
    Ok((born, died, evs))
}

/// [`dir_versions`] for index positions `a..b`; the first range also takes changes of
/// vertices below the index, the last those above it.
fn dir_range(
    d: &DirData,
    changes: &[Gathered],
    a: usize,
    b: usize,
    first: bool,
    last: bool,
) -> Result<Columns, String> {
    let lo = if first { 0 } else { d.vid_at(a) };
    let mut at = if first {
        0
    } else {
        changes.partition_point(|c| c.0 < lo)
    };
    let end = match last {
        true => changes.len(),
        false => changes.partition_point(|c| c.0 < d.vid_at(b)),
    };
    let (mut born, mut died, mut evs) = (Vec::new(), Vec::new(), Vec::new());
    let mut buf = Vec::new();
    for i in a..b {
        let v = d.vid_at(i);
        let from = at + changes[at..end].partition_point(|c| c.0 < v);
        unlisted(&changes[at..from], &mut evs)?;
        at = from + changes[from..end].partition_point(|c| c.0 == v);
        let adds = d.adds_into(i, &mut buf);
        let (nb, nd) = (born.len(), died.len());
        born.resize(nb + adds.len(), 0);
        died.resize(nd + d.tombs_at(i).len(), 0);
        let cols = (&mut born[nb..], &mut died[nd..]);
        vertex_versions(adds, d.tombs_at(i), &changes[from..at], cols, &mut evs)?;
    }
    unlisted(&changes[at..end], &mut evs)?;
    Ok((born, died, evs))
}

/// The changes of vertices the run's index does not hold (every edge of theirs ends as it
/// began), flagged as any vertex's are.
fn unlisted(changes: &[Gathered], evs: &mut Vec<Gathered>) -> Result<(), String> {
    for g in changes.chunk_by(|x, y| x.0 == y.0) {
        vertex_versions(&[], &[], g, (&mut [], &mut []), evs)?;
    }
    Ok(())
}

/// One vertex: each neighbor's changes `ch` (sorted by neighbor, then commit) set the born
/// of its add or the died of its tombstone to the last of them; the rest go to `evs`.
fn vertex_versions(
    adds: &[VertexId],
    tombs: &[VertexId],
    ch: &[Gathered],
    (born, died): (&mut [u32], &mut [u32]),
    evs: &mut Vec<Gathered>,
) -> Result<(), String> {
    for g in ch.chunk_by(|x, y| x.1 == y.1) {
        alternates(g)?;
        let (x, last) = (g[0].1, g[g.len() - 1]);
        let removed = last.2 & REMOVED != 0;
        let held = if let Ok(k) = adds.binary_search(&x) {
            if removed {
                return Err(format!(
                    "edge {} -> {x}: an add whose last change removed it",
                    g[0].0
                ));
            }
            born[k] = last.2;
            false
        } else if let Ok(k) = tombs.binary_search(&x) {
            if !removed {
                return Err(format!(
                    "edge {} -> {x}: a tombstone whose last change added it",
                    g[0].0
                ));
            }
            died[k] = last.2 & !REMOVED;
            true
        } else {
            // Neither: it ends as it began.
            evs.extend(
                g.iter()
                    .map(|e| (e.0, e.1, e.2 | if removed { 0 } else { HELD })),
            );
            continue;
        };
        if g.len() > 1 {
            let flag =
                |i: usize| if held { HELD } else { 0 } | if i + 1 == g.len() { ENTRY } else { 0 };
            evs.extend(g.iter().enumerate().map(|(i, e)| (e.0, e.1, e.2 | flag(i))));
        }
    }
    Ok(())
}

/// The invariant of effective changes: an edge's changes alternate, add and removal.
fn alternates(g: &[Gathered]) -> Result<(), String> {
    match g.windows(2).all(|w| (w[0].2 ^ w[1].2) & REMOVED != 0) {
        true => Ok(()),
        false => Err(format!(
            "edge {} -> {}: changes that do not alternate",
            g[0].0, g[0].1
        )),
    }
}

/// The vertex changes inside the range of vertices in the run's `span`, in commit order.
fn vertex_changes(
    pieces: &[&Sealed],
    ords: &[Vec<u32>],
    span: &std::ops::Range<u64>,
) -> (Vec<u32>, Vec<VertexId>) {
    (pieces.iter().zip(ords))
        .flat_map(|(p, ord)| p.vertices.iter().map(move |&(c, x)| (ord[c as usize], x)))
        .filter(|&(o, x)| o != 0 && span.contains(&(id_of(x) as u64)))
        .unzip()
}

/// The run `run` read as of the commit with LSN `lsn` inside its range, as a DRAM run of
/// the same range start and partition: its entries filtered by their versions `ver`,
/// resolved against the runs before it as `run` is. `id` names the new run; `Err` when
/// DRAM for its neighbors cannot be mapped.
pub(crate) fn layer_at(run: &Run, ver: &Versions, lsn: u64, id: u64) -> std::io::Result<Run> {
    let q = ver.commits.get().partition_point(|&c| c <= lsn) as u32;
    let space = run.header.vertex_space;
    let out = dir_at(&run.out, &ver.out, q, space)?;
    let inn = (run.inn.as_ref())
        .zip(ver.inn.as_ref())
        .map(|(d, v)| dir_at(d, v, q, space))
        .transpose()?;
    let meta = RunMeta {
        id,
        level: run.header.level,
        min_lsn: run.header.min_lsn,
        max_lsn: lsn,
        vertex_space: space,
        weighted: false,
        part_shift: run.header.part_shift(),
        compression: Compression::None,
        stamp: run.header.stamp.unwrap_or_default(),
        last_time: None,
    };
    Ok(build::finish(meta, out, inn, vertex_ops_at(run, ver, q)))
}

/// One direction as of ordinal `q`, vertex range by range, in two passes: each range's
/// events are settled and the neighbors it keeps counted, then each range writes its
/// neighbors straight into its own slice of one array, in huge pages. The neighbors are
/// written once: no part is grown by reallocation, and none is copied into the run.
fn dir_at(d: &DirData, v: &DirVersions, q: u32, space: u64) -> std::io::Result<DirData> {
    let ranges = Range::split(d.n_index());
    let starts = list_starts(d);
    let settled: Vec<Settled> = (ranges.par_iter())
        .map(|r| with_ordinals!(&v.ords, |c| settle_range(d, v, c.born.get(), &starts, q, r)))
        .collect();
    let mut adds = HugeArray::<VertexId>::zeroed(settled.iter().map(|s| s.kept).sum())?;
    let mut slices = Vec::with_capacity(ranges.len());
    let mut rest = &mut adds[..];
    for s in &settled {
        let (head, tail) = rest.split_at_mut(s.kept);
        slices.push(head);
        rest = tail;
    }
    let parts: Vec<DirPart> = (ranges.par_iter().zip(settled).zip(slices))
        .map(|((r, s), dst)| {
            with_ordinals!(&v.ords, |c| {
                let cols = (c.born.get(), c.died.get());
                fill_range(d, cols, &starts, q, r, &s, dst)
            })
        })
        .collect();
    Ok(build::assemble_placed(parts, Sec::huge(adds), space))
}

/// Index positions `at.0..at.1` of a direction, and whether they are its first and last
/// (whose events include those of vertices the index does not hold below or above it).
pub(super) struct Range {
    pub(super) at: (usize, usize),
    pub(super) ends: (bool, bool),
}

impl Range {
    /// `n` index positions split into ranges for the pool's threads (at least one range,
    /// which holds the events of a direction without an index).
    pub(super) fn split(n: usize) -> Vec<Range> {
        let chunk = (n / (rayon::current_num_threads() * 8)).max(4096);
        (0..n.div_ceil(chunk).max(1))
            .map(|c| Range {
                at: (c * chunk, ((c + 1) * chunk).min(n)),
                ends: (c == 0, (c + 1) * chunk >= n),
            })
            .collect()
    }
}

/// What one range's events settle as of the ordinal asked (the first pass of [`dir_at`]).
#[derive(Default)]
struct Settled {
    /// Each vertex whose events settle a neighbor, ascending, with where its neighbors end
    /// in `adds` and in `tombs`.
    vids: Vec<(VertexId, usize, usize)>,
    adds: Vec<VertexId>,
    tombs: Vec<VertexId>,
    /// The neighbors the range keeps: its adds born by then and the events' adds.
    kept: usize,
}

impl Settled {
    /// The neighbors settled for the `k`th vertex of `vids`: adds and tombstones.
    fn of(&self, k: usize) -> (&[VertexId], &[VertexId]) {
        let (a0, t0) = match k {
            0 => (0, 0),
            _ => (self.vids[k - 1].1, self.vids[k - 1].2),
        };
        let (_, a1, t1) = self.vids[k];
        (&self.adds[a0..a1], &self.tombs[t0..t1])
    }

    /// Pushes the `k`th vertex of `vids`, one the run's index does not hold, to `part`,
    /// its neighbors written to `dst`: how many.
    fn push_only(&self, k: usize, dst: &mut [VertexId], part: &mut DirPart) -> usize {
        let (adds, tombs) = self.of(k);
        dst[..adds.len()].copy_from_slice(adds);
        part.close(self.vids[k].0, adds.len(), tombs);
        adds.len()
    }
}

/// The events of range `r` settled as of `q`, and the neighbors it keeps counted.
fn settle_range<B: Copy + Into<u32>>(
    d: &DirData,
    ver: &DirVersions,
    born: &[B],
    offs: &[u64],
    q: u32,
    r: &Range,
) -> Settled {
    let (a, b) = r.at;
    let mut out = Settled::default();
    Scratch::each_settled(d, ver, r.at, r.ends, q, |s, v| {
        if !s.more_adds.is_empty() || !s.more_tombs.is_empty() {
            out.adds.extend_from_slice(&s.more_adds);
            out.tombs.extend_from_slice(&s.more_tombs);
            out.vids.push((v, out.adds.len(), out.tombs.len()));
        }
    });
    // A direction with no index may have no offsets at all.
    let span = (offs.get(a).zip(offs.get(b))).map_or(0..0, |(&x, &y)| x as usize..y as usize);
    let listed = &born[span];
    let by_q = listed.iter().filter(|&&o| o.into() <= q).count();
    out.kept = by_q + out.adds.len();
    out
}

/// The second pass of [`dir_at`] over range `r`: each vertex's adds born by `q` with the
/// neighbors its events settled present, written to `dst` (exactly the range's share), and
/// its tombstones dead by `q` with those settled absent; the index as a part.
fn fill_range<B: Copy + Into<u32>>(
    d: &DirData,
    (born, died): (&[B], &[B]),
    offs: &[u64],
    q: u32,
    r: &Range,
    settled: &Settled,
    dst: &mut [VertexId],
) -> DirPart {
    let (a, b) = r.at;
    let toffs = d.toffs.get();
    let mut part = DirPart::default();
    let (mut buf, mut tombs) = (Vec::new(), Vec::new());
    let (mut k, mut at) = (0, 0);
    for i in a..b.max(a) {
        let v = d.vid_at(i);
        while settled.vids.get(k).is_some_and(|s| s.0 < v) {
            at += settled.push_only(k, &mut dst[at..], &mut part);
            k += 1;
        }
        let (more_adds, more_tombs) = match settled.vids.get(k) {
            Some(&(x, _, _)) if x == v => {
                k += 1;
                settled.of(k - 1)
            }
            _ => (&[][..], &[][..]),
        };
        let died = match toffs.is_empty() {
            true => &[][..],
            false => &died[toffs[i] as usize..toffs[i + 1] as usize],
        };
        tombs.clear();
        filter_merge(&mut tombs, (d.tombs_at(i), died), more_tombs, q);
        let born = &born[offs[i] as usize..offs[i + 1] as usize];
        let kept = filter_into(
            &mut dst[at..],
            (d.adds_into(i, &mut buf), born),
            more_adds,
            q,
        );
        at += kept;
        part.close(v, kept, &tombs);
    }
    for k in k..settled.vids.len() {
        at += settled.push_only(k, &mut dst[at..], &mut part);
    }
    assert_eq!(at, dst.len(), "the first pass counted what the second kept");
    part
}

/// Where each indexed vertex's neighbors (and so its `born` entries) start, and the end:
/// the offsets of a plain direction, running sums of degrees for a packed one.
pub(super) fn list_starts(d: &DirData) -> std::borrow::Cow<'_, [u64]> {
    if !d.is_packed() {
        return std::borrow::Cow::Borrowed(d.offs.get());
    }
    let mut s = Vec::with_capacity(d.n_index() + 1);
    s.push(0);
    for i in 0..d.n_index() {
        s.push(s[i] + d.degree_at(i) as u64);
    }
    std::borrow::Cow::Owned(s)
}

/// Where the events of the vertices of index positions `a..b` of `d` lie (at the first
/// and last ranges, with those of the vertices the index does not hold below or above it).
pub(super) fn event_span(
    d: &DirData,
    ver: &DirVersions,
    (a, b): (usize, usize),
    (first, last): (bool, bool),
) -> (usize, usize) {
    let ev_v = ver.ev_v.get();
    let lo = match first {
        true => 0,
        false => ev_v.partition_point(|&x| x < d.vid_at(a)),
    };
    let hi = match last {
        true => ev_v.len(),
        false => ev_v.partition_point(|&x| x < d.vid_at(b)),
    };
    (lo, hi)
}

/// Per-vertex work space of a filter (and of a count, `versions_count.rs`).
#[derive(Default)]
pub(super) struct Scratch {
    /// Neighbors the events settle present, and absent, as of the ordinal asked.
    pub(super) more_adds: Vec<VertexId>,
    pub(super) more_tombs: Vec<VertexId>,
}

impl Scratch {
    /// Settles, one vertex at a time, the events of the vertices of index positions `a..b`
    /// of `d` (at the first and last ranges, of those the index does not hold below or
    /// above it too), and hands each settled vertex to `f`.
    pub(super) fn each_settled(
        d: &DirData,
        ver: &DirVersions,
        (a, b): (usize, usize),
        (first, last): (bool, bool),
        q: u32,
        mut f: impl FnMut(&Scratch, VertexId),
    ) {
        let ev_v = ver.ev_v.get();
        let (lo, hi) = event_span(d, ver, (a, b), (first, last));
        let mut s = Scratch::default();
        let mut e = lo;
        while e < hi {
            let v = ev_v[e];
            let end = e + ev_v[e..hi].iter().take_while(|&&x| x == v).count();
            s.settle_events(ver, (e, end), q);
            f(&s, v);
            e = end;
        }
    }

    /// Settles into `more_adds` and `more_tombs` the neighbors of one vertex with events
    /// `e..end` that its own adds and tombstones do not decide as of `q`.
    pub(super) fn settle_events(&mut self, ver: &DirVersions, (e, end): (usize, usize), q: u32) {
        self.more_adds.clear();
        self.more_tombs.clear();
        let (nbr, at) = (&ver.ev_nbr.get()[e..end], &ver.ev_at.get()[e..end]);
        let mut g = 0;
        while g < nbr.len() {
            let x = nbr[g];
            let n = 1 + nbr[g + 1..].iter().take_while(|&&y| y == x).count();
            let evs = &at[g..g + n];
            let last = evs[n - 1];
            // An edge whose own entry came by `q` is the entry's filter's business.
            if last & ENTRY == 0 || last & ORD > q {
                self.settle(x, evs, q, last & HELD != 0);
            }
            g += n;
        }
    }

    /// Neighbor `x` whose last change by `q` (if any) is among `at`, and which the runs
    /// before this one hold if `before`: present or absent as that change left it, or as
    /// it was before the first one (which is not `before` when the history kept starts
    /// inside the range and the edge's earlier changes are gone), as an add or tombstone
    /// over those runs.
    fn settle(&mut self, x: VertexId, at: &[u32], q: u32, before: bool) {
        let by = at.partition_point(|&a| a & ORD <= q);
        let now = match by {
            0 => at[0] & REMOVED != 0,
            k => at[k - 1] & REMOVED == 0,
        };
        match (before, now) {
            (false, true) => self.more_adds.push(x),
            (true, false) => self.more_tombs.push(x),
            _ => {}
        }
    }
}

/// Appends to `out` the ids of `ids` whose commit in `at` is `q` or before, with the sorted
/// `more` (none of them kept from `ids`) merged in: ascending, as `ids` is.
fn filter_merge<B: Copy + Into<u32>>(
    out: &mut Vec<VertexId>,
    (ids, at): (&[VertexId], &[B]),
    more: &[VertexId],
    q: u32,
) {
    let start = out.len();
    out.resize(start + ids.len() + more.len(), 0);
    let k = filter_into(&mut out[start..], (ids, at), more, q);
    out.truncate(start + k);
}

/// Writes to the front of `dst` what [`filter_merge`] appends, and returns how many; `dst`
/// needs room for those only.
fn filter_into<B: Copy + Into<u32>>(
    dst: &mut [VertexId],
    (ids, at): (&[VertexId], &[B]),
    more: &[VertexId],
    q: u32,
) -> usize {
    let mut k = 0;
    // No branch to mispredict: every id is written, and the next write covers it unless it
    // is kept. Only an id not kept can fall past the end of `dst`, and it is not written.
    let mut put = |k: usize, x: VertexId| {
        if let Some(s) = dst.get_mut(k) {
            *s = x;
        }
    };
    let mut j = 0;
    for (&x, &b) in ids.iter().zip(at) {
        while j < more.len() && more[j] < x {
            put(k, more[j]);
            k += 1;
            j += 1;
        }
        put(k, x);
        k += (b.into() <= q) as usize;
    }
    for &m in &more[j..] {
        put(k, m);
        k += 1;
    }
    k
}

/// The vertex states `run` sets as of the commit with LSN `lsn` inside its range.
pub(crate) fn vertex_ops_as_of(run: &Run, ver: &Versions, lsn: u64) -> Vec<VertexId> {
    vertex_ops_at(
        run,
        ver,
        ver.commits.get().partition_point(|&c| c <= lsn) as u32,
    )
}

/// The vertex states the run sets as of `q`: each vertex changed inside the range as its
/// last change by then left it (or as it was before its first), the others as the run
/// leaves them.
fn vertex_ops_at(run: &Run, ver: &Versions, q: u32) -> Vec<VertexId> {
    let mut changed: Vec<(VertexId, usize)> = (ver.vx.get().iter().enumerate())
        .map(|(i, &x)| (id_of(x), i))
        .collect();
    changed.sort_unstable();
    let (at, vx) = (ver.vx_at.get(), ver.vx.get());
    let mut ops: Vec<VertexId> = Vec::new();
    for g in changed.chunk_by(|a, b| a.0 == b.0) {
        let by = g.partition_point(|&(_, i)| at[i] <= q);
        let x = match by {
            0 => vx[g[0].1] ^ crate::batch::DEL,
            k => vx[g[k - 1].1],
        };
        ops.push(x);
    }
    let unchanged = (run.vertex_ops.get().iter())
        .filter(|&&x| changed.binary_search_by_key(&id_of(x), |c| c.0).is_err());
    ops.extend(unchanged);
    ops.sort_unstable_by_key(|&x| id_of(x));
    ops
}
