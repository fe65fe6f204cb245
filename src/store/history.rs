//! The store's history: its setting and segments, snapshots as of a commit, the changes
//! between two commits, and the commit log (see [`crate::history`] for the design).
//!
//! Where history lives while the store runs:
//! - committed **segments** (`Kept::segments`, named by the root): each one's commit table
//!   (its head) is read on first use and kept, 32 bytes a commit; its changes are read
//!   only by a point or a diff that needs them, and kept among the recent ones up to the
//!   memtable's budget (`Recent`), so memory does not grow with the history read;
//! - the history of runs **sealed but not committed** yet (`State::dram_history`, by run
//!   id), published with the run itself so that a reader of the runs always finds their
//!   history, and dropped once the commit naming its segment is in force;
//! - the **memtables'** commits, sealed into the above first by whoever reads history.
//!
//! A piece may be in both of the first two for a moment; pieces are told apart by their
//! LSN range.

use super::versions::PointShape;
use super::write::{Freeze, SnapshotParts};
use super::{CommitPoint, Inner, Maint};
use crate::history::segment_read::{ChangeSet, InPlace};
use crate::history::{net, segment, window_start, History};
use crate::manifest::HistRef;
use crate::memtable::history::{Commit, Sealed};
use crate::memtable::Memtable;
use crate::run::Run;
use crate::snapshot::Snapshot;
use crate::types::{bits, Record, VertexId};
use crate::{Error, Result};
use std::sync::{Arc, OnceLock};

/// The history a store keeps. A leaf lock, like `manifest`.
pub(super) struct Kept {
    /// What is kept.
    pub setting: History,
    /// The LSN of the oldest commit that may still be shown (`Root::history_floor`).
    pub floor: u64,
    /// The committed segments, oldest first.
    pub segments: Vec<Segment>,
    /// Segments' changes read lately.
    pub recent: Recent,
}

/// Segments' changes read lately, kept up to the memtable's budget: a point or a diff
/// read again, or the next one near it, does not read and decode them again, and memory
/// stays bounded however much history is read.
#[derive(Default)]
pub(super) struct Recent {
    /// By LSN range, the most recently used last, with their bytes in DRAM.
    entries: std::collections::VecDeque<((u64, u64), Arc<Sealed>, usize)>,
    bytes: usize,
}

impl Recent {
    fn get(&mut self, lsns: (u64, u64)) -> Option<Arc<Sealed>> {
        let at = self.entries.iter().position(|e| e.0 == lsns)?;
        let e = self.entries.remove(at)?;
        let s = e.1.clone();
        self.entries.push_back(e);
        Some(s)
    }

    pub(super) fn put(&mut self, lsns: (u64, u64), s: Arc<Sealed>, budget: usize) {
        let bytes = s.bytes();
        if bytes > budget || self.entries.iter().any(|e| e.0 == lsns) {
            return;
        }
        self.entries.push_back((lsns, s, bytes));
        self.bytes += bytes;
        while self.bytes > budget {
            let Some(old) = self.entries.pop_front() else {
                break;
            };
            self.bytes -= old.2;
        }
    }

    /// Forgets the segments with LSN ranges `gone` (dropped by retention).
    pub(super) fn forget(&mut self, gone: &[(u64, u64)]) {
        let bytes = &mut self.bytes;
        self.entries.retain(|e| {
            let keep = !gone.contains(&e.0);
            if !keep {
                *bytes -= e.2;
            }
            keep
        });
    }
}

/// A committed segment, its commit table read on first use.
#[derive(Clone)]
pub(super) struct Segment {
    pub r: HistRef,
    head: Arc<OnceLock<Arc<[Commit]>>>,
}

impl Segment {
    pub fn new(r: HistRef) -> Segment {
        Segment {
            r,
            head: Default::default(),
        }
    }

    /// A segment just written from `s`: its commit table is known.
    pub fn written(r: HistRef, s: &Sealed) -> Segment {
        let seg = Segment::new(r);
        let _ = seg.head.set(s.commits.clone().into());
        seg
    }
}

/// A point in history, as a user names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// The last commit at or before this LSN (a commit is named by the LSN after its last
    /// record, as its [`crate::store::Ticket`] says).
    Lsn(u64),
    /// The last commit at or before this time (Unix nanoseconds).
    Time(i64),
}

impl std::fmt::Display for Point {
    /// `LSN 1234`, or the time in RFC 3339.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Point::Lsn(k) => write!(f, "LSN {k}"),
            Point::Time(t) => f.write_str(&crate::time::show(t)),
        }
    }
}

impl std::str::FromStr for Point {
    type Err = String;

