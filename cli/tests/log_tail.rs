//! A damaged or shortened WAL tail is reported by every reader before any writer runs
//! (issue 64, item 2; FORMAT.md, "The log's tail"): `check` fails on what no crash leaves
//! and passes on a torn last write, `stats --json` gives `unreadable_tail`, the reading
//! commands answer with one line on stderr, and the writer that cuts it records what is
//! known without calling the records unacknowledged.

mod common;

use common::{assert_no_panic, copy_dir, evograph, quiet_forks};
use evograph::{Durability, Graph, Options};
use std::path::{Path, PathBuf};
use std::process::Output;

fn run(args: &[&std::ffi::OsStr]) -> Output {
    let out = evograph(args);
    assert_no_panic(&out, &format!("{args:?}"));
    out
}

fn cmd(what: &str, store: &Path, more: &[&str]) -> Output {
    let mut args: Vec<&std::ffi::OsStr> = vec![what.as_ref(), store.as_os_str()];
    args.extend(more.iter().map(|s| std::ffi::OsStr::new(*s)));
    run(&args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A crash image: `batches` batches of 50 edges acknowledged one by one (sync), the store
/// copied while its writer had it open. Returns the image and its WAL segment's name.
fn crash_image(dir: &Path, batches: u64) -> (PathBuf, String) {
    let live = dir.join("live");
    let opts = Options::new()
        .create(true)
        .background(false)
        .threads(1)
        .durability(Durability::Sync);
    let g = quiet_forks(|| Graph::open(&live, opts)).unwrap();
    for b in 0..batches {
        let edges: Vec<(u64, u64)> = (0..50).map(|i| (b * 100 + i, b * 100 + i + 1)).collect();
        g.insert_edges(&edges).unwrap();
    }
    let img = dir.join("img");
    copy_dir(&live, &img);
    quiet_forks(|| g.close()).unwrap();
    let wal = std::fs::read_dir(&img)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("wal-0"))
        .max()
        .expect("a WAL segment");
    (img, wal)
}

/// Where each block of a segment starts, and where the last one ends (FORMAT.md, "WAL").
fn blocks(seg: &[u8]) -> Vec<usize> {
    let mut at = 4096;
    let mut starts = Vec::new();
    while seg[at..at + 4] == 0x4B4C_4257u32.to_le_bytes() {
        starts.push(at);
        at += 32 + u32::from_le_bytes(seg[at + 4..at + 8].try_into().unwrap()) as usize;
    }
    starts.push(at);
    starts
}

/// Tears the newer of a segment's two progress records (FORMAT.md, "The progress record"),
/// as a crash during the last write leaves the header page: the durable point published
/// after that write's persist never landed, and the record written before it is in force.
fn unpublish(seg: &mut [u8]) {
    let seq = |at: usize| u64::from_le_bytes(seg[at..at + 8].try_into().unwrap());
    let newer = if seq(512) > seq(1024) { 512 } else { 1024 };
    seg[newer + 3] ^= 0x40;
}

fn export_lines(store: &Path) -> (usize, String) {
    let o = cmd("export", store, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (stdout(&o).lines().count(), stderr(&o))
}

#[test]
fn a_segment_truncated_after_acknowledgements_is_damage_every_reader_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let (img, wal) = crash_image(tmp.path(), 6);
    let seg = std::fs::read(img.join(&wal)).unwrap();
    let starts = blocks(&seg);
    // Cut at the start of the fourth block: three acknowledged batches survive.
    let cut = starts[3];
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(img.join(&wal))
        .unwrap();
    f.set_len(cut as u64).unwrap();
    drop(f);

    let check = cmd("check", &img, &[]);
    let text = stdout(&check);
    assert_eq!(check.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&wal) && text.contains(&format!("byte {cut}")),
        "{text}"
    );
    assert!(text.contains("cut short"), "{text}");

    let stats = cmd("stats", &img, &["--json"]);
    let j: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    let t = &j["unreadable_tail"];
    assert_eq!(t["segment"], wal.as_str(), "{t}");
    assert_eq!(t["offset"], cut as u64, "{t}");
    for key in ["bytes", "blocks_at_least", "records_at_least"] {
        assert!(t[key].is_u64(), "{key} in {t}");
    }
    // The progress record knows the last write: its 50 records at least, and the writes
    // before it were durable.
    assert!(t["records_at_least"].as_u64().unwrap() >= 50, "{t}");
    assert!(t["durable_records_at_least"].as_u64().unwrap() >= 50, "{t}");
    assert!(!t["damage"].is_null(), "{t}");
    assert!(j["last_cut"].is_null(), "no writer cut anything yet");

    let (lines, err) = export_lines(&img);
    assert_eq!(lines, 150, "export answers from what reads");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("evograph: warning: ")
            && err.contains(&wal)
            && err.contains(&cut.to_string()),
        "{err}"
    );
    let wcc = cmd("run", &img, &["wcc"]);
    assert_eq!(wcc.status.code(), Some(0));
    assert_eq!(stderr(&wcc).lines().count(), 1, "{}", stderr(&wcc));

    // The next writer cuts it and records what is known.
    let input = tmp.path().join("more.el");
    std::fs::write(&input, "900000 900001\n").unwrap();
    let ingest = run(&["ingest".as_ref(), img.as_os_str(), input.as_os_str()]);
    assert!(ingest.status.success(), "{}", stderr(&ingest));
    let stats = cmd("stats", &img, &[]);
    let text = stdout(&stats);
    assert!(!text.contains("never acknowledged"), "{text}");
    assert!(
        text.contains("cannot be told from the store") && text.contains(&wal),
        "{text}"
    );
    let j: serde_json::Value =
        serde_json::from_slice(&cmd("stats", &img, &["--json"]).stdout).unwrap();
    assert!(
        j["unreadable_tail"].is_null(),
        "cut: {}",
        j["unreadable_tail"]
    );
    assert_eq!(j["last_cut"]["offset"], cut as u64);
    let check = cmd("check", &img, &[]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
}

