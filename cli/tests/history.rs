//! History from the command line: commit times from `@` lines and time columns, `--history`,
//! `log`, `--at`, `diff` (replayed with `ingest --format ops`) and `config`, with their
//! errors.

mod common;

use common::{assert_no_panic, evograph};
use std::path::Path;

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

fn fails(args: &[&str], want: &str) -> String {
    let out = evograph(args);
    assert_no_panic(&out, &args.join(" "));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail: {err}");
    assert!(err.contains(want), "{args:?}: {err}");
    err
}

fn sorted(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text.lines().map(str::to_owned).collect();
    v.sort();
    v
}

fn p(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_owned()
}

const DAYS: &str = "@ 2001-01-01T00:00:00Z\n+ 1 2\n+ 2 3\n+ 3 1\n\
@ 2001-01-02T00:00:00Z\n- 1 2\n+ 3 4\n+ 9\n\
@ 2001-01-03T00:00:00Z\n+ 1 2\n- 9\n- 3 1\n\
@ 2001-01-04T00:00:00Z\n+ 4 5\n";

#[test]
fn log_at_and_diff_read_the_graph_of_every_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("u.ops"), DAYS).unwrap();
    let s = p(d, "S");
    ok(&["ingest", &s, &p(d, "u.ops"), "--history", "all"]);
    let log: serde_json::Value = serde_json::from_str(&ok(&["log", &s, "--json"])).unwrap();
    let lsns: Vec<u64> = (log["commits"].as_array().unwrap().iter())
        .map(|c| c["lsn"].as_u64().unwrap())
        .collect();
    assert_eq!(lsns, vec![3, 6, 9, 10]);
    assert_eq!(log["commits"][1]["time"], "2001-01-02T00:00:00Z");
    assert_eq!(log["history"], "all");
    // The graph of each day, by LSN, by time, and between commits.
    let day = |at: &str| sorted(&ok(&["export", &s, "--at", at]));
    assert_eq!(day("3"), sorted("1 2\n2 3\n3 1\n"));
    assert_eq!(day("7"), sorted("2 3\n3 1\n3 4\n"));
    assert_eq!(day("2001-01-03T12:00:00Z"), sorted("2 3\n3 4\n1 2\n"));
    assert_eq!(day("@978307200"), day("3"));
    let err = String::from_utf8_lossy(&evograph(["export", &s, "--at", "7"]).stderr).into_owned();
    assert!(err.contains("the last commit at or before LSN 7"), "{err}");
    // Day 1 had 3 vertices; vertex 9 existed on day 2 only.
    let at = |lsn: &str| -> serde_json::Value {
        serde_json::from_str(&ok(&["stats", &s, "--at", lsn, "--json"])).unwrap()
    };
    assert_eq!(at("3")["vertices"], 3);
    assert_eq!(at("6")["vertices"], 5);
    assert_eq!(at("9")["vertices"], 4);
    assert_eq!(at("9")["history"]["commits"], 4);
    // A diff replays: the graph of day 1 plus diff(day 1, day 4) is the graph of day 4,
    // and the reverse diff takes it back.
    for (from, to) in [("3", "10"), ("10", "3"), ("6", "9")] {
        let base = p(d, &format!("B{from}-{to}"));
        std::fs::write(d.join("base.el"), ok(&["export", &s, "--at", from])).unwrap();
        ok(&["ingest", &base, &p(d, "base.el")]);
        std::fs::write(
            d.join("diff.ops"),
            ok(&["diff", &s, "--from", from, "--to", to]),
        )
        .unwrap();
        ok(&["ingest", &base, &p(d, "diff.ops"), "--format", "ops"]);
        assert_eq!(
            sorted(&ok(&["export", &base])),
            day(to),
            "diff {from} -> {to}"
        );
    }
    // Outside the window, and without history.
    ok(&["config", &s, "--history", "2"]);
    assert!(ok(&["config", &s]).contains("history: 2"));
    fails(
        &["export", &s, "--at", "3"],
        "outside the history kept: commits LSN 9",
    );
    fails(
        &["ingest", &s, &p(d, "u.ops"), "--history", "all"],
        "evograph config",
    );
    std::fs::write(d.join("e.el"), "1 2\n").unwrap();
    ok(&["ingest", &p(d, "N"), &p(d, "e.el")]);
    fails(&["run", &p(d, "N"), "wcc", "--at", "0"], "keeps no history");
}

