//! The sweeping kernels on a compacted store whose in-lists are streamed from the file in
//! windows (`snapshot::stream`) give what they give read through the mapping.

use crate::algo::{gap, graphalytics};
use crate::run::Dir;
use crate::{Compression, Graph, GraphView, Options, Snapshot};

/// A store of `n` vertices, compacted into one file-backed run: pseudo-random edges, a hub
/// (vertex 3) that every fifth vertex points to, and a vertex (n - 1) with no in-edges.
fn compacted(dir: &std::path::Path, undirected: bool, packed: bool, n: u64) -> Graph {
    let opts = Options::new().undirected(Some(undirected)).threads(2);
    let opts = match packed {
        true => opts.compression(Some(Compression::Packed)),
        false => opts,
    };
    let g = Graph::create(dir, opts).unwrap();
    let mut x = 0x9e37_79b9_u64;
    let mut edges: Vec<(u64, u64)> = (0..6 * n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % (n - 1), (x >> 32) % (n - 1))
        })
        .collect();
    edges.extend((0..n).step_by(5).map(|v| (v, 3)));
    edges.push((n - 1, 0));
    g.insert_edges(&edges).unwrap();
    g.compact().unwrap();
    g
}

/// The snapshot streamed in windows of `w` ids: fails the test under `CI=true` if the
/// `k` prepares `want_view` (a copy of the lists) on `g`'s latest snapshot, and gives there
/// what it gives reading the runs in place (no copy budget), on one thread so that the
/// order of float sums is the same.
fn copy_reads_as_in_place(
    g: &Graph,
    k: crate::algo::kernel::Kernel,
    p: &crate::algo::kernel::Params,
    want_view: &str,
    what: &str,
) {
    use crate::algo::kernel;
    let auto = g.snapshot().unwrap();
    assert_eq!(kernel::prepare(&auto, k, p), want_view, "{what}");
    let none = g.snapshot().unwrap().with_copy_budget(Some(0));
    let run = |s: &Snapshot| one_thread(|| kernel::run(s, k, p).unwrap().values);
    assert_eq!(run(&auto), run(&none), "{what}");
}

/// file system took no direct reads, since then the direct path went untested.
fn streamed(g: &Graph, w: usize) -> Snapshot {
    let s = g.snapshot().unwrap();
    assert!(
        s.stream_in_windows(w),
        "a compacted file-backed run streams"
    );
    s
}

fn one_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build();
    pool.unwrap().install(f)
}

/// Both PageRanks on `view`: 7 Graphalytics iterations, and GAP's sweeps in one thread
/// (whose Gauss-Seidel order is then fixed).
fn pageranks<G: GraphView>(view: &G) -> (Vec<f64>, (Vec<f64>, u32)) {
    let pr = graphalytics::pr::pagerank(view, 0.85, 7);
    (pr, one_thread(|| gap::pr::pagerank(view, 0.85, 1e-9, 8)))
}

#[test]
fn pagerank_streamed_in_windows_equals_pagerank_mapped() {
    for (undirected, packed) in [(false, false), (true, false), (false, true), (true, true)] {
        let dir = tempfile::tempdir().unwrap();
        let g = compacted(dir.path(), undirected, packed, 300);
        let mapped = g.snapshot().unwrap();
        let want = match packed {
            false => pageranks(&mapped.flat().unwrap()),
            true => pageranks(&mapped.packed_flat().unwrap()),
        };
        let d = mapped.runs()[0].dir(Dir::In);
        let lists = match &d.packed {
            Some(p) => p.bytes.get().len(),
            None => std::mem::size_of_val(d.adds.get()),
        };
        // 9 bytes: most windows hold a few vertices, the hub's list one of its own.
        for w in [9, 256, 1 << 20] {
            let s = streamed(&g, w);
            let got = match packed {
                false => pageranks(&s.flat().unwrap()),
                true => pageranks(&s.packed_flat().unwrap()),
            };
            assert_eq!(
                got, want,
                "window {w}, undirected {undirected}, packed {packed}"
            );
            let st = s.sweep_stream().expect("streamed");
            assert!(
                st.bytes_read >= lists as u64 * (7 + u64::from(got.1 .1)),
                "{st:?}"
            );
            assert_eq!(st.fallbacks, 0);
            if std::env::var("CI").as_deref() == Ok("true") {
                assert!(st.direct, "the test's file system refused O_DIRECT reads");
            }
        }
    }
}

