//! Following commits: what a result kept current as batches commit reads (the `standing`
//! layer above), without this layer knowing any kernel.
//!
//! A [`Follower`] registers with the store. While any is registered:
//! - memtables record their commits' effective changes, as in a store keeping history
//!   (`crate::memtable::history`), though no segment is written unless the store keeps
//!   history: the net changes between the follower's last commit and the newest are at
//!   hand ([`Follower::changes`]);
//! - the changes of a run flushed meanwhile stay in DRAM (`State::followed_history`) until
//!   every follower is past them, up to the memtable budget. A follower further behind
//!   than that finds its changes gone (`None`) and starts over from a snapshot;
//! - each batch applied wakes the followers waiting for it ([`Waiter::wait_beyond`]);
//! - each batch applied is kept as it was applied, in dense ids ([`Applied`]), until every
//!   follower is past it, up to 16 MiB: a follower that reads them
//!   ([`Follower::applied_since`]) brings itself forward without a seal or a snapshot.
//!
//! A read-only handle opened with [`super::Options::follow_changes`] replays its log into a memtable
//! that records changes the same way, so that a reader in another process finds the
//! changes since its root's log start.

use super::versions::PointShape;
use super::{CommitPoint, Graph, Inner, Point};
use crate::batch::{id_of, is_del, DenseBatch, Section, DEL};
use crate::history::net::{self, EdgeChange, VertexChange};
use crate::memtable::history::Sealed;
use crate::memtable::Memtable;
use crate::snapshot::{Patched, Snapshot};
use crate::types::VertexId;
use crate::GraphView;
use crate::{Error, Result};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Bytes of flushed runs' changes kept for followers behind them even under a smaller
/// memtable budget: a follower one batch behind a store that flushes every batch keeps up.
const FOLLOWED_FLOOR: usize = 16 << 20;

/// Bytes of applied batches kept for followers (about 2 M edge updates): a follower reads
/// them only to patch a step of at most some thousands of updates, and one further behind
/// takes a snapshot and the changes instead, so more would be DRAM for nothing.
const APPLIED_BUDGET: usize = 16 << 20;

/// The followers of a store and the commit each has reached (a leaf lock in `Inner`).
#[derive(Default)]
pub(super) struct Followers {
    next_id: u64,
    /// Per follower, the LSN of the last commit it reflects: changes after it are kept.
    reached: BTreeMap<u64, u64>,
    /// The batches applied since `applied_from`, every one up to `applied_to`.
    applied: VecDeque<Arc<Applied>>,
    applied_from: u64,
    applied_to: u64,
    applied_bytes: usize,
}

impl Followers {
    /// The oldest commit a follower still needs changes after, if any follower is there.
    pub(super) fn oldest(&self) -> Option<u64> {
        self.reached.values().copied().min()
    }

    /// Keeps a batch just applied (the queue restarts where it is not contiguous), then
    /// lets the oldest go while they take more than `budget` bytes.
    fn push(&mut self, a: Applied, budget: usize) {
        if self.applied_to != a.first {
            self.applied.clear();
            self.applied_bytes = 0;
            self.applied_from = a.first;
        }
        self.applied_to = a.end;
        self.applied_bytes += a.bytes();
        self.applied.push_back(Arc::new(a));
        self.trim_applied(budget);
    }

    /// Lets go of the batches every follower is past, then of the oldest while they take
    /// more than `budget` bytes.
    fn trim_applied(&mut self, budget: usize) {
        let oldest = self.oldest();
        while let Some(a) = self.applied.front() {
            let passed = oldest.is_none_or(|lsn| a.end <= lsn);
            if !passed && self.applied_bytes <= budget {
                break;
            }
            self.applied_bytes -= a.bytes();
            self.applied_from = a.end;
            self.applied.pop_front();
        }
    }
}

/// A batch as the writer applied it, in dense ids: what a follower reads to bring itself
/// forward by the batches themselves ([`Follower::applied_since`]).
pub(crate) struct Applied {
    /// The LSN of its first record.
    pub first: u64,
    /// The LSN after its last record: the commit it made.
    pub end: u64,
    /// Dense ids handed out once it had committed.
    pub vertices: u64,
    /// The external ids of the dense ids it handed out (the last ones of `vertices`).
    pub new_ids: Vec<u64>,
    sections: Vec<Section>,
}

