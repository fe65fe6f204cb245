//! Readers while a writer ingests (issue 9, item 4): read-only commands run in a loop
//! against a store that `evograph ingest` is changing, with small memtables and WAL segments
//! so that flushes, merges, segment rotation and recycling happen under them. Each result
//! must be a consistent prefix of the input, no reader may fail, and the writer must finish
//! unhindered.
//!
//! `EVOGRAPH_READERS_SOAK=N` repeats each scenario N times with a larger input.

mod common;

use common::assert_no_panic;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

fn soak() -> usize {
    std::env::var("EVOGRAPH_READERS_SOAK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn evograph(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_evograph"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_no_panic(&out, &args.join(" "));
    out
}

/// Starts `evograph ingest` reading its input from a pipe, and a thread that feeds it
/// `text` in `chunks` parts with a pause after each: the ingest then lasts long enough for
/// reads to land inside it however fast the machine is.
fn spawn_ingest(
    dir: &Path,
    args: &[&str],
    text: String,
    chunks: usize,
) -> (Child, std::thread::JoinHandle<()>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_evograph"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let bytes = text.as_bytes();
        let mut at = 0;
        for i in 1..=chunks {
            // Cut at a line end.
            let mut end = bytes.len() * i / chunks;
            while end < bytes.len() && bytes[end - 1] != b'\n' {
                end += 1;
            }
            if stdin.write_all(&bytes[at..end]).is_err() {
                return; // the ingest died; its exit status tells why
            }
            at = end;
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    (child, feeder)
}

/// Distinct edges in the order they first appear in a pseudo-random input of `n` lines
/// (with repeats, so that set semantics matter).
fn input(n: usize, seed: u64, keys: &str) -> (String, Vec<(u64, u64)>) {
    let mut rng = common::Rng(seed);
    let mut text = String::with_capacity(n * 14);
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    for _ in 0..n {
        let u = rng.next() % 5000;
        let v = rng.next() % 5000;
        if keys == "string" {
            text.push_str(&format!("n{u} n{v}\n"));
        } else {
            text.push_str(&format!("{u} {v}\n"));
        }
        if seen.insert((u, v)) {
            order.push((u, v));
        }
    }
    (text, order)
}

/// The edges an export printed, as the integers the input's names (`n<int>`) stand for.
fn parse_edges(stdout: &[u8]) -> BTreeSet<(u64, u64)> {
    let text = String::from_utf8_lossy(stdout);
    if !text.starts_with('n') {
        return common::parse_export(stdout);
    }
    text.lines()
        .map(|l| {
            let (a, b) = l.split_once('\t').expect("a tab between names");
            let num = |x: &str| x.strip_prefix('n').unwrap().parse::<u64>().unwrap();
            (num(a), num(b))
        })
        .collect()
}

/// Runs the scenario: returns how many reads landed strictly inside the ingest.
fn readers_see_prefixes(durability: &str, lines: usize, seed: u64, keys: &str) -> usize {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (text, order) = input(lines, seed, keys);
    let (mut ingest, feeder) = spawn_ingest(
        dir,
        &[
            "ingest",
            "S",
            "/dev/stdin",
            "--format",
            "snap",
            "--no-validate",
            "--batch",
            "300",
            "--memtable-mb",
            "1",
            "--wal-segment-kb",
            "64",
            "--durability",
            durability,
            "--threads",
            "1",
            "--keys",
            keys,
        ],
        text,
        40,
    );
    // The newest read's edges, and the newest of each kind: to the durable point (even
    // rounds), or with --unacknowledged to the last block written, which may be further.
    let (mut last, mut last_of) = (0usize, [0usize; 2]);
    let mut inside = 0usize;
    let mut round = 0usize;
    loop {
        let done = ingest.try_wait().unwrap().is_some();
        round += 1;
        let kind = round % 2;
        let exp = match kind {
            0 => evograph(dir, &["export", "S"]),
            _ => evograph(dir, &["export", "S", "--unacknowledged"]),
        };
        let err = String::from_utf8_lossy(&exp.stderr);
        if exp.status.code() == Some(2) && err.contains("is not an evograph store") {
            // Before the writer committed its first root.
            assert!(
                last_of == [0, 0],
                "the store vanished after a read saw {last_of:?} edges: {err}"
            );
        } else {
            assert_eq!(exp.status.code(), Some(0), "export during ingest: {err}");
            let got = parse_edges(&exp.stdout);
            let k = got.len();
            let want: BTreeSet<(u64, u64)> = order[..k.min(order.len())].iter().copied().collect();
            assert!(
                k <= order.len() && got == want,
                "read {round}: {k} edges that are not the input's first {k} distinct edges"
            );
            assert!(
                k >= last_of[kind],
                "read {round}: {k} edges after an earlier read of its kind saw {}",
                last_of[kind]
            );
            assert!(
                kind == 0 || k >= last_of[0],
                "read {round}: {k} edges written, fewer than an earlier read to the durable point saw ({})",
                last_of[0]
            );
            if k > 0 && k < order.len() {
                inside += 1;
            }
            (last, last_of[kind]) = (k, k);
            // Other readers: every one must work while the writer runs.
            if round.is_multiple_of(3) {
                for args in [
                    &["stats", "S", "--json"][..],
                    &["run", "S", "wcc", "--json"],
                    &["check", "S"],
                ] {
                    let out = evograph(dir, args);
                    assert_eq!(
                        out.status.code(),
                        Some(0),
                        "{args:?} during ingest: {}{}",
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            }
        }
        if done {
            break;
        }
    }
    feeder.join().unwrap();
    let status = ingest.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(ingest.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "the writer failed beside readers: {err}");
    assert_eq!(
        last,
        order.len(),
        "the last read, after the writer exited, sees everything"
    );
    inside
}

#[test]
fn readers_see_consistent_prefixes_while_a_sync_writer_ingests() {
    let rounds = soak().max(1);
    let lines = if soak() > 0 { 400_000 } else { 120_000 };
    let mut inside = 0;
    for r in 0..rounds {
        inside += readers_see_prefixes("sync", lines, 11 + r as u64, "u64");
    }
    eprintln!("sync writer: {inside} reads inside the ingest over {rounds} round(s)");
    // The test means nothing unless reads overlapped the ingest.
    assert!(inside >= 3, "only {inside} reads landed inside the ingest");
}

/// With names, a reader loads `KEYS` after the log, while the writer appends to it: every
/// vertex it reads has its name.
#[test]
fn readers_see_consistent_prefixes_of_a_writer_of_names() {
    let rounds = soak().max(1);
    let lines = if soak() > 0 { 400_000 } else { 120_000 };
    let mut inside = 0;
    for r in 0..rounds {
        inside += readers_see_prefixes("sync", lines, 31 + r as u64, "string");
    }
    eprintln!("writer of names: {inside} reads inside the ingest over {rounds} round(s)");
    assert!(inside >= 3, "only {inside} reads landed inside the ingest");
}

#[test]
fn readers_see_consistent_prefixes_of_a_writer_without_a_log() {
    let rounds = soak().max(1);
    let lines = if soak() > 0 { 400_000 } else { 120_000 };
    let mut inside = 0;
    for r in 0..rounds {
        inside += readers_see_prefixes("none", lines, 101 + r as u64, "u64");
    }
    eprintln!("writer without a log: {inside} reads inside the ingest over {rounds} round(s)");
    assert!(inside >= 1, "only {inside} reads landed inside the ingest");
}

#[test]
fn a_reader_leaves_no_trace_and_a_second_writer_is_still_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("in.el"), "1 2\n2 3\n").unwrap();
    assert!(evograph(dir, &["ingest", "S", "in.el"]).status.success());
    std::fs::remove_file(dir.join("S/LOCK")).unwrap();
    let before = common::dir_files(&dir.join("S"));
    for args in [&["stats", "S"][..], &["export", "S"], &["check", "S"]] {
        assert!(evograph(dir, args).status.success(), "{args:?}");
    }
    assert_eq!(
        common::dir_files(&dir.join("S")),
        before,
        "readers wrote nothing"
    );
    // A writer holding the store: readers work, a second writer gets the lock error.
    let g =
        common::quiet_forks(|| evograph::Graph::open(dir.join("S"), Default::default())).unwrap();
    assert!(evograph(dir, &["export", "S"]).status.success());
    let out = evograph(dir, &["ingest", "S", "in.el"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("locked"));
    common::quiet_forks(|| g.close()).unwrap();
}