/// Through `kernel::run`, as the command line and Python call it: a snapshot asked to
/// stream names its view so, streams (compressed runs too), and gives `pr` what the
/// mapping gives; a kernel that does not sweep in-lists leaves the mapping alone.
#[test]
fn kernel_run_streams_what_the_snapshot_asks_for() {
    use crate::algo::kernel::{self, Kernel, Params};
    use crate::SweepReads;
    for packed in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let g = compacted(dir.path(), false, packed, 300);
        let p = Params::default();
        let mapped = g.snapshot().unwrap().with_sweep_reads(SweepReads::Mapped);
        let want = kernel::run(&mapped, Kernel::Pr, &p).unwrap().values;
        assert!(mapped.sweep_stream().is_none());
        let s = g.snapshot().unwrap().with_sweep_reads(SweepReads::Streamed);
        let name = kernel::prepare(&s, Kernel::Pr, &p);
        assert_eq!(
            name,
            if packed {
                "packed-streamed"
            } else {
                "flat-streamed"
            }
        );
        assert_eq!(kernel::run(&s, Kernel::Pr, &p).unwrap().values, want);
        assert!(s.sweep_stream().unwrap().bytes_read > 0);
        let other = g.snapshot().unwrap().with_sweep_reads(SweepReads::Streamed);
        assert!(!kernel::prepare(&other, Kernel::Wcc, &p).ends_with("streamed"));
        assert!(other.sweep_stream().is_none());
    }
}

/// A live store of several runs of `n` vertices, as flushes and merges leave it: edges
/// inserted over five flushes, some deleted (tombstones) and some re-inserted in later
/// runs, a vertex deleted, and the last two batches left in the memtable (a run in DRAM).
/// With `packed`, the file runs are compressed (the DRAM run is not).
fn live(dir: &std::path::Path, undirected: bool, packed: bool, n: u64) -> Graph {
    // Fanout 2 and partitions of 64 ids: merges write sparse partition runs.
    let opts = Options::new().undirected(Some(undirected)).threads(2);
    let opts = match packed {
        true => opts.compression(Some(Compression::Packed)),
        false => opts,
    };
    let mut g = Graph::create(dir, opts.fanout(2).partition_bits(6)).unwrap();
    let mut x = 0x2545_f491_u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n, (x >> 32) % n)
    };
    let mut all = Vec::new();
    for round in 0..7 {
        if round == 5 {
            // The last batches stay in the memtable of a writer that merges nothing more:
            // the snapshot's runs are those on the medium and one in DRAM.
            g.close().unwrap();
            g = Graph::open(dir, Options::new().background(false)).unwrap();
        }
        let edges: Vec<(u64, u64)> = (0..2 * n).map(|_| next()).collect();
        g.insert_edges(&edges).unwrap();
        if round > 0 {
            // Old edges out, some of them back: tombstones, and re-adds above them.
            let gone: Vec<(u64, u64)> = all.iter().copied().step_by(7).collect();
            g.delete_edges(&gone).unwrap();
            g.insert_edges(&gone[..gone.len() / 3]).unwrap();
        }
        if round == 2 {
            g.delete_vertex(5).unwrap();
        }
        all.extend(edges);
        if round < 5 {
            g.flush().unwrap();
        }
    }
    g
}