impl Applied {
    fn bytes(&self) -> usize {
        let per = |s: &Section| match s {
            Section::Edges(e, w) => e.len() * 8 + w.len() * 8,
            Section::Vertices(v) => v.len() * 4,
        };
        std::mem::size_of::<Applied>()
            + self.new_ids.len() * 8
            + self.sections.iter().map(per).sum::<usize>()
    }

    /// How many edge updates it holds.
    pub(crate) fn edge_updates(&self) -> usize {
        let count = |s: &Section| match s {
            Section::Edges(e, _) => e.len(),
            Section::Vertices(_) => 0,
        };
        self.sections.iter().map(count).sum()
    }

    /// Calls `f` on each vertex update in order: the vertex, and whether it exists after.
    pub(crate) fn for_each_vertex(&self, mut f: impl FnMut(VertexId, bool)) {
        for s in &self.sections {
            if let Section::Vertices(vs) = s {
                vs.iter().for_each(|&v| f(id_of(v), !is_del(v)));
            }
        }
    }

    /// Calls `f` on each edge update in order: source, destination, and the weight it
    /// gets (`None` for a delete; 1 in unweighted stores).
    pub(crate) fn for_each_edge(&self, mut f: impl FnMut(VertexId, VertexId, Option<f64>)) {
        for s in &self.sections {
            if let Section::Edges(e, w) = s {
                for (i, &[u, v]) in e.iter().enumerate() {
                    let state = match is_del(v) {
                        true => None,
                        false => Some(w.get(i).copied().unwrap_or(1.0)),
                    };
                    f(u, id_of(v), state);
                }
            }
        }
    }
}

/// The net changes between two commits in dense ids (see [`net::between`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct NetChanges {
    /// Edges whose state differs, by (source, destination).
    pub edges: Vec<EdgeChange>,
    /// Vertices updated, by id, with their states at both ends.
    pub vertices: Vec<VertexChange>,
}

/// A later commit as [`Follower::ahead`] finds it.
pub(crate) struct Ahead {
    /// The commit.
    pub commit: CommitPoint,
    /// The dense ids handed out after the earlier commit, up to this one.
    pub born: std::ops::Range<u64>,
    /// The net changes from the earlier commit, if it comes later, they are all held and
    /// they were asked for ([`Net`]).
    pub net: Option<NetChanges>,
}

/// Which net changes [`Follower::ahead`] reads.
#[derive(Clone, Copy)]
pub(crate) enum Net {
    /// Those of at most this many records: more are not worth reading (about 70 ns a
    /// record) for a caller that would recompute rather than step by them.
    AtMost(u64),
}

/// A registration with a store for following its commits; see the module documentation.
/// It does not hold the store open: once its [`Graph`] is closed, every call is an error.
pub(crate) struct Follower {
    inner: Weak<Inner>,
    id: u64,
}

/// The store behind a weak reference, unless it was closed.
fn open_store(inner: &Weak<Inner>) -> Result<Arc<Inner>> {
    match inner.upgrade() {
        Some(i) if !i.shutdown.load(Ordering::Acquire) => Ok(i),
        _ => Err(Error::Invalid(CLOSED.into())),
    }
}

impl Graph {
    /// Registers a follower at the newest commit applied. The active memtable is frozen
    /// first if it does not record changes, so that every commit after this one is kept.
    pub(crate) fn follow(&self) -> Result<Follower> {
        let inner = &self.inner;
        inner.check_poisoned()?;
        let mut w = inner.writer.lock().unwrap();
        let id = {
            let mut f = inner.followers.lock().unwrap();
            let id = f.next_id;
            f.next_id += 1;
            if f.reached.is_empty() {
                f.applied.clear();
                f.applied_bytes = 0;
                (f.applied_from, f.applied_to) = (w.next_lsn, w.next_lsn);
            }
            f.reached.insert(id, w.next_lsn);
            id
        };
        if !w.mem.keeps_history() {
            inner.freeze_locked(&mut w, super::write::Freeze::ForReading);
        }
        Ok(Follower {
            inner: Arc::downgrade(inner),
            id,
        })
    }
}

impl Follower {
    /// A snapshot of everything applied so far, and the LSN it reaches (the newest commit).
    pub(crate) fn snapshot(&self) -> Result<(Snapshot, u64)> {
        let inner = open_store(&self.inner)?;
        let parts = inner.snapshot_parts()?;
        let lsn = parts.lsn;
        Ok((parts.build(&inner), lsn))
    }

