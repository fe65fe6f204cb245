//! Power-cut simulation on the sim medium.
//!
//! A seeded workload (inserts, deletes, vertex inserts and deletes, weights, flushes,
//! background and explicit compactions, snapshots held across later writes, reopens) runs
//! on a [`SimMedium`] that records every operation. Crash images are then taken at every
//! acknowledgement, every manifest commit, every directory sync and at random points; each
//! is opened and must pass `check` and equal the model after K records, K at least the
//! acknowledged count and on a batch boundary (before the first acknowledgement: empty, and
//! the store usable). Each recovery is recorded too, and images of crashes in the middle of
//! it must give the same graph.
//!
//! - By default each configuration runs one seed (CI's 64-bit pass runs soak seed 0 of
//!   the configurations whose bytes vary most as well).
//! - `EVOGRAPH_SIM_SEED=n` runs seed n only (replays a failure: the seed fixes the workload
//!   and every image's choices; thread scheduling may still move operations in the log).
//! - `EVOGRAPH_SIM_SOAK=n` runs n seeds per configuration instead of the default;
//!   `EVOGRAPH_SIM_SOAK=a..b` runs soak seeds a to b-1, to go on where an earlier soak
//!   stopped.
//!
//! A failing image is saved under `target/tmp/sim-failures/` for `evograph check`.

mod common;

use common::{named, read, read_weights, Model, Rng};
use evograph::history::History;
use evograph::internals::medium::sim::{Fault, SimMedium, Tear};
use evograph::internals::medium::Medium;
use evograph::store::Point;
use evograph::{
    Compression, Durability, Graph, GraphView, KeyKind, Options, Record, RunVersions, Snapshot,
};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Clone, Copy, Debug)]
struct Config {
    durability: Durability,
    weighted: bool,
    undirected: bool,
    tear: Tear,
    background: bool,
    keys: KeyKind,
    compression: Compression,
    /// The store keeps all its history: every recovered image must also read the graph as
    /// of earlier commits as the model had it.
    history: bool,
    /// When run versions are derived (by compactions, or after every flush as well): a
    /// power cut may land inside a versions file's write, and a point read through a
    /// recovered one must be the model's.
    versions: RunVersions,
}

#[derive(Clone, Debug)]
enum Step {
    Batch(Vec<Record>),
    Flush,
    Compact,
    Snapshot,
    Reopen,
    /// History narrowed to the last `n` commits, then widened to all again: the commits let
    /// go must stay gone (and the segment the window cut is written again).
    Narrow(u64),
}

/// Images checked by all tests of this process (reported, and asserted per test).
static IMAGES: AtomicUsize = AtomicUsize::new(0);
/// Images whose recovery reported a torn log tail it cut.
static CUTS: AtomicUsize = AtomicUsize::new(0);

fn seeds(default: &[u64]) -> Vec<u64> {
    if let Some(s) = std::env::var("EVOGRAPH_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return vec![s];
    }
    match std::env::var("EVOGRAPH_SIM_SOAK")
        .ok()
        .and_then(|s| soak_range(&s))
    {
        Some(r) => r.map(|i| 1000 + i * 7919).collect(),
        None => default.to_vec(),
    }
}

/// `n` (soak seeds 0..n) or `a..b` (seeds a..b, to go on from an earlier soak).
fn soak_range(s: &str) -> Option<std::ops::Range<u64>> {
    match s.split_once("..") {
        Some((a, b)) => Some(a.trim().parse().ok()?..b.trim().parse().ok()?),
        None => Some(0..s.trim().parse().ok()?),
    }
}

/// A workload of `steps` steps over a small id space, so that deletes and re-inserts hit.
fn workload(rng: &mut Rng, cfg: Config, steps: usize) -> Vec<Step> {
    let ids = 60;
    let mut out = Vec::with_capacity(steps);
    let mut inserted: Vec<(u64, u64)> = Vec::new();
    for _ in 0..steps {
        let step = match rng.below(40) {
            0 => Step::Flush,
            1 => Step::Compact,
            2 | 3 => Step::Snapshot,
            4 => Step::Reopen,
            5 if cfg.history => Step::Narrow(1 + rng.below(5)),
            _ => {
                let n = 1 + rng.below(60) as usize;
                let mut recs = Vec::with_capacity(n);
                for _ in 0..n {
                    let r = rng.below(100);
                    let rec = if r < 15 && !inserted.is_empty() {
                        let (u, v) = inserted[rng.below(inserted.len() as u64) as usize];
                        Record::Delete(u, v)
                    } else if r < 17 {
                        Record::DeleteVertex(rng.below(ids) * 11 + 5)
                    } else if r < 19 {
                        Record::InsertVertex(rng.below(ids * 2) * 11 + 5)
                    } else {
                        let e = (rng.below(ids) * 11 + 5, rng.below(ids) * 11 + 5);
                        inserted.push(e);
                        if cfg.weighted && rng.below(2) == 0 {
                            Record::InsertWeighted(e.0, e.1, rng.below(1000) as f64 / 8.0)
                        } else {
                            Record::Insert(e.0, e.1)
                        }
                    };
                    recs.push(rec);
                }
                Step::Batch(recs)
            }
        };
        out.push(step);
    }
    out
}

