//! Corruption tests: flip single bytes (XOR 0x40) in every kind of store file, tear and
//! pad the WAL tail, and check that damage is either detected (a clear `Corrupt` error that
//! changes no file) or harmless (the store opens with exactly the acknowledged graph) —
//! never silently a different graph, never a panic.
//!
//! Two stores are damaged, always in copies:
//! - a *clean* store written by two `evograph ingest --durability sync` runs: two run files,
//!   a DICT of two chunks and a MANIFEST whose two slots hold the last two commits;
//! - a *crash image*: batch A inserted and flushed through the library, then batch B
//!   inserted with sync durability, and the directory copied while the graph is still open,
//!   so B lives only in the WAL, exactly as after a crash.

mod common;

use common::{
    assert_no_panic, copy_dir, dir_files, evograph, parse_export, quiet_forks, read,
    write_in_place, Rng,
};
use evograph::{Compression, Durability, Error, Graph, Options};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Opens a store while no child process is being started (see `common::quiet_forks`).
fn open_store(path: &Path, opts: Options) -> evograph::Result<Graph> {
    quiet_forks(|| Graph::open(path, opts))
}

/// Closes a store while no child process is being started, so that its lock is free when
/// this returns.
fn close_store(g: Graph) {
    quiet_forks(|| g.close()).unwrap();
}

type Edges = BTreeSet<(u64, u64)>;
type Vertices = BTreeSet<u64>;

/// External id of the `i`-th vertex: sparse and large, so the dictionary has work to do.
fn ext(i: u64) -> u64 {
    i * 1_000_003 + 11
}

fn random_edges(rng: &mut Rng, n: usize, lo: u64, hi: u64) -> Vec<(u64, u64)> {
    (0..n)
        .map(|_| (ext(lo + rng.below(hi - lo)), ext(lo + rng.below(hi - lo))))
        .collect()
}

fn lib_opts() -> Options {
    Options::new()
        .background(false)
        .threads(2)
        .durability(Durability::Sync)
        .create(false)
}

/// The graph a store should show: live vertices and directed edges, in external ids.
#[derive(Clone, PartialEq, Eq)]
struct Want {
    vertices: Vertices,
    edges: Edges,
}

impl std::fmt::Debug for Want {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "graph of {} vertices and {} edges",
            self.vertices.len(),
            self.edges.len()
        )
    }
}

impl Want {
    fn of<'a>(batches: impl IntoIterator<Item = &'a Vec<(u64, u64)>>) -> Want {
        let edges: Edges = batches.into_iter().flatten().copied().collect();
        let vertices = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
        Want { vertices, edges }
    }
}

fn write_el(path: &Path, edges: &[(u64, u64)]) {
    let mut s = String::new();
    for (a, b) in edges {
        writeln!(s, "{a} {b}").unwrap();
    }
    std::fs::write(path, s).unwrap();
}

/// The clean store: two sync ingests of 2000 edges each, in batches of 500.
struct Clean {
    _tmp: tempfile::TempDir,
    store: PathBuf,
    want: Want,
}

fn clean_store() -> Clean {
    clean_store_with(Compression::None)
}

