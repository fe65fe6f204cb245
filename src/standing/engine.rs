//! The maintainer: one kernel's values brought from commit to commit, by the changes
//! between them where the store holds them, by a recompute where it does not.

use super::before::{Before, Old};
use super::changes::{Changes, Known};
use super::vertex_program::VertexProgram;
use super::{paths, rank, wcc, Change, Kind, Recomputed, Step, Value};
use crate::algo::kernel::{Kernel, Params};
use crate::history::net::{EdgeChange, VertexChange};
use crate::pregel::programs;
use crate::snapshot::{Patched, Snapshot};
use crate::store::follow::{Ahead, Applied, Follower, Net, NetChanges};
use crate::store::{CommitPoint, Point};
use crate::types::VertexId;
use crate::{Error, Graph, GraphView, Result};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

/// A kernel's state kept current; each kernel file implements it.
pub(crate) trait Maintained: Send + Sync {
    /// Computes the values on `g` from nothing.
    fn compute(&mut self, g: &Snapshot);
    /// Brings the values from `old` to `new`, which differ by `ch`; returns the vertices
    /// whose values may have changed (repeats allowed). `new` is patched only if the
    /// kernel [`Maintained::patches`].
    fn update(&mut self, old: &Old<'_>, new: &Patched, ch: &Changes) -> Vec<VertexId>;
    /// Whether [`Maintained::update`] reads a patched graph: only kernels that read the
    /// lists around the changes do (a kernel that sweeps the graph reads a patch slower
    /// than a run).
    fn patches(&self) -> bool {
        false
    }
    /// Called with the graph the values are of just before a patch changes it in place:
    /// the last moment that graph can be read exactly (the step's old graph is then the
    /// new one with the changes undone, which reads every changed edge as it is after).
    fn before_patch(&mut self, _g: &Patched) {}
    /// Vertex `v`'s value (below [`Maintained::len`]).
    fn value(&self, v: VertexId) -> Value;
    /// Vertices it holds values for.
    fn len(&self) -> usize;
    /// What its values are.
    fn kind(&self) -> Kind;
    /// DRAM its state takes, in bytes.
    fn bytes(&self) -> usize;
    /// Rounds its last computation ran (sweeps, supersteps), where it counts them.
    fn rounds(&self) -> u32 {
        0
    }
    /// How far a value may move unreported (0: every change is reported).
    fn slack(&self, _g: &Snapshot) -> f64 {
        0.0
    }
    /// The most edge changes worth bringing the values forward by in a graph of `edges`:
    /// a recompute reads every edge once, a step reads each change and the lists around
    /// it ([`LARGE_BATCH_SHARE`] unless the kernel's costs say otherwise).
    fn large_batch(&self, edges: u64) -> u64 {
        (edges / LARGE_BATCH_SHARE).max(64)
    }
}

/// Changes to more edges than one in this many of the graph's are not worth bringing
/// forward, unless the kernel says otherwise ([`Maintained::large_batch`]).
const LARGE_BATCH_SHARE: u64 = 8;

/// DRAM a patch takes per list entry, about: the entry (24 B), its share of the hash index
/// of a long list (16 B) and of the list itself.
const PATCH_ENTRY_BYTES: usize = 48;

/// The most list entries a patch holds before the next step seals instead (and patches
/// over the new snapshot from there): a sixteenth of the edges, within the store's
/// memtable budget (`memtable` bytes), at least 2^16 and at most 2^23 (about 400 MiB). A
/// patched vertex costs a probe of a hash index per neighbor read, and the seal that takes
/// the patch's place grows with it.
fn patch_budget(g: &Patched, memtable: usize) -> usize {
    let share = g.base().num_edges() as usize / 16;
    share
        .min(memtable / PATCH_ENTRY_BYTES)
        .clamp(1 << 16, 1 << 23)
}

/// The most edge updates a step patches; a step with more seals. A patch costs a list
/// update per edge and direction (about 0.13 µs an edge at Kron20, mostly cache misses),
/// a seal a sort, a resolution against the older runs and a new snapshot (about 0.3 µs).
const PATCH_MOST: usize = 1 << 16;

/// What a step by patch came to.
enum Patching {
    Done(Step),
    /// No batch since the last step.
    NothingNew,
    /// The step must seal: take a snapshot and read the net changes (those to a past
    /// commit, with the ids handed out, when the patch read them already and they did not
    /// fit: reading them again cost a rolling step at Kron20 23 ms).
    Seal(Option<Ahead>),
}

/// Patches `batches` over `g`, in order; returns each edge updated with its last state
/// (in an undirected graph, by the smaller end first), its state before unknown
/// ([`Known::After`]). Weights in the changes are as the store's history gives them: 0 in
/// unweighted stores.
fn patch(g: &mut Patched, batches: &[Arc<Applied>]) -> Changes {
    let undirected = g.is_undirected();
    let weighted = g.is_weighted();
    let updates: usize = batches.iter().map(|b| b.edge_updates()).sum();
    let mut last: FxHashMap<(VertexId, VertexId), Option<f64>> =
        FxHashMap::with_capacity_and_hasher(updates, Default::default());
    for b in batches {
        let n = g.num_vertices() as u64;
        if b.vertices > n {
            let fresh = (b.vertices - n) as usize;
            g.add_vertices(&b.new_ids[b.new_ids.len() - fresh..]);
        }
        b.for_each_edge(|u, v, state| {
            let key = match undirected && v < u {
                true => (v, u),
                false => (u, v),
            };
            last.insert(key, state);
        });
    }
    let set: Vec<_> = last.into_iter().map(|((u, v), s)| (u, v, s)).collect();
    g.set_edges(&set);
    let vertices = patch_vertices(g, batches);
    let as_change = |w: Option<f64>| w.map(|w| if weighted { w } else { 0.0 });
    let edges = (set.iter())
        .map(|&(src, dst, after)| EdgeChange {
            src,
            dst,
            before: None,
            after: as_change(after),
        })
        .collect();
    Changes {
        edges,
        vertices,
        known: Known::After,
    }
}

/// Marks the vertices `batches` delete or bring back in `g` (their edges are patched with
/// the rest); returns those whose existence changed, with their states before and after.
fn patch_vertices(g: &mut Patched, batches: &[Arc<Applied>]) -> Vec<VertexChange> {
    let mut last: FxHashMap<VertexId, (bool, bool)> = FxHashMap::default();
    for b in batches {
        b.for_each_vertex(|v, exists| {
            let before = g.vertex_exists(v);
            last.entry(v).or_insert((before, exists)).1 = exists;
        });
    }
    let mut changed: Vec<VertexChange> = (last.into_iter())
        .filter(|&(_, (before, after))| before != after)
        .map(|(v, (before, after))| VertexChange { v, before, after })
        .collect();
    changed.sort_unstable_by_key(|c| c.v);
    for c in &changed {
        g.set_vertex(c.v, c.after);
    }
    changed
}

/// Sets the net changes `net` over `g`: the ids handed out in between (`born`) exist
/// unless deleted by then (those past `g`'s added, with their external ids `externals`),
/// and the vertices and edges changed take their new states. Returns the changes as a
/// step reads them, both states known, the born vertices among them.
fn patch_net(g: &mut Patched, mut net: NetChanges, born: Range<u64>, externals: &[u64]) -> Changes {
    if !externals.is_empty() {
        g.add_vertices(externals);
    }
    let gone: FxHashMap<VertexId, bool> = (net.vertices.iter()).map(|c| (c.v, c.after)).collect();
    net.vertices
        .retain(|c| (c.v as u64) < born.start && c.before != c.after);
    for v in born.map(|v| v as VertexId) {
        let after = gone.get(&v).copied().unwrap_or(true);
        net.vertices.push(VertexChange {
            v,
            before: false,
            after,
        });
    }
    // A patch holds weights as the views read them: 1 in an unweighted graph.
    let weighted = g.is_weighted();
    let state = |w: Option<f64>| w.map(|w| if weighted { w } else { 1.0 });
    let set: Vec<_> = (net.edges.iter())
        .map(|e| (e.src, e.dst, state(e.after)))
        .collect();
    g.set_edges(&set);
    for c in &net.vertices {
        g.set_vertex(c.v, c.after);
    }
    Changes::from(net)
}

/// `net` with the vertices handed out in `born` marked as new where `new` has them: both
/// ends of a step between past commits hold the latest graph's ids, so a vertex handed
/// out in between (by an edge, or inserted) looks the same size to both, and pr-tol's
/// absorb missed its teleport share (a rolling pr-tol strayed 0.037, L1).
fn with_born(mut net: NetChanges, born: Range<u64>, new: &Snapshot) -> Changes {
    let n = new.num_vertices() as u64;
    net.vertices.sort_unstable_by_key(|c| c.v);
    let mut added = Vec::new();
    for v in (born.start..born.end.min(n)).map(|v| v as VertexId) {
        match net.vertices.binary_search_by_key(&v, |c| c.v) {
            Ok(i) => net.vertices[i].before = false,
            Err(_) => added.push(VertexChange {
                v,
                before: false,
                after: new.vertex_exists(v),
            }),
        }
    }
    net.vertices.extend(added);
    net.vertices.retain(|c| c.before != c.after);
    net.vertices.sort_unstable_by_key(|c| c.v);
    Changes::from(net)
}

/// The source a kernel's parameters give; an error if none.
fn source_of(kernel: Kernel, p: &Params) -> Result<VertexId> {
    (p.source).ok_or_else(|| Error::Invalid(format!("{kernel} needs a source vertex")))
}

/// A kernel kept current by hand: call [`Maintainer::step`] to bring it to a store's
/// newest commit. [`super::Standing`] does that on a thread of its own.
pub struct Maintainer {
    kernel: Kernel,
    state: Box<dyn Maintained>,
    /// The graph of the commit the values reflect: the last snapshot taken, and the edge
    /// changes since patched over it.
    graph: Option<Patched>,
    /// The commit of `graph`'s base snapshot (a seal of its patch reads it again as plain
    /// runs when it is a point's mask).
    base_lsn: u64,
    lsn: u64,
    /// The values last reported, as bits, and whether each vertex existed then.
    reported: Vec<u64>,
    present: Vec<bool>,
    follower: Option<Follower>,
}

/// The kernels that can be kept current, by name: the hand-written ones, then the shipped
/// monotone vertex programs.
pub const KERNELS: [Kernel; 7] = [
    Kernel::Wcc,
    Kernel::Bfs,
    Kernel::Sssp,
    Kernel::PrTol,
    Kernel::PregelCc,
    Kernel::PregelBfs,
    Kernel::PregelSssp,
];

impl Maintainer {
    /// A maintainer of `kernel` with parameters `p` (a source for `bfs` and `sssp`, the
    /// damping and tolerance for `pr-tol`; `pr` is kept as `pr-tol`); nothing is computed
    /// until the first step.
    pub fn new(kernel: Kernel, p: &Params) -> Result<Maintainer> {
        p.check()?;
        // A fixed number of iterations has no fixed point to keep near: pr is kept as
        // pr-tol, within the tolerance of the fixed point.
        let kernel = match kernel {
            Kernel::Pr => Kernel::PrTol,
            k => k,
        };
        let state: Box<dyn Maintained> = match kernel {
            Kernel::Wcc => Box::<wcc::Wcc>::default(),
            Kernel::Bfs | Kernel::Sssp => {
                let length = match kernel {
                    Kernel::Bfs => paths::Length::Hops,
                    _ => paths::Length::Weights,
                };
                Box::new(paths::Paths::new(source_of(kernel, p)?, length))
            }
            Kernel::PregelCc => Box::new(VertexProgram::new(
                programs::Components,
                Kind::Vertex,
                |&l| Value::Vertex(l),
            )),
            Kernel::PregelBfs => Box::new(VertexProgram::new(
                programs::Bfs {
                    source: source_of(kernel, p)?,
                },
                Kind::Int,
                |&d| Value::Int(d),
            )),
            Kernel::PregelSssp => Box::new(VertexProgram::new(
                programs::Sssp {
                    source: source_of(kernel, p)?,
                },
                Kind::Float,
                |&d| Value::Float(d),
            )),
            Kernel::PrTol => Box::new(rank::Rank::new(p.damping, p.tolerance)?),
            k => {
                let names: Vec<&str> = KERNELS.iter().map(|k| k.name()).collect();
                return Err(Error::Invalid(format!(
                    "{k} cannot be kept current (kernels that can: {})",
                    names.join(", ")
                )));
            }
        };
        Ok(Maintainer {
            kernel,
            state,
            graph: None,
            base_lsn: 0,
            lsn: 0,
            reported: Vec::new(),
            present: Vec::new(),
            follower: None,
        })
    }

