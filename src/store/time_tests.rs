//! Commit times: every batch commits at a time that is durable with it and never goes
//! backwards, whether the store recovers it from the log, from a run or through a reader.

use super::*;
use crate::snapshot::GraphView;
use crate::time::parse;

fn t(text: &str) -> i64 {
    parse(text).unwrap()
}

fn edges(g: &Graph) -> u64 {
    g.snapshot().unwrap().num_edges()
}

#[test]
fn times_are_kept_across_the_log_a_flush_and_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options::new().memtable_bytes(64 << 20);
    let g = Graph::create(dir.path(), opts()).unwrap();
    assert_eq!(g.last_commit(), None, "a new store has no commit");
    let t1 = t("2001-01-03T00:00:00Z");
    let tk = g
        .submit_at(&[Record::Insert(1, 2), Record::Insert(2, 3)], t1)
        .unwrap();
    g.wait(tk).unwrap();
    let want = CommitPoint {
        lsn: tk.lsn(),
        unix_nanos: t1,
    };
    assert_eq!(g.last_commit(), Some(want));

    // Earlier: refused, nothing stored. Equal: a commit of its own.
    let e = g.submit_at(&[Record::Insert(5, 6)], t1 - 1).unwrap_err();
    assert!(
        matches!(&e, Error::Invalid(m) if m.contains("never go backwards") && m.contains("2001-01-03T00:00:00Z")),
        "{e}"
    );
    assert_eq!(edges(&g), 2);
    let tk = g.submit_at(&[Record::Delete(1, 2)], t1).unwrap();
    g.wait(tk).unwrap();
    assert_eq!(g.last_commit().unwrap().lsn, 3);

    // A reader beside the writer reads the time back from the log.
    let r = Graph::open(dir.path(), Options::new().read_only(true)).unwrap();
    assert_eq!(r.last_commit(), g.last_commit());
    drop(r);

    // After a flush the log is recycled: the run's header keeps the time.
    g.flush().unwrap();
    g.close().unwrap();
    let g = Graph::open(dir.path(), opts()).unwrap();
    assert_eq!(g.wal_bytes_replayed(), 0, "everything was in runs");
    assert_eq!(
        g.last_commit(),
        Some(CommitPoint {
            lsn: 3,
            unix_nanos: t1
        })
    );
    assert!(g.submit_at(&[Record::Insert(7, 8)], t1 - 1).is_err());

    // The wall clock never takes a commit before the last one either.
    let future = t("2200-01-01T00:00:00Z");
    g.apply(&[Record::Insert(7, 8)]).unwrap();
    assert!(g.last_commit().unwrap().unix_nanos < future);
    let tk = g.submit_at(&[Record::Insert(8, 9)], future).unwrap();
    g.wait(tk).unwrap();
    g.apply(&[Record::Insert(9, 10)]).unwrap();
    assert_eq!(g.last_commit().unwrap().unix_nanos, future);
    // Merged runs keep the newest time.
    g.compact().unwrap();
    g.close().unwrap();
    let g = Graph::open(dir.path(), opts()).unwrap();
    assert_eq!(
        g.last_commit(),
        Some(CommitPoint {
            lsn: 6,
            unix_nanos: future
        })
    );
    assert_eq!(edges(&g), 4);
}
