//! Helpers shared by the integration tests: a plain model of the graph and comparisons.
#![allow(dead_code)]

use evograph::VertexId;
use evograph::{GraphView, Record, Snapshot};
use std::collections::BTreeSet;

/// The trivial reference: sets of existing vertices and directed edges (external ids).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    pub undirected: bool,
    pub vertices: BTreeSet<u64>,
    pub edges: BTreeSet<(u64, u64)>,
    /// Weight of every edge (1 unless inserted with one).
    pub weights: std::collections::BTreeMap<(u64, u64), u64>,
}

impl Model {
    pub fn new(undirected: bool) -> Self {
        Model {
            undirected,
            ..Default::default()
        }
    }

    pub fn apply(&mut self, r: &Record) {
        match *r {
            Record::Insert(u, v) | Record::InsertWeighted(u, v, _) => {
                let w = match *r {
                    Record::InsertWeighted(_, _, w) => w,
                    _ => 1.0,
                };
                self.vertices.insert(u);
                self.vertices.insert(v);
                self.edges.insert((u, v));
                self.weights.insert((u, v), w.to_bits());
                if self.undirected {
                    self.edges.insert((v, u));
                    self.weights.insert((v, u), w.to_bits());
                }
            }
            Record::Delete(u, v) => {
                self.edges.remove(&(u, v));
                self.weights.remove(&(u, v));
                if self.undirected {
                    self.edges.remove(&(v, u));
                    self.weights.remove(&(v, u));
                }
            }
            Record::InsertVertex(x) => {
                self.vertices.insert(x);
            }
            Record::DeleteVertex(x) => {
                if self.vertices.remove(&x) {
                    self.edges.retain(|&(a, b)| a != x && b != x);
                    self.weights.retain(|&(a, b), _| a != x && b != x);
                }
            }
        }
    }
}

/// The name tests give vertex `x` in a store with string keys (not ASCII, on purpose).
pub fn name_of(x: u64) -> String {
    format!("v{x}-ñ")
}

/// The integer a test vertex stands for: its external id, or the number in its name
/// ([`name_of`]) in a store with string keys.
pub fn user_id(s: &Snapshot, v: VertexId) -> u64 {
    match s.key(v) {
        evograph::Key::Id(x) => x,
        evograph::Key::Name(n) => n
            .strip_prefix('v')
            .and_then(|r| r.strip_suffix("-ñ"))
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("{n:?} is not a name tests give")),
    }
}

/// `recs` with their ids as positions in a batch of names ([`name_of`]), as a parser of a
/// string-keyed input hands them to `Graph::submit_named`.
pub fn named(recs: &[Record]) -> (Vec<Record>, evograph::Names) {
    let mut order: Vec<u64> = Vec::new();
    let mut pos = std::collections::HashMap::new();
    let mut at = |x: u64| -> u64 {
        *pos.entry(x).or_insert_with(|| {
            order.push(x);
            order.len() as u64 - 1
        })
    };
    let out = recs
        .iter()
        .map(|r| match *r {
            Record::Insert(a, b) => Record::Insert(at(a), at(b)),
            Record::InsertWeighted(a, b, w) => Record::InsertWeighted(at(a), at(b), w),
            Record::Delete(a, b) => Record::Delete(at(a), at(b)),
            Record::InsertVertex(a) => Record::InsertVertex(at(a)),
            Record::DeleteVertex(a) => Record::DeleteVertex(at(a)),
        })
        .collect();
    (out, order.iter().map(|&x| name_of(x)).collect())
}

/// Reads every edge's weight (as f64 bits) out of a snapshot, in external ids.
pub fn read_weights(s: &Snapshot) -> std::collections::BTreeMap<(u64, u64), u64> {
    let mut m = std::collections::BTreeMap::new();
    for v in 0..s.num_vertices() as VertexId {
        s.for_each_out_weighted(v, |w, x| {
            m.insert((user_id(s, v), user_id(s, w)), x.to_bits());
        });
    }
    m
}

/// Reads vertices and edges out of a snapshot, in external ids.
pub fn read(s: &Snapshot) -> (BTreeSet<u64>, BTreeSet<(u64, u64)>) {
    let mut vs = BTreeSet::new();
    let mut es = BTreeSet::new();
    for v in 0..s.num_vertices() as VertexId {
        if s.vertex_exists(v) {
            vs.insert(user_id(s, v));
        }
        s.for_each_out(v, |w| {
            es.insert((user_id(s, v), user_id(s, w)));
        });
    }
    (vs, es)
}

