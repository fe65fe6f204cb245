//! Tails (FORMAT.md, "Tails"): a writer publishes the runs it sealed since its last flush
//! for readers in other processes, which load them instead of replaying their log. A
//! reader with tails must read exactly what a reader of the log reads, whatever the tails'
//! state: damaged, stale, left by a writer that died, or gone.

mod common;

use common::{assert_matches, copy_dir, read_weights, write_in_place, Model};
use evograph::{Durability, Graph, Options, Record, Tails};
use std::path::Path;

/// A writer that publishes a tail every ~21 KiB of memtable (a third of its freeze) and
/// flushes every three tails.
fn writer_opts(undirected: bool, weighted: bool) -> Options {
    Options::new()
        .create(true)
        .undirected(Some(undirected))
        .weighted(Some(weighted))
        .durability(Durability::Sync)
        .memtable_bytes(128 << 10)
        .threads(2)
        .tails(Tails::Always)
}

fn reader(dir: &Path, tails: Tails) -> Graph {
    Graph::open(dir, Options::new().read_only(true).tails(tails)).unwrap()
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A batch of edge inserts (weighted or not), deletes and the odd vertex delete over
/// `n` vertices.
fn batch(rng: &mut Rng, n: u64, weighted: bool) -> Vec<Record> {
    (0..400)
        .map(|_| {
            let (u, v) = (rng.below(n), rng.below(n));
            match rng.below(100) {
                0 => Record::DeleteVertex(u),
                1..=24 => Record::Delete(u, v),
                _ if weighted => Record::InsertWeighted(u, v, (1 + rng.below(9)) as f64),
                _ => Record::Insert(u, v),
            }
        })
        .collect()
}

/// The reader's graph is the model's, weights included; returns the tails it loaded.
fn check_reader(dir: &Path, tails: Tails, m: &Model, weighted: bool, ctx: &str) -> usize {
    let r = reader(dir, tails);
    let s = r.snapshot().unwrap();
    assert_matches(&s, m, ctx);
    if weighted {
        assert_eq!(read_weights(&s), m.weights, "{ctx}: weights");
    }
    let loaded = r.stats().unwrap().tails_loaded;
    r.close().unwrap();
    loaded
}

fn tail_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("tail-") || n.starts_with("TAILS"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_reader_with_tails_reads_what_a_reader_of_the_log_reads() {
    for (undirected, weighted) in [(false, false), (true, true), (false, true)] {
        let dir = tempfile::tempdir().unwrap();
        let w = Graph::open(dir.path(), writer_opts(undirected, weighted)).unwrap();
        let mut m = Model::new(undirected);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ undirected as u64 ^ (weighted as u64) << 1);
        let mut loaded = 0;
        for i in 0..60 {
            let recs = batch(&mut rng, 300, weighted);
            w.wait(w.submit(&recs).unwrap()).unwrap();
            recs.iter().for_each(|r| m.apply(r));
            if i % 6 == 5 {
                let ctx = format!("undirected {undirected} weighted {weighted} batch {i}");
                loaded += check_reader(dir.path(), Tails::WhileReaders, &m, weighted, &ctx);
                check_reader(dir.path(), Tails::Never, &m, weighted, &ctx);
            }
        }
        assert!(
            loaded > 0,
            "no reader loaded a tail: the test tests nothing"
        );
        w.close().unwrap();
        assert_eq!(
            tail_files(dir.path()),
            Vec::<String>::new(),
            "a close lets go of them"
        );
        check_reader(dir.path(), Tails::WhileReaders, &m, weighted, "after close");
    }
}

/// Writes batches until a reader loads at least `n` tails.
fn write_tails(dir: &Path, w: &Graph, m: &mut Model, n: usize) {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..200 {
        let recs = batch(&mut rng, 500, false);
        w.wait(w.submit(&recs).unwrap()).unwrap();
        recs.iter().for_each(|r| m.apply(r));
        let runs = tail_files(dir)
            .iter()
            .filter(|f| f.ends_with(".run"))
            .count();
        if runs >= n && check_reader(dir, Tails::WhileReaders, m, false, "writing") >= n {
            return;
        }
    }
    panic!("the writer never published {n} tails at once");
}

#[test]
fn a_damaged_tail_ends_the_chain_and_the_log_gives_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let opts = writer_opts(false, false).memtable_bytes(1 << 20);
    let w = Graph::open(dir.path(), opts).unwrap();
    let mut m = Model::new(false);
    write_tails(dir.path(), &w, &mut m, 2);
    let runs: Vec<String> = (tail_files(dir.path()).into_iter())
        .filter(|f| f.ends_with(".run"))
        .collect();
    // The second tail's lists: a flipped byte fails its block checksum.
    let second = dir.path().join(&runs[1]);
    let len = std::fs::metadata(&second).unwrap().len();
    let mut b = [0u8];
    let f = std::fs::read(&second).unwrap();
    b[0] = f[(len / 2) as usize] ^ 0x40;
    write_in_place(&second, len / 2, &b);
    assert_eq!(
        check_reader(dir.path(), Tails::WhileReaders, &m, false, "second damaged"),
        1
    );
    // The first tail's ids cut short: no tail is used.
    let ids = dir.path().join(runs[0].replace(".run", ".ids"));
    let f = std::fs::OpenOptions::new().write(true).open(&ids).unwrap();
    f.set_len(f.metadata().unwrap().len() - 8).unwrap();
    assert_eq!(
        check_reader(dir.path(), Tails::WhileReaders, &m, false, "ids cut"),
        0
    );
    // No list at all.
    std::fs::remove_file(dir.path().join("TAILS")).unwrap();
    assert_eq!(
        check_reader(dir.path(), Tails::WhileReaders, &m, false, "no list"),
        0
    );
    w.close().unwrap();
}

