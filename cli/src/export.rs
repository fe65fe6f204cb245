//! `evograph export`: every edge as `src dst` in external ids, sorted.

use evograph::GraphView;
use rayon::prelude::*;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Print every edge as `src dst` (external ids; `src dst weight` in weighted stores),
/// sorted; undirected edges once, smaller id first.
#[derive(clap::Args)]
pub struct Args {
    /// Store directory.
    store: PathBuf,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let g = crate::open_existing(&a.store, true)?;
    let s = g.snapshot()?;
    let undirected = s.is_undirected();
    let ext = s.external_ids();
    let weighted = s.is_weighted();
    let mut edges: Vec<(u64, u64, f64)> = (0..s.num_vertices() as evograph::VertexId)
        .into_par_iter()
        .fold(Vec::new, |mut acc, v| {
            s.for_each_out_weighted(v, |w, wt| {
                let (x, y) = (ext[v as usize], ext[w as usize]);
                if !undirected || x <= y {
                    acc.push((x, y, wt));
                }
            });
            acc
        })
        .flatten()
        .collect();
    edges.par_sort_unstable_by_key(|e| (e.0, e.1));
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let res = (|| {
        for (x, y, w) in edges {
            if weighted {
                writeln!(out, "{x} {y} {w}")?;
            } else {
                writeln!(out, "{x} {y}")?;
            }
        }
        out.flush()
    })();
    match res {
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(evograph::Error::io("write", "stdout", e)),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}
