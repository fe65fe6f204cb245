//! [`Standing`]: a maintainer on a thread of its own, stepping at every commit.

use super::{Change, Maintainer, Step, Value};
use crate::algo::kernel::{Kernel, Params};
use crate::snapshot::{Patched, Snapshot};
use crate::store::follow::Waiter;
use crate::types::VertexId;
use crate::{Error, Graph, Result};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Changes kept for [`Standing::changes_since`], at most: older steps' changes go first.
const KEPT_CHANGES: usize = 1 << 22;

/// How long the thread waits for a commit before it looks at its stop flag again.
const POLL: Duration = Duration::from_millis(50);

/// A kernel kept current on a store as batches commit, by a thread of its own; see the
/// module documentation. Dropping it stops the thread.
pub struct Standing {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    m: Mutex<Maintainer>,
    log: Mutex<Log>,
    /// Signalled with `log` at every step and when the thread ends.
    stepped: Condvar,
    stop: AtomicBool,
}

/// The steps' changes, newest last, and where they start.
struct Log {
    lsn: u64,
    /// Changes are complete from this commit on.
    since: u64,
    steps: VecDeque<(u64, Vec<Change>)>,
    kept: usize,
    recomputes: u64,
    ended: Option<Arc<Error>>,
}

/// Starts keeping `kernel` (with parameters `p`) current on `g`: the values are computed
/// before this returns, then brought forward by a thread at every commit.
pub fn maintain(g: &Graph, kernel: Kernel, p: &Params) -> Result<Standing> {
    let mut m = Maintainer::new(kernel, p)?;
    let first = m.step(g)?;
    let lsn = first.map_or(m.lsn(), |s| s.lsn);
    let waiter = m.waiter();
    let shared = Arc::new(Shared {
        m: Mutex::new(m),
        log: Mutex::new(Log {
            lsn,
            since: lsn,
            steps: VecDeque::new(),
            kept: 0,
            recomputes: 0,
            ended: None,
        }),
        stepped: Condvar::new(),
        stop: AtomicBool::new(false),
    });
    let s = shared.clone();
    let thread = std::thread::Builder::new()
        .name(format!("evograph-standing-{kernel}"))
        .spawn(move || follow(&s, &waiter))
        .map_err(|e| Error::io("spawn", "evograph-standing", e))?;
    Ok(Standing {
        shared,
        thread: Some(thread),
    })
}

/// The thread: wait for a commit, step, log the step; until stopped or the store ends.
fn follow(s: &Shared, waiter: &Waiter) {
    while !s.stop.load(Ordering::Acquire) {
        let lsn = s.log.lock().unwrap().lsn;
        let res = waiter
            .wait_beyond(lsn, POLL)
            .and_then(|reached| match reached > lsn {
                true => s.m.lock().unwrap().step_followed(None),
                false => Ok(None),
            });
        match res {
            Ok(Some(step)) => record(s, step),
            Ok(None) => {}
            Err(e) => {
                s.m.lock().unwrap().release();
                s.log.lock().unwrap().ended = Some(Arc::new(e));
                s.stepped.notify_all();
                return;
            }
        }
    }
}

/// Logs a step's changes, letting the oldest go past [`KEPT_CHANGES`].
fn record(s: &Shared, step: Step) {
    let mut log = s.log.lock().unwrap();
    log.lsn = step.lsn;
    log.recomputes += u64::from(step.recomputed.is_some());
    log.kept += step.changes.len();
    log.steps.push_back((step.lsn, step.changes));
    while log.kept > KEPT_CHANGES {
        let Some((lsn, ch)) = log.steps.pop_front() else {
            break;
        };
        log.kept -= ch.len();
        log.since = lsn;
    }
    drop(log);
    s.stepped.notify_all();
}

impl Standing {
    /// The LSN of the commit the values reflect.
    pub fn lsn(&self) -> u64 {
        self.shared.log.lock().unwrap().lsn
    }

    /// The kernel kept current.
    pub fn kernel(&self) -> Kernel {
        self.shared.m.lock().unwrap().kernel()
    }

    /// The values, by dense id (`None` where a vertex does not exist), a snapshot of the
    /// commit they reflect and its LSN, all of one step. The snapshot may cost a seal
    /// ([`Maintainer::snapshot`]); [`Standing::graph`] does not. An error if the store was
    /// closed.
    pub fn values(&self) -> Result<(Vec<Option<Value>>, Snapshot, u64)> {
        let m = self.shared.m.lock().unwrap();
        let snap = m.snapshot()?.expect("the first step ran");
        Ok((m.values(), snap, m.lsn()))
    }

    /// The graph the values are of, and its LSN: the maintainer's last snapshot with the
    /// edge changes since patched over it (a copy of the patch is made).
    pub fn graph(&self) -> (Patched, u64) {
        let m = self.shared.m.lock().unwrap();
        (m.graph().expect("the first step ran").clone(), m.lsn())
    }

    /// Waits until the values reflect the commit at `lsn` or a later one (a [`crate::store::Ticket`]'s
    /// LSN, say), at most `timeout`; whether they do. An error if the store was closed or
    /// failed before.
    pub fn wait(&self, lsn: u64, timeout: Duration) -> Result<bool> {
        let log = self.shared.log.lock().unwrap();
        let (log, _) = self
            .shared
            .stepped
            .wait_timeout_while(log, timeout, |l| l.lsn < lsn && l.ended.is_none())
            .unwrap();
        match (&log.ended, log.lsn >= lsn) {
            (_, true) => Ok(true),
            (Some(e), false) => Err(Error::Invalid(format!(
                "the standing kernel stopped at LSN {}: {e}",
                log.lsn
            ))),
            (None, false) => Ok(false),
        }
    }

    /// Every vertex whose value changed after the commit at `lsn` up to the one reflected,
    /// with its value then and now, by dense id. The changes of the last few million
    /// vertex updates are kept; a point before them is refused.
    pub fn changes_since(&self, lsn: u64) -> Result<Vec<Change>> {
        let log = self.shared.log.lock().unwrap();
        if lsn < log.since {
            return Err(Error::Invalid(format!(
                "changes since LSN {lsn} are no longer kept: they start at LSN {}",
                log.since
            )));
        }
        let mut net: BTreeMap<VertexId, Change> = BTreeMap::new();
        for (_, changes) in log.steps.iter().filter(|(at, _)| *at > lsn) {
            for c in changes {
                net.entry(c.vertex)
                    .and_modify(|n| n.new = c.new)
                    .or_insert(*c);
            }
        }
        Ok(net.into_values().filter(|c| c.old != c.new).collect())
    }

    /// Steps that recomputed because the changes they needed were gone.
    pub fn recomputes(&self) -> u64 {
        self.shared.log.lock().unwrap().recomputes
    }

    /// Stops the thread; the error that ended it early, if one did.
    pub fn stop(mut self) -> Result<()> {
        self.halt()
    }

    fn halt(&mut self) -> Result<()> {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        match &self.shared.log.lock().unwrap().ended {
            Some(e) if !matches!(&**e, Error::Invalid(m) if m == crate::store::follow::CLOSED) => {
                Err(Error::Invalid(format!("the standing kernel stopped: {e}")))
            }
            _ => Ok(()),
        }
    }
}

impl Drop for Standing {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}
