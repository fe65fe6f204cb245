//! A past graph built forward from a run cut equals the same graph built back from the
//! latest one, at every commit of a store with flushes, a compaction (a run that straddles
//! commits) and vertex updates; and the forward route is taken where a cut allows it.

use super::history::{forward_cut, run_cut};
use super::versions::PointShape;
use super::*;
use crate::history::History;
use crate::snapshot::GraphView;

/// A small deterministic stream: inserts, deletes and vertex updates over 24 ids.
fn batch(seed: &mut u64, weighted: bool) -> Vec<Record> {
    let mut next = || {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    };
    (0..12)
        .map(|_| {
            let (kind, u, v) = (next() % 16, next() % 24, next() % 24);
            match kind {
                0..=8 if weighted => Record::InsertWeighted(u, v, (1 + next() % 4) as f64),
                0..=8 => Record::Insert(u, v),
                9..=13 => Record::Delete(u, v),
                14 => Record::DeleteVertex(u),
                _ => Record::InsertVertex(u),
            }
        })
        .collect()
}

/// A store with history whose runs leave cuts before and after a compaction.
fn store(undirected: bool, weighted: bool) -> Graph {
    store_with(undirected, weighted, 0)
}

/// [`store`], its merges writing partitions of `2^bits` ids (0: none).
fn store_with(undirected: bool, weighted: bool, bits: u32) -> Graph {
    let opts = Options::new()
        .partition_bits(bits)
        .fanout(2)
        .weighted(Some(weighted))
        .undirected(Some(undirected))
        .background(false)
        .memtable_bytes(1 << 30)
        .history(History::All);
    let g = Graph::in_memory(opts).unwrap();
    let mut seed = 7;
    for i in 0..40 {
        g.apply(&batch(&mut seed, weighted)).unwrap();
        // An edge of a partition of its own, there for two commits: a merge over them
        // leaves that partition no run.
        if bits > 0 && (i == 20 || i == 21) {
            let (u, v) = (100, 101);
            g.apply(&[[Record::Insert(u, v), Record::Delete(u, v)][i - 20]])
                .unwrap();
        }
        if i % 5 == 4 && bits == 0 {
            g.flush().unwrap();
        }
        // Partitions come from level merges, which a flush of its own does not run.
        if bits > 0 && i % 2 == 1 {
            g.inner.flush_then(super::maintain::Merges::Levels).unwrap();
        }
        if i == 14 {
            g.compact().unwrap();
        }
    }
    g
}

/// Whether `a` and `b` hold the same vertices, edges, weights and degrees.
fn same(a: &Snapshot, b: &Snapshot, ctx: &str) {
    assert_eq!(a.live_vertices(), b.live_vertices(), "{ctx}: live vertices");
    assert_eq!(a.edge_count(), b.edge_count(), "{ctx}: edges");
    for u in 0..a.num_vertices() as VertexId {
        assert_eq!(a.vertex_exists(u), b.vertex_exists(u), "{ctx}: vertex {u}");
        assert_eq!(a.out_degree(u), b.out_degree(u), "{ctx}: out-degree of {u}");
        for v in 0..a.num_vertices() as VertexId {
            let (x, y) = (a.edge_weight(u, v), b.edge_weight(u, v));
            assert_eq!(x, y, "{ctx}: edge {u} -> {v}");
        }
    }
    assert_eq!(lists(a), lists(b), "{ctx}: lists through the fastest view");
}

/// Every vertex's out- and in-list as the fastest view of `s` reads them (a kernel's
/// reads), sorted, with its degrees.
fn lists(s: &Snapshot) -> Vec<(Vec<VertexId>, Vec<VertexId>, usize, usize)> {
    crate::with_view!(s, |g| {
        (0..g.num_vertices() as VertexId)
            .map(|v| {
                let (mut o, mut i) = (Vec::new(), Vec::new());
                g.for_each_out(v, |x| o.push(x));
                g.for_each_in(v, |x| i.push(x));
                o.sort_unstable();
                i.sort_unstable();
                let mut sorted = Vec::new();
                g.out_neighbors_sorted(v, &mut sorted);
                assert_eq!(sorted, o, "vertex {v}: a sorted read");
                (o, i, g.out_degree(v), g.in_degree(v))
            })
            .collect()
    })
}

