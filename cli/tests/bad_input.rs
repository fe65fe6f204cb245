//! Bad input through the command line: malformed files, wrong paths, wrong stores, a second
//! writer and bad flags. Every refusal must be one clear `evograph: error: ...` line with
//! exit code 2 — and must leave the store exactly as it was (its `export` output and the
//! bytes of every file), or leave a path that is no store untouched.

mod common;

use common::{assert_no_panic, dir_files, evograph, parse_export, quiet_forks};
use evograph::{Graph, GraphView, Options};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Opens a store while no child process is being started (see `common::quiet_forks`).
fn open_store(path: &Path, opts: Options) -> evograph::Result<Graph> {
    quiet_forks(|| Graph::open(path, opts))
}

/// Closes a store while no child process is being started, so that its lock is free when
/// this returns.
fn close_store(g: Graph) {
    quiet_forks(|| g.close()).unwrap();
}

/// A store holding a known graph, with what it looked like right after ingest.
struct Fixture {
    tmp: tempfile::TempDir,
    store: PathBuf,
    export: Vec<u8>,
    files: BTreeMap<String, Vec<u8>>,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("store");
        let mut s = String::new();
        for i in 0..60u64 {
            s.push_str(&format!("{} {}\n", i % 17, (i * 7 + 3) % 23));
        }
        s.push_str(&format!("{} 0\n0 {}\n", u64::MAX, 1u64 << 40));
        let input = tmp.path().join("good.el");
        std::fs::write(&input, s).unwrap();
        let out = cli(["ingest".as_ref(), store.as_os_str(), input.as_os_str()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let exp = cli(["export".as_ref(), store.as_os_str()]);
        assert_eq!(exp.status.code(), Some(0), "{}", text(&exp));
        let edges = parse_export(&exp.stdout);
        assert!(edges.contains(&(u64::MAX, 0)) && edges.contains(&(0, 1 << 40)));
        assert!(
            edges.len() > 40,
            "the fixture graph has {} edges",
            edges.len()
        );
        let files = dir_files(&store);
        Fixture {
            tmp,
            store,
            export: exp.stdout,
            files,
        }
    }

    /// Writes `content` to a new input file `name` next to the store.
    fn input(&self, name: &str, content: &[u8]) -> PathBuf {
        let p = self.tmp.path().join(name);
        std::fs::write(&p, content).unwrap();
        p
    }

    /// Runs `evograph ingest STORE INPUT extra...`.
    fn ingest(&self, input: &Path, extra: &[&str]) -> Output {
        let mut args: Vec<&OsStr> =
            vec!["ingest".as_ref(), self.store.as_os_str(), input.as_os_str()];
        args.extend(extra.iter().map(OsStr::new));
        cli(args)
    }

    /// The store's files and `export` output are what they were after the first ingest.
    fn assert_unchanged(&self, ctx: &str) {
        assert!(
            dir_files(&self.store) == self.files,
            "{ctx}: the store's files changed"
        );
        let exp = cli(["export".as_ref(), self.store.as_os_str()]);
        assert_eq!(exp.status.code(), Some(0), "{ctx}: export: {}", text(&exp));
        assert!(
            exp.stdout == self.export,
            "{ctx}: the exported graph changed"
        );
    }
}

fn cli<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let out = evograph(&args);
    assert_no_panic(&out, &format!("evograph {args:?}"));
    out
}

