//! Operator mistakes that lost or falsified data without a word (issue 46's fuzz campaign),
//! each by its reproducer: every one must now be refused with the damaged file named, and
//! leave the store as it was. Also the one-line messages the README promises.

mod common;

use common::{assert_no_panic, evograph};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `evograph` with `args` and returns its output.
fn run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    let out = evograph(args);
    assert_no_panic(
        &out,
        &format!(
            "{:?}",
            args.iter()
                .map(|a| a.as_ref().to_owned())
                .collect::<Vec<_>>()
        ),
    );
    out
}

/// Requires a refusal: exit code 2 and one stderr line, prefixed, holding every needle.
fn assert_refused(out: &Output, needles: &[&str], ctx: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{ctx}: {}", text(out));
    assert_eq!(err.lines().count(), 1, "{ctx}: not one line:\n{err}");
    assert!(err.starts_with("evograph: error: "), "{ctx}: {err}");
    for n in needles {
        assert!(err.contains(n), "{ctx}: no '{n}' in: {err}");
    }
}

/// A scratch directory with two small edge lists.
struct Scratch {
    tmp: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let s = Scratch {
            tmp: tempfile::tempdir().unwrap(),
        };
        std::fs::write(s.path("a.el"), "1 2\n2 3\n3 1\n").unwrap();
        std::fs::write(s.path("b.el"), "7 8\n8 9\n").unwrap();
        s
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    fn ingest(&self, store: &str, input: &str) -> Output {
        run(&[
            "ingest".as_ref(),
            self.path(store).as_os_str(),
            self.path(input).as_os_str(),
        ])
    }

    fn export(&self, store: &str) -> Output {
        run(&["export".as_ref(), self.path(store).as_os_str()])
    }

    fn check(&self, store: &str) -> Output {
        run(&["check".as_ref(), self.path(store).as_os_str()])
    }
}

/// Every file of `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Finding 1: a store whose MANIFEST is gone is a damaged store, and `ingest` no longer
/// writes a new one over its files.
#[test]
fn ingest_never_creates_a_store_over_one_whose_manifest_is_gone() {
    let s = Scratch::new();
    assert!(s.ingest("S", "a.el").status.success());
    std::fs::rename(s.path("S/MANIFEST"), s.path("MANIFEST.saved")).unwrap();
    let before = snapshot(&s.path("S"));
    let out = s.ingest("S", "b.el");
    assert_refused(
        &out,
        &["DICT", "run-0000000000000001.run", "no MANIFEST"],
        "ingest",
    );
    assert_eq!(
        snapshot(&s.path("S")),
        before,
        "the refused ingest changed files"
    );
    for cmd in ["stats", "check", "export"] {
        let out = run(&[cmd.as_ref(), s.path("S").as_os_str()]);
        assert_refused(&out, &["DICT", "no MANIFEST"], cmd);
    }
    // With its MANIFEST back, the store holds a's edges, as before the mistake.
    std::fs::rename(s.path("MANIFEST.saved"), s.path("S/MANIFEST")).unwrap();
    let out = s.export("S");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "1 2
2 3
3 1
"
    );
}

/// Finding 2: a MANIFEST rolled back to an older copy is refused (the newer run file proves
/// the later commit), and nothing overwrites the run the older root does not name.
#[test]
fn a_rolled_back_manifest_is_refused_and_no_live_run_is_overwritten() {
    let s = Scratch::new();
    assert!(s.ingest("S", "a.el").status.success());
    std::fs::copy(s.path("S/MANIFEST"), s.path("M1")).unwrap();
    assert!(s.ingest("S", "b.el").status.success());
    let run2 = std::fs::read(s.path("S/run-0000000000000002.run")).unwrap();
    std::fs::copy(s.path("M1"), s.path("S/MANIFEST")).unwrap();
    let before = snapshot(&s.path("S"));
    for out in [s.export("S"), s.check("S"), s.ingest("S", "b.el")] {
        assert_refused(&out, &["MANIFEST is older than the store"], "rolled back");
    }
    assert_eq!(snapshot(&s.path("S")), before);
    assert_eq!(
        std::fs::read(s.path("S/run-0000000000000002.run")).unwrap(),
        run2
    );
}

