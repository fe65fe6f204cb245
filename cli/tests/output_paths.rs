//! No path a command writes destroys data (issue 64, item 1): an output inside a store, or
//! the same file as an input or a store file, is refused before anything is written; an
//! existing file is replaced only when the command succeeds; `--changes` keeps what a file
//! holds unless told otherwise.

mod common;

use common::{assert_no_panic, evograph};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

fn run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    let out = evograph(args);
    let ctx: Vec<_> = args.iter().map(|a| a.as_ref().to_owned()).collect();
    assert_no_panic(&out, &format!("{ctx:?}"));
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A refusal: exit 2, one line naming `path`.
fn assert_refused(out: &Output, path: &str, ctx: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{ctx}: {err}");
    assert_eq!(err.lines().count(), 1, "{ctx}: not one line: {err}");
    assert!(err.starts_with("evograph: error: "), "{ctx}: {err}");
    assert!(err.contains(path), "{ctx}: {path} not named: {err}");
}

/// Every file of a directory with its bytes, for before/after comparisons.
fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    v.sort();
    v
}

struct Scratch {
    tmp: tempfile::TempDir,
}

impl Scratch {
    /// A directory with an input `in.el` and a store `Q` made from it.
    fn new() -> Scratch {
        let s = Scratch {
            tmp: tempfile::tempdir().unwrap(),
        };
        std::fs::write(s.p("in.el"), "1 2\n2 3\n3 4\n5 6\n").unwrap();
        let out = run(&["ingest".to_string(), s.s("Q"), s.s("in.el")]);
        assert!(out.status.success(), "{}", stderr(&out));
        s
    }
    fn p(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }
    fn s(&self, name: &str) -> String {
        self.p(name).to_string_lossy().into_owned()
    }
    fn export(&self, store: &str) -> Vec<u8> {
        let out = run(&["export", &self.s(store)]);
        assert!(out.status.success(), "{}", stderr(&out));
        out.stdout
    }
}

#[test]
fn changes_into_a_store_or_onto_the_input_is_refused_and_creates_nothing() {
    let s = Scratch::new();
    let before = contents(&s.p("Q"));
    let input = std::fs::read(s.p("in.el")).unwrap();
    let q_dict = s.s("Q/DICT");
    let out = run(&[
        "ingest",
        &s.s("P"),
        &s.s("in.el"),
        "--maintain",
        "wcc",
        "--changes",
        &q_dict,
    ]);
    assert_refused(&out, &q_dict, "--changes Q/DICT");
    assert_eq!(contents(&s.p("Q")), before, "store Q untouched");
    assert!(!s.p("P").exists(), "no store P made");
    assert!(s.export("Q").starts_with(b"1 2\n"));

    std::os::unix::fs::symlink(s.p("in.el"), s.p("link.el")).unwrap();
    std::fs::hard_link(s.p("in.el"), s.p("hard.el")).unwrap();
    for (name, force) in [("in.el", false), ("link.el", true), ("hard.el", true)] {
        let mut args = vec!["ingest".to_string(), s.s("P"), s.s("in.el")];
        args.extend(["--maintain", "wcc", "--changes"].map(String::from));
        args.push(s.s(name));
        if force {
            args.push("--force".into());
        }
        let out = run(&args);
        assert_refused(&out, &s.s(name), name);
        assert_eq!(std::fs::read(s.p("in.el")).unwrap(), input, "{name}");
        assert!(!s.p("P").exists(), "{name}: no store P made");
    }
    // A link to a store file outside the store, and a symlink into it.
    std::fs::hard_link(s.p("Q/DICT"), s.p("dict-link")).unwrap();
    std::os::unix::fs::symlink(s.p("Q"), s.p("qlink")).unwrap();
    for target in [s.s("dict-link"), s.s("qlink/new.txt")] {
        let out = run(&[
            "ingest",
            &s.s("Q"),
            &s.s("in.el"),
            "--maintain",
            "wcc",
            "--changes",
            &target,
            "--force",
        ]);
        assert_refused(&out, &target, &target);
        let out = run(&["run", &s.s("Q"), "wcc", "--output", &target]);
        assert_refused(&out, &target, &target);
    }
    assert_eq!(contents(&s.p("Q")), before, "store Q untouched");
}

