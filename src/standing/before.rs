//! The graph before a step, read as the graph after it with the step's changes undone.
//!
//! A step trims on the old graph (a subtree cut off is found through the edges it had),
//! but a step brought by a patch has no old graph at hand: its [`Patched`] was changed in
//! place. [`Before`] reads the new graph, and answers for the vertices the changes reach
//! from an index of them, built on first use (most steps never read the old graph).
//!
//! A patched step's changes do not know each edge's state before ([`Known::After`]): then
//! every updated edge reads as present before, so [`Before`] holds the old graph's edges
//! and perhaps more (its degrees and edge count are bounds). That is all trimming needs: it
//! walks a subtree through tree edges, which were all there, and checks each one found.

use super::changes::{Changes, Known};
use crate::snapshot::Patched;
use crate::types::VertexId;
use crate::GraphView;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// Per vertex, its changed neighbors in one direction (ascending) with their states before
/// and after.
type Index = FxHashMap<VertexId, Vec<(VertexId, Option<f64>, bool)>>;

/// The graph before a step; implements [`GraphView`].
pub(crate) struct Before<'a> {
    new: &'a Patched,
    ch: &'a Changes,
    /// Vertices before the step (the new graph may have more).
    n: usize,
    /// Per direction (out, in): the index of the changes, once built.
    index: OnceLock<[Index; 2]>,
}

impl<'a> Before<'a> {
    /// The graph of `n` vertices that `ch` turned into `new`.
    pub(crate) fn new(new: &'a Patched, ch: &'a Changes, n: usize) -> Before<'a> {
        Before {
            new,
            ch,
            n,
            index: OnceLock::new(),
        }
    }

    fn index(&self) -> &[Index; 2] {
        self.index.get_or_init(|| {
            let mut ix: [Index; 2] = Default::default();
            let undirected = self.new.is_undirected();
            let weighted = self.new.is_weighted();
            let known = self.ch.known;
            for e in &self.ch.edges {
                // Weights as the views read them: 1 in unweighted graphs; an edge whose
                // weight before is not known reads as its weight after, or NaN.
                let before = match known {
                    Known::Both => e.before,
                    Known::After => Some(e.after.unwrap_or(f64::NAN)),
                };
                let before = before.map(|w| if weighted { w } else { 1.0 });
                let after = e.after.is_some();
                ix[0].entry(e.src).or_default().push((e.dst, before, after));
                match undirected {
                    true if e.src != e.dst => {
                        ix[0].entry(e.dst).or_default().push((e.src, before, after))
                    }
                    true => {}
                    false => ix[1].entry(e.dst).or_default().push((e.src, before, after)),
                }
            }
            for l in ix.iter_mut().flat_map(|i| i.values_mut()) {
                l.sort_unstable_by_key(|c| c.0);
            }
            ix
        })
    }

    /// The changes at `v` in direction `d` (out for 0).
    fn changed(&self, d: usize, v: VertexId) -> Option<&[(VertexId, Option<f64>, bool)]> {
        let d = if self.new.is_undirected() { 0 } else { d };
        self.index()[d].get(&v).map(|l| &l[..])
    }

    /// Calls `f` on each neighbor of `v` in direction `d` before the step, with its weight,
    /// until it returns true; whether it did.
    fn find_dir<F: FnMut(VertexId, f64) -> bool>(&self, d: usize, v: VertexId, mut f: F) -> bool {
        if (v as usize) >= self.n {
            return false;
        }
        let changed = self.changed(d, v).unwrap_or(&[]);
        let unchanged = |x: VertexId| changed.binary_search_by_key(&x, |c| c.0).is_err();
        let found = match d {
            0 => {
                let mut found = false;
                self.new.for_each_out_weighted(v, |x, w| {
                    found = found || (unchanged(x) && f(x, w));
                });
                found
            }
            _ => self.new.find_in(v, |x| unchanged(x) && f(x, 1.0)),
        };
        found || changed.iter().any(|&(x, b, _)| b.is_some_and(|w| f(x, w)))
    }
}

