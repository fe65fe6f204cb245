//! `evograph ingest`: stream an input file into a store through the batch API.
//!
//! A reader thread parses batches ahead while the main thread submits them; up to
//! `--in-flight` batches are submitted and not yet acknowledged, so that WAL writes and
//! persists overlap the next batches' apply, and a slow persist lets the writer commit the
//! batches queued behind it as one group. Acknowledgements stay in input order. Text inputs are
//! parsed once up front so that a malformed file is refused before the store changes.

use crate::args;
use crate::output;
use crate::progress;
use evograph::io::{self, Format};
use evograph::store::{MediumKind, Ticket};
use evograph::{Durability, Graph, KeyKind, Names, Options, Record};
use std::cell::Cell;
use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Instant;

/// Ingest edges (or an update stream) into a store, creating it if needed.
///
/// If this command creates the store and fails before any record is acknowledged, it
/// removes what it created, leaving no empty shell behind; once records are acknowledged
/// they are kept whatever fails later (the error says how many). In a weighted store, an
/// edge line without a weight gets weight 1.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory (created if missing).
    store: PathBuf,
    /// Input file.
    input: PathBuf,
    /// auto (by extension, else by content; an input that reads as more than one format is
    /// refused), snap (whitespace edge list), el, csv (`src,dst[,weight]`), metis (METIS/Chaco
    /// graph: `n m [fmt]` header, 1-based adjacency lines), bin (u32 pairs), ldbc (a
    /// Graphalytics .properties file or .v/.e pair), ops (`+ u v`, `- u v`, `+ u`, `- u`), mtx.
    #[arg(long, default_value = "auto")]
    format: Format,
    /// Field separator of an edge list (snap, el, csv): one character, such as `,` `;` or
    /// `\t` (default: spaces and tabs; `,` for csv).
    #[arg(long, value_parser = parse_delimiter)]
    delimiter: Option<u8>,
    /// The edge list's first line (after comments) is a header such as `src,dst`: skip it.
    #[arg(long)]
    header: bool,
    /// The edge list's column N (1-based) gives each edge's commit time, in Unix seconds
    /// (possibly fractional), RFC 3339 with an offset, or a date (its midnight UTC); the
    /// other columns keep their meaning. Consecutive lines of one time commit as one batch
    /// (or more, of at most --batch records each), and a time before the one above it is
    /// refused, naming the line. An ops stream gives times on `@ TIME` lines instead. A
    /// batch without a time of its own commits at the wall clock's time, or at the store's
    /// last commit time if that is later (times never go backwards): after a batch timed in
    /// the future, untimed batches take that time too, and a warning says so once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    time_column: Option<u32>,
    /// History a new store keeps: none (the default), all, a duration counted back from the
    /// newest commit's time (7d, 12h, 30m, 90s) or a number of commits (100). Recorded in
    /// the store; `evograph config STORE --history` changes it later. Read it back with
    /// `--at` (run, export, stats, query), `evograph diff` and `evograph log`.
    #[arg(long)]
    history: Option<evograph::history::History>,
    /// When run versions are derived, in a store that keeps history: compact (by
    /// `evograph compact` only, the default), flush (after every flush and merge: points
    /// are fast all along, and each flush waits for its run's versions) or never. A point
    /// inside a run that has versions reads the run filtered by them; without, it undoes
    /// the later changes.
    #[arg(long, value_enum, default_value_t)]
    run_versions: crate::args::RunVersions,
    /// Vertex keys of a new store: u64 (unsigned integers) or string (names such as
    /// package or user names, read from edge lists and ops streams; a header line needs
    /// --header). Recorded in the store: an existing store keeps its kind.
    #[arg(long)]
    keys: Option<KeyKind>,
    /// Create the store with compressed runs: neighbor lists delta-encoded and bit-packed
    /// (about 2.4x smaller on Kronecker graphs), decoded inside kernels' scans. Recorded in
    /// the store; an existing store keeps what it has.
    #[arg(long)]
    compress: bool,
    /// Create an undirected store (Graphalytics, METIS and symmetric Matrix Market inputs say
    /// so themselves).
    #[arg(long)]
    undirected: bool,
    /// Create a weighted store even if the input's first lines carry no weight (weighted
    /// inputs make weighted stores by themselves, unless --no-validate skips the pass that
    /// finds out).
    #[arg(long)]
    weighted: bool,
    /// When to publish tails for read-only handles in other processes (the updates not
    /// flushed yet, sealed into runs they load instead of replaying the log):
    /// while-readers (whenever one opened within the last second), always, or never.
    #[arg(long, default_value = "while-readers")]
    tails: evograph::Tails,
    /// Records per batch (one WAL commit block each).
    #[arg(long, default_value_t = 65536, value_parser = args::int::<u64>(1, 1 << 24), allow_negative_numbers = true)]
    batch: u64,
    /// Worker threads for apply and flush (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = args::int::<u64>(0, 1024), allow_negative_numbers = true)]
    threads: u64,
    /// sync (acknowledge once durable), interval=MS (persist every MS milliseconds) or none.
    #[arg(long, default_value = "sync")]
    durability: Durability,
    /// Print `acked N` each time the first N input records are acknowledged: the store is
    /// then durable up to LSN B + N, B being its LSN when the ingest began (LSNs count the
    /// records submitted, one each, whatever they change; the summary line gives B and
    /// the end).
    #[arg(long)]
    print_acks: bool,
    /// Batches submitted ahead of their acknowledgement (1: wait for each batch to be
    /// durable before the one after the next is submitted).
    #[arg(long, default_value_t = 4, value_parser = args::int::<usize>(1, 64), allow_negative_numbers = true)]
    in_flight: usize,
    /// DRAM budget for memtables, in MiB.
    #[arg(long, default_value_t = 1024, value_parser = args::int::<u64>(1, 1 << 30), allow_negative_numbers = true)]
    memtable_mb: u64,
    /// Medium of a new store: file (pwrite + fdatasync), pmem (mapped; clwb + sfence on a
    /// DAX mount, msync elsewhere) or battery (mapped; a fence persists: eADR). An existing
    /// store keeps the medium it was created on.
    #[arg(long)]
    medium: Option<MediumKind>,
    /// Skip the validation pass over text inputs (a malformed line then stops the ingest
    /// with the batches acknowledged before it kept).
    #[arg(long)]
    no_validate: bool,
    /// WAL segment size in KiB (tests make it small so that segments rotate and recycle
    /// every few batches).
    #[arg(long, hide = true, default_value_t = 64 << 10, value_parser = args::int::<u64>(16, 1 << 22), allow_negative_numbers = true)]
    wal_segment_kb: u64,
    /// Dense vertex id width of a new store, 32 or 64 bits: a store of 2^31 vertices or more
    /// needs 64. The width is chosen when evograph is built (the `wide-ids` feature), so
    /// this says which build the store needs and is refused by a build of the other width.
    #[arg(long, default_value_t = evograph::types::ID_WIDTH, value_parser = parse_width)]
    id_width: u32,
    /// Runs per level before they are merged (compaction experiments).
    #[arg(long, hide = true, default_value_t = 4, value_parser = args::int::<usize>(2, 64), allow_negative_numbers = true)]
    fanout: usize,
    /// Vertex ids per partition of the merged levels, as a power of two (compaction
    /// experiments and tests; 0: never partition).
    #[arg(long, hide = true, default_value_t = 20, value_parser = args::int::<u32>(0, 62))]
    partition_bits: u32,
    /// Keep this kernel's result current as batches commit (wcc, bfs, sssp, pr-tol), and
    /// write to --changes what `evograph watch` prints: the full result at the first
    /// commit, then each batch's `# lsn LSN` and `vertex old new` lines. Each batch is
    /// reflected before the next is submitted.
    #[arg(long, requires = "changes")]
    maintain: Option<evograph::algo::kernel::Kernel>,
    /// The file --maintain writes its lines to. It is written in place as it grows (for
    /// `tail -f`), so an existing non-empty file is refused unless --append or --force says
    /// what to do with it; a path in a store directory, or the input itself, is refused.
    #[arg(long, requires = "maintain")]
    changes: Option<PathBuf>,
    /// Write --changes after what the file holds.
    #[arg(long, requires = "changes", conflicts_with = "force")]
    append: bool,
    /// Empty an existing --changes file first.
    #[arg(long, requires = "changes")]
    force: bool,
    /// Source vertex of a maintained bfs or sssp (external id, or name): the result starts
    /// at the first batch after which it exists.
    #[arg(long)]
    source: Option<String>,
    /// Tolerance of a maintained pr-tol (L1 distance from the fixed point, above 0).
    #[arg(long, default_value_t = 1e-4, value_parser = args::real(evograph::algo::kernel::limits::tolerance), allow_negative_numbers = true)]
    tolerance: f64,
}