fn routes_agree(undirected: bool, weighted: bool) {
    let g = store(undirected, weighted);
    let inner = &g.inner;
    let pieces = inner.pieces().unwrap();
    let latest = inner.snapshot_parts().unwrap();
    let commits = Inner::commits_of(&pieces, latest.lsn);
    let (mut laid, mut in_place) = (0, 0);
    for (i, c) in commits.iter().enumerate() {
        if i + 1 == commits.len() {
            continue;
        }
        let Some(cut) = forward_cut(&latest.runs, &pieces, c.lsn) else {
            panic!(
                "no cut at or before LSN {}: history is kept from the start",
                c.lsn
            );
        };
        match cut == c.lsn {
            true => in_place += 1,
            false => laid += 1,
        }
        let parts = || inner.snapshot_parts().unwrap();
        let fwd = inner.parts_forward(parts(), &pieces, cut, c.lsn).unwrap();
        let back = inner.parts_undone(parts(), &pieces, c.lsn).unwrap();
        let ctx = format!(
            "undirected {undirected}, weighted {weighted}, LSN {}",
            c.lsn
        );
        same(&fwd.build(inner), &back.build(inner), &ctx);
    }
    assert!(
        laid > 0,
        "no point was built forward with changes laid over"
    );
    assert!(in_place > 0, "no point fell on a cut, read in place");
}

#[test]
fn a_point_built_forward_equals_the_point_built_back() {
    for (undirected, weighted) in [(false, false), (false, true), (true, false), (true, true)] {
        routes_agree(undirected, weighted);
    }
}

#[test]
fn a_compacted_run_leaves_no_cut_inside_its_range() {
    let g = store(false, false);
    let runs = g.inner.snapshot_parts().unwrap().runs;
    let compacted = runs.iter().find(|r| r.header.min_lsn == 0).unwrap();
    let (lo, hi) = (compacted.header.min_lsn, compacted.header.max_lsn);
    assert_eq!(run_cut(&runs, hi - 1), Some(lo));
    assert_eq!(run_cut(&runs, hi), Some(hi));
}

/// A point read from the runs filtered by their versions equals the point built back from
/// the latest graph, at every commit: inside a compacted run, inside flushed ones, and with
/// a run's versions damaged (then it is built the other way).
#[test]
fn a_point_read_through_versions_equals_the_point_built_back() {
    for undirected in [false, true] {
        versions_agree(undirected);
    }
}

/// With merges writing partitions, a point is read through versions only where every
/// partition has a run that reaches it (a partition whose changes netted out gets none),
/// and then equals the point built back.
#[test]
fn a_partitioned_store_reads_a_point_through_versions_only_where_it_can() {
    let g = store_with(false, false, 2);
    let inner = &g.inner;
    inner.write_versions(&inner.maint.lock().unwrap(), super::RunVersions::Compact);
    let pieces = inner.pieces().unwrap();
    let latest = inner.snapshot_parts().unwrap();
    let commits = Inner::commits_of(&pieces, latest.lsn);
    let partitioned = latest.runs.iter().any(|r| r.header.part_shift() > 0);
    assert!(partitioned, "the store has partition runs");
    let mut filtered = 0;
    for c in &commits[..commits.len() - 1] {
        let parts = || inner.snapshot_parts().unwrap();
        let back = inner.parts_undone(parts(), &pieces, c.lsn).unwrap();
        let shape = PointShape::Masked;
        if let Some(ver) = inner
            .parts_versioned(parts(), &pieces, c.lsn, shape)
            .unwrap()
        {
            filtered += 1;
            same(
                &ver.build(inner),
                &back.build(inner),
                &format!("LSN {}", c.lsn),
            );
        }
    }
    assert!(filtered > 0, "no point was read through versions");
}

