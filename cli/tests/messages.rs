//! What a command says is what it does (issue 64, item 6): each refusal one line, starting
//! `evograph: error:`, naming the file at fault; points in time read as users write them;
//! names with blanks round-trip through the ops format.

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

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A refusal: exit 2, one stderr line, prefixed, holding every needle.
fn refused(o: &Output, needles: &[&str], ctx: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{ctx}: {err}");
    assert_eq!(err.lines().count(), 1, "{ctx}: not one line: {err}");
    assert!(err.starts_with("evograph: error: "), "{ctx}: {err}");
    for n in needles {
        assert!(err.contains(n), "{ctx}: no '{n}' in {err}");
    }
}

struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Scratch {
        Scratch(tempfile::tempdir().unwrap())
    }
    fn p(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
    fn write(&self, name: &str, text: &str) -> PathBuf {
        std::fs::write(self.p(name), text).unwrap();
        self.p(name)
    }
    fn ingest(&self, store: &str, input: &str, extra: &[&str]) -> Output {
        let mut args: Vec<&OsStr> = vec!["ingest".as_ref()];
        let (s, i) = (self.p(store), self.p(input));
        args.push(s.as_os_str());
        args.push(i.as_os_str());
        args.extend(extra.iter().map(OsStr::new));
        run(&args)
    }
}

fn on(store: &Path, cmd: &str, extra: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = vec![cmd.as_ref(), store.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    run(&args)
}

#[test]
fn a_file_from_another_store_is_named_as_that() {
    let s = Scratch::new();
    s.write("a.el", "1 2\n2 3\n");
    s.write("b.el", "1 2\n2 3\n3 4\n");
    for (store, input) in [("A", "a.el"), ("B", "a.el"), ("C", "b.el")] {
        assert!(s.ingest(store, input, &[]).status.success());
    }
    // A MANIFEST copied from B: the files all say store A, the MANIFEST is the stranger.
    std::fs::copy(s.p("B/MANIFEST"), s.p("A/MANIFEST")).unwrap();
    refused(
        &on(&s.p("A"), "export", &[]),
        &["MANIFEST belongs to another store", "DICT"],
        "foreign MANIFEST",
    );
    // C's DICT in B (a larger one): called another store's, not refused for its size.
    std::fs::copy(s.p("C/DICT"), s.p("B/DICT")).unwrap();
    refused(
        &on(&s.p("B"), "export", &[]),
        &["DICT chunk at byte 0 belongs to another store"],
        "foreign DICT",
    );
}

#[test]
fn points_in_time_read_as_users_write_them() {
    let s = Scratch::new();
    s.write(
        "t.ops",
        "@ 2020-01-01T00:00:00Z\n+ 1 2\n@ 2020-01-02T00:00:00Z\n+ 2 3\n",
    );
    assert!(s
        .ingest("S", "t.ops", &["--history", "all"])
        .status
        .success());
    let store = s.p("S");
    // A date alone is its midnight UTC.
    let o = on(&store, "export", &["--at", "2020-01-01"]);
    assert_eq!(stdout(&o), "1 2\n", "{}", stderr(&o));
    // More digits than a nanosecond holds: dropped, towards the past.
    let o = on(&store, "export", &["--at", "@1577923200.0000000001"]);
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stderr(&o));
    // A time out of range says the range, not "not a time".
    refused(
        &on(&store, "export", &["--at", "@99999999999"]),
        &["the years 1677 to 2262"],
        "far future",
    );
    // A point outside the window fails in one line: no "as of commit" note before it.
    refused(
        &on(&store, "export", &["--at", "2019-01-01"]),
        &["outside the history kept"],
        "before history",
    );
    refused(
        &on(&store, "diff", &["--from", "1", "--to", "@1000"]),
        &["outside the history kept"],
        "diff outside",
    );
    // On success the note still comes, after the output.
    let o = on(&store, "export", &["--at", "2"]);
    assert!(stderr(&o).contains("as of commit LSN 2"), "{}", stderr(&o));
}

#[test]
fn a_kernel_name_with_blanks_is_no_kernel() {
    let s = Scratch::new();
    s.write("a.el", "1 2\n");
    assert!(s.ingest("S", "a.el", &[]).status.success());
    refused(
        &on(&s.p("S"), "pr ", &[]),
        &["unrecognized subcommand"],
        "command with a blank",
    );
    let o = run(&["run".as_ref(), s.p("S").as_os_str(), "pr ".as_ref()]);
    refused(
        &o,
        &["unknown kernel 'pr '", "gap-pr"],
        "kernel with a blank",
    );
}

#[test]
fn a_segment_cut_inside_its_header_is_named() {
    let s = Scratch::new();
    let store = s.p("S");
    // A crash image: the writer killed with its log in use.
    let lines: String = (1..=100).map(|i| format!("{i} {}\n", i + 1)).collect();
    let input = s.write("a.el", &lines);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_evograph"))
        .args(["ingest".as_ref(), store.as_os_str(), "/dev/stdin".as_ref()])
        .args(["--format", "el", "--batch", "1", "--print-acks"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::{BufRead, Write};
        let mut w = child.stdin.take().unwrap();
        w.write_all(&std::fs::read(&input).unwrap()).unwrap();
        w.flush().unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        // The first acknowledgement: the log is in use and holds a block.
        while !lines.next().unwrap().unwrap().starts_with("acked ") {}
        child.kill().unwrap();
        drop(w);
    }
    let _ = child.wait();
    let wal = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("wal-0"))
        .unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(store.join(&wal))
        .unwrap();
    f.set_len(30).unwrap();
    drop(f);
    refused(
        &on(&store, "export", &[]),
        &[&wal, "header does not read"],
        "cut header",
    );
}