    /// The graph right after the commit `at` names and that commit, if the changes since
    /// are held; `None` if they are not (or no commit held comes at or before `at`).
    pub(crate) fn snapshot_upto(&self, at: Point) -> Result<Option<(Snapshot, CommitPoint)>> {
        // Masked where the versions allow: a rolling step at Kron20 waited 0.15-0.45 s for
        // the plain runs' filtered copy of a point where the mask takes 20 ms.
        open_store(&self.inner)?.snapshot_held(at, PointShape::Masked)
    }

    /// The commit `at` names (the last at or before it) among those whose changes are
    /// held, the dense ids handed out after the commit at `since` up to that one, and the
    /// net changes between the two when it comes later (`None` if they are not all held);
    /// `None` if no commit held comes at or before `at`, or none held is at `since`. One
    /// look at the pieces of history serves all three.
    pub(crate) fn ahead(&self, at: Point, since: u64, read: Net) -> Result<Option<Ahead>> {
        let inner = open_store(&self.inner)?;
        let pieces = inner.pieces()?;
        let upto = pieces.last().map_or(0, |p| p.max_lsn);
        let commits = Inner::commits_of(&pieces, upto);
        let found = match at {
            Point::Lsn(k) => commits.partition_point(|c| c.lsn <= k),
            Point::Time(t) => commits.partition_point(|c| c.unix_nanos <= t),
        };
        let (Some(i), true) = (found.checked_sub(1), commits.iter().any(|c| c.lsn == since)) else {
            return Ok(None);
        };
        let ids = |lsn: u64| super::history::vertices_at(&pieces, lsn);
        let commit = commits[i];
        let Net::AtMost(most) = read;
        let net = match commit.lsn > since && commit.lsn - since <= most {
            true => inner.net_changes_in(&pieces, since, commit.lsn)?,
            false => None,
        };
        Ok(Some(Ahead {
            commit,
            born: ids(since)..ids(commit.lsn),
            net,
        }))
    }

    /// The external ids of the dense ids in `ids` (all handed out already).
    pub(crate) fn external_ids(&self, ids: std::ops::Range<usize>) -> Result<Vec<u64>> {
        let inner = open_store(&self.inner)?;
        let dict = inner.dict.read().unwrap();
        Ok(dict.externals()[ids].to_vec())
    }

    /// Whether the store keys vertices by name.
    pub(crate) fn named(&self) -> Result<bool> {
        Ok(open_store(&self.inner)?.keys.is_some())
    }

    /// The newest commit.
    pub(crate) fn last_commit(&self) -> Result<Option<CommitPoint>> {
        Ok(open_store(&self.inner)?.writer.lock().unwrap().last_commit)
    }

    /// The net changes of the commits after `after` up to `upto`, or `None` when the store
    /// no longer holds (or never held) all of them.
    pub(crate) fn changes(&self, after: u64, upto: u64) -> Result<Option<NetChanges>> {
        if after >= upto {
            return Ok(Some(NetChanges::default()));
        }
        open_store(&self.inner)?.net_changes(after, upto)
    }

    /// The store's memtable budget, in bytes: what the user gave the store's DRAM for
    /// changes, which a follower's own (a patch) stays within too.
    pub(crate) fn memtable_budget(&self) -> Result<usize> {
        Ok(open_store(&self.inner)?.opts.memtable_bytes)
    }

    /// The batches applied after the commit at `after`, in order, and the LSN the last
    /// one reaches (`after` itself when none was applied since); `None` when they are not
    /// all kept (the follower fell behind by more than the budget, or follows a read-only
    /// handle, which applies none).
    pub(crate) fn applied_since(&self, after: u64) -> Result<Option<(Vec<Arc<Applied>>, u64)>> {
        let inner = open_store(&self.inner)?;
        let f = inner.followers.lock().unwrap();
        if !(f.applied_from..=f.applied_to).contains(&after) {
            return Ok(None);
        }
        let skip = f.applied.partition_point(|a| a.end <= after);
        Ok(Some((
            f.applied.range(skip..).cloned().collect(),
            f.applied_to,
        )))
    }