#[test]
fn input_times_never_go_backwards() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("t.el"), "1 2 100\n2 3 100\n3 4 200.5\n").unwrap();
    let s = p(d, "S");
    ok(&[
        "ingest",
        &s,
        &p(d, "t.el"),
        "--time-column",
        "3",
        "--history",
        "all",
    ]);
    let log = ok(&["log", &s]);
    assert!(log.contains("1970-01-01T00:01:40Z\t2"), "{log}");
    assert!(log.contains("1970-01-01T00:03:20.500Z\t1"), "{log}");
    // Back in time within one input: the line is named, nothing of the file is stored.
    std::fs::write(d.join("b.ops"), "@ 300\n+ 7 8\n@ 299\n+ 8 9\n").unwrap();
    let err = fails(&["ingest", &s, &p(d, "b.ops")], "never go backwards");
    assert!(err.contains(":3"), "{err}");
    // Before the store's last commit: both times are named.
    std::fs::write(d.join("c.ops"), "@ 150\n+ 7 8\n").unwrap();
    fails(
        &["ingest", &s, &p(d, "c.ops")],
        "before the store's last commit",
    );
    assert_eq!(sorted(&ok(&["export", &s])), sorted("1 2\n2 3\n3 4\n"));
    fails(
        &["ingest", &p(d, "X"), &p(d, "b.ops"), "--time-column", "1"],
        "time column",
    );
}

#[test]
fn damaged_history_is_named_by_check_and_refused_by_the_points_that_need_it() {
    damaged_history_is_named_and_refused(false);
}

#[test]
fn damaged_history_is_named_by_check_and_a_point_reads_run_versions_instead() {
    damaged_history_is_named_and_refused(true);
}

/// A history segment damaged after ingest (and, if `versioned`, after a compaction derived
/// run versions from it while it was sound).
fn damaged_history_is_named_and_refused(versioned: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("u.ops"), DAYS).unwrap();
    let s = p(d, "S");
    ok(&["ingest", &s, &p(d, "u.ops"), "--history", "all"]);
    if versioned {
        ok(&["compact", &s]);
    }
    let runs = match versioned {
        true => "run versions for 1 of 1 run(s)",
        false => "run versions for 0 of 1 run(s)",
    };
    let out = ok(&["stats", &s]);
    assert!(out.contains(runs), "{out}");
    let out = ok(&["check", &s]);
    assert!(out.contains("history: 1 segments, 4 commits"), "{out}");
    let seg = std::fs::read_dir(&s)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "hist"))
        .expect("a history segment");
    let good = std::fs::read(&seg).unwrap();
    let at3 = sorted(&ok(&["export", &s, "--at", "3"]));
    // The last byte is a change (the body); byte 120 is in the commit table (the head),
    // after the 104-byte header.
    for (at, what) in [(good.len() - 1, "checksum mismatch"), (120, "in its head")] {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        std::fs::write(&seg, &bad).unwrap();
        let out = evograph(["check", &s]);
        assert_no_panic(&out, "check");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(
            text.contains("history segment") && text.contains(what),
            "{text}"
        );
        // A diff reads the changes; a point reads the commit table, and, when the run has
        // versions (derived by a compaction while the segment was sound), the run
        // filtered by them instead of the changes.
        let err = fails(
            &["diff", &s, "--from", "3", "--to", "10"],
            "history segment",
        );
        assert!(err.contains(what), "{err}");
        let versions = std::fs::read_dir(&s)
            .unwrap()
            .any(|e| e.unwrap().path().extension().is_some_and(|x| x == "ver"));
        assert_eq!(
            versions, versioned,
            "a versions file after ingest and compact"
        );
        if !versioned {
            // A compaction commits, then cannot derive versions from the damaged
            // segment: it says so, names `check`, and the store reads as before.
            let out = evograph(["compact", &s]);
            assert_no_panic(&out, "compact");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{err}");
            assert!(
                err.contains("run versions for 0 of 1 run(s)") && err.contains("evograph check"),
                "{err}"
            );
        }
        if at == 120 || !versions {
            let err = fails(&["export", &s, "--at", "3"], "history segment");
            assert!(err.contains(what), "{err}");
        } else {
            assert_eq!(sorted(&ok(&["export", &s, "--at", "3"])), at3);
        }
        // The latest graph does not need history.
        assert_eq!(sorted(&ok(&["export", &s])), sorted("2 3\n3 4\n1 2\n4 5\n"));
    }
    std::fs::write(&seg, &good).unwrap();
    ok(&["check", &s]);
}

