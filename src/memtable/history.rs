//! What a memtable keeping history records, and what its seal makes of it.
//!
//! A run holds the *net* effect of its LSN range; the graph as of a commit inside that
//! range is gone once the memtable is sealed. A memtable keeping history therefore also
//! records every commit (its LSN, time and vertex count) and which commit each buffered
//! update belongs to (marks in the block logs), and its seal emits every *effective*
//! change in commit order: an edge that appeared, an edge that went (with the weight it
//! had), a weight that changed (the old weight's removal, then the new weight's addition).
//! Inserting an edge that exists and deleting one that does not change nothing and leave
//! nothing. Vertex updates reach the memtable only when they change something (the writer
//! logs a revival only of a deleted vertex, a delete only of a live one), so they are kept
//! as they come.
//!
//! From these, the graph as of any commit is the graph after the memtable with the changes
//! after that commit undone, and the changes between two commits are the ones between them.

use crate::batch::{id_of, is_del, DEL};
use crate::run::DirData;
use crate::types::VertexId;

/// A commit point a memtable holds updates of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Commit {
    /// The LSN after its last record.
    pub lsn: u64,
    /// When it committed (Unix nanoseconds).
    pub time: i64,
    /// Dense ids handed out once it had committed: the vertices that exist or existed.
    pub vertices: u64,
}

/// One effective change of an edge. Its weight, in a weighted store, sits beside it
/// ([`Sealed::weights`]): an unweighted store's changes take 12 bytes each, not 24, and a
/// seal emits one per buffered update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Zeroable)]
pub struct Change {
    /// The commit it happened in: its position among the history's commits.
    pub commit: u32,
    /// The edge's source (in an undirected store, the smaller end).
    pub src: VertexId,
    /// The edge's destination, with [`DEL`] when the edge went.
    pub dst: VertexId,
}

/// Effective changes as a seal emits them, with the weights of a weighted store's beside
/// them (the weight an edge got, or had when it went; empty in an unweighted store).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Changes {
    /// The changes.
    pub edges: Vec<Change>,
    /// Their weights, parallel to `edges` in a weighted store, else empty.
    pub weights: Vec<f64>,
}

impl Changes {
    /// Room for `n` changes (and weights when `weighted`).
    pub fn with_capacity(n: usize, weighted: bool) -> Changes {
        Changes {
            edges: Vec::with_capacity(n),
            weights: Vec::with_capacity(if weighted { n } else { 0 }),
        }
    }

    /// Appends `c` with its weight `w` (dropped when `weighted` is false).
    #[inline]
    pub fn push(&mut self, c: Change, w: f64, weighted: bool) {
        self.edges.push(c);
        if weighted {
            self.weights.push(w);
        }
    }

    /// `parts` one after another, copied in parallel into an output the allocator zeroes
    /// lazily (its pages are first touched by the copying threads), each part's buffers
    /// freed once copied: a bulk load's changes are hundreds of MB, joined as its flush
    /// waits.
    pub fn join(parts: Vec<Changes>) -> Changes {
        use rayon::prelude::*;
        let n: usize = parts.iter().map(|p| p.edges.len()).sum();
        let weighted = parts.iter().any(|p| !p.weights.is_empty());
        debug_assert!(
            !weighted || parts.iter().all(|p| p.weights.len() == p.edges.len()),
            "a weighted store's changes all carry weights"
        );
        let mut out = Changes {
            edges: bytemuck::zeroed_vec(n),
            weights: if weighted { vec![0.0; n] } else { Vec::new() },
        };
        let mut slots = Vec::with_capacity(parts.len());
        let (mut edges, mut weights) = (&mut out.edges[..], &mut out.weights[..]);
        for p in &parts {
            let (e, rest) = std::mem::take(&mut edges).split_at_mut(p.edges.len());
            edges = rest;
            let (w, rest) = std::mem::take(&mut weights).split_at_mut(p.weights.len());
            weights = rest;
            slots.push((e, w));
        }
        parts.into_par_iter().zip(slots).for_each(|(p, (e, w))| {
            e.copy_from_slice(&p.edges);
            w.copy_from_slice(&p.weights);
        });
        out
    }
}

impl Change {
    /// Whether the edge went (else it appeared, or got this weight).
    pub fn removes(&self) -> bool {
        is_del(self.dst)
    }
}

/// The history a seal emits: the memtable's commits and their effective changes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sealed {
    /// The commits, in order.
    pub commits: Vec<Commit>,
    /// Edge changes ordered by source, destination, then commit (a weight change's
    /// removal before its addition): the order the seal emits them in, vertex by vertex.
    pub edges: Vec<Change>,
    /// In a weighted store, each edge change's weight (parallel to `edges`); else empty.
    pub weights: Vec<f64>,
    /// Vertex updates ordered by commit, arrival order within one: the commit's position
    /// and the vertex, with [`DEL`] when it was deleted (else inserted or revived).
    pub vertices: Vec<(u32, VertexId)>,
}

