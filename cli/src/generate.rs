//! `evograph generate`: Graph500 Kronecker and uniform random edge lists.

use crate::progress;
use evograph::gen::{self, GenKind, GenSpec};
use evograph::io;
use std::path::PathBuf;
use std::process::ExitCode;

/// Generate a synthetic graph and write it as an edge list.
#[derive(clap::Args)]
pub struct Args {
    /// kron (Graph500 Kronecker, a=.57 b=.19 c=.19, vertex ids permuted) or urand (uniform).
    kind: GenKind,
    /// The graph has 2^scale vertices.
    #[arg(long, value_parser = crate::args::int::<u32>(1, 31), allow_negative_numbers = true)]
    scale: u32,
    /// Edges per vertex: the graph has 2^scale * edge-factor edges (duplicates included).
    #[arg(long, default_value_t = 16, value_parser = crate::args::int::<u32>(1, 1 << 16), allow_negative_numbers = true)]
    edge_factor: u32,
    /// Seed; the same seed gives the same file on any machine and thread count.
    #[arg(long, default_value_t = 1, value_parser = crate::args::int::<u64>(0, u64::MAX), allow_negative_numbers = true)]
    seed: u64,
    /// Shuffle the edge order (as the papers' insertion protocol does).
    #[arg(long)]
    shuffle: bool,
    /// Output file (an existing one is replaced once the new one is written whole; a path
    /// inside a store directory is refused).
    #[arg(short, long)]
    output: PathBuf,
    /// el (text `src dst` lines) or bin (u32 src, u32 dst little-endian). Default: from the
    /// extension (.bin is bin, anything else el).
    #[arg(long)]
    format: Option<OutFormat>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum OutFormat {
    El,
    Bin,
}

pub fn run(a: Args) -> evograph::Result<ExitCode> {
    let spec = GenSpec {
        kind: a.kind,
        scale: a.scale,
        edge_factor: a.edge_factor,
        seed: a.seed,
    };
    let format = a
        .format
        .unwrap_or(if a.output.extension().is_some_and(|e| e == "bin") {
            OutFormat::Bin
        } else {
            OutFormat::El
        });
    let target = crate::output::Guard::new().file(&a.output, "--output")?;
    let t = std::time::Instant::now();
    let pb = progress::spinner("generating");
    let mut edges = gen::generate(&spec)?;
    if a.shuffle {
        pb.set_message("shuffling");
        gen::shuffle(&mut edges, a.seed);
    }
    pb.set_message("writing");
    // An existing file is replaced only once the new one is whole.
    let mut out = crate::output::Replacement::create(target)?;
    let path = out.path().to_path_buf();
    match format {
        OutFormat::El => io::write_el_to(out.file_mut(), &path, &edges)?,
        OutFormat::Bin => io::write_bin_to(out.file_mut(), &path, &edges)?,
    }
    out.commit()?;
    pb.finish_and_clear();
    eprintln!(
        "wrote {} edges over 2^{} vertices to {} in {:.2} s",
        edges.len(),
        a.scale,
        a.output.display(),
        t.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