fn opts(cfg: Config, background: bool) -> Options {
    Options::new()
        .keys(Some(cfg.keys))
        .compression(Some(cfg.compression))
        .undirected(Some(cfg.undirected))
        .weighted(Some(cfg.weighted))
        .durability(cfg.durability)
        // Small budgets: flushes, merges and backpressure happen every few batches.
        .memtable_bytes(24 << 10)
        .threads(2)
        .fanout(2)
        // Directed stores merge by partitions of 8 ids, undirected ones whole.
        .partition_bits(if cfg.undirected { 20 } else { 3 })
        .background(background)
        // A few blocks per segment: rotation, recycling and spare reuse all happen.
        .wal_segment_bytes(4 << 10)
        .history(if cfg.history {
            History::All
        } else {
            History::None
        })
        .run_versions(cfg.versions)
        // Tails after every few batches (none while history is kept): their files go
        // through the medium, so power cuts tear them and readers of the images meet them.
        .tails(evograph::Tails::Always)
}

/// How recovery opens an image: the store says what it is, but for its keys, which a
/// creation cut short before its first commit could not record (the store is then made
/// again, keyed as asked).
fn reopen_opts(cfg: Config) -> Options {
    Options::new()
        .keys(Some(cfg.keys))
        .compression(Some(cfg.compression))
        .durability(cfg.durability)
        .threads(1)
        .background(false)
        .wal_segment_bytes(4 << 10)
}

fn digest_parts(
    vertices: &std::collections::BTreeSet<u64>,
    edges: &std::collections::BTreeSet<(u64, u64)>,
    weights: Option<&std::collections::BTreeMap<(u64, u64), u64>>,
) -> u64 {
    let mut h = DefaultHasher::new();
    vertices.hash(&mut h);
    edges.hash(&mut h);
    weights.hash(&mut h);
    h.finish()
}

fn model_digest(m: &Model, weighted: bool) -> u64 {
    digest_parts(&m.vertices, &m.edges, weighted.then_some(&m.weights))
}

fn snapshot_digest(s: &Snapshot, weighted: bool) -> (u64, usize) {
    let (vs, es) = read(s);
    let ws = weighted.then(|| read_weights(s));
    (digest_parts(&vs, &es, ws.as_ref()), es.len())
}

/// The model after each batch, and the store the workload made.
struct Bounds {
    /// (records so far, digest, edges) after each batch.
    at: Vec<(u64, u64, usize)>,
    /// The LSN each of those batches was acknowledged at (its commit), where it was.
    lsns: Vec<Option<u64>>,
    /// The store's id (`stats`), the same in every image that holds its manifest.
    store_id: Option<String>,
    /// The oldest commit a narrowed window left (0: none narrowed): points before it are
    /// no longer shown, in images after the narrowing.
    floor: u64,
}

/// What a recorded run leaves: the medium with its log, and the model's batch boundaries.
struct Recorded {
    medium: SimMedium,
    bounds: Bounds,
    /// The first error an injected fault caused, if any.
    failure: Option<String>,
    /// Tails loaded by readers of what a kill would have left (`read_after_kill`).
    tails_loaded: usize,
}

