//! LDBC Graphalytics validation: for every graph in `../shared/data/graphalytics` (required
//! when CI=true), ingest it with the CLI, run each kernel that has a reference output
//! `<g>-<ALGO>` with the graph's parameters, write `<external id> <value>` lines for every
//! vertex, and have the official rules (`check.py`) accept them. The Pregel programs that
//! compute a Graphalytics kernel are checked against the same references.

mod common;

use common::graphalytics;
use evograph::algo::graphalytics as ga;
use evograph::io::{read_properties, LdbcProperties};
use evograph::pregel::{self, programs, Program};
use evograph::VertexId;
use evograph::{Graph, GraphView, Options, Snapshot};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The kernels this test runs, each with the suffix of the reference file it must match.
const KERNELS: [(&str, &str); 10] = [
    ("BFS", "BFS"),
    ("PR", "PR"),
    ("WCC", "WCC"),
    ("CDLP", "CDLP"),
    ("LCC", "LCC"),
    ("SSSP", "SSSP"),
    ("pregel-BFS", "BFS"),
    ("pregel-PR", "PR"),
    ("pregel-WCC", "WCC"),
    ("pregel-SSSP", "SSSP"),
];

/// Checks the 24 reference outputs shipped with the 14 validation graphs (SPEC.md §5) make:
/// each once for the hand-written kernel, and BFS, PR, WCC and SSSP's 16 again for Pregel,
/// on a plain and on a compressed store.
const SHIPPED_CHECKS: usize = 2 * (24 + 16);

/// How a graph's store is built: each kernel is checked on both.
#[derive(Clone, Copy, Debug)]
enum Leg {
    /// `evograph ingest`: plain runs.
    Plain,
    /// `evograph ingest --compress` then `evograph compact`: one compressed run, which the
    /// kernels read through the packed view, decoding lists inside their scans.
    Compressed,
}