    /// An LSN (`1234`), Unix seconds after `@` (`@1009843200`, `@1009843200.5`), RFC 3339
    /// (`2002-01-01T00:00:00Z`) or a date (`2002-01-01`, its midnight UTC): what `--at`
    /// takes.
    fn from_str(s: &str) -> std::result::Result<Point, String> {
        let s = s.trim();
        if let Some(secs) = s.strip_prefix('@') {
            return crate::time::parse(secs).map(Point::Time);
        }
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            return s
                .parse()
                .map(Point::Lsn)
                .map_err(|_| format!("{s} is too large for an LSN"));
        }
        let hint = "a point is an LSN (a whole number), @SECONDS, RFC 3339 such as 2002-01-01T00:00:00Z, or a date such as 2002-01-01 (its midnight UTC)";
        let date = s.len() == 10 && s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-';
        if !s.contains(':') && !date {
            return Err(format!("'{s}' is not a point: {hint}"));
        }
        crate::time::parse(s)
            .map(Point::Time)
            .map_err(|e| format!("{e}; {hint}"))
    }
}

/// A stretch of history with the LSN range it covers and its commits.
#[derive(Clone)]
pub(super) struct Piece {
    pub(super) min_lsn: u64,
    pub(super) max_lsn: u64,
    pub(super) commits: Arc<[Commit]>,
    changes: Changes,
}

/// Where a piece's changes are.
#[derive(Clone)]
enum Changes {
    /// Sealed in DRAM, not committed yet (or just committed).
    Dram(Arc<Sealed>),
    /// In a committed segment's file.
    File(Segment),
}

/// Changes between two commits, in external ids: applying them to the graph as of `from`
/// gives the graph as of `to` (`from` may come after `to`: then they undo).
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    /// The commit the changes start from.
    pub from: CommitPoint,
    /// The commit they lead to.
    pub to: CommitPoint,
    /// Edge removals, vertex deletes, vertex inserts, then edge insertions (a weight change
    /// is an insertion with the new weight), each kind ordered by ids.
    pub records: Vec<Record>,
}

/// The commits history keeps, and what is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Log {
    /// What the store keeps.
    pub setting: History,
    /// Every commit in the window, oldest first, with its record count.
    pub commits: Vec<(CommitPoint, u64)>,
    /// Bytes of history segments on the medium.
    pub segment_bytes: u64,
    /// History segments.
    pub segments: usize,
}

impl Inner {
    /// Whether memtables made now record their changes: the store keeps history, or
    /// someone follows its commits (`follow.rs`).
    pub(super) fn keeps_history(&self) -> bool {
        self.history.lock().unwrap().setting.keeps() || self.followed()
    }

    /// The history of everything applied so far, in LSN order, from the first commit after
    /// the last gap (a stretch sealed while no history was kept): the memtables are sealed
    /// into DRAM runs first, as a snapshot seals them. Only commit tables are read.
    pub(super) fn pieces(&self) -> Result<Vec<Piece>> {
        {
            let mut w = self.writer.lock().unwrap();
            self.freeze_locked(&mut w, Freeze::ForReading);
        }
        self.seal_pending_dram()?;
        let mut pieces: Vec<Piece> = {
            let st = self.state.lock().unwrap();
            (st.dram_history.iter().chain(&st.followed_history))
                .map(|(lsns, s)| Piece {
                    min_lsn: lsns.0,
                    max_lsn: lsns.1,
                    commits: s.commits.clone().into(),
                    changes: Changes::Dram(s.clone()),
                })
                .collect()
        };
        let segments = self.history.lock().unwrap().segments.clone();
        for s in segments {
            pieces.push(Piece {
                min_lsn: s.r.min_lsn,
                max_lsn: s.r.max_lsn,
                commits: self.segment_head(&s)?,
                changes: Changes::File(s),
            });
        }
        // A piece both sealed in DRAM and committed is read from DRAM; one that a longer
        // piece covers (DRAM runs flushed as one segment, their pieces still kept for a
        // follower) is read from that one.
        pieces.sort_by_key(|p| {
            let file = matches!(p.changes, Changes::File(_));
            (p.min_lsn, std::cmp::Reverse(p.max_lsn), file)
        });
        pieces.dedup_by_key(|p| (p.min_lsn, p.max_lsn));
        let mut end = 0;
        pieces.retain(|p| {
            let covered = p.max_lsn <= end && p.min_lsn < end;
            end = end.max(p.max_lsn);
            !covered
        });
        let gap = pieces
            .windows(2)
            .rposition(|w| w[0].max_lsn != w[1].min_lsn);
        Ok(pieces.split_off(gap.map_or(0, |i| i + 1)))
    }

    /// A segment's commit table, read and checked on first use.
    pub(super) fn segment_head(&self, s: &Segment) -> Result<Arc<[Commit]>> {
        if let Some(x) = s.head.get() {
            return Ok(x.clone());
        }
        let name = segment::file_name(s.r.min_lsn, s.r.max_lsn);
        let head = segment::read_head(&*self.medium, &name)?;
        let h = head.header;
        self.check_segment(&name, &h, head.commits.len(), s)?;
        let commits: Arc<[Commit]> = head.commits.into();
        let _ = s.head.set(commits.clone());
        Ok(commits)
    }