#[test]
fn a_torn_last_write_is_reported_and_check_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let (img, wal) = crash_image(tmp.path(), 4);
    let p = img.join(&wal);
    let mut seg = std::fs::read(&p).unwrap();
    let starts = blocks(&seg);
    let (last, end) = (starts[starts.len() - 2], starts[starts.len() - 1]);
    // The last write's body torn: zeros where its last sectors never landed. Had its
    // persist completed, that would be damage.
    seg[(last + end) / 2..end].fill(0);
    std::fs::write(&p, &seg).unwrap();
    assert_eq!(cmd("check", &img, &[]).status.code(), Some(1));
    unpublish(&mut seg);
    std::fs::write(&p, &seg).unwrap();

    let check = cmd("check", &img, &[]);
    let text = stdout(&check);
    assert_eq!(check.status.code(), Some(0), "a crash leaves this: {text}");
    assert!(text.contains("torn tail") && text.contains(&wal), "{text}");
    let j: serde_json::Value =
        serde_json::from_slice(&cmd("stats", &img, &["--json"]).stdout).unwrap();
    let t = &j["unreadable_tail"];
    assert_eq!(t["offset"], last as u64, "{t}");
    assert!(t["damage"].is_null(), "{t}");
    assert_eq!(t["blocks_at_least"], 1, "{t}");
    assert_eq!(t["records_at_least"], 50, "{t}");
    let (lines, err) = export_lines(&img);
    assert_eq!((lines, err.lines().count()), (150, 1), "{err}");
}

#[test]
fn beside_a_live_writer_a_partial_block_is_its_write_in_progress() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("live");
    let opts = Options::new()
        .create(true)
        .background(false)
        .threads(1)
        .durability(Durability::Sync);
    let g = quiet_forks(|| Graph::open(&store, opts)).unwrap();
    g.insert_edges(&[(1, 2), (2, 3)]).unwrap();
    let wal = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("wal-0"))
        .unwrap();
    let p = store.join(&wal);
    let seg = std::fs::read(&p).unwrap();
    let end = *blocks(&seg).last().unwrap();
    // Half a block's header past the end, as a write caught half way looks.
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &0x4B4C_4257u32.to_le_bytes(), end as u64)
        .unwrap();
    drop(f);
    let check = cmd("check", &store, &[]);
    let text = stdout(&check);
    assert_eq!(check.status.code(), Some(0), "{text}");
    assert!(
        text.contains("a writer holds the store: the log was read up to LSN 2"),
        "{text}"
    );
    assert!(!text.contains("torn tail"), "{text}");
    let (lines, err) = export_lines(&store);
    assert_eq!(
        (lines, err.as_str()),
        (2, ""),
        "no warning beside a live writer"
    );
    let j: serde_json::Value =
        serde_json::from_slice(&cmd("stats", &store, &["--json"]).stdout).unwrap();
    assert!(j["unreadable_tail"].is_null(), "{}", j["unreadable_tail"]);
    quiet_forks(|| g.close()).unwrap();
}
