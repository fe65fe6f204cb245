//! Versions of a run: when each of its entries came, and what came and went before it.
//!
//! A run holds the net effect of its LSN range: its adds (edges absent before the range and
//! present after it) and tombstones (present before, absent after). Its versions say, per
//! direction, for each add the commit that added it last (`born`), for each tombstone the
//! commit that removed the edge last (`died`), and the *spells* of its edges' earlier
//! changes inside the range: each stretch of commits in which an edge was not as the runs
//! before this one have it (present when they do not hold it, absent when they do), other
//! than the one its own add or tombstone opens. An edge added and removed again inside the
//! range is one spell, `(from, to)`; an add before the one that stuck another.
//! Commits are ordinals into the versions' own commit table: `k >= 1` is `commits[k - 1]`,
//! `0` is before all of them (a change older than the history kept).
//!
//! The graph as of commit `P` inside the range is then the runs before the range read in
//! place with this run *filtered*: its adds born by `P`, its tombstones dead by `P`, and
//! each edge with a spell holding `P` (`from <= P < to`) the other way ([`layer_at`]).
//! That costs one pass over the run, however many changes came after `P`, where undoing
//! them costs what they do; a spell is looked at by its two ordinals, and its edge only
//! when it holds `P`. The latest graph never reads versions: they sit in their own
//! file beside the run (`versions_file`), derived from the run and the history segments of
//! its range, and a point whose run has none is built as before.
//!
//! Invariants asserted where they must hold ([`build`] refuses a run they do not hold
//! for): an edge's changes alternate, add and removal; an add's last change is an add and
//! a tombstone's a removal; a spell ends after it begins. Each direction is derived on its
//! own from the changes of the vertices the run holds (a partition run holds one vertex
//! range's lists in each).

use super::ordinals::{with_ordinals, Ordinals, Spans};
use super::segment_read::ChangeSet;
use crate::batch::{id_of, is_del};
use crate::medium::dram::AnonArray;
use crate::run::build::{self, DirPart, RunMeta};
use crate::run::{Compression, DirData, Run, Sec};
use crate::types::VertexId;
use rayon::prelude::*;

/// The top bit of a gathered change's commit ordinal: the edge went.
const REMOVED: u32 = 1 << 31;
/// The most commits one run's versions can name.
const MAX_COMMITS: usize = (REMOVED - 1) as usize;

/// One kind of spell in a direction, grouped by vertex: vertex `vid[j]`'s are the
/// positions `end[j - 1]..end[j]` (from 0 for the first), sorted by neighbor, then by
/// when they began; where each began and ended is in the direction's ordinal columns.
#[derive(Default)]
pub(crate) struct Spells {
    /// The vertices with spells, ascending.
    pub vid: Sec<VertexId>,
    /// Where each one's spells end.
    pub end: Sec<u32>,
    /// Each spell's neighbor.
    pub nbr: Sec<VertexId>,
}

impl Spells {
    /// How many spells.
    pub(crate) fn len(&self) -> usize {
        self.nbr.get().len()
    }

    /// The positions of the spells of `vid[j]`.
    pub(crate) fn group(&self, j: usize) -> std::ops::Range<usize> {
        let end = self.end.get();
        let lo = if j == 0 { 0 } else { end[j - 1] as usize };
        lo..end[j] as usize
    }

    /// The positions in `vid` of the vertices `lo <= v < hi` (no bound where `None`).
    pub(super) fn vertices(&self, lo: Option<VertexId>, hi: Option<VertexId>) -> (usize, usize) {
        let vid = self.vid.get();
        let at =
            |b: Option<VertexId>, none: usize| b.map_or(none, |b| vid.partition_point(|&x| x < b));
        (at(lo, 0), at(hi, vid.len()))
    }

