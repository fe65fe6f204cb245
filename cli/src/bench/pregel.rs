//! The `pregel.*` figures: each shipped vertex program against the hand-written kernel that
//! computes the same thing, on the same snapshot, in interleaved rounds; push against pull
//! where the program allows both; and the edges the engine processed per second (iPregel's
//! GTEPS).

use super::kernels::{self, Digest, Setup};
use super::report::{self, Trial};
use evograph::algo::kernel::Kernel;
use evograph::pregel::{self, programs, Delivery, Program};
use evograph::{GraphView, Snapshot};
use std::time::Instant;

/// Every program the bench times, by the name `--kernels` and `evograph run` know it by.
pub const ALL: &[Kernel] = &[
    Kernel::PregelPr,
    Kernel::PregelCc,
    Kernel::PregelBfs,
    Kernel::PregelSssp,
];

/// PageRank rounds: the same 20 as the hand-written `pr` of the kernels grid.
const PR_ITERATIONS: u32 = 20;

/// One timed run of a program: seconds, digest, edges processed and supersteps.
struct Timed {
    seconds: f64,
    digest: Digest,
    edges: u64,
    supersteps: u32,
}

/// The hand-written kernel (in `kernels::run`'s names) that program `name` must match.
fn hand_of(name: Kernel) -> Kernel {
    match name {
        Kernel::PregelPr => Kernel::Pr,
        Kernel::PregelCc => Kernel::Wcc,
        Kernel::PregelBfs => Kernel::Bfs,
        Kernel::PregelSssp => Kernel::Sssp,
        other => unreachable!("{other} is not one of the programs the bench times"),
    }
}

/// The delivery modes program `name` runs under: its own first.
fn modes(name: Kernel) -> Vec<Delivery> {
    let own = match name {
        Kernel::PregelPr => programs::PageRank::DELIVERY,
        Kernel::PregelCc => programs::Components::DELIVERY,
        Kernel::PregelBfs => programs::Bfs::DELIVERY,
        Kernel::PregelSssp => programs::Sssp::DELIVERY,
        other => unreachable!("{other} is not one of the programs the bench times"),
    };
    // SSSP sends a different distance along each edge (its weight added), which only push
    // delivery can carry.
    let other = match own {
        Delivery::Push => Delivery::Pull,
        Delivery::Pull => Delivery::Push,
    };
    if name == Kernel::PregelSssp {
        vec![own]
    } else {
        vec![own, other]
    }
}

/// Runs program `name` once on `g` with delivery `d`, digesting its values the way
/// `kernels::run` digests the hand-written kernel's.
fn run_program<G: GraphView>(name: Kernel, g: &G, s: &Setup, d: Delivery) -> Timed {
    let cfg = pregel::Config {
        delivery: Some(d),
        ..Default::default()
    };
    let t = Instant::now();
    match name {
        Kernel::PregelPr => {
            let p = programs::PageRank {
                damping: 0.85,
                iterations: PR_ITERATIONS,
            };
            finish(t, g, &p, &cfg, |v| kernels::weighted_sum(v.iter().copied()))
        }
        Kernel::PregelCc => finish(t, g, &programs::Components, &cfg, |l| {
            kernels::distinct(g, l)
        }),
        Kernel::PregelBfs => {
            let p = programs::Bfs {
                source: s.source(0),
            };
            finish(t, g, &p, &cfg, kernels::depths)
        }
        Kernel::PregelSssp => {
            let p = programs::Sssp {
                source: s.source(0),
            };
            finish(t, g, &p, &cfg, |d| kernels::weighted_sum(d.iter().copied()))
        }
        other => unreachable!("{other} is not one of the programs the bench times"),
    }
}

/// Runs `p`, stops the clock, digests the values. The bench's programs always halt; one
/// that did not would make every figure meaningless, so it is a bug worth a panic.
fn finish<P: Program, G: GraphView>(
    t: Instant,
    g: &G,
    p: &P,
    cfg: &pregel::Config,
    digest: impl FnOnce(&[P::Value]) -> Digest,
) -> Timed {
    let out = pregel::run(g, p, cfg).expect("the shipped programs use the API correctly");
    let seconds = t.elapsed().as_secs_f64();
    assert!(out.halted(), "a shipped program did not halt: {}", out.stop);
    Timed {
        seconds,
        digest: digest(&out.values),
        edges: out.edges,
        supersteps: out.supersteps,
    }
}