#[test]
fn tails_a_dead_writer_left_serve_its_readers_and_go_at_the_next_writers_open() {
    let dir = tempfile::tempdir().unwrap();
    let opts = writer_opts(true, false).memtable_bytes(1 << 20);
    let w = Graph::open(dir.path(), opts).unwrap();
    let mut m = Model::new(true);
    write_tails(dir.path(), &w, &mut m, 2);
    // A copy taken while the writer runs is the store a killed writer leaves.
    let crashed = tempfile::tempdir().unwrap();
    copy_dir(dir.path(), crashed.path());
    w.close().unwrap();
    std::fs::remove_file(crashed.path().join("LOCK")).ok();
    let before = tail_files(crashed.path());
    assert!(before.iter().any(|f| f == "TAILS"), "{before:?}");
    assert!(
        check_reader(
            crashed.path(),
            Tails::WhileReaders,
            &m,
            false,
            "dead writer"
        ) >= 2
    );
    let w = Graph::open(crashed.path(), Options::new()).unwrap();
    assert_eq!(
        tail_files(crashed.path()),
        Vec::<String>::new(),
        "a writer's open removes them"
    );
    let s = w.snapshot().unwrap();
    assert_matches(&s, &m, "the next writer");
    drop(s);
    w.close().unwrap();
}

#[test]
fn a_writer_without_readers_publishes_no_tails_and_a_store_keeping_history_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = Model::new(false);
    let opts = writer_opts(false, false).tails(Tails::WhileReaders);
    let w = Graph::open(dir.path(), opts).unwrap();
    let mut rng = Rng(7);
    for _ in 0..30 {
        let recs = batch(&mut rng, 300, false);
        w.wait(w.submit(&recs).unwrap()).unwrap();
        recs.iter().for_each(|r| m.apply(r));
    }
    assert_eq!(
        tail_files(dir.path()),
        Vec::<String>::new(),
        "no reader came"
    );
    w.close().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let opts = writer_opts(false, false).history(evograph::history::History::All);
    let w = Graph::open(dir.path(), opts).unwrap();
    for _ in 0..30 {
        let recs = batch(&mut rng, 300, false);
        w.wait(w.submit(&recs).unwrap()).unwrap();
    }
    assert_eq!(tail_files(dir.path()), Vec::<String>::new(), "history kept");
    w.close().unwrap();
}