    /// Whether segment file `name`, with header `h` and `commits`, is the one `s` names,
    /// written by this store for a commit up to the root in force.
    fn check_segment(
        &self,
        name: &str,
        h: &segment::Header,
        commits: usize,
        s: &Segment,
    ) -> Result<()> {
        {
            let man = self.manifest.lock().unwrap();
            super::files::Expected::new(man.root()).named_history(name, h.stamp)?;
        }
        match (h.min_lsn, h.max_lsn) == (s.r.min_lsn, s.r.max_lsn)
            && commits as u64 == s.r.commits
            && h.weighted == self.weighted
            && h.undirected == self.undirected
        {
            true => Ok(()),
            false => Err(Error::corrupt(format!(
                "history segment {name} does not match the manifest's description"
            ))),
        }
    }

    /// The changes of the pieces that hold commits in `lo+1 ..= hi`, read from their files
    /// where they are not in DRAM.
    pub(super) fn changes_between(
        &self,
        pieces: &[Piece],
        lo: u64,
        hi: u64,
    ) -> Result<Vec<Arc<Sealed>>> {
        let needed = pieces.iter().filter(|p| p.max_lsn > lo && p.min_lsn < hi);
        needed
            .map(|p| match &p.changes {
                Changes::Dram(s) => Ok(s.clone()),
                Changes::File(seg) => self.segment_changes(seg),
            })
            .collect()
    }

    /// A segment's changes: from [`Recent`], else read and checked (and kept there).
    pub(super) fn segment_changes(&self, seg: &Segment) -> Result<Arc<Sealed>> {
        let lsns = (seg.r.min_lsn, seg.r.max_lsn);
        if let Some(s) = self.history.lock().unwrap().recent.get(lsns) {
            return Ok(s);
        }
        let name = segment::file_name(lsns.0, lsns.1);
        let (h, sealed) = segment::read(&*self.medium, &name)?;
        self.check_segment(&name, &h, sealed.commits.len(), seg)?;
        let sealed = Arc::new(sealed);
        let budget = self.opts.memtable_bytes;
        (self.history.lock().unwrap().recent).put(lsns, sealed.clone(), budget);
        Ok(sealed)
    }

    /// The changes of `seg` as a derivation of versions reads them: decoded where they are
    /// in DRAM already, else read in place from the file (decoded only for a segment that
    /// cannot be, of format 2 or a weighted store), and not kept after.
    pub(super) fn segment_change_set(&self, seg: &Segment) -> Result<ChangeSet> {
        let lsns = (seg.r.min_lsn, seg.r.max_lsn);
        if let Some(s) = self.history.lock().unwrap().recent.get(lsns) {
            return Ok(ChangeSet::Decoded(s));
        }
        let name = segment::file_name(lsns.0, lsns.1);
        match InPlace::open(&*self.medium, &name)? {
            Some((h, set)) => {
                let set = ChangeSet::InPlace(set);
                self.check_segment(&name, &h, set.commits().len(), seg)?;
                Ok(set)
            }
            None => self.segment_changes(seg).map(ChangeSet::Decoded),
        }
    }

    /// `check`: every segment `root` names read whole (both checksums), matched against
    /// its description, and their commits in order from one segment to the next; returns
    /// the segments and commits checked. A read-only handle skips a segment its writer
    /// let go of since.
    pub(super) fn check_history(
        &self,
        root: &crate::manifest::Root,
        problems: &mut Vec<String>,
    ) -> (usize, u64) {
        let (mut checked, mut commits) = (0, 0);
        let mut last: Option<Commit> = None;
        for r in &root.history_segments {
            let name = segment::file_name(r.min_lsn, r.max_lsn);
            if self.opts.read_only && !self.medium.exists(&name) {
                continue;
            }
            let read = segment::read(&*self.medium, &name).and_then(|(h, sealed)| {
                let seg = Segment::new(r.clone());
                self.check_segment(&name, &h, sealed.commits.len(), &seg)
                    .map(|_| sealed)
            });
            let sealed = match read {
                Ok(s) => s,
                Err(e) => {
                    problems.push(format!("history: {e}"));
                    continue;
                }
            };
            let first = sealed.commits.first().copied();
            if let (Some(a), Some(b)) = (last, first) {
                if a.lsn >= b.lsn || a.time > b.time || a.vertices > b.vertices {
                    problems.push(format!(
                        "history segment {name} starts at LSN {} ({}), not after the segment before it ended (LSN {}, {})",
                        b.lsn, crate::time::show(b.time), a.lsn, crate::time::show(a.time)
                    ));
                }
            }
            last = sealed.commits.last().copied().or(last);
            checked += 1;
            commits += sealed.commits.len() as u64;
        }
        (checked, commits)
    }