fn versions_agree(undirected: bool) {
    let g = store(undirected, false);
    let inner = &g.inner;
    inner.write_versions(&inner.maint.lock().unwrap(), super::RunVersions::Compact);
    let pieces = inner.pieces().unwrap();
    let latest = inner.snapshot_parts().unwrap();
    let commits = Inner::commits_of(&pieces, latest.lsn);
    let (mut filtered, mut masked) = (0, 0);
    for c in &commits[..commits.len() - 1] {
        let parts = || inner.snapshot_parts().unwrap();
        let back = inner
            .parts_undone(parts(), &pieces, c.lsn)
            .unwrap()
            .build(inner);
        for shape in [PointShape::Masked, PointShape::Runs] {
            let Some(ver) = inner
                .parts_versioned(parts(), &pieces, c.lsn, shape)
                .unwrap()
            else {
                panic!("LSN {}: every run has versions", c.lsn);
            };
            filtered += (ver.runs.iter())
                .filter(|r| r.header.max_lsn == c.lsn)
                .count();
            masked += ver.point.is_some() as usize;
            assert!(shape == PointShape::Masked || ver.point.is_none());
            let s = ver.build(inner);
            same(&s, &back, &format!("LSN {}, {shape:?}", c.lsn));
            if s.point().is_some() {
                // A sweeping kernel's copy of the lists reads as the masks do.
                use crate::snapshot::Dir;
                assert!(
                    s.plan_point_sweeps(&[Dir::Out, Dir::In]),
                    "LSN {}: copies",
                    c.lsn
                );
                same(&s, &back, &format!("LSN {}, copied", c.lsn));
            }
        }
        let counted = inner.size_versioned(&parts(), &pieces, c.lsn).unwrap();
        assert_eq!(
            counted,
            Some(GraphSize::of(&back)),
            "the size at LSN {} counted from the versions",
            c.lsn
        );
    }
    assert!(filtered > 0, "no point was read through a run's versions");
    assert!(masked > 0, "no point was read as a masked run");
    let compacted = latest.runs.iter().find(|r| r.header.min_lsn == 0).unwrap();
    let name = crate::history::versions_file::file_name(compacted.header.id);
    let f = inner.medium.open(&name).unwrap();
    f.write_at(200, &[0xff; 8]).unwrap();
    let report = g.check().unwrap();
    assert!(
        report.problems.iter().any(|p| p.contains(&name)),
        "check names the damaged versions: {:?}",
        report.problems
    );
    let inside = commits
        .iter()
        .find(|c| c.lsn < compacted.header.max_lsn)
        .unwrap();
    let parts = inner.snapshot_parts().unwrap();
    assert!(inner
        .parts_versioned(parts, &pieces, inside.lsn, PointShape::Masked)
        .unwrap()
        .is_none());
    let (at, _) = inner.snapshot_at(Point::Lsn(inside.lsn)).unwrap();
    let back = inner.parts_undone(inner.snapshot_parts().unwrap(), &pieces, inside.lsn);
    same(&at, &back.unwrap().build(inner), "damaged versions");
    let (size, _) = g.size_at(Point::Lsn(inside.lsn)).unwrap();
    assert_eq!(size, GraphSize::of(&at), "a size beside damaged versions");
}

/// An in-memory store keeping all history, of `batches` random batches from `seed`,
/// compacted into one run over every commit (its versions derived by the compaction).
fn compacted(mut seed: u64, batches: usize) -> Graph {
    let opts = Options::new()
        .background(false)
        .memtable_bytes(1 << 30)
        .history(History::All);
    let g = Graph::in_memory(opts).unwrap();
    for _ in 0..batches {
        g.apply(&batch(&mut seed, false)).unwrap();
    }
    g.compact().unwrap();
    g
}

/// A run whose range holds more than 255 commits keeps its ordinals two bytes wide, and
/// reads through them as the point built back does.
#[test]
fn versions_of_a_run_of_many_commits_are_two_bytes_wide() {
    let g = compacted(11, 300);
    let inner = &g.inner;
    let latest = inner.snapshot_parts().unwrap();
    assert_eq!(latest.runs.len(), 1, "one compacted run");
    let v = crate::history::versions_file::read(&*inner.medium, &latest.runs[0], inner.store_id())
        .unwrap()
        .expect("compact derived the run's versions");
    assert_eq!((v.commits.get().len(), v.out.ords.width()), (300, 2));
    let pieces = inner.pieces().unwrap();
    let commits = Inner::commits_of(&pieces, latest.lsn);
    for c in commits[..commits.len() - 1].iter().step_by(7) {
        let parts = || inner.snapshot_parts().unwrap();
        let back = inner.parts_undone(parts(), &pieces, c.lsn).unwrap();
        let what = format!("LSN {}", c.lsn);
        let back = back.build(inner);
        for shape in [PointShape::Masked, PointShape::Runs] {
            let ver = inner
                .parts_versioned(parts(), &pieces, c.lsn, shape)
                .unwrap();
            let ver = ver.expect("read through versions");
            assert_eq!(ver.point.is_some(), shape == PointShape::Masked, "{what}");
            same(&ver.build(inner), &back, &format!("{what}, {shape:?}"));
        }
        let counted = inner.size_versioned(&parts(), &pieces, c.lsn).unwrap();
        assert_eq!(counted, Some(GraphSize::of(&back)), "size at {what}");
    }
}

