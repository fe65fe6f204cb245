//! `evograph bench` at a tiny scale: every figure the issue names is in the JSON, the
//! parameters, revision and machine are recorded, and the store it leaves holds exactly
//! the edges inserted minus the edges deleted.

mod common;

use common::{assert_no_panic, evograph, parse_export};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

const KERNELS: &[&str] = &[
    "gap-bfs", "gap-pr", "gap-cc", "bc", "tc", "gap-sssp", "bfs", "pr", "wcc", "cdlp", "lcc",
    "sssp",
];

fn bench(dir: &Path, extra: &[&str]) -> Value {
    let json = dir.join("bench.json");
    let mut args: Vec<String> = [
        "bench",
        "--scale",
        "9",
        "--edge-factor",
        "8",
        "--threads",
        "2",
        "--batch",
        "256",
        "--trials",
        "2",
        "--seed",
        "7",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(["--dir".into(), dir.join("work").display().to_string()]);
    args.extend(["--json".into(), json.display().to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = evograph(&args);
    assert_no_panic(&out, "bench");
    assert!(
        out.status.success(),
        "bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("meps") && table.contains("live/csr"),
        "{table}"
    );
    if !extra.contains(&"--kernels") {
        for k in KERNELS {
            assert!(table.contains(k), "table lacks kernel {k}:\n{table}");
        }
        assert!(
            table.contains("push/pull"),
            "table lacks the pregel grid:\n{table}"
        );
    }
    serde_json::from_slice(&std::fs::read(&json).unwrap()).expect("bench JSON parses")
}

fn at<'a>(j: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(j, |v, k| {
        v.get(k).unwrap_or_else(|| panic!("JSON lacks {path}"))
    })
}

fn number(j: &Value, path: &str) -> f64 {
    at(j, path)
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number: {}", at(j, path)))
}

/// The edges of a binary edge list the bench left, read through `io` as `ingest` reads it.
fn edges_of(path: &Path) -> Vec<(u64, u64)> {
    let mut src = evograph::io::open_source(path, evograph::io::Format::Bin).unwrap();
    let (mut out, mut buf) = (Vec::new(), Vec::new());
    loop {
        buf.clear();
        let more = src.next_batch(1 << 16, &mut buf).unwrap();
        out.extend(buf.iter().map(|r| match *r {
            evograph::Record::Insert(u, v) => (u, v),
            ref other => panic!("{}: unexpected record {other:?}", path.display()),
        }));
        if !more {
            return out;
        }
    }
}