    /// The snapshot `g` stands for: its snapshot's runs and one DRAM run sealed from its
    /// patch (resolved against them, as any seal is), its added vertices with their ids,
    /// and its vertices deleted or brought back.
    /// Costs a seal of the patch: for whoever needs a [`Snapshot`] of a patched graph.
    /// `base_lsn` is the commit of `g`'s base snapshot: a base read through a point's mask
    /// is taken again as plain runs of that commit, since a patch resolved against the
    /// masked run would miss the entries the mask leaves out.
    pub(crate) fn seal_patch(&self, g: &Patched, base_lsn: u64) -> Result<Snapshot> {
        if !g.is_patched() {
            return Ok(g.base().clone());
        }
        let inner = open_store(&self.inner)?;
        let plain;
        let base = match g.base().point() {
            None => g.base(),
            Some(_) => {
                let at = Point::Lsn(base_lsn);
                plain = (inner.snapshot_held(at, PointShape::Runs)?)
                    .ok_or_else(|| {
                        Error::Invalid(format!("the store no longer holds commit {at}"))
                    })?
                    .0;
                &plain
            }
        };
        assert!(base.point().is_none(), "a patch is sealed over plain runs");
        let n = g.num_vertices();
        let mut m = Memtable::new(inner.undirected, inner.weighted, 0, n as VertexId);
        let edges = g.patched_edges();
        let ups: Vec<[VertexId; 2]> = (edges.iter())
            .map(|&(u, v, s)| [u, if s.is_some() { v } else { v | DEL }])
            .collect();
        let weights: Vec<f64> = match inner.weighted {
            true => edges.iter().map(|e| e.2.unwrap_or(0.0)).collect(),
            false => Vec::new(),
        };
        inner.pool.install(|| m.apply_edges(&ups, &weights));
        m.max_lsn = 1;
        let id = inner.next_run_id.fetch_add(1, Ordering::AcqRel);
        let run = inner.pool.install(|| m.seal(&base.runs, id));
        let mut runs = base.runs.to_vec();
        runs.push(Arc::new(run));
        let mut externals = base.external_ids().to_vec();
        externals.extend_from_slice(g.added_vertices());
        let mut deleted = (*base.deleted).clone();
        for (v, exists) in g.vertex_marks() {
            crate::types::bits::assign(&mut deleted, v, !exists);
        }
        let parts = super::write::SnapshotParts {
            runs,
            deleted: Arc::new(deleted),
            n,
            externals: externals.into(),
            names: base.names().cloned(),
            lsn: 0,
            point: None,
        };
        Ok(parts.build(&inner))
    }

    /// Notes that the follower reflects the commit at `lsn`: changes up to it may go.
    pub(crate) fn reached(&self, lsn: u64) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        {
            let mut f = inner.followers.lock().unwrap();
            f.reached.insert(self.id, lsn);
            f.trim_applied(APPLIED_BUDGET);
        }
        inner.trim_followed_history();
    }

    /// Whether this follows the store `g` is a handle on (the same handle, not a reopen).
    pub(crate) fn is_of(&self, g: &Graph) -> bool {
        std::ptr::eq(self.inner.as_ptr(), Arc::as_ptr(&g.inner))
    }

    /// Something to wait for commits with, apart from the follower.
    pub(crate) fn waiter(&self) -> Waiter {
        Waiter {
            inner: self.inner.clone(),
        }
    }
}

/// What [`Waiter::wait_beyond`] says once the store is closed.
pub(crate) const CLOSED: &str = "the store was closed";

/// Waits for a store's commits ([`Follower::waiter`]); it does not hold the store open.
pub(crate) struct Waiter {
    inner: Weak<Inner>,
}

impl Waiter {
    /// Waits until a batch beyond `lsn` is applied, at most `timeout`; returns the LSN the
    /// store has reached. An error once the store is closed or poisoned.
    pub(crate) fn wait_beyond(&self, lsn: u64, timeout: Duration) -> Result<u64> {
        let inner = &open_store(&self.inner)?;
        let _inside = Inside::new(&inner.followers_waiting);
        let w = inner.writer.lock().unwrap();
        let (w, _) = inner
            .commit_cv
            .wait_timeout_while(w, timeout, |w| {
                w.next_lsn <= lsn && !inner.shutdown.load(Ordering::Acquire)
            })
            .unwrap();
        let reached = w.next_lsn;
        drop(w);
        if inner.shutdown.load(Ordering::Acquire) {
            return Err(Error::Invalid(CLOSED.into()));
        }
        inner.check_poisoned()?;
        Ok(reached)
    }
}