/// Kills an `ingest` reading standard input once `acked` records are acknowledged; the
/// store is left as the kill left it.
fn ingest_killed_after(store: &Path, acked: u64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_evograph"))
        .args(["ingest".as_ref(), store.as_os_str(), "/dev/stdin".as_ref()])
        .args([
            "--format",
            "el",
            "--batch",
            "8",
            "--in-flight",
            "1",
            "--print-acks",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    for i in 0..acked + 16 {
        writeln!(input, "{i} {}", i + 1).unwrap();
    }
    input.flush().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let want = format!("acked {acked}");
    loop {
        let line = lines.next().expect("ingest ended before the ack").unwrap();
        if line == want {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Finding 3: a deleted live WAL segment is missing log, not a torn tail: the store is
/// refused, naming the log, and nothing is cut.
#[test]
fn a_deleted_live_wal_segment_is_refused() {
    let s = Scratch::new();
    let store = s.path("S");
    ingest_killed_after(&store, 32);
    let wal = store.join("wal-0000000000000001.log");
    assert!(wal.exists(), "the killed ingest left its log");
    std::fs::remove_file(&wal).unwrap();
    let before = snapshot(&store);
    for out in [s.export("S"), s.check("S"), s.ingest("S", "b.el")] {
        assert_refused(&out, &["WAL", "deleted"], "log gone");
    }
    assert_eq!(snapshot(&store), before);
}

/// Finding 4: a file copied from another store (same kind, same size) is refused by name.
#[test]
fn files_from_another_store_are_refused() {
    let s = Scratch::new();
    for (name, keys) in [
        ("K1", "u64"),
        ("K2", "u64"),
        ("N1", "string"),
        ("N2", "string"),
    ] {
        let out = run(&[
            "ingest".as_ref(),
            s.path(name).as_os_str(),
            s.path("a.el").as_os_str(),
            "--keys".as_ref(),
            keys.as_ref(),
        ]);
        assert!(out.status.success(), "{}", text(&out));
    }
    for (from, to, file, needle) in [
        ("K2", "K1", "DICT", "DICT"),
        ("N2", "N1", "KEYS", "KEYS"),
        (
            "K2",
            "K1",
            "run-0000000000000001.run",
            "run-0000000000000001.run",
        ),
    ] {
        let saved = std::fs::read(s.path(to).join(file)).unwrap();
        std::fs::copy(s.path(from).join(file), s.path(to).join(file)).unwrap();
        for out in [s.export(to), s.check(to)] {
            assert_refused(&out, &[needle, "another store"], file);
        }
        std::fs::write(s.path(to).join(file), saved).unwrap();
        assert!(s.check(to).status.success());
    }
}

/// A twin store's WAL segment (same name, same batches) is refused, not replayed.
#[test]
fn a_twin_stores_wal_segment_is_refused() {
    let s = Scratch::new();
    ingest_killed_after(&s.path("T1"), 16);
    ingest_killed_after(&s.path("T2"), 16);
    let seg = "wal-0000000000000001.log";
    std::fs::copy(s.path("T2").join(seg), s.path("T1").join(seg)).unwrap();
    assert_refused(&s.export("T1"), &[seg, "another store"], "twin WAL");
}

/// Finding 5: `demo --dir` writes only into a new or empty directory or its own store.
#[test]
fn demo_never_writes_into_a_users_store() {
    let s = Scratch::new();
    assert!(s.ingest("S", "a.el").status.success());
    let before = snapshot(&s.path("S"));
    let demo = |dir: &str| {
        run(&[
            "demo".as_ref(),
            "--scale".as_ref(),
            "4".as_ref(),
            "--dir".as_ref(),
            s.path(dir).as_os_str(),
        ])
    };
    assert_refused(&demo("S"), &["not empty", "demo"], "demo into a store");
    assert_eq!(snapshot(&s.path("S")), before);
    std::fs::create_dir(s.path("other")).unwrap();
    std::fs::write(s.path("other/notes.txt"), "mine").unwrap();
    assert_refused(&demo("other"), &["not empty"], "demo into a used directory");
    // A new directory, then the demo's own store again.
    for _ in 0..2 {
        let out = demo("D");
        assert!(out.status.success(), "{}", text(&out));
    }
}

/// A store written by a build from before store ids (tests/fixtures/legacy) still opens:
/// read-only as it is, and a writer gives it an id and goes on.
#[test]
fn stores_from_before_store_ids_open_and_are_upgraded() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/legacy");
    let s = Scratch::new();
    for (name, want) in [
        ("closed-u64", "2 3\n3 1\n3 4\n10 20\n20 30\n"),
        (
            "crashed-names",
            "alice\tbob\nbob\tcarol\ncarol\tdave\ndave\talice\nerin\tbob\n",
        ),
    ] {
        let store = s.path(name);
        std::fs::create_dir(&store).unwrap();
        for e in std::fs::read_dir(fixtures.join(name)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), store.join(e.file_name())).unwrap();
        }
        let out = s.export(name);
        if cfg!(feature = "wide-ids") {
            // The fixtures are 32-bit stores: a 64-bit build refuses them by name.
            assert_refused(&out, &["32-bit vertex ids"], name);
            continue;
        }
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            want,
            "{name}: {}",
            text(&out)
        );
        let stats = run(&["stats".as_ref(), store.as_os_str()]);
        assert!(
            text(&stats).contains("store id        none"),
            "{}",
            text(&stats)
        );
        // A writer upgrades it; the graph is the same and every later file is stamped.
        let input = s.path("more.el");
        let line = if name == "crashed-names" {
            "zed\talice\n"
        } else {
            "5 6\n"
        };
        std::fs::write(&input, line).unwrap();
        let out = run(&["ingest".as_ref(), store.as_os_str(), input.as_os_str()]);
        assert!(out.status.success(), "{name}: {}", text(&out));
        let stats = run(&["stats".as_ref(), store.as_os_str()]);
        assert!(
            !text(&stats).contains("store id        none"),
            "{}",
            text(&stats)
        );
        let out = s.check(name);
        assert!(out.status.success(), "{name}: {}", text(&out));
        let out = s.export(name);
        let got = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            got.lines().count(),
            want.lines().count() + 1,
            "{name}: {got}"
        );
        assert!(got.contains(line.trim_end()), "{name}: {got}");
        let out = run(&["compact".as_ref(), store.as_os_str()]);
        assert!(out.status.success(), "{name}: {}", text(&out));
        assert_eq!(String::from_utf8_lossy(&s.export(name).stdout), got);
    }
}

