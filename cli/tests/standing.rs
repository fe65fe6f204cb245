//! Standing kernels from the command line: `ingest --maintain --changes` and `watch`, their
//! lines replayed onto the first full result against `run` at the last commit, a watcher
//! following another process's ingest, and their errors.

mod common;

use common::{assert_no_panic, evograph};
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn ok(args: &[&str]) -> String {
    let out = evograph(args);
    assert_no_panic(&out, &args.join(" "));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(args: &[&str], want: &str) {
    let out = evograph(args);
    assert_no_panic(&out, &args.join(" "));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail: {err}");
    assert!(err.contains(want), "{args:?}: {err}");
}

fn p(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_owned()
}

/// A random ops stream over `ids` vertices: inserts, deletes, vertex deletes.
fn ops(seed: u64, n: usize, ids: u64) -> String {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = String::new();
    for _ in 0..n {
        let (u, v) = (rng.random_range(0..ids), rng.random_range(0..ids));
        match rng.random_range(0..20) {
            0..=11 => out += &format!("+ {u} {v}\n"),
            12..=18 => out += &format!("- {u} {v}\n"),
            _ => out += &format!("- {u}\n"),
        }
    }
    out
}

/// The values the lines give: the full result after the first `# lsn`, then each
/// `vertex old new` applied, the old value checked against the one held (all but pr-tol,
/// whose small moves are not listed). The last LSN and how many `# lsn` lines came.
fn replay(text: &str, exact: bool) -> (BTreeMap<String, String>, u64, usize) {
    let (mut vals, mut lsn, mut blocks) = (BTreeMap::new(), 0, 0);
    for line in text.lines() {
        if let Some(l) = line.strip_prefix("# lsn ") {
            // `# lsn L`, or `# lsn L commits N` for a step that reflects several.
            let mut f = l.split(' ');
            lsn = f.next().unwrap().parse().unwrap();
            match (f.next(), f.next()) {
                (None, _) => {}
                (Some("commits"), Some(n)) => assert!(
                    n.trim_end_matches('+').parse::<u64>().unwrap() > 1 || n.ends_with('+'),
                    "{line}"
                ),
                _ => panic!("unexpected line {line:?}"),
            }
            blocks += 1;
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        match f.len() {
            2 if blocks == 1 => drop(vals.insert(f[0].to_owned(), f[1].to_owned())),
            3 => {
                let held = vals.get(f[0]).map_or("-", String::as_str);
                assert!(!exact || held == f[1], "{line}: held {held}");
                match f[2] {
                    "-" => drop(vals.remove(f[0])),
                    new => drop(vals.insert(f[0].to_owned(), new.to_owned())),
                }
            }
            _ => panic!("unexpected line {line:?}"),
        }
    }
    (vals, lsn, blocks)
}

fn parse(text: &str) -> BTreeMap<String, String> {
    (text.lines())
        .map(|l| l.split_once(' ').unwrap())
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect()
}

/// L1 distance between two score maps over the union of their vertices.
fn l1(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> f64 {
    let f = |m: &BTreeMap<String, String>, k: &str| -> f64 {
        m.get(k).map_or(0.0, |x| x.parse().unwrap())
    };
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.iter().map(|k| (f(a, k) - f(b, k)).abs()).sum()
}

#[test]
fn ingest_maintain_writes_lines_that_replay_to_the_recomputed_result() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("u.ops"), ops(3, 3000, 300)).unwrap();
    let input = p(d, "u.ops");
    for (k, extra) in [
        ("wcc", vec![]),
        ("bfs", vec!["--source", "5"]),
        ("sssp", vec!["--source", "5"]),
        ("pr-tol", vec![]),
        ("pregel-cc", vec![]),
    ] {
        let s = p(d, &format!("S-{k}"));
        let changes = p(d, &format!("{k}.txt"));
        let mut args = vec![
            "ingest",
            &s,
            &input,
            "--batch",
            "97",
            "--maintain",
            k,
            "--changes",
            &changes,
        ];
        args.extend(&extra);
        let out = ok(&args);
        assert!(out.contains("ingested 3000 records"), "{out}");
        let text = std::fs::read_to_string(&changes).unwrap();
        let (got, lsn, blocks) = replay(&text, k != "pr-tol");
        assert!(blocks > 20, "{k}: {blocks} commits reflected");
        let log = ok(&["stats", &s, "--json"]);
        assert!(lsn > 0 && !log.is_empty());
        let mut run = vec!["run", &s, k];
        run.extend(&extra);
        let want = parse(&ok(&run));
        match k {
            "pr-tol" => assert!(l1(&got, &want) <= 2e-4, "pr-tol {}", l1(&got, &want)),
            _ => assert_eq!(got, want, "{k}"),
        }
    }
}

/// History segments in store `s`.
fn segments(s: &str) -> usize {
    (std::fs::read_dir(s).unwrap().flatten())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".hist"))
        .count()
}