fn text(out: &Output) -> String {
    format!(
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Exit code 2, nothing on stdout, and exactly one stderr line that starts with
/// `evograph: error: ` and contains every needle. Returns that line.
fn assert_error_line(out: &Output, needles: &[&str], ctx: &str) -> String {
    assert_eq!(out.status.code(), Some(2), "{ctx}: {}", text(out));
    assert!(
        out.stdout.is_empty(),
        "{ctx}: printed on stdout: {}",
        text(out)
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{ctx}: want one error line, got {err:?}");
    assert!(
        lines[0].starts_with("evograph: error: "),
        "{ctx}: not an evograph error line: {err:?}"
    );
    for n in needles {
        assert!(
            lines[0].contains(n),
            "{ctx}: {:?} does not mention {n:?}",
            lines[0]
        );
    }
    lines[0].to_string()
}

// ---------------------------------------------------------------------------------------
// Malformed input files.

#[test]
fn malformed_lines_name_file_and_line_and_change_nothing() {
    let fx = Fixture::new();
    let mut late = String::new();
    for i in 0..300 {
        late.push_str(&format!("{} {}\n", 1000 + i, 2000 + i));
    }
    late.push_str("7 seven\n");
    let cases: Vec<(&str, String, u64, &str, &[&str])> = vec![
        (
            "nonnumeric.el",
            "1 2\n3 x\n".into(),
            2,
            "not an unsigned",
            &[],
        ),
        (
            "nonnumeric_src.txt",
            "# c\nabc 2\n".into(),
            2,
            "not an unsigned",
            &[],
        ),
        (
            "missing_dst.el",
            "1 2\n\n5\n".into(),
            3,
            "missing destination",
            &[],
        ),
        (
            "four_columns.el",
            "1 2\n3 4 5 6\n".into(),
            2,
            "too many columns",
            &[],
        ),
        ("negative.el", "1 2\n-3 4\n".into(), 2, "negative", &[]),
        ("negative_dst.snap", "1 -2\n".into(), 1, "negative", &[]),
        (
            "too_big.txt",
            "1 2\n3 4\n18446744073709551616 5\n".into(),
            3,
            "64 bits",
            &[],
        ),
        (
            "bad_weight.el",
            "1 2 0.5\n3 4 abc\n".into(),
            2,
            "finite",
            &[],
        ),
        (
            "bad_sign.ops",
            "+ 1 2\n* 1 2\n".into(),
            2,
            "not an update",
            &[],
        ),
        (
            "too_many.ops",
            "+ 1 2\n- 3\n+ 1 2 3 4\n".into(),
            3,
            "too many columns",
            &[],
        ),
        (
            "ops_bad_id.ops",
            "+ 1 2\n- x\n".into(),
            2,
            "not an unsigned",
            &[],
        ),
        (
            "forced_ops.el",
            "1 2\n".into(),
            1,
            "not an update",
            &["--format", "ops"],
        ),
        // The bad line comes after many batches: nothing before it may be stored either.
        (
            "late_error.el",
            late,
            301,
            "not an unsigned",
            &["--batch", "16"],
        ),
    ];
    for (name, content, line, msg, extra) in cases {
        let input = fx.input(name, content.as_bytes());
        let out = fx.ingest(&input, extra);
        let ctx = format!("{name} {extra:?}");
        let where_ = format!("{}:{line}:", input.display());
        assert_error_line(&out, &[&where_, msg], &ctx);
        fx.assert_unchanged(&ctx);
    }
}

#[test]
fn bin_of_partial_records_is_refused() {
    let fx = Fixture::new();
    for len in [1usize, 7, 8 * 3 + 5] {
        let input = fx.input(&format!("odd{len}.bin"), &vec![1u8; len]);
        let out = fx.ingest(&input, &[]);
        let ctx = format!("{len}-byte .bin");
        let path = input.display().to_string();
        assert_error_line(&out, &[&path, "not a multiple of 8"], &ctx);
        fx.assert_unchanged(&ctx);
    }
    // Also when the format is named rather than taken from the extension.
    let input = fx.input("odd.data", &[0u8; 12]);
    let out = fx.ingest(&input, &["--format", "bin"]);
    let path = input.display().to_string();
    assert_error_line(&out, &[&path, "not a multiple of 8"], "--format bin");
    fx.assert_unchanged("--format bin");
}

#[test]
fn undetectable_format_is_refused() {
    let fx = Fixture::new();
    let input = fx.input("mystery", b"hello world\n");
    let out = fx.ingest(&input, &[]);
    let path = input.display().to_string();
    assert_error_line(&out, &[&path, "format"], "no extension, text content");
    fx.assert_unchanged("undetectable format");
}

#[test]
fn empty_inputs_leave_the_graph_unchanged() {
    let fx = Fixture::new();
    for (name, content) in [
        ("empty.el", &b""[..]),
        ("comments.el", b"# nothing here\n% nor here\n\n"),
        ("empty.bin", b""),
        ("empty.ops", b"# no updates\n"),
    ] {
        let input = fx.input(name, content);
        let out = fx.ingest(&input, &[]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out));
        let exp = cli(["export".as_ref(), fx.store.as_os_str()]);
        assert!(
            exp.stdout == fx.export,
            "{name}: the exported graph changed"
        );
        let chk = cli(["check".as_ref(), fx.store.as_os_str()]);
        assert_eq!(chk.status.code(), Some(0), "{name}: {}", text(&chk));
    }
}

#[test]
fn an_id_width_this_build_lacks_is_refused_before_anything_is_made() {
    let fx = Fixture::new();
    let input = good_input(fx.tmp.path());
    let other = if evograph::types::ID_WIDTH == 32 {
        "64"
    } else {
        "32"
    };
    let out = fx.ingest(&input, &["--id-width", other]);
    assert_error_line(
        &out,
        &[&format!("--id-width {other}"), "it needs a build with"],
        "--id-width",
    );
    fx.assert_unchanged("--id-width");
    let fresh = fx.tmp.path().join("never-made");
    let out = cli([
        OsStr::new("ingest"),
        fresh.as_os_str(),
        input.as_os_str(),
        OsStr::new("--id-width"),
        OsStr::new(other),
    ]);
    assert_error_line(&out, &["it needs a build with"], "--id-width, new store");
    assert!(!fresh.exists(), "a refused width left a store behind");
}

#[test]
fn missing_input_is_refused() {
    let fx = Fixture::new();
    for name in ["missing.el", "missing.bin", "missing.ops", "missing"] {
        let input = fx.tmp.path().join(name);
        let out = fx.ingest(&input, &[]);
        let path = input.display().to_string();
        assert_error_line(&out, &[&path], name);
        fx.assert_unchanged(name);
    }
}

#[test]
fn directory_as_input_is_refused() {
    let fx = Fixture::new();
    for name in ["dir.el", "dir.bin", "dir.ops", "dir"] {
        let input = fx.tmp.path().join(name);
        std::fs::create_dir(&input).unwrap();
        std::fs::write(input.join("1.el"), "1 2\n").unwrap();
        let out = fx.ingest(&input, &[]);
        let path = input.display().to_string();
        assert_error_line(&out, &[&path], name);
        fx.assert_unchanged(name);
    }
}

// ---------------------------------------------------------------------------------------
// Paths that are not stores.

/// Runs every store command on `store` (ingest with a valid input) and requires a refusal.
fn every_command_refuses(store: &Path, input: &Path, needles: &[&str], ctx: &str) {
    let s = store.as_os_str();
    let cmds: Vec<Vec<&OsStr>> = vec![
        vec!["ingest".as_ref(), s, input.as_os_str()],
        vec!["export".as_ref(), s],
        vec!["stats".as_ref(), s],
        vec!["stats".as_ref(), s, "--json".as_ref()],
        vec!["check".as_ref(), s],
        vec!["compact".as_ref(), s],
    ];
    for args in cmds {
        let out = cli(&args);
        assert_error_line(&out, needles, &format!("{ctx}: {args:?}"));
    }
}

fn good_input(dir: &Path) -> PathBuf {
    let p = dir.join("in.el");
    std::fs::write(&p, "1 2\n2 3\n").unwrap();
    p
}

#[test]
fn foreign_directory_is_not_a_store() {
    let tmp = tempfile::tempdir().unwrap();
    let input = good_input(tmp.path());
    let dir = tmp.path().join("papers");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "do not touch\n").unwrap();
    std::fs::create_dir(dir.join("drafts")).unwrap();
    let before = dir_files(&dir);
    let path = dir.display().to_string();
    every_command_refuses(
        &dir,
        &input,
        &[&path, "not an evograph store"],
        "foreign dir",
    );
    assert!(
        dir_files(&dir) == before,
        "the foreign directory's files changed"
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["drafts", "notes.txt"],
        "entries appeared in the foreign directory"
    );
    assert!(dir_files(&dir.join("drafts")).is_empty());
}

#[test]
fn regular_file_is_not_a_store() {
    let tmp = tempfile::tempdir().unwrap();
    let input = good_input(tmp.path());
    let file = tmp.path().join("store");
    std::fs::write(&file, "I am a file\n").unwrap();
    let path = file.display().to_string();
    every_command_refuses(&file, &input, &[&path, "not a directory"], "regular file");
    assert_eq!(std::fs::read(&file).unwrap(), b"I am a file\n");
    let mut names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["in.el", "store"]);
}

