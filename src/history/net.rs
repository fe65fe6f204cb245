//! Net changes between two commits: what [`crate::Graph::snapshot_at`] undoes and what a
//! diff lists.
//!
//! An edge changed between commits A < B by effective changes only, so its state just
//! before the first of them is its state at A, and just after the last its state at B.
//! Edges whose states at A and B agree (added then removed, a weight set back) drop out.

use crate::batch::{id_of, is_del};
use crate::memtable::history::{Change, Sealed};
use crate::types::VertexId;
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

/// An edge whose state differs between two commits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeChange {
    /// Source (an undirected store's smaller end).
    pub src: VertexId,
    /// Destination.
    pub dst: VertexId,
    /// Its weight at the earlier commit, `None` if it was absent.
    pub before: Option<f64>,
    /// Its weight at the later commit, `None` if it was absent.
    pub after: Option<f64>,
}

/// A vertex updated between two commits, with its states at both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexChange {
    /// The vertex.
    pub v: VertexId,
    /// Whether it was live at the earlier commit.
    pub before: bool,
    /// Whether it is live at the later commit.
    pub after: bool,
}

/// A stretch of history: one segment's (or one sealed memtable's) commits and changes.
pub type Piece<'a> = &'a Sealed;

/// The net changes of the commits with LSNs in `after+1 ..= upto` among `pieces` (in LSN
/// order): the edges whose state differs, sorted by (source, destination), and every vertex
/// updated, by id, with its states at both ends (equal when it came back to where it was).
pub fn between(
    pieces: &[Piece<'_>],
    after: u64,
    upto: u64,
) -> (Vec<EdgeChange>, Vec<VertexChange>) {
    let inside: Vec<Range<u32>> = pieces.iter().map(|s| commits_in(s, after, upto)).collect();
    (net_edges(pieces, &inside), net_vertices(pieces, &inside))
}

/// The positions of `s`'s commits with LSNs in `after+1 ..= upto`.
fn commits_in(s: &Sealed, after: u64, upto: u64) -> Range<u32> {
    let lo = s.commits.partition_point(|c| c.lsn <= after);
    let hi = s.commits.partition_point(|c| c.lsn <= upto);
    lo as u32..hi.max(lo) as u32
}

/// Source ranges of about equal work for the pool: bounds taken from the largest piece.
fn source_bounds(pieces: &[Piece<'_>]) -> Vec<VertexId> {
    let Some(big) = pieces.iter().max_by_key(|s| s.edges.len()) else {
        return vec![0];
    };
    if big.edges.is_empty() {
        return vec![0];
    }
    let parts = (rayon::current_num_threads() * 8).min(big.edges.len() / 65_536 + 1);
    let mut b: Vec<VertexId> = (0..parts)
        .map(|i| big.edges[i * big.edges.len() / parts].src)
        .collect();
    b[0] = 0;
    b.dedup();
    b
}

/// The net edge changes: each piece's changes are sorted by (source, destination,
/// commit) and the pieces come in LSN order, so a merge of the pieces (ties to the earlier
/// piece) meets an edge's changes in commit order, with no sort and no copy of them.
fn net_edges(pieces: &[Piece<'_>], inside: &[Range<u32>]) -> Vec<EdgeChange> {
    let bounds = source_bounds(pieces);
    let ranges: Vec<(VertexId, Option<VertexId>)> = (0..bounds.len())
        .map(|i| (bounds[i], bounds.get(i + 1).copied()))
        .collect();
    let parts: Vec<Vec<EdgeChange>> = ranges
        .into_par_iter()
        .map(|(lo, hi)| {
            let slices: Vec<Slice<'_>> = pieces
                .iter()
                .map(|s| {
                    let a = s.edges.partition_point(|c| c.src < lo);
                    let b = hi.map_or(s.edges.len(), |h| s.edges.partition_point(|c| c.src < h));
                    let w = if s.weights.is_empty() {
                        &[][..]
                    } else {
                        &s.weights[a..b]
                    };
                    (&s.edges[a..b], w)
                })
                .collect();
            merge_net(&slices, inside)
        })
        .collect();
    parts.concat()
}

/// One piece's changes over a source range, with their weights (empty if unweighted).
type Slice<'a> = (&'a [Change], &'a [f64]);

/// [`net_edges`] over one source range: `slices[k]` is piece k's changes there.
fn merge_net(slices: &[Slice<'_>], inside: &[Range<u32>]) -> Vec<EdgeChange> {
    let next = |k: usize, from: usize| {
        (slices[k].0[from..].iter())
            .position(|c| inside[k].contains(&c.commit))
            .map(|i| from + i)
    };
    let key = |k: usize, i: usize| {
        let c = &slices[k].0[i];
        Reverse((c.src, id_of(c.dst), k, i))
    };
    let weighted = |k: usize, i: usize| {
        let w = slices[k].1.get(i).copied().unwrap_or(0.0);
        (&slices[k].0[i], w)
    };
    let mut heap: BinaryHeap<_> = (0..slices.len())
        .filter_map(|k| next(k, 0).map(|i| key(k, i)))
        .collect();
    let mut out = Vec::new();
    let mut group: Option<(Weighted<'_>, Weighted<'_>)> = None;
    while let Some(Reverse((_, _, k, i))) = heap.pop() {
        if let Some(j) = next(k, i + 1) {
            heap.push(key(k, j));
        }
        let c = weighted(k, i);
        group = match group {
            Some((first, last))
                if (first.0.src, id_of(first.0.dst)) == (c.0.src, id_of(c.0.dst)) =>
            {
                debug_assert!(id_of(last.0.dst) == id_of(c.0.dst));
                Some((first, c))
            }
            Some((first, last)) => {
                out.extend(net_of(first, last));
                Some((c, c))
            }
            None => Some((c, c)),
        };
    }
    out.extend(group.and_then(|(first, last)| net_of(first, last)));
    out
}

/// A change with its weight (0 in an unweighted store).
type Weighted<'a> = (&'a Change, f64);

/// An edge's net change from its first change in a range to its last: its state just
/// before the first is its state at the start, just after the last its state at the end.
fn net_of(first: Weighted<'_>, last: Weighted<'_>) -> Option<EdgeChange> {
    let before = first.0.removes().then_some(first.1);
    let after = (!last.0.removes()).then_some(last.1);
    let same = before.map(f64::to_bits) == after.map(f64::to_bits);
    (!same).then_some(EdgeChange {
        src: first.0.src,
        dst: id_of(first.0.dst),
        before,
        after,
    })
}

/// Every vertex updated in the range, by id, with its states at both ends.
fn net_vertices(pieces: &[Piece<'_>], inside: &[Range<u32>]) -> Vec<VertexChange> {
    // (vertex, deleted) in commit order; the sort is stable, so it stays so per vertex.
    let mut vertices: Vec<(VertexId, bool)> = Vec::new();
    for (s, range) in pieces.iter().zip(inside) {
        let mine = s.vertices.iter().filter(|(c, _)| range.contains(c));
        vertices.extend(mine.map(|&(_, x)| (id_of(x), is_del(x))));
    }
    vertices.sort_by_key(|v| v.0);
    (vertices.chunk_by(|a, b| a.0 == b.0))
        .map(|g| {
            let (first, last) = (g[0], g[g.len() - 1]);
            // A vertex update changes its state: a delete finds it live, an insert not.
            VertexChange {
                v: first.0,
                before: first.1,
                after: !last.1,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::DEL;
    use crate::memtable::history::{Change, Commit};

    #[test]
    fn net_changes_keep_first_before_and_last_after_and_drop_round_trips() {
        let ch = |commit, src, dst, weight| (Change { commit, src, dst }, weight);
        let sealed = |commits, changes: Vec<(Change, f64)>, vertices| {
            let (edges, weights) = changes.into_iter().unzip();
            Sealed {
                commits,
                edges,
                weights,
                vertices,
            }
        };
        let commits = |lsns: &[u64]| {
            (lsns.iter())
                .map(|&lsn| Commit {
                    lsn,
                    time: 0,
                    vertices: 10,
                })
                .collect()
        };
        let a = sealed(
            commits(&[1, 2]),
            vec![ch(0, 1, 2, 1.0), ch(1, 1, 2 | DEL, 1.0), ch(0, 3, 4, 0.0)],
            vec![(0, 5), (1, 6 | DEL)],
        );
        let b = sealed(
            commits(&[3, 4]),
            vec![ch(0, 1, 2, 2.0), ch(1, 5, 6 | DEL, 3.0), ch(1, 5, 6, 4.0)],
            vec![(0, 5 | DEL), (1, 6)],
        );
        let (e, v) = between(&[&a, &b], 0, 4);
        assert_eq!(
            e,
            vec![
                EdgeChange {
                    src: 1,
                    dst: 2,
                    before: None,
                    after: Some(2.0)
                },
                EdgeChange {
                    src: 3,
                    dst: 4,
                    before: None,
                    after: Some(0.0)
                },
                EdgeChange {
                    src: 5,
                    dst: 6,
                    before: Some(3.0),
                    after: Some(4.0)
                },
            ]
        );
        // 5 came and went, 6 went and came back: no net change.
        assert!(v.iter().all(|c| c.before == c.after), "{v:?}");
        assert_eq!(v.len(), 2);
        let (e, v) = between(&[&a, &b], 1, 3);
        assert_eq!(
            e,
            vec![EdgeChange {
                src: 1,
                dst: 2,
                before: Some(1.0),
                after: Some(2.0)
            }]
        );
        assert_eq!(
            v,
            vec![
                VertexChange {
                    v: 5,
                    before: true,
                    after: false
                },
                VertexChange {
                    v: 6,
                    before: true,
                    after: false
                }
            ]
        );
        assert_eq!(between(&[&a, &b], 4, 4), (vec![], vec![]));
    }
}
