//! A seeded corruption campaign: random damage to every kind of store file, on every medium,
//! and the three outcomes a store may give (issue 46):
//!
//! 1. **refused**, with a message naming the damaged file;
//! 2. **opened as the graph the store holds**;
//! 3. **opened as a torn tail**: the acknowledged graph less whole batches at the end, no
//!    more than a crash with `--in-flight 4` can leave unacknowledged (5), and the cut
//!    reported both by a reader before any writer runs (`stats`' unreadable tail, with
//!    `check` failing exactly when it is damage no crash leaves) and by the writer that
//!    cuts it (`last_cut`). The one loss accepted unreported is the newest segment
//!    replaced by an older copy of itself (FORMAT.md, "The log's tail").
//!
//! Anything else fails the test: a different graph, more batches lost, a silent cut, a
//! panic, a refusal that does not name the file, an opened store whose `check` finds
//! problems.
//!
//! Stores: on the file, pmem and battery media, an integer-keyed store closed cleanly
//! after two sessions, and a string-keyed compressed store copied while open (a crash
//! image: runs, and batches only in a log of several small segments). Each has a **twin**
//! built by the same steps (same file names and sizes, another store id) and **older
//! generations** (copies taken along the way). Damage: a flipped byte (header bytes
//! favoured), truncation, a zeroed range, deletion, a swap with the twin's file of the same
//! name, a roll-back to an older generation's copy.
//!
//! `EVOGRAPH_CAMPAIGN_TRIALS=n` runs n trials per store (default 40: 480 in all), and
//! `EVOGRAPH_CAMPAIGN_SEED=s` another seed.

mod common;

use common::{copy_dir, named, read, Model, Rng};
use evograph::store::MediumKind;
use evograph::{Compression, Durability, Graph, KeyKind, Options, Record};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Batches a crash with `ingest --in-flight 4` can leave unacknowledged: the bound on what a
/// torn tail may lose.
const TORN_BATCHES: usize = 5;

/// A store's graph: live vertices and edges, in the test's integer ids.
type GraphSet = (BTreeSet<u64>, BTreeSet<(u64, u64)>);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavor {
    /// Integer keys, plain runs, closed after two sessions: no log.
    Closed,
    /// String keys, packed runs, copied while open: batches in the log.
    Crashed,
}

/// A built store: its final files, its twin's, older generations, and what it holds.
struct Built {
    store: PathBuf,
    twin: PathBuf,
    /// Copies of the store taken before the final one, oldest first.
    generations: Vec<PathBuf>,
    /// The graph after every acknowledged batch, in order; the last is what it holds.
    graphs: Vec<GraphSet>,
    /// How many of `graphs` are in runs (the torn-tail rule never reaches them).
    flushed: usize,
}

fn opts(medium: MediumKind, flavor: Flavor) -> Options {
    let (keys, compression) = match flavor {
        Flavor::Closed => (KeyKind::U64, Compression::None),
        Flavor::Crashed => (KeyKind::String, Compression::Packed),
    };
    Options::new()
        .create(true)
        .background(false)
        .threads(1)
        .durability(Durability::Sync)
        .medium(Some(medium))
        .keys(Some(keys))
        .compression(Some(compression))
        // Small segments (a few batches each): the log of a crash image spans several,
        // with trailers, and the newest holds fewer batches than a torn tail may lose.
        .wal_segment_bytes(1 << 10)
}

/// Batch `i` of a store's history: a few edges, some to new vertices, some deletes.
fn batch(rng: &mut Rng, i: u64, model: &Model) -> Vec<Record> {
    let mut recs = Vec::new();
    for j in 0..12 {
        let r = rng.below(10);
        if r == 0 && !model.edges.is_empty() {
            let k = rng.below(model.edges.len() as u64) as usize;
            let &(u, v) = model.edges.iter().nth(k).unwrap();
            recs.push(Record::Delete(u, v));
        } else {
            recs.push(Record::Insert(rng.below(40), 100 + i * 16 + j));
        }
    }
    recs
}