/// `--delimiter`: one byte, with `\t` and `tab` for a tab.
fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s {
        "\\t" | "tab" | "\t" => Ok(b'\t'),
        _ if s.len() == 1 && (s.as_bytes()[0].is_ascii_digit() || ".+-#%\r\n".contains(s)) => Err(
            format!("'{s}' cannot separate fields: it occurs in numbers, comments or line ends"),
        ),
        _ if s.len() == 1 => Ok(s.as_bytes()[0]),
        _ => Err(format!(
            "'{s}' is not one ASCII character (for a tab, write '\\t')"
        )),
    }
}

fn parse_width(s: &str) -> Result<u32, String> {
    match s {
        "32" => Ok(32),
        "64" => Ok(64),
        _ => Err(format!("'{s}' is not an id width: want 32 or 64")),
    }
}

pub fn run(a: Args) -> Result<ExitCode, crate::Failure> {
    let t_start = Instant::now();
    let request = format!("a store made with --id-width {}", a.id_width);
    evograph::store::check_id_width(&request, a.id_width)?;
    // An existing store says how its vertices are keyed; --keys asking otherwise is
    // refused when it is opened.
    let keys = match a.keys {
        Some(k) => k,
        None => evograph::store::recorded_key_kind(&a.store)?.unwrap_or_default(),
    };
    let text = io::TextOptions {
        delimiter: a.delimiter,
        header: a.header,
        keys,
        time_column: a.time_column.map(|c| c as usize),
    };
    // Open the input before the store: a missing or unreadable input changes nothing.
    // Detected once, here: the reader and the validation pass get the explicit format.
    let format = match a.format {
        Format::Auto => io::detect_format(&a.input)?,
        f => f,
    };
    let src = io::open_source_with(&a.input, format, &text)?;
    // The validation pass also learns whether any line carries a weight (a header or the
    // first line alone may not say).
    let mut weighted = src.info().weighted || a.weighted;
    let mut validate_secs = 0.0;
    let stream = io::stream_kind(&a.input);
    if let Some(kind) = stream.filter(|_| !a.no_validate && format != Format::Bin) {
        eprintln!(
            "evograph: {} is {kind} and can be read only once: no validation pass (a malformed line stops the ingest, keeping the records acknowledged before it)",
            evograph::error::printable(&a.input.display().to_string())
        );
    }
    let stream = stream.is_some();
    if format != Format::Bin && !a.no_validate && !stream {
        let t = Instant::now();
        weighted |= validate(&a.input, format, &text)?;
        validate_secs = t.elapsed().as_secs_f64();
    }
    // Every check on the output comes before the store is created or opened.
    let changes = changes_target(&a)?;
    let created = NewStore::before_open(&a.store)?;
    let acked = Cell::new(0);
    let res = ingest(&a, src, weighted, created.is_some(), &acked, changes);
    match (res, created) {
        (Ok(summary), _) => {
            print_summary(&a, &summary, validate_secs, t_start.elapsed().as_secs_f64())?;
            Ok(ExitCode::SUCCESS)
        }
        // Nothing acknowledged: the store is an empty shell this command made; take it back.
        (Err(e), Some(created)) if acked.get() == 0 => Err(created.remove(&a.store, e)),
        // Acknowledged records are the user's data, kept whatever happens next.
        (Err(e), _) if acked.get() > 0 => Err(crate::Failure::noted(
            e,
            format!(
                "the store at {} keeps the first {} records, acknowledged before the error",
                a.store.display(),
                acked.get()
            ),
        )),
        (Err(e), _) => Err(e.into()),
    }
}

