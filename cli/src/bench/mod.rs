//! `evograph bench`: the evaluation protocol of DGAP, XPGraph and the GFE driver as one
//! reproducible command.
//!
//! Per trial, on a fresh store: load 10% of the shuffled edges as a warm-up; insert the
//! rest in batches, timed (with a full compaction, untimed, before the last 10%, so that
//! the live snapshot is a compacted base plus exactly the last 10% unflushed); run every
//! kernel on that live snapshot, on the store after full compaction and on a plain CSR of
//! the same edges, interleaved so that drifting machine noise hits all three alike; close
//! and reopen; kill a child ingest midway and reopen after the crash; delete 4% of the
//! edges (half of them flushed) and run the kernels on that live snapshot, then compact;
//! delete 10% more, unflushed, and run them again. Figures are medians over the trials.

mod capped;
mod compress;
mod crash;
mod history;
mod kernels;
mod lookup;
mod pregel;
mod report;
mod rolling;
mod standing;
mod sys;

/// Shared with `run --trials`.
pub(crate) use report::median;

use crate::output;
use evograph::algo::kernel::{pick_sources, Kernel};
use evograph::io::{self, Format};
use evograph::snapshot::Csr;
use evograph::store::MediumKind;
use evograph::{Compression, Durability, Graph, GraphView, Options, Record, Snapshot, VertexId};
use report::Trial;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// What each figure means; printed by `evograph bench --help`.
const FIGURES: &str = "\
Figures (medians over --trials; the JSON file also keeps every trial's under trials_raw):
  ingest.meps                million edges inserted per second over the timed 90% (from the
                             first batch's submission to the last batch's acknowledgement,
                             with --durability's guarantee; duplicates in the input count)
  ingest.batch_p50_ms/_p99_ms  latency of one batch, submission to acknowledgement (one
                             batch is applied while the previous one persists, as in ingest)
  ingest.warmup_seconds      loading the first 10%
  ingest.to_exit_seconds     a child `evograph ingest` of all the edges into a new store,
                             from its start to its exit (reading the file, ingest with
                             --durability's guarantee, the final flush and close)
  ingest.to_exit_over_csr    that over csr.build_seconds: 1.0 means a durable store is
                             ready as soon as a static CSR of the same edges would be
  ingest.pause_compact_seconds  the untimed full compaction before the last 10%
  snapshot.seconds           taking the live snapshot (seals the unflushed 10%)
  snapshot.live_runs         runs the live snapshot reads (2: compacted base + the last 10%)
  snapshot.view_seconds      indexing the live snapshot (base + newer runs) for the kernels
  kernels.K.live_seconds     kernel K on the live snapshot (kernels under 1 s run up to 5
                             rounds per trial, each round on all three views in turn, and
                             each view's median counts; BFS and SSSP take 8 seeded sources
                             in turn, one per round, the same on every view)
  kernels.K.compacted_seconds  K after a full compaction (one run, read in place)
  kernels.K.csr_seconds      K on a plain in-memory CSR built from the same edges
  kernels.K.ratio_live/_compacted  live or compacted time over CSR time (per trial, then
                             the median); 1.0 means as fast as a static CSR
  kernels.K.deletes_seconds  K on the live snapshot after the deletion phase's 4% (half in
                             a flushed run, half in the sealed memtable), against
                             .deletes_csr_seconds, a plain CSR of the edges left
                             (.ratio_deletes)
  kernels.K.unflushed_deletes_seconds  K after 10% more deletes left unflushed over the
                             compacted store, against .unflushed_deletes_csr_seconds
                             (.ratio_unflushed_deletes)
  pregel.P.seconds           vertex program P (pr, cc, bfs, sssp: `evograph run pregel-P`)
                             on the compacted store, in its own delivery mode (sssp push,
                             the others pull); PageRank runs 20 iterations
  pregel.P.hand_seconds      the hand-written kernel computing the same (pr, wcc, bfs,
                             sssp), in the same rounds (results are checked to agree)
  pregel.P.ratio/_live       program over hand-written time, on the compacted store and
                             on the live snapshot (per trial, then the median)
  pregel.P.push_seconds/_pull_seconds/_push_over_pull  each delivery mode (sssp: push only)
  pregel.P.gteps             edges processed (read by a sender or a gatherer) per second
  pregel.P.supersteps        supersteps to halting
  compress.kernels.K.seconds/.ratio  with --compress: K on the compressed compacted store,
                             and over the plain one's time (the median of each round's
                             ratio; kernels alternate between the stores, 3 to 21 rounds)
  compact.seconds            full compaction of the whole graph
  flush.seconds              flushing the last memtable after ingest
  csr.build_seconds          building the plain CSR (out and in) from the edge list
  restart.close_seconds      clean close
  restart.clean_seconds      reopening after the clean close (run checksums are verified
                             later, on first read)
  restart.crash_seconds      reopening after a child `evograph ingest` of the same edges was
                             killed (SIGKILL) halfway; includes replaying the WAL
  restart.wal_bytes_replayed WAL bytes that reopen replayed
  restart.crash_acked_edges  records the child had acknowledged when killed (all recovered:
                             the bench fails otherwise)
  bytes_per_edge.written     bytes written to the medium during ingest and the final flush
                             (WAL, runs, background and the pause compactions) per edge
                             inserted: the write amplification
  bytes_per_edge.written_wal/_flush/_merge/_pause  that, by cause: the log, memtables
                             flushed to runs, background merges, and the merge half of the
                             bench's pause compaction (the rest is dictionary and manifest)
  bytes_per_edge.written_with_compaction  the same including the full compaction
  bytes_per_edge.medium      store bytes at rest after full compaction, per unique edge
  bytes_per_edge.dram        peak resident memory while ingesting, above the bench's own
                             edge list, per edge inserted (includes mapped run pages)
  bytes_per_edge.dram_engine peak of the engine's own DRAM accounting (memtables, unflushed
                             runs, vertex tables) per edge inserted
  bytes_per_edge.csr         the plain CSR's bytes (offsets and neighbors, both directions)
                             per unique edge
  delete.seconds / .meps     deleting a random 4% of the unique edges, in batches
  delete.compact_seconds     the full compaction after the deletes
  delete.medium_bytes_before/_after  store bytes before the deletes and after compaction
                             (WAL spares excluded: they hold no data, at most two segments)
  delete.wal_spare_bytes_after  bytes of the WAL spares the closed store keeps after that
  delete.deletes_live_runs / .unflushed_deletes_live_runs  runs of those live snapshots
  delete.deletes_view_seconds / .unflushed_deletes_view_seconds  indexing them for the
                             kernels (null if they had to be read by the general run walk)
  delete.deletes_view_bytes / .unflushed_deletes_view_bytes  DRAM of that index (offsets
                             of sparse runs, cut lists' dead positions)
  delete.deletes_cut_lists / .unflushed_deletes_cut_lists  lists read cut (their runs'
                             slices past the neighbors newer runs deleted)
Restart figures are null on --medium memory, which keeps nothing across processes.";

/// Run the papers' evaluation protocol and report every figure.
#[derive(clap::Args)]
#[command(after_long_help = FIGURES)]
pub struct Args {
    /// kron or urand (generated), or a path to an edge file in any format `ingest` reads
    /// (its ids are relabeled densely; weights are ignored).
    #[arg(long, default_value = "kron")]
    graph: String,
    /// Log2 of the vertex count of a generated graph.
    #[arg(long, default_value_t = 20, value_parser = crate::args::int::<u32>(1, 31), allow_negative_numbers = true)]
    scale: u32,
    /// Edges per vertex of a generated graph.
    #[arg(long, default_value_t = 16, value_parser = crate::args::int::<u32>(1, 1 << 16), allow_negative_numbers = true)]
    edge_factor: u32,
    /// Seed for the generator, the insertion order and the deleted edges.
    #[arg(long, default_value_t = 1, value_parser = crate::args::int::<u64>(0, u64::MAX), allow_negative_numbers = true)]
    seed: u64,
    /// Worker threads for ingest and kernels (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = crate::args::int::<usize>(0, 1024), allow_negative_numbers = true)]
    threads: usize,
    /// Records per batch.
    #[arg(long, default_value_t = 65536, value_parser = crate::args::int::<usize>(1, 1 << 24), allow_negative_numbers = true)]
    batch: usize,
    /// sync | interval=MS | none.
    #[arg(long, default_value = "sync")]
    durability: Durability,
    /// file (pwrite + fdatasync), pmem (mapped; clwb + sfence on a DAX mount, msync
    /// elsewhere), battery (mapped; sfence only) — each a store directory under --dir — or
    /// memory (DRAM only).
    #[arg(long, default_value = "file")]
    medium: MediumKind,
    /// Working directory: the store, the shuffled edges (`edges.bin`) and the deleted ones
    /// (`deleted.bin`) are left here. It must be new, empty, or one an earlier bench worked
    /// in (bench removes the stores it finds there by name), and lie in no store. Default: a
    /// temporary directory, removed afterwards.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Comma-separated kernels, or `all`: gap-bfs, gap-pr, gap-cc, bc, tc, gap-sssp, bfs,
    /// pr, wcc, cdlp, lcc, sssp, and the Pregel programs pregel-pr, pregel-cc, pregel-bfs,
    /// pregel-sssp. With --standing: wcc, bfs, sssp, pr-tol, pregel-cc, pregel-bfs,
    /// pregel-sssp.
    #[arg(long, default_value = "all")]
    kernels: String,
    /// Repetitions of the whole protocol, each on a fresh store; figures are medians.
    #[arg(long, default_value_t = 1, value_parser = crate::args::int::<usize>(1, 1000), allow_negative_numbers = true)]
    trials: usize,
    /// Also write every figure, the parameters, the revision and the machine here (an
    /// existing file is replaced once the run succeeds; a path in a store is refused).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Memtable budget in MiB.
    #[arg(long, default_value_t = 1024, value_parser = crate::args::int::<usize>(1, 1 << 30), allow_negative_numbers = true)]
    memtable_mb: usize,
    /// Run the out-of-DRAM protocol instead: `evograph ingest` and `evograph run` of each
    /// kernel as child processes, in a memory cgroup limited to this many bytes (`1200M`,
    /// `2G`) and in one without a limit, reporting times, ratios, peak memory and major page
    /// faults. Needs root. `--kernels all` means gap-pr, gap-cc, gap-bfs, pr, wcc here.
    #[arg(long, value_parser = crate::args::bytes)]
    memory_limit: Option<u64>,
    /// Also run the protocol on a store created with compressed runs, and report its
    /// sizes, ingest rate, kernel times and lookups as ratios to the plain store's
    /// (`compress.*`, `lookup.*.packed_*`).
    #[arg(long)]
    compress: bool,
    /// Run the history protocol instead (issue 49): the graph, then 20 rounds of 1 %
    /// deletes and 1 % inserts, each round at its own day, ingested into a store keeping
    /// no history and one keeping all of it (`--trials` rounds of each, interleaved);
    /// reports the ingest ratio, kernels on the latest graph, opening the graph as of the
    /// last commit of the bulk load, of the middle round and of the last round, every GAP
    /// kernel as of each against a compacted store of that graph, history bytes against
    /// WAL bytes, and a diff's cost per change.
    #[arg(long, conflicts_with = "memory_limit")]
    history: bool,
    /// Run the standing-kernel protocol instead (issue 50): the graph less a reserve of
    /// 10 % of its edges, then for wcc, bfs, sssp and pr-tol, batches of 1, 100, 10,000 and
    /// 65,536 updates (insert-only, and half deletes), each committed and then reflected
    /// by a maintainer; reports the p50 and p99 from commit to result, updates/s with the
    /// kernel kept current, and the ratio of a recompute (gap-cc for wcc) to the p50.
    #[arg(long, conflicts_with_all = ["memory_limit", "history"])]
    standing: bool,
}

fn invalid(msg: impl Into<String>) -> evograph::Error {
    evograph::Error::Invalid(msg.into())
}

fn io_err(what: &'static str, p: &Path, e: std::io::Error) -> evograph::Error {
    evograph::Error::io(what, p, e)
}

/// Most rounds of a kernel per trial (each round runs it on all three views).
const MAX_ROUNDS: usize = 5;
/// Seconds of kernel time one view's rounds aim at: a 10 ms BFS or a 0.4 s PageRank gets
/// five rounds, a 1.5 s CDLP one, a 14 s triangle count one.
const ROUND_BUDGET: f64 = 2.0;

/// BFS and SSSP sources, taken one per round in turn.
const SOURCES: usize = 8;

/// Everything a trial needs, prepared once.
struct Plan<'a> {
    a: &'a Args,
    medium: MediumKind,
    threads: usize,
    kernels: Vec<Kernel>,
    dir: PathBuf,
    /// The shuffled edges, in insertion order.
    edges: Vec<(u32, u32)>,
    /// Distinct edges.
    unique: u64,
    /// The edges the deletion phase removes (distinct, present): `first_deletes` of them,
    /// then the unflushed ones.
    deleted: Vec<(u32, u32)>,
    first_deletes: usize,
    pool: rayon::ThreadPool,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    if a.batch == 0 || a.trials == 0 {
        return Err(invalid("--batch and --trials must be at least 1"));
    }
    // The standing protocol reads its own list (`standing::kernels`).
    let kernels = match a.standing {
        true => Vec::new(),
        false => kernels::parse_list(&a.kernels).map_err(invalid)?,
    };
    let threads = if a.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        a.threads
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| invalid(e.to_string()))?;
    let json = check_outputs(&a)?;
    let (dir, temporary) = match &a.dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("evograph-bench-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
    let plan = Plan {
        a: &a,
        medium: a.medium,
        threads,
        kernels,
        dir: dir.clone(),
        edges: Vec::new(),
        unique: 0,
        deleted: Vec::new(),
        first_deletes: 0,
        pool,
    };
    let res = protocol(plan);
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let doc = match res? {
        Outcome::Trials(n, t) => report_trials(&a, threads, n, &t)?,
        Outcome::Capped(n, figures) => report_capped(&a, threads, n, figures)?,
        Outcome::History(n, figures) => report_history(&a, threads, n, figures)?,
        Outcome::Standing(n, figures) => report_standing(&a, threads, n, figures)?,
    };
    if let Some(t) = json {
        let text = serde_json::to_string_pretty(&doc).expect("figures serialize");
        output::write_all(t, (text + "\n").as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Checks bench's outputs before anything runs: `--json` (not in a store, not the input
/// graph) and `--dir`, which bench fills with stores it removes and makes again, so it must
/// be new, empty or an earlier bench's, and lie in no store.
fn check_outputs(a: &Args) -> evograph::Result<Option<output::Target>> {
    let mut guard = output::Guard::new();
    if a.graph.parse::<evograph::gen::GenKind>().is_err() {
        guard = guard.input(Path::new(&a.graph));
    }
    let json = (a.json.as_deref())
        .map(|p| guard.file(p, "--json"))
        .transpose()?;
    if let Some(d) = &a.dir {
        guard.dir(d, "--dir")?;
        for f in ["edges.bin", "deleted.bin"] {
            guard.file(&d.join(f), "--dir")?;
        }
        claim_dir(d)?;
    }
    Ok(json)
}

/// The file that marks a directory as bench's working directory.
const BENCH_MARK: &str = ".evograph-bench";

/// Makes `dir` bench's: it must not exist, be empty, or hold the mark an earlier bench
/// left, since bench removes the stores it finds there by name.
fn claim_dir(dir: &Path) -> evograph::Result<()> {
    let empty = match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(io_err("list", dir, e)),
    };
    if !empty && !dir.join(BENCH_MARK).is_file() {
        return Err(invalid(format!(
            "--dir {}: the directory is not empty and no earlier `evograph bench` worked in it; bench removes and remakes stores there (store, ingest-store, crash-store, ...): give a new or empty directory; nothing was written",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e))?;
    let mark = dir.join(BENCH_MARK);
    std::fs::write(&mark, "evograph bench works in this directory\n")
        .map_err(|e| io_err("write", &mark, e))
}

/// Prepares the graph into `plan` and runs the protocol on it: the trials, or the capped
/// protocol with `--memory-limit`.
fn protocol(mut plan: Plan<'_>) -> evograph::Result<Outcome> {
    let (a, dir) = (plan.a, plan.dir.clone());
    eprintln!("bench: preparing the graph ({})", a.graph);
    let t = Instant::now();
    let edges = plan.pool.install(|| load_edges(a))?;
    if edges.len() < 20 {
        return Err(invalid(format!(
            "the graph has {} edges: the protocol needs at least 20",
            edges.len()
        )));
    }
    if let Some(limit) = a.memory_limit {
        let path = dir.join("edges.bin");
        io::write_bin(&path, &edges)?;
        let n = edges.len();
        drop(edges);
        return Ok(Outcome::Capped(n, capped::run(a, limit, &dir, &path)?));
    }
    if a.history {
        let figures = history::run(a, &dir, &edges, plan.threads)?;
        return Ok(Outcome::History(edges.len(), figures));
    }
    if a.standing {
        let figures = plan
            .pool
            .install(|| standing::run(a, &dir, &edges, plan.threads))?;
        return Ok(Outcome::Standing(edges.len(), figures));
    }
    let (unique, deleted) = plan.pool.install(|| pick_deletions(&edges, a.seed));
    io::write_bin(&dir.join("edges.bin"), &edges)?;
    io::write_bin(&dir.join("deleted.bin"), &deleted)?;
    eprintln!(
        "bench: {} edges ({unique} distinct) ready in {:.1} s",
        edges.len(),
        t.elapsed().as_secs_f64()
    );
    (plan.edges, plan.unique, plan.deleted) = (edges, unique, deleted);
    plan.first_deletes = (unique * 4 / 100) as usize;
    let mut trials = Vec::new();
    for i in 0..a.trials {
        eprintln!("bench: trial {}/{}", i + 1, a.trials);
        trials.push(trial(&plan)?);
    }
    Ok(Outcome::Trials(plan.edges.len(), trials))
}

/// Prints the trials' table; returns what `--json` writes.
fn report_trials(
    a: &Args,
    threads: usize,
    inserted: usize,
    trials: &[Trial],
) -> evograph::Result<serde_json::Value> {
    let summary = report::summarize(trials);
    println!(
        "evograph bench: {} scale {} edge factor {}, {inserted} edges, {threads} threads, batch {}, durability {}, medium {}, {} trial(s), revision {}",
        a.graph, a.scale, a.edge_factor, a.batch, a.durability, a.medium, a.trials, sys::GIT_REVISION
    );
    print!("{}", report::table(&summary, a.trials));
    {
        let kernels = kernels::parse_list(&a.kernels).map_err(invalid)?;
        let kernel_names: Vec<&str> = kernels.iter().map(|k| k.name()).collect();
        let head = json!({
            "params": {
                "graph": a.graph, "scale": a.scale, "edge_factor": a.edge_factor,
                "seed": a.seed, "threads": threads, "batch": a.batch,
                "durability": a.durability.to_string(), "medium": a.medium.as_str(),
                "kernels": kernel_names, "trials": a.trials, "memtable_mb": a.memtable_mb,
            },
            "git_revision": sys::GIT_REVISION,
            "machine": sys::machine(),
        });
        Ok(report::to_json(&summary, trials, head))
    }
}

/// What the protocol produced: trials of the standard one, or the capped one's figures.
enum Outcome {
    Trials(usize, Vec<Trial>),
    Capped(usize, serde_json::Value),
    History(usize, serde_json::Value),
    Standing(usize, serde_json::Value),
}

/// Prints the standing protocol's figures; returns what `--json` writes.
fn report_standing(
    a: &Args,
    threads: usize,
    edges: usize,
    figures: serde_json::Value,
) -> evograph::Result<serde_json::Value> {
    println!(
        "evograph bench --standing: {} scale {} edge factor {}, {edges} edges, {threads} threads, durability {}, revision {}",
        a.graph, a.scale, a.edge_factor, a.durability, sys::GIT_REVISION
    );
    print!("{}", standing::table(&figures));
    let params = json!({
        "graph": a.graph, "scale": a.scale, "edge_factor": a.edge_factor,
        "seed": a.seed, "threads": threads, "durability": a.durability.to_string(),
        "memtable_mb": a.memtable_mb,
    });
    Ok(with_figures(params, "standing", figures))
}

/// Prints the history protocol's figures; returns what `--json` writes.
fn report_history(
    a: &Args,
    threads: usize,
    inserted: usize,
    figures: serde_json::Value,
) -> evograph::Result<serde_json::Value> {
    println!(
        "evograph bench --history: {} scale {} edge factor {}, {inserted} edges, {threads} threads, durability {}, {} round(s), revision {}",
        a.graph, a.scale, a.edge_factor, a.durability, a.trials, sys::GIT_REVISION
    );
    println!(
        "{}",
        serde_json::to_string_pretty(&figures).expect("figures serialize")
    );
    let params = json!({
        "graph": a.graph, "scale": a.scale, "edge_factor": a.edge_factor,
        "seed": a.seed, "threads": threads, "batch": a.batch, "trials": a.trials,
        "durability": a.durability.to_string(), "memtable_mb": a.memtable_mb,
    });
    Ok(with_figures(params, "history", figures))
}

/// Prints the capped protocol's figures; returns what `--json` writes.
fn report_capped(
    a: &Args,
    threads: usize,
    inserted: usize,
    figures: serde_json::Value,
) -> evograph::Result<serde_json::Value> {
    println!(
        "evograph bench --memory-limit: {} scale {} edge factor {}, {inserted} edges, {threads} threads, durability {}, memtable {} MiB, revision {}",
        a.graph, a.scale, a.edge_factor, a.durability, a.memtable_mb, sys::GIT_REVISION
    );
    print!("{}", capped::table(&figures));
    let params = json!({
        "graph": a.graph, "scale": a.scale, "edge_factor": a.edge_factor,
        "seed": a.seed, "threads": threads, "batch": a.batch,
        "durability": a.durability.to_string(), "kernels": a.kernels,
        "memtable_mb": a.memtable_mb, "memory_limit": a.memory_limit,
    });
    Ok(with_figures(params, "capped", figures))
}

/// What `--json` writes for a protocol: its `figures` under `key`, beside its `params`,
/// the revision and the machine.
fn with_figures(
    params: serde_json::Value,
    key: &str,
    figures: serde_json::Value,
) -> serde_json::Value {
    let mut j = json!({
        "params": params,
        "git_revision": sys::GIT_REVISION,
        "machine": sys::machine(),
    });
    j[key] = figures;
    j
}

/// The graph's edges, shuffled with the seed.
fn load_edges(a: &Args) -> evograph::Result<Vec<(u32, u32)>> {
    use evograph::gen::{self, GenKind, GenSpec};
    let mut edges = match a.graph.parse::<GenKind>() {
        Ok(kind) => gen::generate(&GenSpec {
            kind,
            scale: a.scale,
            edge_factor: a.edge_factor,
            seed: a.seed,
        })?,
        Err(_) => read_edge_file(Path::new(&a.graph))?,
    };
    gen::shuffle(&mut edges, a.seed);
    Ok(edges)
}

/// Edges of a file, ids relabeled `0..n` in order of appearance.
fn read_edge_file(path: &Path) -> evograph::Result<Vec<(u32, u32)>> {
    let mut src = io::open_source(path, Format::Auto)?;
    let mut ids: rustc_hash::FxHashMap<u64, u32> = Default::default();
    let mut dense = |x: u64| -> evograph::Result<u32> {
        let n = ids.len();
        if n >= u32::MAX as usize / 2 {
            return Err(invalid("more than 2^31 vertices"));
        }
        Ok(*ids.entry(x).or_insert(n as u32))
    };
    let mut edges = Vec::new();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let more = src.next_batch(1 << 16, &mut buf)?;
        for r in &buf {
            match *r {
                Record::Insert(u, v) | Record::InsertWeighted(u, v, _) => {
                    edges.push((dense(u)?, dense(v)?))
                }
                Record::InsertVertex(_) => {}
                _ => {
                    return Err(invalid(format!(
                        "{}: the bench reads edge lists; this input deletes",
                        path.display()
                    )))
                }
            }
        }
        if !more {
            return Ok(edges);
        }
    }
}

/// The number of distinct edges, and a seeded random 14% of them to delete: the deletion
/// phase's 4% first, then the 10% left unflushed.
fn pick_deletions(edges: &[(u32, u32)], seed: u64) -> (u64, Vec<(u32, u32)>) {
    use rayon::prelude::*;
    let mut u = edges.to_vec();
    u.par_sort_unstable();
    u.dedup();
    let unique = u.len() as u64;
    evograph::gen::shuffle(&mut u, seed ^ 0x9e37_79b9_7f4a_7c15);
    u.truncate(u.len() * 14 / 100);
    (unique, u)
}

/// Streams `edges` as inserts (or deletes) in batches, one batch in flight while the next
/// is applied, as `evograph ingest` does. Pushes each batch's latency in ms (submission to
/// acknowledgement), samples the engine's DRAM into `dram_peak`, returns the seconds.
fn stream(
    g: &Graph,
    edges: &[(u32, u32)],
    batch: usize,
    delete: bool,
    lat: &mut Vec<f64>,
    dram_peak: &mut u64,
) -> evograph::Result<f64> {
    let t = Instant::now();
    let mut pending = None;
    for (i, chunk) in edges.chunks(batch).enumerate() {
        let recs: Vec<Record> = chunk
            .iter()
            .map(|&(u, v)| {
                if delete {
                    Record::Delete(u as u64, v as u64)
                } else {
                    Record::Insert(u as u64, v as u64)
                }
            })
            .collect();
        let start = Instant::now();
        let ticket = g.submit(&recs)?;
        if let Some((pt, ps)) = pending.replace((ticket, start)) {
            g.wait(pt)?;
            lat.push(ms(ps));
        }
        if i % 16 == 15 {
            *dram_peak = (*dram_peak).max(g.dram_bytes());
        }
    }
    if let Some((pt, ps)) = pending {
        g.wait(pt)?;
        lat.push(ms(ps));
    }
    *dram_peak = (*dram_peak).max(g.dram_bytes());
    Ok(t.elapsed().as_secs_f64())
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

fn secs<T>(f: impl FnOnce() -> evograph::Result<T>) -> evograph::Result<(T, f64)> {
    let t = Instant::now();
    let r = f()?;
    Ok((r, t.elapsed().as_secs_f64()))
}

/// The `q` quantile (nearest rank) of `xs`.
fn quantile(xs: &mut [f64], q: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    Some(xs[rank - 1])
}

fn open_store(
    p: &Plan,
    path: &Path,
    create: bool,
    compression: Compression,
) -> evograph::Result<Graph> {
    let opts = Options::new()
        .compression(create.then_some(compression))
        .durability(p.a.durability)
        .threads(p.threads)
        .memtable_bytes(p.a.memtable_mb << 20)
        .medium(Some(p.medium))
        .create(create);
    match p.medium {
        MediumKind::Memory => Graph::in_memory(opts),
        _ => Graph::open(path, opts),
    }
}

/// One run of the whole protocol on a fresh store.
fn trial(p: &Plan) -> evograph::Result<Trial> {
    let mut t = Trial::default();
    let store_dir = p.dir.join("store");
    if store_dir.exists() {
        std::fs::remove_dir_all(&store_dir).map_err(|e| io_err("remove", &store_dir, e))?;
    }
    let bench_rss = sys::rss().unwrap_or(0);
    let rss_reset = sys::reset_peak_rss();
    let g = open_store(p, &store_dir, true, Compression::None)?;
    let ingested = ingest_phase(p, &g, &mut t)?;
    let peak = if rss_reset { sys::peak_rss() } else { None };
    t.set(
        "bytes_per_edge.dram",
        peak.map(|pk| pk.saturating_sub(bench_rss) as f64 / p.edges.len() as f64),
    );
    let (comp, plain_runs) = compaction_phase(p, &g, &ingested, &mut t)?;
    let setup = kernel_phase(p, &ingested.live, &comp, plain_runs, &mut t)?;
    drop((ingested, comp));
    // End to end, as a user waits for `evograph ingest`: against the CSR build of the same
    // edges (both from an edge list in memory or page cache to a structure kernels read).
    let whole = ingest_leg(p)?;
    t.set("ingest.to_exit_seconds", whole);
    let build = t.get("csr.build_seconds").unwrap_or(f64::NAN);
    t.set("ingest.to_exit_over_csr", whole / build);
    let (g, before) = restart_phase(p, g, &store_dir, &mut t)?;
    t.set("bytes_per_edge.medium", before as f64 / p.unique as f64);
    delete_phase(p, g, (&store_dir, before), &setup, &mut t)?;
    Ok(t)
}

/// What the ingest phase leaves for the ones after it.
struct Ingested {
    /// The live snapshot at the end of ingest.
    live: Snapshot,
    /// Merge bytes written by the untimed compaction inside the ingest.
    pause_merged: u64,
    /// The engine's own peak DRAM while ingesting.
    engine_peak: u64,
}

/// Ingest: warm-up, the timed 90% (with the untimed compaction before the last 10%), and a
/// live snapshot of the result.
fn ingest_phase(p: &Plan, g: &Graph, t: &mut Trial) -> evograph::Result<Ingested> {
    let (e, batch) = (&p.edges, p.a.batch);
    let m = e.len();
    let (warm, cut) = (m / 10, m - m / 10);
    let mut lat = Vec::new();
    let mut engine_peak = 0;
    let warmup = stream(
        g,
        &e[..warm],
        batch,
        false,
        &mut Vec::new(),
        &mut engine_peak,
    )?;
    let first = stream(g, &e[warm..cut], batch, false, &mut lat, &mut engine_peak)?;
    let merged_before_pause = g.stats()?.merge_bytes_written;
    let ((), pause) = secs(|| g.compact())?;
    let pause_merged = g.stats()?.merge_bytes_written - merged_before_pause;
    let last = stream(g, &e[cut..], batch, false, &mut lat, &mut engine_peak)?;
    let ingest = first + last;
    let timed = (m - warm) as f64;
    t.set("ingest.meps", timed / ingest / 1e6);
    t.set("ingest.batch_p50_ms", quantile(&mut lat, 0.5));
    t.set("ingest.batch_p99_ms", quantile(&mut lat, 0.99));
    t.set("ingest.seconds", ingest);
    t.set("ingest.warmup_seconds", warmup);
    t.set("ingest.pause_compact_seconds", pause);
    let (live, snap_secs) = secs(|| g.snapshot())?;
    t.set("snapshot.seconds", snap_secs);
    t.set("snapshot.live_runs", live.runs().len() as f64);
    eprintln!(
        "bench:   ingest {:.2} M edges/s, live snapshot of {} runs",
        timed / ingest / 1e6,
        live.runs().len()
    );
    Ok(Ingested {
        live,
        pause_merged,
        engine_peak,
    })
}

/// Write amplification up to the data being in runs; then full compaction. The compacted
/// snapshot, and the bytes of its runs.
fn compaction_phase(
    p: &Plan,
    g: &Graph,
    i: &Ingested,
    t: &mut Trial,
) -> evograph::Result<(Snapshot, u64)> {
    let m = p.edges.len();
    let ((), flush) = secs(|| g.flush())?;
    let w = g.stats()?;
    let ((), compact) = secs(|| g.compact())?;
    let st = g.stats()?;
    let comp = g.snapshot()?;
    t.set("flush.seconds", flush);
    t.set("compact.seconds", compact);
    t.set("graph.vertices", comp.live_vertices() as f64);
    t.set("graph.edges_inserted", m as f64);
    t.set("graph.edges_unique", p.unique as f64);
    let per = |b: u64| b as f64 / m as f64;
    t.set("bytes_per_edge.written", per(w.bytes_written_session));
    t.set("bytes_per_edge.written_wal", per(w.wal_bytes_written));
    t.set("bytes_per_edge.written_flush", per(w.flush_bytes_written));
    t.set(
        "bytes_per_edge.written_merge",
        per(w.merge_bytes_written - i.pause_merged),
    );
    t.set("bytes_per_edge.written_pause", per(i.pause_merged));
    t.set(
        "bytes_per_edge.written_with_compaction",
        per(st.bytes_written_session),
    );
    t.set("bytes_per_edge.dram_engine", per(i.engine_peak));
    if comp.num_edges() != p.unique {
        return Err(invalid(format!(
            "the store holds {} edges after ingest, the input {} distinct ones",
            comp.num_edges(),
            p.unique
        )));
    }
    Ok((comp, st.levels.iter().map(|l| l.bytes).sum()))
}

/// The kernels on the live and compacted snapshots against a plain CSR of the same edges,
/// edge lookups, and with `--compress` the compressed leg. The sources and labels the
/// kernels were given.
fn kernel_phase(
    p: &Plan,
    live: &Snapshot,
    comp: &Snapshot,
    plain_runs: u64,
    t: &mut Trial,
) -> evograph::Result<kernels::Setup> {
    let a = p.a;
    // The plain CSR, in the store's dense ids so that sources match.
    let (csr, build) = secs(|| Ok(p.pool.install(|| build_csr(comp, &p.edges))))?;
    t.set("csr.build_seconds", build);
    t.set("bytes_per_edge.csr", csr.bytes() as f64 / p.unique as f64);
    let setup = kernels::Setup {
        sources: pick_sources(comp, SOURCES, a.seed)?,
        bc_sources: pick_sources(comp, 4, a.seed + 1)?,
        labels: comp.external_ids().to_vec(),
    };
    // Index the live snapshot's layers (once per snapshot; kernels share it), then touch
    // every view's edges once so that no kernel pays for first-touch page faults of a
    // freshly mapped run.
    let (_, view) = secs(|| Ok(live.layered().is_some()))?;
    t.set("snapshot.view_seconds", view);
    p.pool.install(|| {
        evograph::with_view!(live, |v| touch(v));
        evograph::with_view!(comp, |v| touch(v));
        touch(&csr);
    });
    for &k in &p.kernels {
        if pregel::ALL.contains(&k) {
            pregel::measure(k, live, comp, &setup, &p.pool, t)?;
        } else {
            let views = [("live", live), ("compacted", comp)];
            time_kernel(p, k, &views, ("csr", &csr), &setup, t)?;
        }
    }
    let queries = p.pool.install(|| lookup::Queries::new(comp, a.seed));
    queries.measure_hash_set(t)?;
    p.pool.install(|| {
        queries.measure("csr", |u, v| csr.has_edge(u, v), t)?;
        queries.measure("live", |u, v| live.has_edge(u, v), t)?;
        queries.measure("compacted", |u, v| comp.has_edge(u, v), t)
    })?;
    if a.compress {
        compress::leg(p, comp, plain_runs, &setup, &queries, t)?;
    }
    Ok(setup)
}

/// Restarts: clean, then after a crash. Space at rest is measured on the closed store
/// (no WAL, no retired runs), or on the memory medium once no snapshot holds old runs.
/// The reopened store and its bytes at rest.
fn restart_phase(
    p: &Plan,
    g: Graph,
    store_dir: &Path,
    t: &mut Trial,
) -> evograph::Result<(Graph, u64)> {
    if p.medium == MediumKind::Memory {
        for f in [
            "close_seconds",
            "clean_seconds",
            "crash_seconds",
            "wal_bytes_replayed",
            "crash_acked_edges",
        ] {
            t.set(format!("restart.{f}"), None);
        }
        let before = g.stats()?.medium_bytes;
        return Ok((g, before));
    }
    let ((), close) = secs(|| g.close())?;
    let (before, _) = dir_bytes(store_dir)?;
    let (g, clean) = secs(|| open_store(p, store_dir, false, Compression::None))?;
    t.set("restart.close_seconds", close);
    t.set("restart.clean_seconds", clean);
    let c = crash_leg(p)?;
    t.set("restart.crash_seconds", c.reopen_seconds);
    t.set("restart.wal_bytes_replayed", c.wal_bytes_replayed as f64);
    t.set("restart.crash_acked_edges", c.acked as f64);
    Ok((g, before))
}

/// Deletes, XPGraph style: a random 4% of the edges, then compaction. Half of them are
/// flushed before the rest are applied, so the live snapshot that the kernels then read
/// holds deletes in two newer runs. Then 10% more, left in the memtable: the live
/// snapshot's newest run is all deletes. `before`: the store's bytes at rest in
/// `store_dir` before the deletes.
fn delete_phase(
    p: &Plan,
    g: Graph,
    (store_dir, before): (&Path, u64),
    setup: &kernels::Setup,
    t: &mut Trial,
) -> evograph::Result<()> {
    let batch = p.a.batch;
    let (first, more) = p.deleted.split_at(p.first_deletes);
    let half = first.len() / 2;
    let mut del = stream(&g, &first[..half], batch, true, &mut Vec::new(), &mut 0)?;
    g.flush()?;
    del += stream(&g, &first[half..], batch, true, &mut Vec::new(), &mut 0)?;
    let mut gone = first.to_vec();
    deletes_leg(p, &g, Leg::Deletes, &mut gone, setup, t)?;
    let ((), dcompact) = secs(|| g.compact())?;
    let left = g.snapshot()?.num_edges();
    let (g, after) = if p.medium != MediumKind::Memory {
        g.close()?;
        let (after, spares) = dir_bytes(store_dir)?;
        t.set("delete.wal_spare_bytes_after", spares as f64);
        (open_store(p, store_dir, false, Compression::None)?, after)
    } else {
        let s = g.stats()?;
        t.set("delete.wal_spare_bytes_after", s.wal_spare_bytes as f64);
        (g, s.medium_bytes)
    };
    t.set("delete.edges", first.len() as f64);
    t.set("delete.seconds", del);
    t.set("delete.meps", first.len() as f64 / del / 1e6);
    t.set("delete.compact_seconds", dcompact);
    t.set("delete.medium_bytes_before", before as f64);
    t.set("delete.medium_bytes_after", after as f64);
    let want = p.unique - first.len() as u64;
    if left != want {
        return Err(invalid(format!(
            "after the deletes the store holds {left} edges, expected {want}"
        )));
    }
    stream(&g, more, batch, true, &mut Vec::new(), &mut 0)?;
    gone.extend_from_slice(more);
    deletes_leg(p, &g, Leg::UnflushedDeletes, &mut gone, setup, t)?;
    g.close()?;
    Ok(())
}

/// Times kernel `k` on each named snapshot view and on a plain CSR of the same edges, in
/// rounds of all of them in turn, checks that they agree and records the medians in `t`:
/// `kernels.K.{name}_seconds` per view and for the CSR, and `kernels.K.ratio_{name}` per
/// view (its median over the CSR's).
fn time_kernel(
    p: &Plan,
    k: Kernel,
    views: &[(&str, &Snapshot)],
    (csr_name, csr): (&str, &Csr),
    setup: &kernels::Setup,
    t: &mut Trial,
) -> evograph::Result<()> {
    // Rounds of every view, then the CSR; short kernels get more rounds (up to
    // MAX_ROUNDS, about ROUND_BUDGET seconds) and each view's median counts.
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); views.len() + 1];
    let mut rounds = 1;
    let mut r = 0;
    while r < rounds {
        let mut this = Vec::with_capacity(views.len() + 1);
        for &(_, s) in views {
            this.push(
                p.pool
                    .install(|| evograph::with_view!(s, |v| kernels::run(k, v, setup, r))),
            );
        }
        let (tr, dr) = p.pool.install(|| kernels::run(k, csr, setup, r));
        if let Some(((name, _), (_, d))) = views.iter().zip(&this).find(|(_, (_, d))| !d.agrees(dr))
        {
            return Err(invalid(format!(
                "kernel {k} disagrees across views: {name} {d:?}, {csr_name} {dr:?}"
            )));
        }
        this.push((tr, dr));
        if r == 0 {
            let longest = this.iter().map(|x| x.0).fold(1e-6, f64::max);
            rounds = ((ROUND_BUDGET / longest) as usize).clamp(1, MAX_ROUNDS);
        }
        for (v, x) in times.iter_mut().zip(&this) {
            v.push(x.0);
        }
        r += 1;
    }
    let med: Vec<f64> = (times.iter())
        .map(|v| report::median(v).expect("one round at least"))
        .collect();
    let tr = med[views.len()];
    let shown: Vec<String> = (views.iter().map(|v| v.0).chain([csr_name]))
        .zip(&med)
        .map(|(name, s)| format!("{name} {s:.4} s"))
        .collect();
    eprintln!("bench:   {k:<9} {} (median of {rounds})", shown.join(", "));
    for (&(name, _), &s) in views.iter().zip(&med) {
        t.set(format!("kernels.{k}.{name}_seconds"), s);
        t.set(format!("kernels.{k}.ratio_{name}"), s / tr);
    }
    t.set(format!("kernels.{k}.{csr_name}_seconds"), tr);
    Ok(())
}

/// Which live snapshot with deletes a leg times.
#[derive(Clone, Copy)]
enum Leg {
    /// The deletion phase's 4%, half of them flushed.
    Deletes,
    /// 10% more, unflushed, over the compacted store.
    UnflushedDeletes,
}

impl Leg {
    /// The view's name in figures (`kernels.K.{name}_seconds`, `delete.{name}_live_runs`).
    fn name(self) -> &'static str {
        match self {
            Leg::Deletes => "deletes",
            Leg::UnflushedDeletes => "unflushed_deletes",
        }
    }
}

/// Times every kernel (but the Pregel programs) on `g`'s live snapshot, whose newer runs
/// delete the edges `gone` (sorted here), against a plain CSR of the edges left.
fn deletes_leg(
    p: &Plan,
    g: &Graph,
    leg: Leg,
    gone: &mut [(u32, u32)],
    setup: &kernels::Setup,
    t: &mut Trial,
) -> evograph::Result<()> {
    use rayon::prelude::*;
    let name = leg.name();
    let live = g.snapshot()?;
    let (layered, view) = secs(|| Ok(live.layered().map(|l| (l.index_bytes(), l.cut_lists()))))?;
    t.set(format!("delete.{name}_live_runs"), live.runs().len() as f64);
    t.set(format!("delete.{name}_view_seconds"), layered.map(|_| view));
    t.set(
        format!("delete.{name}_view_bytes"),
        layered.map(|(b, _)| b as f64),
    );
    t.set(
        format!("delete.{name}_cut_lists"),
        layered.map(|(_, c)| c as f64),
    );
    eprintln!(
        "bench:   live snapshot with {name}: {} runs, {}",
        live.runs().len(),
        match layered {
            Some((bytes, cut)) => format!(
                "indexed in {view:.3} s ({:.1} MB, {cut} lists cut)",
                bytes as f64 / 1e6
            ),
            None => "no layered view: the general run walk".to_string(),
        }
    );
    gone.par_sort_unstable();
    let csr = p.pool.install(|| {
        let kept: Vec<(u32, u32)> = (p.edges.par_iter())
            .filter(|e| gone.binary_search(e).is_err())
            .copied()
            .collect();
        build_csr(&live, &kept)
    });
    if csr.num_edges() != live.num_edges() {
        return Err(invalid(format!(
            "the live snapshot with {name} holds {} edges, a CSR of the edges left {}",
            live.num_edges(),
            csr.num_edges()
        )));
    }
    p.pool.install(|| {
        evograph::with_view!(&live, |v| touch(v));
        touch(&csr);
    });
    let csr_name = format!("{name}_csr");
    for &k in p.kernels.iter().filter(|&k| !pregel::ALL.contains(k)) {
        time_kernel(p, k, &[(name, &live)], (&csr_name, &csr), setup, t)?;
    }
    Ok(())
}

/// Bytes of the files in a store directory: (the store's, its WAL spares'), from one
/// listing. Spares hold no data, so at-rest figures leave them out.
fn dir_bytes(dir: &Path) -> evograph::Result<(u64, u64)> {
    let (mut store, mut spares) = (0, 0);
    for e in std::fs::read_dir(dir).map_err(|e| io_err("list", dir, e))? {
        let e = e.map_err(|e| io_err("list", dir, e))?;
        let n = e
            .metadata()
            .map_err(|er| io_err("stat", &e.path(), er))?
            .len();
        if evograph::internals::is_wal_spare(&e.file_name().to_string_lossy()) {
            spares += n;
        } else {
            store += n;
        }
    }
    Ok((store, spares))
}

/// Reads every neighbor list of `g` in both directions.
fn touch<G: GraphView>(g: &G) -> u64 {
    use rayon::prelude::*;
    (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .map(|v| {
            let mut s = 0u64;
            g.for_each_out(v, |w| s = s.wrapping_add(w as u64));
            g.for_each_in(v, |w| s = s.wrapping_add(w as u64));
            s
        })
        .reduce(|| 0, u64::wrapping_add)
}

/// A CSR of `edges` in the snapshot's dense ids.
fn build_csr(s: &Snapshot, edges: &[(u32, u32)]) -> Csr {
    use rayon::prelude::*;
    let ext = s.external_ids();
    let max = ext.iter().copied().max().unwrap_or(0) as usize;
    let mut dense = vec![0 as VertexId; max + 1];
    for (d, &x) in ext.iter().enumerate() {
        dense[x as usize] = d as VertexId;
    }
    let mapped: Vec<(VertexId, VertexId)> = edges
        .par_iter()
        .map(|&(u, v)| (dense[u as usize], dense[v as usize]))
        .collect();
    Csr::from_edges(s.num_vertices(), &mapped, false)
}

/// The child ingest settings: the bench's own.
fn child_settings(p: &Plan) -> crash::Settings {
    crash::Settings {
        threads: p.threads,
        batch: p.a.batch,
        durability: p.a.durability,
        memtable_mb: p.a.memtable_mb,
        medium: p.medium,
    }
}

/// Seconds a child `evograph ingest` of all the edges takes from start to exit.
fn ingest_leg(p: &Plan) -> evograph::Result<f64> {
    let dir = p.dir.join("ingest-store");
    let clear = || -> evograph::Result<()> {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| io_err("remove", &dir, e))?;
        }
        Ok(())
    };
    clear()?;
    let s = crash::ingest_to_exit(&dir, &p.dir.join("edges.bin"), &child_settings(p))?;
    clear()?;
    Ok(s)
}

/// Kills a child ingest of the same edges halfway and reopens what it left.
fn crash_leg(p: &Plan) -> evograph::Result<crash::Crash> {
    let dir = p.dir.join("crash-store");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| io_err("remove", &dir, e))?;
    }
    let half = p.edges.len() as u64 / 2;
    let c = crash::ingest_kill_reopen(&dir, &p.dir.join("edges.bin"), &child_settings(p), half)?;
    // With sync durability every acknowledged edge must be there (interval and none
    // acknowledge before the bytes are durable).
    if p.a.durability == Durability::Sync {
        let mut acked: Vec<(u32, u32)> = p.edges[..c.acked as usize].to_vec();
        acked.sort_unstable();
        acked.dedup();
        if c.edges < acked.len() as u64 {
            return Err(invalid(format!(
                "after the crash the store holds {} edges, but {} distinct ones were acknowledged",
                c.edges,
                acked.len()
            )));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(c)
}