/// A standing kernel over a stream of small batches into a store keeping history writes
/// history at the pace of flushes (issue 65, item 5): its steps' snapshots, sealed into
/// DRAM every few thousand updates, go out with the next full memtable. Before, each
/// woke the flusher and wrote a run, a history segment and a manifest commit of its own.
#[test]
fn maintain_writes_history_at_the_pace_of_flushes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("u.ops"), ops(8, 60_000, 5_000)).unwrap();
    let input = p(d, "u.ops");
    let common = [
        "--batch",
        "10",
        "--history",
        "all",
        "--memtable-mb",
        "1",
        "--durability",
        "none",
    ];
    let plain = p(d, "plain");
    let mut args = vec!["ingest", &plain, &input];
    args.extend(common);
    ok(&args);
    let kept = p(d, "kept");
    let changes = p(d, "wcc.txt");
    let mut args = vec![
        "ingest",
        &kept,
        &input,
        "--maintain",
        "wcc",
        "--changes",
        &changes,
    ];
    args.extend(common);
    ok(&args);
    let (with, without) = (segments(&kept), segments(&plain));
    assert!(
        without >= 2,
        "the stream flushes more than once: {without} segments"
    );
    assert!(
        with <= without,
        "{with} history segments with --maintain wcc, {without} without"
    );
    let log = |s: &str| ok(&["log", s]).lines().count();
    assert_eq!(log(&kept), log(&plain), "every commit is kept either way");
}

#[test]
fn watch_replays_history_between_two_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("a.ops"), ops(5, 800, 100)).unwrap();
    std::fs::write(d.join("b.ops"), ops(6, 800, 100)).unwrap();
    let s = p(d, "S");
    ok(&[
        "ingest",
        &s,
        &p(d, "a.ops"),
        "--history",
        "all",
        "--batch",
        "50",
    ]);
    let log: serde_json::Value = serde_json::from_str(&ok(&["log", &s, "--json"])).unwrap();
    let a = log["commits"].as_array().unwrap().last().unwrap()["lsn"]
        .as_u64()
        .unwrap();
    ok(&["ingest", &s, &p(d, "b.ops"), "--batch", "50"]);
    let log: serde_json::Value = serde_json::from_str(&ok(&["log", &s, "--json"])).unwrap();
    let b = log["commits"].as_array().unwrap().last().unwrap()["lsn"]
        .as_u64()
        .unwrap();
    let out = ok(&[
        "watch",
        &s,
        "bfs",
        "--source",
        "7",
        "--from",
        &a.to_string(),
        "--to",
        &b.to_string(),
    ]);
    let (got, lsn, blocks) = replay(&out, true);
    assert_eq!(lsn, b);
    assert!(blocks >= 2);
    assert_eq!(got, parse(&ok(&["run", &s, "bfs", "--source", "7"])));
    let first = out.lines().next().unwrap();
    assert_eq!(first, format!("# lsn {a}"));
    // Outside the history kept, or a kernel that cannot be kept current: refused.
    fails(
        &["watch", &s, "wcc", "--from", "1"],
        "outside the history kept",
    );
    fails(&["watch", &s, "lcc"], "cannot be kept current");
    fails(&["watch", &s, "bfs"], "needs --source");
}

/// A watcher beside a writer in another process: it reflects commits as they come, and
/// once the writer is done, its lines replay to `run`'s result at the newest commit.
#[test]
fn watch_follows_another_process_ingesting() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("a.ops"), ops(8, 500, 120)).unwrap();
    std::fs::write(d.join("b.ops"), ops(9, 3000, 120)).unwrap();
    let s = p(d, "S");
    ok(&["ingest", &s, &p(d, "a.ops")]);
    let lines = d.join("watch.txt");
    let mut watch = Command::new(env!("CARGO_BIN_EXE_evograph"))
        .args(["watch", &s, "wcc", "--poll-ms", "5"])
        .stdout(std::fs::File::create(&lines).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The writer starts once the watcher has printed the graph as it was, so its
    // commits come after the watcher's first block however slow the watcher starts.
    let started = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&lines)
        .unwrap()
        .starts_with("# lsn ")
    {
        assert!(
            Instant::now() < started,
            "the watcher printed nothing in 60 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // A long-running writer: small batches, each durable before the next.
    ok(&[
        "ingest",
        &s,
        &p(d, "b.ops"),
        "--batch",
        "20",
        "--in-flight",
        "1",
    ]);
    let stats: serde_json::Value = serde_json::from_str(&ok(&["stats", &s, "--json"])).unwrap();
    let last = stats["next_lsn"].as_u64().unwrap();
    let want = parse(&ok(&["run", &s, "wcc"]));
    let until = Instant::now() + Duration::from_secs(120);
    let text = loop {
        let text = std::fs::read_to_string(&lines).unwrap();
        // "# lsn N", or "# lsn N commits K" when one step took in several commits.
        let reached = text.lines().any(|l| {
            l.strip_prefix(&format!("# lsn {last}"))
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        });
        if reached || Instant::now() > until {
            break text;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = watch.kill();
    let err = String::from_utf8_lossy(&watch.wait_with_output().unwrap().stderr).into_owned();
    let (got, lsn, blocks) = replay(&text, true);
    assert_eq!(
        lsn, last,
        "the watcher reached LSN {lsn}, the store {last}; stderr: {err}"
    );
    assert!(blocks >= 2, "{blocks} commits reflected; stderr: {err}");
    assert_eq!(got, want, "stderr: {err}");
}