/// Runs the workload on a fresh sim medium. Marks record what is acknowledged: after each
/// batch under `sync`, after every flush, compaction and close under any mode.
fn record(cfg: Config, steps: &[Step], fault: Option<(u64, Fault)>) -> Recorded {
    let medium = SimMedium::new(cfg.tear);
    if let Some((after, f)) = fault {
        medium.fail_after(after, f);
    }
    let arc: Arc<dyn Medium> = Arc::new(medium.clone());
    let mut model = Model::new(cfg.undirected);
    let mut bounds = Bounds {
        at: vec![(0, model_digest(&model, cfg.weighted), 0)],
        lsns: vec![None],
        store_id: None,
        floor: 0,
    };
    let mut records = 0u64;
    let mut tails_loaded = 0;
    let mut held: Vec<(Snapshot, u64)> = Vec::new();
    let mut failure = None;
    let mut g = match evograph::internals::open_on(arc.clone(), opts(cfg, cfg.background)) {
        Ok(g) => Some(g),
        Err(e) => {
            failure = Some(e.to_string());
            None
        }
    };
    bounds.store_id = g.as_ref().and_then(|g| g.stats().ok()?.store_id);
    for step in steps {
        let Some(gr) = g.as_ref() else { break };
        let res = match step {
            Step::Batch(recs) => {
                // The batch's boundary exists before it is acknowledged: a crash may keep it.
                recs.iter().for_each(|r| model.apply(r));
                records += recs.len() as u64;
                bounds.at.push((
                    records,
                    model_digest(&model, cfg.weighted),
                    model.edges.len(),
                ));
                bounds.lsns.push(None);
                apply(gr, cfg, recs).map(|lsn| {
                    *bounds.lsns.last_mut().unwrap() = Some(lsn);
                    if cfg.durability == Durability::Sync {
                        medium.mark(records);
                    }
                    // Under `sync` the batch is in the log now (other modes write it later).
                    let sync = cfg.durability == Durability::Sync;
                    if fault.is_none() && sync && bounds.lsns.len().is_multiple_of(3) {
                        let want = model_digest(&model, cfg.weighted);
                        tails_loaded += read_after_kill(&medium, cfg, want);
                    }
                })
            }
            Step::Flush => gr.flush().map(|()| medium.mark(records)),
            Step::Compact => gr.compact().map(|()| medium.mark(records)),
            Step::Snapshot => gr.snapshot().map(|s| {
                held.push((s, model_digest(&model, cfg.weighted)));
            }),
            Step::Narrow(n) => {
                let committed: Vec<u64> = bounds.lsns.iter().flatten().copied().collect();
                if let Some(&oldest) = committed.iter().rev().nth(*n as usize - 1) {
                    bounds.floor = bounds.floor.max(oldest);
                }
                gr.set_history(History::Commits(*n))
                    .and_then(|()| gr.set_history(History::All))
                    .map(|()| medium.mark(records))
            }
            Step::Reopen => {
                let res = g.take().unwrap().close().map(|()| medium.mark(records));
                res.and_then(|()| {
                    g = Some(evograph::internals::open_on(
                        arc.clone(),
                        opts(cfg, cfg.background),
                    )?);
                    Ok(())
                })
            }
        };
        if let Err(e) = res {
            assert!(
                fault.is_some(),
                "{cfg:?}: {step:?} failed without an injected fault: {e}"
            );
            failure = Some(e.to_string());
            break;
        }
    }
    // Snapshots stay what they were, whatever happened after them.
    for (i, (s, d)) in held.iter().enumerate() {
        assert_eq!(
            snapshot_digest(s, cfg.weighted).0,
            *d,
            "{cfg:?}: held snapshot {i} changed"
        );
    }
    drop(held);
    if let Some(g) = g {
        match (g.close(), fault) {
            (Ok(()), _) => medium.mark(records),
            (Err(e), Some(_)) => {
                failure.get_or_insert(e.to_string());
            }
            (Err(e), None) => panic!("{cfg:?}: close failed: {e}"),
        }
    }
    Recorded {
        medium,
        bounds,
        failure,
        tails_loaded,
    }
}

/// Applies a batch: as it is, or with its ids turned into names in a string-keyed store
/// (the path an ingest of a named input takes).
/// Returns the LSN it was acknowledged at.
fn apply(g: &Graph, cfg: Config, recs: &[Record]) -> evograph::Result<u64> {
    let t = match cfg.keys {
        KeyKind::U64 => g.submit(recs)?,
        KeyKind::String => {
            let (recs, names) = named(recs);
            g.submit_named(&recs, &names)?
        }
    };
    g.wait(t)?;
    Ok(t.lsn())
}

/// Opens an image, checks it and finds the batch boundary it equals (at or after `acked`
/// records). The image's medium records the recovery, for crashes in the middle of it.
///
/// An image holding the workload's `MANIFEST` must hold its store id: `committed` says
/// whether it does (an image of a recovery of an image without one holds the store that
/// recovery created).
fn verify(
    img: &SimMedium,
    cfg: Config,
    acked: u64,
    bounds: &Bounds,
    committed: bool,
) -> Result<usize, String> {
    let g = evograph::internals::open_on(Arc::new(img.clone()), reopen_opts(cfg))
        .map_err(|e| format!("open failed: {e}"))?;
    let rep = g.check().map_err(|e| format!("check failed: {e}"))?;
    if !rep.is_sound() {
        return Err(format!("check found problems: {:?}", rep.problems));
    }
    let stats = g.stats().map_err(|e| e.to_string())?;
    // Every file of the image is the store's own: its id never changes once committed.
    if committed && bounds.store_id.is_some() && stats.store_id != bounds.store_id {
        return Err(format!(
            "the image holds store {:?}, the workload made {:?}",
            stats.store_id, bounds.store_id
        ));
    }
    // A torn tail this recovery cut is recorded where the log now ends.
    if let Some(c) = stats.last_cut {
        if c.lsn != stats.next_lsn {
            return Err(format!(
                "a cut at LSN {} recorded, the log ends at {}",
                c.lsn, stats.next_lsn
            ));
        }
        CUTS.fetch_add(1, Ordering::Relaxed);
    }
    let snap = g.snapshot().map_err(|e| e.to_string())?;
    let (d, edges) = snapshot_digest(&snap, cfg.weighted);
    // The runs' headers count what their lists hold (adds, tombstones, self loops): the
    // size from the headers alone is the snapshot's.
    let size = g.size().map_err(|e| format!("size failed: {e}"))?;
    if size != evograph::store::GraphSize::of(&snap) {
        return Err(format!(
            "the headers count {size:?}, the lists {:?}",
            evograph::store::GraphSize::of(&snap)
        ));
    }
    drop(snap);
    let found = bounds
        .at
        .iter()
        .position(|&(recs, bd, _)| recs >= acked && bd == d);
    if let Some(k) = found.filter(|_| cfg.history) {
        verify_history(&g, cfg, bounds, k)?;
    }
    g.close()
        .map_err(|e| format!("close after recovery failed: {e}"))?;
    IMAGES.fetch_add(1, Ordering::Relaxed);
    found.ok_or_else(|| {
        let first = (bounds.at.iter())
            .position(|b| b.0 >= acked)
            .unwrap_or(bounds.at.len());
        format!(
            "recovered {edges} edges, acknowledged {acked} records; no batch boundary at or after it matches (the first candidate has {} edges)",
            bounds.at.get(first).map_or(0, |b| b.2)
        )
    })
}

