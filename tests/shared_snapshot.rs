//! One snapshot read by several threads at once, each running kernels in the same rayon
//! pool (as two Python threads do, or a server answering two requests): every kernel
//! answers as it does alone, and none waits forever.
//!
//! The hazard it watches for: the views a snapshot builds on first use (a layered view's
//! index, the lists a sweeping kernel copies, degree counts, streams) are built by
//! parallel code, and a pool thread waiting in that code's join can take another thread's
//! kernel, which would then wait for the same build below it on its own stack
//! (`Run::verify` deadlocked so). Those builds are `crate::build_once` values, which no
//! caller waits for; its unit tests make the deadlock certain for a `OnceLock`. Here it
//! was never seen with `OnceLock`s either (30 rounds of 12 kernels at once finished): the
//! test keeps the contract, and the answers of a kernel that read without a view another
//! was building, while the views change.

use evograph::algo::kernel::{self, Kernel, Params, Values};
use evograph::{Graph, Options};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// A store of several flushed runs, so its snapshots read through a layered view whose
/// index and copies are built (in parallel) by the first kernel that asks.
fn several_runs(dir: &std::path::Path) -> Graph {
    let g = Graph::open(dir, Options::new().create(true).threads(2)).unwrap();
    for r in 0..6u64 {
        let edges: Vec<(u64, u64)> = (0..150_000u64)
            .map(|i| ((i * 31 + r) % 40_000, (i * 7919 + r * 13) % 60_000))
            .collect();
        g.insert_edges(&edges).unwrap();
        g.flush().unwrap();
    }
    g
}

/// Kernels that ask for different views and the same ones: PageRank, WCC and CDLP sweep
/// copies of the lists, BFS reads the index at random, degree counts serve them all.
/// Their answers do not depend on how threads interleave (GAP's Gauss-Seidel PageRank's
/// last digits and GAP BFS's parents would).
const KERNELS: [Kernel; 4] = [Kernel::Pr, Kernel::Wcc, Kernel::Bfs, Kernel::Cdlp];

fn params(k: Kernel) -> Params {
    let mut p = Params::default();
    if k.needs_source() {
        p.source = Some(0);
    }
    p
}

/// Whether two answers agree: integers exactly, reals but for the order of a parallel sum.
fn same(a: &Values, b: &Values) -> bool {
    match (a, b) {
        (Values::Float(x), Values::Float(y)) => {
            x.len() == y.len()
                && (x.iter().zip(y)).all(|(p, q)| (p - q).abs() <= 1e-9 * p.abs().max(q.abs()))
        }
        _ => a == b,
    }
}

#[test]
fn kernels_sharing_a_snapshot_in_one_pool_never_wait_on_each_other_forever() {
    let dir = tempfile::tempdir().unwrap();
    let g = Arc::new(several_runs(dir.path()));
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap(),
    );
    let want: Vec<_> = (KERNELS.iter())
        .map(|&k| {
            let s = g.snapshot().unwrap();
            let o = pool.install(|| kernel::run(&s, k, &params(k))).unwrap();
            o.values
        })
        .collect();
    let rounds = 4;
    let (done, finished) = mpsc::channel();
    let (g2, pool2) = (g.clone(), pool.clone());
    std::thread::spawn(move || {
        for _ in 0..rounds {
            // A fresh snapshot each round: its views are built anew, by whichever kernel
            // asks first, while the others ask too.
            let s = g2.snapshot().unwrap();
            let got: Vec<_> = std::thread::scope(|scope| {
                let handles: Vec<_> = (KERNELS.iter().cycle().take(2 * KERNELS.len()))
                    .map(|&k| {
                        let (s, pool) = (s.clone(), pool2.clone());
                        scope.spawn(move || {
                            pool.install(|| kernel::run(&s, k, &params(k)))
                                .map(|o| o.values)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            if done.send(got).is_err() {
                return;
            }
        }
    });
    for round in 0..rounds {
        match finished.recv_timeout(Duration::from_secs(60)) {
            Ok(got) => {
                for ((k, got), want) in KERNELS.iter().cycle().zip(got).zip(want.iter().cycle()) {
                    let got = got.unwrap_or_else(|e| panic!("round {round}: {k}: {e}"));
                    assert!(same(&got, want), "round {round}: {k} answered otherwise");
                }
            }
            Err(e) => panic!("round {round}: no answers within 60 s ({e}): a deadlock"),
        }
    }
}
