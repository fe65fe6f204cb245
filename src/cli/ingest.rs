//! `evograph ingest`: stream an input file into a store through the batch API.
//!
//! A reader thread parses batches ahead while the main thread submits them; one batch is
//! kept in flight so its WAL persist overlaps the next batch's apply. Text inputs are
//! parsed once up front so that a malformed file is refused before the store changes.

use crate::progress;
use evograph::io::{self, Format};
use evograph::store::MediumKind;
use evograph::{Durability, Graph, Options, Record};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Instant;

/// Ingest edges (or an update stream) into a store, creating it if needed.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory (created if missing).
    store: PathBuf,
    /// Input file.
    input: PathBuf,
    /// auto (by extension), snap (whitespace edge list), el, bin (u32 pairs), ldbc (a
    /// Graphalytics .properties file or .v/.e pair), ops (`+ u v`, `- u v`, `+ u`, `- u`), mtx.
    #[arg(long, default_value = "auto")]
    format: Format,
    /// Create an undirected store (Graphalytics inputs say so themselves).
    #[arg(long)]
    undirected: bool,
    /// Records per batch (one WAL commit block each).
    #[arg(long, default_value_t = 65536)]
    batch: usize,
    /// Worker threads for apply and flush (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// sync (acknowledge once durable), interval=MS (persist every MS milliseconds) or none.
    #[arg(long, default_value = "sync")]
    durability: Durability,
    /// Print `acked N` each time the first N input records are acknowledged.
    #[arg(long)]
    print_acks: bool,
    /// DRAM budget for memtables, in MiB.
    #[arg(long, default_value_t = 1024)]
    memtable_mb: usize,
    /// Medium of a new store: file (pwrite + fdatasync), pmem (mapped; clwb + sfence on a
    /// DAX mount, msync elsewhere) or battery (mapped; a fence persists: eADR). An existing
    /// store keeps the medium it was created on.
    #[arg(long)]
    medium: Option<MediumKind>,
    /// Skip the validation pass over text inputs (a malformed line then stops the ingest
    /// with the batches before it already stored).
    #[arg(long)]
    no_validate: bool,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    if a.batch == 0 {
        return Err(evograph::Error::Invalid(
            "--batch must be at least 1".into(),
        ));
    }
    // Open the input before the store: a missing or unreadable input changes nothing.
    let src = io::open_source(&a.input, a.format)?;
    let info = src.info().clone();
    let format = match a.format {
        Format::Auto => io::detect_format(&a.input)?,
        f => f,
    };
    // The validation pass also learns whether any line carries a weight (a header or the
    // first line alone may not say).
    let mut weighted = info.weighted;
    if format != Format::Bin && !a.no_validate {
        weighted |= validate(&a)?;
    }
    let undirected = a.undirected || info.directed == Some(false);
    let opts = Options {
        undirected: if undirected { Some(true) } else { None },
        // A weighted input makes a weighted store; an existing store keeps what it is.
        weighted: if weighted && !a.store.join("MANIFEST").exists() {
            Some(true)
        } else {
            None
        },
        durability: a.durability,
        threads: a.threads,
        memtable_bytes: a.memtable_mb << 20,
        medium: a.medium,
        ..Options::default()
    };
    let t_open = Instant::now();
    let g = Graph::open(&a.store, opts)?;
    let open_secs = t_open.elapsed().as_secs_f64();
    if matches!(a.medium, Some(MediumKind::Pmem | MediumKind::Battery)) {
        eprintln!(
            "evograph: {} medium persists by {}",
            a.medium.unwrap(),
            g.stats()?.persist_method
        );
    }

    let batch = a.batch;
    let (tx, rx) = mpsc::sync_channel::<evograph::Result<Vec<Record>>>(2);
    let total = info.total_bytes;
    let reader = std::thread::spawn(move || {
        let mut src = src;
        loop {
            let mut buf = Vec::with_capacity(batch);
            match src.next_batch(batch, &mut buf) {
                Ok(more) => {
                    if !buf.is_empty() && tx.send(Ok(buf)).is_err() {
                        return src.bytes_read();
                    }
                    if !more {
                        return src.bytes_read();
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return src.bytes_read();
                }
            }
        }
    });
    let pb = progress::bytes(total, "ingesting");
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let t = Instant::now();
    let mut records = 0u64;
    let mut pending = None;
    let ack = |n: u64, out: &mut std::io::StdoutLock| -> evograph::Result<()> {
        if a.print_acks {
            writeln!(out, "acked {n}")
                .and_then(|_| out.flush())
                .map_err(|e| evograph::Error::io("write", "stdout", e))?;
        }
        Ok(())
    };
    for b in rx {
        let b = b?;
        let ticket = g.submit(&b)?;
        records += b.len() as u64;
        pb.inc(b.len() as u64 * 8);
        if let Some((pt, n)) = pending.replace((ticket, records)) {
            g.wait(pt)?;
            ack(n, &mut out)?;
        }
    }
    if let Some((pt, n)) = pending {
        g.wait(pt)?;
        ack(n, &mut out)?;
    }
    let secs = t.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let _ = reader.join();
    let t_close = Instant::now();
    let stats = g.stats()?;
    g.close()?;
    let close_secs = t_close.elapsed().as_secs_f64();
    writeln!(
        out,
        "ingested {records} records in {secs:.3} s: {:.2} M records/s ({}; open {open_secs:.3} s, close {close_secs:.3} s; {} vertices)",
        records as f64 / secs.max(1e-9) / 1e6,
        a.durability,
        stats.vertices
    )
    .map_err(|e| evograph::Error::io("write", "stdout", e))?;
    Ok(ExitCode::SUCCESS)
}

/// Parses the whole input once, so a malformed file is refused before the store changes;
/// returns whether any record carries a weight.
fn validate(a: &Args) -> evograph::Result<bool> {
    let mut src = io::open_source(&a.input, a.format)?;
    let pb = progress::bytes(src.info().total_bytes, "validating");
    let mut buf = Vec::with_capacity(1 << 16);
    let mut weighted = false;
    loop {
        buf.clear();
        let more = src.next_batch(1 << 16, &mut buf)?;
        weighted |= buf.iter().any(|r| matches!(r, Record::InsertWeighted(..)));
        pb.set_position(src.bytes_read());
        if !more {
            break;
        }
    }
    pb.finish_and_clear();
    Ok(weighted)
}