    /// Brings the values to `g`'s newest commit; `None` when they reflect it already.
    /// Follows the same store from step to step; a new handle on it (a reader reopened
    /// to see a writer's newer commits) takes over from the old one.
    pub fn step(&mut self, g: &Graph) -> Result<Option<Step>> {
        self.step_upto(g, None)
    }

    /// [`Maintainer::step`] to the commit `at` names (the last at or before it) instead
    /// of the newest: a first step there starts the values at a past commit. An error if
    /// the store does not hold the changes since that commit, or if the values reflect a
    /// later commit already.
    pub fn step_upto(&mut self, g: &Graph, at: Option<Point>) -> Result<Option<Step>> {
        if !self.follower.as_ref().is_some_and(|f| f.is_of(g)) {
            self.follower = Some(g.follow()?);
        }
        self.step_followed(at)
    }

    /// [`Maintainer::step_upto`] with the follower already registered: by the batches
    /// applied since, patched over the graph, where the kernel reads a patched graph and
    /// they allow it; else by a snapshot and the net changes since the last step.
    pub(crate) fn step_followed(&mut self, at: Option<Point>) -> Result<Option<Step>> {
        let started = Instant::now();
        let patched = match at {
            None => self.try_patch(started)?,
            Some(p) => self.try_patch_net(p, started)?,
        };
        let read = match patched {
            Patching::Done(step) => return Ok(Some(step)),
            Patching::NothingNew => return Ok(None),
            Patching::Seal(read) => read,
        };
        let f = self.follower.as_ref().expect("a follower is registered");
        let (new, lsn) = match at {
            None => f.snapshot()?,
            Some(p) => match f.snapshot_upto(p)? {
                Some((s, c)) => (s, c.lsn),
                None => {
                    return Err(Error::Invalid(format!(
                        "the store no longer holds the changes since the commit {p} names"
                    )))
                }
            },
        };
        if self.graph.is_some() && lsn <= self.lsn {
            return match lsn == self.lsn {
                true => Ok(None),
                false => Err(Error::Invalid(format!(
                    "the values reflect LSN {} already, after LSN {lsn}",
                    self.lsn
                ))),
            };
        }
        let snapshot_s = started.elapsed().as_secs_f64();
        let changes = match (&self.graph, at) {
            (None, _) => Err(Recomputed::ChangesGone),
            (Some(_), None) => {
                (f.changes(self.lsn, lsn)?.map(Changes::from)).ok_or(Recomputed::ChangesGone)
            }
            (Some(_), Some(_)) if lsn - self.lsn > self.net_worth_reading(&new) => {
                Err(Recomputed::LargeBatch)
            }
            (Some(_), Some(p)) => {
                let ahead = match read {
                    Some(a) => Some(a),
                    None => f.ahead(p, self.lsn, Net::AtMost(u64::MAX))?,
                };
                (ahead.filter(|a| a.commit.lsn == lsn))
                    .and_then(|a| Some(with_born(a.net?, a.born, &new)))
                    .ok_or(Recomputed::ChangesGone)
            }
        };
        let changes_s = started.elapsed().as_secs_f64() - snapshot_s;
        self.base_lsn = lsn;
        // A point's in-lists copied out once, where they fit, for the sweeps of pr-tol:
        // a rolling step of 1 % changes at Kron20 swept the mask 0.49-0.59 s, the copy
        // (made included) 0.28-0.43 s.
        if self.kernel.sweeps_in_lists() {
            new.plan_point_sweeps(&[crate::snapshot::Dir::In]);
        }
        let mut step = self.advance(Patched::new(new), lsn, changes, started);
        step.phases.snapshot = snapshot_s;
        step.phases.changes = changes_s;
        self.reached(lsn);
        Ok(Some(step))
    }