/// The `--changes` file, checked: not in a store, not the input, not a file with lines in
/// it unless `--append` or `--force` says what to do with them.
fn changes_target(a: &Args) -> evograph::Result<Option<(output::Target, output::Existing)>> {
    let Some(path) = &a.changes else {
        return Ok(None);
    };
    let existing = match (a.append, a.force) {
        (true, _) => output::Existing::Append,
        (_, true) => output::Existing::Truncate,
        _ => output::Existing::Refuse,
    };
    let guard = output::Guard::new().input(&a.input).store(&a.store);
    Ok(Some((output::changes(&guard, path, existing)?, existing)))
}

/// What the ingest did, for the summary line.
struct Summary {
    records: u64,
    /// The store's LSN when the ingest began and when it ended.
    lsns: (u64, u64),
    secs: f64,
    open_secs: f64,
    close_secs: f64,
    vertices: u64,
}

/// Opens (or creates) the store, streams every record in and closes it.
fn ingest(
    a: &Args,
    src: Box<dyn io::RecordSource>,
    weighted: bool,
    creating: bool,
    acked: &Cell<u64>,
    changes: Option<(output::Target, output::Existing)>,
) -> evograph::Result<Summary> {
    let info = src.info().clone();
    let undirected = a.undirected || info.directed == Some(false);
    let opts = Options::new()
        .undirected(if undirected { Some(true) } else { None })
        // A weighted input makes a weighted store; an existing store keeps what it is, and
        // --weighted on an unweighted one is refused.
        .weighted(if a.weighted || (weighted && creating) {
            Some(true)
        } else {
            None
        })
        .keys(a.keys)
        // Only a new store takes it; asking an existing plain store for it is refused.
        .compression(a.compress.then_some(evograph::Compression::Packed))
        .durability(a.durability)
        .threads(a.threads as usize)
        .memtable_bytes((a.memtable_mb as usize) << 20)
        .medium(a.medium)
        .wal_segment_bytes(a.wal_segment_kb << 10)
        .fanout(a.fanout)
        .partition_bits(a.partition_bits)
        .history(a.history.unwrap_or_default())
        .run_versions(a.run_versions.into())
        .tails(a.tails)
        // `ingest` makes the store it is pointed at if there is none.
        .create(true);
    let t_open = Instant::now();
    let g = Graph::open(&a.store, opts)?;
    crate::warn_open(&g);
    if let Some(h) = a.history.filter(|&h| !creating && h != g.history()) {
        return Err(evograph::Error::Invalid(format!(
            "store {} keeps history {}; --history {h} applies to a new store (change it with `evograph config {} --history {h}`)",
            a.store.display(),
            g.history(),
            a.store.display()
        )));
    }
    let open_secs = t_open.elapsed().as_secs_f64();
    if matches!(a.medium, Some(MediumKind::Pmem | MediumKind::Battery)) {
        eprintln!(
            "evograph: {} medium persists by {}",
            a.medium.unwrap(),
            g.stats()?.persist_method
        );
    }
    let t = Instant::now();
    let first_lsn = g.stats()?.next_lsn;
    let records = stream(a, &g, src, info.total_bytes, acked, changes)?;
    let secs = t.elapsed().as_secs_f64();
    let t_close = Instant::now();
    let stats = g.stats()?;
    g.close()?;
    Ok(Summary {
        records,
        lsns: (first_lsn, stats.next_lsn),
        secs,
        open_secs,
        close_secs: t_close.elapsed().as_secs_f64(),
        vertices: stats.vertices,
    })
}