    /// The commits of `pieces` up to `upto`, oldest first.
    pub(super) fn commits_of(pieces: &[Piece], upto: u64) -> Vec<CommitPoint> {
        (pieces.iter())
            .flat_map(|p| p.commits.iter())
            .filter(|c| c.lsn <= upto)
            .map(|c| CommitPoint {
                lsn: c.lsn,
                unix_nanos: c.time,
            })
            .collect()
    }

    /// The position among `commits` of the commit `at` names, checked to lie in the window.
    pub(super) fn resolve(&self, commits: &[CommitPoint], at: Point) -> Result<usize> {
        let (setting, floor) = {
            let kept = self.history.lock().unwrap();
            (kept.setting, kept.floor)
        };
        let found = match at {
            Point::Lsn(k) => commits.partition_point(|c| c.lsn <= k).checked_sub(1),
            Point::Time(t) => commits
                .partition_point(|c| c.unix_nanos <= t)
                .checked_sub(1),
        };
        let start = window(setting, floor, commits);
        match (found, start) {
            (Some(i), Some(s)) if i >= s => Ok(i),
            _ => Err(Error::Invalid(outside_window(at, setting, commits, start))),
        }
    }

    /// The graph right after the commit `at` names, and that commit.
    pub(super) fn snapshot_at(&self, at: Point) -> Result<(Snapshot, CommitPoint)> {
        let parts = self.snapshot_parts()?;
        let pieces = self.pieces()?;
        let commits = Self::commits_of(&pieces, parts.lsn);
        let i = self.resolve(&commits, at)?;
        self.snapshot_of(parts, &pieces, &commits, i, PointShape::Masked)
    }

    /// The graph right after the commit `at` names, if the changes since are held (in the
    /// window kept or not: a follower's, `follow.rs`); `None` if not. Laid out as `shape`
    /// allows: a patch is sealed only over plain runs, never over a point's mask.
    pub(super) fn snapshot_held(
        &self,
        at: Point,
        shape: PointShape,
    ) -> Result<Option<(Snapshot, CommitPoint)>> {
        let parts = self.snapshot_parts()?;
        let pieces = self.pieces()?;
        let commits = Self::commits_of(&pieces, parts.lsn);
        let found = match at {
            Point::Lsn(k) => commits.partition_point(|c| c.lsn <= k),
            Point::Time(t) => commits.partition_point(|c| c.unix_nanos <= t),
        };
        match found.checked_sub(1) {
            Some(i) => (self.snapshot_of(parts, &pieces, &commits, i, shape)).map(Some),
            None => Ok(None),
        }
    }

    /// The graph right after `commits[i]`, and that commit, laid out as `shape` allows.
    pub(super) fn snapshot_of(
        &self,
        parts: SnapshotParts,
        pieces: &[Piece],
        commits: &[CommitPoint],
        i: usize,
        shape: PointShape,
    ) -> Result<(Snapshot, CommitPoint)> {
        let parts = self.parts_as_of(parts, pieces, commits, i, shape)?;
        Ok((parts.build(self), commits[i]))
    }

    /// The makings of the graph right after `commits[i]`, by whichever of three routes
    /// reads least: the runs read in place with the one holding the commit filtered by its
    /// versions (`versions.rs`; when it has them); forward from the newest cut among the
    /// runs at or before the commit (runs flushed before it, read in place, with the
    /// changes since laid over them) when the history kept reaches back to it; or back
    /// from the latest graph (`parts`) with the changes after the commit undone. Each
    /// gives the same graph (`route_tests.rs`). A filtered run is a mask over the run read
    /// in place where `shape` allows and the run allows it.
    pub(super) fn parts_as_of(
        &self,
        parts: SnapshotParts,
        pieces: &[Piece],
        commits: &[CommitPoint],
        i: usize,
        shape: PointShape,
    ) -> Result<SnapshotParts> {
        let point = commits[i].lsn;
        if i + 1 == commits.len() {
            return Ok(parts);
        }
        // A segment is read whole whatever share of it a route needs, and the changes
        // between the route's two ends are netted and laid over the runs.
        let changes = |lo: u64, hi: u64| -> u64 {
            (pieces.iter())
                .filter(|p| p.max_lsn > lo && p.min_lsn < hi)
                .map(|p| p.max_lsn - p.min_lsn)
                .sum::<u64>()
                .saturating_add(hi - lo)
                .saturating_mul(CHANGE_COST)
        };
        let undo = changes(point, parts.lsn);
        let cut = forward_cut(&parts.runs, pieces, point);
        let forward = cut.map_or(u64::MAX, |c| changes(c, point));
        if filtered_entries(&parts.runs, point) < undo.min(forward) {
            if let Some(v) = self.parts_versioned(parts.clone(), pieces, point, shape)? {
                return Ok(v);
            }
        }
        match cut {
            Some(cut) if forward <= undo => self.parts_forward(parts, pieces, cut, point),
            _ => self.parts_undone(parts, pieces, point),
        }
    }

