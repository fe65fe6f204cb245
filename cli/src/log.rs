//! `evograph log`: the commits in the history a store keeps.

use std::path::PathBuf;
use std::process::ExitCode;

/// List the commits in the history kept (LSN, time, records), and what it costs. A commit's
/// records are those its batch submitted, which its LSN counts (one each, whatever they
/// changed): a commit's LSN is the one before it plus its records.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    /// Only commits at or after this point (an LSN, @SECONDS or RFC 3339).
    #[arg(long, value_parser = crate::args::point)]
    since: Option<evograph::store::Point>,
    /// Only commits at or before this point.
    #[arg(long, value_parser = crate::args::point)]
    until: Option<evograph::store::Point>,
    /// Print one JSON object: `{"commits": [{"lsn", "time", "records"}], "history", ...}`.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    use evograph::store::Point;
    let g = crate::open_reader(&a.store, evograph::LogReach::Durable)?;
    let log = g.log()?;
    let keep = |c: &evograph::store::CommitPoint| {
        let after = |p: &Point| match *p {
            Point::Lsn(k) => c.lsn >= k,
            Point::Time(t) => c.unix_nanos >= t,
        };
        let before = |p: &Point| match *p {
            Point::Lsn(k) => c.lsn <= k,
            Point::Time(t) => c.unix_nanos <= t,
        };
        a.since.as_ref().is_none_or(after) && a.until.as_ref().is_none_or(before)
    };
    let shown: Vec<_> = log.commits.iter().filter(|(c, _)| keep(c)).collect();
    if a.json {
        let commits: Vec<serde_json::Value> = (shown.iter())
            .map(|(c, n)| {
                serde_json::json!({
                    "lsn": c.lsn,
                    "time": evograph::time::show(c.unix_nanos),
                    "unix_nanos": c.unix_nanos,
                    "records": n,
                })
            })
            .collect();
        let window = log.commits.first().zip(log.commits.last()).map(|((a, _), (b, _))| {
            serde_json::json!({"from_lsn": a.lsn, "to_lsn": b.lsn,
                "from": evograph::time::show(a.unix_nanos), "to": evograph::time::show(b.unix_nanos)})
        });
        let out = serde_json::json!({
            "history": log.setting.to_string(),
            "window": window,
            "commits": commits,
            "segments": log.segments,
            "segment_bytes": log.segment_bytes,
        });
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "# history {}: {} commits kept, {} segments, {} bytes",
        log.setting,
        log.commits.len(),
        log.segments,
        log.segment_bytes
    );
    for (c, n) in shown {
        println!("{}\t{}\t{n}", c.lsn, evograph::time::show(c.unix_nanos));
    }
    Ok(ExitCode::SUCCESS)
}