#[test]
fn bench_reports_every_figure_and_leaves_inserted_minus_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let j = bench(tmp.path(), &[]);
    for f in [
        "ingest.meps",
        "ingest.batch_p50_ms",
        "ingest.batch_p99_ms",
        "ingest.to_exit_seconds",
        "ingest.to_exit_over_csr",
        "restart.clean_seconds",
        "restart.crash_seconds",
        "restart.wal_bytes_replayed",
        "bytes_per_edge.written",
        "bytes_per_edge.medium",
        "bytes_per_edge.dram",
        "bytes_per_edge.csr",
        "delete.seconds",
        "delete.compact_seconds",
        "delete.medium_bytes_before",
        "delete.medium_bytes_after",
    ] {
        assert!(number(&j, f) > 0.0, "{f} = {}", number(&j, f));
    }
    for k in KERNELS {
        for f in [
            "live_seconds",
            "compacted_seconds",
            "csr_seconds",
            "ratio_live",
            "ratio_compacted",
        ] {
            assert!(number(&j, &format!("kernels.{k}.{f}")) > 0.0, "{k}.{f}");
        }
        // The ratio is each trial's live time over its CSR time, then the median.
        let raw = at(&j, "trials_raw").as_array().unwrap();
        assert_eq!(raw.len(), 2);
        let r: Vec<f64> = raw
            .iter()
            .map(|t| {
                number(t, &format!("kernels.{k}.live_seconds"))
                    / number(t, &format!("kernels.{k}.csr_seconds"))
            })
            .collect();
        let want = (r[0] + r[1]) / 2.0;
        let got = number(&j, &format!("kernels.{k}.ratio_live"));
        assert!((got - want).abs() <= 1e-9 * want, "{k}: {got} vs {want}");
        // And on the live snapshots with deletes, against CSRs of the edges left.
        for leg in ["deletes", "unflushed_deletes"] {
            for f in [
                format!("{leg}_seconds"),
                format!("{leg}_csr_seconds"),
                format!("ratio_{leg}"),
            ] {
                assert!(number(&j, &format!("kernels.{k}.{f}")) > 0.0, "{k}.{f}");
            }
        }
    }
    // The deletion phase's live snapshot holds its deletes in two newer runs (one flushed,
    // the sealed memtable); the unflushed 10% in one. Both are read through the layered
    // view (its index time is null when the general walk had to serve).
    assert!(number(&j, "delete.deletes_live_runs") >= 3.0);
    assert_eq!(number(&j, "delete.unflushed_deletes_live_runs"), 2.0);
    assert!(number(&j, "delete.deletes_view_seconds") > 0.0);
    assert!(number(&j, "delete.unflushed_deletes_view_seconds") > 0.0);
    // Pregel programs against the hand-written kernels, push against pull (SSSP: push only).
    for prog in ["pr", "cc", "bfs", "sssp"] {
        for f in [
            "seconds",
            "hand_seconds",
            "ratio",
            "ratio_live",
            "push_seconds",
            "gteps",
            "supersteps",
        ] {
            assert!(
                number(&j, &format!("pregel.{prog}.{f}")) > 0.0,
                "{prog}.{f}"
            );
        }
        let pull = at(&j, &format!("pregel.{prog}.pull_seconds"));
        assert_eq!(pull.is_null(), prog == "sssp", "{prog}: {pull}");
    }
    assert_eq!(number(&j, "params.scale"), 9.0);
    assert_eq!(at(&j, "params.durability"), "sync");
    assert!(!at(&j, "git_revision").as_str().unwrap().is_empty());
    assert!(number(&j, "machine.cores") >= 1.0);
    assert!(number(&j, "machine.memory_bytes") > 0.0);
    // The live snapshot is the compacted base plus the unflushed last 10%.
    assert_eq!(number(&j, "snapshot.live_runs"), 2.0);
    // The child was killed halfway: it had acknowledged at least half, not everything.
    let inserted = number(&j, "graph.edges_inserted");
    let acked = number(&j, "restart.crash_acked_edges");
    assert!(
        acked >= inserted / 2.0 && acked < inserted,
        "acked {acked} of {inserted}"
    );
    assert!(number(&j, "delete.medium_bytes_after") < number(&j, "delete.medium_bytes_before"));
    // Written bytes by cause: the log and the flushes are there, and the causes never add
    // up to more than everything written (the rest is dictionary and manifest).
    let by_cause: f64 = ["wal", "flush", "merge", "pause"]
        .iter()
        .map(|c| number(&j, &format!("bytes_per_edge.written_{c}")))
        .sum();
    assert!(number(&j, "bytes_per_edge.written_wal") > 0.0);
    assert!(number(&j, "bytes_per_edge.written_flush") > 0.0);
    // (At this size the first flush already gives one dense run: the pause may merge nothing.)
    assert!(number(&j, "bytes_per_edge.written_pause") >= 0.0);
    assert!(number(&j, "bytes_per_edge.written_merge") >= 0.0);
    assert!(by_cause <= number(&j, "bytes_per_edge.written") * (1.0 + 1e-9));

    // The store left behind holds the inserted edges minus the deleted ones.
    let work = tmp.path().join("work");
    let inserted: BTreeSet<(u64, u64)> = edges_of(&work.join("edges.bin")).into_iter().collect();
    let deleted: BTreeSet<(u64, u64)> = edges_of(&work.join("deleted.bin")).into_iter().collect();
    assert_eq!(inserted.len() as f64, number(&j, "graph.edges_unique"));
    // The deletion phase's 4%, then 10% more left unflushed.
    assert_eq!(
        (inserted.len() * 4 / 100) as f64,
        number(&j, "delete.edges")
    );
    assert_eq!(deleted.len(), inserted.len() * 14 / 100);
    assert!(deleted.is_subset(&inserted));
    let out = evograph(["export".as_ref(), work.join("store").as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: BTreeSet<_> = inserted.difference(&deleted).copied().collect();
    assert_eq!(parse_export(&out.stdout), want);
}

#[test]
fn bench_on_the_memory_medium_reports_no_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let j = bench(
        tmp.path(),
        &[
            "--medium",
            "memory",
            "--durability",
            "none",
            "--kernels",
            "bfs,tc",
        ],
    );
    assert!(at(&j, "restart.clean_seconds").is_null());
    assert!(at(&j, "restart.crash_seconds").is_null());
    assert!(number(&j, "ingest.meps") > 0.0);
    assert!(number(&j, "kernels.tc.ratio_compacted") > 0.0);
    assert!(at(&j, "kernels").get("pr").is_none());
    assert!(number(&j, "delete.medium_bytes_after") < number(&j, "delete.medium_bytes_before"));
}