/// Runs `evograph ARGS`, failing the test with its stderr if it fails.
fn evograph(args: &[&std::ffi::OsStr]) {
    let out = Command::new(env!("CARGO_BIN_EXE_evograph"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "evograph {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds a store from `<g>.properties` through `evograph ingest` as `leg` says, and opens
/// it.
fn ingest(props: &Path, store: &Path, leg: Leg) -> Graph {
    let mut args = vec![
        "ingest".as_ref(),
        store.as_os_str(),
        props.as_os_str(),
        "--format".as_ref(),
        "ldbc".as_ref(),
    ];
    if let Leg::Compressed = leg {
        args.push("--compress".as_ref());
    }
    evograph(&args);
    if let Leg::Compressed = leg {
        evograph(&["compact".as_ref(), store.as_os_str()]);
    }
    Graph::open(store, Options::new().create(false)).unwrap()
}

/// Runs a vertex program to completion on `s` and returns its values.
fn pregel_values<P: Program>(s: &Snapshot, program: &P) -> Vec<P::Value> {
    let out = pregel::run_snapshot(s, program, &pregel::Config::default()).unwrap();
    assert!(out.halted(), "{:?}", out.stop);
    out.values
}

/// One output value per dense id, formatted as the validator expects.
///
/// Runs `kernel` as `evograph run` does: on the fastest view of `s` (the flat or packed
/// view of a compacted store).
fn run_kernel(kernel: &str, p: &LdbcProperties, graph: &Graph, s: &Snapshot) -> Vec<String> {
    let name = &p.name;
    let source = |ext: Option<u64>, what: &str| {
        let ext = ext.unwrap_or_else(|| panic!("{name}: no {what}.source-vertex"));
        graph
            .dense_id(ext)
            .unwrap()
            .unwrap_or_else(|| panic!("{name}: {what} source {ext} not in the store"))
    };
    match kernel {
        "BFS" => {
            let src = source(p.bfs_source, "bfs");
            evograph::with_view!(s, |g| ga::bfs(g, src))
                .into_iter()
                .map(ga::format_i64)
                .collect()
        }
        "SSSP" => {
            let src = source(p.sssp_source, "sssp");
            assert!(
                s.is_weighted(),
                "{name}: a weighted input made an unweighted store"
            );
            evograph::with_view!(s, |g| ga::sssp(g, src, 1.0))
                .into_iter()
                .map(ga::format_f64)
                .collect()
        }
        "PR" => {
            let d = p
                .pr_damping
                .unwrap_or_else(|| panic!("{name}: no pr.damping-factor"));
            let it = p
                .pr_iterations
                .unwrap_or_else(|| panic!("{name}: no pr.num-iterations"));
            evograph::with_view!(s, |g| ga::pagerank(g, d, it))
                .into_iter()
                .map(ga::format_f64)
                .collect()
        }
        // Print each component as its representative's external id (the smallest, as in the
        // reference files, since dense ids follow the ascending `.v` order here).
        "WCC" => evograph::with_view!(s, |g| ga::wcc(g))
            .into_iter()
            .map(|l| s.external_id(l as VertexId).to_string())
            .collect(),
        "CDLP" => {
            let it = p
                .cdlp_iterations
                .unwrap_or_else(|| panic!("{name}: no cdlp.max-iterations"));
            evograph::with_view!(s, |g| ga::cdlp(g, it, s.external_ids()))
                .into_iter()
                .map(|l| l.to_string())
                .collect()
        }
        "LCC" => evograph::with_view!(s, |g| ga::lcc(g))
            .into_iter()
            .map(ga::format_f64)
            .collect(),
        "pregel-BFS" => {
            let source = source(p.bfs_source, "bfs");
            pregel_values(s, &programs::Bfs { source })
                .into_iter()
                .map(ga::format_i64)
                .collect()
        }
        "pregel-SSSP" => {
            let source = source(p.sssp_source, "sssp");
            pregel_values(s, &programs::Sssp { source })
                .into_iter()
                .map(ga::format_f64)
                .collect()
        }
        "pregel-PR" => {
            let program = programs::PageRank {
                damping: p.pr_damping.unwrap(),
                iterations: p.pr_iterations.unwrap(),
            };
            pregel_values(s, &program)
                .into_iter()
                .map(ga::format_f64)
                .collect()
        }
        "pregel-WCC" => pregel_values(s, &programs::Components)
            .into_iter()
            .map(|l| s.external_id(l).to_string())
            .collect(),
        _ => unreachable!("{kernel}"),
    }
}

/// Writes `<external id> <value>` for every existing vertex.
fn write_output(path: &Path, s: &Snapshot, values: &[String]) {
    assert_eq!(values.len(), s.num_vertices());
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for (v, val) in values.iter().enumerate() {
        if s.vertex_exists(v as VertexId) {
            writeln!(out, "{} {val}", s.external_id(v as VertexId)).unwrap();
        }
    }
    out.flush().unwrap();
}

#[test]
fn kernels_pass_graphalytics_validation() {
    let Some(root) = graphalytics() else { return };
    let check_py = root.join("check.py");
    let mut graphs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    graphs.sort();
    assert!(graphs.len() >= 14, "expected the 14 validation graphs");

    let (mut expected, mut ran) = (0, 0);
    let mut failures = Vec::new();
    for g in &graphs {
        let name = g.file_name().unwrap().to_str().unwrap();
        let reference = |algo: &str| Some(g.join(format!("{name}-{algo}"))).filter(|r| r.exists());
        let todo: Vec<(&str, &str, PathBuf)> = KERNELS
            .iter()
            .filter_map(|&(k, a)| reference(a).map(|r| (k, a, r)))
            .collect();
        if todo.is_empty() {
            continue;
        }
        let props = read_properties(&g.join(format!("{name}.properties"))).unwrap();
        for leg in [Leg::Plain, Leg::Compressed] {
            expected += todo.len();
            let dir = tempfile::tempdir().unwrap();
            let graph = ingest(
                &g.join(format!("{name}.properties")),
                &dir.path().join("store"),
                leg,
            );
            let snap = graph.snapshot().unwrap();
            assert_eq!(
                snap.is_undirected(),
                !props.directed,
                "{name}: directedness"
            );
            if let Leg::Compressed = leg {
                assert!(
                    snap.packed_flat().is_some() || snap.num_edges() == 0,
                    "{name}: the compacted compressed store is read through the packed view"
                );
            }
            for (kernel, algo, reference) in &todo {
                let values = run_kernel(kernel, &props, &graph, &snap);
                let candidate = dir.path().join(format!("{name}-{kernel}.out"));
                write_output(&candidate, &snap, &values);
                let out = Command::new("python3")
                    .arg(&check_py)
                    .arg(algo)
                    .arg(reference)
                    .arg(&candidate)
                    .output()
                    .expect("python3 runs check.py");
                ran += 1;
                let report = String::from_utf8_lossy(&out.stdout).trim().to_string();
                if out.status.success() {
                    eprintln!("{name} {kernel} ({leg:?}): {report}");
                } else {
                    failures.push(format!(
                        "{name} {kernel} ({leg:?}): check.py exited {:?}\n{report}\n{}",
                        out.status.code(),
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
            }
            drop(snap);
            graph.close().unwrap();
        }
    }
    eprintln!("graphalytics: {ran} checks run");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(ran, expected, "every reference is checked");
    assert!(
        ran >= SHIPPED_CHECKS,
        "only {ran} checks ran; the shipped graphs have {SHIPPED_CHECKS} references"
    );
}