/// The graph as of some commits before boundary `k` (the first, the one before `k`, and a
/// few between) reads as the model had it: history survives the crash as the graph does.
fn verify_history(g: &Graph, cfg: Config, bounds: &Bounds, k: usize) -> Result<(), String> {
    // A batch that committed nothing (a string-keyed store's deletes of names it never
    // saw) has ticket LSN 0 when it comes first: there is no commit to read there.
    let known: Vec<usize> = (1..=k)
        .filter(|&j| bounds.lsns[j].is_some_and(|l| l > 0 && l >= bounds.floor))
        .collect();
    let picks = [
        0,
        known.len() / 3,
        known.len() / 2,
        known.len().saturating_sub(2),
    ];
    for &i in picks.iter().filter(|&&i| i < known.len()) {
        let j = known[i];
        let lsn = bounds.lsns[j].unwrap();
        let (s, _) = g
            .snapshot_at(Point::Lsn(lsn))
            .map_err(|e| format!("the graph as of LSN {lsn} (boundary {j}): {e}"))?;
        let (d, edges) = snapshot_digest(&s, cfg.weighted);
        if d != bounds.at[j].1 {
            return Err(format!(
                "the graph as of LSN {lsn} (boundary {j}) has {edges} edges, the model {}",
                bounds.at[j].2
            ));
        }
    }
    Ok(())
}

/// A reader before any writer sees no damage in a crash image: at most a torn tail, which
/// `check` notes and passes (FORMAT.md, "The log's tail"). Images of a store never committed
/// are no store to read. Returns the digest of what it read (with any tails the writer
/// left), which must be what the next writer's recovery gives.
fn verify_reader(img: &SimMedium, cfg: Config) -> Result<Option<u64>, String> {
    // As `Graph::open` reads a store no writer holds: every block that reads (a power cut
    // can take the durable point published after a persist, not the blocks).
    let opts = reopen_opts(cfg)
        .read_only(true)
        .log_reach(evograph::LogReach::Written);
    let g = match evograph::internals::open_on(Arc::new(img.clone()), opts) {
        Ok(g) => g,
        Err(evograph::Error::NotAStore { .. }) => return Ok(None),
        Err(e) => return Err(format!("a read-only open before any writer failed: {e}")),
    };
    let rep = g
        .check()
        .map_err(|e| format!("read-only check failed: {e}"))?;
    if !rep.is_sound() {
        return Err(format!(
            "a read-only check before any writer found problems: {:?}",
            rep.problems
        ));
    }
    if let Some(t) = g.unreadable_tail().filter(|t| t.damage.is_some()) {
        return Err(format!("a crash image read as damaged: {t:?}"));
    }
    let s = g
        .snapshot()
        .map_err(|e| format!("a reader's snapshot failed: {e}"))?;
    Ok(Some(snapshot_digest(&s, cfg.weighted).0))
}

/// A reader of what killing the writer now would leave (every write the process made,
/// persisted or not: the tails it published, the log blocks it wrote) reads the model.
/// Returns the tails it loaded.
fn read_after_kill(medium: &SimMedium, cfg: Config, want: u64) -> usize {
    let img = medium.process_image();
    let opts = reopen_opts(cfg)
        .read_only(true)
        .log_reach(evograph::LogReach::Written);
    let g = evograph::internals::open_on(Arc::new(img), opts)
        .unwrap_or_else(|e| panic!("{cfg:?}: a reader after a kill failed to open: {e}"));
    let s = g.snapshot().unwrap();
    assert_eq!(
        snapshot_digest(&s, cfg.weighted).0,
        want,
        "{cfg:?}: a reader after a kill read another graph than the writer had"
    );
    g.stats().unwrap().tails_loaded
}

