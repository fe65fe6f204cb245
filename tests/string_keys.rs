//! Stores keyed by vertex names: interning, persistence across reopen, the batch path a
//! parser of named input takes, the guards between the two key kinds, and damage to
//! `KEYS` caught at open.

mod common;

use common::{name_of, named, read, Model};
use evograph::{Error, Graph, GraphView, Key, KeyKind, Options, Record};
use std::path::Path;

fn string_opts() -> Options {
    Options::new().keys(Some(KeyKind::String)).threads(2)
}

fn create(dir: &Path) -> Graph {
    Graph::create(dir, string_opts()).unwrap()
}

fn reopen(dir: &Path) -> evograph::Result<Graph> {
    Graph::open(dir, Options::new().threads(2))
}

#[test]
fn names_survive_reopen_and_key_every_output() {
    let d = tempfile::tempdir().unwrap();
    let g = create(d.path());
    assert_eq!(g.key_kind(), KeyKind::String);
    g.insert_named_edges(&[
        ("libc6", "gcc-14-base"),
        ("python3", "libc6"),
        ("名前", "libc6"),
    ])
    .unwrap();
    g.flush().unwrap();
    // Some edges only in the WAL at reopen.
    g.insert_named_edges(&[("curl", "libc6"), ("curl", "python3")])
        .unwrap();
    drop(g);
    let g = reopen(d.path()).unwrap();
    assert_eq!(g.key_kind(), KeyKind::String);
    let s = g.snapshot().unwrap();
    let mut edges: Vec<(String, String)> = Vec::new();
    for v in 0..s.num_vertices() as evograph::VertexId {
        s.for_each_out(v, |w| {
            edges.push((s.key(v).to_string(), s.key(w).to_string()))
        });
    }
    edges.sort();
    let want: Vec<(String, String)> = [
        ("curl", "libc6"),
        ("curl", "python3"),
        ("libc6", "gcc-14-base"),
        ("python3", "libc6"),
        ("名前", "libc6"),
    ]
    .iter()
    .map(|&(a, b)| (a.into(), b.into()))
    .collect();
    assert_eq!(edges, want);
    let v = g.dense_id_of("python3").unwrap().unwrap();
    assert_eq!(s.key(v), Key::Name("python3"));
    assert_eq!(g.dense_id_of("nope").unwrap(), None);
    // Numbers follow first appearance, and stay.
    assert_eq!(g.key_id("libc6").unwrap(), Some(0));
    assert_eq!(g.intern(["curl", "new"]).unwrap(), vec![4, 5]);
    g.close().unwrap();
}

#[test]
fn named_batches_match_the_model_and_unknown_deletes_are_dropped() {
    let d = tempfile::tempdir().unwrap();
    let g = create(d.path());
    let mut m = Model::new(false);
    let mut rng = common::Rng(7);
    for round in 0..40 {
        let recs: Vec<Record> = (0..200)
            .map(|_| {
                let (a, b) = (rng.below(300), rng.below(300));
                match rng.below(10) {
                    0 => Record::Delete(a, b),
                    1 => Record::DeleteVertex(a + 1000), // never inserted: dropped
                    2 => Record::InsertVertex(a),
                    _ => Record::Insert(a, b),
                }
            })
            .collect();
        recs.iter().for_each(|r| m.apply(r));
        let (recs, names) = named(&recs);
        let t = g.submit_named(&recs, &names).unwrap();
        g.wait(t).unwrap();
        if round % 9 == 0 {
            g.flush().unwrap();
        }
    }
    let (vs, es) = read(&g.snapshot().unwrap());
    assert_eq!((vs, es), (m.vertices.clone(), m.edges.clone()));
    // Names of deletes of unknown vertices were never stored.
    assert_eq!(g.key_id(&name_of(1000)).unwrap(), None);
    g.compact().unwrap();
    drop(g);
    let g = reopen(d.path()).unwrap();
    let s = g.snapshot().unwrap();
    assert_eq!(read(&s), (m.vertices, m.edges));
    assert!(g.check().unwrap().is_sound());
    g.close().unwrap();
}