/// A name with a blank goes into `diff`'s ops lines in double quotes, as `ingest` reads it.
#[test]
fn a_diff_quotes_names_with_blanks() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let s = p(d, "S");
    std::fs::write(d.join("a.csv"), "a,b\n").unwrap();
    std::fs::write(d.join("b.csv"), "New York,b\n").unwrap();
    let a = p(d, "a.csv");
    ok(&["ingest", &s, &a, "--keys", "string", "--history", "all"]);
    ok(&["ingest", &s, &p(d, "b.csv")]);
    let out = evograph(["diff", &s, "--from", "1", "--to", "2"]);
    assert_no_panic(&out, "diff");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.lines().any(|l| l == "+ \"New York\" b"), "{text}");
}

/// Twelve commits, one edge each, at times 1001..1012.
fn twelve(d: &Path, from: u64) -> String {
    let text: String = (from..from + 12)
        .map(|i| format!("@ {}\n+ {i} {}\n", 1000 + i, i + 1))
        .collect();
    let f = p(d, &format!("c{from}.ops"));
    std::fs::write(&f, text).unwrap();
    f
}

/// `watch --from A --to B` over stored history prints a block for every commit between,
/// not one jump to B (issue 64, item 3).
#[test]
fn watch_replays_every_stored_commit_between_from_and_to() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let s = p(d, "S");
    ok(&["ingest", &s, &twelve(d, 1), "--history", "all"]);
    let out = ok(&["watch", &s, "wcc", "--from", "1", "--to", "12"]);
    let lsns: Vec<&str> = out.lines().filter(|l| l.starts_with("# lsn")).collect();
    let want: Vec<String> = (1..=12).map(|l| format!("# lsn {l}")).collect();
    assert_eq!(lsns, want, "{out}");
    // By time, from the third commit to the seventh.
    let out = ok(&[
        "watch", &s, "bfs", "--source", "3", "--from", "@1003", "--to", "@1007",
    ]);
    let lsns: Vec<&str> = out.lines().filter(|l| l.starts_with("# lsn")).collect();
    assert_eq!(
        lsns,
        ["# lsn 3", "# lsn 4", "# lsn 5", "# lsn 6", "# lsn 7"],
        "{out}"
    );
    // Each commit's block holds the vertex it reached: `v - depth`.
    assert!(out.contains("# lsn 4\n5 - 2\n"), "{out}");
}

/// Narrowing the window is final: a wider window later keeps the commits still kept and
/// those after, never the ones let go, and their bytes go at once (issue 64, item 4).
#[test]
fn a_window_narrowed_lets_go_for_good() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let s = p(d, "S");
    ok(&["ingest", &s, &twelve(d, 1), "--history", "all"]);
    let before: serde_json::Value = serde_json::from_str(&ok(&["stats", &s, "--json"])).unwrap();
    ok(&["config", &s, "--history", "3"]);
    let after: serde_json::Value = serde_json::from_str(&ok(&["stats", &s, "--json"])).unwrap();
    assert_eq!(after["history"]["commits"], 3);
    assert_eq!(
        after["history"]["let_go_bytes"], 0,
        "freed by config: {after}"
    );
    assert!(
        after["history"]["segment_bytes"].as_u64() < before["history"]["segment_bytes"].as_u64(),
        "{before} {after}"
    );
    fails(&["export", &s, "--at", "9"], "outside the history kept");
    ok(&["ingest", &s, &twelve(d, 13)]);
    ok(&["config", &s, "--history", "all"]);
    // The window of 3 had slid to the last 3 commits of the second ingest.
    let log: serde_json::Value = serde_json::from_str(&ok(&["log", &s, "--json"])).unwrap();
    let lsns: Vec<u64> = (log["commits"].as_array().unwrap().iter())
        .map(|c| c["lsn"].as_u64().unwrap())
        .collect();
    assert_eq!(lsns, [22, 23, 24], "{log}");
    for gone in ["9", "12", "21"] {
        fails(&["export", &s, "--at", gone], "outside the history kept");
    }
    assert_eq!(sorted(&ok(&["export", &s, "--at", "22"])).len(), 22);
    // Commits from now on are kept, beside the three.
    let one = p(d, "one.ops");
    std::fs::write(&one, "@ 2000\n+ 100 101\n").unwrap();
    ok(&["ingest", &s, &one]);
    let log: serde_json::Value = serde_json::from_str(&ok(&["log", &s, "--json"])).unwrap();
    assert_eq!(log["commits"].as_array().unwrap().len(), 4, "{log}");
    let check = evograph(["check", &s]);
    assert_eq!(check.status.code(), Some(0));
}