/// A versions file of the first format (events, not spells) is no damage: a reader takes
/// it as none and builds points without it, `check` has nothing to say, and the next
/// `compact` derives the run's versions again in the current format.
#[test]
fn versions_of_the_first_format_are_read_as_none_and_derived_again() {
    let g = compacted(5, 20);
    let inner = &g.inner;
    let run = inner.snapshot_parts().unwrap().runs[0].clone();
    let read =
        || crate::history::versions_file::read(&*inner.medium, &run, inner.store_id()).unwrap();
    assert!(read().is_some(), "compact derived the run's versions");
    let name = crate::history::versions_file::file_name(run.header.id);
    inner
        .medium
        .open(&name)
        .unwrap()
        .write_at(0, b"EVGVER01")
        .unwrap();
    assert!(read().is_none(), "an older format is read as none");
    assert!(!crate::history::versions_file::current(
        &*inner.medium,
        &name
    ));
    assert_eq!(g.check().unwrap().problems, Vec::<String>::new());
    let pieces = inner.pieces().unwrap();
    let mid = Inner::commits_of(&pieces, run.header.max_lsn)[10].lsn;
    let parts = inner.snapshot_parts().unwrap();
    assert!(inner
        .parts_versioned(parts, &pieces, mid, PointShape::Masked)
        .unwrap()
        .is_none());
    g.compact().unwrap();
    assert!(crate::history::versions_file::current(
        &*inner.medium,
        &name
    ));
    assert!(read().is_some(), "compact derived them again");
}

/// A directed run's in-direction derived as its out-direction's transpose says what
/// gathering its changes by destination says, for every run of stores flushed, merged,
/// compacted and partitioned (a partition's in-lists are gathered either way); and
/// versions derived from segments read in place, a few changes gathered at a time (many
/// ranges of vertices), say what those from decoded segments say, undirected stores too.
#[test]
fn versions_transposed_say_what_versions_gathered_say() {
    use crate::history::segment::{self};
    use crate::history::segment_read::{ChangeSet, InPlace};
    use crate::history::versions::{build, build_with, InDirection};
    let (mut whole, mut one_direction) = (0, 0);
    for (undirected, bits) in [(false, 0), (false, 2), (true, 0)] {
        let g = store_with(undirected, false, bits);
        let inner = &g.inner;
        for run in inner.file_runs() {
            let Some(segs) = inner.range_segments(&run) else {
                continue;
            };
            let decoded: Vec<_> = (segs.iter())
                .map(|s| ChangeSet::Decoded(inner.segment_changes(s).unwrap()))
                .collect();
            let in_place: Vec<_> = (segs.iter())
                .map(|s| {
                    let name = segment::file_name(s.r.min_lsn, s.r.max_lsn);
                    let (_, set) = InPlace::open(&*inner.medium, &name).unwrap().unwrap();
                    ChangeSet::InPlace(set)
                })
                .collect();
            let (refs, placed): (Vec<&ChangeSet>, Vec<&ChangeSet>) =
                (decoded.iter().collect(), in_place.iter().collect());
            let t = build(&run, &refs, InDirection::Transposed).unwrap();
            let c = build(&run, &refs, InDirection::Gathered).unwrap();
            let what = format!(
                "run {} (partition shift {})",
                run.header.id,
                run.header.part_shift()
            );
            assert!(super::versions::same_versions(&t, &c), "{what}");
            // Read in place from the files, and a few changes gathered at a time.
            for at_once in [usize::MAX, 7] {
                for inn in [InDirection::Transposed, InDirection::Gathered] {
                    let p = build_with(&run, &placed, inn, at_once).unwrap();
                    assert!(super::versions::same_versions(&t, &p), "{what}, {at_once}");
                }
            }
            if undirected {
                one_direction += (run.out.n_adds() > 0) as usize;
            } else if run.header.part_shift() == 0 {
                let inn = run.inn.as_ref().unwrap();
                assert!(crate::history::versions_transpose::transposes(
                    &run.out, inn
                ));
                whole += (run.out.n_adds() > 0) as usize;
            }
        }
    }
    assert!(
        whole > 1 && one_direction > 1,
        "runs holding every vertex were compared: {whole}, undirected: {one_direction}"
    );
}

/// The transpose refuses in-lists that are not the out-lists transposed (the build then
/// gathers them, and names what disagrees).
#[test]
fn a_run_whose_directions_disagree_is_not_transposed() {
    let g = store(false, false);
    let inner = &g.inner;
    let run = (inner.file_runs().into_iter())
        .find(|r| r.out.n_adds() > 2)
        .unwrap();
    use crate::history::versions_transpose::transposes;
    assert!(transposes(&run.out, run.inn.as_ref().unwrap()));
    // The out-direction read as the in-direction: its lists are not the transpose.
    assert!(!transposes(&run.out, &run.out));
}