#[test]
fn the_two_key_kinds_refuse_each_other() {
    let d = tempfile::tempdir().unwrap();
    let ints = d.path().join("ints");
    let g = Graph::create(&ints, Options::default()).unwrap();
    for e in [
        g.intern(["a"]).unwrap_err(),
        g.insert_named_edges(&[("a", "b")]).unwrap_err(),
        g.key_id("a").unwrap_err(),
    ] {
        assert!(e.to_string().contains("keyed by integer ids"), "{e}");
    }
    let e = g.dense_id_of("x1").unwrap_err();
    assert!(e.to_string().contains("not a vertex id"), "{e}");
    g.close().unwrap();
    let e = Graph::open(&ints, string_opts()).err().unwrap();
    assert!(e.to_string().contains("keyed by integer ids"), "{e}");

    let names = d.path().join("names");
    let g = Graph::create(&names, string_opts()).unwrap();
    g.insert_named_edges(&[("a", "b")]).unwrap();
    // A raw record naming a number no name has would leave a store that cannot say which
    // vertex it is: refused, and nothing changes.
    let e = g.apply(&[Record::Insert(0, 2)]).unwrap_err();
    assert!(
        e.to_string().contains("not the number of an interned name"),
        "{e}"
    );
    // Raw records with interned numbers are fine.
    g.apply(&[Record::Insert(1, 0)]).unwrap();
    g.close().unwrap();
    let e = Graph::open(&names, Options::new().keys(Some(KeyKind::U64)))
        .err()
        .unwrap();
    assert!(e.to_string().contains("keyed by string names"), "{e}");
    let g = reopen(&names).unwrap();
    assert_eq!(g.snapshot().unwrap().num_edges(), 2);
    g.close().unwrap();
}

#[test]
fn bad_names_fail_the_batch_and_store_nothing() {
    let d = tempfile::tempdir().unwrap();
    let g = create(d.path());
    g.insert_named_edges(&[("a", "b")]).unwrap();
    let long = "x".repeat(70_000);
    for bad in [vec![("c", "")], vec![("c", long.as_str())]] {
        let e = g.insert_named_edges(&bad).unwrap_err();
        assert!(matches!(e, Error::Invalid(_)), "{e}");
    }
    assert_eq!(
        g.key_id("c").unwrap(),
        None,
        "no name of a failed batch is kept"
    );
    assert_eq!(g.snapshot().unwrap().num_edges(), 1);
    // A record pointing past its batch's names.
    let names: evograph::Names = ["p"].into_iter().collect();
    let e = g.submit_named(&[Record::Insert(0, 1)], &names).unwrap_err();
    assert!(e.to_string().contains("position 1 of a batch of 1"), "{e}");
    g.close().unwrap();
}

#[test]
fn a_read_only_handle_reads_names_and_writes_none() {
    let d = tempfile::tempdir().unwrap();
    let g = create(d.path());
    g.insert_named_edges(&[("a", "b")]).unwrap();
    let r = Graph::open(d.path(), Options::new().read_only(true)).unwrap();
    assert_eq!(r.key_kind(), KeyKind::String);
    let s = r.snapshot().unwrap();
    assert_eq!(s.names().unwrap().len(), 2);
    let v = r.dense_id_of("b").unwrap().unwrap();
    assert_eq!(s.key(v), Key::Name("b"));
    let e = r.intern(["c"]).unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
}