fn apply(g: &Graph, flavor: Flavor, recs: &[Record]) {
    match flavor {
        Flavor::Closed => g.apply(recs).unwrap(),
        Flavor::Crashed => {
            let (recs, names) = named(recs);
            let t = g.submit_named(&recs, &names).unwrap();
            g.wait(t).unwrap();
        }
    }
}

/// Builds the store at `dir` by its flavor's steps from `seed`, copying generations into
/// `gens` (when given) along the way.
fn build(dir: &Path, medium: MediumKind, flavor: Flavor, seed: u64, gens: Option<&Path>) -> Built {
    let mut rng = Rng(seed);
    let mut model = Model::new(false);
    let mut graphs = Vec::new();
    let mut generations = Vec::new();
    let mut snap_gen = |n: usize| {
        if let Some(g) = gens {
            let to = g.join(format!("gen{n}"));
            copy_dir(dir, &to);
            generations.push(to);
        }
    };
    let mut batch_no = 0;
    let mut session = |g: &Graph, n: usize, model: &mut Model, graphs: &mut Vec<GraphSet>| {
        for _ in 0..n {
            let b = batch(&mut rng, batch_no, model);
            batch_no += 1;
            apply(g, flavor, &b);
            b.iter().for_each(|r| model.apply(r));
            graphs.push((model.vertices.clone(), model.edges.clone()));
        }
    };
    let g = Graph::open(dir, opts(medium, flavor)).unwrap();
    session(&g, 6, &mut model, &mut graphs);
    g.close().unwrap();
    snap_gen(0);
    let g = Graph::open(dir, opts(medium, flavor)).unwrap();
    session(&g, 6, &mut model, &mut graphs);
    let flushed;
    match flavor {
        Flavor::Closed => {
            g.close().unwrap();
            flushed = graphs.len();
        }
        Flavor::Crashed => {
            g.flush().unwrap();
            flushed = graphs.len();
            snap_gen(1);
            // Batches only in the log; a generation after each, for roll-backs.
            for k in 0..8 {
                session(&g, 1, &mut model, &mut graphs);
                if k < 7 {
                    snap_gen(2 + k);
                }
            }
            // The crash image: the files as they are, the handle still open.
            let img = dir.with_extension("img");
            copy_dir(dir, &img);
            drop(g);
            std::fs::remove_dir_all(dir).unwrap();
            std::fs::rename(&img, dir).unwrap();
        }
    }
    Built {
        store: dir.to_path_buf(),
        twin: PathBuf::new(),
        generations,
        graphs,
        flushed,
    }
}

/// The damage one trial does.
#[derive(Debug)]
enum Damage {
    Flip { at: u64 },
    Truncate { to: u64 },
    Zero { from: u64, to: u64 },
    Delete,
    Twin,
    Rollback { generation: usize },
}

fn pick_damage(rng: &mut Rng, len: u64, b: &Built, file: &str) -> Option<Damage> {
    let older: Vec<usize> = (0..b.generations.len())
        .filter(|&g| {
            let p = b.generations[g].join(file);
            p.exists() && std::fs::read(&p).ok() != std::fs::read(b.store.join(file)).ok()
        })
        .collect();
    Some(match rng.below(12) {
        0..=4 if len > 0 => {
            // Headers hold most of what can go wrong in a way checksums do not see.
            let at = if rng.below(2) == 0 {
                rng.below(len.min(64))
            } else {
                rng.below(len)
            };
            Damage::Flip { at }
        }
        5 | 6 if len > 0 => Damage::Truncate { to: rng.below(len) },
        7 if len > 0 => {
            let from = rng.below(len);
            Damage::Zero {
                from,
                to: (from + 1 + rng.below(512)).min(len),
            }
        }
        8 => Damage::Delete,
        9 if b.twin.join(file).exists() => Damage::Twin,
        10 | 11 if !older.is_empty() => Damage::Rollback {
            generation: older[rng.below(older.len() as u64) as usize],
        },
        _ => return None,
    })
}