    /// Tells the follower the values reflect `lsn`: what it kept before may go.
    fn reached(&self, lsn: u64) {
        if let Some(f) = &self.follower {
            f.reached(lsn);
        }
    }

    /// A step by the batches applied since the last one, patched over the graph, if the
    /// kernel reads a patched graph and the batches fit the patch's budget. Vertex deletes
    /// and inserts patch too (a delete brings the deletes of its edges): a stream that
    /// touches vertices must not seal a run per batch, which in a store keeping history
    /// wrote a history segment per batch (issue 65, item 5).
    fn try_patch(&mut self, started: Instant) -> Result<Patching> {
        let (Some(g), Some(f)) = (&self.graph, &self.follower) else {
            return Ok(Patching::Seal(None));
        };
        if !self.state.patches() {
            return Ok(Patching::Seal(None));
        }
        let Some((batches, lsn)) = f.applied_since(self.lsn)? else {
            return Ok(Patching::Seal(None));
        };
        if lsn == self.lsn {
            return Ok(Patching::NothingNew);
        }
        let updates: usize = batches.iter().map(|b| b.edge_updates()).sum();
        // New vertices are added to the patch with their external ids; a string-keyed
        // store's names are the snapshot's, so a new vertex there seals.
        let adds_ok = g.base().names().is_none() || batches.iter().all(|b| b.new_ids.is_empty());
        let fits = adds_ok
            && updates <= PATCH_MOST
            && g.entries() + 2 * updates <= patch_budget(g, f.memtable_budget()?)
            && (updates as u64) <= self.state.large_batch(g.base().num_edges());
        if !fits {
            return Ok(Patching::Seal(None));
        }
        let g = self.graph.as_mut().expect("checked above");
        let old_n = g.num_vertices();
        self.state.before_patch(g);
        let changes = patch(g, &batches);
        let changes_s = started.elapsed().as_secs_f64();
        let mut step = self.advance_patched(lsn, changes, old_n, started);
        step.phases.changes = changes_s;
        self.reached(lsn);
        Ok(Patching::Done(step))
    }

