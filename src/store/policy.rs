//! Which runs to merge next: tiered levels, partitioned by vertex range above level 0.
//!
//! Runs come in two kinds. *Unconfined* runs may hold any vertex: flushed memtables
//! (level 0), the base an explicit compaction writes, and runs of stores too small to
//! partition. *Partition* runs hold only the vertex ids `j << s .. (j + 1) << s` of one
//! partition `j` (shift `s`, recorded in the run header).
//!
//! A group of `fanout` consecutive unconfined runs of one level is merged into one run per
//! partition of the next level (or one unconfined run while the vertex space fits in one
//! partition). Partition runs are then merged partition by partition: for partition `j`,
//! its *chain* is the list of runs that may hold its vertices (unconfined runs and `j`'s
//! own), oldest first, and `fanout` consecutive partition runs of one level in the chain
//! become one run of the next level. So a merge above level 0 rewrites one partition, a
//! bounded part of the graph, and each edge is still rewritten once per level.
//!
//! Why this is correct: a snapshot resolves a vertex's runs oldest to newest, and runs
//! that cannot hold a vertex do not matter to it. A merged group is consecutive in the
//! chain of every vertex it may hold, so putting its output where its oldest input was
//! keeps each of those chains in order; the runs it jumps over hold none of its vertices.

use crate::run::RunHeader;

/// What one merge writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Output {
    /// One unconfined run.
    Whole,
    /// One run per partition of `2^shift` ids that the inputs hold anything of.
    Split { shift: u32 },
    /// The run of partition `part` (the inputs are that partition's runs).
    Partition { shift: u32, part: u64 },
}

/// A merge the policy asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Pick {
    /// Positions of the inputs in the run list, ascending.
    pub inputs: Vec<usize>,
    /// Level of the output.
    pub level: u64,
    /// The inputs start at the oldest run that can hold any of their vertices: tombstones
    /// and vertex births are dropped, nothing older is left for them to cancel.
    pub base: bool,
    /// What is written.
    pub output: Output,
}

impl Pick {
    /// Whether the merge rewrites one partition (work that may wait a little while
    /// memtables queue for sealing), not level-0 runs (which hold the writer back).
    pub fn is_partition(&self) -> bool {
        matches!(self.output, Output::Partition { .. })
    }
}

/// How many times `fanout` runs one level (of one partition) holds before its merge is
/// overdue: merged even by a closing store, so that sessions too short for background
/// merges (a process killed or closed soon after each open) cannot pile up runs without
/// bound.
pub(super) const OVERDUE: usize = 4;

/// A merge picker: [`pick`] or [`pick_overdue`].
pub(super) type Choose = fn(&[&RunHeader], usize, u32, u64) -> Option<Pick>;

/// The next merge for `runs` (oldest first), or `None` when no level holds `fanout` runs.
/// `shift` is the partition shift for new partition runs (0: never partition) and
/// `space` the store's vertex space. The lowest level goes first, level-0 runs before
/// partition runs of the same level.
pub(super) fn pick(runs: &[&RunHeader], fanout: usize, shift: u32, space: u64) -> Option<Pick> {
    pick_groups_of(runs, fanout.max(2), shift, space)
}

/// The next overdue merge: as [`pick`], of a level holding [`OVERDUE`] times `fanout` runs
/// or more.
pub(super) fn pick_overdue(
    runs: &[&RunHeader],
    fanout: usize,
    shift: u32,
    space: u64,
) -> Option<Pick> {
    pick_groups_of(runs, fanout.max(2) * OVERDUE, shift, space)
}

/// The lowest-level group of at least `fanout` runs.
fn pick_groups_of(runs: &[&RunHeader], fanout: usize, shift: u32, space: u64) -> Option<Pick> {
    let mut best: Option<(u64, u8, u64, Pick)> = None;
    let mut offer = |key: (u64, u8, u64), p: Pick| {
        if best.as_ref().is_none_or(|b| key < (b.0, b.1, b.2)) {
            best = Some((key.0, key.1, key.2, p));
        }
    };
    if let Some(p) = unconfined_group(runs, fanout, shift, space) {
        offer((p.level - 1, 0, 0), p);
    }
    let mut parts: Vec<(u32, u64)> = runs
        .iter()
        .filter(|h| h.part_shift() > 0)
        .map(|h| (h.part_shift(), h.span().start >> h.part_shift()))
        .collect();
    parts.sort_unstable();
    parts.dedup();
    // One store has one shift; the chains of each shift present are built once.
    for g in parts.chunk_by(|a, b| a.0 == b.0) {
        let s = g[0].0;
        let n_parts = g[g.len() - 1].1 + 1;
        let chains = crate::run::format::chains_by_partition(runs, s, n_parts);
        for &(_, j) in g {
            if let Some(p) = partition_group(runs, &chains[j as usize], fanout, s, j) {
                offer((p.level - 1, 1, j), p);
            }
        }
    }
    best.map(|b| b.3)
}