    /// The graph at commit `lsn` from the runs wholly before `cut` (no run straddles it),
    /// read in place, with the net changes of the commits in `cut+1 ..= lsn` laid over
    /// them: the cost is those changes, however many came after `lsn`.
    pub(super) fn parts_forward(
        &self,
        mut parts: SnapshotParts,
        pieces: &[Piece],
        cut: u64,
        lsn: u64,
    ) -> Result<SnapshotParts> {
        parts.runs.retain(|r| r.header.max_lsn <= cut);
        let mut gone = vertex_states(&parts.runs);
        if cut < lsn {
            let (edges, vertices) = self.net_between(pieces, cut, lsn)?;
            if !edges.is_empty() {
                let layer = self.state_run(&parts.runs, parts.n, &edges, End::Later);
                parts.runs.push(Arc::new(layer));
            }
            for v in &vertices {
                bits::assign(&mut gone, v.v, !v.after);
            }
        }
        mark_unborn(&mut gone, vertices_at(pieces, lsn), parts.n);
        parts.deleted = Arc::new(gone);
        Ok(parts)
    }

    /// The graph at commit `lsn`: the latest graph (`parts`) with the changes after `lsn`
    /// undone by one DRAM run over the latest runs.
    pub(super) fn parts_undone(
        &self,
        mut parts: SnapshotParts,
        pieces: &[Piece],
        lsn: u64,
    ) -> Result<SnapshotParts> {
        let (edges, vertices) = self.net_between(pieces, lsn, parts.lsn)?;
        let undo = self.state_run(&parts.runs, parts.n, &edges, End::Earlier);
        parts.runs.push(Arc::new(undo));
        let mut gone = (*parts.deleted).clone();
        for v in &vertices {
            bits::assign(&mut gone, v.v, !v.before);
        }
        mark_unborn(&mut gone, vertices_at(pieces, lsn), parts.n);
        parts.deleted = Arc::new(gone);
        Ok(parts)
    }

    /// The net changes of the commits in `lo+1 ..= hi` among `pieces`, their segments
    /// read for the purpose and let go once netted.
    fn net_between(
        &self,
        pieces: &[Piece],
        lo: u64,
        hi: u64,
    ) -> Result<(Vec<net::EdgeChange>, Vec<net::VertexChange>)> {
        let loaded = self.changes_between(pieces, lo, hi)?;
        let refs: Vec<&Sealed> = loaded.iter().map(|s| &**s).collect();
        Ok(self.pool.install(|| net::between(&refs, lo, hi)))
    }

    /// A run that sets each of the net `edges` to its state at `end` over the runs `below`,
    /// resolved against them: forward from a cut (the later end) or back from the latest
    /// graph (the earlier end).
    fn state_run(&self, below: &[Arc<Run>], n: usize, edges: &[net::EdgeChange], end: End) -> Run {
        let state = |e: &net::EdgeChange| match end {
            End::Earlier => e.before,
            End::Later => e.after,
        };
        let ups: Vec<[VertexId; 2]> = (edges.iter())
            .map(|e| match state(e) {
                None => [e.src, e.dst | crate::batch::DEL],
                Some(_) => [e.src, e.dst],
            })
            .collect();
        let weights: Vec<f64> = match self.weighted {
            true => edges.iter().map(|e| state(e).unwrap_or(0.0)).collect(),
            false => Vec::new(),
        };
        self.layer_run(below, n, &ups, &weights)
    }

    /// A DRAM run of the updates `ups` (with `weights` in a weighted store) over `below`,
    /// resolved against them: what a past point or a window lays over the latest runs.
    pub(super) fn layer_run(
        &self,
        below: &[Arc<Run>],
        n: usize,
        ups: &[[VertexId; 2]],
        weights: &[f64],
    ) -> Run {
        let mut m = Memtable::new(self.undirected, self.weighted, 0, n as VertexId);
        self.pool.install(|| m.apply_edges(ups, weights));
        m.max_lsn = 1;
        let id = self
            .next_run_id
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        self.pool.install(|| m.seal(below, id))
    }