/// A live store's runs streamed window by window and merged give both PageRanks what the
/// snapshot gives read in place, for any window (one vertex's lists per window too), with
/// tombstones and a DRAM run among the runs, plain or compressed; through `kernel::run` the
/// view names itself. The snapshot's degrees, counted run by run, are those it gives vertex
/// by vertex.
#[test]
fn pagerank_on_streamed_runs_equals_pagerank_in_place() {
    use crate::algo::kernel::{self, Kernel, Params};
    use crate::SweepReads;
    for (undirected, packed) in [(false, false), (true, false), (false, true), (true, true)] {
        let dir = tempfile::tempdir().unwrap();
        let g = live(dir.path(), undirected, packed, 320);
        let mapped = g.snapshot().unwrap();
        let runs = mapped.runs();
        assert!(runs.len() > 2, "{} runs", runs.len());
        let compressed = runs.iter().filter(|r| r.dir(Dir::In).is_packed()).count();
        assert_eq!(compressed > 0, packed, "compressed file runs: {compressed}");
        assert!(
            runs.iter().any(|r| r.header.part_shift() > 0),
            "partition runs"
        );
        assert!(runs.iter().any(|r| r.in_dram()), "a DRAM run");
        // Degrees counted run by run are those searched vertex by vertex.
        let one_by_one: Vec<usize> = (0..mapped.num_vertices())
            .map(|v| mapped.out_degree(v as crate::VertexId))
            .collect();
        assert_eq!(mapped.out_degrees(), one_by_one);
        let want = pageranks(&mapped);
        for w in [9, 4096, 1 << 20] {
            let s = g.snapshot().unwrap();
            assert!(s.stream_in_windows(w), "file-backed runs stream");
            let what = format!("window {w}, undirected {undirected}, packed {packed}");
            assert_eq!(pageranks(&s), want, "{what}");
            let st = s.sweep_stream().expect("streamed");
            assert!(st.bytes_read > 0 && st.fallbacks == 0, "{st:?} {what}");
            if std::env::var("CI").as_deref() == Ok("true") {
                assert!(st.direct, "the test's file system refused O_DIRECT reads");
            }
        }
        let p = Params::default();
        let s = g.snapshot().unwrap().with_sweep_reads(SweepReads::Streamed);
        assert_eq!(kernel::prepare(&s, Kernel::Pr, &p), "runs-streamed");
        let in_place = g.snapshot().unwrap().with_sweep_reads(SweepReads::Mapped);
        let want = kernel::run(&in_place, Kernel::Pr, &p).unwrap().values;
        assert_eq!(kernel::run(&s, Kernel::Pr, &p).unwrap().values, want);
        // In DRAM, runs that no layered view reads (compressed, or more than 64) are merged
        // from their mappings window by window and the merged windows kept; gap-pr (20
        // sweeps) copies a layered view's lists too. Lists are summed in the same order.
        let layered = !packed && runs.len() <= crate::snapshot::MAX_LAYERED_RUNS;
        for (k, want_view) in [
            (
                Kernel::Pr,
                if layered {
                    "layered"
                } else {
                    "runs-merged-copy"
                },
            ),
            (
                Kernel::GapPr,
                if layered {
                    "layered-copy"
                } else {
                    "runs-merged-copy"
                },
            ),
        ] {
            let auto = g.snapshot().unwrap();
            assert_eq!(kernel::prepare(&auto, k, &p), want_view);
            let run = |s: &Snapshot| one_thread(|| kernel::run(s, k, &p).unwrap().values);
            assert_eq!(run(&auto), run(&in_place), "{k:?} packed {packed}");
            assert!(
                auto.sweep_stream().is_none(),
                "nothing read from the medium"
            );
        }
        // SSSP and BC read out-lists in no order: a layered view copies them too, and
        // reads what the runs read in place (no budget, no copy) in the same order.
        let want_view = if layered { "layered-copy" } else { "runs-copy" };
        for k in [Kernel::GapSssp, Kernel::Bc] {
            copy_reads_as_in_place(&g, k, &p, want_view, &format!("{k:?} packed {packed}"));
        }
        // CDLP sweeping both directions 12 times copies them too.
        let p12 = Params {
            iterations: Some(kernel::SWEEPS_FOR_A_COPY),
            ..Params::default()
        };
        let what = format!("cdlp, packed {packed}");
        copy_reads_as_in_place(&g, Kernel::Cdlp, &p12, want_view, &what);
    }
}