    /// The neighbors of the spells of `vid[j]` that hold ordinal `q`, appended to `out`
    /// (ascending: an edge has at most one spell holding `q`).
    fn holding<B: bytemuck::Pod + Into<u32>>(
        &self,
        j: usize,
        ends: &Spans<B>,
        q: u32,
        out: &mut Vec<VertexId>,
    ) {
        let (from, to, nbr) = (ends.from.get(), ends.to.get(), self.nbr.get());
        for i in self.group(j) {
            if from[i].into() <= q && q < to[i].into() {
                out.push(nbr[i]);
            }
        }
    }
}

/// One direction's versions, parallel to the run's direction.
#[derive(Default)]
pub(crate) struct DirVersions {
    /// Per add, the ordinal of the commit that added it last; per tombstone, of the one
    /// that removed it last; in the run's order; and where each spell began and ended:
    /// all as narrow as the commits allow.
    pub ords: Ordinals,
    /// The spells of edges the runs before this one do not hold: when they were present.
    pub present: Spells,
    /// The spells of edges the runs before this one hold: when they were absent.
    pub absent: Spells,
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

/// A spell as a build makes it: (vertex, neighbor, from, to).
pub(super) type Spell = (VertexId, VertexId, u32, u32);

/// One direction's columns as a build makes them: born, died, and the spells present and
/// absent.
#[derive(Default)]
pub(super) struct Columns {
    pub(super) born: Vec<u32>,
    pub(super) died: Vec<u32>,
    pub(super) present: Vec<Spell>,
    pub(super) absent: Vec<Spell>,
}

impl Columns {
    /// Appends the columns of the vertices after these.
    fn append(&mut self, mut next: Columns) {
        self.born.append(&mut next.born);
        self.died.append(&mut next.died);
        self.present.append(&mut next.present);
        self.absent.append(&mut next.absent);
    }
}

/// How a build derives a directed run's in-direction.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum InDirection {
    /// As the out-direction's transpose where the run holds every vertex's plain lists
    /// (`versions_transpose`), else gathered.
    Transposed,
    /// From the changes gathered by destination, as any direction's.
    Gathered,
}

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
/// its range, the in-direction derived as `inn` says; `Err` says why they cannot be built
/// (the run and the history disagree, or the store is weighted, which versions do not
/// cover yet).
pub(crate) fn build(
    run: &Run,
    pieces: &[&ChangeSet],
    inn: InDirection,
) -> Result<Versions, String> {
    build_with(run, pieces, inn, GATHER_AT_ONCE)
}