impl GraphView for Before<'_> {
    fn num_vertices(&self) -> usize {
        self.n
    }
    fn num_edges(&self) -> u64 {
        let mut e = self.new.num_edges() as i64;
        for c in &self.ch.edges {
            let sides = match self.new.is_undirected() && c.src != c.dst {
                true => 2,
                false => 1,
            };
            let was = self.ch.known == Known::After || c.before.is_some();
            e += sides * (was as i64 - c.after.is_some() as i64);
        }
        e as u64
    }
    fn is_undirected(&self) -> bool {
        self.new.is_undirected()
    }
    fn vertex_exists(&self, v: VertexId) -> bool {
        match self.ch.vertices.iter().find(|c| c.v == v) {
            Some(c) => c.before,
            None => (v as usize) < self.n && self.new.vertex_exists(v),
        }
    }
    fn out_degree(&self, v: VertexId) -> usize {
        let mut d = self.new.out_degree(v) as i64;
        for &(_, b, a) in self.changed(0, v).unwrap_or(&[]) {
            d += b.is_some() as i64 - a as i64;
        }
        d as usize
    }
    fn in_degree(&self, v: VertexId) -> usize {
        let mut d = self.new.in_degree(v) as i64;
        for &(_, b, a) in self.changed(1, v).unwrap_or(&[]) {
            d += b.is_some() as i64 - a as i64;
        }
        d as usize
    }
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.find_dir(0, v, |x, _| {
            f(x);
            false
        });
    }
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, mut f: F) {
        self.find_dir(1, v, |x, _| {
            f(x);
            false
        });
    }
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        self.find_dir(0, v, |x, _| f(x))
    }
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, mut f: F) -> bool {
        self.find_dir(1, v, |x, _| f(x))
    }
    fn is_weighted(&self) -> bool {
        self.new.is_weighted()
    }
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, mut f: F) {
        self.find_dir(0, v, |x, w| {
            f(x, w);
            false
        });
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        let changed = self.changed(0, u).unwrap_or(&[]);
        match changed.binary_search_by_key(&v, |c| c.0) {
            Ok(i) => changed[i].1.is_some(),
            Err(_) => (u as usize) < self.n && self.new.has_edge(u, v),
        }
    }
}

/// The graph before a step: the previous graph itself where the step took a new snapshot,
/// else the patched graph with the step's changes undone ([`Before`]).
pub(crate) enum Old<'a> {
    /// The graph the values were of.
    Was(&'a Patched),
    /// The graph after the step, the changes undone.
    Undone(Before<'a>),
}

/// Calls `$body` with `$g` bound to the graph an [`Old`] holds.
macro_rules! on_old {
    ($o:expr, |$g:ident| $body:expr) => {
        match $o {
            Old::Was($g) => $body,
            Old::Undone($g) => $body,
        }
    };
}

impl GraphView for Old<'_> {
    fn num_vertices(&self) -> usize {
        on_old!(self, |g| g.num_vertices())
    }
    fn num_edges(&self) -> u64 {
        on_old!(self, |g| g.num_edges())
    }
    fn is_undirected(&self) -> bool {
        on_old!(self, |g| g.is_undirected())
    }
    fn vertex_exists(&self, v: VertexId) -> bool {
        on_old!(self, |g| g.vertex_exists(v))
    }
    fn out_degree(&self, v: VertexId) -> usize {
        on_old!(self, |g| g.out_degree(v))
    }
    fn in_degree(&self, v: VertexId) -> usize {
        on_old!(self, |g| g.in_degree(v))
    }
    fn for_each_out<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
        on_old!(self, |g| g.for_each_out(v, f))
    }
    fn for_each_in<F: FnMut(VertexId)>(&self, v: VertexId, f: F) {
        on_old!(self, |g| g.for_each_in(v, f))
    }
    fn find_out<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        on_old!(self, |g| g.find_out(v, f))
    }
    fn find_in<F: FnMut(VertexId) -> bool>(&self, v: VertexId, f: F) -> bool {
        on_old!(self, |g| g.find_in(v, f))
    }
    fn is_weighted(&self) -> bool {
        on_old!(self, |g| g.is_weighted())
    }
    fn for_each_out_weighted<F: FnMut(VertexId, f64)>(&self, v: VertexId, f: F) {
        on_old!(self, |g| g.for_each_out_weighted(v, f))
    }
    fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        on_old!(self, |g| g.has_edge(u, v))
    }
}