/// Every failure is one line with the prefix, naming what is missing and what is allowed,
/// with control bytes escaped and devices called what they are.
#[test]
fn failures_are_one_line_naming_what_is_wrong() {
    let s = Scratch::new();
    assert!(s.ingest("S", "a.el").status.success());
    let store = s.path("S");
    let st = store.as_os_str();
    std::fs::write(s.path("esc.el"), b"1 2\n\x1b[31mx 3\n").unwrap();
    let esc = s.path("esc.el");
    let new = s.path("new");
    let cases: Vec<(Vec<&OsStr>, Vec<&str>)> = vec![
        (vec![], vec!["missing command", "ingest", "stats"]),
        (vec!["stats".as_ref()], vec!["missing argument <STORE>"]),
        (vec!["run".as_ref(), st], vec!["missing argument <KERNEL>"]),
        (
            vec![
                "ingest".as_ref(),
                st,
                "a.el".as_ref(),
                "--delimiter".as_ref(),
                "\n".as_ref(),
            ],
            vec!["'\\n'", "--delimiter"],
        ),
        (
            vec!["query".as_ref(), st, "bogus".as_ref()],
            vec!["has-edge, weight, degree"],
        ),
        (
            vec!["export".as_ref(), st, "--format".as_ref(), "bogus".as_ref()],
            vec!["text, parquet"],
        ),
        (
            vec!["ingest".as_ref(), st, "/dev/null".as_ref()],
            vec!["/dev/null", "character device"],
        ),
        (
            vec!["ingest".as_ref(), st, esc.as_os_str()],
            vec!["\\u{1b}[31mx"],
        ),
        (
            vec![
                "ingest".as_ref(),
                new.as_os_str(),
                esc.as_os_str(),
                "--no-validate".as_ref(),
            ],
            vec!["\\u{1b}", "was removed"],
        ),
    ];
    for (args, needles) in cases {
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains('\u{1b}'),
            "{args:?}: a raw ESC reached the terminal"
        );
        assert_refused(&out, &needles, &format!("{args:?}"));
    }
    std::fs::remove_file(store.join("DICT")).unwrap();
    assert_refused(
        &s.export("S"),
        &["S: dictionary file DICT is missing"],
        "DICT gone",
    );
}