/// The lowest-level group of `fanout` or more consecutive unconfined runs of one level.
fn unconfined_group(runs: &[&RunHeader], fanout: usize, shift: u32, space: u64) -> Option<Pick> {
    let mut at = 0;
    let mut found: Option<(usize, usize)> = None;
    for g in runs.chunk_by(|a, b| a.level == b.level && a.part_shift() == b.part_shift()) {
        let unconfined = g[0].part_shift() == 0;
        if unconfined && g.len() >= fanout && found.is_none_or(|(s, _)| g[0].level < runs[s].level)
        {
            found = Some((at, g.len()));
        }
        at += g.len();
    }
    let (start, len) = found?;
    let output = if shift > 0 && space > 1u64 << shift {
        Output::Split { shift }
    } else {
        Output::Whole
    };
    Some(Pick {
        inputs: (start..start + len).collect(),
        level: runs[start].level + 1,
        base: start == 0,
        output,
    })
}

/// The lowest-level group of `fanout` or more consecutive runs of partition `j` (shift
/// `s`) in that partition's `chain` (positions in `runs`).
fn partition_group(
    runs: &[&RunHeader],
    chain: &[u32],
    fanout: usize,
    s: u32,
    j: u64,
) -> Option<Pick> {
    let span = j << s..(j + 1) << s;
    let chain: Vec<usize> = chain.iter().map(|&i| i as usize).collect();
    let own = |i: usize| runs[i].part_shift() == s && runs[i].span().start == span.start;
    let mut at = 0;
    let mut found: Option<(usize, usize)> = None;
    for g in chain.chunk_by(|&a, &b| runs[a].level == runs[b].level && own(a) == own(b)) {
        if own(g[0])
            && g.len() >= fanout
            && found.is_none_or(|(k, _)| runs[g[0]].level < runs[chain[k]].level)
        {
            found = Some((at, g.len()));
        }
        at += g.len();
    }
    let (k, len) = found?;
    Some(Pick {
        inputs: chain[k..k + len].to_vec(),
        level: runs[chain[k]].level + 1,
        base: k == 0,
        output: Output::Partition { shift: s, part: j },
    })
}