impl Sealed {
    /// The history from its commit `k` on: the commits before it and their changes gone,
    /// the rest renumbered.
    pub fn from_commit(&self, k: usize) -> Sealed {
        let k32 = k as u32;
        let kept = || (self.edges.iter().enumerate()).filter(|(_, c)| c.commit >= k32);
        Sealed {
            commits: self.commits[k.min(self.commits.len())..].to_vec(),
            edges: kept()
                .map(|(_, c)| Change {
                    commit: c.commit - k32,
                    ..*c
                })
                .collect(),
            weights: match self.weights.is_empty() {
                true => Vec::new(),
                false => kept().map(|(i, _)| self.weights[i]).collect(),
            },
            vertices: (self.vertices.iter())
                .filter(|v| v.0 >= k32)
                .map(|&(c, x)| (c - k32, x))
                .collect(),
        }
    }

    /// The history of consecutive pieces (in LSN order) as one: their commits in order,
    /// each piece's changes renumbered after the commits before it, the edge changes
    /// ordered by source and destination again (a stable sort keeps commit order within
    /// an edge: the pieces come in LSN order, each in commit order).
    pub fn concat(pieces: &[&Sealed]) -> Sealed {
        use rayon::prelude::*;
        let mut out = Sealed::default();
        for p in pieces {
            let base = out.commits.len() as u32;
            debug_assert!(
                (out.commits.last().zip(p.commits.first())).is_none_or(|(a, b)| a.lsn < b.lsn),
                "pieces are concatenated in LSN order"
            );
            out.commits.extend_from_slice(&p.commits);
            (out.edges).extend(p.edges.iter().map(|c| Change {
                commit: c.commit + base,
                ..*c
            }));
            out.weights.extend_from_slice(&p.weights);
            (out.vertices).extend(p.vertices.iter().map(|&(c, v)| (c + base, v)));
        }
        if out.weights.is_empty() {
            out.edges.par_sort_by_key(|c| (c.src, id_of(c.dst)));
            return out;
        }
        let mut both: Vec<(Change, f64)> = out.edges.into_iter().zip(out.weights).collect();
        both.par_sort_by_key(|(c, _)| (c.src, id_of(c.dst)));
        (out.edges, out.weights) = both.into_iter().unzip();
        out
    }

    /// Edge change `i`'s weight (0 in an unweighted store).
    #[inline]
    pub fn weight(&self, i: usize) -> f64 {
        self.weights.get(i).copied().unwrap_or(0.0)
    }

    /// DRAM it takes, in bytes.
    pub fn bytes(&self) -> usize {
        self.commits.len() * std::mem::size_of::<Commit>()
            + self.edges.len() * std::mem::size_of::<Change>()
            + self.weights.len() * 8
            + self.vertices.len() * std::mem::size_of::<(u32, VertexId)>()
    }
}

/// A memtable's record of its commits.
#[derive(Default)]
pub(super) struct Log {
    pub commits: Vec<Commit>,
    /// `(first vertex update, commit)` where each commit's vertex updates start.
    pub vertex_marks: Vec<(u32, u32)>,
}

impl Log {
    /// The position the commit being applied will take.
    pub fn ordinal(&self) -> u32 {
        self.commits.len() as u32
    }

    /// Each vertex update's commit, `vertex_ops` long.
    pub fn vertex_commits(&self, n: usize) -> Vec<u32> {
        let mut out = Vec::with_capacity(n);
        for (k, &(at, c)) in self.vertex_marks.iter().enumerate() {
            let end = self.vertex_marks.get(k + 1).map_or(n, |m| m.0 as usize);
            out.resize(out.len() + (end - at as usize), c);
        }
        debug_assert_eq!(out.len(), n, "every vertex update belongs to a commit");
        out
    }
}

/// Reused scratch for [`emit`] and [`emit_inserts`].
#[derive(Default)]
pub(super) struct Scratch {
    keyed: Vec<(VertexId, u32)>,
    packed: Vec<Packed>,
}

/// A neighbor and a commit as one integer that sorts as the pair does: one comparison
/// per step of the seal's largest sort, where the pair took two.
#[cfg(not(feature = "wide-ids"))]
type Packed = u64;
#[cfg(feature = "wide-ids")]
type Packed = u128;

fn pack(x: VertexId, commit: u32) -> Packed {
    (Packed::from(x) << 32) | Packed::from(commit)
}

fn unpack(k: Packed) -> (VertexId, u32) {
    ((k >> 32) as VertexId, k as u32)
}

/// What [`emit`] needs of one vertex's buffered updates.
pub(super) struct Updates<'a> {
    /// The vertex.
    pub v: VertexId,
    /// Its updates in arrival order (neighbors, [`DEL`] on deletes).
    pub entries: &'a [VertexId],
    /// Each update's commit.
    pub commits: &'a [u32],
    /// Each update's weight (empty in unweighted stores).
    pub weights: &'a [f64],
}