/// A kernel sweeping several runs' lists streamed from the files keeps windows it merged
/// in the DRAM left (here the copy budget): PageRank's values are those read in place
/// whatever was kept, and the passes after the first read only the windows not kept,
/// nothing once all are, packed or as merged. One compacted run's stream keeps nothing.
#[test]
fn streamed_windows_kept_after_the_first_pass_give_the_same_pagerank() {
    use crate::algo::kernel::{self, Kernel, Params};
    use crate::SweepReads;
    let p = Params {
        iterations: Some(crate::algo::kernel::SWEEPS_FOR_A_COPY),
        ..Params::default()
    };
    for (one_run, packed) in [(true, false), (true, true), (false, false), (false, true)] {
        let dir = tempfile::tempdir().unwrap();
        let g = match one_run {
            true => compacted(dir.path(), false, packed, 320),
            false => live(dir.path(), false, packed, 320),
        };
        let in_place = g.snapshot().unwrap().with_sweep_reads(SweepReads::Mapped);
        let want = kernel::run(&in_place, Kernel::Pr, &p).unwrap().values;
        let view = match (one_run, packed) {
            (false, _) => "runs-streamed",
            (true, false) => "flat-streamed",
            (true, true) => "packed-streamed",
        };
        // Streamed in windows of 512 bytes, keeping at most `budget` bytes of them.
        let streamed = |budget: usize| {
            let s = (g.snapshot().unwrap())
                .with_sweep_reads(SweepReads::Streamed)
                .with_copy_budget(Some(budget));
            assert!(s.stream_in_windows(512), "file-backed runs stream");
            assert_eq!(kernel::prepare(&s, Kernel::Pr, &p), view);
            assert_eq!(kernel::run(&s, Kernel::Pr, &p).unwrap().values, want);
            s.sweep_stream().expect("streamed")
        };
        let none = streamed(0);
        let all = streamed(usize::MAX);
        if one_run {
            assert_eq!(all.kept, 0, "{view}: {all:?}");
            assert_eq!(all.bytes_read, none.bytes_read, "{view}");
            continue;
        }
        // An eighth keeps some windows (as merged: packed, they would not come near fitting).
        let some = streamed((all.kept / 8) as usize);
        // Four fifths of what all the windows take as merged holds them all once some are
        // packed: every pass after the first reads nothing, as when all fit as merged.
        let tight = streamed((all.kept * 4 / 5) as usize);
        let what = format!("{view}: none {none:?}, some {some:?}, tight {tight:?}, all {all:?}");
        assert_eq!(none.kept, 0, "{what}");
        assert!(0 < some.kept && some.kept < all.kept, "{what}");
        assert_eq!(all.kept_packed, 0, "all fit as merged: {what}");
        assert!(
            0 < tight.kept_packed && tight.kept_packed <= tight.kept,
            "{what}"
        );
        assert_eq!(tight.bytes_read, all.bytes_read, "{what}");
        // A pass reads none.bytes_read / passes; keeping all reads only the first pass.
        let passes = p.iterations.unwrap() as u64;
        assert_eq!(all.bytes_read * passes, none.bytes_read, "{what}");
        assert!(all.bytes_read < some.bytes_read, "{what}");
        assert!(some.bytes_read < none.bytes_read, "{what}");
    }
}