fn do_damage(d: &Damage, store: &Path, file: &str, b: &Built) {
    let p = store.join(file);
    match *d {
        Damage::Flip { at } => {
            let mut bytes = std::fs::read(&p).unwrap();
            bytes[at as usize] ^= 1 << (at % 8);
            std::fs::write(&p, bytes).unwrap();
        }
        Damage::Truncate { to } => {
            let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            f.set_len(to).unwrap();
        }
        Damage::Zero { from, to } => {
            let mut bytes = std::fs::read(&p).unwrap();
            bytes[from as usize..to as usize].fill(0);
            std::fs::write(&p, bytes).unwrap();
        }
        Damage::Delete => std::fs::remove_file(&p).unwrap(),
        Damage::Twin => {
            common::copy_sparse(&b.twin.join(file), &p);
        }
        Damage::Rollback { generation } => {
            common::copy_sparse(&b.generations[generation].join(file), &p);
        }
    }
}

fn damage_kind(d: &Damage) -> &'static str {
    match d {
        Damage::Flip { .. } => "flip",
        Damage::Truncate { .. } => "truncate",
        Damage::Zero { .. } => "zero",
        Damage::Delete => "delete",
        Damage::Twin => "twin",
        Damage::Rollback { .. } => "rollback",
    }
}

/// What a trial's opens and reads gave.
enum Outcome {
    Refused(String),
    Opened {
        graph: GraphSet,
        cut_reported: bool,
        reader: Reader,
    },
}

/// What a reader saw before any writer opened the damaged store.
enum Reader {
    Refused(String),
    Opened {
        graph: GraphSet,
        /// The tail `stats` reported, and whether it is damage (then `check` must fail).
        tail: Option<evograph::store::UnreadableTail>,
        sound: bool,
    },
}

/// A read-only open before any writer: the graph, the tail `stats` reports, `check`.
fn read_first(store: &Path) -> Reader {
    let opts = Options::new().create(false).threads(1).read_only(true);
    let res = (|| {
        let g = Graph::open(store, opts)?;
        let graph = read(&g.snapshot()?);
        let tail = g.stats()?.unreadable_tail;
        let rep = g.check()?;
        Ok::<_, evograph::Error>((graph, tail, rep.is_sound()))
    })();
    match res {
        Ok((graph, tail, sound)) => Reader::Opened { graph, tail, sound },
        Err(e) => Reader::Refused(e.to_string()),
    }
}

/// Opens the damaged store read-only first (before any writer changes it), then as a writer
/// (the open that repairs), reads it, checks it, closes it, then opens it again read-only:
/// the writer's and the second reader's graphs must agree.
fn examine(store: &Path) -> Outcome {
    let reader = read_first(store);
    let reopen = Options::new().create(false).background(false).threads(1);
    let first = (|| {
        let g = Graph::open(store, reopen.clone())?;
        let graph = read(&g.snapshot()?);
        let rep = g.check()?;
        assert!(rep.is_sound(), "opened, but check finds {:?}", rep.problems);
        let cut = g.stats()?.last_cut.is_some();
        g.close()?;
        Ok::<_, evograph::Error>((graph, cut))
    })();
    match first {
        Err(e) => Outcome::Refused(e.to_string()),
        Ok((graph, cut_reported)) => {
            let again =
                Graph::open(store, reopen.read_only(true)).and_then(|g| Ok(read(&g.snapshot()?)));
            match again {
                Ok(g2) => assert!(g2 == graph, "a second open shows another graph"),
                Err(e) => panic!("opened once, refused the second time: {e}"),
            }
            Outcome::Opened {
                graph,
                cut_reported,
                reader,
            }
        }
    }
}

/// Whether `msg` names `file` (a WAL segment may be named by the segment it follows, or by
/// the log as a whole when every segment is gone).
fn names_file(msg: &str, file: &str) -> bool {
    msg.contains(file)
        || (file.starts_with("wal-") && msg.contains("WAL"))
        || (file == "MANIFEST" && msg.contains("MANIFEST"))
}

