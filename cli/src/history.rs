//! `evograph history`: when one edge or vertex lived, within the history a store keeps.

use evograph::store::LifeOp;
use evograph::store::Lifetime;
use std::path::PathBuf;
use std::process::ExitCode;

/// List the commits that added and removed an edge or a vertex, within the history kept,
/// oldest first, and whether it existed before the oldest commit kept. Reads the history's
/// change lists, not a past graph: its cost grows with the history kept, not with the
/// graph. A weight change is no event; a vertex delete removes its edges at that commit.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
    #[command(subcommand)]
    of: Of,
    /// Print one JSON object: `{"events": [{"lsn", "unix_nanos", "time", "op"}],
    /// "existed_before", "from"}`, `op` "add" or "remove".
    #[arg(long, global = true)]
    json: bool,
}

#[derive(clap::Subcommand)]
enum Of {
    /// An edge, by its two vertex keys (either order in an undirected store).
    Edge {
        /// Source vertex.
        src: String,
        /// Destination vertex.
        dst: String,
    },
    /// A vertex, by its key.
    Vertex {
        /// The vertex.
        v: String,
    },
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let g = crate::open_reader(&a.store, evograph::LogReach::Durable)?;
    let id = |k: &str| g.dense_id_of(k);
    let (what, life) = match &a.of {
        Of::Edge { src, dst } => (
            format!("edge {src} {dst}"),
            match (id(src)?, id(dst)?) {
                (Some(u), Some(v)) => Some(g.edge_history(u, v)?),
                _ => None,
            },
        ),
        Of::Vertex { v } => (
            format!("vertex {v}"),
            id(v)?.map(|x| g.vertex_history(x)).transpose()?,
        ),
    };
    // A key the store never saw: it never lived (said from the log, which also says
    // whether any history is kept).
    let life = match life {
        Some(l) => l,
        None => never_lived(&g)?,
    };
    if a.json {
        println!("{}", as_json(&life));
    } else {
        print_text(&what, &life);
    }
    Ok(ExitCode::SUCCESS)
}

/// The lifetime of something the store never held: no event in the window kept.
fn never_lived(g: &evograph::Graph) -> evograph::Result<Lifetime> {
    let log = g.log()?;
    let first = log.commits.first().map(|(c, _)| *c);
    let from = first.ok_or_else(|| {
        evograph::Error::Invalid(format!(
            "the store keeps no history (history: {}): `ingest --history all` keeps it",
            log.setting
        ))
    })?;
    Ok(Lifetime {
        from,
        existed_before: false,
        events: Vec::new(),
    })
}

fn op_name(op: LifeOp) -> &'static str {
    match op {
        LifeOp::Add => "add",
        LifeOp::Remove => "remove",
    }
}

fn as_json(l: &Lifetime) -> serde_json::Value {
    let events: Vec<serde_json::Value> = (l.events.iter())
        .map(|e| {
            serde_json::json!({
                "lsn": e.commit.lsn,
                "unix_nanos": e.commit.unix_nanos,
                "time": evograph::time::show(e.commit.unix_nanos),
                "op": op_name(e.op),
            })
        })
        .collect();
    serde_json::json!({
        "events": events,
        "existed_before": l.existed_before,
        "from": {"lsn": l.from.lsn, "unix_nanos": l.from.unix_nanos,
            "time": evograph::time::show(l.from.unix_nanos)},
    })
}

fn print_text(what: &str, l: &Lifetime) {
    let before = if l.existed_before {
        "existed"
    } else {
        "did not exist"
    };
    println!(
        "# {what}: {} event(s); it {before} before commit {} ({}), the oldest kept",
        l.events.len(),
        l.from.lsn,
        evograph::time::show(l.from.unix_nanos)
    );
    for e in &l.events {
        println!(
            "{}\t{}\t{}",
            e.commit.lsn,
            evograph::time::show(e.commit.unix_nanos),
            op_name(e.op)
        );
    }
}