    /// A step to the commit `at` names by the net changes since the last step, patched
    /// over the graph, if the kernel reads a patched graph and they fit the patch: what a
    /// rolling computation steps forward by, as a snapshot of a past commit costs the
    /// undoing of every change after it. New vertices of a string-keyed store seal.
    fn try_patch_net(&mut self, at: Point, started: Instant) -> Result<Patching> {
        let (Some(g), Some(f)) = (&self.graph, &self.follower) else {
            return Ok(Patching::Seal(None));
        };
        if !self.state.patches() {
            return Ok(Patching::Seal(None));
        }
        let read = Net::AtMost(self.net_worth_reading(g.base()));
        let Some(ahead) = f.ahead(at, self.lsn, read)? else {
            return Ok(Patching::Seal(None));
        };
        let (c, born) = (ahead.commit, ahead.born);
        let net = match (c.lsn.cmp(&self.lsn), ahead.net) {
            (std::cmp::Ordering::Equal, _) => return Ok(Patching::NothingNew),
            (std::cmp::Ordering::Greater, Some(net)) => net,
            _ => return Ok(Patching::Seal(None)),
        };
        // A past graph has the latest graph's ids, those not yet handed out deleted; a
        // patch adds the ones past its own.
        let old_n = g.num_vertices();
        let added = (born.end as usize).saturating_sub(old_n);
        let fits = (added == 0 || !f.named()?)
            && g.entries() + 2 * net.edges.len() <= patch_budget(g, f.memtable_budget()?)
            && (net.edges.len() as u64) <= self.state.large_batch(g.base().num_edges());
        if !fits {
            let net = Some(net);
            return Ok(Patching::Seal(Some(Ahead {
                commit: c,
                born,
                net,
            })));
        }
        let externals = f.external_ids(old_n..old_n + added)?;
        let changes_s = started.elapsed().as_secs_f64();
        let g = self.graph.as_mut().expect("checked above");
        self.state.before_patch(g);
        let changes = patch_net(g, net, born, &externals);
        let mut step = self.advance_patched(c.lsn, changes, old_n, started);
        step.phases.changes = changes_s;
        self.reached(c.lsn);
        Ok(Patching::Done(step))
    }

