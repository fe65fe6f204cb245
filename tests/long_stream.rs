//! A long update stream, as the crash test's children write it (fresh edges from a few
//! thousand sources, deletes of earlier edges, vertex deletions), applied in sessions of a
//! few thousand records with a 1 MiB memtable and partitions of 16384 ids, and checked
//! against the model every few sessions. The store grows past the sizes the property
//! tests reach: several partitions, merges above level 0, a vertex deleted in one
//! partition while its in-edges lie in others.
//!
//! EVOGRAPH_LONG_STREAM_SESSIONS sets the number of sessions (default 40; a soak runs 400).

mod common;

use common::{read, update_stream, Model, Rng};
use evograph::store::Options;
use evograph::Graph;

const BATCH: usize = 512;

fn opts() -> Options {
    Options::new()
        .memtable_bytes(1 << 20)
        .threads(2)
        .partition_bits(14)
        .create(true)
}

#[test]
fn a_long_stream_over_many_sessions_matches_the_model() {
    let sessions: u64 = std::env::var("EVOGRAPH_LONG_STREAM_SESSIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x10_0057);
    let mut model = Model::new(false);
    let mut inserted = Vec::new();
    for s in 0..sessions {
        let n = 1_000 + rng.below(6_000) as usize;
        let recs = update_stream(&mut rng, s, n, &mut inserted);
        let g = Graph::open(dir.path(), opts()).unwrap();
        for b in recs.chunks(BATCH) {
            g.apply(b).unwrap();
            b.iter().for_each(|r| model.apply(r));
        }
        if s % 5 == 4 || s + 1 == sessions {
            let (vs, es) = read(&g.snapshot().unwrap());
            let missing: Vec<_> = model.edges.difference(&es).take(5).collect();
            let extra: Vec<_> = es.difference(&model.edges).take(5).collect();
            assert!(
                es == model.edges && vs == model.vertices,
                "session {s}: {} edges, the model {}; missing {missing:?}, extra {extra:?}",
                es.len(),
                model.edges.len()
            );
            assert!(g.check().unwrap().is_sound(), "session {s}: check");
        }
        g.close().unwrap();
    }
}