/// Times program `name` on the compacted snapshot `comp` (hand-written kernel, then every
/// delivery mode) and on the live one (hand-written, then the program's own mode), in
/// rounds of all of them in turn, and records the medians in `t`.
pub fn measure(
    name: Kernel,
    live: &Snapshot,
    comp: &Snapshot,
    setup: &Setup,
    pool: &rayon::ThreadPool,
    t: &mut Trial,
) -> evograph::Result<()> {
    let hand = hand_of(name);
    let modes = &modes(name)[..];
    // Columns: hand (compacted), each mode (compacted), hand (live), own mode (live).
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); modes.len() + 3];
    let (mut rounds, mut r) = (1, 0);
    let mut last = None;
    while r < rounds {
        let mut row = Vec::new();
        let (th, dh) =
            pool.install(|| evograph::with_view!(comp, |v| kernels::run(hand, v, setup, 0)));
        row.push(th);
        let mut runs = Vec::new();
        for &d in modes {
            let x = pool.install(|| evograph::with_view!(comp, |v| run_program(name, v, setup, d)));
            row.push(x.seconds);
            runs.push(x);
        }
        let (tl, dl) =
            pool.install(|| evograph::with_view!(live, |v| kernels::run(hand, v, setup, 0)));
        row.push(tl);
        let xl =
            pool.install(|| evograph::with_view!(live, |v| run_program(name, v, setup, modes[0])));
        row.push(xl.seconds);
        for (d, x) in modes.iter().zip(runs.iter()).chain([(&modes[0], &xl)]) {
            if !(x.digest.agrees(dh) && x.digest.agrees(dl)) {
                return Err(super::invalid(format!(
                    "{name} ({}) computed {:?}, the hand-written {hand} {dh:?} (live {dl:?})",
                    d, x.digest
                )));
            }
        }
        if r == 0 {
            let longest = row.iter().copied().fold(1e-6, f64::max);
            rounds = ((super::ROUND_BUDGET / longest) as usize).clamp(1, super::MAX_ROUNDS);
        }
        for (col, x) in times.iter_mut().zip(row) {
            col.push(x);
        }
        last = runs.into_iter().next();
        r += 1;
    }
    let med: Vec<f64> = times
        .iter()
        .map(|c| report::median(c).expect("one round at least"))
        .collect();
    let own = last.expect("one round at least");
    let (hand_s, seconds) = (med[0], med[1]);
    let (live_hand, live_s) = (med[modes.len() + 1], med[modes.len() + 2]);
    let by_mode = |d: Delivery| modes.iter().position(|&m| m == d).map(|i| med[1 + i]);
    let (push, pull) = (by_mode(Delivery::Push), by_mode(Delivery::Pull));
    let short = name.name().trim_start_matches("pregel-");
    let f = |what: &str| format!("pregel.{short}.{what}");
    eprintln!(
        "bench:   {name:<11} {seconds:.4} s ({}), hand-written {hand} {hand_s:.4} s: x{:.2}; live x{:.2} (median of {rounds})",
        modes[0],
        seconds / hand_s,
        live_s / live_hand
    );
    t.set(f("seconds"), seconds);
    t.set(f("hand_seconds"), hand_s);
    t.set(f("ratio"), seconds / hand_s);
    t.set(f("push_seconds"), push);
    t.set(f("pull_seconds"), pull);
    t.set(f("push_over_pull"), push.zip(pull).map(|(a, b)| a / b));
    t.set(f("live_seconds"), live_s);
    t.set(f("live_hand_seconds"), live_hand);
    t.set(f("ratio_live"), live_s / live_hand);
    t.set(f("gteps"), own.edges as f64 / seconds / 1e9);
    t.set(f("supersteps"), own.supersteps as f64);
    Ok(())
}
