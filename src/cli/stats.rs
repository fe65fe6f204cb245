//! `evograph stats`: sizes and counters of a store.

use evograph::GraphView;
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
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let t = std::time::Instant::now();
    let g = crate::open_existing(&a.store, true)?;
    let open_seconds = t.elapsed().as_secs_f64();
    let s = g.stats()?;
    // Count what export lists: the memtable included, an undirected edge once.
    let snap = g.snapshot()?;
    let edges = snap.edge_count();
    if a.json {
        let mut v = serde_json::to_value(&s).expect("stats serialize");
        v["open_seconds"] = open_seconds.into();
        v["edges"] = edges.into();
        v["adjacency_entries"] = snap.num_edges().into();
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("stats serialize")
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("store           {}", a.store.display());
    println!(
        "kind            {}{}",
        if s.undirected {
            "undirected"
        } else {
            "directed"
        },
        if s.weighted { ", weighted" } else { "" }
    );
    println!("vertices        {} ({} ids)", s.vertices, s.vertex_ids);
    println!(
        "edges           {edges} ({}, as export lists them; {} adjacency entries)",
        if s.undirected {
            "each undirected edge once"
        } else {
            "directed"
        },
        snap.num_edges()
    );
    for l in &s.levels {
        println!(
            "level {:<9} {} run(s), {} edges, {} bytes",
            l.level, l.runs, l.edges, l.bytes
        );
    }
    println!(
        "memtable        {} updates (from WAL replay)",
        s.memtable_updates
    );
    println!(
        "dram bytes      {} (memtables, unflushed runs, vertex tables)",
        s.dram_bytes
    );
    println!(
        "medium          {} (persists by {})",
        s.medium, s.persist_method
    );
    println!("durability      {} (its last writer's)", s.durability);
    println!("medium bytes    {}", s.medium_bytes);
    println!("bytes written   {} since creation", s.bytes_written_total);
    println!(
        "opened in       {:.3} s (checksums verified, {} WAL bytes replayed)",
        open_seconds, s.wal_bytes_replayed
    );
    if edges > 0 {
        println!(
            "bytes per edge  {:.2} at rest, {:.2} written",
            s.medium_bytes as f64 / edges as f64,
            s.bytes_written_total as f64 / edges as f64
        );
    }
    Ok(ExitCode::SUCCESS)
}
