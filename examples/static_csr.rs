//! Baseline for ingest figures: build a static out+in CSR in memory from the same binary
//! edge list (u32 pairs), as GAPBS's builder does, and print the seconds it took.
//! Usage: cargo run --release --example static_csr -- FILE.bin

use evograph::snapshot::Csr;
use evograph::VertexId;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: static_csr FILE.bin");
    let bytes = std::fs::read(&path).expect("read the edge list");
    let edges: Vec<(VertexId, VertexId)> = bytes
        .chunks_exact(8)
        .map(|c| {
            (
                u32::from_le_bytes(c[0..4].try_into().unwrap()) as VertexId,
                u32::from_le_bytes(c[4..8].try_into().unwrap()) as VertexId,
            )
        })
        .collect();
    let n = edges
        .iter()
        .map(|&(s, d)| s.max(d))
        .max()
        .map_or(0, |m| m as usize + 1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let t = Instant::now();
    let csr = pool.install(|| Csr::from_edges(n, &edges, false));
    let secs = t.elapsed().as_secs_f64();
    std::hint::black_box(&csr);
    println!(
        "{secs:.3} s ({:.2} M edges/s, 2 threads)",
        edges.len() as f64 / secs / 1e6
    );
}