/// `history edge|vertex` on the four days of `DAYS` (commits at LSNs 3, 6, 9, 10).
#[test]
fn history_lists_when_an_edge_or_a_vertex_was_added_and_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("u.ops"), DAYS).unwrap();
    let s = p(d, "S");
    ok(&["ingest", &s, &p(d, "u.ops"), "--history", "all"]);
    let events = |args: &[&str]| -> Vec<(u64, String, String)> {
        let mut all = vec!["history", s.as_str()];
        all.extend(args);
        all.push("--json");
        let v: serde_json::Value = serde_json::from_str(&ok(&all)).unwrap();
        assert_eq!(
            v["existed_before"], false,
            "{args:?}: history starts with the store"
        );
        (v["events"].as_array().unwrap().iter())
            .map(|e| {
                let t = e["time"].as_str().unwrap().to_owned();
                (
                    e["lsn"].as_u64().unwrap(),
                    t,
                    e["op"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let day = |n: u32| format!("2001-01-0{n}T00:00:00Z");
    let (add, remove) = ("add".to_owned(), "remove".to_owned());
    // Added on day 1, removed on day 2, added again on day 3.
    assert_eq!(
        events(&["edge", "1", "2"]),
        [
            (3, day(1), add.clone()),
            (6, day(2), remove.clone()),
            (9, day(3), add.clone())
        ]
    );
    assert_eq!(
        events(&["edge", "3", "1"]),
        [(3, day(1), add.clone()), (9, day(3), remove.clone())]
    );
    // A directed store: (2, 1) never existed.
    assert!(events(&["edge", "2", "1"]).is_empty());
    // Vertex 9: inserted alone on day 2, deleted on day 3; vertex 5 born by an edge on day 4.
    assert_eq!(
        events(&["vertex", "9"]),
        [(6, day(2), add.clone()), (9, day(3), remove)]
    );
    assert_eq!(events(&["vertex", "5"]), [(10, day(4), add)]);
    // A key never seen has no event; the text form says the same.
    assert!(events(&["vertex", "77"]).is_empty());
    let text = ok(&["history", &s, "edge", "1", "2"]);
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.lines().nth(2).unwrap().ends_with("\tremove"), "{text}");
    // A store without history says so.
    let none = p(d, "N");
    ok(&["ingest", &none, &p(d, "u.ops")]);
    fails(&["history", &none, "edge", "1", "2"], "keeps no history");
}

/// `--window` on the four days of `DAYS` (commits at LSNs 3, 6, 9, 10), by time and LSN.
#[test]
fn a_window_holds_what_its_start_and_every_moment_before_its_end_held() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("u.ops"), DAYS).unwrap();
    let s = p(d, "S");
    ok(&["ingest", &s, &p(d, "u.ops"), "--history", "all"]);
    let window = |w: &str| sorted(&ok(&["export", &s, "--window", w]));
    let day = |n: u32| format!("2001-01-0{n}T00:00:00Z");
    // Day 1, and day 2 (before day 3): 1->2 was deleted on day 2 but held on day 1.
    assert_eq!(
        window(&format!("{}..{}", day(1), day(3))),
        ["1 2", "2 3", "3 1", "3 4"]
    );
    // From LSN 6 to below 9: the start alone; 1->2 comes back only at 9.
    assert_eq!(window("6..9"), ["2 3", "3 1", "3 4"]);
    // Through commit 9: 1->2 is back, 3->1 (deleted at 9) was held at the start.
    assert_eq!(window("6..10"), ["1 2", "2 3", "3 1", "3 4"]);
    // Vertex 9 lived on day 2 only: a window over day 2 counts it, one after does not.
    let stats = |w: &str| -> serde_json::Value {
        serde_json::from_str(&ok(&["stats", &s, "--window", w, "--json"])).unwrap()
    };
    assert_eq!(stats(&format!("{}..{}", day(2), day(4)))["vertices"], 5);
    assert_eq!(stats(&format!("{}..{}", day(3), day(5)))["vertices"], 5);
    assert_eq!(stats("10..11")["vertices"], 5);
    // A kernel over a window: WCC of day 1 .. day 3 has one component of 1, 2, 3, 4.
    let wcc = ok(&[
        "run",
        &s,
        "wcc",
        "--window",
        &format!("{}..{}", day(1), day(3)),
    ]);
    assert!(
        wcc.lines().filter(|l| !l.starts_with('#')).count() >= 4,
        "{wcc}"
    );
    fails(
        &["export", &s, "--window", "9..6"],
        "must come after its start",
    );
    fails(&["export", &s, "--window", "9"], "is not a window");
    fails(
        &["export", &s, "--window", "3..9", "--at", "3"],
        "cannot be used with",
    );
}

/// `run --every`: each step's block is what `run --at` (or `--window` with `--width`)
/// prints for that step, by time and by commits.
#[test]
fn rolling_steps_print_what_each_point_or_window_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("u.ops"), DAYS).unwrap();
    let s = p(d, "S");
    ok(&["ingest", &s, &p(d, "u.ops"), "--history", "all"]);
    let blocks = |text: &str| -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for l in text.lines() {
            match l.strip_prefix("# at ") {
                Some(h) => out.push((h.to_owned(), String::new())),
                None => out.last_mut().unwrap().1.push_str(&format!("{l}\n")),
            }
        }
        out
    };
    let day = |n: u32| format!("2001-01-0{n}T00:00:00Z");
    let daily = blocks(&ok(&[
        "run",
        &s,
        "wcc",
        "--from",
        &day(1),
        "--to",
        &day(4),
        "--every",
        "1d",
    ]));
    assert_eq!(daily.len(), 4);
    for (k, (head, values)) in daily.iter().enumerate() {
        assert!(head.starts_with(&day(k as u32 + 1)), "{head}");
        assert_eq!(
            values,
            &ok(&["run", &s, "wcc", "--at", &day(k as u32 + 1)]),
            "{head}"
        );
    }
    // Every commit, each over the window of the commit before it and itself.
    let windows = blocks(&ok(&[
        "run", &s, "wcc", "--from", "3", "--to", "10", "--every", "1", "--width", "1",
    ]));
    let lsns = [3, 6, 9, 10];
    assert_eq!(windows.len(), 4);
    for (k, (head, values)) in windows.iter().enumerate() {
        let start = lsns[k.saturating_sub(1)];
        let w = format!("{start}..{}", lsns[k] + 1);
        assert_eq!(values, &ok(&["run", &s, "wcc", "--window", &w]), "{head}");
    }
    // A source that a step lacks: that step says so, the others run.
    let bfs = ok(&[
        "run", &s, "bfs", "--source", "5", "--from", "3", "--to", "10", "--every", "3",
    ]);
    assert!(
        bfs.contains("# vertex 5 is not in this step's graph"),
        "{bfs}"
    );
    assert!(bfs.lines().any(|l| l == "5 0"), "{bfs}");
    fails(
        &[
            "run", &s, "wcc", "--from", "3", "--to", "10", "--every", "1s",
        ],
        "choose a longer step",
    );
    fails(&["run", &s, "wcc", "--every", "1d"], "--from");
}

