//! Inputs with sparse external ids round-trip: ingest, export, and the same edges come back
//! with the same ids. Uses the LDBC Graphalytics validation graphs from ../shared (required
//! when CI=true).

mod common;

use common::graphalytics;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_evograph")
}

fn run(args: &[&str]) -> String {
    let out = Command::new(bin()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "evograph {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn pairs(text: &str) -> BTreeSet<(u64, u64)> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut it = l.split_whitespace().map(|x| x.parse::<u64>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect()
}

#[test]
fn graphalytics_graphs_round_trip_with_their_ids() {
    let Some(root) = graphalytics() else { return };
    let mut graphs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    graphs.sort();
    assert!(graphs.len() >= 14, "expected the 14 validation graphs");
    for g in graphs {
        let name = g.file_name().unwrap().to_str().unwrap().to_string();
        let props = g.join(format!("{name}.properties"));
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s");
        let s = store.to_str().unwrap();
        run(&["ingest", s, props.to_str().unwrap(), "--format", "ldbc"]);
        let exported = pairs(&run(&["export", s]));
        let edges_text = std::fs::read_to_string(g.join(format!("{name}.e"))).unwrap();
        let want: BTreeSet<(u64, u64)> = pairs(&edges_text);
        assert_eq!(
            exported, want,
            "{name}: exported edges differ from the .e file"
        );
        let stats: serde_json::Value = serde_json::from_str(&run(&["stats", s, "--json"])).unwrap();
        let vertices = std::fs::read_to_string(g.join(format!("{name}.v")))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count() as u64;
        assert_eq!(
            stats["vertices"].as_u64(),
            Some(vertices),
            "{name}: vertex count"
        );
        let undirected = edges_text.is_empty() || name.contains("undirected");
        assert_eq!(
            stats["undirected"].as_bool(),
            Some(undirected),
            "{name}: directedness"
        );
        let check = Command::new(bin()).args(["check", s]).output().unwrap();
        assert!(
            check.status.success(),
            "{name}: check failed: {}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
}

#[test]
fn sparse_snap_ids_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.txt");
    // Sparse, huge and repeated ids; duplicates and a self-loop.
    let edges = [
        (u64::MAX, 0u64),
        (1 << 40, u64::MAX),
        (5, 1 << 40),
        (5, 1 << 40),
        (987_654_321_012, 987_654_321_012),
        (0, 5),
    ];
    let mut text = String::from("# a comment\n% another\n");
    for (u, v) in edges {
        text.push_str(&format!("{u}\t{v}\n"));
    }
    std::fs::write(&input, text).unwrap();
    let store = dir.path().join("s");
    let s = store.to_str().unwrap();
    run(&["ingest", s, input.to_str().unwrap(), "--format", "snap"]);
    let want: BTreeSet<(u64, u64)> = edges.into_iter().collect();
    assert_eq!(pairs(&run(&["export", s])), want);
    // And again after a compaction, with the ids read back from the dictionary file.
    run(&["compact", s]);
    assert_eq!(pairs(&run(&["export", s])), want);
}

#[test]
fn weights_round_trip_even_when_the_first_line_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("w.txt");
    std::fs::write(&input, "1 2\n2 3 0.5\n3 1 1e-3\n2 3 7.25\n").unwrap();
    let store = dir.path().join("s");
    let s = store.to_str().unwrap();
    run(&["ingest", s, input.to_str().unwrap()]);
    // The re-insert of 2 -> 3 updates its weight; an edge given no weight gets 1.
    assert_eq!(run(&["export", s]), "1 2 1\n2 3 7.25\n3 1 0.001\n");
    run(&["compact", s]);
    assert_eq!(run(&["export", s]), "1 2 1\n2 3 7.25\n3 1 0.001\n");
}

/// Export prints edges sorted by (source, target) external ids, undirected edges once from
/// the smaller id, though dense ids (first appearance) and neighbor lists follow another
/// order, and across several runs.
#[test]
fn export_sorts_edges_by_external_ids() {
    let dir = tempfile::tempdir().unwrap();
    for (undirected, want) in [
        (false, "1 9\n5 2\n5 7\n5 9\n7 5\n9 1\n"),
        (true, "1 9\n2 5\n5 7\n5 9\n"),
    ] {
        let store = dir.path().join(format!("s{undirected}"));
        let s = store.to_str().unwrap();
        let first = dir.path().join("a.el");
        std::fs::write(&first, "5 9\n5 2\n9 1\n").unwrap();
        let mut args = vec!["ingest", s, first.to_str().unwrap()];
        if undirected {
            args.push("--undirected");
        }
        run(&args);
        let second = dir.path().join("b.el");
        std::fs::write(&second, "5 7\n1 9\n7 5\n").unwrap();
        run(&["ingest", s, second.to_str().unwrap()]);
        assert_eq!(run(&["export", s]), want, "undirected {undirected}");
    }
}
