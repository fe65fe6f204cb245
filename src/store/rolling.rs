//! [`crate::Graph::rolling_steps`]: the points a rolling computation visits between two
//! points of history, every so long or every so many commits, each with the window of a
//! given width that ends with it.

use super::history::Point;
use super::{CommitPoint, Inner};
use crate::history::History;
use crate::{Error, Result};
use std::str::FromStr;

/// How far apart a rolling computation's steps are, or how wide its windows: a duration
/// or a number of commits, written as `--history` takes them (`90s`, `12h`, `7d`, `100`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stride {
    /// Nanoseconds of commit time.
    Nanos(i64),
    /// Commits.
    Commits(u64),
}

impl FromStr for Stride {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Stride, String> {
        match s.parse::<History>() {
            Ok(History::Within(ns)) => Ok(Stride::Nanos(ns)),
            Ok(History::Commits(n)) => Ok(Stride::Commits(n)),
            _ => Err(format!(
                "'{s}' is not a step: expected a duration such as 7d, 12h, 30m or 90s, or a number of commits such as 100"
            )),
        }
    }
}

/// Steps a rolling computation may take: more is a step chosen too short by mistake.
const MAX_STEPS: usize = 100_000;

/// One step of a rolling computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RollStep {
    /// The step's point: a time every so long, a commit's LSN every so many commits.
    pub at: Point,
    /// The commit whose graph the step reads (the last at or before `at`).
    pub commit: CommitPoint,
    /// With a width, the window that ends with the step, its state included: from
    /// `start` to `end` as [`crate::Graph::snapshot_window`] takes them.
    pub window: Option<(Point, Point)>,
}

impl Inner {
    /// The steps from `from` to `to` (both included when on the grid), `every` apart, with
    /// windows of `width` when given; points outside the history kept are refused.
    pub(super) fn rolling_steps(
        &self,
        from: Point,
        to: Point,
        every: Stride,
        width: Option<Stride>,
    ) -> Result<Vec<RollStep>> {
        let pieces = self.pieces()?;
        let upto = pieces.last().map_or(0, |p| p.max_lsn);
        let commits = Self::commits_of(&pieces, upto);
        let (a, b) = (self.resolve(&commits, from)?, self.resolve(&commits, to)?);
        if b < a {
            return Err(Error::Invalid(format!(
                "the steps' end {to} comes before their start {from}"
            )));
        }
        let points: Vec<Point> = match every {
            Stride::Commits(n) => {
                if (b - a) as u64 / n >= MAX_STEPS as u64 {
                    return Err(Error::Invalid(format!(
                        "more than {MAX_STEPS} steps from {from} to {to}: choose a longer step"
                    )));
                }
                (a..=b)
                    .step_by(n as usize)
                    .map(|i| Point::Lsn(commits[i].lsn))
                    .collect()
            }
            Stride::Nanos(ns) => {
                let (t0, t1) = (time_of(from, &commits[a]), time_of(to, &commits[b]));
                let n = ((t1 - t0) / ns) as usize;
                if n >= MAX_STEPS {
                    return Err(Error::Invalid(format!(
                        "{} steps from {from} to {to}: choose a longer step (at most {MAX_STEPS})",
                        n + 1
                    )));
                }
                (0..=n).map(|k| Point::Time(t0 + k as i64 * ns)).collect()
            }
        };
        points
            .into_iter()
            .map(|at| {
                let i = self.resolve(&commits, at)?;
                Ok(RollStep {
                    at,
                    commit: commits[i],
                    window: width.map(|w| window_ending(&commits, i, at, w)),
                })
            })
            .collect()
    }
}

/// The time a point names: its own, or its commit's.
fn time_of(p: Point, commit: &CommitPoint) -> i64 {
    match p {
        Point::Time(t) => t,
        Point::Lsn(_) => commit.unix_nanos,
    }
}

/// The window of `width` ending with step point `at` (commit `i`), its state included:
/// a duration ends just after `at`; commits end just after commit `i`'s LSN.
fn window_ending(commits: &[CommitPoint], i: usize, at: Point, width: Stride) -> (Point, Point) {
    match width {
        Stride::Nanos(ns) => {
            let t = time_of(at, &commits[i]);
            (
                Point::Time(t.saturating_sub(ns)),
                Point::Time(t.saturating_add(1)),
            )
        }
        Stride::Commits(n) => {
            let start = commits[i.saturating_sub(n as usize)];
            (Point::Lsn(start.lsn), Point::Lsn(commits[i].lsn + 1))
        }
    }
}