/// Judges one trial's outcome (see the module documentation).
fn judge(
    o: &Outcome,
    b: &Built,
    file: &str,
    d: &Damage,
    newest_wal: Option<&str>,
) -> Result<&'static str, String> {
    let held = b.graphs.last().unwrap();
    match o {
        Outcome::Refused(msg) if names_file(msg, file) => Ok("refused"),
        Outcome::Refused(msg) => Err(format!("refused without naming {file}: {msg}")),
        Outcome::Opened { graph, reader, .. } if graph == held => {
            judge_reader(reader, graph, file)?;
            Ok("held graph")
        }
        Outcome::Opened {
            graph,
            cut_reported,
            reader,
        } => {
            let n = b.graphs.len();
            let kept = (b.flushed..n)
                .rev()
                .find(|&k| b.graphs[k - 1] == *graph)
                .ok_or_else(|| "opened as a graph that is no prefix of the batches".to_string())?;
            let lost = n - kept;
            if lost > TORN_BATCHES {
                return Err(format!("opened with {lost} acknowledged batches lost"));
            }
            judge_reader(reader, graph, file)?;
            // The one loss no store can see: the newest segment replaced by an older copy
            // of itself, whose log and progress record agree (FORMAT.md, "The log's tail").
            let undetectable = newest_wal == Some(file) && matches!(d, Damage::Rollback { .. });
            let seen = matches!(reader, Reader::Opened { tail: Some(_), .. });
            let reported = seen && *cut_reported;
            if !(undetectable || reported) {
                return Err(format!(
                    "{lost} batches cut without a report (before a writer: {seen}; by the writer: {cut_reported})"
                ));
            }
            Ok("torn tail")
        }
    }
}

/// A reader before any writer shows the graph the writer then opens (or refuses, naming
/// the file), and `check` fails exactly when the tail it reports is damage.
fn judge_reader(reader: &Reader, graph: &GraphSet, file: &str) -> Result<(), String> {
    match reader {
        Reader::Refused(msg) if names_file(msg, file) => Ok(()),
        Reader::Refused(msg) => Err(format!("a reader refused without naming {file}: {msg}")),
        Reader::Opened { graph: g, .. } if g != graph => {
            Err("a reader before the writer read another graph".into())
        }
        Reader::Opened {
            tail: Some(t),
            sound,
            ..
        } if *sound == t.damage.is_some() => Err(format!(
            "check says sound: {sound}, but the tail it reports is {t:?}"
        )),
        Reader::Opened { .. } => Ok(()),
    }
}

