//! Value parsers for numeric flags: every number is range-checked, and a bad one gets a
//! message naming the range (clap's own integer parsers say "invalid digit" for `-1`).
//! Flags using them also set `allow_negative_numbers`, so that `-1` reaches the parser
//! instead of being taken for a flag.

/// A whole number in `lo..=hi`.
pub fn int<T>(lo: u64, hi: u64) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: TryFrom<u64>,
{
    move |s: &str| {
        let range = format!("{lo}..={hi}");
        match s.trim().parse::<u64>() {
            Ok(v) if (lo..=hi).contains(&v) => {
                T::try_from(v).map_err(|_| format!("{s} does not fit ({range})"))
            }
            Ok(_) => Err(format!("{s} is not in {range}")),
            Err(_) if s.trim().parse::<i128>().is_ok() => Err(format!("{s} is not in {range}")),
            Err(_) => Err(format!("'{s}' is not a whole number (want {range})")),
        }
    }
}

/// A number whose range the library checks: `limit` is one of
/// `evograph::algo::kernel::limits`, so the command line and Python refuse the same values.
pub fn real(
    limit: fn(f64) -> Result<f64, String>,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |s: &str| match s.trim().parse::<f64>() {
        Ok(x) => limit(x).map_err(|why| format!("{s} {why}")),
        Err(_) => Err(format!("'{s}' is not a number")),
    }
}

/// A whole number whose range the library checks (see [`real`]).
pub fn whole<T>(
    limit: fn(i128) -> Result<T, String>,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync {
    move |s: &str| match s.trim().parse::<i128>() {
        Ok(n) => limit(n).map_err(|why| format!("{s} {why}")),
        Err(_) => Err(format!("'{s}' is not a whole number")),
    }
}

/// A byte count: a whole number with an optional binary suffix `K`, `M`, `G` or `T`
/// (`1200M`, `2G`), at least 1 MiB.
pub fn bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("'{s}': the suffix must be K, M, G or T")),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a byte count (such as 1200M or 2G)"))?;
    let b = n
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{s} is too large"))?;
    if b < 1 << 20 {
        return Err(format!("{s} is below 1 MiB"));
    }
    Ok(b)
}

/// A point in history as `--at`, `--from` and `--to` take it (see `Point`'s `FromStr`).
pub fn point(s: &str) -> Result<evograph::store::Point, String> {
    s.parse()
}

/// A window of history as `--window` takes it: `A..B`, two points as `--at` takes them.
pub fn window(s: &str) -> Result<(evograph::store::Point, evograph::store::Point), String> {
    let (a, b) = s.split_once("..").ok_or_else(|| {
        format!("'{s}' is not a window: give START..END (two points as --at takes them)")
    })?;
    Ok((point(a)?, point(b)?))
}

/// How far a reading command reads the log of a writer running beside it.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct Reach {
    /// Also read the batches a writer running beside this command has written but not
    /// made durable yet (under sync durability, not yet acknowledged): newer, but a power
    /// cut may still take them back. With no writer running, every batch in the log is
    /// read either way
    #[arg(long)]
    pub unacknowledged: bool,
}

impl Reach {
    /// The library's setting.
    pub fn log_reach(self) -> evograph::LogReach {
        match self.unacknowledged {
            true => evograph::LogReach::Written,
            false => evograph::LogReach::Durable,
        }
    }
}

/// Which graph a reading command reads: the latest, the one as of a commit, or a window.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct When {
    /// The graph as of this commit (an LSN, @SECONDS or RFC 3339: the last commit at or
    /// before it), if the store keeps that history.
    #[arg(long, value_parser = point, conflicts_with = "window")]
    pub at: Option<evograph::store::Point>,
    /// The graph over a window START..END: every edge and vertex present as of START (as
    /// --at reads it) or after any later commit before END (a time: commits timed before
    /// it; an LSN: commits below it); commits of one time count once, as the state after
    /// the last of them.
    #[arg(long, value_parser = window, value_name = "START..END")]
    pub window: Option<(evograph::store::Point, evograph::store::Point)>,
}

/// The graph `when` names, saying on stderr, once the command succeeds, which commits.
pub fn snapshot_of(g: &evograph::Graph, when: When) -> evograph::Result<evograph::Snapshot> {
    let Some((a, b)) = when.window else {
        return snapshot_at(g, when.at);
    };
    let (s, span) = g.snapshot_window(a, b)?;
    let show = |c: evograph::store::CommitPoint| {
        format!("LSN {} ({})", c.lsn, evograph::time::show(c.unix_nanos))
    };
    note_on_success(format!(
        "window from commit {} through commit {}: {} moment(s) after its start",
        show(span.start),
        show(span.last),
        span.moments
    ));
    Ok(s)
}

