//! Killing an `evograph ingest --print-acks` child at a chosen point, recording the point
//! so that a failure replays, and judging what recovery kept against a model.
//!
//! A kill point is a number of acknowledgements read from the child, or a time when none
//! had come. `trials.log` records for every trial the acknowledgements read before the
//! kill and how long the child had lived; `EVOGRAPH_CRASH_REPLAY=<trials.log>` (with the
//! same `EVOGRAPH_CRASH_SEED`) kills each recorded trial after exactly that many
//! acknowledgements (or after that long, when there were none), so the inputs, in-flight
//! depths and kill points of a failed run come back in order. Threads inside the child
//! still race, so a replay reaches the same point of the input, not the same instruction.

use super::{Model, Rng};
use evograph::{KeyKind, Record};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// The seed of a crash test: `EVOGRAPH_CRASH_SEED`, or `default`.
pub fn seed(default: u64) -> u64 {
    env_u64("EVOGRAPH_CRASH_SEED").unwrap_or(default)
}

/// An unsigned number from environment variable `name`, if it is set to one.
pub fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.parse().ok())
}

/// Writes `recs` as an `ops` file at `path`, vertices named as `keys` stores them.
pub fn write_ops(recs: &[Record], path: &Path, keys: KeyKind) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let k = |x: &u64| match keys {
        KeyKind::String => super::name_of(*x),
        _ => x.to_string(),
    };
    for r in recs {
        match r {
            Record::Insert(u, v) => writeln!(f, "+ {} {}", k(u), k(v)),
            Record::InsertWeighted(u, v, w) => writeln!(f, "+ {} {} {w}", k(u), k(v)),
            Record::Delete(u, v) => writeln!(f, "- {} {}", k(u), k(v)),
            Record::InsertVertex(u) => writeln!(f, "+ {}", k(u)),
            Record::DeleteVertex(u) => writeln!(f, "- {}", k(u)),
        }
        .unwrap();
    }
    f.flush().unwrap();
}

/// `evograph ingest` of the `ops` file `input` into `store` as the kill tests run it:
/// synchronous, printing its acknowledgements (stdout piped), in batches of `batch` with
/// `in_flight` ahead, and a 1 MiB memtable so that kills also land in flushes and merges.
pub fn ingest_command(
    store: &Path,
    input: &Path,
    batch: usize,
    in_flight: usize,
    medium: &str,
) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_evograph"));
    c.args(["ingest".as_ref(), store.as_os_str(), input.as_os_str()])
        .args(["--format", "ops", "--durability", "sync", "--print-acks"])
        .args([
            "--batch",
            &batch.to_string(),
            "--memtable-mb",
            "1",
            "--threads",
            "2",
        ])
        .args([
            "--in-flight",
            &in_flight.to_string(),
            "--no-validate",
            "--medium",
            medium,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    c
}

/// When to kill a child: once `acks` acknowledgements have been read, or `ms` after the
/// `first` acknowledgements came (after the spawn when `first` is 0), whichever is sooner.
#[derive(Clone, Copy, Debug)]
pub struct KillAt {
    pub first: u64,
    pub acks: u64,
    pub ms: u64,
}

/// What a kill left: the records acknowledged (the last `acked N` read, including lines
/// printed before the kill), how many acknowledgements came, whether the child was still
/// running, and how long it lived.
#[derive(Debug)]
pub struct Killed {
    pub acked: usize,
    pub acks: u64,
    pub mid_ingest: bool,
    pub lived_ms: u64,
    pub status: ExitStatus,
}

/// The kill points of a recorded run (`EVOGRAPH_CRASH_REPLAY`), by trial.
pub struct Replay(BTreeMap<u64, (u64, u64)>);

impl Replay {
    /// The recorded run named by `EVOGRAPH_CRASH_REPLAY`, if any.
    pub fn from_env() -> Option<Replay> {
        let path = std::env::var("EVOGRAPH_CRASH_REPLAY").ok()?;
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("EVOGRAPH_CRASH_REPLAY={path}: {e}"));
        let mut points = BTreeMap::new();
        for line in text.lines() {
            // "trial T: killed after A acks, M ms; ..."
            let num = |key: &str| -> Option<u64> {
                let at = line.find(key)? + key.len();
                line[at..]
                    .split(|c: char| !c.is_ascii_digit())
                    .next()?
                    .parse()
                    .ok()
            };
            if let (Some(t), Some(a), Some(m)) =
                (num("trial "), num("killed after "), num(" acks, "))
            {
                points.insert(t, (a, m));
            }
        }
        eprintln!(
            "replaying {} recorded kill points from {path}",
            points.len()
        );
        Some(Replay(points))
    }

    /// `drawn`, or the recorded point of `trial`: exactly its acknowledgements, or its
    /// lifetime when it had none.
    pub fn point(replay: &Option<Replay>, trial: u64, drawn: KillAt) -> KillAt {
        match replay.as_ref().and_then(|r| r.0.get(&trial)) {
            Some(&(0, ms)) => KillAt {
                first: 0,
                acks: 0,
                ms,
            },
            Some(&(acks, _)) => KillAt {
                first: acks,
                acks,
                ms: 0,
            },
            None => drawn,
        }
    }
}

