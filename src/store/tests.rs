//! Wake-ups of threads that wait on `state_cv` for a condition kept outside `state`
//! (`shutdown`, `poisoned`). Each test holds its waiter between checking the condition and
//! waiting, sets the condition meanwhile, and fails if the waiter then sleeps through it.

use super::*;
use std::sync::mpsc;
use std::time::Duration;

/// Long enough for the other thread to set the condition and notify while the waiter is
/// held; if it were too short the test would pass without testing, never fail wrongly.
const HOLD: Duration = Duration::from_millis(50);

/// How long a woken waiter may take before the test calls it lost.
const DEADLINE: Duration = Duration::from_secs(20);

#[test]
fn close_wakes_a_flusher_that_is_between_its_check_and_its_wait() {
    let g = Graph::in_memory(Options::default()).unwrap();
    let (in_window_tx, in_window) = mpsc::channel();
    let in_window_tx = Mutex::new(in_window_tx);
    *g.inner.before_flusher_wait.lock().unwrap() = Some(Box::new(move || {
        let _ = in_window_tx.lock().unwrap().send(());
        std::thread::sleep(HOLD);
    }));
    // The flusher may have reached its wait before the hook was installed; a wake-up
    // sends it round its loop, through the hook, without setting its condition.
    g.inner.wake_state_waiters();
    in_window
        .recv_timeout(DEADLINE)
        .expect("the flusher never reached its wait");
    let (closed_tx, closed) = mpsc::channel();
    std::thread::spawn(move || {
        g.close().unwrap();
        let _ = closed_tx.send(());
    });
    closed
        .recv_timeout(DEADLINE)
        .expect("close hung: the flusher slept through shutdown");
}

/// `poison` must wake a thread that waits on `state_cv` until the handle is poisoned, as
/// `backpressure` does: it checks `poison_error` under `state`, then waits.
#[test]
fn poison_wakes_a_thread_that_is_between_its_check_and_its_wait() {
    let g = Graph::in_memory(Options {
        background: false,
        ..Options::default()
    })
    .unwrap();
    let inner = g.inner.clone();
    let (in_window_tx, in_window) = mpsc::channel();
    let (woke_tx, woke) = mpsc::channel();
    let waiter = inner.clone();
    std::thread::spawn(move || {
        let mut st = waiter.state.lock().unwrap();
        let mut first = true;
        while waiter.poison_error().is_none() {
            if std::mem::take(&mut first) {
                in_window_tx.send(()).unwrap();
                std::thread::sleep(HOLD);
            }
            st = waiter.state_cv.wait(st).unwrap();
        }
        drop(st);
        let _ = woke_tx.send(());
    });
    in_window
        .recv_timeout(DEADLINE)
        .expect("the waiter never reached its wait");
    inner.poison(&Error::Invalid("injected".into()));
    woke.recv_timeout(DEADLINE)
        .expect("a thread waiting for poison slept through it");
}
