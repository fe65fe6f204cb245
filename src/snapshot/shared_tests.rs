//! A snapshot's views built on first use (`crate::build_once`): a caller that comes while
//! one is built reads without it, makes no copy while streams are decided, and the next
//! caller after the build finds it.

use crate::run::Dir;
use crate::{Graph, Options, Snapshot};

/// A snapshot of three flushed runs (a layered view reads them), with room for copies.
fn three_runs(dir: &std::path::Path) -> (Graph, Snapshot) {
    let g = Graph::create(dir, Options::new().threads(2)).unwrap();
    for r in 0..3u64 {
        let edges: Vec<(u64, u64)> = (0..2_000u64)
            .map(|i| (i % 300, (i * 7 + r) % 500))
            .collect();
        g.insert_edges(&edges).unwrap();
        g.flush().unwrap();
    }
    let s = g.snapshot().unwrap().with_copy_budget(Some(1 << 30));
    (g, s)
}

#[test]
fn a_caller_while_the_index_is_built_reads_the_runs_and_the_next_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_g, s) = three_runs(dir.path());
    let built = s.runs_index.get_or_build(|| {
        assert!(s.layered().is_none(), "no layered view without its index");
        s.plan_sweeps(&[Dir::Out, Dir::In]);
        assert!(!s.runs_copied(), "no merged copy while the index is built");
        s.build_index()
    });
    assert!(built.is_some_and(Option::is_some));
    s.plan_sweeps(&[Dir::Out, Dir::In]);
    let l = s.layered().expect("the index is built");
    assert!(l.copied(), "the lists are copied once the index is there");
}

#[test]
fn no_copy_is_made_while_another_caller_decides_the_streams() {
    let dir = tempfile::tempdir().unwrap();
    let (_g, s) = three_runs(dir.path());
    s.stream.get_or_build(|| {
        assert!(s.streams_pending());
        s.plan_sweeps(&[Dir::Out, Dir::In]);
        assert!(s.layered().is_none(), "no index while streams are decided");
        assert!(!s.runs_copied(), "no merged copy while streams are decided");
        None
    });
    assert!(!s.streams_pending());
    s.plan_sweeps(&[Dir::Out, Dir::In]);
    assert!(s.layered().is_some_and(|l| l.copied()));
}