    /// The changes from the commit `from` names to the one `to` names.
    pub(super) fn diff(&self, from: Point, to: Point) -> Result<Diff> {
        let pieces = self.pieces()?;
        let upto = pieces.last().map_or(0, |p| p.max_lsn);
        let commits = Self::commits_of(&pieces, upto);
        let (ia, ib) = (self.resolve(&commits, from)?, self.resolve(&commits, to)?);
        let (a, b) = (commits[ia], commits[ib]);
        let ids = |lsn: u64| vertices_at(&pieces, lsn);
        let (lo, hi) = (a.lsn.min(b.lsn), a.lsn.max(b.lsn));
        let loaded = self.changes_between(&pieces, lo, hi)?;
        let refs: Vec<&Sealed> = loaded.iter().map(|s| &**s).collect();
        let (mut edges, changed) = self.pool.install(|| net::between(&refs, lo, hi));
        drop(loaded);
        // Vertices handed out between the two commits did not exist at the earlier one.
        let mut vertices = born_between(&changed, ids(lo), ids(hi));
        if a.lsn > b.lsn {
            edges
                .iter_mut()
                .for_each(|e| std::mem::swap(&mut e.before, &mut e.after));
            vertices
                .iter_mut()
                .for_each(|v| std::mem::swap(&mut v.before, &mut v.after));
        }
        let dict = self.dict.read().unwrap();
        let records = diff_records(&edges, &vertices, self.weighted, |v| dict.external(v));
        Ok(Diff {
            from: a,
            to: b,
            records,
        })
    }

    /// The commits in the window, with what is kept and what it costs.
    pub(super) fn log(&self) -> Result<Log> {
        let pieces = self.pieces()?;
        let upto = pieces.last().map_or(0, |p| p.max_lsn);
        let commits = Self::commits_of(&pieces, upto);
        let kept = self.history.lock().unwrap();
        let start = window(kept.setting, kept.floor, &commits).unwrap_or(commits.len());
        let mut prev = if start > 0 {
            commits[start - 1].lsn
        } else {
            pieces.first().map_or(0, |p| p.min_lsn)
        };
        let listed = commits[start..]
            .iter()
            .map(|&c| {
                let records = c.lsn - prev;
                prev = c.lsn;
                (c, records)
            })
            .collect();
        Ok(Log {
            setting: kept.setting,
            commits: listed,
            segment_bytes: kept.segments.iter().map(|s| s.r.file_len).sum(),
            segments: kept.segments.len(),
        })
    }

    /// [`crate::Graph::set_history`]: what the old setting lets go of now is let go for
    /// good (a wider window later brings none of it back); then the new setting (the
    /// memtable the flush leaves keeps history or not as it says), a flush, a commit
    /// recording it, and what the new setting lets go of, freed at once.
    pub(super) fn set_history(&self, setting: History) -> Result<()> {
        self.check_writable()?;
        let old = self.history.lock().unwrap().setting;
        self.let_go(old, super::retention::Known::Everything)?;
        self.history.lock().unwrap().setting = setting;
        self.flush()?;
        {
            let mut m = self.maint.lock().unwrap();
            let runs = self.file_runs();
            let dropped = self
                .commit_runs(&mut m, &runs, None, None)
                .inspect_err(|e| self.poison(e))?;
            self.settle_history(None, dropped, (0, 0));
        }
        self.let_go(setting, super::retention::Known::Everything)
    }

    /// Writes the history segment of `run` (committed next, under `_m`).
    pub(super) fn write_segment(
        &self,
        _m: &Maint,
        run: &Run,
        s: &Arc<Sealed>,
    ) -> Result<(HistRef, Arc<Sealed>)> {
        let h = segment::Header {
            min_lsn: run.header.min_lsn,
            max_lsn: run.header.max_lsn,
            weighted: self.weighted,
            undirected: self.undirected,
            stamp: self.next_stamp(),
        };
        let file_len = segment::write(&*self.medium, &h, s)?;
        let r = HistRef {
            min_lsn: h.min_lsn,
            max_lsn: h.max_lsn,
            file_len,
            commits: s.commits.len() as u64,
            last_time: s.commits.last().map_or(i64::MIN, |c| c.time),
            format: segment::FORMAT,
        };
        Ok((r, s.clone()))
    }
}

/// Dense ids handed out by the commit `lsn` among `pieces`.
pub(super) fn vertices_at(pieces: &[Piece], lsn: u64) -> u64 {
    (pieces.iter())
        .flat_map(|p| p.commits.iter())
        .find(|c| c.lsn == lsn)
        .map_or(0, |c| c.vertices)
}

/// What netting one change costs against filtering one run entry by its versions, as
/// measured on Kron20 with 20 rounds of 2 % changes (`evograph bench --history`): a change
/// is decoded from its segment, netted, and resolved against the runs.
const CHANGE_COST: u64 = 8;

/// The entries (both directions) of the runs whose range holds `lsn`: what reading the
/// graph at `lsn` through versions filters.
fn filtered_entries(runs: &[Arc<Run>], lsn: u64) -> u64 {
    let entries = |d: &crate::run::DirData| d.n_adds() + d.n_tombs();
    (runs.iter())
        .filter(|r| r.header.min_lsn < lsn && lsn < r.header.max_lsn)
        .map(|r| entries(&r.out) + r.inn.as_ref().map_or(0, entries))
        .sum()
}