/// Counts a waiter in `Inner::followers_waiting` while it holds the store.
struct Inside<'a>(&'a AtomicUsize);

impl<'a> Inside<'a> {
    fn new(n: &'a AtomicUsize) -> Inside<'a> {
        n.fetch_add(1, Ordering::AcqRel);
        Inside(n)
    }
}

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.upgrade() {
            {
                let mut f = inner.followers.lock().unwrap();
                f.reached.remove(&self.id);
                f.trim_applied(APPLIED_BUDGET);
            }
            inner.trim_followed_history();
        }
    }
}

impl Inner {
    /// At shutdown, after waking the followers: waits (briefly) until none still holds
    /// the store in a wait, so that it is released when `close` returns.
    pub(super) fn let_followers_go(&self) {
        let until = std::time::Instant::now() + Duration::from_secs(1);
        while self.followers_waiting.load(Ordering::Acquire) > 0
            && std::time::Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Whether anyone follows this store's commits.
    pub(super) fn followed(&self) -> bool {
        !self.followers.lock().unwrap().reached.is_empty()
    }

    /// Bytes of changes kept for followers behind them.
    fn followed_budget(&self) -> usize {
        self.opts.memtable_bytes.max(FOLLOWED_FLOOR)
    }

    /// After a batch was applied (the caller holds `writer`): keeps it for the followers,
    /// if any, and wakes them.
    pub(super) fn batch_applied(&self, first: u64, end: u64, vertices: u64, batch: &DenseBatch) {
        let mut f = self.followers.lock().unwrap();
        if f.reached.is_empty() {
            return;
        }
        let a = Applied {
            first,
            end,
            vertices,
            new_ids: batch.new_ids.clone(),
            sections: batch.sections.clone(),
        };
        f.push(a, APPLIED_BUDGET);
        drop(f);
        self.commit_cv.notify_all();
    }

    /// Keeps a flushed run's changes for the followers still behind it (instead of letting
    /// them go with the run's DRAM copy); the caller holds `state`.
    pub(super) fn keep_for_followers(
        &self,
        st: &mut super::State,
        range: (u64, u64),
        changes: Arc<Sealed>,
    ) {
        let oldest = self.followers.lock().unwrap().oldest();
        if oldest.is_some_and(|lsn| lsn < range.1) {
            st.followed_history.push((range, changes));
        }
    }

    /// Lets go of kept changes every follower is past, then of the oldest while they
    /// exceed the memtable budget or [`FOLLOWED_FLOOR`], whichever is more (a follower
    /// that far behind starts over).
    pub(super) fn trim_followed_history(&self) {
        let oldest = self.followers.lock().unwrap().oldest();
        let mut st = self.state.lock().unwrap();
        let kept = &mut st.followed_history;
        kept.retain(|(lsns, _)| oldest.is_some_and(|lsn| lsn < lsns.1));
        let mut bytes: usize = kept.iter().map(|(_, s)| s.bytes()).sum();
        let budget = self.followed_budget();
        while bytes > budget && !kept.is_empty() {
            bytes -= kept.remove(0).1.bytes();
        }
    }

    /// [`Follower::changes`]: `None` unless the pieces of history at hand reach back to
    /// `after` and up to `upto` without a gap.
    fn net_changes(&self, after: u64, upto: u64) -> Result<Option<NetChanges>> {
        self.net_changes_in(&self.pieces()?, after, upto)
    }

    /// [`Inner::net_changes`] among `pieces`.
    fn net_changes_in(
        &self,
        pieces: &[super::history::Piece],
        after: u64,
        upto: u64,
    ) -> Result<Option<NetChanges>> {
        let covered = match (pieces.first(), pieces.last()) {
            (Some(first), Some(last)) => first.min_lsn <= after && last.max_lsn >= upto,
            _ => false,
        };
        if !covered {
            return Ok(None);
        }
        let loaded = self.changes_between(pieces, after, upto)?;
        let refs: Vec<&Sealed> = loaded.iter().map(|s| &**s).collect();
        let (edges, vertices) = self.pool.install(|| net::between(&refs, after, upto));
        Ok(Some(NetChanges { edges, vertices }))
    }
}