/// Asserts that the snapshot shows exactly the model, including degrees, in-adjacency and lookups.
pub fn assert_matches(s: &Snapshot, m: &Model, ctx: &str) {
    let (vs, es) = read(s);
    assert_eq!(vs, m.vertices, "{ctx}: vertices differ");
    assert_eq!(es, m.edges, "{ctx}: edges differ");
    assert_eq!(s.num_edges(), m.edges.len() as u64, "{ctx}: edge count");
    // Each vertex's model lists by range: a filter of every edge per vertex made this
    // check quadratic in the graph, and it runs after every batch of several tests.
    let reversed: BTreeSet<(u64, u64)> = m.edges.iter().map(|&(a, b)| (b, a)).collect();
    let list = |set: &BTreeSet<(u64, u64)>, x: u64| -> Vec<u64> {
        set.range((x, 0)..=(x, u64::MAX)).map(|e| e.1).collect()
    };
    for v in 0..s.num_vertices() as VertexId {
        let x = s.external_id(v);
        let out = list(&m.edges, x);
        let want_in = list(&reversed, x);
        assert_eq!(s.out_degree(v), out.len(), "{ctx}: out-degree of {x}");
        assert_eq!(s.in_degree(v), want_in.len(), "{ctx}: in-degree of {x}");
        let mut got_in = Vec::new();
        s.for_each_in(v, |w| got_in.push(s.external_id(w)));
        got_in.sort_unstable();
        assert_eq!(got_in, want_in, "{ctx}: in-neighbors of {x}");
        for w in 0..s.num_vertices() as VertexId {
            let y = s.external_id(w);
            assert_eq!(
                s.has_edge(v, w),
                m.edges.contains(&(x, y)),
                "{ctx}: has_edge({x}, {y})"
            );
        }
    }
}

/// Every regular file directly in `dir` with its bytes (stores are flat directories).
pub fn dir_files(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut m = std::collections::BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            let name = e.file_name().to_string_lossy().into_owned();
            m.insert(name, std::fs::read(e.path()).unwrap());
        }
    }
    m
}

/// Copies the regular files of `from` into a new directory `to`, keeping holes: a live WAL
/// segment is 64 MiB long and mostly a hole, and `std::fs::copy` would write every byte
/// (tests that copy a store hundreds of times filled CI's disk that way).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            copy_sparse(&e.path(), &to.join(e.file_name()));
        }
    }
}

/// Overwrites `bytes` at `offset` of file `p` in place (a whole-file rewrite would fill
/// a WAL segment's hole).
pub fn write_in_place(p: &std::path::Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
    f.write_all_at(bytes, offset).unwrap();
}

/// Copies one file, leaving each all-zero 64 KiB chunk a hole.
pub fn copy_sparse(from: &std::path::Path, to: &std::path::Path) {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut src = std::fs::File::open(from).unwrap();
    let mut dst = std::fs::File::create(to).unwrap();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = src.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        if buf[..n].iter().all(|&b| b == 0) {
            dst.seek(SeekFrom::Current(n as i64)).unwrap();
        } else {
            dst.write_all(&buf[..n]).unwrap();
        }
    }
    dst.set_len(src.metadata().unwrap().len()).unwrap();
}

/// Parses `evograph export` output (`src dst` lines) into a set of edges.
pub fn parse_export(stdout: &[u8]) -> BTreeSet<(u64, u64)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let mut it = l.split(' ').map(|x| x.parse::<u64>().expect("numeric id"));
            let e = (it.next().unwrap(), it.next().unwrap());
            assert!(
                it.next().is_none(),
                "export line '{l}' has more than two ids"
            );
            e
        })
        .collect()
}

/// The LDBC Graphalytics validation graphs in `../shared`: `None` (with a note) when they
/// are missing, a panic when they are missing and CI=true.
pub fn graphalytics() -> Option<std::path::PathBuf> {
    // `shared/` sits beside the workspace; this helper is compiled into the root package's
    // tests and into `cli/`'s, so look upwards from whichever manifest built it.
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = manifest
        .ancestors()
        .map(|a| a.join("shared/data/graphalytics"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| manifest.join("../shared/data/graphalytics"));
    if p.is_dir() {
        Some(p)
    } else if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{} is missing and CI=true", p.display());
    } else {
        eprintln!("skipping: {} not found", p.display());
        None
    }
}

/// Deterministic, dependency-free pseudo-random numbers (xorshift64*), so failures replay
/// from a seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// An update stream of `n` records as the crash test's children ingest it: inserts of
/// fresh edges from 3,000 sources (targets numbered from `trial * 1_000_000`), deletes of
/// edges in `inserted` (8 %), and vertex deletions (1 %). Inserts are added to `inserted`.
pub fn update_stream(
    rng: &mut Rng,
    trial: u64,
    n: usize,
    inserted: &mut Vec<(u64, u64)>,
) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let r = rng.below(100);
            if r < 8 && !inserted.is_empty() {
                let (u, v) = inserted[rng.below(inserted.len() as u64) as usize];
                Record::Delete(u, v)
            } else if r == 8 {
                Record::DeleteVertex(rng.below(3000))
            } else {
                let e = (rng.below(3000), trial * 1_000_000 + i as u64);
                inserted.push(e);
                Record::Insert(e.0, e.1)
            }
        })
        .collect()
}