/// Afforest's phases are sweeps: over a live store's runs streamed window by window (out-
/// and in-lists, any window) or merged from their mappings, every vertex gets the label
/// the general path gives it.
#[test]
fn components_on_streamed_runs_equal_components_in_place() {
    use crate::algo::kernel::{self, Kernel, Params};
    use crate::SweepReads;
    let p = Params::default();
    for (undirected, packed) in [(false, false), (true, false), (false, true), (true, true)] {
        let dir = tempfile::tempdir().unwrap();
        let g = live(dir.path(), undirected, packed, 700);
        let what = format!("undirected {undirected}, packed {packed}");
        let mapped = g.snapshot().unwrap().with_sweep_reads(SweepReads::Mapped);
        // How many runs the background merges left depends on when they ran: a few plain
        // ones are read as a layered view, more through the general path.
        let view = match !packed && mapped.runs().len() <= crate::snapshot::MAX_LAYERED_RUNS {
            true => "layered",
            false => "runs",
        };
        assert_eq!(kernel::prepare(&mapped, Kernel::GapCc, &p), view, "{what}");
        let want = gap::cc::afforest(&mapped);
        for w in [9, 4096, 1 << 20] {
            let s = g.snapshot().unwrap();
            assert!(
                s.stream_out_in_windows(w) && s.stream_in_windows(w),
                "{what}"
            );
            assert_eq!(gap::cc::afforest(&s), want, "window {w}, {what}");
            let st = s.sweep_stream().expect("streamed");
            assert!(st.bytes_read > 0 && st.fallbacks == 0, "{st:?} {what}");
        }
        let want = |k| kernel::run(&mapped, k, &p).unwrap().values;
        let streamed = g.snapshot().unwrap().with_sweep_reads(SweepReads::Streamed);
        // In DRAM, Afforest merges runs from their mappings only past what a layered view
        // reads: it reads a few ids of most lists.
        let auto = g.snapshot().unwrap();
        let in_dram = match mapped.runs().len() > crate::snapshot::MAX_LAYERED_RUNS {
            true => "runs-merged",
            false if packed => "runs",
            false => "layered",
        };
        for (s, view) in [(&streamed, "runs-streamed"), (&auto, in_dram)] {
            for k in [Kernel::GapCc, Kernel::Wcc] {
                assert_eq!(kernel::prepare(s, k, &p), view, "{what}");
                let got = kernel::run(s, k, &p).unwrap().values;
                assert_eq!(got, want(k), "{k:?} {view}, {what}");
            }
        }
    }
}

/// BFS on a live store of several runs whose lists are streamed window by window (its
/// bottom-up steps over in-lists, its large top-down steps over out-lists) reaches every
/// vertex at the depth the general path gives, and GAPBS's verifier accepts its parents;
/// in DRAM it reads the runs in place.
#[test]
fn bfs_on_streamed_runs_equals_bfs_in_place() {
    use crate::algo::kernel::{self, Kernel, Params};
    use crate::SweepReads;
    for (undirected, packed) in [(false, false), (true, false), (false, true), (true, true)] {
        let dir = tempfile::tempdir().unwrap();
        let g = live(dir.path(), undirected, packed, 320);
        let what = format!("undirected {undirected}, packed {packed}");
        let mapped = g.snapshot().unwrap().with_sweep_reads(SweepReads::Mapped);
        let n = mapped.num_vertices() as crate::VertexId;
        let source = (0..n).find(|&v| mapped.out_degree(v) > 0).unwrap();
        let depths = |view: &Snapshot| gap::bfs::search(view, source, -1, |_, d| d);
        let want = depths(&mapped);
        assert!(
            want.iter().filter(|&&d| d > 2).count() > 10,
            "a deep search, {what}"
        );
        for w in [9, 4096, 1 << 20] {
            let s = g.snapshot().unwrap();
            assert!(
                s.stream_out_in_windows(w) && s.stream_in_windows(w),
                "{what}"
            );
            assert_eq!(depths(&s), want, "window {w}, {what}");
            let parents = gap::bfs::bfs(&s, source);
            assert_eq!(
                gap::bfs::verify(&mapped, source, &parents),
                Ok(()),
                "{what}"
            );
            let st = s.sweep_stream().expect("streamed");
            assert!(st.bytes_read > 0 && st.fallbacks == 0, "{st:?} {what}");
        }
        let p = Params {
            source: Some(source),
            verify: true,
            ..Params::default()
        };
        let want = kernel::run(&mapped, Kernel::Bfs, &p).unwrap().values;
        let streamed = g.snapshot().unwrap().with_sweep_reads(SweepReads::Streamed);
        let auto = g.snapshot().unwrap();
        // In DRAM, BFS never merges runs: its steps read a few ids of most lists.
        let in_dram = match packed || mapped.runs().len() > crate::snapshot::MAX_LAYERED_RUNS {
            true => "runs",
            false => "layered",
        };
        for (s, view) in [(&streamed, "runs-streamed"), (&auto, in_dram)] {
            assert_eq!(kernel::prepare(s, Kernel::GapBfs, &p), view, "{what}");
            // Streamed, its degrees are counted once, run by run.
            for v in 0..n {
                assert_eq!(s.out_degree(v), mapped.out_degree(v), "{v} {view}, {what}");
            }
            // gap-bfs's parents depend on the threads' order: its verifier checks them.
            let gap = kernel::run(s, Kernel::GapBfs, &p).unwrap();
            assert_eq!(gap.report["verified"], true, "{view}, {what}");
            let got = kernel::run(s, Kernel::Bfs, &p).unwrap().values;
            assert_eq!(got, want, "bfs {view}, {what}");
        }
    }
}