#[test]
fn inspecting_a_missing_or_empty_store_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("absent").join("store");
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for store in [&missing, &empty] {
        let path = store.display().to_string();
        for cmd in ["export", "stats", "check", "compact"] {
            let out = cli([cmd.as_ref(), store.as_os_str()]);
            assert_error_line(&out, &[&path], &format!("{cmd} {path}"));
        }
    }
    assert!(
        !tmp.path().join("absent").exists(),
        "a missing store was created"
    );
    assert_eq!(
        std::fs::read_dir(&empty).unwrap().count(),
        0,
        "files appeared in an empty dir"
    );
}

// ---------------------------------------------------------------------------------------
// A second writer, bad flags, a directed/undirected mismatch.

#[test]
fn second_writer_is_locked_out() {
    let fx = Fixture::new();
    let g = open_store(
        &fx.store,
        Options::new().create(false).background(false).threads(2),
    )
    .unwrap();
    let held = dir_files(&fx.store);
    let input = fx.input("more.el", b"500 501\n501 502\n");
    let out = fx.ingest(&input, &[]);
    let path = fx.store.display().to_string();
    let line = assert_error_line(&out, &[&path], "ingest into a locked store");
    assert!(line.contains("locked"), "{line}");
    assert!(
        dir_files(&fx.store) == held,
        "the refused ingest changed files"
    );
    g.insert_edges(&[(9001, 9002), (9002, 0)]).unwrap();
    close_store(g);
    let exp = cli(["export".as_ref(), fx.store.as_os_str()]);
    assert_eq!(exp.status.code(), Some(0), "{}", text(&exp));
    let mut want = parse_export(&fx.export);
    want.extend([(9001, 9002), (9002, 0)]);
    assert_eq!(parse_export(&exp.stdout), want);
    assert!(!parse_export(&exp.stdout).contains(&(500, 501)));
    let chk = cli(["check".as_ref(), fx.store.as_os_str()]);
    assert_eq!(chk.status.code(), Some(0), "{}", text(&chk));
}

