//! A value built once, on first use, by parallel code, that no caller ever waits for.
//!
//! A snapshot builds its views (a layered view's index, the lists a sweeping kernel copies,
//! streams, degree counts) on first use, with rayon. A `OnceLock` would make a second
//! caller wait for the first one's build, and in a rayon pool that wait can be forever: a
//! pool thread waiting in a join inside the build takes other work, an injected job first
//! among it (`rayon-core`'s `find_work`), so another kernel on the same snapshot can run
//! *on the builder's own stack* and wait for the build below it (a reentrant
//! `get_or_init`: std's deadlocks); or it runs on the thread that stole part of the build,
//! which then never finishes that part. Nothing above the pool can rule that out: two
//! Python threads, or a server answering two requests, install kernels into one pool.
//!
//! So a caller that finds a build under way does not wait: [`BuildOnce::get_or_build`]
//! returns `None` and the caller reads without the value (a copy or a stream is only a
//! faster way to read the same lists) or builds one of its own (a count). Only the caller
//! that claimed the build stores a value; a build that panics gives its claim back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// A value built by the first caller that asks for it; see the module doc.
pub(crate) struct BuildOnce<T> {
    value: OnceLock<T>,
    /// Set by the caller building the value; reset if its build unwinds.
    claimed: AtomicBool,
}

impl<T> Default for BuildOnce<T> {
    fn default() -> Self {
        BuildOnce {
            value: OnceLock::new(),
            claimed: AtomicBool::new(false),
        }
    }
}

/// A clone holds the value if it is built, and no claim: a build under way stays the
/// original's.
impl<T: Clone> Clone for BuildOnce<T> {
    fn clone(&self) -> Self {
        let c = BuildOnce::default();
        if let Some(v) = self.value.get() {
            let _ = c.value.set(v.clone());
        }
        c
    }
}

impl<T> BuildOnce<T> {
    /// The value, if built.
    #[inline]
    pub(crate) fn get(&self) -> Option<&T> {
        self.value.get()
    }

    /// Whether a caller is building the value now.
    pub(crate) fn building(&self) -> bool {
        self.value.get().is_none() && self.claimed.load(Ordering::Acquire)
    }

    /// The value: built, or built now by `build` on this thread; `None` when another
    /// caller's build is under way (on another thread, or further down this one's stack).
    pub(crate) fn get_or_build(&self, build: impl FnOnce() -> T) -> Option<&T> {
        if let Some(v) = self.value.get() {
            return Some(v);
        }
        if self.claimed.swap(true, Ordering::AcqRel) {
            return self.value.get();
        }
        let claim = Claim(&self.claimed);
        let v = build();
        std::mem::forget(claim);
        // Only the claimant sets the value, so this is the first set.
        let stored = self.value.set(v).is_ok();
        debug_assert!(
            stored,
            "a BuildOnce value set by a caller without the claim"
        );
        self.value.get()
    }
}

/// Gives a claim back if the build holding it unwinds, so a later caller builds instead
/// of reading without the value for the snapshot's life.
struct Claim<'a>(&'a AtomicBool);

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    #[test]
    fn the_first_caller_builds_and_later_ones_share_it() {
        let c = BuildOnce::default();
        assert_eq!(c.get(), None);
        assert_eq!(c.get_or_build(|| 7), Some(&7));
        assert_eq!(c.get_or_build(|| unreachable!("built already")), Some(&7));
        assert_eq!(c.get(), Some(&7));
    }

    #[test]
    fn a_caller_inside_the_build_does_not_wait_for_it() {
        let c = BuildOnce::default();
        let inner = c.get_or_build(|| {
            assert_eq!(c.get_or_build(|| unreachable!("claimed")), None);
            1
        });
        assert_eq!(inner, Some(&1));
    }

    #[test]
    fn a_build_that_panics_gives_its_claim_back() {
        let c = BuildOnce::<u32>::default();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            c.get_or_build(|| panic!("the build failed"))
        }));
        assert!(r.is_err());
        assert_eq!(c.get(), None);
        assert_eq!(c.get_or_build(|| 3), Some(&3));
    }

    /// The deadlock a `OnceLock` has, made certain: a one-thread pool's only thread,
    /// building, yields to the pool (as a join waiting for a stolen half does) and runs
    /// another caller's job, which asks for the same value on the builder's own stack.
    /// With `OnceLock::get_or_init` in place of `get_or_build` the second job never returns.
    #[test]
    fn a_job_the_builder_runs_while_it_yields_reads_without_the_value() {
        let pool = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap(),
        );
        let cell = Arc::new(BuildOnce::<u64>::default());
        let (started, start) = mpsc::channel();
        let (done, finished) = mpsc::channel();
        let (p, c, d) = (pool.clone(), cell.clone(), done.clone());
        std::thread::spawn(move || {
            let got = p.install(|| {
                *c.get_or_build(|| {
                    started.send(()).unwrap();
                    // Runs the other caller's job here, once it is injected.
                    while rayon::yield_now() != Some(rayon::Yield::Executed) {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    7
                })
                .unwrap()
            });
            d.send(("builder", Some(got))).unwrap();
        });
        start.recv_timeout(Duration::from_secs(10)).unwrap();
        let (p, c) = (pool.clone(), cell.clone());
        std::thread::spawn(move || {
            let got = p.install(|| c.get_or_build(|| unreachable!("claimed")).copied());
            done.send(("second", got)).unwrap();
        });
        let mut answers: Vec<_> = (0..2)
            .map(|_| {
                finished
                    .recv_timeout(Duration::from_secs(20))
                    .expect("a deadlock")
            })
            .collect();
        answers.sort();
        assert_eq!(answers, [("builder", Some(7)), ("second", None)]);
        assert_eq!(cell.get(), Some(&7));
    }
}