fn trials() -> u64 {
    std::env::var("EVOGRAPH_CAMPAIGN_TRIALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

/// Runs the campaign on one medium and flavor; returns outcome counts.
fn campaign(medium: MediumKind, flavor: Flavor, seed: u64) -> BTreeMap<&'static str, u64> {
    let tmp = tempfile::tempdir().unwrap();
    let mut b = build(
        &tmp.path().join("store"),
        medium,
        flavor,
        7,
        Some(&tmp.path().join("gens")),
    );
    let twin = build(&tmp.path().join("twin"), medium, flavor, 7, None);
    assert_eq!(twin.graphs, b.graphs, "the twin holds the same graph");
    b.twin = twin.store;
    let files: Vec<String> = {
        let mut v: Vec<String> = std::fs::read_dir(&b.store)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let newest_wal = files
        .iter()
        .filter(|f| f.starts_with("wal-0"))
        .max()
        .cloned();
    if flavor == Flavor::Crashed {
        let segments = files.iter().filter(|f| f.starts_with("wal-0")).count();
        assert!(
            segments >= 2,
            "the crash image's log spans segments: {files:?}"
        );
    }
    let mut rng = Rng(seed ^ (medium as u64) << 8 ^ flavor as u64);
    let mut counts = BTreeMap::new();
    let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
    let mut done = 0;
    while done < trials() {
        let file = &files[rng.below(files.len() as u64) as usize];
        let len = std::fs::metadata(b.store.join(file)).unwrap().len();
        let Some(damage) = pick_damage(&mut rng, len, &b, file) else {
            continue;
        };
        let work = tmp.path().join(format!("trial{done}"));
        copy_dir(&b.store, &work);
        do_damage(&damage, &work, file, &b);
        let ctx = format!("{medium:?} {flavor:?} trial {done}: {damage:?} of {file}");
        let outcome = std::panic::catch_unwind(|| examine(&work))
            .unwrap_or_else(|_| panic!("{ctx}: panicked"));
        match judge(&outcome, &b, file, &damage, newest_wal.as_deref()) {
            Ok(kind) => {
                if std::env::var_os("EVOGRAPH_CAMPAIGN_VERBOSE").is_some() {
                    if let Outcome::Refused(m) = &outcome {
                        eprintln!("{ctx}: refused: {m}");
                    }
                }
                *counts.entry(kind).or_insert(0) += 1;
                *kinds.entry(damage_kind(&damage)).or_insert(0) += 1;
            }
            Err(why) => panic!("{ctx}: {why} (the damaged store is kept at {})", {
                let keep = std::env::temp_dir().join("evograph-campaign-failure");
                let _ = std::fs::remove_dir_all(&keep);
                copy_dir(&work, &keep);
                keep.display().to_string()
            }),
        }
        std::fs::remove_dir_all(&work).unwrap();
        done += 1;
    }
    eprintln!("campaign {medium:?} {flavor:?}: {counts:?}, damage {kinds:?}");
    counts
}

fn seed() -> u64 {
    std::env::var("EVOGRAPH_CAMPAIGN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(46)
}

/// Every outcome of a campaign is one of the three; over the whole campaign each of them
/// happens (a campaign that only ever refuses tests little).
fn run_media(flavor: Flavor) {
    let mut all: BTreeMap<&str, u64> = BTreeMap::new();
    for medium in [MediumKind::File, MediumKind::Pmem, MediumKind::Battery] {
        for (k, n) in campaign(medium, flavor, seed()) {
            *all.entry(k).or_insert(0) += n;
        }
    }
    assert!(all.get("refused").copied().unwrap_or(0) > 0, "{all:?}");
    assert!(all.get("held graph").copied().unwrap_or(0) > 0, "{all:?}");
}

#[test]
fn damage_to_a_closed_store_is_refused_by_name_or_harmless() {
    run_media(Flavor::Closed);
}

#[test]
fn damage_to_a_crash_image_is_refused_by_name_harmless_or_a_reported_torn_tail() {
    run_media(Flavor::Crashed);
}

/// The stores the campaign damages hold every file kind between them, and the crash image
/// batches only in its log.
#[test]
fn the_campaign_stores_hold_every_file_kind() {
    let tmp = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = Vec::new();
    for flavor in [Flavor::Closed, Flavor::Crashed] {
        let b = build(
            &tmp.path().join(format!("{flavor:?}")),
            MediumKind::File,
            flavor,
            7,
            None,
        );
        names.extend(
            std::fs::read_dir(&b.store)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned()),
        );
        if flavor == Flavor::Crashed {
            assert!(b.flushed < b.graphs.len(), "batches only in the log");
        }
    }
    for kind in [
        "MANIFEST",
        "DICT",
        "KEYS",
        "LOCK",
        "run-",
        "wal-0",
        "wal-spare-",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(kind)),
            "no {kind} in {names:?}"
        );
    }
}

/// Where the blocks of a segment with a header page start and end (FORMAT.md, "WAL").
fn block_bounds(bytes: &[u8]) -> Vec<usize> {
    let mut bounds = vec![4096];
    let mut at = 4096;
    while at + 32 <= bytes.len() && bytes[at..at + 4] == 0x4B4C_4257u32.to_le_bytes() {
        at += 32 + u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        bounds.push(at);
    }
    bounds
}