/// Which end of a stretch of net changes a run sets the edges to.
#[derive(Clone, Copy)]
enum End {
    /// Their state at the earlier commit: undoing.
    Earlier,
    /// Their state at the later commit: laying forward.
    Later,
}

/// The newest cut at or before `lsn` ([`run_cut`]) that the history kept in `pieces`
/// reaches, so that a past graph can be built forward from it.
pub(super) fn forward_cut(runs: &[Arc<Run>], pieces: &[Piece], lsn: u64) -> Option<u64> {
    let kept_from = pieces.first().map_or(u64::MAX, |p| p.min_lsn);
    run_cut(runs, lsn).filter(|&c| c >= kept_from)
}

/// The newest LSN at or before `lsn` that no run straddles: every run ends at or before
/// it or starts at or after it, so the runs that end by it hold exactly the graph at it.
/// `None` when the runs leave no such point (they may hold changes of commits on both
/// sides of `lsn`, as a merged run does) other than before every run's first change.
pub(super) fn run_cut(runs: &[Arc<Run>], lsn: u64) -> Option<u64> {
    let ranges: Vec<(u64, u64)> = (runs.iter())
        .map(|r| (r.header.min_lsn, r.header.max_lsn))
        .filter(|r| r.0 < r.1)
        .collect();
    let straddled = |c: u64| ranges.iter().any(|&(lo, hi)| lo < c && c < hi);
    let mut cuts: Vec<u64> = (ranges.iter())
        .flat_map(|&(lo, hi)| [lo, hi])
        .chain([0])
        .filter(|&c| c <= lsn)
        .collect();
    cuts.sort_unstable();
    cuts.into_iter().rev().find(|&c| !straddled(c))
}

/// The deleted-vertex bits the vertex states of `runs` (oldest first) leave.
pub(super) fn vertex_states(runs: &[Arc<Run>]) -> Vec<u64> {
    vertex_states_of(runs.iter().map(|r| r.vertex_ops.get()))
}

/// The deleted-vertex bits the vertex states `ops` (each run's, oldest first) leave.
pub(super) fn vertex_states_of<'a>(ops: impl IntoIterator<Item = &'a [VertexId]>) -> Vec<u64> {
    let mut gone = Vec::new();
    for r in ops {
        for &x in r {
            bits::assign(&mut gone, crate::batch::id_of(x), crate::batch::is_del(x));
        }
    }
    gone
}

/// Marks as deleted every id from `existed` (the ids handed out by the point) below `n`.
pub(super) fn mark_unborn(gone: &mut Vec<u64>, existed: u64, n: usize) {
    for v in existed..n as u64 {
        bits::assign(gone, v as VertexId, true);
    }
}

/// The net vertex changes between two commits with `lo` and `hi` ids handed out: the ones
/// `changed` says, plus every id handed out in between, which did not exist at the earlier
/// commit and exists at the later one unless deleted by then.
fn born_between(changed: &[net::VertexChange], lo: u64, hi: u64) -> Vec<net::VertexChange> {
    let mut out: Vec<net::VertexChange> = (changed.iter())
        .filter(|c| (c.v as u64) < lo && c.before != c.after)
        .copied()
        .collect();
    let mut at = changed.partition_point(|c| (c.v as u64) < lo);
    for v in lo..hi {
        let v = v as VertexId;
        while at < changed.len() && changed[at].v < v {
            at += 1;
        }
        let updated = changed.get(at).filter(|c| c.v == v);
        if updated.is_none_or(|c| c.after) {
            out.push(net::VertexChange {
                v,
                before: false,
                after: true,
            });
        }
    }
    out
}

/// A diff's records, in external ids (`ext`): edge removals, vertex deletes, vertex
/// inserts, edge insertions.
fn diff_records(
    edges: &[net::EdgeChange],
    vertices: &[net::VertexChange],
    weighted: bool,
    ext: impl Fn(VertexId) -> u64,
) -> Vec<Record> {
    let mut out = Vec::with_capacity(edges.len() + vertices.len());
    let gone = edges.iter().filter(|e| e.after.is_none());
    out.extend(gone.map(|e| Record::Delete(ext(e.src), ext(e.dst))));
    out.extend((vertices.iter().filter(|v| !v.after)).map(|v| Record::DeleteVertex(ext(v.v))));
    out.extend((vertices.iter().filter(|v| v.after)).map(|v| Record::InsertVertex(ext(v.v))));
    out.extend(edges.iter().filter_map(|e| {
        let w = e.after?;
        Some(match weighted {
            true => Record::InsertWeighted(ext(e.src), ext(e.dst), w),
            false => Record::Insert(ext(e.src), ext(e.dst)),
        })
    }));
    out
}