    /// Applies one step by patched changes.
    fn advance_patched(&mut self, lsn: u64, ch: Changes, old_n: usize, t: Instant) -> Step {
        let kernel_t = Instant::now();
        let g = self.graph.as_ref().expect("patched after a first step");
        let old = Old::Undone(Before::new(g, &ch, old_n));
        let mut touched = self.state.update(&old, g, &ch);
        touched.extend(ch.vertices.iter().map(|c| c.v));
        touched.extend(old_n as VertexId..g.num_vertices() as VertexId);
        let kernel = kernel_t.elapsed().as_secs_f64();
        let step = Step {
            lsn,
            changes: Vec::new(),
            recomputed: None,
            initial: false,
            patched: true,
            seconds: 0.0,
            phases: Default::default(),
        };
        self.conclude(step, touched, kernel, t)
    }

    /// Ends a `step` whose kernel took `kernel` seconds: reports what changed among
    /// `touched`, and the values now reflect the step's commit.
    fn conclude(
        &mut self,
        mut step: Step,
        touched: Vec<VertexId>,
        kernel: f64,
        t: Instant,
    ) -> Step {
        step.changes = self.report(touched, step.initial);
        self.lsn = step.lsn;
        step.seconds = t.elapsed().as_secs_f64();
        step.phases.kernel = kernel;
        step.phases.rounds = self.state.rounds();
        step
    }