#[test]
fn damaged_keys_are_refused_at_open() {
    let d = tempfile::tempdir().unwrap();
    let g = create(d.path());
    let edges: Vec<(String, String)> = (0..100).map(|i| (name_of(i), name_of(i + 1))).collect();
    let pairs: Vec<(&str, &str)> = edges
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    g.insert_named_edges(&pairs).unwrap();
    g.close().unwrap();
    let keys = d.path().join("KEYS");
    let good = std::fs::read(&keys).unwrap();
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("cut", good[..good.len() / 2].to_vec()),
        ("foreign", b"not a key file at all".to_vec()),
    ];
    let mut flipped = good.clone();
    flipped[40] ^= 0x20;
    cases.push(("flipped", flipped));
    for (what, bytes) in cases {
        std::fs::write(&keys, &bytes).unwrap();
        match reopen(d.path()) {
            Err(Error::Corrupt(msg)) => assert!(msg.contains("KEYS"), "{what}: {msg}"),
            Err(e) => panic!("{what}: expected Corrupt, got {e}"),
            Ok(_) => panic!("{what}: a damaged KEYS opened"),
        }
        // The refusal changed nothing: the good file reopens.
        assert_eq!(std::fs::read(&keys).unwrap(), bytes, "{what}");
    }
    std::fs::write(&keys, &good).unwrap();
    let g = reopen(d.path()).unwrap();
    assert_eq!(read(&g.snapshot().unwrap()).1.len(), 100);
    g.close().unwrap();
    // A KEYS file in a store keyed by integers is not ours to ignore.
    let ints = d.path().join("ints");
    Graph::create(&ints, Options::default())
        .unwrap()
        .close()
        .unwrap();
    std::fs::write(ints.join("KEYS"), &good).unwrap();
    assert!(matches!(reopen(&ints), Err(Error::Corrupt(_))));
}

/// The bytes `KEYS` of store `store_id` holds for `names` (FORMAT.md), written by hand to
/// stage what a killed process leaves.
fn keys_file(names: &[&str], store_id: u64) -> Vec<u8> {
    let mut b = b"EVGKEYS1".to_vec();
    b.extend_from_slice(&store_id.to_le_bytes());
    for (i, n) in names.iter().enumerate() {
        let c = crc32c::crc32c(&(i as u64).to_le_bytes());
        let c = crc32c::crc32c_append(c, &(n.len() as u32).to_le_bytes());
        let c = crc32c::crc32c_append(c, n.as_bytes());
        b.extend_from_slice(&(n.len() as u32).to_le_bytes());
        b.extend_from_slice(&c.to_le_bytes());
        b.extend_from_slice(n.as_bytes());
    }
    b
}

/// A writer killed after persisting `KEYS` but before syncing the directory left a file
/// whose name a power cut could still lose. The next writer may add no name of its own
/// while its acknowledged batches use those names: its open makes the entry durable.
#[test]
fn a_writer_that_adds_no_name_still_makes_keys_durable() {
    use evograph::internals::medium::sim::{SimMedium, Tear};
    use evograph::internals::medium::Medium;
    use std::sync::Arc;
    let m = SimMedium::new(Tear::Sector);
    let arc: Arc<dyn Medium> = Arc::new(m.clone());
    let opts = || string_opts().background(false).threads(1);
    // The first handle commits its root and is killed mid-append (no close, no dir sync).
    let first = evograph::internals::open_on(arc.clone(), opts()).unwrap();
    let id = u64::from_str_radix(&first.stats().unwrap().store_id.unwrap(), 16).unwrap();
    std::mem::forget(first);
    let seg = m.create("KEYS").unwrap();
    seg.write_at(0, &keys_file(&["a", "b"], id)).unwrap();
    seg.persist().unwrap();
    let g = evograph::internals::open_on(arc.clone(), opts()).unwrap();
    g.insert_named_edges(&[("a", "b")]).unwrap();
    let after_power_cut = m.durable_image();
    std::mem::forget(g);
    let g = evograph::internals::open_on(Arc::new(after_power_cut), opts())
        .unwrap_or_else(|e| panic!("an acknowledged edge's store was refused: {e}"));
    assert_eq!(g.snapshot().unwrap().num_edges(), 1);
    g.close().unwrap();
}