/// A batch of records, with the names they number when the input has string keys.
/// A batch's records, the names they number (string keys), and its commit time if the
/// input gave one.
type Batch = (Vec<Record>, Option<Names>, Option<i64>);

/// Submits batches read ahead by a reader thread, up to `--in-flight` of them
/// unacknowledged, acknowledging each in order once it is durable.
fn stream(
    a: &Args,
    g: &Graph,
    src: Box<dyn io::RecordSource>,
    total: u64,
    acked: &Cell<u64>,
    changes: Option<(output::Target, output::Existing)>,
) -> evograph::Result<u64> {
    let mut kept = crate::standing::Kept::new(a.maintain, changes, a.source.clone(), a.tolerance)?;
    let (rx, reader) = read_ahead(src, a.batch as usize);
    let pb = progress::bytes(total, "ingesting");
    let mut acks = Acks {
        g,
        pending: VecDeque::with_capacity(a.in_flight + 1),
        acked,
        print: a.print_acks,
        out: std::io::stdout().lock(),
    };
    let mut records = 0u64;
    let mut warned_future = false;
    let res = (|| {
        for b in &rx {
            let (b, names, time) = match b {
                Ok(b) => b,
                Err(e) => {
                    acks.settle()?;
                    return Err(e);
                }
            };
            let submitted = match (&names, time) {
                (Some(n), Some(t)) => g.submit_named_at(&b, n, t),
                (Some(n), None) => g.submit_named(&b, n),
                (None, Some(t)) => g.submit_at(&b, t),
                (None, None) => g.submit(&b),
            };
            let ticket = match submitted {
                Ok(t) => t,
                Err(e) => {
                    // The batches before this one may well be durable (a refused batch
                    // leaves the store as it was); their acknowledgement error, if any,
                    // says less than this one.
                    let _ = acks.settle();
                    return Err(e);
                }
            };
            records += b.len() as u64;
            pb.inc(b.len() as u64 * 8);
            if let Some(t) = time.filter(|&t| !warned_future && t > evograph::time::now()) {
                warned_future = true;
                pb.suspend(|| say_future(t));
            }
            if let Some(k) = kept.as_mut() {
                k.step(g).inspect_err(|_| drop(acks.settle()))?;
            }
            acks.pending.push_back((ticket, records));
            acks.keep_at_most(a.in_flight)?;
        }
        acks.settle()?;
        Ok(records)
    })();
    pb.finish_and_clear();
    // Dropping the receiver first lets a reader blocked on a full channel end.
    drop(rx);
    let _ = reader.join();
    res
}

