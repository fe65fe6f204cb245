//! Criterion micro-benchmarks of the engine's hot paths, each on a Kronecker graph of
//! 2^16 vertices and 2^20 edges: WAL append (encode + write, the memory medium and a file
//! medium under the temp dir), memtable apply, sealing a memtable to a run file (flush),
//! merging two runs (compaction), and scanning a snapshot's neighbor lists (one compacted
//! run, and a base plus an unflushed delta).
//!
//! Run: `cargo bench --bench hot_paths` (or `-- memtable` for one group). End-to-end
//! figures come from `evograph bench`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use evograph::gen::{self, GenKind, GenSpec};
use evograph::internals::batch::DenseBatch;
use evograph::internals::medium::{file::FileMedium, memory::MemoryMedium, Medium};
use evograph::internals::memtable::Memtable;
use evograph::internals::run::build::RunMeta;
use evograph::internals::run::merge::merge_to_file;
use evograph::internals::wal::{recover, Wal};
use evograph::{Compression, Durability, Graph, GraphView, Options, Record, VertexId};
use std::sync::Arc;

const SCALE: u32 = 16;

fn edges() -> Vec<(u32, u32)> {
    let mut e = gen::generate(&GenSpec {
        kind: GenKind::Kron,
        scale: SCALE,
        edge_factor: 16,
        seed: 1,
    })
    .unwrap();
    gen::shuffle(&mut e, 1);
    e
}

fn pairs(e: &[(u32, u32)]) -> Vec<[VertexId; 2]> {
    e.iter()
        .map(|&(u, v)| [u as VertexId, v as VertexId])
        .collect()
}

fn memtable(e: &[[VertexId; 2]]) -> Memtable {
    let mut m = Memtable::new(false, false, 0, 1 << SCALE);
    m.apply_edges(e, &[]);
    m
}

fn wal_append(c: &mut Criterion) {
    let e = edges();
    let mut batch = DenseBatch::default();
    for &(u, v) in &e[..1 << 16] {
        batch.push_edge(u as VertexId, v as VertexId, false, 1.0);
    }
    let mut g = c.benchmark_group("wal_append");
    g.throughput(Throughput::Elements(batch.records()));
    let tmp = tempfile::tempdir().unwrap();
    let media: [(&str, Arc<dyn Medium>, Durability); 3] = [
        ("memory", Arc::new(MemoryMedium::new()), Durability::None),
        (
            "file_none",
            Arc::new(FileMedium::new(tmp.path())),
            Durability::None,
        ),
        (
            "file_sync",
            Arc::new(FileMedium::new(tmp.path())),
            Durability::Sync,
        ),
    ];
    for (name, medium, mode) in media {
        let any = |_: &str, _: &evograph::internals::wal::segment::SegmentHeader| Ok(());
        let expect = evograph::internals::wal::Expect {
            start_lsn: 0,
            log_in_use: false,
            header_ok: &any,
            reach: evograph::internals::wal::Reach::Written,
        };
        let rec = recover(&*medium, &expect, true, |_, _| Ok(())).unwrap();
        let stamps = evograph::internals::wal::LogStamps {
            store_id: 1,
            committed: Default::default(),
        };
        let wal = Wal::start(
            medium,
            rec,
            mode,
            evograph::internals::wal::writer::SEGMENT_BYTES,
            Vec::new(),
            stamps,
        )
        .unwrap();
        let mut lsn = wal.durable_lsn();
        g.bench_function(format!("64k_edges_{name}"), |b| {
            b.iter(|| {
                let end = wal.submit(&batch, lsn).unwrap();
                wal.wait_durable(end).unwrap();
                lsn = end;
                // Keep the log from growing without bound across iterations.
                wal.recycle_below(lsn);
            })
        });
        wal.shutdown(true).unwrap();
    }
    g.finish();
}