/// [`build`], gathering about `at_once` changes at a time (tests make it a few).
pub(crate) fn build_with(
    run: &Run,
    pieces: &[&ChangeSet],
    inn: InDirection,
    at_once: usize,
) -> Result<Versions, String> {
    let h = &run.header;
    if h.flags & crate::run::format::WEIGHTED != 0 {
        return Err("versions cover unweighted stores only".into());
    }
    let (commits, ords) = commit_table(pieces, h.min_lsn, h.max_lsn);
    if commits.len() >= MAX_COMMITS {
        return Err("too many commits in one run's range".into());
    }
    let span = h.span();
    let n_commits = commits.len();
    let columns =
        |d: &DirData, lists: Lists| dir_columns(d, pieces, &ords, lists, (&span, at_once));
    let finish = |c: Columns| -> Result<DirVersions, String> {
        let (present, [pf, pt]) = spells(c.present)?;
        let (absent, [af, at]) = spells(c.absent)?;
        Ok(DirVersions {
            ords: Ordinals::narrow([c.born, c.died, pf, pt, af, at], n_commits),
            present,
            absent,
        })
    };
    let (out, inn) = match &run.inn {
        Some(i) => {
            let o = columns(&run.out, Lists::Out)?;
            let whole = h.part_shift() == 0;
            let t = (whole && inn == InDirection::Transposed)
                .then(|| super::versions_transpose::columns(&run.out, i, &o))
                .flatten();
            let c = match t {
                Some(c) => c,
                None => columns(i, Lists::In)?,
            };
            (finish(o)?, Some(finish(c)?))
        }
        None => (finish(columns(&run.out, Lists::Both)?)?, None),
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
fn commit_table(pieces: &[&ChangeSet], lo: u64, hi: u64) -> (Vec<u64>, Vec<Vec<u32>>) {
    let mut lsns = Vec::new();
    let ords = (pieces.iter())
        .map(|p| {
            (p.commits().iter())
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

/// Edge changes a derivation gathers at once, at most about (12 B each, and as much again
/// while they are sorted): a direction whose range holds more is derived a range of its
/// vertices at a time, each range's changes read from the segments when it comes, so
/// that the DRAM a derivation holds is its columns' and not its changes' (a Kron24 load's
/// 268 M changes would take 3.2 GB gathered, 6.4 GB sorted).
const GATHER_AT_ONCE: usize = 1 << 24;

/// A direction's columns, from the changes `pieces` hold inside the range (`ords` their
/// commits' ordinals) whose lists lie in the run's vertex `span`, keyed as `lists` says:
/// gathered one range of the direction's index positions at a time, the ranges cut to hold
/// about equal shares of its entries.
fn dir_columns(
    d: &DirData,
    pieces: &[&ChangeSet],
    ords: &[Vec<u32>],
    lists: Lists,
    (span, at_once): (&std::ops::Range<u64>, usize),
) -> Result<Columns, String> {
    let changes: usize = pieces.iter().map(|p| p.len()).sum();
    let keyed = if lists == Lists::Both {
        2 * changes
    } else {
        changes
    };
    let n = d.n_index();
    let cuts = index_cuts(d, keyed.div_ceil(at_once.max(1)).max(1));
    let mut all = Columns::default();
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let lo = if a == 0 { 0 } else { d.vid_at(a) as u64 };
        let hi = if b == n { u64::MAX } else { d.vid_at(b) as u64 };
        let ids = lo.max(span.start)..hi.min(span.end);
        all.append(dir_versions(d, &gather(pieces, ords, lists, &ids), (a, b))?);
    }
    Ok(all)
}

/// Index positions `0 = c[0] < c[1] < .. = n` that cut `d`'s index into at most `parts`
/// ranges of about equal entries (`[0, 0]` for an empty index).
fn index_cuts(d: &DirData, parts: usize) -> Vec<usize> {
    let n = d.n_index();
    let starts = list_starts(d);
    let toffs = d.toffs.get();
    let held = |i: usize| starts.get(i).copied().unwrap_or(0) + toffs.get(i).copied().unwrap_or(0);
    let total = held(n);
    let mut cuts = vec![0];
    for k in 1..parts {
        let want = (total as u128 * k as u128 / parts as u128) as u64;
        let c = super::segment_read::partition(n, |i| held(i) < want);
        if c > *cuts.last().unwrap() && c < n {
            cuts.push(c);
        }
    }
    cuts.push(n);
    cuts
}

/// Every edge change inside the range whose list belongs to a vertex in `ids`, keyed as
/// `lists` says and sorted by (vertex, neighbor, commit), the order of one commit's
/// changes kept (a stable sort).
fn gather(
    pieces: &[&ChangeSet],
    ords: &[Vec<u32>],
    lists: Lists,
    ids: &std::ops::Range<u64>,
) -> Vec<Gathered> {
    let mut out: Vec<Gathered> = Vec::new();
    let mut keep = |v: VertexId, nbr: VertexId, at: u32| {
        if ids.contains(&(v as u64)) {
            out.push((v, nbr, at));
        }
    };
    for (p, ord) in pieces.iter().zip(ords) {
        let change = |src: VertexId, dst: VertexId, commit: u32| {
            let o = ord[commit as usize];
            (o != 0).then(|| (src, id_of(dst), o | if is_del(dst) { REMOVED } else { 0 }))
        };
        match lists {
            // A source's changes sit together in a segment: only the range's are read.
            Lists::Out => p.sources_in(ids.start, ids.end, |s, d, c| {
                if let Some((s, d, at)) = change(s, d, c) {
                    keep(s, d, at)
                }
            }),
            Lists::In => p.each(|s, d, c| {
                if let Some((s, d, at)) = change(s, d, c) {
                    keep(d, s, at)
                }
            }),
            Lists::Both => p.each(|s, d, c| {
                if let Some((s, d, at)) = change(s, d, c) {
                    keep(s, d, at);
                    if s != d {
                        keep(d, s, at);
                    }
                }
            }),
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
    let base = changes.iter().map(|e| e.0).min().unwrap_or(0);
    let slot = |e: &Gathered| (e.0 - base) as usize;
    let space = changes.iter().map(|e| slot(e) + 1).max().unwrap_or(0);
    let mut at = vec![0usize; space + 1];
    for e in &changes {
        at[slot(e) + 1] += 1;
    }
    for i in 1..at.len() {
        at[i] += at[i - 1];
    }
    let mut out = vec![(0, 0, 0); changes.len()];
    for e in changes {
        let p = &mut at[slot(&e)];
        out[*p] = e;
        *p += 1;
    }
    out.par_chunk_by_mut(|a, b| a.0 == b.0)
        .for_each(|c| c.sort_by_key(|e| (e.1, e.2 & !REMOVED)));
    out
}

/// A direction's columns for its index positions `a..b` (the first range also takes the
/// changes of vertices below the index, the last those above it), from `changes`, which
/// hold those of the range's vertices: in parallel, a sub-range at a time.
fn dir_versions(
    d: &DirData,
    changes: &[Gathered],
    (a, b): (usize, usize),
) -> Result<Columns, String> {
    let n = d.n_index();
    let chunk = ((b - a) / (rayon::current_num_threads() * 8)).max(4096);
    let ranges: Vec<(usize, usize)> = (0..(b - a).div_ceil(chunk))
        .map(|c| (a + c * chunk, (a + (c + 1) * chunk).min(b)))
        .collect();
    let parts: Vec<Columns> = (ranges.par_iter())
        .map(|&(x, y)| dir_range(d, changes, x, y, x == 0, y == n))
        .collect::<Result<_, String>>()?;
    let mut all = Columns::default();
    for p in parts {
        all.append(p);
    }
    if n == 0 {
        unlisted(changes, &mut all)?;
    }
    Ok(all)
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
    let mut c = Columns::default();
    let mut buf = Vec::new();
    for i in a..b {
        let v = d.vid_at(i);
        let from = at + changes[at..end].partition_point(|c| c.0 < v);
        unlisted(&changes[at..from], &mut c)?;
        at = from + changes[from..end].partition_point(|c| c.0 == v);
        let adds = d.adds_into(i, &mut buf);
        let (nb, nd) = (c.born.len(), c.died.len());
        c.born.resize(nb + adds.len(), 0);
        c.died.resize(nd + d.tombs_at(i).len(), 0);
        let entries = Entries {
            adds,
            tombs: d.tombs_at(i),
            born: &mut c.born[nb..],
            died: &mut c.died[nd..],
        };
        vertex_versions(entries, &changes[from..at], (&mut c.present, &mut c.absent))?;
    }
    unlisted(&changes[at..end], &mut c)?;
    Ok(c)
}

/// The changes of vertices the run's index does not hold (every edge of theirs ends as it
/// began), made spells as any vertex's are.
fn unlisted(changes: &[Gathered], c: &mut Columns) -> Result<(), String> {
    for g in changes.chunk_by(|x, y| x.0 == y.0) {
        let none = Entries {
            adds: &[],
            tombs: &[],
            born: &mut [],
            died: &mut [],
        };
        vertex_versions(none, g, (&mut c.present, &mut c.absent))?;
    }
    Ok(())
}

/// One vertex's adds and tombstones in the run, and their born and died ordinals to set.
struct Entries<'a> {
    adds: &'a [VertexId],
    tombs: &'a [VertexId],
    born: &'a mut [u32],
    died: &'a mut [u32],
}

/// One vertex: each neighbor's changes `ch` (sorted by neighbor, then commit) set the born
/// of its add or the died of its tombstone to the last of them; the stretches in which
/// the edge was not as the runs before have it go to `present` (they do not hold it) or
/// `absent` (they do).
fn vertex_versions(
    e: Entries,
    ch: &[Gathered],
    (present, absent): (&mut Vec<Spell>, &mut Vec<Spell>),
) -> Result<(), String> {
    for g in ch.chunk_by(|x, y| x.1 == y.1) {
        alternates(g)?;
        let (x, last) = (g[0].1, g[g.len() - 1]);
        let removed = last.2 & REMOVED != 0;
        let held = if let Ok(k) = e.adds.binary_search(&x) {
            if removed {
                return Err(format!(
                    "edge {} -> {x}: an add whose last change removed it",
                    g[0].0
                ));
            }
            e.born[k] = last.2;
            false
        } else if let Ok(k) = e.tombs.binary_search(&x) {
            if !removed {
                return Err(format!(
                    "edge {} -> {x}: a tombstone whose last change added it",
                    g[0].0
                ));
            }
            e.died[k] = last.2 & !REMOVED;
            true
        } else {
            // Neither: it ends as it began, as the runs before have it.
            !removed
        };
        edge_spells(g, held, if held { &mut *absent } else { &mut *present });
    }
    Ok(())
}

/// The spells of one edge with changes `g` (alternating, by commit) that the runs before
/// hold if `held`: each stretch between two changes (or from before the first) in which
/// it was not as they have it. The stretch its last change opens is left out: it is not
/// as they have it only when the run's own add or tombstone says so. One commit may change
/// an edge twice (an undirected edge given at both ends): the stretch between the two
/// holds no commit, and makes no spell.
fn edge_spells(g: &[Gathered], held: bool, out: &mut Vec<Spell>) {
    let (v, x) = (g[0].0, g[0].1);
    // Before its first change the edge was the opposite of what that change made it.
    let mut present = g[0].2 & REMOVED != 0;
    let mut from = 0;
    for c in g {
        let at = c.2 & !REMOVED;
        assert!(from <= at, "edge {v} -> {x}: changes out of commit order");
        if present != held && from < at {
            out.push((v, x, from, at));
        }
        present = c.2 & REMOVED == 0;
        from = at;
    }
}

/// A direction's spells of one kind as columns: grouped by vertex, and their two ends;
/// `Err` when there are more than a `u32` counts.
fn spells(s: Vec<Spell>) -> Result<(Spells, [Vec<u32>; 2]), String> {
    if u32::try_from(s.len()).is_err() {
        return Err("too many spells in one run's direction".into());
    }
    let (mut vid, mut end) = (Vec::new(), Vec::new());
    for (k, w) in s.iter().enumerate() {
        if vid.last() != Some(&w.0) {
            if !vid.is_empty() {
                end.push(k as u32);
            }
            vid.push(w.0);
        }
    }
    if !vid.is_empty() {
        end.push(s.len() as u32);
    }
    let cols = Spells {
        vid: Sec::owned(vid),
        end: Sec::owned(end),
        nbr: Sec::owned(s.iter().map(|w| w.1).collect()),
    };
    Ok((
        cols,
        [
            s.iter().map(|w| w.2).collect(),
            s.iter().map(|w| w.3).collect(),
        ],
    ))
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
    pieces: &[&ChangeSet],
    ords: &[Vec<u32>],
    span: &std::ops::Range<u64>,
) -> (Vec<u32>, Vec<VertexId>) {
    (pieces.iter().zip(ords))
        .flat_map(|(p, ord)| p.vertices().iter().map(move |&(c, x)| (ord[c as usize], x)))
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
/// spells are settled and the neighbors it keeps counted, then each range writes its
/// neighbors straight into its own slice of one array. The neighbors are
/// written once: no part is grown by reallocation, and none is copied into the run.
fn dir_at(d: &DirData, v: &DirVersions, q: u32, space: u64) -> std::io::Result<DirData> {
    let ranges = Range::split(d.n_index());
    let starts = list_starts(d);
    let settled: Vec<Settled> = (ranges.par_iter())
        .map(|r| with_ordinals!(&v.ords, |c| settle_range(d, v, c.born.get(), &starts, q, r)))
        .collect();
    let mut adds = AnonArray::<VertexId>::zeroed(settled.iter().map(|s| s.kept).sum())?;
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
    Ok(build::assemble_placed(parts, Sec::anon(adds), space))
}

/// Index positions `at.0..at.1` of a direction, and whether they are its first and last
/// (whose spells include those of vertices the index does not hold below or above it).
pub(super) struct Range {
    pub(super) at: (usize, usize),
    pub(super) ends: (bool, bool),
}

impl Range {
    /// `n` index positions split into ranges for the pool's threads (at least one range,
    /// which holds the spells of a direction without an index).
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

/// What one range's spells settle as of the ordinal asked (the first pass of [`dir_at`]).
#[derive(Default)]
struct Settled {
    /// Each vertex whose spells settle a neighbor, ascending, with where its neighbors end
    /// in `adds` and in `tombs`.
    vids: Vec<(VertexId, usize, usize)>,
    adds: Vec<VertexId>,
    tombs: Vec<VertexId>,
    /// The neighbors the range keeps: its adds born by then and the spells' adds.
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

/// The spells of range `r` settled as of `q`, and the neighbors it keeps counted.
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
/// neighbors its spells settled present, written to `dst` (exactly the range's share), and
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

/// Per-vertex work space of a filter (and of a count, `versions_count.rs`).
#[derive(Default)]
pub(super) struct Scratch {
    /// Neighbors the spells settle present, and absent, as of the ordinal asked.
    pub(super) more_adds: Vec<VertexId>,
    pub(super) more_tombs: Vec<VertexId>,
}

impl Scratch {
    /// Settles, one vertex at a time, the spells of the vertices of index positions `a..b`
    /// of `d` (at the first and last ranges, of those the index does not hold below or
    /// above it too) as of `q`, and hands each vertex with spells to `f`: the neighbors
    /// whose spells hold `q` in `more_adds` (edges the runs before do not hold) and
    /// `more_tombs` (edges they hold).
    pub(super) fn each_settled(
        d: &DirData,
        ver: &DirVersions,
        (a, b): (usize, usize),
        (first, last): (bool, bool),
        q: u32,
        mut f: impl FnMut(&Scratch, VertexId),
    ) {
        let lo = (!first).then(|| d.vid_at(a));
        let hi = (!last).then(|| d.vid_at(b));
        let (p, ab) = (&ver.present, &ver.absent);
        let ((mut i, i_end), (mut j, j_end)) = (p.vertices(lo, hi), ab.vertices(lo, hi));
        let (pv, av) = (p.vid.get(), ab.vid.get());
        let mut s = Scratch::default();
        while i < i_end || j < j_end {
            let v = match (
                pv.get(i).filter(|_| i < i_end),
                av.get(j).filter(|_| j < j_end),
            ) {
                (Some(&x), Some(&y)) => x.min(y),
                (Some(&x), None) | (None, Some(&x)) => x,
                (None, None) => unreachable!("one of the two is left"),
            };
            s.more_adds.clear();
            s.more_tombs.clear();
            with_ordinals!(&ver.ords, |c| {
                if i < i_end && pv[i] == v {
                    p.holding(i, &c.present, q, &mut s.more_adds);
                    i += 1;
                }
                if j < j_end && av[j] == v {
                    ab.holding(j, &c.absent, q, &mut s.more_tombs);
                    j += 1;
                }
            });
            f(&s, v);
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
