//! `evograph stats`: sizes and counters of a store.

use std::path::PathBuf;
use std::process::ExitCode;

/// Print vertices, edges, runs per level, memtable contents and bytes on the medium.
///
/// Edges are counted as `export` lists them: directed edges, or each undirected edge once.
/// `stats` is a reader: it works while another process ingests, and shows the state that
/// writer last made durable.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    #[command(flatten)]
    reach: crate::args::Reach,
    #[command(flatten)]
    when: crate::args::When,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// DRAM per dictionary entry: the external id and its lookup slot, a dense id
/// (README, Memory).
const DICT_BYTES_PER_ID: u64 = 8 + evograph::types::ID_BYTES as u64;
/// DRAM per vertex of a dense run's index while it is built: one u64 offset per
/// direction, filled as the merge goes.
const MERGE_BYTES_PER_VERTEX: u64 = 16;
/// DRAM per vertex of a partition run's (sparse) index while it is built, at most: id,
/// count, tombstone count, then the offset, per direction.
const PART_BYTES_PER_VERTEX: u64 = 48;

/// Neighbor ids one wave of a merge holds before it writes them, at most (the library's
/// merge sizing; a single vertex with more is a wave of its own).
const MERGE_WAVE_IDS: u64 = 1 << 23;

/// DRAM one merge wave's output needs: the ids, their encoding in a compressed store (at
/// most as large), and weights.
fn merge_wave_bytes(s: &evograph::store::Stats) -> u64 {
    let id = evograph::types::ID_BYTES as u64;
    let encoded = if s.compression == "none" { 0 } else { id };
    let weight = if s.weighted { 8 } else { 0 };
    MERGE_WAVE_IDS * (id + encoded + weight)
}

/// DRAM a background merge's index needs at most: a dense run of every id while the ids
/// fit one partition, else a partition's sparse index.
fn merge_index_bytes(s: &evograph::store::Stats) -> u64 {
    let part = 1u64 << s.partition_bits.min(62);
    if s.partition_bits == 0 || s.vertex_ids <= part {
        MERGE_BYTES_PER_VERTEX * s.vertex_ids
    } else {
        PART_BYTES_PER_VERTEX * part
    }
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let t = std::time::Instant::now();
    let g = crate::open_existing(&a.store, true, a.reach.log_reach())?;
    let open_seconds = t.elapsed().as_secs_f64();
    let s = g.stats()?;
    // Count what export lists: the memtable included, an undirected edge once.
    let size = crate::args::size_of(&g, a.when)?;
    let counts = Counts {
        edges: size.edges,
        entries: size.entries,
        vertices: size.vertices,
        open_seconds,
    };
    let history = history_line(&g, &s)?;
    if a.json {
        print_json(&s, &counts, history);
        return Ok(ExitCode::SUCCESS);
    }
    println!("store           {}", a.store.display());
    print_identity(&s);
    print_shape(&s, &counts);
    if let Some(h) = history {
        println!("history         {}", h.0);
    }
    print_costs(&s, &counts);
    Ok(ExitCode::SUCCESS)
}

/// What history the store keeps and costs, as a line and as JSON; `None` when none.
fn history_line(
    g: &evograph::Graph,
    s: &evograph::store::Stats,
) -> evograph::Result<Option<(String, serde_json::Value)>> {
    if !g.history().keeps() {
        return Ok(None);
    }
    let l = g.log()?;
    let b = g.history_bytes()?;
    let span = match (l.commits.first(), l.commits.last()) {
        (Some((a, _)), Some((b, _))) => format!(" (LSN {} to {})", a.lsn, b.lsn),
        _ => String::new(),
    };
    let let_go = match b.let_go {
        0 => String::new(),
        n => format!(", {n} bytes still held for commits let go (freed by the next writer's open)"),
    };
    let runs: usize = s.levels.iter().map(|l| l.runs).sum();
    let line = format!(
        "{}: {} commits kept{span}, {} segments of {} bytes: {} bytes for the commits kept{let_go}; run versions for {} of {runs} run(s), {} bytes{}",
        l.setting,
        l.commits.len(),
        l.segments,
        l.segment_bytes,
        b.kept,
        s.versions_files,
        s.versions_bytes,
        match (s.weighted, s.versions_files < runs) {
            (true, _) => " (weighted stores have none yet)",
            (false, true) => " (`evograph compact` derives them, DRAM permitting)",
            (false, false) => "",
        }
    );
    let json = serde_json::json!({
        "setting": l.setting.to_string(),
        "commits": l.commits.len(),
        "from_lsn": l.commits.first().map(|c| c.0.lsn),
        "to_lsn": l.commits.last().map(|c| c.0.lsn),
        "segments": l.segments,
        "segment_bytes": l.segment_bytes,
        "kept_bytes": b.kept,
        "let_go_bytes": b.let_go,
        "versions_files": s.versions_files,
        "versions_bytes": s.versions_bytes,
    });
    Ok(Some((line, json)))
}

/// What the report counts beyond the store's own figures.
struct Counts {
    /// Edges as export lists them (an undirected edge once).
    edges: u64,
    /// Adjacency entries.
    entries: u64,
    /// Vertices that exist in the graph shown (as of `--at` when given).
    vertices: u64,
    open_seconds: f64,
}