/// A store recovered as empty must take writes and keep them.
fn verify_reusable(img: &SimMedium, cfg: Config) -> Result<(), String> {
    let arc: Arc<dyn Medium> = Arc::new(img.clone());
    let g =
        evograph::internals::open_on(arc.clone(), reopen_opts(cfg)).map_err(|e| e.to_string())?;
    apply(&g, cfg, &[Record::Insert(1, 2)]).map_err(|e| e.to_string())?;
    g.close().map_err(|e| e.to_string())?;
    let g = evograph::internals::open_on(arc, reopen_opts(cfg)).map_err(|e| e.to_string())?;
    let (_, edges) = read(&g.snapshot().map_err(|e| e.to_string())?);
    g.close().map_err(|e| e.to_string())?;
    if !edges.contains(&(1, 2)) || edges.len() > 2 {
        return Err(format!(
            "an empty recovered store, given edge 1 -> 2, holds {edges:?}"
        ));
    }
    Ok(())
}

fn fail(cfg: Config, seed: u64, what: &str, pos: usize, img: &SimMedium, why: &str) -> ! {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("sim-failures")
        .join(format!("seed-{seed}-pos-{pos}"));
    let saved = img.save_to(&dir).map_or_else(
        |e| format!("(could not save the image: {e})"),
        |()| format!("image saved in {}", dir.display()),
    );
    panic!("{cfg:?} seed {seed}: {what} at log position {pos}: {why}; {saved}; replay with EVOGRAPH_SIM_SEED={seed}");
}

/// Crash images of one recorded run, each verified, plus crashes inside each recovery.
/// Returns the number of images checked.
fn sweep(cfg: Config, seed: u64, rec: &Recorded, random: usize) -> usize {
    let m = &rec.medium;
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9) | 1);
    let mut points: Vec<usize> = Vec::new();
    for (p, _) in m.marks() {
        points.extend([p, p]);
    }
    for p in m.persists_of("MANIFEST") {
        points.extend([p, p - 1]);
    }
    points.extend(m.dir_syncs());
    let len = m.log_len();
    points.extend((0..random).map(|_| rng.below(len as u64 + 1) as usize));
    let mut checked = 0;
    let mut nth = 0u64;
    m.images(&points, seed, |pos, img| {
        let acked = m.mark_before(pos);
        let committed = img.exists("MANIFEST");
        let as_reader = |why: &str| -> ! {
            fail(
                cfg,
                seed,
                "power-cut image read before any writer",
                pos,
                &img,
                why,
            )
        };
        // Every other image, to bound the time: a reader before the writer.
        let read = match nth.is_multiple_of(2) {
            true => verify_reader(&img, cfg).unwrap_or_else(|why| as_reader(&why)),
            false => None,
        };
        let k = match verify(&img, cfg, acked, &rec.bounds, committed) {
            Ok(k) => k,
            Err(why) => fail(cfg, seed, "power-cut image", pos, &img, &why),
        };
        if read.is_some_and(|d| d != rec.bounds.at[k].1) {
            as_reader("a reader before the writer read another graph than its recovery gives");
        }
        checked += 1;
        if k == 0 && acked == 0 && nth.is_multiple_of(4) {
            if let Err(why) = verify_reusable(&img.durable_image(), cfg) {
                fail(cfg, seed, "empty image not reusable", pos, &img, &why);
            }
        }
        nth += 1;
        // A crash in the middle of that recovery (open, check, close) gives the same graph.
        if nth.is_multiple_of(3) {
            let rlen = img.log_len();
            let rpts: Vec<usize> = (0..2)
                .map(|_| rng.below(rlen as u64 + 1) as usize)
                .collect();
            img.images(&rpts, seed ^ pos as u64, |rpos, rimg| {
                match verify(&rimg, cfg, acked, &rec.bounds, committed) {
                    Ok(k2) if rec.bounds.at[k2].1 == rec.bounds.at[k].1 => {}
                    Ok(k2) => fail(
                        cfg,
                        seed,
                        "crash during recovery",
                        rpos,
                        &rimg,
                        &format!("recovered boundary {k2}, the first recovery gave {k}"),
                    ),
                    Err(why) => fail(cfg, seed, "crash during recovery", rpos, &rimg, &why),
                }
                checked += 1;
            });
        }
    });
    checked
}

fn simulate(cfg: Config, default_seeds: &[u64], steps: usize, random: usize) {
    let t = std::time::Instant::now();
    let (mut images, mut tails) = (0, 0);
    for seed in seeds(default_seeds) {
        let mut rng = Rng(seed | 1);
        let wl = workload(&mut rng, cfg, steps);
        let rec = record(cfg, &wl, None);
        assert!(rec.failure.is_none());
        tails += rec.tails_loaded;
        images += sweep(cfg, seed, &rec, random);
    }
    eprintln!(
        "sim {cfg:?}: {images} images checked in {:.1} s ({} of this process's reported a cut torn tail, {} tails loaded by readers after kills)",
        t.elapsed().as_secs_f64(),
        CUTS.load(Ordering::Relaxed),
        tails
    );
    assert!(images > 0);
    if !cfg.history && cfg.durability == Durability::Sync {
        // Tails are published every few batches here: a run where no reader loaded one
        // did not test them.
        assert!(tails > 0, "{cfg:?}: no tail was loaded");
    }
}