/// Rolling wcc, bfs and sssp are brought forward from step to step (by the net changes
/// between the steps' commits, patched over the graph): over a history of edge and vertex
/// inserts and deletes, new vertices among them, every step's block is what `run --at`
/// prints from scratch, directed and undirected, by commits and by time.
#[test]
fn rolling_steps_brought_forward_equal_each_point_computed_afresh() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut ops = String::new();
    for day in 0..12 {
        ops.push_str(&format!("@ {}\n", 1_000_000_000 + day * 3600));
        // Ids grow with the days: each day names vertices never seen before.
        let ids = 60 + day * 6;
        for _ in 0..40 {
            let (u, v, del) = (next(ids), next(ids), next(10) < 3);
            ops.push_str(&format!("{} {u} {v}\n", if del { '-' } else { '+' }));
        }
        if day % 3 == 2 {
            ops.push_str(&format!("- {}\n+ {}\n", next(ids), next(ids)));
        }
    }
    std::fs::write(d.join("u.ops"), &ops).unwrap();
    for undirected in [false, true] {
        let s = p(d, if undirected { "U" } else { "D" });
        let mut ingest = vec!["ingest", &s, "u.ops", "--history", "all", "--batch", "13"];
        if undirected {
            ingest.push("--undirected");
        }
        let input = p(d, "u.ops");
        ingest[2] = &input;
        ok(&ingest);
        for (kernel, every) in [("wcc", "2"), ("bfs", "1h"), ("sssp", "3")] {
            let (from, to) = ("@1000000000", "@1000040000");
            let mut args = vec![
                "run", &s, kernel, "--from", from, "--to", to, "--every", every,
            ];
            if kernel != "wcc" {
                args.extend(["--source", "3"]);
            }
            let out = ok(&args);
            let mut blocks = 0;
            for (head, lsn, values) in step_blocks(&out) {
                let mut again = vec!["run", &s, kernel, "--at", lsn];
                if kernel != "wcc" {
                    again.extend(["--source", "3"]);
                }
                let want = match values.starts_with("# vertex 3 is not") {
                    true => values.to_owned(),
                    false => ok(&again),
                };
                assert_eq!(values, want, "{kernel} at {head}, undirected {undirected}");
                blocks += 1;
            }
            assert!(blocks >= 8, "{kernel}: {blocks} steps");
        }
        pr_tol_steps_are_within_the_tolerance_of_each_point(&s);
    }
}

