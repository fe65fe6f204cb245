//! Net changes between two commits: what [`crate::Graph::snapshot_at`] undoes and what a
//! diff lists.
//!
//! An edge changed between commits A < B by effective changes only, so its state just
//! before the first of them is its state at A, and just after the last its state at B.
//! Edges whose states at A and B agree (added then removed, a weight set back) drop out.

use crate::batch::{id_of, is_del};
use crate::memtable::history::Sealed;
use crate::types::VertexId;

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
    let inside = |s: &Sealed, c: u32| {
        let lsn = s.commits[c as usize].lsn;
        lsn > after && lsn <= upto
    };
    // (src, dst, order, removes, weight): `order` keeps commit order within an edge.
    let mut edges: Vec<(VertexId, VertexId, usize, bool, f64)> = Vec::new();
    let mut vertices: Vec<(VertexId, usize, bool)> = Vec::new();
    let mut order = 0usize;
    for s in pieces {
        for c in s.edges.iter().filter(|c| inside(s, c.commit)) {
            edges.push((c.src, id_of(c.dst), order, c.removes(), c.weight));
            order += 1;
        }
        for &(_, x) in s.vertices.iter().filter(|(c, _)| inside(s, *c)) {
            vertices.push((id_of(x), order, is_del(x)));
            order += 1;
        }
    }
    edges.sort_unstable_by_key(|e| (e.0, e.1, e.2));
    vertices.sort_unstable_by_key(|v| (v.0, v.1));
    let net_edges = (edges.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)))
        .filter_map(|g| {
            let (first, last) = (g[0], g[g.len() - 1]);
            let before = first.3.then_some(first.4);
            let after = (!last.3).then_some(last.4);
            let same = before.map(f64::to_bits) == after.map(f64::to_bits);
            (!same).then_some(EdgeChange {
                src: first.0,
                dst: first.1,
                before,
                after,
            })
        })
        .collect();
    let net_vertices = (vertices.chunk_by(|a, b| a.0 == b.0))
        .map(|g| {
            let (first, last) = (g[0], g[g.len() - 1]);
            // A vertex update changes its state: a delete finds it live, an insert not.
            VertexChange {
                v: first.0,
                before: first.2,
                after: !last.2,
            }
        })
        .collect();
    (net_edges, net_vertices)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::DEL;
    use crate::memtable::history::{Change, Commit};

    #[test]
    fn net_changes_keep_first_before_and_last_after_and_drop_round_trips() {
        let ch = |commit, src, dst, weight| Change {
            commit,
            src,
            dst,
            weight,
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
        let a = Sealed {
            commits: commits(&[1, 2]),
            edges: vec![ch(0, 1, 2, 1.0), ch(0, 3, 4, 0.0), ch(1, 1, 2 | DEL, 1.0)],
            vertices: vec![(0, 5), (1, 6 | DEL)],
        };
        let b = Sealed {
            commits: commits(&[3, 4]),
            edges: vec![ch(0, 1, 2, 2.0), ch(1, 5, 6 | DEL, 3.0), ch(1, 5, 6, 4.0)],
            vertices: vec![(0, 5 | DEL), (1, 6)],
        };
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