const SYNC: Config = Config {
    durability: Durability::Sync,
    weighted: false,
    undirected: false,
    tear: Tear::Sector,
    background: true,
    keys: KeyKind::U64,
    compression: Compression::None,
    history: false,
    versions: RunVersions::Compact,
};

/// History kept through power cuts: weighted (weight changes are history too), flushes in
/// the background. The three history configurations are tests of their own so that the
/// test threads run them side by side (`-- power_cuts_with_history` names all three).
#[test]
fn power_cuts_with_history() {
    let cfg = Config {
        history: true,
        weighted: true,
        ..SYNC
    };
    simulate(cfg, &[61], 160, 90);
}

/// History kept through power cuts, undirected, flushes in the foreground.
#[test]
fn power_cuts_with_history_undirected() {
    let cfg = Config {
        history: true,
        undirected: true,
        background: false,
        ..SYNC
    };
    simulate(cfg, &[63], 160, 90);
}

/// History kept through power cuts, directed and unweighted, with every flush and merge
/// deriving its run's versions.
#[test]
fn power_cuts_with_history_versions_per_flush() {
    let cfg = Config {
        history: true,
        versions: RunVersions::Flush,
        ..SYNC
    };
    simulate(cfg, &[65], 160, 90);
}

#[test]
fn power_cuts_sync_directed() {
    simulate(SYNC, &[1], 160, 270);
}

#[test]
fn power_cuts_sync_weighted_undirected_foreground() {
    let cfg = Config {
        weighted: true,
        undirected: true,
        background: false,
        ..SYNC
    };
    simulate(cfg, &[4], 160, 270);
}

/// String keys: names go to `KEYS` (appended and persisted) before the batch naming them,
/// so every image holds a name for every vertex it kept, and a torn `KEYS` tail is cut.
#[test]
fn power_cuts_string_keys() {
    let cfg = Config {
        keys: KeyKind::String,
        ..SYNC
    };
    simulate(cfg, &[31], 160, 270);
}

/// String keys with words torn, weighted, flushing in the foreground. One test per
/// configuration, so that the harness's threads share the work evenly.
#[test]
fn power_cuts_string_keys_torn_words() {
    let cfg = Config {
        keys: KeyKind::String,
        tear: Tear::Word,
        weighted: true,
        background: false,
        ..SYNC
    };
    simulate(cfg, &[33], 160, 270);
}

/// Compressed runs: flushes, seals and merges write packed runs, whose streams a reopen
/// checks before reading; every image must hold exactly what a plain store would.
#[test]
fn power_cuts_compressed_runs() {
    let cfg = Config {
        compression: Compression::Packed,
        ..SYNC
    };
    simulate(cfg, &[41], 160, 270);
}

/// Compressed runs with words torn, weighted and undirected, flushing in the foreground.
#[test]
fn power_cuts_compressed_runs_torn_words() {
    let cfg = Config {
        compression: Compression::Packed,
        tear: Tear::Word,
        weighted: true,
        undirected: true,
        background: false,
        ..SYNC
    };
    simulate(cfg, &[43], 160, 270);
}

#[test]
fn power_cuts_pmem_tearing() {
    let cfg = Config {
        tear: Tear::Word,
        weighted: true,
        ..SYNC
    };
    simulate(cfg, &[7], 160, 270);
}

#[test]
fn power_cuts_interval() {
    let cfg = Config {
        durability: Durability::Interval(2),
        ..SYNC
    };
    simulate(cfg, &[10], 160, 200);
}

#[test]
fn power_cuts_durability_none() {
    let cfg = Config {
        durability: Durability::None,
        ..SYNC
    };
    simulate(cfg, &[10], 160, 200);
}