fn print_json(
    s: &evograph::store::Stats,
    c: &Counts,
    history: Option<(String, serde_json::Value)>,
) {
    let mut v = serde_json::to_value(s).expect("stats serialize");
    v["vertices"] = c.vertices.into();
    if let Some((_, h)) = history {
        v["history"] = h;
    }
    v["open_seconds"] = c.open_seconds.into();
    v["edges"] = c.edges.into();
    v["adjacency_entries"] = c.entries.into();
    v["id_width"] = evograph::types::ID_WIDTH.into();
    v["dram_model"] = serde_json::json!({
        "dictionary_bytes": DICT_BYTES_PER_ID * s.vertex_ids,
        "merge_index_bytes": merge_index_bytes(s),
        "compact_index_bytes": MERGE_BYTES_PER_VERTEX * s.vertex_ids,
        "merge_wave_bytes": merge_wave_bytes(s),
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&v).expect("stats serialize")
    );
}

/// Which store this is, who made it and what its last recovery cut.
fn print_identity(s: &evograph::store::Stats) {
    match &s.store_id {
        Some(id) => println!("store id        {id} (commit {})", s.commit),
        None => println!(
            "store id        none: a store from before store ids (its next writer gives it one)"
        ),
    }
    if let Some(c) = &s.created_by {
        println!("created by      {}", evograph::error::printable(c));
    }
    if let Some(c) = &s.last_cut {
        println!(
            "last log cut    by a writer's recovery (commit {}) {}",
            c.commit,
            c.describe()
        );
    }
    if let Some(t) = &s.unreadable_tail {
        let kind = match &t.damage {
            Some(why) => format!("damaged, as no crash leaves it: {why}"),
            None => "a torn tail, as a crash leaves it (the next writer cuts it)".into(),
        };
        println!(
            "log tail        WAL segment {} is {kind}; {}",
            t.segment,
            t.describe()
        );
    }
}

/// The graph's kind and size, and how its runs are laid out.
fn print_shape(s: &evograph::store::Stats, c: &Counts) {
    let kind = if s.undirected {
        "undirected"
    } else {
        "directed"
    };
    let weighted = if s.weighted { ", weighted" } else { "" };
    let width = evograph::types::ID_WIDTH;
    println!("kind            {kind}{weighted}, {width}-bit vertex ids");
    if s.keys == "string" {
        println!("keys            string (vertex names)");
    }
    if s.compression != "none" {
        println!("compression     {} (runs' neighbor lists)", s.compression);
    }
    println!("vertices        {} ({} ids)", c.vertices, s.vertex_ids);
    let listed = if s.undirected {
        "each undirected edge once"
    } else {
        "directed"
    };
    println!(
        "edges           {} ({listed}, as export lists them; {} adjacency entries)",
        c.edges, c.entries
    );
    for l in &s.levels {
        let parts = if l.partitions > 0 {
            format!(
                " in {} partition(s), at most {} per partition",
                l.partitions, l.max_runs_per_partition
            )
        } else {
            String::new()
        };
        println!(
            "level {:<9} {} run(s){parts}, {} edges, {} bytes",
            l.level, l.runs, l.edges, l.bytes
        );
    }
    println!(
        "memtable        {} updates (from WAL replay){}",
        s.memtable_updates,
        match s.tails_loaded {
            0 => String::new(),
            n => format!(", after {n} tails the writer published"),
        }
    );
}

/// What the store costs: DRAM, medium bytes, bytes written, time to open.
fn print_costs(s: &evograph::store::Stats, c: &Counts) {
    println!(
        "dram bytes      {} (memtables, unflushed runs, vertex tables)",
        s.dram_bytes
    );
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    println!(
        "dram model      a writer needs its memtable budget + {:.0} MiB dictionary ({DICT_BYTES_PER_ID} B per id) + {:.0} MiB for a merge's index (one partition's; `compact`, which writes one dense run: {:.0} MiB) + up to {:.0} MiB for a merge's wave of output + allocator slack (README, Memory)",
        mib(DICT_BYTES_PER_ID * s.vertex_ids),
        mib(merge_index_bytes(s)),
        mib(MERGE_BYTES_PER_VERTEX * s.vertex_ids),
        mib(merge_wave_bytes(s)),
    );
    println!(
        "medium          {} (persists by {})",
        s.medium, s.persist_method
    );
    println!("durability      {} (its last writer's)", s.durability);
    println!(
        "medium bytes    {} (+ {} in WAL spares kept for the next writer)",
        s.medium_bytes, s.wal_spare_bytes
    );
    println!("bytes written   {} since creation", s.bytes_written_total);
    println!(
        "opened in       {:.3} s ({} WAL bytes replayed; run checksums are verified on first read)",
        c.open_seconds, s.wal_bytes_replayed
    );
    if c.edges > 0 {
        let runs: u64 = s.levels.iter().map(|l| l.bytes).sum();
        let per_edge = |b: u64| b as f64 / c.edges as f64;
        println!(
            "bytes per edge  {:.2} at rest ({:.2} in runs), {:.2} written",
            per_edge(s.medium_bytes),
            per_edge(runs),
            per_edge(s.bytes_written_total)
        );
    }
}