#[test]
fn bad_batch_size_is_refused() {
    let fx = Fixture::new();
    let input = fx.input("more.el", b"500 501\n");
    let out = fx.ingest(&input, &["--batch", "0"]);
    assert_error_line(&out, &["--batch"], "--batch 0");
    fx.assert_unchanged("--batch 0");
}

#[test]
fn bad_flag_values_are_refused() {
    let fx = Fixture::new();
    let input = fx.input("more.el", b"500 501\n");
    for (extra, needle) in [
        (&["--durability", "bogus"][..], "bogus"),
        (&["--durability", "interval=0"], "interval=0"),
        (&["--durability", "interval=x"], "interval=x"),
        (&["--durability", ""], "durability"),
        (&["--format", "gml"], "gml"),
        (&["--batch", "-1"], "-1"),
        (&["--batch", "many"], "many"),
    ] {
        let out = fx.ingest(&input, extra);
        let ctx = format!("{extra:?}");
        // Argument errors come from the parser: exit code 2 and a message naming the value.
        assert_eq!(out.status.code(), Some(2), "{ctx}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("error"), "{ctx}: {err}");
        assert!(err.contains(needle), "{ctx}: {err}");
        assert!(out.stdout.is_empty(), "{ctx}: {}", text(&out));
        fx.assert_unchanged(&ctx);
    }
}

#[test]
fn undirected_ingest_into_directed_store_is_refused() {
    let fx = Fixture::new();
    let input = fx.input("more.el", b"500 501\n");
    let out = fx.ingest(&input, &["--undirected"]);
    let path = fx.store.display().to_string();
    assert_error_line(&out, &[&path, "directed"], "--undirected");
    fx.assert_unchanged("--undirected");
}

/// From Rust, a mistyped path is an error, not a new empty store; and creating a store
/// where one exists is refused without touching it.
#[test]
fn open_never_creates_and_create_never_overwrites() {
    let d = tempfile::tempdir().unwrap();
    let typo = d.path().join("sotre");
    let err = open_store(&typo, Options::default())
        .err()
        .expect("no store there");
    assert!(matches!(err, evograph::Error::NotAStore { .. }), "{err}");
    assert!(!typo.exists(), "open created {}", typo.display());

    let path = d.path().join("store");
    let g = quiet_forks(|| Graph::create(&path, Options::default())).unwrap();
    g.insert_edges(&[(1, 2), (2, 3)]).unwrap();
    close_store(g);
    let before = dir_files(&path);
    let err = quiet_forks(|| Graph::create(&path, Options::default()))
        .err()
        .expect("a store is there");
    assert!(
        err.to_string().contains("already holds an evograph store"),
        "{err}"
    );
    assert_eq!(dir_files(&path), before, "the refused create changed files");
    let g = open_store(&path, Options::default()).unwrap();
    assert_eq!(g.snapshot().unwrap().num_edges(), 2);
    close_store(g);

    // An empty directory is a fine place for a new store.
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    close_store(quiet_forks(|| Graph::create(&empty, Options::default())).unwrap());
    close_store(open_store(&empty, Options::default()).unwrap());
}
