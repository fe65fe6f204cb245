//! The command line as a new user meets it (issue 9): each test runs the user's exact
//! command in a scratch directory and checks the message or output they get.

mod common;

use common::assert_no_panic;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// A scratch directory to run commands in, with relative paths like a user's.
struct Shell {
    dir: tempfile::TempDir,
}

/// What a command printed and how it ended.
struct Ran {
    code: Option<i32>,
    out: String,
    err: String,
}

impl Shell {
    fn new() -> Shell {
        Shell {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, content: &str) {
        std::fs::write(self.path(name), content).unwrap();
    }

    /// Runs `evograph <line>` (split at spaces) in the scratch directory.
    fn run(&self, line: &str) -> Ran {
        let out: Output = Command::new(env!("CARGO_BIN_EXE_evograph"))
            .args(line.split_whitespace())
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_no_panic(&out, line);
        Ran {
            code: out.status.code(),
            out: String::from_utf8_lossy(&out.stdout).into_owned(),
            err: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs a command that must succeed; its stdout.
    fn ok(&self, line: &str) -> String {
        let r = self.run(line);
        assert_eq!(r.code, Some(0), "{line}: {}{}", r.out, r.err);
        r.out
    }

    /// Runs a command that must fail with one clear error line containing every `want`.
    fn fails(&self, line: &str, want: &[&str]) -> Ran {
        let r = self.run(line);
        assert_eq!(r.code, Some(2), "{line} should fail: {}{}", r.out, r.err);
        assert!(r.err.contains("evograph: error: "), "{line}: {}", r.err);
        for w in want {
            assert!(r.err.contains(w), "{line}: {:?} lacks {w:?}", r.err);
        }
        r
    }

    fn exists(&self, name: &str) -> bool {
        self.path(name).exists()
    }
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

const FIVE_CYCLE: &str = "5 5\n2 5\n1 3\n2 4\n3 5\n4 1\n";

#[test]
fn item1_a_metis_file_is_never_taken_for_an_edge_list() {
    let sh = Shell::new();
    sh.write("mesh", FIVE_CYCLE);
    sh.fails(
        "ingest S mesh",
        &[
            "mesh",
            "edge list",
            "METIS",
            "--format snap or --format metis",
        ],
    );
    assert!(!sh.exists("S"), "a refused input creates no store");
    sh.ok("ingest S mesh --format metis");
    assert_eq!(
        lines(&sh.ok("export S")),
        ["1 2", "1 5", "2 3", "3 4", "4 5"]
    );
    assert!(sh.ok("stats S").contains("undirected"));
}

#[test]
fn item1_a_wide_metis_file_is_detected_and_a_broken_one_explained() {
    let sh = Shell::new();
    // K5: four neighbours a line, which no edge list has.
    sh.write(
        "k5",
        "% K5\n5 10\n2 3 4 5\n1 3 4 5\n1 2 4 5\n1 2 3 5\n1 2 3 4\n",
    );
    sh.ok("ingest S k5");
    assert_eq!(lines(&sh.ok("export S")).len(), 10);
    // Weighted METIS (fmt 1) with a missing line: the header disagrees, the store is not made.
    sh.write("w.graph", "3 2 1\n2 7\n1 7 3 2\n");
    sh.fails(
        "ingest W w.graph",
        &["w.graph:3", "2 of the 3 vertex lines"],
    );
    assert!(!sh.exists("W"));
    sh.write("w.graph", "3 2 1\n2 7\n1 7 3 2\n2 2\n");
    sh.ok("ingest W w.graph");
    assert_eq!(lines(&sh.ok("export W")), ["1 2 7", "2 3 2"]);
}

#[test]
fn item2_weighted_ops_without_validation_leave_no_broken_store() {
    let sh = Shell::new();
    sh.write("flights.ops", "+ 9 121\n+ 121 7 2.5\n- 9 121\n");
    let r = sh.fails(
        "ingest S flights.ops --no-validate",
        &["has a weight but the store is unweighted", "--weighted"],
    );
    assert!(r.err.contains("was removed"), "{}", r.err);
    assert!(!sh.exists("S"), "the failed command's store is gone");
    sh.ok("ingest S flights.ops --no-validate --weighted");
    assert_eq!(lines(&sh.ok("export S")), ["121 7 2.5"]);
    assert!(sh.ok("stats S").contains("weighted"));
    // An existing store is kept as it is when a later ingest fails.
    sh.write("bad.el", "1 2\nx y\n");
    sh.fails("ingest S bad.el --no-validate --format snap", &["bad.el:2"]);
    assert_eq!(lines(&sh.ok("export S")), ["121 7 2.5"]);
    // --weighted on an unweighted store is refused, not ignored.
    sh.write("u.el", "1 2\n");
    sh.ok("ingest U u.el");
    sh.fails("ingest U u.el --weighted", &["unweighted", "weighted"]);
}

#[test]
fn item2_a_failed_creation_inside_an_empty_directory_keeps_the_directory() {
    let sh = Shell::new();
    std::fs::create_dir(sh.path("empty")).unwrap();
    sh.write("f.ops", "+ 1 2 0.5\n");
    // The first line says weighted, so this one works; a later weighted line does not.
    sh.write("late.ops", "+ 1 2\n+ 2 3 0.5\n");
    sh.fails("ingest empty late.ops --no-validate", &["unweighted"]);
    assert!(sh.exists("empty"), "a directory the user made stays");
    assert_eq!(std::fs::read_dir(sh.path("empty")).unwrap().count(), 0);
    // Nested new directories go too.
    sh.fails("ingest a/b/c late.ops --no-validate", &["unweighted"]);
    assert!(!sh.exists("a"));
}

#[test]
fn item2_records_acknowledged_before_a_failure_are_kept() {
    let sh = Shell::new();
    // Two batches of two get acknowledged; the bad line stops the third.
    sh.write(
        "late.el",
        "1 2
2 3
3 4
4 5
5 6
x y
",
    );
    let r = sh.fails(
        "ingest S late.el --no-validate --format snap --batch 2 --print-acks",
        &[
            "late.el:6",
            "keeps the first 4 records, acknowledged before the error",
        ],
    );
    assert!(r.out.contains("acked 4"), "{}", r.out);
    let kept = sh.ok("export S");
    assert!(
        lines(&kept).starts_with(&["1 2", "2 3", "3 4", "4 5"]),
        "{kept}"
    );
    assert!(sh.ok("check S").starts_with("sound"));
}

#[test]
fn item2_a_refused_batch_acknowledges_the_batches_in_flight_before_it() {
    let sh = Shell::new();
    // Without validation the weight on line 7 is found only when its batch is submitted,
    // with the three batches before it still in flight and the log healthy: they are
    // durable, so they are acknowledged before the error, and the new store is kept.
    sh.write(
        "late.ops",
        "+ 1 2\n+ 2 3\n+ 3 4\n+ 4 5\n+ 5 6\n+ 6 7\n+ 7 8 0.5\n+ 8 9\n",
    );
    let r = sh.fails(
        "ingest S late.ops --no-validate --batch 2 --in-flight 4 --print-acks",
        &[
            "has a weight but the store is unweighted",
            "keeps the first 6 records, acknowledged before the error",
        ],
    );
    let acks: Vec<&str> = r.out.lines().filter(|l| l.starts_with("acked")).collect();
    assert_eq!(acks, ["acked 2", "acked 4", "acked 6"], "{}", r.out);
    assert!(!r.err.contains("was removed"), "{}", r.err);
    assert_eq!(
        lines(&sh.ok("export S")),
        ["1 2", "2 3", "3 4", "4 5", "5 6", "6 7"]
    );
    assert!(sh.ok("check S").starts_with("sound"));
}

#[test]
fn item3_negative_weights_are_refused_by_shortest_paths_in_user_ids() {
    let sh = Shell::new();
    sh.write("neg.wel", "10 20 1\n20 30 -3\n10 30 5\n");
    sh.ok("ingest S neg.wel");
    for k in ["sssp", "gap-sssp"] {
        sh.fails(
            &format!("run S {k} --source 10"),
            &["edge 20 -> 30 has weight -3", "non-negative"],
        );
    }
    // Other kernels do not care about weights.
    sh.ok("run S bfs --source 10");
}

#[test]
fn item3_verifier_messages_name_the_users_vertices() {
    // Reach into the library the way the CLI's --verify does, with a wrong result: the
    // message must name external ids (here 1000 + dense id) rather than dense ones.
    use evograph::{Graph, Options, Record};
    let d = tempfile::tempdir().unwrap();
    let g = Graph::create(d.path().join("s"), Options::new().weighted(Some(true))).unwrap();
    g.apply(&[
        Record::InsertWeighted(1000, 1001, 1.0),
        Record::InsertWeighted(1001, 1002, 1.0),
    ])
    .unwrap();
    let s = g.snapshot().unwrap();
    let src = g.dense_id(1000).unwrap().unwrap();
    let mut d = evograph::algo::gap::sssp::delta_stepping(&s, src, 1.0);
    let v = g.dense_id(1002).unwrap().unwrap();
    d[v as usize] = 7.0;
    let msg = evograph::algo::gap::sssp::verify(&s, src, &d).unwrap_err();
    assert!(msg.starts_with("vertex 1002:"), "{msg}");
    let mut p = evograph::algo::gap::bfs::bfs(&s, src);
    p[v as usize] = -1;
    let msg = evograph::algo::gap::bfs::verify(&s, src, &p).unwrap_err();
    assert!(msg.contains("vertex 1002"), "{msg}");
    g.close().unwrap();
}

#[test]
fn item10_csv_and_tsv_with_a_header_line() {
    let sh = Shell::new();
    sh.write("deps.csv", "package,depends\n1,2\n2,3\n");
    sh.fails(
        "ingest S deps.csv",
        &[
            "deps.csv:1",
            "'package' is not an unsigned integer",
            "--header",
        ],
    );
    assert!(!sh.exists("S"));
    sh.ok("ingest S deps.csv --header");
    assert_eq!(lines(&sh.ok("export S")), ["1 2", "2 3"]);
    sh.write("syn.tsv", "from\tto\tweight\n1\t2\t0.5\n");
    sh.ok("ingest T syn.tsv --header");
    assert_eq!(lines(&sh.ok("export T")), ["1 2 0.5"]);
    sh.write("semi.txt", "a;b\n1;2\n");
    sh.ok("ingest U semi.txt --delimiter ; --header");
    assert_eq!(lines(&sh.ok("export U")), ["1 2"]);
    // No extension, a header over comma-separated lines: the hint names both flags.
    sh.write("deps", "src,dst\n1,2\n");
    sh.fails("ingest V deps", &["--format csv --header"]);
    sh.fails(
        "ingest V deps.csv --delimiter 1",
        &["cannot separate fields"],
    );
    sh.fails("ingest V mesh.mtx --header", &["--header"]);
}

/// First column of every line, parsed as an external id.
fn ids(out: &str) -> Vec<u64> {
    out.lines()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn item5_per_vertex_outputs_are_sorted_by_external_id_with_one_unreachable_convention() {
    let sh = Shell::new();
    // Ids arrive out of order, and 5 and 7 cannot be reached from 30.
    sh.write("g.wel", "30 10 1\n20 30 1\n10 20 2\n5 30 1\n7 7 1\n");
    sh.ok("ingest S g.wel");
    let want = vec![5, 7, 10, 20, 30];
    for k in [
        "bfs --source 30",
        "sssp --source 30",
        "pr",
        "wcc",
        "cdlp",
        "lcc",
        "gap-bfs --source 30",
        "gap-sssp --source 30",
        "gap-pr",
        "gap-cc",
        "bc",
    ] {
        assert_eq!(ids(&sh.ok(&format!("run S {k}"))), want, "{k}");
    }
    let bfs = sh.ok("run S bfs --source 30");
    assert!(bfs.contains("5 9223372036854775807\n"), "{bfs}");
    assert!(bfs.contains("30 0\n"), "{bfs}");
    let sssp = sh.ok("run S sssp --source 30");
    assert!(
        sssp.contains("5 Infinity\n") && sssp.contains("20 3.0"),
        "{sssp}"
    );
    let gsssp = sh.ok("run S gap-sssp --source 30");
    assert!(gsssp.contains("7 Infinity\n"), "{gsssp}");
    // gap-bfs prints parents: the source is its own, unreachable ones have -1.
    let parents = sh.ok("run S gap-bfs --source 30");
    assert!(
        parents.contains("30 30\n") && parents.contains("10 30\n"),
        "{parents}"
    );
    assert!(parents.contains("5 -1\n"), "{parents}");
}

#[test]
fn item5_khop_and_tc_write_documented_parseable_output() {
    let sh = Shell::new();
    sh.write("g.el", "1 2\n2 3\n3 1\n2 4\n4 1\n9 1\n");
    sh.ok("ingest S g.el");
    // Source 1: 2 at one hop; 3 and 4 at two; 1 itself (reached again via 3) never listed.
    assert_eq!(
        lines(&sh.ok("run S khop --source 1")),
        ["2 1", "3 2", "4 2"]
    );
    let help = sh.ok("run --help");
    assert!(help.contains("khop: `<external id> <hops>`") && help.contains("never listed"));
    assert!(help.contains("gap-bfs: the BFS *parent*"), "{help}");
    assert!(help.contains("sorted by external id"), "{help}");
    // tc: one number, and a directed store is told it counts undirected triangles.
    let r = sh.run("run S tc --output tc.txt");
    assert_eq!(r.code, Some(0));
    assert_eq!(std::fs::read_to_string(sh.path("tc.txt")).unwrap(), "2\n");
    assert!(
        r.err.contains("counts triangles of the undirected graph"),
        "{}",
        r.err
    );
    assert!(help.contains("tc: one line, the number of triangles of the undirected graph"));
}

#[test]
fn item6_bc_follows_gapbs_and_says_so() {
    let sh = Shell::new();
    sh.write("path.el", "1 2\n2 3\n");
    sh.ok("ingest S path.el");
    // GAPBS credits the source with its dependency: 2, 1, 0, normalized.
    let out = sh.ok("run S bc --source 1 --samples 1 --verify");
    assert_eq!(
        lines(&out),
        [
            "1 1.000000000000000e+00",
            "2 5.000000000000000e-01",
            "3 0.000000000000000e+00"
        ]
    );
    let help = sh.ok("run --help");
    assert!(
        help.contains("GAPBS's convention: each source is credited with its own dependency"),
        "{help}"
    );
}

#[test]
fn item7_json_with_output_writes_the_file_and_verify_says_when_it_checked_nothing() {
    let sh = Shell::new();
    sh.write("g.el", "1 2\n2 3\n3 1\n3 4\n");
    sh.ok("ingest S g.el");
    let out = sh.ok("run S pr --json --output pr.txt");
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["output"], "pr.txt");
    assert_eq!(
        ids(&std::fs::read_to_string(sh.path("pr.txt")).unwrap()),
        [1, 2, 3, 4]
    );
    // Capped before converging: --verify must say it verified nothing.
    let r = sh.run("run S gap-pr --iterations 1 --tolerance 1e-12 --verify --json");
    assert_eq!(r.code, Some(0));
    assert!(r.err.contains("verification checked nothing"), "{}", r.err);
    let j: serde_json::Value = serde_json::from_str(r.out.trim()).unwrap();
    assert_eq!(j["verified"], false);
    let j: serde_json::Value =
        serde_json::from_str(sh.ok("run S gap-pr --verify --json").trim()).unwrap();
    assert_eq!(j["verified"], true);
}

#[test]
fn item8_stats_counts_edges_as_export_does_and_reports_the_real_durability() {
    let sh = Shell::new();
    sh.write("u.el", "1 2\n2 3\n3 3\n");
    sh.ok("ingest S u.el --undirected");
    let export = sh.ok("export S");
    assert_eq!(lines(&export).len(), 3);
    let j: serde_json::Value = serde_json::from_str(&sh.ok("stats S --json")).unwrap();
    assert_eq!(j["edges"], 3, "{j}");
    assert_eq!(j["adjacency_entries"], 5, "{j}");
    assert_eq!(j["durability"], "sync", "{j}");
    assert_eq!(j["read_only"], true, "{j}");
    assert!(sh
        .ok("stats S")
        .contains("edges           3 (each undirected edge once"));
    sh.write("more.el", "7 8\n");
    sh.ok("ingest S more.el --durability interval=50");
    let j: serde_json::Value = serde_json::from_str(&sh.ok("stats S --json")).unwrap();
    assert_eq!(j["durability"], "interval=50", "{j}");
    // The ingest summary reports the validation pass apart, and the time start to exit.
    let summary = sh.ok("ingest T u.el");
    assert!(
        summary.contains("validation pass") && summary.contains("start to exit"),
        "{summary}"
    );
}

#[test]
fn item9_numeric_flags_are_range_checked_and_default_weights_documented() {
    let sh = Shell::new();
    sh.write("w.wel", "1 2 0.5\n2 3\n");
    sh.ok("ingest S w.wel");
    // An unweighted line in a weighted store weighs 1, as `ingest --help` says.
    assert_eq!(lines(&sh.ok("export S")), ["1 2 0.5", "2 3 1"]);
    assert!(sh.ok("ingest --help").contains("gets weight 1"));
    for (cmd, want) in [
        ("run S pr --damping 1.5", "1.5 is not in [0, 1)"),
        ("run S pr --damping -1", "-1 is not in [0, 1)"),
        (
            "run S gap-sssp --delta nan",
            "nan is not a finite number above 0",
        ),
        (
            "run S gap-pr --tolerance -0.5",
            "-0.5 is not a finite number of 0 or more",
        ),
        ("run S pr --iterations 0", "0 is not in 1..=1000000"),
        ("run S bc --samples -2", "-2 is not in 1..=1000000"),
        ("run S pr --threads 5000", "5000 is not in 0..=1024"),
        ("ingest S w.wel --batch -5", "-5 is not in 1..=16777216"),
        ("ingest S w.wel --memtable-mb 0", "0 is not in 1..="),
        ("generate kron --scale 40 -o x.el", "40 is not in 1..=31"),
        ("run S pr --iterations many", "'many' is not a whole number"),
    ] {
        let r = sh.fails(cmd, &[want]);
        assert_eq!(r.err.lines().count(), 1, "{cmd}: one line, got {:?}", r.err);
    }
    // A tolerance of 0 runs every sweep, as GAPBS's `pr -t 0`: a benchmark's fixed work.
    let report = sh.ok("run S gap-pr --iterations 3 --tolerance 0 --json");
    assert!(report.contains("\"iterations\":3"), "{report}");
}

#[test]
fn input_from_a_pipe_is_read_once_and_whole() {
    // Sniffing the head of a pipe used to swallow its first 64 KiB, and a validation pass
    // would read all of it before the real one: both lost data without a word.
    let sh = Shell::new();
    let text: String = (0..20_000u64).map(|i| format!("{i} {}\n", i + 1)).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_evograph"))
        .args(["ingest", "S", "/dev/stdin", "--format", "snap"])
        .current_dir(sh.dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no validation pass"));
    assert_eq!(lines(&sh.ok("export S")).len(), 20_000);
    // Without --format there is nothing to go by: refused, not guessed.
    let r = Command::new(env!("CARGO_BIN_EXE_evograph"))
        .args(["ingest", "T", "/dev/stdin"])
        .current_dir(sh.dir.path())
        .stdin(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("it is a pipe"));
    assert!(!sh.exists("T"));
}
