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
    let g = Graph::open(
        d.path().join("s"),
        Options {
            weighted: Some(true),
            ..Options::default()
        },
    )
    .unwrap();
    g.apply(&[
        Record::InsertWeighted(1000, 1001, 1.0),
        Record::InsertWeighted(1001, 1002, 1.0),
    ])
    .unwrap();
    let s = g.snapshot().unwrap();
    let src = g.dense_id(1000).unwrap();
    let mut d = evograph::algo::gap::sssp::delta_stepping(&s, src, 1.0);
    let v = g.dense_id(1002).unwrap();
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