#[test]
fn names_with_blanks_round_trip_through_ops() {
    let s = Scratch::new();
    s.write(
        "n.tsv",
        "New York\tLos Angeles\nLos Angeles\t\"Quoted\" Town\nback\\slash\tNew York\n",
    );
    let o = s.ingest(
        "S",
        "n.tsv",
        &["--keys", "string", "--history", "all", "--delimiter", "tab"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    s.write(
        "more.ops",
        "+ \"Salt Lake City\" \"New York\"\n- \"New York\" \"Los Angeles\"\n",
    );
    let o = s.ingest("S", "more.ops", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let store = s.p("S");
    let diff = on(&store, "diff", &["--from", "3", "--to", "5"]);
    assert!(diff.status.success(), "{}", stderr(&diff));
    let text = stdout(&diff);
    assert!(text.contains("+ \"Salt Lake City\" \"New York\""), "{text}");
    assert!(text.contains("- \"New York\" \"Los Angeles\""), "{text}");
    // The whole graph as a diff from an empty store's point of view replays to the same.
    let back = on(&store, "diff", &["--from", "5", "--to", "3"]);
    std::fs::write(s.p("undo.ops"), stdout(&back)).unwrap();
    let o = s.ingest("S", "undo.ops", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let now = stdout(&on(&store, "export", &[]));
    let then = stdout(&on(&store, "export", &["--at", "3"]));
    assert_eq!(now, then, "the undo replayed");
    // An unterminated quote is refused, naming the line.
    s.write("bad.ops", "+ \"New York Los Angeles\n");
    let o = s.ingest("S", "bad.ops", &[]);
    refused(&o, &["bad.ops:1:", "closing"], "unterminated quote");
}

#[test]
fn a_batch_timed_in_the_future_is_warned_of_once() {
    let s = Scratch::new();
    s.write(
        "f.ops",
        "@ 2200-01-01T00:00:00Z\n+ 1 2\n@ 2200-01-02T00:00:00Z\n+ 2 3\n",
    );
    let o = s.ingest("S", "f.ops", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("in the future").count(), 1, "{err}");
    assert!(err.contains("2200-01-01T00:00:00Z"), "{err}");
    // The help says what an untimed batch gets.
    let help = stdout(&run(&["ingest", "--help"]));
    assert!(help.contains("last commit time if that is later"), "{help}");
}

#[test]
fn a_writer_says_when_a_history_segment_is_damaged() {
    let s = Scratch::new();
    s.write("a.ops", "@ 100\n+ 1 2\n@ 200\n+ 2 3\n");
    assert!(s
        .ingest("S", "a.ops", &["--history", "all"])
        .status
        .success());
    let store = s.p("S");
    let hist = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("hist-"))
        .unwrap();
    let mut b = std::fs::read(store.join(&hist)).unwrap();
    b[120] ^= 0x10; // in the commit table (after the 104-byte header): the head's checksum fails
    std::fs::write(store.join(&hist), b).unwrap();
    s.write("more.el", "7 8\n");
    let o = s.ingest("S", "more.el", &[]);
    assert!(
        o.status.success(),
        "the latest graph stays usable: {}",
        stderr(&o)
    );
    let err = stderr(&o);
    assert!(
        err.contains("evograph: warning:") && err.contains(&hist),
        "{err}"
    );
    let out = stdout(&on(&store, "export", &[]));
    assert_eq!(out.lines().count(), 3, "{out}");
}

/// An LSN counts the records submitted, one each (item 5): ten records, of which a vertex
/// delete removes three edges and four change nothing, take LSNs 0 to 10, `--print-acks`
/// counts the same records, and the next ingest goes on from there.
#[test]
fn lsns_count_the_records_submitted() {
    let s = Scratch::new();
    s.write(
        "a.ops",
        "+ 1 2\n+ 1 3\n+ 1 4\n+ 1 2\n- 1\n- 9\n+ 5\n+ 5\n- 7 8\n+ 2 3\n",
    );
    let o = s.ingest("S", "a.ops", &["--print-acks", "--batch", "4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let mut acks = out.lines().filter(|l| l.starts_with("acked "));
    assert_eq!(acks.next_back(), Some("acked 10"), "{out}");
    assert!(out.contains("LSN 0 to 10"), "{out}");
    let next_lsn = |o: &Output| -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["next_lsn"].clone()
    };
    let store = s.p("S");
    assert_eq!(next_lsn(&on(&store, "stats", &["--json"])), 10);
    s.write("b.el", "3 4\n4 5\n");
    let o = s.ingest("S", "b.el", &[]);
    assert!(stdout(&o).contains("LSN 10 to 12"), "{}", stdout(&o));
    assert_eq!(next_lsn(&on(&store, "stats", &["--json"])), 12);
}