#[test]
fn every_output_path_inside_a_store_is_refused() {
    let s = Scratch::new();
    let before = contents(&s.p("Q"));
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec![
                "run".into(),
                s.s("Q"),
                "pr".into(),
                "--output".into(),
                s.s("Q/pr.txt"),
            ],
            s.s("Q/pr.txt"),
        ),
        (
            vec![
                "run".into(),
                s.s("Q"),
                "pr".into(),
                "--output".into(),
                s.s("Q/MANIFEST"),
            ],
            s.s("Q/MANIFEST"),
        ),
        (
            vec![
                "export".into(),
                s.s("Q"),
                "--format".into(),
                "parquet".into(),
                s.s("Q/pq"),
            ],
            s.s("Q/pq"),
        ),
        (
            vec![
                "export".into(),
                s.s("Q"),
                "--format".into(),
                "parquet".into(),
                s.s("Q"),
            ],
            s.s("Q"),
        ),
        (
            vec![
                "generate".into(),
                "kron".into(),
                "--scale".into(),
                "4".into(),
                "-o".into(),
                s.s("Q/DICT"),
            ],
            s.s("Q/DICT"),
        ),
        (
            vec![
                "bench".into(),
                "--scale".into(),
                "4".into(),
                "--json".into(),
                s.s("Q/b.json"),
            ],
            s.s("Q/b.json"),
        ),
        (
            vec![
                "bench".into(),
                "--scale".into(),
                "4".into(),
                "--dir".into(),
                s.s("Q"),
            ],
            s.s("Q"),
        ),
        (
            vec![
                "bench".into(),
                "--scale".into(),
                "4".into(),
                "--dir".into(),
                s.s("Q/sub"),
            ],
            s.s("Q/sub"),
        ),
    ];
    for (args, named) in &cases {
        let out = run(args);
        assert_refused(&out, named, &args.join(" "));
        assert_eq!(contents(&s.p("Q")), before, "{}", args.join(" "));
    }
    // Another store than the one the command reads is protected as well.
    let out = run(&["ingest", &s.s("R"), &s.s("in.el")]);
    assert!(out.status.success());
    let out = run(&["run", &s.s("Q"), "wcc", "--output", &s.s("R/KEYS")]);
    assert_refused(&out, &s.s("R/KEYS"), "into another store");
    assert!(!s.p("R/KEYS").exists());
}

#[test]
fn an_existing_output_is_replaced_only_when_the_command_succeeds() {
    let s = Scratch::new();
    let out_txt = s.s("out.txt");
    std::fs::write(&out_txt, "kept\n").unwrap();
    // bfs from a vertex not in the graph fails after the output was checked.
    let out = run(&[
        "run",
        &s.s("Q"),
        "bfs",
        "--source",
        "999",
        "--output",
        &out_txt,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&out_txt).unwrap(), "kept\n");
    let out = run(&["run", &s.s("Q"), "wcc", "--output", &out_txt]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&out_txt).unwrap();
    assert!(text.starts_with("1 1\n"), "{text}");
    // Through a symlink the file it names is replaced and the link stays.
    std::os::unix::fs::symlink(&out_txt, s.p("out-link")).unwrap();
    let out = run(&["generate", "kron", "--scale", "3", "-o", &s.s("out-link")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(s.p("out-link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_ne!(std::fs::read_to_string(&out_txt).unwrap(), text);
    // Nothing is left beside the outputs.
    let mut names: Vec<_> = std::fs::read_dir(s.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["Q", "in.el", "out-link", "out.txt"]);
    // Special files are written as given.
    for dev in ["/dev/null", "/dev/stdout"] {
        let out = run(&["run", &s.s("Q"), "wcc", "--output", dev]);
        assert!(out.status.success(), "{dev}: {}", stderr(&out));
    }
    let out = run(&["run", &s.s("Q"), "wcc", "--output", "/dev/stdout"]);
    assert!(out.stdout.starts_with(b"1 1\n"), "{:?}", out.stdout);
}

#[test]
fn changes_keeps_a_file_with_lines_unless_told_to_append_or_replace() {
    let s = Scratch::new();
    let ch = s.s("changes.txt");
    let ingest = |extra: &[&str]| {
        let mut args = vec!["ingest", "", "", "--maintain", "wcc", "--changes", &ch];
        let (store, input) = (s.s("P"), s.s("in.el"));
        args[1] = &store;
        args[2] = &input;
        args.extend_from_slice(extra);
        run(&args)
    };
    assert!(ingest(&[]).status.success());
    let first = std::fs::read_to_string(&ch).unwrap();
    assert!(first.starts_with("# lsn"), "{first}");
    let out = ingest(&[]);
    assert_refused(&out, &ch, "a second --changes");
    assert!(stderr(&out).contains("--append"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&ch).unwrap(), first);
    assert!(ingest(&["--append"]).status.success());
    let appended = std::fs::read_to_string(&ch).unwrap();
    assert!(appended.starts_with(&first) && appended.len() > first.len());
    assert!(ingest(&["--force"]).status.success());
    let forced = std::fs::read_to_string(&ch).unwrap();
    assert!(forced.len() < appended.len() && forced.starts_with("# lsn"));
    // An empty file is written without either.
    std::fs::write(&ch, "").unwrap();
    assert!(ingest(&[]).status.success());
}

#[test]
fn bench_refuses_a_working_directory_it_did_not_make() {
    let s = Scratch::new();
    let d = s.p("work");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("mine.txt"), "user data\n").unwrap();
    std::fs::create_dir(d.join("store")).unwrap();
    std::fs::write(d.join("store/notes"), "user data\n").unwrap();
    let out = run(&[
        "bench",
        "--scale",
        "4",
        "--kernels",
        "bfs",
        "--dir",
        &d.to_string_lossy(),
    ]);
    assert_refused(&out, &d.to_string_lossy(), "bench --dir");
    assert_eq!(
        std::fs::read_to_string(d.join("store/notes")).unwrap(),
        "user data\n"
    );
}