/// Rolling pr-tol, brought forward: every step's scores are within pr-tol's tolerance
/// (1e-4, L1) of the fixed point, as `run pr-tol --at` is, so the two differ by at most
/// twice that, over the same vertices.
fn pr_tol_steps_are_within_the_tolerance_of_each_point(s: &str) {
    let scores = |text: &str| -> std::collections::BTreeMap<String, f64> {
        (text.lines())
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| {
                let (v, x) = l.split_once(' ').unwrap();
                (v.to_owned(), x.parse().unwrap())
            })
            .collect()
    };
    let out = ok(&[
        "run",
        s,
        "pr-tol",
        "--from",
        "@1000000000",
        "--to",
        "@1000040000",
        "--every",
        "1",
    ]);
    let mut blocks = 0;
    for (head, lsn, values) in step_blocks(&out) {
        let (got, want) = (
            scores(values),
            scores(&ok(&["run", s, "pr-tol", "--at", lsn])),
        );
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "at {head}"
        );
        let l1: f64 = got.iter().map(|(v, x)| (x - want[v]).abs()).sum();
        assert!(l1 <= 2e-4, "pr-tol at {head}: L1 {l1} from a fresh pr-tol");
        blocks += 1;
    }
    assert!(blocks >= 8, "pr-tol: {blocks} steps");
}

/// The `# at` blocks of a rolling run's output: each block's head line, the commit LSN it
/// names, and its values.
fn step_blocks(out: &str) -> Vec<(&str, &str, &str)> {
    (out.split("# at ").skip(1))
        .map(|block| {
            let (head, values) = block.split_once('\n').unwrap();
            let lsn = (head.rsplit_once("commit LSN ").unwrap().1).trim_end_matches(')');
            (head, lsn, values)
        })
        .collect()
}