/// The seal's common case, a vertex no older run holds with only inserts (unweighted):
/// appends its distinct neighbors, ascending, to `adds` and their first insertions to
/// `out`, from one sort of the updates with their commits.
pub(super) fn emit_inserts(
    u: &Updates<'_>,
    undirected: bool,
    scratch: &mut Scratch,
    adds: &mut Vec<VertexId>,
    out: &mut Changes,
) -> usize {
    let keyed = &mut scratch.packed;
    keyed.clear();
    keyed.extend(u.entries.iter().zip(u.commits).map(|(&x, &c)| pack(x, c)));
    keyed.sort_unstable();
    let before = adds.len();
    for g in keyed.chunk_by(|a, b| a >> 32 == b >> 32) {
        let (x, commit) = unpack(g[0]);
        adds.push(x);
        if !undirected || x >= u.v {
            out.edges.push(Change {
                commit,
                src: u.v,
                dst: x,
            });
        }
    }
    adds.len() - before
}

/// A vertex's updates resolved against the older runs: what its run lists (adds with
/// their weights, and tombstones), each ascending.
#[derive(Default)]
pub(super) struct Resolved {
    pub adds: Vec<VertexId>,
    pub addw: Vec<f64>,
    pub tombs: Vec<VertexId>,
}

/// Appends the effective changes of `u`'s updates to `out`, neighbor by neighbor, given
/// its lists in the older runs `prior` (newest first, each with `v`'s index there), and
/// resolves them into `res` from the same lookup of each neighbor's older state (the seal
/// would otherwise look each up twice). In an undirected store only the smaller end of an
/// edge emits it.
pub(super) fn emit(
    u: &Updates<'_>,
    prior: &[(&DirData, usize)],
    undirected: bool,
    scratch: &mut Scratch,
    (out, res): (&mut Changes, &mut Resolved),
) {
    debug_assert_eq!(
        u.entries.len(),
        u.commits.len(),
        "every update has its commit"
    );
    let keyed = &mut scratch.keyed;
    keyed.clear();
    keyed.extend((u.entries.iter().enumerate()).map(|(i, &x)| (id_of(x), i as u32)));
    keyed.sort_unstable();
    let weighted = !u.weights.is_empty();
    res.adds.clear();
    res.addw.clear();
    res.tombs.clear();
    for g in keyed.chunk_by(|a, b| a.0 == b.0) {
        let x = g[0].0;
        let before = weight_before(prior, x);
        resolve(u, x, g[g.len() - 1].1 as usize, before.is_some(), res);
        if undirected && x < u.v {
            continue;
        }
        let mut state = before;
        for &(_, i) in g {
            let i = i as usize;
            let commit = u.commits[i];
            let w = if weighted { u.weights[i] } else { 0.0 };
            let change = |dst| Change {
                commit,
                src: u.v,
                dst,
            };
            match (is_del(u.entries[i]), state) {
                (false, None) => out.push(change(x), w, weighted),
                (false, Some(old)) if weighted && old.to_bits() != w.to_bits() => {
                    out.push(change(x | DEL), old, weighted);
                    out.push(change(x), w, weighted);
                }
                (true, Some(old)) => out.push(change(x | DEL), old, weighted),
                _ => continue,
            }
            state = (!is_del(u.entries[i])).then_some(w);
        }
    }
}

/// What the run lists for neighbor `x`, whose last update is `u`'s `last`, given whether
/// the older runs held the edge: an add for an insert of an absent edge (or, weighted, a
/// tombstone and an add that replace its weight), a tombstone for a delete of a present
/// one, nothing else.
fn resolve(u: &Updates<'_>, x: VertexId, last: usize, existed: bool, res: &mut Resolved) {
    let weighted = !u.weights.is_empty();
    let w = if weighted { u.weights[last] } else { 0.0 };
    match (is_del(u.entries[last]), existed) {
        (false, false) => {
            res.adds.push(x);
            res.addw.push(w);
        }
        (true, true) => res.tombs.push(x),
        (false, true) if weighted => {
            res.tombs.push(x);
            res.adds.push(x);
            res.addw.push(w);
        }
        _ => {}
    }
}

/// Whether `x` was a neighbor before the memtable, and its weight then: the newest run
/// that mentions it decides.
fn weight_before(prior: &[(&DirData, usize)], x: VertexId) -> Option<f64> {
    for &(dd, i) in prior {
        if let Some(p) = dd.position_at(i, x) {
            return Some(dd.wts_at(i).get(p).copied().unwrap_or(0.0));
        }
        if dd.tombs_at(i).binary_search(&x).is_ok() {
            return None;
        }
    }
    None
}