fn memtable_apply(c: &mut Criterion) {
    let e = pairs(&edges());
    let mut g = c.benchmark_group("memtable_apply");
    g.throughput(Throughput::Elements(e.len() as u64));
    g.sample_size(20);
    g.bench_function("1m_edges_in_64k_batches", |b| {
        b.iter_batched(
            || Memtable::new(false, false, 0, 1 << SCALE),
            |mut m| {
                for chunk in e.chunks(1 << 16) {
                    m.apply_edges(chunk, &[]);
                }
                m
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// What the benchmarked runs are stamped with (a store id and commit of no consequence).
const STAMP: evograph::internals::stamp::Stamp = evograph::internals::stamp::Stamp {
    store_id: 1,
    seq: 1,
};

fn flush(c: &mut Criterion) {
    let e = pairs(&edges());
    let medium: Arc<dyn Medium> = Arc::new(MemoryMedium::new());
    let mut g = c.benchmark_group("flush");
    g.throughput(Throughput::Elements(e.len() as u64));
    g.sample_size(20);
    let mut id = 0;
    for (name, c) in [
        ("seal_1m_edges_to_run_file", Compression::None),
        ("seal_1m_edges_to_packed_run_file", Compression::Packed),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || memtable(&e),
                |m| {
                    id += 1;
                    let (r, unpersisted, _) = m.seal_to_file(&[], id, &medium, c, STAMP).unwrap();
                    unpersisted.persist_and_name(|| Ok(())).unwrap();
                    medium
                        .remove(&evograph::internals::run::Run::file_name(id))
                        .unwrap();
                    r
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

fn merge(c: &mut Criterion) {
    let e = pairs(&edges());
    let half = e.len() / 2;
    let medium: Arc<dyn Medium> = Arc::new(MemoryMedium::new());
    let a = Arc::new(memtable(&e[..half]).seal(&[], 1));
    let b_run = Arc::new(memtable(&e[half..]).seal(std::slice::from_ref(&a), 2));
    let inputs = [a, b_run];
    let mut g = c.benchmark_group("merge");
    g.throughput(Throughput::Elements(e.len() as u64));
    g.sample_size(20);
    let mut id = 10;
    for (name, compression) in [
        ("two_runs_of_512k_edges", Compression::None),
        ("two_runs_of_512k_edges_to_packed", Compression::Packed),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                id += 1;
                let meta = RunMeta {
                    id,
                    level: 1,
                    min_lsn: 0,
                    max_lsn: e.len() as u64,
                    vertex_space: 1 << SCALE,
                    weighted: false,
                    part_shift: 0,
                    compression,
                    stamp: STAMP,
                    last_time: None,
                };
                let r = merge_to_file(&inputs, meta, true, &medium).unwrap();
                medium
                    .remove(&evograph::internals::run::Run::file_name(id))
                    .unwrap();
                r
            })
        });
    }
    g.finish();
}

fn run_scan(c: &mut Criterion) {
    let e = edges();
    let g = Graph::in_memory(
        Options::new()
            .durability(Durability::None)
            .background(false),
    )
    .unwrap();
    let recs = |es: &[(u32, u32)]| -> Vec<Record> {
        es.iter()
            .map(|&(u, v)| Record::Insert(u as u64, v as u64))
            .collect()
    };
    let cut = e.len() * 9 / 10;
    g.apply(&recs(&e[..cut])).unwrap();
    g.compact().unwrap();
    g.apply(&recs(&e[cut..])).unwrap();
    let live = g.snapshot().unwrap();
    g.compact().unwrap();
    let comp = g.snapshot().unwrap();
    let mut grp = c.benchmark_group("run_scan");
    grp.throughput(Throughput::Elements(comp.num_edges()));
    fn scan<G: GraphView>(g: &G) -> u64 {
        let mut s = 0u64;
        for v in 0..g.num_vertices() as VertexId {
            g.for_each_out(v, |w| s = s.wrapping_add(w as u64));
        }
        s
    }
    grp.bench_function("out_lists_compacted", |b| {
        let f = comp.flat().expect("one compacted run");
        b.iter(|| scan(&f))
    });
    grp.bench_function("out_lists_base_plus_10pct_delta", |b| {
        let l = live.layered().expect("base plus one delta");
        b.iter(|| scan(&l))
    });
    grp.bench_function("out_lists_run_walk", |b| b.iter(|| scan(&live)));
    grp.finish();
}

criterion_group!(benches, wal_append, memtable_apply, flush, merge, run_scan);
criterion_main!(benches);