/// A store of more runs than a layered view reads, each with a sparse index long enough
/// for a directory: the kernels' lookups through them (built when a kernel prepares the
/// snapshot) find what searches of the whole indexes found, so BFS reaches every vertex
/// at the same depth and SSSP gives the same distances.
#[test]
fn kernels_on_many_runs_read_the_same_graph_through_directories() {
    use crate::algo::kernel::{self, Kernel, Params};
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::new().threads(2).background(false).fanout(64);
    let g = Graph::create(dir.path(), opts).unwrap();
    // Sparse runs, about half a million edges in all (each run touches a few percent of
    // the vertices): however many runs a layered view reads, the graph is as deep.
    let n = 60_000u64;
    let runs = crate::snapshot::MAX_LAYERED_RUNS + 2;
    let mut x = 0x9e37_79b9_u64;
    for _ in 0..runs {
        let edges: Vec<(u64, u64)> = (0..530_000 / runs)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % n, (x >> 32) % n)
            })
            .collect();
        g.insert_edges(&edges).unwrap();
        g.flush().unwrap();
    }
    let s = g.snapshot().unwrap();
    assert!(
        s.runs().len() > crate::snapshot::MAX_LAYERED_RUNS,
        "runs: {}",
        s.runs().len()
    );
    let source = (0..s.num_vertices() as crate::VertexId)
        .find(|&v| s.out_degree(v) > 0)
        .unwrap();
    let depths = gap::bfs::search(&s, source, -1, |_, d| d);
    assert!(
        depths.iter().filter(|&&d| d > 3).count() > 1000,
        "a deep search"
    );
    let dists = gap::sssp::delta_stepping(&s, source, 1.0);
    let p = Params {
        source: Some(source),
        ..Params::default()
    };
    // Within no copy budget, the runs are read where they lie, through directories.
    let s = g.snapshot().unwrap().with_copy_budget(Some(0));
    assert_eq!(kernel::prepare(&s, Kernel::GapSssp, &p), "runs");
    let sparse = |r: &&std::sync::Arc<crate::run::Run>| !r.dir(Dir::Out).dense;
    let directed = |r: &&std::sync::Arc<crate::run::Run>| r.dir(Dir::Out).directory.get().is_some();
    let n_sparse = s.runs().iter().filter(sparse).count();
    assert!(n_sparse > 10, "sparse runs: {n_sparse}");
    assert_eq!(s.runs().iter().filter(directed).count(), n_sparse);
    assert_eq!(gap::bfs::search(&s, source, -1, |_, d| d), depths);
    assert_eq!(gap::sssp::delta_stepping(&s, source, 1.0), dists);
    // By default the out-lists SSSP reads in no order are merged into one copy first.
    let copied = g.snapshot().unwrap();
    assert_eq!(kernel::prepare(&copied, Kernel::GapSssp, &p), "runs-copy");
    assert_eq!(gap::sssp::delta_stepping(&copied, source, 1.0), dists);
}

