//! Child `evograph ingest` processes: the crash leg (one killed with SIGKILL partway, then
//! the time to reopen the store it left, which replays the write-ahead log) and the
//! end-to-end ingest (one run to its exit, timed as a user waits for it).

use evograph::store::MediumKind;
use evograph::{Durability, Graph, GraphView, Options};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// What the crash leg measured.
pub struct Crash {
    /// Records the child had acknowledged when it was killed.
    pub acked: u64,
    /// Seconds to open the crashed store (recovery included).
    pub reopen_seconds: f64,
    /// WAL bytes the reopen replayed.
    pub wal_bytes_replayed: u64,
    /// Edges the reopened store holds.
    pub edges: u64,
}

/// How the child ingests: the bench's own settings.
pub struct Settings {
    /// Worker threads.
    pub threads: usize,
    /// Records per batch.
    pub batch: usize,
    /// Durability mode.
    pub durability: Durability,
    /// Memtable budget in MiB.
    pub memtable_mb: usize,
    /// The medium the store is created on.
    pub medium: MediumKind,
}

/// The child command `evograph ingest STORE INPUT` with the bench's settings.
fn ingest_command(store: &Path, input: &Path, s: &Settings) -> evograph::Result<Command> {
    let exe = std::env::current_exe().map_err(|e| evograph::Error::io("find", "evograph", e))?;
    let mut c = Command::new(exe);
    c.arg("ingest")
        .arg(store)
        .arg(input)
        .args(["--format", "bin"])
        .args(["--threads", &s.threads.to_string()])
        .args(["--batch", &s.batch.to_string()])
        .args(["--durability", &s.durability.to_string()])
        .args(["--memtable-mb", &s.memtable_mb.to_string()])
        .args(["--medium", s.medium.as_str()]);
    Ok(c)
}

/// Seconds a child `evograph ingest` of all of `input` into a new store takes from its
/// start to its exit: reading, durable ingest, the final flush and close, as a user who
/// runs the command waits for them.
pub fn ingest_to_exit(store: &Path, input: &Path, s: &Settings) -> evograph::Result<f64> {
    let mut cmd = ingest_command(store, input, s)?;
    let t = Instant::now();
    let out = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| evograph::Error::io("run", "evograph ingest", e))?;
    let seconds = t.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(evograph::Error::Invalid(format!(
            "the end-to-end `evograph ingest` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(seconds)
}

/// Starts `evograph ingest STORE INPUT` with the bench's settings, kills it once it has
/// acknowledged `kill_after` records (or when it ends on its own), then reopens the store.
pub fn ingest_kill_reopen(
    store: &Path,
    input: &Path,
    s: &Settings,
    kill_after: u64,
) -> evograph::Result<Crash> {
    let Settings {
        threads,
        durability,
        memtable_mb,
        ..
    } = *s;
    let mut child = ingest_command(store, input, s)?
        .arg("--print-acks")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| evograph::Error::io("start", "evograph ingest", e))?;
    let stdout = child.stdout.take().expect("stdout was piped");
    let mut acked = 0;
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if let Some(n) = line.strip_prefix("acked ").and_then(|n| n.parse().ok()) {
            acked = n;
            if acked >= kill_after {
                break;
            }
        }
    }
    // SIGKILL: no destructor, no flush, no close; the store is what the medium holds.
    let _ = child.kill();
    let _ = child.wait();
    let t = Instant::now();
    let g = Graph::open(
        store,
        Options::new()
            .create(false)
            .threads(threads)
            .durability(durability)
            .memtable_bytes(memtable_mb << 20),
    )?;
    let reopen_seconds = t.elapsed().as_secs_f64();
    let wal_bytes_replayed = g.wal_bytes_replayed();
    let edges = g.snapshot()?.num_edges();
    g.close()?;
    Ok(Crash {
        acked,
        reopen_seconds,
        wal_bytes_replayed,
        edges,
    })
}
