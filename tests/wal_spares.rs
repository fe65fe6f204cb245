//! Retired WAL segments are kept as spares, within a session and across a close, and the
//! next writer overwrites them instead of allocating new files. (Power cuts while spares
//! are made and reused are in `sim.rs`, whose workload closes and reopens the store.)

mod common;

use common::dir_files;
use evograph::{Durability, Graph, GraphView, Options};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

fn opts(durability: Durability) -> Options {
    Options::new()
        // Small segments: a few hundred edges fill one.
        .wal_segment_bytes(4 << 10)
        .durability(durability)
        .threads(2)
}

/// (spares, live segments) in the store directory, by name.
fn wal_files(dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("wal-"))
        .collect();
    names.sort();
    names.into_iter().partition(|n| n.starts_with("wal-spare-"))
}

fn insert_rows(g: &Graph, rows: std::ops::Range<u64>) {
    for i in rows {
        let edges: Vec<(u64, u64)> = (0..100).map(|j| (i, 1000 + j)).collect();
        g.insert_edges(&edges).unwrap();
    }
}

/// A store of 50 rows of 100 edges, closed: about ten 4 KiB segments were written, and
/// the close kept two of them as spares.
fn closed_store_of_5000_edges() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let g = Graph::create(dir.path(), opts(Durability::Sync)).unwrap();
    insert_rows(&g, 0..50);
    g.close().unwrap();
    dir
}

fn edge_count(dir: &Path) -> u64 {
    let g = Graph::open(dir, opts(Durability::Sync)).unwrap();
    let n = g.snapshot().unwrap().num_edges();
    g.close().unwrap();
    n
}

#[test]
fn a_close_keeps_two_spares_that_the_next_writer_reuses() {
    let dir = closed_store_of_5000_edges();
    let (spares, live) = wal_files(dir.path());
    assert_eq!(spares, ["wal-spare-1.log", "wal-spare-2.log"]);
    assert!(
        live.is_empty(),
        "a clean close leaves no live segment: {live:?}"
    );

    let inode = |name: &str| std::fs::metadata(dir.path().join(name)).unwrap().ino();
    let spare_inodes = [inode("wal-spare-1.log"), inode("wal-spare-2.log")];
    let g = Graph::open(dir.path(), opts(Durability::Sync)).unwrap();
    // The log starts in a new file; the first rotation takes a spare, renamed (the same
    // file, not one deleted and made again).
    let (spares, live) = wal_files(dir.path());
    assert_eq!((spares.len(), live.len()), (2, 1), "{spares:?} {live:?}");
    assert!(!spare_inodes.contains(&inode(&live[0])));
    // Row by row up to the first rotation: how many rows fill a segment depends on the
    // store's id width.
    let mut row = 50;
    while wal_files(dir.path()).1.len() < 2 {
        insert_rows(&g, row..row + 1);
        row += 1;
        assert!(row < 60, "no rotation after {} rows", row - 50);
    }
    let (spares, live) = wal_files(dir.path());
    assert_eq!((spares.len(), live.len()), (1, 2), "{spares:?} {live:?}");
    assert!(spare_inodes.contains(&inode(&live[1])), "{live:?}");
    insert_rows(&g, row..100);
    g.close().unwrap();
    let (spares, live) = wal_files(dir.path());
    assert_eq!(spares.len(), 2);
    assert!(live.is_empty());
    assert_eq!(edge_count(dir.path()), 10_000);
}

#[test]
fn a_writer_that_writes_nothing_changes_no_file() {
    // With both spare slots taken, and with one free (a store whose log never rotated).
    let small = tempfile::tempdir().unwrap();
    let g = Graph::create(small.path(), opts(Durability::Sync)).unwrap();
    insert_rows(&g, 0..1);
    g.close().unwrap();
    assert_eq!(wal_files(small.path()).0.len(), 1);
    for dir in [closed_store_of_5000_edges(), small] {
        let before = dir_files(dir.path());
        Graph::open(dir.path(), opts(Durability::Sync))
            .unwrap()
            .close()
            .unwrap();
        assert!(
            dir_files(dir.path()) == before,
            "an open and close changed the store's files"
        );
    }
}

#[test]
fn a_writer_without_a_log_removes_the_spares() {
    let dir = closed_store_of_5000_edges();
    assert_eq!(wal_files(dir.path()).0.len(), 2);

    let g = Graph::open(dir.path(), opts(Durability::None)).unwrap();
    assert_eq!(wal_files(dir.path()), (vec![], vec![]));
    insert_rows(&g, 50..60);
    g.close().unwrap();
    assert_eq!(edge_count(dir.path()), 6_000);
}

#[test]
fn a_reader_leaves_the_spares_alone() {
    let dir = closed_store_of_5000_edges();
    let before = wal_files(dir.path());
    let r = Graph::open(dir.path(), Options::new().read_only(true)).unwrap();
    assert_eq!(r.snapshot().unwrap().num_edges(), 5_000);
    drop(r);
    assert_eq!(wal_files(dir.path()), before);
}

#[test]
fn a_small_closed_store_holds_no_segment_sized_hole() {
    // Default 64 MiB segments: the one a small session wrote into becomes a spare cut to
    // the pages written, so copying the store (tar, rsync, std::fs::copy) copies kilobytes.
    let dir = tempfile::tempdir().unwrap();
    for session in 0..3u64 {
        let opts = Options::new().durability(Durability::Sync).create(true);
        let g = Graph::open(dir.path(), opts).unwrap();
        insert_rows(&g, session * 10..session * 10 + 10);
        g.close().unwrap();
    }
    let (spares, _) = wal_files(dir.path());
    assert_eq!(spares.len(), 2, "{spares:?}");
    let apparent: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(
        apparent < 4 << 20,
        "a closed store of 3,000 edges has files of {apparent} bytes"
    );
    assert_eq!(edge_count(dir.path()), 3_000);
}