/// The warning for the first batch timed in the future.
fn say_future(t: i64) {
    eprintln!(
        "evograph: warning: a batch commits at {}, in the future (it is {} now): batches after it without a time of their own commit at that time too, as times never go backwards",
        evograph::time::show(t),
        evograph::time::show(evograph::time::now())
    );
}

/// Reads batches of `batch` records from `src` on a thread of its own, two ahead of the
/// caller; an error ends the stream.
fn read_ahead(
    src: Box<dyn io::RecordSource>,
    batch: usize,
) -> (
    mpsc::Receiver<evograph::Result<Batch>>,
    std::thread::JoinHandle<()>,
) {
    let (tx, rx) = mpsc::sync_channel::<evograph::Result<Batch>>(2);
    let reader = std::thread::spawn(move || {
        let mut src = src;
        loop {
            let mut buf = Vec::with_capacity(batch);
            match src.next_batch(batch, &mut buf) {
                Ok(more) => {
                    let names = src.take_names();
                    let time = src.commit_time();
                    if !buf.is_empty() && tx.send(Ok((buf, names, time))).is_err() {
                        return;
                    }
                    if !more {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
    });
    (rx, reader)
}

/// The batches in flight, and how their acknowledgements are told: `acked` counts the
/// records acknowledged, and `--print-acks` prints each count once it is durable.
struct Acks<'a> {
    g: &'a Graph,
    /// (ticket, records acknowledged once it is durable), oldest first.
    pending: VecDeque<(Ticket, u64)>,
    acked: &'a Cell<u64>,
    print: bool,
    out: std::io::StdoutLock<'static>,
}

impl Acks<'_> {
    fn ack(&mut self, n: u64) -> evograph::Result<()> {
        self.acked.set(n);
        if self.print {
            writeln!(self.out, "acked {n}")
                .and_then(|_| self.out.flush())
                .map_err(|e| evograph::Error::io("write", "stdout", e))?;
        }
        Ok(())
    }

    /// Waits for the oldest batches until at most `in_flight` are unacknowledged.
    fn keep_at_most(&mut self, in_flight: usize) -> evograph::Result<()> {
        while self.pending.len() > in_flight {
            let (t, n) = self
                .pending
                .pop_front()
                .expect("more than in_flight pending");
            self.g.wait(t)?;
            self.ack(n)?;
        }
        Ok(())
    }

    /// Acknowledges the batches in flight that become durable, oldest first, until one
    /// does not: after an error, the report then counts everything the store keeps.
    fn settle(&mut self) -> evograph::Result<()> {
        self.keep_at_most(0)
    }
}

fn print_summary(
    a: &Args,
    s: &Summary,
    validate_secs: f64,
    total_secs: f64,
) -> evograph::Result<()> {
    let validated = if validate_secs > 0.0 {
        format!("validation pass {validate_secs:.3} s before it; ")
    } else {
        String::new()
    };
    println!(
        "ingested {} records in {:.3} s: {:.2} M records/s ({}; {validated}open {:.3} s, close {:.3} s; {:.3} s start to exit: {:.2} M records/s; {} vertices; LSN {} to {})",
        s.records,
        s.secs,
        s.records as f64 / s.secs.max(1e-9) / 1e6,
        a.durability,
        s.open_secs,
        s.close_secs,
        total_secs,
        s.records as f64 / total_secs.max(1e-9) / 1e6,
        s.vertices,
        s.lsns.0,
        s.lsns.1
    );
    Ok(())
}

/// What an ingest that creates a store made, so that a failure can take it back.
enum NewStore {
    /// The directory (and perhaps ancestors) did not exist: remove from the topmost one made.
    Dir(PathBuf),
    /// The directory existed without a store in it: remove the store files it did not hold.
    Files(Vec<std::ffi::OsString>),
}

impl NewStore {
    /// `None` when `store` already holds a store, or is no directory at all (a failure then
    /// leaves it as it is).
    fn before_open(store: &Path) -> evograph::Result<Option<NewStore>> {
        if store.join("MANIFEST").exists() {
            return Ok(None);
        }
        if store.is_dir() {
            return Ok(Some(NewStore::Files(store_files(store)?)));
        }
        if store.exists() {
            return Ok(None);
        }
        let mut top = store.to_path_buf();
        while let Some(parent) = top
            .parent()
            .filter(|p| !p.as_os_str().is_empty() && !p.exists())
        {
            top = parent.to_path_buf();
        }
        Ok(Some(NewStore::Dir(top)))
    }

    /// Removes what the failed ingest created; returns the ingest's error, saying so.
    fn remove(self, store: &Path, err: evograph::Error) -> crate::Failure {
        let removed = match &self {
            NewStore::Dir(top) if top.exists() => std::fs::remove_dir_all(top).map(|()| true),
            NewStore::Dir(_) => Ok(false),
            NewStore::Files(before) => remove_new_store_files(store, before),
        };
        match removed {
            Ok(false) => err.into(),
            Ok(true) => crate::Failure::noted(
                err,
                format!(
                    "the store this ingest was creating at {} was removed",
                    store.display()
                ),
            ),
            Err(e) => crate::Failure::noted(
                err,
                format!(
                    "the store this ingest was creating at {} could not be removed ({e}); delete it by hand",
                    store.display()
                ),
            ),
        }
    }
}

/// Names of the store files in `dir` (leftovers of an earlier attempt, usually none).
fn store_files(dir: &Path) -> evograph::Result<Vec<std::ffi::OsString>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| evograph::Error::io("list", dir, e))? {
        let name = e
            .map_err(|e| evograph::Error::io("list", dir, e))?
            .file_name();
        if evograph::store::is_store_file(&name.to_string_lossy()) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Removes the store files in `dir` that were not there before; whether there were any.
fn remove_new_store_files(dir: &Path, before: &[std::ffi::OsString]) -> std::io::Result<bool> {
    let now = store_files(dir).map_err(std::io::Error::other)?;
    let mut removed = false;
    for name in now.iter().filter(|n| !before.contains(n)) {
        std::fs::remove_file(dir.join(name))?;
        removed = true;
    }
    Ok(removed)
}

/// Parses the whole input once, so a malformed file is refused before the store changes;
/// returns whether any record carries a weight.
fn validate(input: &Path, format: Format, text: &io::TextOptions) -> evograph::Result<bool> {
    let mut src = io::open_source_with(input, format, text)?;
    let pb = progress::bytes(src.info().total_bytes, "validating");
    let mut buf = Vec::with_capacity(1 << 16);
    let mut weighted = false;
    loop {
        buf.clear();
        let more = src.next_batch(1 << 16, &mut buf)?;
        // Names are numbered per batch; dropping them keeps the pass's memory flat.
        let _ = src.take_names();
        weighted |= buf.iter().any(|r| matches!(r, Record::InsertWeighted(..)));
        pb.set_position(src.bytes_read());
        if !more {
            break;
        }
    }
    pb.finish_and_clear();
    Ok(weighted)
}
