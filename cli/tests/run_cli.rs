//! `evograph run` from the command line: Graphalytics output validated by check.py, GAP
//! kernels' JSON summaries, Pregel kernels agreeing with the hand-written ones, and clear
//! errors for bad requests.

mod common;

use common::graphalytics;
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_evograph")
}

fn evograph(args: &[&str]) -> std::process::Output {
    Command::new(bin()).args(args).output().unwrap()
}

#[test]
fn run_writes_graphalytics_output_and_gap_json() {
    let Some(root) = graphalytics() else { return };
    let g = root.join("example-directed");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = store.to_str().unwrap();
    let props = g.join("example-directed.properties");
    assert!(evograph(&["ingest", s, props.to_str().unwrap()])
        .status
        .success());
    for (kernel, algo, extra) in [
        ("bfs", "BFS", vec!["--source", "1"]),
        ("sssp", "SSSP", vec!["--source", "1"]),
        ("pr", "PR", vec!["--iterations", "2"]),
        ("cdlp", "CDLP", vec!["--iterations", "2"]),
        ("wcc", "WCC", vec![]),
        ("lcc", "LCC", vec![]),
    ] {
        let out = dir.path().join(kernel);
        let mut args = vec!["run", s, kernel, "-o", out.to_str().unwrap()];
        args.extend(extra);
        let r = evograph(&args);
        assert!(
            r.status.success(),
            "{kernel}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let check = Command::new("python3")
            .arg(root.join("check.py"))
            .arg(algo)
            .arg(g.join(format!("example-directed-{algo}")))
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "{kernel}: {}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
    for kernel in [
        "gap-bfs", "gap-pr", "gap-cc", "gap-sssp", "bc", "tc", "khop", "kcore", "lpa",
    ] {
        let r = evograph(&["run", s, kernel, "--json", "--verify", "--threads", "2"]);
        assert!(
            r.status.success(),
            "{kernel}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        assert_eq!(v["kernel"], kernel);
        assert!(
            v["seconds"].as_f64().is_some_and(|x| x >= 0.0),
            "{kernel}: {v}"
        );
        assert_eq!(v["vertices"], 10, "{kernel}: {v}");
        assert_eq!(v["edges"], 17, "{kernel}: {v}");
    }
    // The graph's 5 triangles of the undirected view, counted once each.
    let r = evograph(&["run", s, "tc"]);
    assert_eq!(String::from_utf8_lossy(&r.stdout).trim(), "5");
}

#[test]
fn run_refuses_bad_requests_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.el");
    std::fs::write(&input, "1 2\n2 3\n").unwrap();
    let store = dir.path().join("s");
    let s = store.to_str().unwrap();
    assert!(evograph(&["ingest", s, input.to_str().unwrap()])
        .status
        .success());
    for (args, msg) in [
        (vec!["run", s, "nope"], "unknown kernel"),
        (vec!["run", s, "bfs"], "needs --source"),
        (vec!["run", s, "bfs", "--source", "99"], "not in the graph"),
        (
            vec!["run", "/nonexistent/store", "pr"],
            "not an evograph store",
        ),
    ] {
        let r = evograph(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            err.starts_with("evograph: error:") && err.contains(msg),
            "{args:?}: {err}"
        );
    }
}

/// The Pregel kernels print what their hand-written counterparts print (PageRank up to the
/// last digits, since sums are added in another order), under either delivery mode, and a
/// run cut short by the superstep limit says so and exits 3.
#[test]
fn pregel_kernels_match_the_hand_written_ones() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.el");
    let store = dir.path().join("s");
    let (i, s) = (input.to_str().unwrap(), store.to_str().unwrap());
    assert!(evograph(&["generate", "kron", "--scale", "10", "-o", i])
        .status
        .success());
    assert!(evograph(&["ingest", s, i]).status.success());
    let values = |args: &[&str]| -> Vec<(u64, f64)> {
        let r = evograph(&[&["run", s][..], args].concat());
        assert!(
            r.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        String::from_utf8(r.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let (v, x) = l.split_once(' ').unwrap();
                (v.parse().unwrap(), x.parse().unwrap())
            })
            .collect()
    };
    let source = values(&["wcc"])[0].0.to_string();
    let src = source.as_str();
    for (hand, pregel, extra, deliveries) in [
        ("pr", "pregel-pr", vec![], &["push", "pull"][..]),
        ("wcc", "pregel-cc", vec![], &["push", "pull"][..]),
        (
            "bfs",
            "pregel-bfs",
            vec!["--source", src],
            &["push", "pull"][..],
        ),
        ("sssp", "pregel-sssp", vec!["--source", src], &["push"][..]),
    ] {
        let want = values(&[&[hand][..], &extra].concat());
        assert!(want.len() > 500, "{hand}: {} vertices", want.len());
        for d in deliveries {
            let got = values(&[&[pregel, "--delivery", d][..], &extra].concat());
            assert_eq!(got.len(), want.len(), "{pregel} {d}");
            for ((v, x), (w, y)) in got.iter().zip(&want) {
                assert_eq!(v, w, "{pregel} {d}");
                // Graphalytics pr rounds its contributions to f32 (within 1e-6 relative of
                // f64); the Pregel program and the other pairs agree to summation order.
                let tolerance = if hand == "pr" { 1e-6 } else { 1e-12 };
                let close = x == y || (x - y).abs() <= tolerance * y.abs();
                assert!(close, "{pregel} {d}: vertex {v} has {x}, {hand} says {y}");
            }
        }
    }

    let r = evograph(&[
        "run",
        s,
        "pregel-sssp",
        "--source",
        src,
        "--delivery",
        "pull",
    ]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("push delivery"), "{err}");

    let r = evograph(&["run", s, "pregel-pr", "--max-supersteps", "3", "--json"]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(3), "{err}");
    assert!(err.contains("superstep limit"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["halted"], false, "{v}");
    assert_eq!(v["supersteps"], 3, "{v}");
}

/// Kernels that pick their own start on an empty store: a clear error, never a panic
/// (they used to index an empty id array).
#[test]
fn kernels_that_pick_a_source_refuse_an_empty_graph() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = store.to_str().unwrap();
    let empty = dir.path().join("e.el");
    std::fs::write(&empty, "").unwrap();
    assert!(evograph(&["ingest", s, empty.to_str().unwrap()])
        .status
        .success());
    for k in ["gap-bfs", "gap-sssp", "bc", "khop"] {
        let r = evograph(&["run", s, k]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{k}: {err}");
        assert!(err.contains("no vertices to start from"), "{k}: {err}");
    }
    let r = evograph(&["run", s, "pr"]);
    assert!(r.status.success() && r.stdout.is_empty());
}

/// `--trials N` runs the kernel N times on one snapshot and reports the median time and
/// every trial's, with each trial's rounds and the median time per round; 0 trials is
/// refused.
#[test]
fn run_trials_report_each_time_and_their_median() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.el");
    std::fs::write(&input, "1 2\n2 3\n3 1\n3 4\n").unwrap();
    let store = dir.path().join("s");
    let s = store.to_str().unwrap();
    assert!(evograph(&["ingest", s, input.to_str().unwrap()])
        .status
        .success());
    let r = evograph(&["run", s, "gap-pr", "--json", "--trials", "3"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let mut t: Vec<f64> = v["trial_seconds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(t.len(), 3, "{v}");
    t.sort_by(f64::total_cmp);
    assert_eq!(v["seconds"].as_f64(), Some(t[1]), "{v}");
    let rounds: Vec<u64> = v["trial_iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(rounds.len(), 3, "{v}");
    assert!(rounds.iter().all(|&r| (1..=20).contains(&r)), "{v}");
    assert_eq!(
        v["iterations"].as_u64(),
        Some(rounds[2]),
        "the last trial's: {v}"
    );
    let times: Vec<f64> = v["trial_seconds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let mut per: Vec<f64> = times
        .iter()
        .zip(&rounds)
        .map(|(t, &r)| t / r as f64)
        .collect();
    per.sort_by(f64::total_cmp);
    assert_eq!(v["seconds_per_iteration"].as_f64(), Some(per[1]), "{v}");
    // A kernel without rounds reports none.
    let r = evograph(&["run", s, "wcc", "--json", "--trials", "2"]);
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert!(
        v.get("trial_iterations").is_none() && v.get("seconds_per_iteration").is_none(),
        "{v}"
    );
    // Vertex programs count supersteps.
    let r = evograph(&["run", s, "pregel-cc", "--json", "--trials", "2"]);
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(
        v["trial_supersteps"].as_array().map(|a| a.len()),
        Some(2),
        "{v}"
    );
    assert!(v["seconds_per_superstep"].as_f64().is_some(), "{v}");
    let r = evograph(&["run", s, "gap-pr", "--trials", "0"]);
    assert!(!r.status.success());
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("--trials"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
}