/// The blocks of a WAL segment this build wrote: (offset, length) of each, in order.
fn wal_blocks(seg: &[u8]) -> Vec<(usize, usize)> {
    // Blocks start after the segment's header page (FORMAT.md, "WAL").
    let mut at = 4096;
    let mut v = Vec::new();
    while at + 32 <= seg.len() && seg[at..at + 4] == 0x4B4C_4257u32.to_le_bytes() {
        let len = 32 + u32::from_le_bytes(seg[at + 4..at + 8].try_into().unwrap()) as usize;
        v.push((at, len));
        at += len;
    }
    v
}

/// A torn tail that a writer's recovery cuts is recorded: `stats` and `check` say how many
/// records it cut, and where.
#[test]
fn a_torn_tail_cut_by_recovery_is_reported() {
    let s = Scratch::new();
    let store = s.path("S");
    ingest_killed_after(&store, 40);
    let wal = store.join("wal-0000000000000001.log");
    let bytes = std::fs::read(&wal).unwrap();
    let blocks = wal_blocks(&bytes);
    let &(at, len) = blocks.last().expect("the log holds blocks");
    // The last block torn: its header and half its body landed, zeros after.
    let mut torn = bytes.clone();
    torn[at + len / 2..at + len].fill(0);
    std::fs::write(&wal, &torn).unwrap();
    assert!(s.ingest("S", "b.el").status.success());
    let stats = text(&run(&["stats".as_ref(), store.as_os_str()]));
    // The block's first LSN from its header: how many batches the killed child had
    // logged past its 40th acknowledgement depends on the race with the kill.
    let lsn = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap());
    let cut = format!("at LSN {lsn} (segment wal-0000000000000001.log, byte {at}): ");
    assert!(
        stats.contains("last log cut    by a writer's recovery"),
        "{stats}"
    );
    let cut_line = |out: &str| -> String {
        let from = out
            .find(&cut)
            .unwrap_or_else(|| panic!("{cut:?} not in {out}"));
        out[from..].lines().next().unwrap().to_owned()
    };
    let line = cut_line(&stats);
    // At least the torn block: its bytes and its records (8 per batch). A progress
    // record past the block (below) makes the cut reach it.
    let words: Vec<&str> = line[cut.len()..].split(' ').collect();
    let (bytes, records): (usize, u64) = (words[0].parse().unwrap(), words[4].parse().unwrap());
    assert!(bytes >= len && records >= 8, "{line}");
    assert!(
        line.contains("record(s) in at least 1 block(s); whether they had been acknowledged cannot be told from the store"),
        "{line}"
    );
    // When the killed child's progress record had already covered the torn block (the
    // race with the kill decides), the tear is damage no crash leaves, and said so.
    assert_eq!(
        line.contains("as the segment's progress record says"),
        line.contains("no crash leaves this"),
        "{line}"
    );
    let check = s.check("S");
    assert!(check.status.success(), "{}", text(&check));
    assert_eq!(cut_line(&text(&check)), line);
}

/// `check` names every file in the store that the MANIFEST does not, and what it is.
#[test]
fn check_lists_the_files_the_manifest_does_not_name() {
    let s = Scratch::new();
    assert!(s.ingest("S", "a.el").status.success());
    let store = s.path("S");
    std::fs::write(store.join("notes.txt"), "mine").unwrap();
    std::fs::write(store.join("run-0000000000000009.run.tmp"), "half a run").unwrap();
    let out = s.check("S");
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("notes.txt is not named by the MANIFEST: not an evograph file"),
        "{t}"
    );
    assert!(
        t.contains(
            "run-0000000000000009.run.tmp is not named by the MANIFEST: a run write cut short"
        ),
        "{t}"
    );
    // The next writer removes what a crash left, and nothing of the user's.
    assert!(s.ingest("S", "b.el").status.success());
    assert!(store.join("notes.txt").exists());
    assert!(!store.join("run-0000000000000009.run.tmp").exists());
}