#[test]
fn bench_refuses_bad_arguments_clearly() {
    for (args, msg) in [
        (vec!["--kernels", "bfs,nope"], "unknown kernel 'nope'"),
        (vec!["--medium", "tape"], "unknown medium 'tape'"),
        (vec!["--trials", "0"], "0 is not in 1..=1000"),
        (
            vec!["--graph", "/nonexistent/graph.el"],
            "/nonexistent/graph.el",
        ),
    ] {
        let mut all = vec!["bench", "--scale", "5"];
        all.extend(&args);
        let out = evograph(&all);
        assert_no_panic(&out, &format!("{args:?}"));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}

/// `--memory-limit`: ingest and kernels run as children in a capped and an uncapped cgroup,
/// and both legs report every step. Needs root and a memory cgroup hierarchy; says so and
/// returns without them.
#[test]
fn bench_under_a_memory_limit_reports_both_legs() {
    let writable = ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"].iter().any(|d| {
        let probe = Path::new(d).join(format!("evograph-probe-{}", std::process::id()));
        let ok = std::fs::create_dir(&probe).is_ok();
        let _ = std::fs::remove_dir(&probe);
        ok
    });
    if !writable {
        eprintln!("skipped: creating a memory cgroup needs root");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("capped.json");
    let out = evograph([
        "bench",
        "--scale",
        "12",
        "--memtable-mb",
        "1",
        "--memory-limit",
        "96M",
        "--kernels",
        "gap-pr,wcc",
        "--dir",
        tmp.path().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_no_panic(&out, "bench --memory-limit");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    for row in ["ingest", "kernels.gap-pr", "kernels.wcc"] {
        assert!(table.contains(row), "no {row} row:\n{table}");
    }
    let j: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(at(&j, "capped.limit_bytes").as_u64(), Some(96 << 20));
    for leg in ["uncapped", "capped"] {
        for step in ["ingest", "kernels.gap-pr", "kernels.wcc"] {
            let s = &j["capped"]["legs"][leg][step];
            assert!(s["seconds"].as_f64().unwrap() > 0.0, "{leg} {step}: {s}");
            assert!(
                s["peak_rss_bytes"].as_u64().unwrap() > 0,
                "{leg} {step}: {s}"
            );
        }
        let kernel = &j["capped"]["legs"][leg]["kernels.gap-pr"]["kernel_seconds"];
        assert!(
            kernel.as_f64().is_some(),
            "{leg}: the kernel's own time: {kernel}"
        );
        assert!(number(&j, &format!("capped.legs.{leg}.store_bytes")) > 0.0);
    }
    let peak = &j["capped"]["legs"]["capped"]["ingest"]["cgroup_peak_bytes"];
    if let Some(p) = peak.as_u64() {
        assert!(
            p <= 96 << 20,
            "the capped leg's charge {p} exceeds its limit"
        );
    }
    let left: Vec<_> = ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("evograph-bench-")
        })
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "cgroups left behind: {left:?}");
}

#[test]
fn bench_with_compress_reports_sizes_kernel_ratios_and_packed_lookups() {
    let tmp = tempfile::tempdir().unwrap();
    let kernels = ["gap-pr", "bfs", "lcc"];
    let j = bench(tmp.path(), &["--compress", "--kernels", &kernels.join(",")]);
    let (packed, plain) = (
        number(&j, "compress.bytes_per_edge.runs"),
        number(&j, "compress.bytes_per_edge.runs_plain"),
    );
    assert!(
        packed > 0.0 && packed < plain,
        "packed {packed}, plain {plain} B/edge"
    );
    assert!((number(&j, "compress.size_ratio") - packed / plain).abs() < 1e-9);
    assert!(number(&j, "compress.ingest_ratio") > 0.0);
    for k in kernels {
        let r = number(&j, &format!("compress.kernels.{k}.ratio"));
        assert!(r.is_finite() && r > 0.0, "{k}: ratio {r}");
        assert!(number(&j, &format!("compress.kernels.{k}.seconds")) > 0.0);
    }
    for kind in ["existing", "absent"] {
        for view in [
            "packed_compacted_mlps",
            "packed_live_mlps",
            "compacted_mlps",
        ] {
            assert!(
                number(&j, &format!("lookup.{kind}.{view}")) > 0.0,
                "{kind} {view}"
            );
        }
    }
}

#[test]
fn bench_history_reports_its_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("h.json");
    let out = common::evograph([
        "bench",
        "--history",
        "--scale",
        "8",
        "--dir",
        tmp.path().join("w").to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for f in [
        "history.ingest.speed_ratio",
        "history.latest_kernels.gap-pr.ratio",
        "history.open_at_s.latest",
        "history.open_at_s.bulk_load.seconds",
        "history.open_at_s.middle_round.seconds",
        "history.gap_at_points.bulk_load.kernels.tc.ratio",
        "history.gap_at_points.middle_round.kernels.gap-bfs.ratio",
        "history.gap_at_points.last_round.kernels.gap-pr.ratio",
        "history.diff.ns_per_change",
        "history.versions.compact_s",
        "history.versions.bytes.versions",
        "history.versions.open_at_s.middle_round.seconds",
        "history.versions.gap_at_points.middle_round.kernels.gap-bfs.ratio",
    ] {
        assert!(number(&j, f) > 0.0, "{f}");
    }
    // The points in commit order, the last the newest commit.
    let lsn = |p: &str| number(&j, &format!("history.gap_at_points.{p}.lsn"));
    assert!(lsn("bulk_load") < lsn("middle_round") && lsn("middle_round") < lsn("last_round"));
    // 20 rounds, each at least one commit, after the graph's batches.
    assert!(number(&j, "history.commits") >= 21.0);
    // Changes cost 12 B in a segment, a record 8 B in the log plus block headers.
    let ratio = number(&j, "history.bytes.ratio");
    assert!(
        ratio > 0.5 && ratio < 2.0,
        "history bytes / WAL bytes {ratio}"
    );
}