/// Injected ENOSPC and EIO at seeded points: the error reaches the caller with the
/// system's message, nothing acknowledged is lost, and the store reopens and takes writes.
#[test]
fn injected_faults_lose_nothing_acknowledged() {
    let mut checked = 0;
    for seed in seeds(&[21, 22, 23, 24]) {
        let mut rng = Rng(seed | 1);
        let cfg = Config {
            weighted: seed % 2 == 0,
            background: seed % 3 != 0,
            // Names are appended to KEYS and persisted before their batch: faults hit
            // those writes too.
            keys: if seed % 4 < 2 {
                KeyKind::String
            } else {
                KeyKind::U64
            },
            // Compressed runs are written through the same file calls: faults hit them too.
            compression: if seed % 3 == 1 {
                Compression::Packed
            } else {
                Compression::None
            },
            // History segments are written before the commit naming them: a fault may
            // hit one after its run persisted.
            history: seed % 2 == 1,
            // Versions files are written after their run's commit: a fault there loses
            // nothing and leaves the run without them.
            versions: if seed % 4 == 1 {
                RunVersions::Flush
            } else {
                RunVersions::Compact
            },
            ..SYNC
        };
        let wl = workload(&mut rng, cfg, 120);
        for fault in [Fault::NoSpace, Fault::Io] {
            let after = rng.below(1500);
            let rec = record(cfg, &wl, Some((after, fault)));
            let m = &rec.medium;
            m.clear_fault();
            if let Some(e) = &rec.failure {
                let want = match fault {
                    Fault::NoSpace => "No space left on device",
                    Fault::Io => "Input/output error",
                };
                assert!(e.contains(want), "seed {seed}: unclear error: {e}");
            }
            let acked = m.mark_before(m.log_len());
            // What the process left (a crash of the process alone), the worst power cut, and
            // random ones.
            for (what, img) in [
                ("process image", m.process_image()),
                ("durable image", m.durable_image()),
            ] {
                let committed = img.exists("MANIFEST");
                if let Err(why) = verify(&img, cfg, acked, &rec.bounds, committed) {
                    fail(cfg, seed, what, m.log_len(), &img, &why);
                }
                checked += 1;
            }
            checked += sweep(cfg, seed, &rec, 40);
            // The medium itself, space freed: reopens at its last commit and takes writes.
            if let Err(why) = verify(m, cfg, acked, &rec.bounds, m.exists("MANIFEST")) {
                fail(cfg, seed, "reopen after the fault", m.log_len(), m, &why);
            }
            let g = evograph::internals::open_on(Arc::new(m.clone()), reopen_opts(cfg)).unwrap();
            apply(&g, cfg, &[Record::Insert(7_000_001, 7_000_002)]).unwrap();
            g.close().unwrap();
        }
    }
    eprintln!("faults: {checked} images checked");
}

/// Failure 1 of issue 8: a flush committed a manifest starting the WAL at the run's end
/// before the WAL was durable that far; a crash then left a store that refused to open.
/// Under `interval` the WAL thread persists rarely, so the window is wide open.
#[test]
fn a_flush_never_starts_the_log_past_its_durable_end() {
    let m = SimMedium::new(Tear::Sector);
    let cfg = Config {
        durability: Durability::Interval(3_600_000),
        background: false,
        ..SYNC
    };
    let g = evograph::internals::open_on(Arc::new(m.clone()), opts(cfg, false)).unwrap();
    g.apply(&[Record::Insert(1, 2), Record::Insert(2, 3)])
        .unwrap();
    g.flush().unwrap();
    g.apply(&[Record::Insert(3, 4)]).unwrap();
    // The worst power cut now: everything unpersisted lost.
    let img = m.durable_image();
    let g2 = evograph::internals::open_on(Arc::new(img), reopen_opts(cfg))
        .expect("opens after the flush");
    // The flushed edges are there; the later one may or may not be (interval durability).
    let (_, edges) = read(&g2.snapshot().unwrap());
    assert!(
        edges.contains(&(1, 2)) && edges.contains(&(2, 3)),
        "{edges:?}"
    );
    drop(g);
}

/// Failure 2 of issue 8: a crash while a store is being created left a MANIFEST with no
/// valid root, and every later open refused. Every image of a creation opens as an empty,
/// usable store.
#[test]
fn a_creation_cut_short_opens_empty_and_usable() {
    for tear in [Tear::Sector, Tear::Word] {
        let m = SimMedium::new(tear);
        let g = evograph::internals::open_on(Arc::new(m.clone()), opts(SYNC, true)).unwrap();
        drop(g);
        let len = m.log_len();
        let points: Vec<usize> = (0..=len).flat_map(|p| [p, p, p]).collect();
        let mut n = 0;
        m.images(&points, 99, |pos, img| {
            if let Err(why) = verify_reusable(&img, SYNC) {
                fail(SYNC, 99, "creation image", pos, &img, &why);
            }
            n += 1;
        });
        assert_eq!(n, points.len());
    }
    // What an earlier build left: a MANIFEST of two empty slots and nothing else.
    let m = SimMedium::new(Tear::Sector);
    m.create_root().unwrap();
    let seg = m.create("MANIFEST").unwrap();
    seg.set_len(128 << 10).unwrap();
    seg.persist().unwrap();
    m.sync_dir().unwrap();
    verify_reusable(&m, SYNC).unwrap();
}

/// Failure 3 of issue 8, on the sim medium: a store whose open never made its directory
/// durable loses everything at a power cut; every acknowledged record here survives the
/// worst one. (The file medium's fsync of the parent directory is checked with strace in
/// `tests/os_durability.rs`.)
#[test]
fn acknowledged_records_survive_the_worst_power_cut() {
    let m = SimMedium::new(Tear::Sector);
    let g = evograph::internals::open_on(Arc::new(m.clone()), opts(SYNC, false)).unwrap();
    g.apply(&[Record::Insert(10, 20)]).unwrap();
    let g2 = evograph::internals::open_on(Arc::new(m.durable_image()), reopen_opts(SYNC)).unwrap();
    assert_eq!(g2.snapshot().unwrap().num_edges(), 1);
    drop(g);
}