/// The position among `commits` (oldest first) of the oldest commit the window keeps:
/// `setting`'s window, and nothing before the commit at `floor` (what was let go stays
/// gone). `None` when the store keeps no history.
pub(super) fn window(setting: History, floor: u64, commits: &[CommitPoint]) -> Option<usize> {
    let pairs: Vec<(u64, i64)> = commits.iter().map(|c| (c.lsn, c.unix_nanos)).collect();
    let start = window_start(setting, &pairs)?;
    Some(start.max(commits.partition_point(|c| c.lsn < floor)))
}

/// How many of `segs` (oldest first) `setting` lets go, from the oldest: whole segments
/// wholly outside the window, counted back from the newest segment's last commit.
pub(super) fn to_drop(setting: History, segs: &[HistRef]) -> usize {
    let Some(newest) = segs.last() else { return 0 };
    match setting {
        History::None => segs.len(),
        History::All => 0,
        History::Commits(n) => {
            let mut total = 0u64;
            let keep = segs.iter().rev().take_while(|s| {
                let more = total < n;
                total += s.commits;
                more
            });
            segs.len() - keep.count()
        }
        History::Within(ns) => {
            let from = newest.last_time.saturating_sub(ns);
            segs.partition_point(|s| s.last_time < from)
        }
    }
}

/// The message for a point outside the window.
fn outside_window(
    at: Point,
    setting: History,
    commits: &[CommitPoint],
    start: Option<usize>,
) -> String {
    let what = match at {
        Point::Lsn(k) => format!("LSN {k}"),
        Point::Time(t) => crate::time::show(t),
    };
    let show = |c: &CommitPoint| format!("LSN {} ({})", c.lsn, crate::time::show(c.unix_nanos));
    match (start, commits.last()) {
        (None, _) if !setting.keeps() => format!(
            "{what} is not a point this store can show: it keeps no history (--history none); keep some with `evograph config STORE --history all` (or a window such as 7d)"
        ),
        (Some(s), Some(last)) if s < commits.len() => format!(
            "{what} is outside the history kept: commits {} to {} (history {setting})",
            show(&commits[s]),
            show(last)
        ),
        _ => format!("{what} is outside the history kept: no commit is kept yet (history {setting})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_lets_go_of_whole_segments_outside_the_window_only() {
        let seg = |min: u64, commits: u64, last_time: i64| HistRef {
            min_lsn: min,
            max_lsn: min + 10,
            file_len: 100,
            commits,
            last_time,
            format: 3,
        };
        let segs = [seg(0, 5, 100), seg(10, 5, 200), seg(20, 5, 300)];
        assert_eq!(to_drop(History::All, &segs), 0);
        assert_eq!(to_drop(History::None, &segs), 3);
        // The last 5 commits are the newest segment; 6 reach into the one before.
        assert_eq!(to_drop(History::Commits(5), &segs), 2);
        assert_eq!(to_drop(History::Commits(6), &segs), 1);
        assert_eq!(to_drop(History::Commits(100), &segs), 0);
        // Counted back from the newest segment's last commit (300).
        assert_eq!(to_drop(History::Within(100), &segs), 1);
        assert_eq!(to_drop(History::Within(99), &segs), 2);
        assert_eq!(to_drop(History::Within(1), &[]), 0);
    }

    #[test]
    fn recent_segments_stay_within_their_budget_and_forget_dropped_ones() {
        let seg = |n: usize| {
            Arc::new(Sealed {
                edges: vec![crate::memtable::history::Change::default(); n],
                ..Sealed::default()
            })
        };
        let per = std::mem::size_of::<crate::memtable::history::Change>();
        let mut r = Recent::default();
        r.put((0, 1), seg(10), 25 * per);
        r.put((1, 2), seg(10), 25 * per);
        assert!(r.get((0, 1)).is_some(), "both fit");
        // (0, 1) was used last: the third evicts (1, 2).
        r.put((2, 3), seg(10), 25 * per);
        assert!(r.get((1, 2)).is_none() && r.get((0, 1)).is_some());
        assert_eq!(r.bytes, 20 * per);
        r.put((3, 4), seg(30), 25 * per);
        assert!(r.get((3, 4)).is_none(), "larger than the budget: not kept");
        r.forget(&[(0, 1)]);
        assert!(r.get((0, 1)).is_none());
        assert_eq!(r.bytes, 10 * per);
    }

    #[test]
    fn points_read_as_lsns_or_times() {
        assert_eq!("42".parse::<Point>(), Ok(Point::Lsn(42)));
        assert_eq!("@1.5".parse::<Point>(), Ok(Point::Time(1_500_000_000)));
        assert_eq!(
            "1970-01-01T00:00:02Z".parse::<Point>(),
            Ok(Point::Time(2_000_000_000))
        );
        assert!("yesterday".parse::<Point>().is_err());
        assert!("-3".parse::<Point>().is_err());
    }
}