/// Notes said on stderr once the command has succeeded (a failure says one line, its
/// error, and nothing before it).
static NOTES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Says `note` on stderr when the command succeeds.
pub fn note_on_success(note: String) {
    NOTES.lock().unwrap_or_else(|e| e.into_inner()).push(note);
}

/// The notes kept for a command that succeeded.
pub fn take_notes() -> Vec<String> {
    std::mem::take(&mut *NOTES.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The graph `at` names (the latest one when `None`), saying on stderr, once the command
/// succeeds, which commit it is and, when the point fell between commits, that it is the
/// last one before it.
pub fn snapshot_at(
    g: &evograph::Graph,
    at: Option<evograph::store::Point>,
) -> evograph::Result<evograph::Snapshot> {
    let Some(p) = at else {
        return g.snapshot();
    };
    let (s, c) = g.snapshot_at(p)?;
    note_on_success(describe(p, c));
    Ok(s)
}

/// The size of the graph `when` names (counted without building it where the store can:
/// `Graph::size_at`), saying on stderr, once the command succeeds, which commits.
pub fn size_of(g: &evograph::Graph, when: When) -> evograph::Result<evograph::store::GraphSize> {
    match when.at {
        Some(p) if when.window.is_none() => {
            let (size, c) = g.size_at(p)?;
            note_on_success(describe(p, c));
            Ok(size)
        }
        _ if when.window.is_none() => g.size(),
        _ => snapshot_of(g, when).map(|s| evograph::store::GraphSize::of(&s)),
    }
}

/// "as of commit LSN L (time)", and what the point named when it fell between commits.
pub fn describe(p: evograph::store::Point, c: evograph::store::CommitPoint) -> String {
    use evograph::store::Point;
    let at = format!(
        "as of commit LSN {} ({})",
        c.lsn,
        evograph::time::show(c.unix_nanos)
    );
    match p {
        Point::Lsn(k) if k != c.lsn => format!("{at}: the last commit at or before LSN {k}"),
        Point::Time(t) if t != c.unix_nanos => format!(
            "{at}: the last commit at or before {}",
            evograph::time::show(t)
        ),
        _ => at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_take_binary_suffixes() {
        assert_eq!(bytes("1200M"), Ok(1200 << 20));
        assert_eq!(bytes("2g"), Ok(2 << 30));
        assert_eq!(bytes("1048576"), Ok(1 << 20));
        for bad in ["", "12X", "-1G", "1.5G", "1000", "99999999999T"] {
            assert!(bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ranges_are_checked_with_clear_messages() {
        let p = int::<usize>(1, 10);
        assert_eq!(p("3"), Ok(3));
        assert!(p("0").unwrap_err().contains("not in 1..=10"));
        assert!(p("-1").unwrap_err().contains("not in 1..=10"));
        assert!(p("1e3").unwrap_err().contains("not a whole number"));
        assert!(p("99999999999999999999999").unwrap_err().contains("not"));
        use evograph::algo::kernel::limits;
        let damping = real(limits::damping);
        assert_eq!(damping("0.85"), Ok(0.85));
        for bad in ["1", "1.5", "-1", "nan", "inf", "x"] {
            assert!(damping(bad).is_err(), "{bad}");
        }
        let tolerance = real(limits::tolerance);
        assert_eq!(
            tolerance("0"),
            Ok(0.0),
            "0 runs every sweep, as GAPBS's -t 0"
        );
        for bad in ["-1e-9", "nan", "inf", "x"] {
            assert!(tolerance(bad).is_err(), "{bad}");
        }
        let delta = real(limits::delta);
        assert_eq!(delta("0.5"), Ok(0.5));
        for bad in ["0", "-2", "nan", "inf", "x"] {
            assert!(delta(bad).is_err(), "{bad}");
        }
        let iterations = whole(limits::iterations);
        assert_eq!(iterations("20"), Ok(20));
        assert!(iterations("-1").unwrap_err().contains("not in 1..=1000000"));
        for bad in [
            "0",
            "-1",
            "1000001",
            "999999999999999999999999999999999999999999",
            "2.5",
        ] {
            assert!(iterations(bad).is_err(), "{bad}");
        }
    }
}

/// When a writer derives run versions (`--run-versions`), as [`evograph::RunVersions`].
#[derive(Clone, Copy, Default, clap::ValueEnum)]
pub enum RunVersions {
    /// By `compact` only: ingest pays nothing for them.
    #[default]
    Compact,
    /// After every flush and merge as well: points are fast all along; each flush waits
    /// for its run's versions.
    Flush,
    /// Never: points are built from the runs and the history segments.
    Never,
}

impl From<RunVersions> for evograph::RunVersions {
    fn from(v: RunVersions) -> Self {
        match v {
            RunVersions::Compact => evograph::RunVersions::Compact,
            RunVersions::Flush => evograph::RunVersions::Flush,
            RunVersions::Never => evograph::RunVersions::Never,
        }
    }
}