    /// The most records between two commits whose net changes are worth reading for a
    /// step over `g`: twice the large batch, since records that cancel out net to fewer
    /// changes; past that a step recomputes without reading them (23 ms at Kron20 for a
    /// 1 % round, a third of a wcc recompute).
    fn net_worth_reading(&self, g: &Snapshot) -> u64 {
        2 * self.state.large_batch(g.num_edges())
    }

    /// Applies one step on a new snapshot: incremental with `changes`, else a recompute
    /// (for the reason given in their place).
    fn advance(
        &mut self,
        new: Patched,
        lsn: u64,
        changes: std::result::Result<Changes, Recomputed>,
        t: Instant,
    ) -> Step {
        let first = self.graph.is_none();
        let kernel_t = Instant::now();
        let recomputed = match &changes {
            _ if first => None,
            Err(why) => Some(*why),
            Ok(ch) if ch.edges.len() as u64 > self.state.large_batch(new.base().num_edges()) => {
                Some(Recomputed::LargeBatch)
            }
            Ok(_) => None,
        };
        let prev = self.graph.take();
        let old_n = prev.as_ref().map_or(0, |g| g.num_vertices());
        let touched: Vec<VertexId> = match (&changes, &prev) {
            (Ok(ch), Some(prev)) if recomputed.is_none() => {
                let mut t = self.state.update(&Old::Was(prev), &new, ch);
                t.extend(ch.vertices.iter().map(|c| c.v));
                t.extend(old_n as VertexId..new.num_vertices() as VertexId);
                t
            }
            _ => {
                self.state.compute(new.base());
                (0..new.num_vertices() as VertexId).collect()
            }
        };
        let kernel = kernel_t.elapsed().as_secs_f64();
        self.graph = Some(match prev {
            // The previous graph's patch DRAM serves the new one (and the old snapshot goes).
            Some(mut g) if g.is_patched() => {
                g.rebase(new.base().clone());
                g
            }
            _ => new,
        });
        let step = Step {
            lsn,
            changes: Vec::new(),
            recomputed,
            initial: first,
            patched: false,
            seconds: 0.0,
            phases: Default::default(),
        };
        self.conclude(step, touched, kernel, t)
    }

    /// The values of `touched` that differ from what was last reported (by more than the
    /// kernel's slack), which become the reported ones.
    fn report(&mut self, mut touched: Vec<VertexId>, first: bool) -> Vec<Change> {
        let g = self.graph.as_ref().expect("reported after a step");
        let n = self.state.len();
        self.reported.resize(n, 0);
        self.present.resize(n, false);
        touched.sort_unstable();
        touched.dedup();
        let slack = self.state.slack(g.base());
        let kind = self.state.kind();
        // In parallel: a pr-tol step touches every vertex.
        let (state, reported, present) = (&self.state, &self.reported, &self.present);
        let moved: Vec<Change> = touched
            .par_iter()
            .filter_map(|&v| {
                let i = v as usize;
                let now = g.vertex_exists(v).then(|| state.value(v));
                let was = present[i].then(|| Value::from_bits(kind, reported[i]));
                let moved = match (was, now) {
                    (Some(a), Some(b)) => a.differs(b, slack),
                    (None, None) => false,
                    _ => true,
                };
                moved.then_some(Change {
                    vertex: v,
                    old: was,
                    new: now,
                })
            })
            .collect();
        for c in &moved {
            let i = c.vertex as usize;
            self.present[i] = c.new.is_some();
            self.reported[i] = c.new.map_or(0, Value::to_bits);
        }
        match first {
            true => Vec::new(),
            false => moved,
        }
    }