/// The log's tail, damaged on purpose in every way FORMAT.md's table names: truncated at
/// and between block boundaries, zeroed from each block boundary to the end, garbage past
/// the last write, the progress record torn or zeroed. Each outcome is judged as the
/// campaign judges random damage: refused by name, the held graph, or a cut reported by a
/// reader before any writer (with `check` failing on what no crash leaves) and by the
/// writer. None of these goes unseen.
#[test]
fn damage_to_the_log_tail_is_reported_before_any_writer_runs() {
    let tmp = tempfile::tempdir().unwrap();
    for medium in [MediumKind::File, MediumKind::Pmem] {
        let dir = tmp.path().join(format!("{medium:?}"));
        let b = build(&dir.join("store"), medium, Flavor::Crashed, 11, None);
        let newest = std::fs::read_dir(&b.store)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with("wal-0"))
            .max()
            .unwrap();
        let pristine = std::fs::read(b.store.join(&newest)).unwrap();
        let bounds = block_bounds(&pristine);
        // Header flag 1: a retired segment reused.
        let recycled = pristine[48] & 1 == 1;
        let end = *bounds.last().unwrap();
        let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
        for &at in &bounds {
            cases.push((
                format!("cut at block boundary {at}"),
                pristine[..at].to_vec(),
            ));
            if at == end {
                continue;
            }
            let mut z = pristine.clone();
            z[at..end].fill(0);
            cases.push((format!("zeroed from block boundary {at}"), z.clone()));
            // With its progress records too: a segment holding blocks always has one.
            z[512..1024 + 48].fill(0);
            cases.push((format!("zeroed from {at} with the progress records"), z));
            // With the newer record only: a slot of zeros beside a record past the first.
            let mut z = pristine.clone();
            z[at..end].fill(0);
            let newer = [512, 1024]
                .into_iter()
                .max_by_key(|&s| u64::from_le_bytes(z[s..s + 8].try_into().unwrap()))
                .unwrap();
            z[newer..newer + 48].fill(0);
            cases.push((format!("zeroed from {at} with the newer record"), z));
        }
        cases.push(("cut mid-block".into(), pristine[..end - 5].to_vec()));
        let mut g = pristine.clone();
        g[end + 8..end + 200].fill(0xA5);
        cases.push(("garbage after the last block".into(), g));
        // Garbage near the segment's end: past the page of the last write when the
        // segment reaches that far, which no crash writes (damage); within it otherwise,
        // as a torn last write may leave it (a cut, with nothing acknowledged lost).
        let far = (end + 8192).min(pristine.len() - 100);
        let past_its_page = far >= (end + 64).next_multiple_of(4096);
        let mut g = pristine.clone();
        g[far..far + 64].fill(0x5A);
        cases.push(("garbage pages past the last write".into(), g));
        let mut t = pristine.clone();
        t[512 + 3] ^= 1;
        t[1024 + 3] ^= 1;
        cases.push(("both progress slots flipped".into(), t));
        for (n, (what, bytes)) in cases.into_iter().enumerate() {
            let work = dir.join(format!("case{n}"));
            copy_dir(&b.store, &work);
            std::fs::write(work.join(&newest), &bytes).unwrap();
            let ctx = format!("{medium:?}: {what}");
            let outcome = std::panic::catch_unwind(|| examine(&work))
                .unwrap_or_else(|_| panic!("{ctx}: panicked"));
            match judge(&outcome, &b, &newest, &Damage::Delete, Some(&newest)) {
                Err(why) => panic!("{ctx}: {why}"),
                // Every case here but garbage after the blocks loses batches or is damage
                // (garbage past the last write is, in a segment that is not a reused one,
                // whose earlier life may have left anything there).
                Ok(v)
                    if v == "held graph"
                        && !what.starts_with("garbage after")
                        && !(what.starts_with("garbage pages") && (recycled || !past_its_page)) =>
                {
                    let Outcome::Opened { reader, .. } = &outcome else {
                        unreachable!()
                    };
                    let seen = matches!(reader, Reader::Opened { tail: Some(t), .. } if t.damage.is_some());
                    assert!(seen, "{ctx}: no damage reported");
                }
                Ok(_) => {}
            }
            std::fs::remove_dir_all(&work).unwrap();
        }
    }
}