/// A copy merged from every run holds each vertex's live list in both directions as the
/// runs give it read where they lie, in the same order (tombstones, re-adds, a deleted
/// vertex, a DRAM run; plain and compressed, directed and undirected), and sorted reads
/// and degrees agree; no copy is made beyond the budget.
#[test]
fn lists_merged_into_a_copy_are_the_lists_the_runs_hold() {
    for (undirected, packed) in [(false, false), (true, false), (false, true), (true, true)] {
        let dir = tempfile::tempdir().unwrap();
        let g = live(dir.path(), undirected, packed, 320);
        let runs = g.snapshot().unwrap();
        let none = g.snapshot().unwrap();
        none.copy_runs(&[Dir::Out, Dir::In], 0);
        assert!(!none.runs_copied(), "no copy within no budget");
        let copied = g.snapshot().unwrap();
        copied.copy_runs(&[Dir::Out, Dir::In], u64::MAX);
        assert!(
            copied.runs_copied(),
            "undirected {undirected}, packed {packed}"
        );
        let lists = |s: &Snapshot, v, d| {
            let mut l = Vec::new();
            match d {
                Dir::Out => s.for_each_out(v, |x| l.push(x)),
                Dir::In => s.for_each_in(v, |x| l.push(x)),
            }
            l
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for v in 0..runs.num_vertices() as crate::VertexId {
            for d in [Dir::Out, Dir::In] {
                let what = format!("vertex {v} {d:?}, undirected {undirected}, packed {packed}");
                assert_eq!(lists(&copied, v, d), lists(&runs, v, d), "{what}");
            }
            assert_eq!(copied.out_degree(v), runs.out_degree(v));
            assert_eq!(copied.in_degree(v), runs.in_degree(v));
            copied.in_neighbors_sorted(v, &mut a);
            runs.in_neighbors_sorted(v, &mut b);
            assert_eq!(a, b);
        }
        assert!(runs.num_edges() > 0);
    }
}

/// A weighted live store's copy holds each vertex's weights beside its neighbors, as the
/// runs give them: weights updated by re-inserts in newer runs, edges deleted and
/// re-added, plain and compressed; SSSP reads a copy (a layered view's of plain runs)
/// and finds what it finds in the runs.
#[test]
fn weights_merged_into_a_copy_are_the_weights_the_runs_hold() {
    use crate::algo::kernel::{Kernel, Params};
    use crate::Record;
    for packed in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options::new().weighted(true).threads(2).background(false);
        let opts = match packed {
            true => opts.compression(Some(Compression::Packed)),
            false => opts,
        };
        let g = Graph::create(dir.path(), opts.fanout(64).partition_bits(6)).unwrap();
        let n = 300u64;
        let mut x = 0x51_7cc1_b727_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..5u64 {
            let recs: Vec<Record> = (0..3 * n)
                .map(|_| {
                    let r = next();
                    match r % 5 {
                        0 if round > 0 => Record::Delete(r % n, (r >> 20) % n),
                        _ => Record::InsertWeighted(r % n, (r >> 20) % n, (r >> 40) as f64 / 7.0),
                    }
                })
                .collect();
            g.apply(&recs).unwrap();
            g.flush().unwrap();
        }
        let runs = g.snapshot().unwrap();
        assert!(runs.runs().len() > 2, "{} runs", runs.runs().len());
        assert!(runs.is_weighted());
        let copied = g.snapshot().unwrap();
        copied.copy_runs(&[Dir::Out], u64::MAX);
        assert!(copied.runs_copied(), "packed {packed}");
        let weighted = |s: &Snapshot, v| {
            let mut l = Vec::new();
            s.for_each_out_weighted(v, |x, w| l.push((x, w)));
            l
        };
        for v in 0..runs.num_vertices() as crate::VertexId {
            assert_eq!(
                weighted(&copied, v),
                weighted(&runs, v),
                "vertex {v}, packed {packed}"
            );
        }
        let p = Params {
            source: Some(0),
            ..Params::default()
        };
        let want_view = if packed { "runs-copy" } else { "layered-copy" };
        copy_reads_as_in_place(
            &g,
            Kernel::GapSssp,
            &p,
            want_view,
            &format!("packed {packed}"),
        );
    }
}