    /// A waiter on the store followed (after a first step).
    pub(crate) fn waiter(&self) -> crate::store::follow::Waiter {
        self.follower
            .as_ref()
            .expect("a follower is registered")
            .waiter()
    }

    /// Stops following: the store is let go of.
    pub(crate) fn release(&mut self) {
        self.follower = None;
    }

    /// The newest commit of the store followed (after a first step).
    pub fn last_commit(&self) -> Result<Option<CommitPoint>> {
        match &self.follower {
            Some(f) => f.last_commit(),
            None => Ok(None),
        }
    }

    /// DRAM the maintainer keeps between steps, in bytes: the kernel's state, the values
    /// last reported and the patch over its last snapshot (a step's work and the snapshot
    /// come on top). Counting the patch walks its lists.
    pub fn dram_bytes(&self) -> usize {
        let patch = self.graph.as_ref().map_or(0, Patched::bytes);
        self.state.bytes() + self.reported.capacity() * 8 + self.present.capacity() + patch
    }

    /// The kernel maintained.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The LSN of the commit the values reflect (0 before the first step).
    pub fn lsn(&self) -> u64 {
        self.lsn
    }

    /// A snapshot of the commit the values reflect (`None` before the first step). When
    /// steps since the last snapshot brought the values forward by patching edge changes
    /// over it, the patch is sealed into a DRAM run for it: [`Maintainer::graph`] reads the
    /// same graph without that cost. An error if the store was closed since.
    pub fn snapshot(&self) -> Result<Option<Snapshot>> {
        match (&self.graph, &self.follower) {
            (Some(g), Some(f)) => f.seal_patch(g, self.base_lsn).map(Some),
            (Some(g), None) if !g.is_patched() => Ok(Some(g.base().clone())),
            (Some(_), None) => Err(Error::Invalid(crate::store::follow::CLOSED.into())),
            (None, _) => Ok(None),
        }
    }

    /// The graph of the commit the values reflect: the last snapshot the maintainer took,
    /// with the edge changes since patched over it.
    pub fn graph(&self) -> Option<&Patched> {
        self.graph.as_ref()
    }

    /// Vertex `v`'s value at the commit reflected; `None` if it does not exist there.
    pub fn value(&self, v: VertexId) -> Option<Value> {
        let g = self.graph.as_ref()?;
        ((v as usize) < self.state.len() && g.vertex_exists(v)).then(|| self.state.value(v))
    }

    /// Every vertex's value at the commit reflected, by dense id (`None` where it does not
    /// exist).
    pub fn values(&self) -> Vec<Option<Value>> {
        (0..self.state.len() as VertexId)
            .map(|v| self.value(v))
            .collect()
    }

    /// The values as [`crate::algo::kernel::run`] gives the kernel's, by dense id: labels
    /// as external ids, 0 where no vertex exists.
    pub fn kernel_values(&self) -> crate::algo::kernel::Values {
        use crate::algo::kernel::Values;
        let values = self.values();
        let ext = |l: VertexId| self.graph.as_ref().map_or(0, |g| g.external_id(l) as i64);
        match self.state.kind() {
            Kind::Float => Values::Float(
                (values.iter())
                    .map(|v| match v {
                        Some(Value::Float(x)) => *x,
                        _ => 0.0,
                    })
                    .collect(),
            ),
            _ => Values::Int(
                (values.iter())
                    .map(|v| match v {
                        Some(Value::Int(x)) => *x,
                        Some(Value::Vertex(l)) => ext(*l),
                        _ => 0,
                    })
                    .collect(),
            ),
        }
    }
}
