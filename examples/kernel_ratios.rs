//! Kernel time on the live store against a plain CSR built in the same process from the
//! same edges: after full compaction, and with the last 10% of edges unflushed.
//! Usage: cargo run --release --example kernel_ratios -- FILE.bin [threads]
//! Prints the median of 3 runs of each kernel and the ratios (LCC only with EVOGRAPH_LCC=1).
//! The Kronecker graph is unweighted, so SSSP runs with every weight 1.

use evograph::algo::{gap, graphalytics as ga};
use evograph::snapshot::Csr;
use evograph::{Durability, Graph, GraphView, Options, Record};
use std::time::Instant;

fn median<F: FnMut()>(what: &str, mut f: F) -> f64 {
    if let Ok(only) = std::env::var("EVOGRAPH_KERNELS") {
        if !only.split(',').any(|k| what.starts_with(k)) {
            return f64::NAN;
        }
    }
    let mut t: Vec<f64> = (0..3)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    eprintln!("  {what}: {:.4} s", t[1]);
    t[1]
}

fn kernels<G: GraphView>(g: &G, src: u32) -> Vec<(&'static str, f64)> {
    let bc_src: Vec<u32> = (0..4)
        .map(|i| (src + i * 7919) % g.num_vertices() as u32)
        .collect();
    let mut v = vec![
        ("gap-bfs", median("gap-bfs", || drop(gap::bfs::bfs(g, src)))),
        (
            "gap-pr(20)",
            median("gap-pr", || drop(gap::pr::pagerank(g, 0.85, 0.0, 20))),
        ),
        ("gap-cc", median("gap-cc", || drop(gap::cc::afforest(g)))),
        (
            "bc(4)",
            median("bc(4)", || drop(gap::bc::brandes(g, &bc_src))),
        ),
        (
            "tc",
            median("tc", || {
                std::hint::black_box(gap::tc::ordered_count(g));
            }),
        ),
        (
            "gap-sssp",
            median("gap-sssp", || drop(gap::sssp::delta_stepping(g, src, 1.0))),
        ),
        ("bfs", median("bfs", || drop(ga::bfs(g, src)))),
        (
            "pr(20)",
            median("pr(20)", || drop(ga::pagerank(g, 0.85, 20))),
        ),
        ("wcc", median("wcc", || drop(ga::wcc(g)))),
        ("sssp", median("sssp", || drop(ga::sssp(g, src, 1.0)))),
        (
            "cdlp(10)",
            median("cdlp", || {
                drop(ga::cdlp(g, 10, &vec![0u64; g.num_vertices()]))
            }),
        ),
    ];
    // LCC is quadratic in hub degrees: minutes on a Kronecker graph, so opt in.
    if std::env::var("EVOGRAPH_LCC").is_ok() {
        v.push(("lcc", median("lcc", || drop(ga::lcc(g)))));
    }
    v
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: kernel_ratios FILE.bin [threads]");
    let threads: usize = args.next().map_or(2, |t| t.parse().unwrap());
    let bytes = std::fs::read(&path).unwrap();
    let edges: Vec<(u32, u32)> = bytes
        .chunks_exact(8)
        .map(|c| {
            (
                u32::from_le_bytes(c[0..4].try_into().unwrap()),
                u32::from_le_bytes(c[4..8].try_into().unwrap()),
            )
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let g = Graph::in_memory(Options {
        durability: Durability::None,
        threads,
        ..Default::default()
    })
    .unwrap();
    let cut = edges.len() * 9 / 10;
    for chunk in edges[..cut].chunks(1 << 16) {
        let recs: Vec<Record> = chunk
            .iter()
            .map(|&(s, d)| Record::Insert(s as u64, d as u64))
            .collect();
        g.apply(&recs).unwrap();
    }
    g.compact().unwrap();
    for chunk in edges[cut..].chunks(1 << 16) {
        let recs: Vec<Record> = chunk
            .iter()
            .map(|&(s, d)| Record::Insert(s as u64, d as u64))
            .collect();
        g.apply(&recs).unwrap();
    }
    let live = g.snapshot().unwrap();
    // The CSR gets the same dense ids as the store, so sources match.
    let mut es = Vec::with_capacity(edges.len());
    for v in 0..live.num_vertices() as u32 {
        live.for_each_out(v, |w| es.push((v, w)));
    }
    let csr = pool.install(|| Csr::from_edges(live.num_vertices(), &es, false));
    let src = (0..live.num_vertices() as u32)
        .max_by_key(|&v| live.out_degree(v))
        .unwrap();
    println!(
        "{} vertices, {} edges; live snapshot has {} runs",
        live.num_vertices(),
        live.num_edges(),
        live.runs().len()
    );
    for r in live.runs() {
        eprintln!(
            "run: out dense {} idx {} adds {}; in dense {:?}",
            r.out.dense,
            r.out.n_index(),
            r.out.n_adds(),
            r.inn.as_ref().map(|d| (d.dense, d.n_index()))
        );
    }
    let t_live = pool.install(|| evograph::with_view!(&live, |v| kernels(v, src)));
    drop(live);
    g.compact().unwrap();
    let comp = g.snapshot().unwrap();
    let t_comp = pool.install(|| evograph::with_view!(&comp, |v| kernels(v, src)));
    let t_csr = pool.install(|| kernels(&csr, src));
    println!(
        "{:<12} {:>10} {:>10} {:>10} {:>8} {:>8}",
        "kernel", "csr s", "compact s", "live s", "comp/csr", "live/csr"
    );
    for i in 0..t_csr.len() {
        let (k, c) = t_csr[i];
        println!(
            "{k:<12} {c:>10.4} {:>10.4} {:>10.4} {:>8.2} {:>8.2}",
            t_comp[i].1,
            t_live[i].1,
            t_comp[i].1 / c,
            t_live[i].1 / c
        );
    }
}