/// The line `trials.log` gets for a kill, which [`Replay`] reads back.
pub fn record(log: &mut impl Write, trial: u64, k: &Killed, rest: &str) {
    writeln!(
        log,
        "trial {trial}: killed after {} acks, {} ms; acked {} records; {rest}",
        k.acks, k.lived_ms, k.acked
    )
    .unwrap();
    log.flush().unwrap();
}

/// Reads `acked N` lines from `child`'s stdout (piped) on a thread of its own.
fn acks_of(child: &mut Child) -> Receiver<usize> {
    let stdout = child.stdout.take().expect("stdout piped");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(n) = line.strip_prefix("acked ") {
                if tx.send(n.parse::<usize>().unwrap()).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// Kills `child` (spawned at `spawned`, stdout piped) at point `at`.
pub fn kill(mut child: Child, spawned: Instant, at: KillAt) -> Killed {
    let rx = acks_of(&mut child);
    let (mut acked, mut acks) = (0usize, 0u64);
    let target = at.acks.max(at.first);
    if target == 0 {
        std::thread::sleep(Duration::from_millis(at.ms));
    }
    let mut deadline = (at.first == 0).then(|| Instant::now() + Duration::from_millis(at.ms));
    while acks < target {
        let got = match deadline {
            Some(d) => rx
                .recv_timeout(d.saturating_duration_since(Instant::now()))
                .ok(),
            None => rx.recv().ok(),
        };
        let Some(a) = got else { break };
        (acked, acks) = (a, acks + 1);
        if acks == at.first && deadline.is_none() {
            deadline = Some(Instant::now() + Duration::from_millis(at.ms));
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    // Acknowledgements printed before the kill count too: they were promised. Every one
    // still in the pipe or on its way through the reading thread, which ends at the pipe's
    // end once the child is dead (`try_recv` here missed those not yet read: a child killed
    // "after 2 acks" had committed 6 batches, read as a store holding more than it could).
    for a in rx {
        (acked, acks) = (a, acks + 1);
    }
    Killed {
        acked,
        acks,
        mid_ingest: status.code().is_none(),
        lived_ms: spawned.elapsed().as_millis() as u64,
        status,
    }
}

/// How the model after `batches` whole batches differs from a recovered store.
#[derive(Debug)]
#[allow(dead_code)] // Read through Debug in a failure's message.
pub struct Distance {
    batches: usize,
    /// Edges of the model the store lacks, with a few of them.
    missing: (usize, Vec<(u64, u64)>),
    /// Edges of the store the model lacks, with a few of them.
    extra: (usize, Vec<(u64, u64)>),
    /// Vertices only the model has, and only the store has.
    vertices: (Vec<u64>, Vec<u64>),
}

impl Distance {
    fn between(batches: usize, m: &Model, got: &(BTreeSet<u64>, BTreeSet<(u64, u64)>)) -> Self {
        let few = |d: std::collections::btree_set::Difference<'_, (u64, u64)>| {
            let all: Vec<_> = d.copied().collect();
            (all.len(), all.into_iter().take(4).collect())
        };
        Distance {
            batches,
            missing: few(m.edges.difference(&got.1)),
            extra: few(got.1.difference(&m.edges)),
            vertices: (
                m.vertices.difference(&got.0).take(4).copied().collect(),
                got.0.difference(&m.vertices).take(4).copied().collect(),
            ),
        }
    }
}

/// The model after the whole batches of `batch` records of `recs` that recovery kept:
/// `model` with `k` batches applied, for the one `k` whose graph is `got` (vertices,
/// edges), where `k` covers the `acked` records and at most `past_ack` batches more.
/// Otherwise how far each candidate was.
pub fn whole_batches(
    model: &Model,
    recs: &[Record],
    batch: usize,
    acked: usize,
    past_ack: usize,
    got: &(BTreeSet<u64>, BTreeSet<(u64, u64)>),
) -> Result<(usize, Model), Vec<Distance>> {
    let n = recs.len();
    let first = acked.div_ceil(batch);
    let mut m = model.clone();
    let upto = |m: &mut Model, from: usize, to: usize| {
        recs[from.min(n)..to.min(n)].iter().for_each(|r| m.apply(r))
    };
    upto(&mut m, 0, (first * batch).min(n).max(acked));
    let mut k = first;
    let mut tried = Vec::new();
    loop {
        if m.edges == got.1 && m.vertices == got.0 {
            return Ok((k, m));
        }
        tried.push(Distance::between(k, &m, got));
        if k >= first + past_ack || k * batch >= n {
            return Err(tried);
        }
        upto(&mut m, k * batch, (k + 1) * batch);
        k += 1;
    }
}

/// Draws a deadline below `window_ms` (at least 1 ms).
pub fn draw_ms(rng: &mut Rng, window_ms: u64) -> u64 {
    1 + rng.below(window_ms.max(1))
}
