//! `Graph::size`: what a snapshot counts, without reading a list.

use super::*;
use crate::store::GraphSize;
use crate::GraphView;

/// A store of several flushed runs, tombstones across them (of self loops too), a deleted
/// vertex and updates left in the memtable.
fn several_runs(dir: &Path, undirected: bool) -> Graph {
    let opts = Options::new().undirected(Some(undirected)).threads(2);
    let g = Graph::create(dir, opts.background(false)).unwrap();
    let mut x = 0x2545_f491_u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 500, (x >> 32) % 500)
    };
    for round in 0..4 {
        let mut edges: Vec<(u64, u64)> = (0..3000).map(|_| next()).collect();
        if round == 0 {
            // Vertices no later edge names: deleted in a flushed run and in the memtable.
            edges.extend([(600, 1), (601, 2)]);
        }
        // Self loops added, taken away in a later run and added again.
        edges.extend([(7, 7), (8 + round, 8 + round)]);
        g.insert_edges(&edges).unwrap();
        g.delete_edges(&edges[..500]).unwrap();
        g.delete_edges(&[(8 + round.saturating_sub(1), 8 + round.saturating_sub(1))])
            .unwrap();
        if round == 1 {
            g.delete_edges(&[(7, 7)]).unwrap();
        }
        match round {
            1 => g.delete_vertex(600).unwrap(),
            3 => g.delete_vertex(601).unwrap(),
            _ => {}
        }
        if round < 3 {
            g.flush().unwrap();
        }
    }
    g
}

#[test]
fn size_counts_what_a_snapshot_counts() {
    for undirected in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let g = several_runs(dir.path(), undirected);
        let s = g.snapshot().unwrap();
        assert!(s.runs().len() > 2, "{} runs", s.runs().len());
        assert_eq!(
            s.live_vertices() + 2,
            s.num_vertices(),
            "two vertices deleted"
        );
        assert_eq!(
            g.size().unwrap(),
            GraphSize::of(&s),
            "undirected {undirected}"
        );
    }
}

/// Size reads no list, directed or not: a run whose lists are damaged fails a snapshot
/// with `Corrupt`, and `size` still counts from the headers what the store held.
#[test]
fn size_reads_no_list() {
    for undirected in [false, true] {
        size_of_a_damaged_store(undirected);
    }
}

fn size_of_a_damaged_store(undirected: bool) {
    let dir = tempfile::tempdir().unwrap();
    let g = several_runs(dir.path(), undirected);
    let want = g.size().unwrap();
    g.compact().unwrap();
    g.close().unwrap();
    let run = (std::fs::read_dir(dir.path()).unwrap())
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "run"))
        .expect("a compacted run");
    let mut bytes = std::fs::read(&run).unwrap();
    // The middle of the run's lists: far from its header and vertex states.
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    std::fs::write(&run, &bytes).unwrap();
    let g = Graph::open(dir.path(), Options::new().read_only(true)).unwrap();
    assert!(
        matches!(g.snapshot(), Err(Error::Corrupt(_))),
        "the damaged lists fail a snapshot"
    );
    assert_eq!(g.size().unwrap(), want);
}