/// The clean store, its runs written as `compression` says.
fn clean_store_with(compression: Compression) -> Clean {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let mut rng = Rng(0x5eed_c0de);
    // The second file brings vertices 500..600, so DICT gets a second chunk.
    let a = random_edges(&mut rng, 2000, 0, 500);
    let b = random_edges(&mut rng, 2000, 0, 600);
    for (name, edges) in [("a.el", &a), ("b.el", &b)] {
        let input = tmp.path().join(name);
        write_el(&input, edges);
        let mut args = vec![
            "ingest".as_ref(),
            store.as_os_str(),
            input.as_os_str(),
            "--durability".as_ref(),
            "sync".as_ref(),
            "--batch".as_ref(),
            "500".as_ref(),
        ];
        if compression == Compression::Packed {
            args.push("--compress".as_ref());
        }
        let out = evograph(args);
        assert!(
            out.status.success(),
            "ingest {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let want = Want::of([&a, &b]);
    // Sanity: the pristine store is sound and shows exactly what was ingested.
    let g = open_store(&store, lib_opts()).unwrap();
    let (vertices, edges) = read(&g.snapshot().unwrap());
    let got = Want { vertices, edges };
    assert!(got == want, "pristine clean store: {got:?}, want {want:?}");
    assert!(g.check().unwrap().is_sound());
    close_store(g);
    Clean {
        _tmp: tmp,
        store,
        want,
    }
}

/// The crash image: A flushed into a run, B only in the WAL.
struct CrashImage {
    _tmp: tempfile::TempDir,
    store: PathBuf,
    /// Every acknowledged batch (A then B), in order: one WAL block each.
    batches: Vec<Vec<(u64, u64)>>,
    /// How many of `batches` are in the run (A).
    flushed: usize,
}

impl CrashImage {
    fn full(&self) -> Want {
        Want::of(&self.batches)
    }
    fn without_last(&self) -> Want {
        Want::of(&self.batches[..self.batches.len() - 1])
    }
}

fn crash_image() -> CrashImage {
    let tmp = tempfile::tempdir().unwrap();
    let live = tmp.path().join("live");
    let store = tmp.path().join("store");
    let mut rng = Rng(0xc0ff_ee00);
    let mut batches = Vec::new();
    for _ in 0..4 {
        batches.push(random_edges(&mut rng, 500, 0, 500));
    }
    let flushed = batches.len();
    for i in 0..6u64 {
        // Each B batch brings 10 vertices of its own, so every WAL block carries a
        // dictionary section and the last batch is surely not a repeat of earlier ones.
        let mut b = random_edges(&mut rng, 280, 0, 500);
        let own = 1000 + i * 10;
        b.extend(random_edges(&mut rng, 20, own, own + 10));
        batches.push(b);
    }
    let g = open_store(&live, lib_opts().create(true)).unwrap();
    for b in &batches[..flushed] {
        g.insert_edges(b).unwrap();
    }
    g.flush().unwrap();
    for b in &batches[flushed..] {
        g.insert_edges(b).unwrap();
    }
    // Sync durability: every block is durable now. The copy is what a crash would leave.
    copy_dir(&live, &store);
    close_store(g);
    let img = CrashImage {
        _tmp: tmp,
        store,
        batches,
        flushed,
    };
    // Sanity: the image opens to the full graph (in a scratch copy, as open repairs).
    let scratch = img._tmp.path().join("scratch");
    copy_dir(&img.store, &scratch);
    let g = open_store(&scratch, lib_opts()).unwrap();
    let (vertices, edges) = read(&g.snapshot().unwrap());
    let got = Want { vertices, edges };
    let full = img.full();
    assert!(got == full, "pristine crash image: {got:?}, want {full:?}");
    assert!(g.wal_bytes_replayed() > 0, "B must come from the WAL");
    close_store(g);
    img
}

// ---------------------------------------------------------------------------------------
// Looking at the damaged store from every side.

/// What became of a damaged store.
#[derive(Debug)]
enum Outcome {
    /// `Graph::open` refused (and no file changed); `check` named the problem.
    Failed {
        err: Error,
        /// stdout and stderr of `evograph check`.
        check_text: String,
    },
    /// `Graph::open` succeeded; this is what it showed (also after a reopen).
    Opened { graph: Want },
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn show(store: &Path) -> Want {
    let g = open_store(store, lib_opts()).unwrap();
    let (vertices, edges) = read(&g.snapshot().unwrap());
    close_store(g);
    Want { vertices, edges }
}

/// Runs the read-only CLI commands, then `Graph::open`, then `compact`, asserting what must
/// hold whatever the damage: no panic, read-only commands change nothing, a failed open
/// changes nothing, a successful open gives a sound store that reopens to the same graph
/// and agrees with what the read-only `export` printed before any repair.
fn examine(store: &Path, ctx: &str) -> Outcome {
    let before = dir_files(store);
    let check = evograph(["check".as_ref(), store.as_os_str()]);
    assert_no_panic(&check, &format!("{ctx}: check"));
    let export = evograph(["export".as_ref(), store.as_os_str()]);
    assert_no_panic(&export, &format!("{ctx}: export"));
    let stats = evograph(["stats".as_ref(), store.as_os_str(), "--json".as_ref()]);
    assert_no_panic(&stats, &format!("{ctx}: stats"));
    assert!(
        dir_files(store) == before,
        "{ctx}: read-only commands changed the store"
    );
    for (what, out) in [("check", &check), ("export", &export), ("stats", &stats)] {
        if out.status.code() == Some(2) {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.starts_with("evograph: error: ") && err.trim_end().lines().count() == 1,
                "{ctx}: {what} should print one error line, printed {err:?}"
            );
        }
    }
    let check_text = text(&check);
    match open_and_read(store) {
        Err(err) => {
            assert!(
                dir_files(store) == before,
                "{ctx}: the failed open ({err}) changed files of the store"
            );
            assert_ne!(
                check.status.code(),
                Some(0),
                "{ctx}: Graph::open fails ({err}) but `check` says sound:\n{check_text}"
            );
            assert_ne!(
                export.status.code(),
                Some(0),
                "{ctx}: Graph::open fails ({err}) but `export` succeeds"
            );
            let compact = evograph(["compact".as_ref(), store.as_os_str()]);
            assert_no_panic(&compact, &format!("{ctx}: compact"));
            assert_eq!(
                compact.status.code(),
                Some(2),
                "{ctx}: compact of a store that does not open: {}",
                text(&compact)
            );
            assert!(
                dir_files(store) == before,
                "{ctx}: the failed compact changed files of the store"
            );
            Outcome::Failed { err, check_text }
        }
        Ok((g, snap)) => {
            let (vertices, edges) = read(&snap);
            drop(snap);
            let rep = g.check().unwrap();
            close_store(g);
            assert!(
                rep.is_sound(),
                "{ctx}: opened but unsound: {:?}",
                rep.problems
            );
            // `check` before the writer's repair fails exactly when `stats` reports the
            // log's tail as damage no crash leaves (the writer still opens, cutting it).
            let tail_damaged = serde_json::from_slice::<serde_json::Value>(&stats.stdout)
                .ok()
                .is_some_and(|j| !j["unreadable_tail"]["damage"].is_null());
            assert_eq!(
                check.status.code(),
                Some(if tail_damaged { 1 } else { 0 }),
                "{ctx}: Graph::open succeeds; `check` before it, with the tail damaged: {tail_damaged}:\n{check_text}"
            );
            assert_eq!(export.status.code(), Some(0), "{ctx}: {}", text(&export));
            assert!(
                parse_export(&export.stdout) == edges,
                "{ctx}: read-only export before repair differs from the repaired graph"
            );
            let graph = Want { vertices, edges };
            assert!(show(store) == graph, "{ctx}: the graph changed on reopen");
            let compact = evograph(["compact".as_ref(), store.as_os_str()]);
            assert_no_panic(&compact, &format!("{ctx}: compact"));
            assert_eq!(compact.status.code(), Some(0), "{ctx}: {}", text(&compact));
            assert!(show(store) == graph, "{ctx}: the graph changed by compact");
            Outcome::Opened { graph }
        }
    }
}

/// Opens the store and takes a snapshot. Runs are verified on first use, not at open, so
/// damage in a run's body is refused by the first snapshot; the handle is dropped then,
/// and closed, which must change nothing either (the caller compares the files).
fn open_and_read(store: &Path) -> evograph::Result<(Graph, evograph::Snapshot)> {
    let g = open_store(store, lib_opts())?;
    match g.snapshot() {
        Ok(s) => Ok((g, s)),
        Err(e) => {
            close_store(g);
            Err(e)
        }
    }
}

/// Flips byte `at` of `store/file` (XOR 0x40).
fn flip(store: &Path, file: &str, at: usize) {
    use std::os::unix::fs::FileExt;
    let p = store.join(file);
    let len = std::fs::metadata(&p).unwrap().len() as usize;
    assert!(at < len, "{file} has {len} bytes, no byte {at}");
    let mut b = [0u8];
    std::fs::File::open(&p)
        .unwrap()
        .read_exact_at(&mut b, at as u64)
        .unwrap();
    write_in_place(&p, at as u64, &[b[0] ^ 0x40]);
}

/// A fresh copy of `store` in `work/<n>`.
fn fresh_copy(store: &Path, work: &Path, n: &mut usize) -> PathBuf {
    *n += 1;
    let p = work.join(format!("copy-{n}"));
    copy_dir(store, &p);
    p
}

fn files_matching(store: &Path, pred: impl Fn(&str) -> bool) -> Vec<String> {
    dir_files(store).into_keys().filter(|n| pred(n)).collect()
}

fn is_run(n: &str) -> bool {
    n.starts_with("run-") && n.ends_with(".run")
}

fn is_wal(n: &str) -> bool {
    n.starts_with("wal-") && n.ends_with(".log") && !n.starts_with("wal-spare-")
}

/// Asserts that `o` is a refused open with `Error::Corrupt`.
fn assert_corrupt(o: &Outcome, ctx: &str) -> String {
    match o {
        Outcome::Failed {
            err: Error::Corrupt(msg),
            check_text,
        } => {
            assert!(!msg.is_empty(), "{ctx}");
            check_text.clone()
        }
        other => panic!("{ctx}: expected Error::Corrupt, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Run files.

fn word(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap())
}

/// Layout of a run file, read from its header (see `src/run/format.rs`).
struct RunLayout {
    id: u64,
    section_off: Vec<usize>,
    crc_table_off: usize,
    crc_blocks: usize,
    file_len: usize,
}

fn run_layout(bytes: &[u8]) -> RunLayout {
    const S: usize = evograph::internals::run::format::SECTIONS;
    let l = RunLayout {
        id: word(bytes, 2),
        section_off: (0..S).map(|i| word(bytes, 14 + i) as usize).collect(),
        crc_table_off: word(bytes, 14 + S) as usize,
        crc_blocks: word(bytes, 15 + S) as usize,
        file_len: word(bytes, 17 + S) as usize,
    };
    assert_eq!(l.file_len, bytes.len());
    l
}

/// Flips each position of each run file (positions computed per file) and requires a
/// refused open or first snapshot with `Corrupt`, and a `check` that fails naming the run.
fn run_flips(positions: impl Fn(&RunLayout) -> Vec<usize>, what: &str) {
    run_flips_with(Compression::None, positions, what)
}

fn run_flips_with(
    compression: Compression,
    positions: impl Fn(&RunLayout) -> Vec<usize>,
    what: &str,
) {
    let c = clean_store_with(compression);
    let work = c._tmp.path().join("work");
    let runs = files_matching(&c.store, is_run);
    assert_eq!(
        runs.len(),
        2,
        "the clean store should have two runs: {runs:?}"
    );
    let mut n = 0;
    let mut tried = 0;
    for run in &runs {
        let layout = run_layout(&std::fs::read(c.store.join(run)).unwrap());
        for at in positions(&layout) {
            let copy = fresh_copy(&c.store, &work, &mut n);
            flip(&copy, run, at);
            let ctx = format!("{what}: {run} byte {at}");
            let check_text = assert_corrupt(&examine(&copy, &ctx), &ctx);
            assert!(
                check_text.contains(run.as_str())
                    || check_text.contains(&format!("run {}", layout.id)),
                "{ctx}: check output does not name the run:\n{check_text}"
            );
            tried += 1;
        }
    }
    assert!(tried > 0);
}

#[test]
fn run_header_flip_is_corrupt() {
    // Every word of the header that the format defines: magic, version and flags, id,
    // level, LSNs, counts, section offsets, crc table position, its crc, file length and
    // the header checksum itself (bytes 0..240).
    run_flips(
        |_| {
            vec![
                0, 7, 9, 13, 17, 30, 44, 60, 70, 100, 130, 170, 199, 205, 213, 220, 227, 232, 239,
            ]
        },
        "run header",
    );
}

#[test]
fn run_section_flip_is_corrupt() {
    // First, middle and last byte of every non-empty section (padding to 8 included).
    run_flips(
        |l| {
            let mut v = Vec::new();
            for i in 0..11 {
                let start = l.section_off[i];
                let end = l.section_off.get(i + 1).copied().unwrap_or(l.crc_table_off);
                if end > start {
                    v.extend([start, (start + end) / 2, end - 1]);
                }
            }
            v.dedup();
            v
        },
        "run section",
    )
}

/// Compressed runs: a flipped byte anywhere in a packed stream, its index or the 512-byte
/// header is refused as damage, never decoded into other neighbors.
#[test]
fn packed_run_flip_is_corrupt() {
    run_flips_with(
        Compression::Packed,
        |l| {
            // The 512-byte header's defined words and its checksum, then every 61st byte of
            // the sections (streams, stream positions, the rest) and their last bytes.
            let mut v: Vec<usize> = vec![0, 9, 17, 100, 230, 250, 252, 258, 500, 504, 511];
            v.extend((512..l.crc_table_off).step_by(61));
            for i in 0..11 {
                let start = l.section_off[i];
                let end = l.section_off.get(i + 1).copied().unwrap_or(l.crc_table_off);
                if end > start {
                    v.push(end - 1);
                }
            }
            v.sort_unstable();
            v.dedup();
            v
        },
        "packed run",
    )
}

#[test]
fn run_crc_table_flip_is_corrupt() {
    run_flips(
        |l| (l.crc_table_off..l.crc_table_off + 4 * l.crc_blocks).collect(),
        "run crc table",
    )
}

#[test]

fn run_last_bytes_flip_is_corrupt() {
    run_flips(|l| (l.file_len - 8..l.file_len).collect(), "run last bytes")
}

#[test]

fn run_header_tail_flip_is_corrupt() {
    run_flips(|_| (240..256).collect(), "run header tail")
}

#[test]
fn run_truncated_or_missing_is_corrupt() {
    let c = clean_store();
    let work = c._tmp.path().join("work");
    let mut n = 0;
    for run in files_matching(&c.store, is_run) {
        let len = std::fs::metadata(c.store.join(&run)).unwrap().len();
        for cut in [0, 100, len / 2, len - 1] {
            let copy = fresh_copy(&c.store, &work, &mut n);
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(copy.join(&run))
                .unwrap();
            f.set_len(cut).unwrap();
            drop(f);
            let ctx = format!("{run} cut to {cut} bytes");
            assert_corrupt(&examine(&copy, &ctx), &ctx);
        }
        let copy = fresh_copy(&c.store, &work, &mut n);
        std::fs::remove_file(copy.join(&run)).unwrap();
        let ctx = format!("{run} removed");
        assert_corrupt(&examine(&copy, &ctx), &ctx);
    }
}

// ---------------------------------------------------------------------------------------
// The dictionary.

/// Bytes of a stamped DICT chunk's header ("DCH2", FORMAT.md).
const DICT_HEADER: usize = 40;

/// Chunk start offsets of a DICT file (40-byte headers with the count at 4..8, then 8
/// bytes per entry).
fn dict_chunks(b: &[u8]) -> Vec<usize> {
    let mut at = 0;
    let mut v = Vec::new();
    while at + DICT_HEADER <= b.len() {
        assert_eq!(&b[at..at + 4], b"DCH2", "a chunk this build writes");
        v.push(at);
        let count = u32::from_le_bytes(b[at + 4..at + 8].try_into().unwrap()) as usize;
        at += DICT_HEADER + count * 8;
    }
    assert_eq!(at, b.len(), "DICT is not a sequence of whole chunks");
    v
}

fn dict_flips(positions: impl Fn(&[usize], usize) -> Vec<usize>, what: &str) {
    let c = clean_store();
    let work = c._tmp.path().join("work");
    let dict = std::fs::read(c.store.join("DICT")).unwrap();
    let chunks = dict_chunks(&dict);
    assert_eq!(
        chunks.len(),
        2,
        "the clean store's DICT should have two chunks"
    );
    let mut n = 0;
    for at in positions(&chunks, dict.len()) {
        let copy = fresh_copy(&c.store, &work, &mut n);
        flip(&copy, "DICT", at);
        let ctx = format!("{what}: DICT byte {at}");
        let check_text = assert_corrupt(&examine(&copy, &ctx), &ctx);
        assert!(
            check_text.contains("DICT") || check_text.contains("dictionary"),
            "{ctx}: check does not name the dictionary:\n{check_text}"
        );
    }
}

#[test]
fn dict_flip_is_corrupt() {
    // Magic, count, first id, store id, commit and checksum of each chunk header; first,
    // middle and last payload bytes of each chunk; the last byte of the file.
    dict_flips(
        |chunks, len| {
            let mut v = Vec::new();
            for (i, &c) in chunks.iter().enumerate() {
                let end = chunks.get(i + 1).copied().unwrap_or(len);
                v.extend([c, c + 3, c + 4, c + 7, c + 8, c + 12, c + 16, c + 23]);
                v.extend([c + 24, c + 31, c + 32, c + 35]);
                v.extend([c + DICT_HEADER, (c + DICT_HEADER + end) / 2, end - 1]);
            }
            v
        },
        "dict",
    )
}

#[test]

fn dict_reserved_header_flip_is_corrupt() {
    dict_flips(
        |chunks, _| {
            chunks
                .iter()
                .flat_map(|&c| [c + 36, c + 37, c + 39])
                .collect()
        },
        "dict reserved",
    )
}

// ---------------------------------------------------------------------------------------
// The manifest.

const SLOT: usize = 64 << 10;

/// For each slot, if written: sequence number and payload length.
fn manifest_slots(b: &[u8]) -> [Option<(u64, usize)>; 2] {
    assert_eq!(b.len(), 2 * SLOT);
    [0, 1].map(|i| {
        let s = &b[i * SLOT..];
        (&s[..8] == b"EVGMANI1").then(|| {
            (
                u64::from_le_bytes(s[8..16].try_into().unwrap()),
                u32::from_le_bytes(s[16..20].try_into().unwrap()) as usize,
            )
        })
    })
}

/// The clean store's slots: (older, newer) as (slot index, payload length).
fn clean_slots(c: &Clean) -> [(usize, usize); 2] {
    let man = std::fs::read(c.store.join("MANIFEST")).unwrap();
    let [Some(s0), Some(s1)] = manifest_slots(&man) else {
        panic!("two commits should have written both MANIFEST slots");
    };
    if s0.0 < s1.0 {
        [(0, s0.1), (1, s1.1)]
    } else {
        [(1, s1.1), (0, s0.1)]
    }
}

/// Positions of the root in slot `i`: magic, sequence, length, checksum, payload start,
/// middle and end.
fn root_positions(i: usize, len: usize) -> Vec<usize> {
    [2, 9, 17, 22, 24, 24 + len / 2, 24 + len - 1]
        .into_iter()
        .map(|p| i * SLOT + p)
        .collect()
}

/// Flips each position of the clean store's MANIFEST: the store must open as exactly the
/// ingested graph, or refuse with `Corrupt` (and change nothing).
fn manifest_flips(positions: impl Fn(&Clean) -> Vec<usize>, what: &str) {
    let c = clean_store();
    let work = c._tmp.path().join("work");
    let mut n = 0;
    for at in positions(&c) {
        let copy = fresh_copy(&c.store, &work, &mut n);
        flip(&copy, "MANIFEST", at);
        let ctx = format!("{what}: MANIFEST byte {at}");
        match examine(&copy, &ctx) {
            Outcome::Failed {
                err: Error::Corrupt(_),
                ..
            } => {}
            Outcome::Failed { err, .. } => panic!("{ctx}: unclear error {err:?}"),
            Outcome::Opened { graph } => assert!(
                graph == c.want,
                "{ctx}: opened as a different graph ({graph:?}, want {:?})",
                c.want
            ),
        }
    }
}

#[test]
fn manifest_flip_outside_the_newest_root_keeps_the_graph_or_fails() {
    // The older slot's root, and the unused bytes after each root.
    manifest_flips(
        |c| {
            let [(old, old_len), (new, new_len)] = clean_slots(c);
            let mut v = root_positions(old, old_len);
            v.extend([old * SLOT + 24 + old_len + 5, old * SLOT + SLOT - 1]);
            v.extend([new * SLOT + 24 + new_len + 5, new * SLOT + SLOT - 1]);
            v
        },
        "older slot or unused bytes",
    )
}

#[test]

fn manifest_newest_root_flip_keeps_the_graph_or_fails() {
    manifest_flips(
        |c| {
            let [_, (new, new_len)] = clean_slots(c);
            root_positions(new, new_len)
        },
        "newest root",
    )
}

#[test]
fn manifest_both_slots_damaged_fails() {
    let c = clean_store();
    let work = c._tmp.path().join("work");
    let [(a, a_len), (b, b_len)] = clean_slots(&c);
    let mut n = 0;
    // Magic, checksum and payload damage in both slots at once.
    for (pa, pb) in [(2, 2), (22, 24 + b_len / 2), (24 + a_len / 2, 9)] {
        let copy = fresh_copy(&c.store, &work, &mut n);
        flip(&copy, "MANIFEST", a * SLOT + pa);
        flip(&copy, "MANIFEST", b * SLOT + pb);
        let ctx = format!("MANIFEST slot {a} byte {pa} and slot {b} byte {pb}");
        let check_text = assert_corrupt(&examine(&copy, &ctx), &ctx);
        assert!(check_text.contains("MANIFEST"), "{ctx}: {check_text}");
    }
}

#[test]
fn crash_image_manifest_flip_keeps_the_graph_or_fails() {
    // The crash image has had one flush since creation.
    let img = crash_image();
    let work = img._tmp.path().join("work");
    let man = std::fs::read(img.store.join("MANIFEST")).unwrap();
    let (newest, (_, len)) = manifest_slots(&man)
        .into_iter()
        .enumerate()
        .filter_map(|(i, s)| s.map(|s| (i, s)))
        .max_by_key(|(_, s)| s.0)
        .unwrap();
    let mut n = 0;
    for at in root_positions(newest, len) {
        let copy = fresh_copy(&img.store, &work, &mut n);
        flip(&copy, "MANIFEST", at);
        let ctx = format!("crash image MANIFEST newest slot byte {at}");
        match examine(&copy, &ctx) {
            Outcome::Failed {
                err: Error::Corrupt(_),
                ..
            } => {}
            Outcome::Failed { err, .. } => panic!("{ctx}: unclear error {err:?}"),
            Outcome::Opened { graph } => {
                assert!(graph == img.full(), "{ctx}: opened as a different graph")
            }
        }
    }
}

#[test]

fn manifest_torn_first_commit_keeps_the_previous_root() {
    // A new store, batches acknowledged (sync), then the first flush's manifest commit is
    // torn: only a prefix of the new slot bytes reached the medium. The manifest promises
    // the previous root stays in force, and the WAL still holds every batch.
    let tmp = tempfile::tempdir().unwrap();
    let live = tmp.path().join("live");
    let mut rng = Rng(0xfeed);
    let batches: Vec<Vec<(u64, u64)>> = (0..3)
        .map(|_| random_edges(&mut rng, 400, 0, 300))
        .collect();
    let g = open_store(&live, lib_opts().create(true)).unwrap();
    for b in &batches {
        g.insert_edges(b).unwrap();
    }
    let before = std::fs::read(live.join("MANIFEST")).unwrap();
    g.flush().unwrap();
    let image = tmp.path().join("image");
    copy_dir(&live, &image);
    close_store(g);
    let after = std::fs::read(image.join("MANIFEST")).unwrap();
    let changed: Vec<usize> = (0..before.len())
        .filter(|&i| before[i] != after[i])
        .collect();
    let (first, last) = (changed[0], *changed.last().unwrap());
    let want = Want::of(&batches);
    let mut n = 0;
    for keep in [16, 24, 40, (first + last) / 2, last] {
        if keep <= first || keep > last {
            continue;
        }
        let copy = fresh_copy(&image, &tmp.path().join("work"), &mut n);
        let mut torn = after.clone();
        torn[keep..].copy_from_slice(&before[keep..]);
        std::fs::write(copy.join("MANIFEST"), torn).unwrap();
        let ctx = format!("first commit torn after {keep} bytes");
        match examine(&copy, &ctx) {
            Outcome::Opened { graph } => assert!(graph == want, "{ctx}: opened as {graph:?}"),
            Outcome::Failed { err, .. } => panic!("{ctx}: the store no longer opens: {err}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The WAL.

/// A commit block in a WAL segment.
#[derive(Clone, Copy, Debug)]
struct Block {
    off: usize,
    len: usize,
}

/// Bytes of a WAL segment's header page, where its first block starts (FORMAT.md).
const WAL_HEADER: usize = 4096;

/// The single WAL segment of the crash image and its blocks (see `src/wal/block.rs`).
fn wal_blocks(img: &CrashImage) -> (String, Vec<Block>) {
    let wals = files_matching(&img.store, is_wal);
    assert_eq!(wals.len(), 1, "the crash image should have one WAL segment");
    let b = std::fs::read(img.store.join(&wals[0])).unwrap();
    let mut off = WAL_HEADER;
    let mut blocks = Vec::new();
    while off + 32 <= b.len() && b[off..off + 4] == 0x4B4C_4257u32.to_le_bytes() {
        let len = 32 + u32::from_le_bytes(b[off + 4..off + 8].try_into().unwrap()) as usize;
        blocks.push(Block { off, len });
        off += len;
    }
    // A segment's length is fixed when it is made; past its blocks it holds zeros.
    let pad = &b[off..];
    assert!(
        pad.iter().all(|&x| x == 0),
        "the WAL segment holds more than whole blocks and zeros: {} bytes after them",
        pad.len()
    );
    // One block per acknowledged batch (A's blocks are still there: one segment, never
    // rotated). If this changes, the positions below no longer mean what they say.
    assert_eq!(blocks.len(), img.batches.len(), "blocks: {blocks:?}");
    (wals.into_iter().next().unwrap(), blocks)
}

#[test]
fn wal_flip_before_later_blocks_is_corrupt() {
    let img = crash_image();
    let work = img._tmp.path().join("work");
    let (wal, blocks) = wal_blocks(&img);
    let mut n = 0;
    // Every block but the last is followed by durable blocks: damage there must be
    // reported, whether the block is already in the run (A) or only in the log (B).
    // Magic, length, LSN, record count, section count, crc, durable gap, payload start,
    // and the last byte: every field of the last block in the run and of the first only
    // in the log; one field each (in turn) and the middle of every other block.
    let fields = |len: usize| [0, 5, 9, 17, 21, 25, 29, 32, len - 1];
    for (i, blk) in blocks[..blocks.len() - 1].iter().enumerate() {
        let positions = if i + 1 == img.flushed || i == img.flushed {
            let mut all = fields(blk.len).to_vec();
            all.push(blk.len / 2);
            all
        } else {
            vec![fields(blk.len)[i % 9], blk.len / 2]
        };
        for p in positions {
            let copy = fresh_copy(&img.store, &work, &mut n);
            flip(&copy, &wal, blk.off + p);
            let ctx = format!("WAL block {i} (of {}) byte {p}", blocks.len());
            let check_text = assert_corrupt(&examine(&copy, &ctx), &ctx);
            assert!(check_text.contains("WAL"), "{ctx}: {check_text}");
        }
    }
}

#[test]

fn wal_segment_header_flip_is_corrupt() {
    let img = crash_image();
    let work = img._tmp.path().join("work");
    let (wal, _) = wal_blocks(&img);
    let mut n = 0;
    // Magic, sequence number, first LSN, store id, commit, length, flags, the zeros after
    // them, the header checksum and the zeros after it. The segment header is persisted before any block is written, so intact
    // blocks after a damaged header prove damage, not a torn write.
    for at in [0, 7, 9, 17, 25, 33, 41, 49, 53, 57, 61] {
        let copy = fresh_copy(&img.store, &work, &mut n);
        flip(&copy, &wal, at);
        let ctx = format!("WAL segment header byte {at}");
        let check_text = assert_corrupt(&examine(&copy, &ctx), &ctx);
        assert!(check_text.contains("WAL"), "{ctx}: {check_text}");
    }
}

/// A torn tail may lose the last batch, nothing else, and must not be reported as damage.
fn assert_torn_tail_ok(img: &CrashImage, o: Outcome, lose_last: bool, ctx: &str) {
    match o {
        Outcome::Opened { graph } => {
            let want = if lose_last {
                img.without_last()
            } else {
                img.full()
            };
            assert!(
                graph == want,
                "{ctx}: opened as a different graph than {} (edges {} vs {})",
                if lose_last {
                    "the acknowledged graph minus the torn batch"
                } else {
                    "the acknowledged graph"
                },
                graph.edges.len(),
                want.edges.len()
            );
        }
        Outcome::Failed { err, .. } => panic!("{ctx}: a torn tail must open, got {err}"),
    }
}

#[test]
fn wal_torn_last_block_loses_only_that_batch() {
    let img = crash_image();
    let work = img._tmp.path().join("work");
    let (wal, blocks) = wal_blocks(&img);
    let last = *blocks.last().unwrap();
    let mut n = 0;
    for cut in [
        1,
        4,
        13,
        31,
        32,
        33,
        last.len / 2,
        last.len - 8,
        last.len - 1,
    ] {
        let copy = fresh_copy(&img.store, &work, &mut n);
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(copy.join(&wal))
            .unwrap();
        f.set_len((last.off + cut) as u64).unwrap();
        drop(f);
        let ctx = format!("WAL cut {cut} bytes into its last block");
        assert_torn_tail_ok(&img, examine(&copy, &ctx), true, &ctx);
    }
}

#[test]
fn wal_garbage_after_last_block_is_ignored() {
    let img = crash_image();
    let work = img._tmp.path().join("work");
    let (wal, blocks) = wal_blocks(&img);
    let end = blocks.last().map_or(WAL_HEADER, |b| b.off + b.len);
    let mut rng = Rng(77);
    let mut n = 0;
    let tails: Vec<(&str, Vec<u8>)> = vec![
        ("8 zero bytes", vec![0; 8]),
        ("4096 zero bytes", vec![0; 4096]),
        ("5 zero bytes", vec![0; 5]),
        (
            "100 random bytes",
            (0..100).map(|_| rng.next() as u8).collect(),
        ),
        (
            "4096 random bytes",
            (0..4096).map(|_| rng.next() as u8).collect(),
        ),
    ];
    for (what, tail) in tails {
        let copy = fresh_copy(&img.store, &work, &mut n);
        let p = copy.join(&wal);
        assert!(end + tail.len() <= std::fs::metadata(&p).unwrap().len() as usize);
        write_in_place(&p, end as u64, &tail);
        let ctx = format!("WAL with {what} after its last block");
        assert_torn_tail_ok(&img, examine(&copy, &ctx), false, &ctx);
    }
}

#[test]
fn wal_flip_in_last_block_is_a_torn_tail_or_corrupt() {
    // Damage in the last block cannot be told from a torn write: either answer is fine, but
    // nothing beyond that batch may be lost.
    let img = crash_image();
    let work = img._tmp.path().join("work");
    let (wal, blocks) = wal_blocks(&img);
    let last = *blocks.last().unwrap();
    let mut n = 0;
    for p in [0, 9, 25, 40, last.len / 2, last.len - 1] {
        let copy = fresh_copy(&img.store, &work, &mut n);
        flip(&copy, &wal, last.off + p);
        let ctx = format!("WAL last block byte {p}");
        match examine(&copy, &ctx) {
            Outcome::Failed {
                err: Error::Corrupt(_),
                ..
            } => {}
            o => assert_torn_tail_ok(&img, o, true, &ctx),
        }
    }
}

#[test]
fn a_damaged_run_is_refused_at_open_with_verify_at_open_and_at_first_read_otherwise_even_when_checked_ahead(
) {
    let c = clean_store();
    let work = c._tmp.path().join("work");
    let run = files_matching(&c.store, is_run).remove(0);
    let layout = run_layout(&std::fs::read(c.store.join(&run)).unwrap());
    let mut n = 0;
    let copy = fresh_copy(&c.store, &work, &mut n);
    // A neighbor id in the middle of the body.
    flip(
        &copy,
        &run,
        (layout.section_off[0] + layout.crc_table_off) / 2,
    );
    let eager = lib_opts().verify(evograph::Verify::AtOpen);
    match open_store(&copy, eager) {
        Err(Error::Corrupt(m)) => assert!(m.contains(&run), "{m}"),
        Err(e) => panic!("expected Corrupt, got {e}"),
        Ok(_) => panic!("Verify::AtOpen opened a damaged run"),
    }
    // A read-only open checks every run ahead, in the background: still never refused at
    // open, and its first snapshot reports the damage.
    let ahead = open_store(&copy, lib_opts().read_only(true)).expect("checks ahead refuse no open");
    match ahead.snapshot() {
        Err(Error::Corrupt(m)) => assert!(m.contains(&run), "{m}"),
        Err(e) => panic!("expected Corrupt, got {e}"),
        Ok(_) => panic!("a read-only snapshot read a damaged run"),
    }
    drop(ahead);
    let g = open_store(&copy, lib_opts()).expect("a lazy open reads headers only");
    match g.snapshot() {
        Err(Error::Corrupt(m)) => assert!(m.contains(&run), "{m}"),
        Err(e) => panic!("expected Corrupt, got {e}"),
        Ok(_) => panic!("a snapshot read a damaged run"),
    }
    // Writes go on being refused rather than resolved against the damaged run.
    let applied = g
        .apply(&[evograph::Record::Insert(1, 2)])
        .and_then(|_| g.flush());
    assert!(
        matches!(applied, Err(Error::Corrupt(_)) | Err(Error::Poisoned(_))),
        "a flush resolved against a damaged run: {applied:?}"
    );
}

/// A run's vertex states are read as the store opens, before any run is checked: a damaged
/// one names an id past the dictionary, and is refused as `Corrupt` naming the run rather
/// than sizing the deleted-vertex bits by it (at 64 bits an allocation that aborted).
#[test]
fn a_vertex_state_past_the_dictionary_is_refused_at_open_not_allocated_for() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let g = open_store(&store, lib_opts().create(true)).unwrap();
    g.insert_edges(&[(1, 2), (2, 3), (3, 4)]).unwrap();
    g.delete_vertex(3).unwrap();
    g.flush().unwrap();
    close_store(g);
    const VERTEX_OPS: usize = evograph::internals::run::format::VERTEX_OPS;
    let (run, at) = files_matching(&store, is_run)
        .into_iter()
        .find_map(|run| {
            let l = run_layout(&std::fs::read(store.join(&run)).unwrap());
            let end = l.section_off.get(VERTEX_OPS + 1).copied();
            let end = end.unwrap_or(l.crc_table_off);
            (end > l.section_off[VERTEX_OPS]).then_some((run, l.section_off[VERTEX_OPS]))
        })
        .expect("a run holds the deletion");
    // Every bit of the first state set: a deletion of the largest id the width allows.
    write_in_place(
        &store.join(&run),
        at as u64,
        &[0xff; 8][..std::mem::size_of::<evograph::VertexId>()],
    );
    for opts in [lib_opts(), lib_opts().read_only(true)] {
        match open_store(&store, opts) {
            Err(Error::Corrupt(m)) => {
                assert!(m.contains(&run) && m.contains("vertex state"), "{m}")
            }
            Err(e) => panic!("expected Corrupt, got {e}"),
            Ok(_) => panic!("an open took a vertex state past the dictionary"),
        }
    }
}
