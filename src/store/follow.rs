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
//! - each batch applied wakes the followers waiting for it ([`Follower::wait_beyond`]).
//!
//! A read-only handle opened with [`super::Options::follow_changes`] replays its log into a memtable
//! that records changes the same way, so that a reader in another process finds the
//! changes since its root's log start.

use super::{CommitPoint, Graph, Inner, Point};
use crate::history::net::{self, EdgeChange, VertexChange};
use crate::memtable::history::Sealed;
use crate::snapshot::Snapshot;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Bytes of flushed runs' changes kept for followers behind them even under a smaller
/// memtable budget: a follower one batch behind a store that flushes every batch keeps up.
const FOLLOWED_FLOOR: usize = 16 << 20;

/// The followers of a store and the commit each has reached (a leaf lock in `Inner`).
#[derive(Default)]
pub(super) struct Followers {
    next_id: u64,
    /// Per follower, the LSN of the last commit it reflects: changes after it are kept.
    reached: BTreeMap<u64, u64>,
}

impl Followers {
    /// The oldest commit a follower still needs changes after, if any follower is there.
    pub(super) fn oldest(&self) -> Option<u64> {
        self.reached.values().copied().min()
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
            f.reached.insert(id, w.next_lsn);
            id
        };
        if !w.mem.keeps_history() {
            inner.freeze_locked(&mut w);
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
        open_store(&self.inner)?.snapshot_held(at)
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

    /// Notes that the follower reflects the commit at `lsn`: changes up to it may go.
    pub(crate) fn reached(&self, lsn: u64) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        inner.followers.lock().unwrap().reached.insert(self.id, lsn);
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
            inner.followers.lock().unwrap().reached.remove(&self.id);
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

    /// Wakes the followers after a batch was applied; the caller holds `writer`.
    pub(super) fn wake_followers(&self) {
        if self.followed() {
            self.commit_cv.notify_all();
        }
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
        let budget = self.opts.memtable_bytes.max(FOLLOWED_FLOOR);
        while bytes > budget && !kept.is_empty() {
            bytes -= kept.remove(0).1.bytes();
        }
    }

    /// [`Follower::changes`]: `None` unless the pieces of history at hand reach back to
    /// `after` and up to `upto` without a gap.
    fn net_changes(&self, after: u64, upto: u64) -> Result<Option<NetChanges>> {
        let pieces = self.pieces()?;
        let covered = match (pieces.first(), pieces.last()) {
            (Some(first), Some(last)) => first.min_lsn <= after && last.max_lsn >= upto,
            _ => false,
        };
        if !covered {
            return Ok(None);
        }
        let loaded = self.changes_between(&pieces, after, upto)?;
        let refs: Vec<&Sealed> = loaded.iter().map(|s| &**s).collect();
        let (edges, vertices) = self.pool.install(|| net::between(&refs, after, upto));
        Ok(Some(NetChanges { edges, vertices }))
    }
}
