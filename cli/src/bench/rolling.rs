//! The rolling figures of `bench --history`: a kernel brought forward from step to step of
//! the history (`Maintainer::step_upto`, as `run --every` does) against the same kernel
//! computed afresh on each step's graph (`Graph::snapshot_at`, then the kernel), the two
//! interleaved step by step. A step's time is what a user waits for between two results:
//! the graph of the step, the changes since the last, and the values brought forward.
//!
//! Two strides: a round (a day: 1 % of the edges deleted and 1 % inserted) and one commit
//! (one batch of `--batch` records; `--batch 16384` makes it 0.1 % of Kron20's edges).
//! wcc is timed against wcc; pr-tol against gap-pr to the same tolerance, as the issue of
//! versioned runs asks.

use evograph::algo::kernel::{self, Kernel, Params};
use evograph::standing::Maintainer;
use evograph::store::{Point, RollStep, Stride};
use evograph::Graph;
use serde_json::json;
use std::time::Instant;

/// Steps timed per stride, after the first (which computes the values).
const STEPS: usize = 20;

/// The rolling figures from the round at `t0`, a round every `day`: per kernel and
/// stride, the median step against the median afresh computation.
pub(super) fn run(
    g: &Graph,
    t0: i64,
    day: i64,
    rounds: usize,
) -> evograph::Result<serde_json::Value> {
    let end = Point::Time(t0 + (rounds as i64 - 1) * day);
    let mut out = serde_json::Map::new();
    for (stride, every) in [
        ("round", Stride::Nanos(day)),
        ("commit", Stride::Commits(1)),
    ] {
        let steps = g.rolling_steps(Point::Time(t0), end, every, None)?;
        let steps = &steps[..steps.len().min(STEPS + 1)];
        let mut kernels = serde_json::Map::new();
        for (kept, afresh) in [(Kernel::Wcc, Kernel::Wcc), (Kernel::PrTol, Kernel::GapPr)] {
            eprintln!("bench: rolling {kept} every {stride} against {afresh} afresh");
            kernels.insert(kept.name().into(), roll(g, steps, kept, afresh)?);
        }
        out.insert(stride.into(), kernels.into());
    }
    Ok(out.into())
}

/// `kept` brought forward over `steps`, interleaved with `afresh` at each step.
fn roll(
    g: &Graph,
    steps: &[RollStep],
    kept: Kernel,
    afresh: Kernel,
) -> evograph::Result<serde_json::Value> {
    let p = Params::default();
    let mut m = Maintainer::new(kept, &p)?;
    let (mut step_s, mut fresh_s, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut recomputed, mut changes, mut phases) =
        (0, Vec::new(), [Vec::new(), Vec::new(), Vec::new()]);
    let mut last = None;
    for (i, st) in steps.iter().enumerate() {
        let at = Point::Lsn(st.commit.lsn);
        let t = Instant::now();
        let step = m.step_upto(g, Some(at))?;
        let s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let snap = g.snapshot_at(at)?.0;
        drop(kernel::run(&snap, afresh, &p)?);
        let f = t.elapsed().as_secs_f64();
        let records = last.map_or(0, |l| {
            g.diff(Point::Lsn(l), at).map_or(0, |d| d.records.len())
        });
        last = Some(st.commit.lsn);
        let Some(step) = step.filter(|_| i > 0) else {
            continue;
        };
        recomputed += usize::from(step.recomputed.is_some());
        changes.push(records as f64);
        for (k, x) in [
            step.phases.snapshot,
            step.phases.changes,
            step.phases.kernel,
        ]
        .into_iter()
        .enumerate()
        {
            phases[k].push(x);
        }
        step_s.push(s);
        fresh_s.push(f);
        ratios.push(s / f);
    }
    let med = |xs: &[f64]| super::report::median(xs).unwrap_or(f64::NAN);
    Ok(json!({
        "steps": step_s.len(), "records_median": med(&changes),
        "step_s": med(&step_s), "afresh_s": med(&fresh_s), "ratio": med(&ratios),
        "ratio_max": ratios.iter().copied().fold(0.0, f64::max),
        "recomputed_steps": recomputed,
        "phases_s": {"snapshot": med(&phases[0]), "changes": med(&phases[1]), "kernel": med(&phases[2])},
    }))
}