/// Failure 4 of issue 8: a full medium made close delete the WAL that held the only copy
/// of every record acknowledged since the last flush.
#[test]
fn a_full_medium_keeps_every_acknowledged_record() {
    let m = SimMedium::new(Tear::Sector);
    let cfg = Config {
        background: false,
        ..SYNC
    };
    let o = opts(cfg, false).memtable_bytes(1 << 30);
    let g = evograph::internals::open_on(Arc::new(m.clone()), o).unwrap();
    let mut acked = 0u64;
    m.fail_after(40, Fault::NoSpace);
    let err = loop {
        let batch: Vec<Record> = (0..100).map(|i| Record::Insert(acked + i, i + 1)).collect();
        match g.apply(&batch) {
            Ok(()) => acked += 100,
            Err(e) => break e,
        }
    };
    assert!(
        acked > 0,
        "the fault fired before anything was acknowledged"
    );
    assert!(err.to_string().contains("No space left on device"), "{err}");
    let closed = g.close();
    assert!(closed.is_err(), "close reports the earlier failure");
    m.clear_fault();
    for img in [m.process_image(), m.durable_image()] {
        let g = evograph::internals::open_on(Arc::new(img), reopen_opts(cfg)).unwrap();
        assert!(
            g.snapshot().unwrap().num_edges() >= acked,
            "acknowledged edges lost"
        );
    }
}

/// Soak seed 1339311 (issue 14): a writer without a background thread flushes inside
/// `apply`. When the manifest commit naming a run sealed for a snapshot failed in its
/// persist, the written root might be in force, yet the handle stayed usable; `close`
/// flushed again and recreated that run's file, cut to nothing, before the write failed
/// on the full medium. The next open refused the store. Every fault point of a small
/// workload is tried: the process image opens, holds every acknowledged edge, and the
/// failed handle refuses further writes.
#[test]
fn a_failed_flush_inside_apply_never_rewrites_a_run_a_root_may_name() {
    let cfg = Config {
        background: false,
        ..SYNC
    };
    let mut hits = 0;
    for after in 0..400 {
        let m = SimMedium::new(Tear::Sector);
        let g = evograph::internals::open_on(Arc::new(m.clone()), opts(cfg, false)).unwrap();
        m.fail_after(after, Fault::NoSpace);
        let mut acked = 0u64;
        let mut failed = false;
        for b in 0..150u64 {
            let batch: Vec<Record> = (0..40).map(|i| Record::Insert(b * 40 + i, i)).collect();
            if g.apply(&batch).is_err() {
                failed = true;
                break;
            }
            acked += 40;
            // Seals the memtables frozen so far into DRAM runs, which the next flush
            // writes out and commits.
            if g.snapshot().is_err() {
                failed = true;
                break;
            }
        }
        m.clear_fault();
        if failed {
            hits += 1;
            // Space is back, but what the failed commit left is unknown to this handle.
            assert!(
                g.apply(&[Record::Insert(1, 2)]).is_err(),
                "after {after}: a write was taken after a failed flush"
            );
            assert!(g.flush().is_err(), "after {after}: flushed after a failure");
        }
        let _ = g.close();
        let img = m.process_image();
        let g = evograph::internals::open_on(Arc::new(img.clone()), reopen_opts(cfg))
            .unwrap_or_else(|e| {
                let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
                    .join("sim-failures")
                    .join(format!("flush-fault-after-{after}"));
                let _ = img.save_to(&dir);
                panic!(
                    "fault after {after} writes: the process image does not open: {e}; saved in {}",
                    dir.display()
                )
            });
        let edges = g.snapshot().unwrap().num_edges();
        assert!(
            edges >= acked,
            "after {after}: {edges} edges, {acked} acknowledged"
        );
    }
    assert!(hits > 300, "the fault fired in only {hits} of 400 runs");
}

/// The concurrency contract: a snapshot never waits for a flush's persist. The flush is
/// held inside its run file's persist while a snapshot is taken.
#[test]
fn a_snapshot_does_not_wait_for_a_flush_persist() {
    for background in [false, true] {
        let m = SimMedium::new(Tear::Sector);
        let cfg = Config {
            durability: Durability::None,
            background,
            ..SYNC
        };
        let o = opts(cfg, background).memtable_bytes(1 << 30);
        let g = evograph::internals::open_on(Arc::new(m.clone()), o).unwrap();
        g.apply(&[Record::Insert(1, 2), Record::Insert(2, 3)])
            .unwrap();
        m.hold_persists(true);
        std::thread::scope(|sc| {
            let flush = sc.spawn(|| g.flush());
            m.wait_held(1);
            let (tx, rx) = std::sync::mpsc::channel();
            let g = &g;
            sc.spawn(move || {
                let s = g.snapshot().map(|s| s.num_edges());
                let _ = tx.send(s);
            });
            let got = rx.recv_timeout(std::time::Duration::from_secs(20));
            m.hold_persists(false);
            assert_eq!(
                got.expect("the snapshot waited for the held persist")
                    .unwrap(),
                2
            );
            flush.join().unwrap().unwrap();
        });
        g.close().unwrap();
    }
}
