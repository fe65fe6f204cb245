//! `evograph demo`: the main job on an embedded default, for a first look.
//!
//! Generates a Graph500 Kronecker graph, ingests it with `sync` durability into a store,
//! reopens it, checks it and prints the figures that matter.

use evograph::gen::{self, GenKind, GenSpec};
use evograph::{Durability, Graph, Options, Record};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// What the demo records as its stores' creator, and looks for before it writes into one.
const CREATOR: &str = "evograph demo";

/// Generate a Kronecker graph, ingest it durably, reopen, check, print stats.
#[derive(clap::Args)]
pub struct Args {
    /// The graph has 2^scale vertices and 16 edges per vertex.
    #[arg(long, default_value_t = 18, value_parser = crate::args::int::<u32>(1, 31), allow_negative_numbers = true)]
    scale: u32,
    /// Store directory (default: a fresh temporary directory, removed afterwards). It must
    /// be new or empty, or hold a store an earlier demo made (the same edges go in again);
    /// any other store is refused, never written into.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Records per batch.
    #[arg(long, default_value_t = 65536, value_parser = crate::args::int::<usize>(1, 1 << 24), allow_negative_numbers = true)]
    batch: usize,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let tmp;
    let path = match &a.dir {
        Some(d) => {
            refuse_foreign_dir(d)?;
            d.clone()
        }
        None => {
            tmp = tempdir()?;
            tmp.join("store")
        }
    };
    let edges = generate(a.scale)?;
    ingest(&path, &edges, a.batch)?;
    let sound = reopen_and_check(&path)?;
    if a.dir.is_none() {
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
    Ok(if sound {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The demo's graph: Kronecker at `scale`, edge factor 16, shuffled.
fn generate(scale: u32) -> evograph::Result<Vec<(u32, u32)>> {
    let spec = GenSpec {
        kind: GenKind::Kron,
        scale,
        edge_factor: 16,
        seed: 1,
    };
    let mut edges = gen::generate(&spec)?;
    gen::shuffle(&mut edges, 1);
    println!(
        "generated Kronecker scale {scale} ({} edges, shuffled)",
        edges.len()
    );
    Ok(edges)
}

/// Ingests `edges` durably in batches of `batch`, a batch in flight while the next is
/// submitted, then closes the store.
fn ingest(path: &Path, edges: &[(u32, u32)], batch: usize) -> evograph::Result<()> {
    let g = Graph::open(
        path,
        Options::new()
            .durability(Durability::Sync)
            // --dir may name a store from an earlier demo: the same edges go in again.
            .create(true)
            .created_by(Some(CREATOR.into())),
    )?;
    let t = Instant::now();
    let mut pending = None;
    for chunk in edges.chunks(batch.max(1)) {
        let recs: Vec<Record> = chunk
            .iter()
            .map(|&(s, d)| Record::Insert(s as u64, d as u64))
            .collect();
        let ticket = g.submit(&recs)?;
        if let Some(p) = pending.replace(ticket) {
            g.wait(p)?;
        }
    }
    if let Some(p) = pending {
        g.wait(p)?;
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "ingested durably (sync) in {secs:.3} s: {:.2} M edges/s into {}",
        edges.len() as f64 / secs / 1e6,
        path.display()
    );
    let t = Instant::now();
    g.close()?;
    println!(
        "closed (memtable flushed to a run) in {:.3} s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Reopens the store (verifying every checksum) and checks it: whether it is sound.
fn reopen_and_check(path: &Path) -> evograph::Result<bool> {
    let t = Instant::now();
    let g = Graph::open(path, Options::default())?;
    println!(
        "reopened (every checksum verified) in {:.3} s",
        t.elapsed().as_secs_f64()
    );
    let r = g.check()?;
    let s = g.stats()?;
    println!(
        "check: {}; {} vertices, {} edges (duplicates removed), {} run file(s)",
        if r.is_sound() { "sound" } else { "PROBLEMS" },
        s.vertices,
        s.edges,
        s.levels.iter().map(|l| l.runs).sum::<usize>()
    );
    println!(
        "bytes per edge: {:.2} on the medium, {:.2} written since creation",
        s.medium_bytes as f64 / s.edges.max(1) as f64,
        s.bytes_written_total as f64 / s.edges.max(1) as f64
    );
    g.close()?;
    Ok(r.is_sound())
}

/// Refuses a `--dir` that is neither new nor empty nor a store an earlier demo made: the
/// demo must never write its graph into a user's store.
fn refuse_foreign_dir(dir: &Path) -> evograph::Result<()> {
    let empty = match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(evograph::Error::io("list", dir, e)),
    };
    if empty || evograph::store::recorded_creator(dir)?.as_deref() == Some(CREATOR) {
        return Ok(());
    }
    Err(evograph::Error::Invalid(format!(
        "--dir {} is not empty and holds no store an earlier `evograph demo` made: the demo writes only into a new or empty directory, or into its own store",
        dir.display()
    )))
}

fn tempdir() -> evograph::Result<PathBuf> {
    let p = std::env::temp_dir().join(format!("evograph-demo-{}", std::process::id()));
    std::fs::create_dir_all(&p).map_err(|e| evograph::Error::io("create", &p, e))?;
    Ok(p)
}
