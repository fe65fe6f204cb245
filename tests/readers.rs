//! Read-only handles beside a live writer read the log as far as the writer has made it
//! durable (FORMAT.md, "What a reader in another process may rely on"): under `sync`, every
//! batch acknowledged before the reader opened and none still in flight; asked for more
//! ([`LogReach::Written`]), every batch written.

use evograph::{Durability, Graph, GraphView, LogReach, Options};
use std::path::Path;
use std::time::{Duration, Instant};

fn edges_seen(dir: &Path, reach: LogReach) -> u64 {
    let r = Graph::open(dir, Options::new().read_only(true).log_reach(reach)).unwrap();
    let n = r.snapshot().unwrap().num_edges();
    r.close().unwrap();
    n
}

#[test]
fn a_reader_beside_a_sync_writer_holds_every_batch_acknowledged_before_it_opened() {
    let dir = tempfile::tempdir().unwrap();
    let w = Graph::open(
        dir.path(),
        Options::new().create(true).durability(Durability::Sync),
    )
    .unwrap();
    for i in 0..20u64 {
        w.insert_edges(&[(i, i + 1)]).unwrap();
        // The writer published the durable point before it acknowledged the batch: a
        // reader that left out the last group would see one edge fewer.
        assert_eq!(edges_seen(dir.path(), LogReach::Durable), i + 1);
    }
    w.close().unwrap();
}

#[test]
fn a_reader_leaves_out_batches_written_but_not_durable_unless_it_asks_for_them() {
    let dir = tempfile::tempdir().unwrap();
    // An hour between persists: a batch is written at once and durable only by a flush.
    let hour = Durability::Interval(3_600_000);
    let w = Graph::open(dir.path(), Options::new().create(true).durability(hour)).unwrap();
    w.insert_edges(&[(1, 2)]).unwrap();
    w.flush().unwrap();
    w.insert_edges(&[(3, 4), (5, 6)]).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while edges_seen(dir.path(), LogReach::Written) < 3 {
        assert!(
            Instant::now() < deadline,
            "the writer never wrote the batch"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(edges_seen(dir.path(), LogReach::Durable), 1);
    w.close().unwrap();
    // No writer: every block that reads is what the store holds.
    assert_eq!(edges_seen(dir.path(), LogReach::Durable), 3);
}

/// A read-only open checks its runs ahead, on the store's threads, while its first
/// snapshot checks the same runs: the two meet on runs half checked, and a check held
/// under a lock across its parallel work deadlocked there (a pool thread waiting in the
/// check's join took the snapshot's task for the run its own stack was checking).
#[test]
fn a_reader_whose_snapshot_meets_the_checks_begun_at_open_never_waits_forever() {
    let dir = tempfile::tempdir().unwrap();
    let w = Graph::open(dir.path(), Options::new().create(true).threads(2)).unwrap();
    // Runs of several 1 MiB checksum blocks, so each run's check is itself parallel.
    for r in 0..6u64 {
        let edges: Vec<(u64, u64)> = (0..400_000u64)
            .map(|i| (i % 50_000, (i * 7919 + r * 13) % 200_000))
            .collect();
        w.insert_edges(&edges).unwrap();
        w.flush().unwrap();
    }
    let total = w.snapshot().unwrap().num_edges();
    w.close().unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    let path = dir.path().to_path_buf();
    std::thread::spawn(move || {
        for _ in 0..40 {
            let r = Graph::open(&path, Options::new().read_only(true).threads(2)).unwrap();
            let n = r.snapshot().unwrap().num_edges();
            r.close().unwrap();
            done.send(n).unwrap();
        }
    });
    for round in 0..40 {
        match finished.recv_timeout(Duration::from_secs(60)) {
            Ok(n) => assert_eq!(n, total, "round {round}"),
            Err(e) => panic!("round {round}: no snapshot within 60 s ({e}): a deadlock"),
        }
    }
}
