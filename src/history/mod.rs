//! History: the graph as it was at any commit the store keeps, and the changes between two.
//!
//! A run holds the net effect of its LSN range, so once a memtable is sealed the graph as of
//! a commit inside that range is gone. A store keeping history therefore writes, with every
//! run it flushes, a *history segment* (`segment`): the commits the run's range holds
//! (LSN, time, vertex count) and their effective changes in commit order, as the seal
//! emits them ([`crate::memtable::history`]). The latest graph is untouched: kernels on it
//! read the same runs, at the same speed, with history kept or not.
//!
//! The graph as of commit K is the latest graph with every change after K undone
//! (`net`): a small run of inverse updates layered on top. The changes between two
//! commits are the net changes of the segments between them. Both cost what the changes
//! cost, not what the graph does.
//!
//! What is kept is the store's [`History`] setting: segments wholly outside the window are
//! dropped after the commit that stops naming them.

pub(crate) mod lifetime;
pub(crate) mod net;
pub(crate) mod ordinals;
pub(crate) mod segment;
pub(crate) mod segment_read;
pub(crate) mod versions;
pub(crate) mod versions_count;
pub(crate) mod versions_file;
pub(crate) mod versions_mask;
pub(crate) mod versions_transpose;
pub(crate) mod window;

use std::fmt;
use std::str::FromStr;

/// What history a store keeps: chosen at creation, recorded in the store, changeable later.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum History {
    /// None: only the latest graph (the default).
    #[default]
    None,
    /// Every commit since history was turned on.
    All,
    /// The last `n` commits.
    Commits(u64),
    /// The commits within this many nanoseconds of the newest commit's time (not of the
    /// wall clock: a replay of 2001's data keeps 2001's window).
    Within(i64),
}

impl History {
    /// Whether any history is kept.
    pub fn keeps(&self) -> bool {
        *self != History::None
    }
}

const UNITS: [(&str, i64); 5] = [
    ("w", 7 * 86_400),
    ("d", 86_400),
    ("h", 3_600),
    ("m", 60),
    ("s", 1),
];

impl FromStr for History {
    type Err = String;

    /// `none`, `all`, a duration (`7d`, `12h`, `30m`, `90s`, `2w`) or a number of commits.
    fn from_str(s: &str) -> Result<History, String> {
        let s = s.trim();
        let bad = || {
            format!(
                "'{s}' is not a history setting: expected none, all, a duration such as 7d, 12h, 30m or 90s, or a number of commits such as 100"
            )
        };
        match s {
            "none" => return Ok(History::None),
            "all" => return Ok(History::All),
            _ => {}
        }
        if let Ok(n) = s.parse::<u64>() {
            return match n {
                0 => Err(format!("{}; 0 commits is 'none'", bad())),
                n => Ok(History::Commits(n)),
            };
        }
        let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?);
        let secs = UNITS.iter().find(|(u, _)| *u == unit).ok_or_else(bad)?.1;
        let n: i64 = num.parse().map_err(|_| bad())?;
        match n
            .checked_mul(secs)
            .and_then(|x| x.checked_mul(1_000_000_000))
        {
            Some(0) => Err(format!("{}; a window of 0 is 'none'", bad())),
            Some(ns) => Ok(History::Within(ns)),
            None => Err(format!("{}: the window is longer than 292 years", bad())),
        }
    }
}

impl fmt::Display for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            History::None => f.write_str("none"),
            History::All => f.write_str("all"),
            History::Commits(n) => write!(f, "{n}"),
            History::Within(ns) => {
                let secs = ns / 1_000_000_000;
                // Weeks are read but days are shown: "14d" says more than "2w".
                let (u, per) = (UNITS[1..].iter())
                    .find(|(_, per)| secs % per == 0)
                    .copied()
                    .unwrap_or(("s", 1));
                write!(f, "{}{u}", secs / per)
            }
        }
    }
}

/// The oldest commit `setting` keeps, given every commit known (LSNs and times, oldest
/// first): its position, or `None` when nothing is kept.
pub fn window_start(setting: History, commits: &[(u64, i64)]) -> Option<usize> {
    let newest = commits.last()?;
    match setting {
        History::None => None,
        History::All => Some(0),
        History::Commits(n) => Some(commits.len().saturating_sub(n as usize)),
        History::Within(ns) => {
            let from = newest.1.saturating_sub(ns);
            Some(commits.partition_point(|c| c.1 < from))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_and_print_back() {
        for (text, want) in [
            ("none", History::None),
            ("all", History::All),
            ("100", History::Commits(100)),
            ("7d", History::Within(7 * 86_400 * 1_000_000_000)),
            ("12h", History::Within(12 * 3_600 * 1_000_000_000)),
            ("90s", History::Within(90 * 1_000_000_000)),
            ("14d", History::Within(14 * 86_400 * 1_000_000_000)),
        ] {
            assert_eq!(text.parse::<History>(), Ok(want), "{text}");
            assert_eq!(want.to_string(), text);
        }
        assert_eq!("48h".parse::<History>().unwrap().to_string(), "2d");
        assert_eq!("2w".parse::<History>().unwrap().to_string(), "14d");
        for bad in ["", "0", "0d", "x", "7y", "-1d", "d", "1.5d"] {
            assert!(bad.parse::<History>().is_err(), "{bad}");
        }
    }

    #[test]
    fn windows_count_commits_or_time_back_from_the_newest() {
        let c: Vec<(u64, i64)> = (0..10).map(|i| (i * 5 + 5, i as i64 * 100)).collect();
        assert_eq!(window_start(History::All, &c), Some(0));
        assert_eq!(window_start(History::None, &c), None);
        assert_eq!(window_start(History::Commits(3), &c), Some(7));
        assert_eq!(window_start(History::Commits(30), &c), Some(0));
        assert_eq!(window_start(History::Within(250), &c), Some(7));
        assert_eq!(window_start(History::Within(300), &c), Some(6));
        assert_eq!(window_start(History::All, &[]), None);
    }
}