/// Checks that the runs' LSN ranges are consistent with the order of `runs`: in the
/// chain of every vertex, each run starts where an older one ended or later (partition
/// runs skip the LSNs of merges that held nothing of their partition), and together the
/// runs cover one contiguous range of LSNs. Returns the first problem found.
pub(crate) fn lsn_order_problem(runs: &[&RunHeader]) -> Option<String> {
    for (i, a) in runs.iter().enumerate() {
        if a.min_lsn > a.max_lsn {
            return Some(format!("run {} ends before it starts", a.id));
        }
        for b in &runs[i + 1..] {
            if b.overlaps(&a.span()) && b.min_lsn < a.max_lsn {
                return Some(format!(
                    "runs {} and {} hold overlapping LSN ranges in the wrong order",
                    a.id, b.id
                ));
            }
        }
    }
    let mut ranges: Vec<(u64, u64)> = runs.iter().map(|h| (h.min_lsn, h.max_lsn)).collect();
    ranges.sort_unstable();
    let mut end = ranges.first()?.0;
    for (lo, hi) in ranges {
        if lo > end {
            return Some(format!("the runs leave LSNs {end}..{lo} uncovered"));
        }
        end = end.max(hi);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::format::PART_SHIFT_AT;

    /// A header of level `level` covering LSNs `lsn`, confined to partition `part` of
    /// shift 4 (16 ids) when given.
    fn h(id: u64, level: u64, lsn: (u64, u64), part: Option<u64>) -> RunHeader {
        let (flags, space) = match part {
            Some(j) => (4 << PART_SHIFT_AT, (j + 1) * 16),
            None => (0, 64),
        };
        RunHeader {
            flags,
            id,
            level,
            min_lsn: lsn.0,
            max_lsn: lsn.1,
            vertex_space: space,
            ..Default::default()
        }
    }

    fn refs(v: &[RunHeader]) -> Vec<&RunHeader> {
        v.iter().collect()
    }

    #[test]
    fn level_0_runs_split_into_partitions_once_the_space_spans_two() {
        let runs: Vec<_> = (0..4).map(|i| h(i, 0, (i, i + 1), None)).collect();
        let p = pick(&refs(&runs), 4, 4, 64).unwrap();
        assert_eq!(p.inputs, vec![0, 1, 2, 3]);
        assert_eq!((p.level, p.base), (1, true));
        assert_eq!(p.output, Output::Split { shift: 4 });
        // One partition's worth of vertices: one unconfined run, as before partitions.
        assert_eq!(pick(&refs(&runs), 4, 4, 16).unwrap().output, Output::Whole);
        assert_eq!(pick(&refs(&runs), 4, 0, 64).unwrap().output, Output::Whole);
        assert_eq!(pick(&refs(&runs[..3]), 4, 4, 64), None);
    }

    #[test]
    fn a_partition_merges_its_own_runs_across_other_partitions_runs() {
        // Partition 0 and 1 runs interleaved, as successive level-0 merges leave them,
        // then two fresh level-0 runs.
        let mut runs = Vec::new();
        for k in 0..4u64 {
            runs.push(h(10 * k, 1, (4 * k, 4 * k + 4), Some(0)));
            runs.push(h(10 * k + 1, 1, (4 * k, 4 * k + 4), Some(1)));
        }
        runs.push(h(100, 0, (16, 17), None));
        runs.push(h(101, 0, (17, 18), None));
        assert_eq!(lsn_order_problem(&refs(&runs)), None);
        let p = pick(&refs(&runs), 4, 4, 32).unwrap();
        assert_eq!(p.inputs, vec![0, 2, 4, 6]);
        assert_eq!(p.output, Output::Partition { shift: 4, part: 0 });
        assert_eq!((p.level, p.base), (2, true));
    }

    #[test]
    fn level_0_goes_before_partitions_and_lower_levels_before_higher() {
        let mut runs = Vec::new();
        for k in 0..4u64 {
            runs.push(h(k, 2, (k, k + 1), Some(1)));
        }
        for k in 4..8u64 {
            runs.push(h(k, 0, (k, k + 1), None));
        }
        let p = pick(&refs(&runs), 4, 4, 32).unwrap();
        assert_eq!(p.inputs, vec![4, 5, 6, 7]);
        assert!(!p.base, "older partition runs hold some of these vertices");
        runs.truncate(7);
        for k in 7..11u64 {
            runs.insert(4, h(k + 20, 1, (0, 0), Some(1)));
        }
        let p = pick(&refs(&runs), 4, 4, 32).unwrap();
        assert_eq!(p.output, Output::Partition { shift: 4, part: 1 });
        assert_eq!((p.level, p.inputs.len()), (2, 4));
    }

    #[test]
    fn an_unconfined_run_between_partition_runs_breaks_their_group() {
        let runs = vec![
            h(1, 1, (0, 1), Some(0)),
            h(2, 1, (1, 2), Some(0)),
            h(3, 1, (2, 3), None),
            h(4, 1, (3, 4), Some(0)),
            h(5, 1, (4, 5), Some(0)),
        ];
        assert_eq!(pick(&refs(&runs), 3, 4, 32), None);
    }

    #[test]
    fn lsn_order_is_checked_per_chain_and_for_cover() {
        // Partitions merge at different times: their LSN ranges may interleave.
        let ok = vec![
            h(1, 1, (0, 4), Some(0)),
            h(2, 1, (2, 6), Some(1)),
            h(3, 0, (6, 7), None),
        ];
        assert_eq!(lsn_order_problem(&refs(&ok)), None);
        let swapped = vec![h(1, 1, (4, 6), Some(0)), h(2, 0, (0, 4), None)];
        let e = lsn_order_problem(&refs(&swapped)).unwrap();
        assert!(e.contains("wrong order"), "{e}");
        let hole = vec![h(1, 1, (0, 4), Some(0)), h(2, 0, (5, 6), None)];
        let e = lsn_order_problem(&refs(&hole)).unwrap();
        assert!(e.contains("4..5 uncovered"), "{e}");
    }
}
