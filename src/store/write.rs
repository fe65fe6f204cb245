//! The write path: external ids to dense ids, memtable apply, WAL submit, freeze.

use super::maintain::Merges;
use super::{CommitPoint, Frozen, Inner, Ticket, Writer};
use crate::batch::{id_of, is_del, DenseBatch, Section, DEL};
use crate::memtable::Memtable;
use crate::run::Dir;
use crate::snapshot::{GraphView, Snapshot};
use crate::types::{bits, Record, VertexId};
use crate::Result;
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

const MISSING: VertexId = VertexId::MAX;

/// What kinds of records a batch holds, as its lookup pass saw them.
#[derive(Default, Clone, Copy)]
struct Seen {
    /// Some insert names a weight.
    weighted: bool,
    /// Some record inserts or deletes a vertex.
    vertex_ops: bool,
    /// Some record names an id the dictionary does not hold yet.
    missing: bool,
}

impl Seen {
    fn or(self, o: Seen) -> Seen {
        Seen {
            weighted: self.weighted | o.weighted,
            vertex_ops: self.vertex_ops | o.vertex_ops,
            missing: self.missing | o.missing,
        }
    }
}

/// The two ids a record names (a vertex record names its vertex twice).
fn ends(r: &Record) -> (u64, u64) {
    match *r {
        Record::Insert(s, d) | Record::Delete(s, d) | Record::InsertWeighted(s, d, _) => (s, d),
        Record::InsertVertex(v) | Record::DeleteVertex(v) => (v, v),
    }
}

/// The weight an insert carries (1 when it names none).
fn weight_of(r: &Record) -> f64 {
    match *r {
        Record::InsertWeighted(_, _, w) => w,
        _ => 1.0,
    }
}

/// Brings vertex `x` back if it is deleted (an insert naming it does): logs its revival.
/// Whether it was deleted.
fn revive(w: &mut Writer, batch: &mut DenseBatch, x: VertexId) -> bool {
    if !bits::get(&w.deleted, x) {
        return false;
    }
    set_deleted(&mut w.deleted, x, false);
    batch.push_vertex(x, false);
    true
}

fn set_deleted(deleted: &mut Arc<Vec<u64>>, v: VertexId, del: bool) {
    bits::assign(Arc::make_mut(deleted), v, del);
}

/// When a batch submitted now commits: at `at` if given, which may not come before the
/// last commit; else at the wall clock, or at the last commit's time if the clock is
/// behind it (a clock stepped back must not make history go backwards).
fn commit_time(w: &Writer, at: Option<i64>) -> Result<i64> {
    let last = w.last_commit.map(|c| c.unix_nanos);
    match (at, last) {
        (Some(t), Some(l)) if t < l => Err(crate::Error::Invalid(format!(
            "commit time {} is before the store's last commit, at {}: commit times never go backwards",
            crate::time::show(t),
            crate::time::show(l)
        ))),
        (Some(t), _) => Ok(t),
        (None, l) => Ok(crate::time::now().max(l.unwrap_or(i64::MIN))),
    }
}

/// Frozen memtables and runs sealed into DRAM (a snapshot seals what it reads) waiting to
/// become run files, past which writers wait for the flusher: each becomes a run file with
/// an `fdatasync` of its own, and a writer that snapshots after every small batch makes
/// them faster than that.
const MAX_PENDING_RUNS: usize = 64;

/// Why the active memtable is frozen: whether the flusher must write it out now.
#[derive(Clone, Copy)]
pub(super) enum Freeze {
    /// It reached its budget, or a flush or close asked: the flusher writes it out.
    Full,
    /// A reader (a snapshot, a follower, the history's pieces) seals what it reads into
    /// DRAM. That run is written out with the next full memtable, as one run file, one
    /// segment and one commit: a standing kernel whose steps seal every few thousand
    /// updates wrote a file, a segment and a manifest commit per step when each woke the
    /// flusher.
    ForReading,
}

/// What becomes of the active memtable after a batch.
enum Next {
    /// It takes the next batch too.
    Keep,
    /// It is frozen for the flusher to write out ([`Freeze::Full`]).
    Freeze,
    /// The writer seals it into a tail for readers in other processes (`tails.rs`).
    Tail,
}

/// Runs pending (frozen or sealed into DRAM) at which a reader's freeze wakes the flusher
/// after all: about the runs a level holds before it is merged, so a reader snapshotting
/// often leaves views no longer than the flusher's levels would.
const READER_RUNS_KEPT: usize = 8;

fn pending_runs(st: &super::State) -> usize {
    st.frozen.len() + st.runs.iter().filter(|r| r.in_dram()).count()
}

impl Inner {
    fn pending_runs(&self) -> usize {
        pending_runs(&self.state.lock().unwrap())
    }

    pub(super) fn submit(&self, recs: &[Record], at: Option<i64>) -> Result<Ticket> {
        self.check_poisoned()?;
        if self.opts.read_only {
            return Err(crate::Error::Invalid(
                "the store was opened read-only".into(),
            ));
        }
        self.check_key_numbers(recs)?;
        self.claim_log()?;
        let mut w = self.writer.lock().unwrap();
        let time = commit_time(&w, at)?;
        if recs.is_empty() {
            return Ok(Ticket(w.next_lsn));
        }
        let mut batch = self.translate_and_apply(&mut w, recs)?;
        // An LSN counts the records submitted, whatever they change (FORMAT.md, "LSNs"):
        // a batch that changes nothing still commits, so that the count stays one a user
        // can compute from the input.
        let records = recs.len() as u64;
        batch.span = Some(records);
        batch.time = Some(time);
        let first = w.next_lsn;
        let end = match &self.wal {
            Some(wal) => wal.submit(&batch, first).inspect_err(|e| self.poison(e))?,
            None => first + records,
        };
        assert_eq!(end, first + records, "the log numbers each record once");
        w.next_lsn = end;
        w.mem.max_lsn = end;
        w.mem.last_time = Some(time);
        let ids = self.dict.read().unwrap().len() as u64;
        w.mem.end_commit(end, time, ids);
        w.last_commit = Some(CommitPoint {
            lsn: end,
            unix_nanos: time,
        });
        self.batch_applied(first, end, ids, &batch);
        let next = self.memtable_next(&w);
        match next {
            Next::Freeze => _ = self.freeze_locked(&mut w, Freeze::Full),
            Next::Tail => _ = self.freeze_locked(&mut w, Freeze::ForReading),
            Next::Keep => {}
        }
        // Wait without the writer lock: snapshots need it, and the wait is for flushes.
        drop(w);
        let flush_due = match next {
            Next::Tail => self.publish_tails(),
            _ => {
                self.list_durable_tails();
                false
            }
        };
        if matches!(next, Next::Freeze) || flush_due || self.pending_runs() > MAX_PENDING_RUNS {
            self.backpressure()?;
        }
        Ok(Ticket(end))
    }

    /// What becomes of the active memtable after a batch (`writer` held).
    fn memtable_next(&self, w: &Writer) -> Next {
        let freeze = self.freeze_bytes();
        let bytes = w.mem.bytes();
        if bytes >= freeze {
            return Next::Freeze;
        }
        if self.tails_wanted(w) {
            // Sealed by the writer itself, after the frozen memtables the flusher seals:
            // while one waits, the writer would seal it too, and wait as long.
            let due = bytes >= super::tails::tail_bytes(freeze) && !self.frozen_waiting();
            return if due { Next::Tail } else { Next::Keep };
        }
        // Runs readers sealed into DRAM wait for the next full memtable to be written out
        // with it (one run file, one segment, one commit), so they count towards it; one
        // such freeze at a time, or a flusher behind them froze a memtable per batch, each
        // a run file of its own.
        let with_dram = !w.mem.is_empty() && bytes + self.dram_run_bytes() >= freeze;
        match with_dram && !self.frozen_waiting() {
            true => Next::Freeze,
            false => Next::Keep,
        }
    }

    /// In a string-keyed store, refuses records naming a number no interned name has: the
    /// store could not say which vertex it is, and would not open again.
    fn check_key_numbers(&self, recs: &[Record]) -> Result<()> {
        let Some(keys) = &self.keys else {
            return Ok(());
        };
        let max = recs
            .iter()
            .map(|r| {
                let (s, d) = ends(r);
                s.max(d)
            })
            .max();
        let n = keys.len() as u64;
        match max {
            Some(m) if m >= n => Err(crate::Error::Invalid(format!(
                "vertex {m} is not the number of an interned name (the store has {n}): a store with string keys takes names (Graph::intern, Graph::submit_named)"
            ))),
            _ => Ok(()),
        }
    }

    /// Translates `recs` to dense ids, applying each finished section to the memtable.
    /// Sections are applied before the WAL block is written; the acknowledgement still
    /// waits for the block, and a failed WAL write poisons the store.
    fn translate_and_apply(&self, w: &mut Writer, recs: &[Record]) -> Result<DenseBatch> {
        let (mut dense, seen) = self.pool.install(|| self.look_up(recs))?;
        if seen.weighted && !self.weighted {
            if let Some(Record::InsertWeighted(u, v, _)) = recs
                .iter()
                .find(|r| matches!(r, Record::InsertWeighted(..)))
            {
                return Err(crate::Error::Invalid(format!(
                    "edge {u} -> {v} has a weight but the store is unweighted (weights are chosen at creation: ingest --weighted, or Options::weighted)"
                )));
            }
        }
        let mut batch = if seen.missing {
            self.assign_missing(recs, &mut dense)?
        } else {
            DenseBatch::default()
        };
        batch.weighted = self.weighted;
        let any_deleted = w.deleted.iter().any(|&x| x != 0);
        let applied = if any_deleted || seen.vertex_ops {
            self.translate_one_by_one(w, recs, &dense, &mut batch)?
        } else {
            // Fast path: only edge updates and no deleted vertices to revive.
            self.translate_edges(recs, &dense, &mut batch);
            0
        };
        self.apply_sections(w, &batch.sections[applied..]);
        Ok(batch)
    }

    /// The fast path of [`Inner::translate_and_apply`]: a batch of edge updates only, and
    /// no deleted vertex to revive, becomes one edge section, built in parallel.
    fn translate_edges(&self, recs: &[Record], dense: &[[VertexId; 2]], batch: &mut DenseBatch) {
        let known = |d: &&[VertexId; 2]| d[0] != MISSING && d[1] != MISSING;
        let edges: Vec<[VertexId; 2]> = self.pool.install(|| {
            recs.par_iter()
                .zip(dense.par_iter())
                .filter(|(_, d)| known(d))
                .map(|(r, d)| match r {
                    Record::Delete(..) => [d[0], d[1] | DEL],
                    _ => [d[0], d[1]],
                })
                .collect()
        });
        let weights: Vec<f64> = match self.weighted {
            true => self.pool.install(|| {
                recs.par_iter()
                    .zip(dense.par_iter())
                    .filter(|(_, d)| known(d))
                    .map(|(r, _)| weight_of(r))
                    .collect()
            }),
            false => Vec::new(),
        };
        if !edges.is_empty() {
            batch.sections.push(Section::Edges(edges, weights));
        }
    }

    /// The general path of [`Inner::translate_and_apply`], record by record: vertex
    /// updates, and inserts that revive deleted vertices. Returns how many of the batch's
    /// sections it applied already (a vertex delete applies what comes before it).
    fn translate_one_by_one(
        &self,
        w: &mut Writer,
        recs: &[Record],
        dense: &[[VertexId; 2]],
        batch: &mut DenseBatch,
    ) -> Result<usize> {
        let mut applied = 0usize;
        for (r, d) in recs.iter().zip(dense) {
            match *r {
                Record::Insert(..) | Record::InsertWeighted(..) => {
                    for x in [d[0], d[1]] {
                        revive(w, batch, x);
                    }
                    batch.push_edge(d[0], d[1], false, weight_of(r));
                }
                Record::Delete(..) if d[0] != MISSING && d[1] != MISSING => {
                    batch.push_edge(d[0], d[1], true, 0.0);
                }
                Record::Delete(..) => {}
                Record::InsertVertex(_) => {
                    let revived = revive(w, batch, d[0]);
                    if !revived && !batch.new_ids.is_empty() && d[0] >= batch.first_new_id {
                        // A new isolated vertex: log it, or its dictionary entry would
                        // ride on no record and never become durable.
                        batch.push_vertex(d[0], false);
                    }
                }
                Record::DeleteVertex(_) if d[0] == MISSING || bits::get(&w.deleted, d[0]) => {}
                Record::DeleteVertex(_) => {
                    // Expansion reads the memtable, so everything before it goes in first.
                    self.apply_sections(w, &batch.sections[applied..]);
                    applied = batch.sections.len();
                    // Its sections are applied later, with what follows: a later record
                    // may extend the last of them.
                    self.delete_vertex(w, batch, d[0])?;
                }
            }
        }
        Ok(applied)
    }

    /// Deletes vertex `x` (live): pushes a section deleting its live edges, then the vertex
    /// delete itself, to be applied by the caller. The batch's sections before them must
    /// be applied (the live edges are read from the memtable).
    fn delete_vertex(&self, w: &mut Writer, batch: &mut DenseBatch, x: VertexId) -> Result<()> {
        self.pool.install(|| w.mem.index_destinations());
        let dels: Vec<[VertexId; 2]> = (self.live_edges_of(w, x)?.into_iter())
            .map(|(s, t)| [s, t | DEL])
            .collect();
        if !dels.is_empty() {
            let zeros = match self.weighted {
                true => vec![0.0; dels.len()],
                false => Vec::new(),
            };
            batch.sections.push(Section::Edges(dels, zeros));
        }
        batch.sections.push(Section::Vertices(vec![x | DEL]));
        set_deleted(&mut w.deleted, x, true);
        Ok(())
    }

    /// Looks up every record's dense ids in parallel ([`MISSING`] where there is none yet),
    /// noting on the way what kinds of records the batch holds, so that no other pass over
    /// the records is needed to find out.
    fn look_up(&self, recs: &[Record]) -> Result<(Vec<[VertexId; 2]>, Seen)> {
        const CHUNK: usize = 4096;
        const AHEAD: usize = 16;
        let guard = self.dict.read().unwrap();
        let dict = guard.lookup()?;
        let look = |x: u64| dict.get(x).unwrap_or(MISSING);
        let mut dense = vec![[0 as VertexId; 2]; recs.len()];
        let seen = dense
            .par_chunks_mut(CHUNK)
            .zip(recs.par_chunks(CHUNK))
            .map(|(out, rs)| {
                let mut seen = Seen::default();
                for (i, r) in rs.iter().enumerate() {
                    if let Some(a) = rs.get(i + AHEAD) {
                        let (s, d) = ends(a);
                        dict.prefetch(s);
                        dict.prefetch(d);
                    }
                    out[i] = match *r {
                        Record::Insert(s, d)
                        | Record::Delete(s, d)
                        | Record::InsertWeighted(s, d, _) => [look(s), look(d)],
                        Record::InsertVertex(v) | Record::DeleteVertex(v) => [look(v), 0],
                    };
                    seen.weighted |= matches!(r, Record::InsertWeighted(..));
                    seen.vertex_ops |=
                        matches!(r, Record::InsertVertex(_) | Record::DeleteVertex(_));
                    seen.missing |= out[i][0] == MISSING || out[i][1] == MISSING;
                }
                seen
            })
            .reduce(Seen::default, Seen::or);
        Ok((dense, seen))
    }

    /// Assigns dense ids, in record order, to the names `look_up` found none for. Deletes
    /// never create ids.
    fn assign_missing(&self, recs: &[Record], dense: &mut [[VertexId; 2]]) -> Result<DenseBatch> {
        let todo: Vec<usize> = self.pool.install(|| {
            (0..dense.len())
                .into_par_iter()
                .filter(|&i| dense[i][0] == MISSING || dense[i][1] == MISSING)
                .collect()
        });
        let mut dict = self.dict.write().unwrap();
        let mut batch = DenseBatch {
            first_new_id: dict.len() as VertexId,
            ..DenseBatch::default()
        };
        for i in todo {
            let d = &mut dense[i];
            match recs[i] {
                Record::Insert(s, t) | Record::InsertWeighted(s, t, _) => {
                    if d[0] == MISSING {
                        d[0] = dict.get_or_assign(s)?;
                    }
                    if d[1] == MISSING {
                        d[1] = dict.get_or_assign(t)?;
                    }
                }
                Record::InsertVertex(v) => d[0] = dict.get_or_assign(v)?,
                // A delete may name a vertex assigned earlier in this batch.
                Record::Delete(s, t) => {
                    d[0] = dict.get(s)?.unwrap_or(MISSING);
                    d[1] = dict.get(t)?.unwrap_or(MISSING);
                }
                Record::DeleteVertex(v) => d[0] = dict.get(v)?.unwrap_or(MISSING),
            }
        }
        batch.new_ids = dict.externals()[batch.first_new_id as usize..].to_vec();
        Ok(batch)
    }

    fn apply_sections(&self, w: &mut Writer, sections: &[Section]) {
        let n = self.dict.read().unwrap().len() as VertexId;
        w.mem.ensure_vertices(n);
        for s in sections {
            match s {
                Section::Edges(e, wts) => self.pool.install(|| w.mem.apply_edges(e, wts)),
                Section::Vertices(v) => v.iter().for_each(|&x| w.mem.apply_vertex(x)),
            }
        }
    }

    /// Every edge touching `x` right now, as `[src, dst]`.
    fn live_edges_of(&self, w: &Writer, x: VertexId) -> Result<Vec<(VertexId, VertexId)>> {
        self.seal_pending_dram()?;
        let runs = self.state.lock().unwrap().runs.clone();
        self.pool.install(|| crate::run::verify_all(&runs))?;
        let view = Snapshot::new(
            runs,
            Arc::default(),
            w.mem.vertex_space as usize,
            self.undirected,
            Default::default(),
        );
        let mut edges = Vec::new();
        let live = |d: Dir| -> BTreeSet<VertexId> {
            let mut set = BTreeSet::new();
            match d {
                Dir::Out => view.for_each_out(x, |y| {
                    set.insert(y);
                }),
                Dir::In => view.for_each_in(x, |y| {
                    set.insert(y);
                }),
            }
            let mut ops = Vec::new();
            w.mem.gather(d, x, &mut ops);
            for op in ops {
                if is_del(op) {
                    set.remove(&id_of(op));
                } else {
                    set.insert(op);
                }
            }
            set
        };
        edges.extend(live(Dir::Out).into_iter().map(|y| (x, y)));
        if !self.undirected {
            edges.extend(live(Dir::In).into_iter().map(|y| (y, x)));
        }
        Ok(edges)
    }

    /// Moves the active memtable to the frozen queue (called with the writer lock held).
    /// [`Freeze::Full`] wakes the flusher to write it out; [`Freeze::ForReading`] leaves it
    /// for the reader to seal into DRAM, written out with the next full memtable.
    pub(super) fn freeze_locked(&self, w: &mut Writer, why: Freeze) -> bool {
        let n = self.dict.read().unwrap().len() as VertexId;
        let fresh = Memtable::new(self.undirected, self.weighted, w.next_lsn, n)
            .keeping_history(self.keeps_history());
        let mem = std::mem::replace(&mut w.mem, fresh);
        if mem.is_empty() {
            return false;
        }
        let bytes = mem.bytes();
        let f = Arc::new(Frozen {
            mem: Mutex::new(Some(mem)),
            sealed: OnceLock::new(),
            bytes,
        });
        let mut st = self.state.lock().unwrap();
        st.frozen.push_back(f);
        // Readers' runs wait for a full memtable, unless there are so many that every
        // snapshot's seal resolves against them all and every view reads them all.
        if matches!(why, Freeze::Full) || pending_runs(&st) >= READER_RUNS_KEPT {
            st.work = true;
        }
        drop(st);
        self.state_cv.notify_all();
        true
    }

    /// Bytes of runs sealed into DRAM by readers and not yet written out: part of the
    /// memtable budget, as the memtables they were.
    fn dram_run_bytes(&self) -> usize {
        let st = self.state.lock().unwrap();
        (st.runs.iter().filter(|r| r.in_dram()))
            .map(|r| r.bytes() as usize)
            .sum()
    }

    /// Asks the flusher for a pass: it writes out the runs sealed into DRAM.
    pub(super) fn wake_flusher(&self) {
        self.state.lock().unwrap().work = true;
        self.state_cv.notify_all();
    }

    /// Holds the writer back while frozen and sealed-but-unflushed memtables exceed two
    /// thirds of the budget; without a background thread, does the work itself.
    fn backpressure(&self) -> Result<()> {
        if !self.opts.background {
            return self.flush_pending(Merges::Levels);
        }
        let limit = self.opts.memtable_bytes.saturating_sub(self.freeze_bytes());
        let mut st = self.state.lock().unwrap();
        loop {
            let pending: usize = st.frozen.iter().map(|f| f.bytes).sum::<usize>()
                + st.runs
                    .iter()
                    .filter(|r| r.in_dram())
                    .map(|r| r.bytes() as usize)
                    .sum::<usize>();
            let runs = pending_runs(&st);
            if (pending <= limit || runs <= 1) && runs <= MAX_PENDING_RUNS {
                return Ok(());
            }
            self.check_poisoned()?;
            // Readers' freezes leave the flusher asleep: the wait is what wakes it for them.
            if !st.work {
                st.work = true;
                self.state_cv.notify_all();
            }
            st = self.state_cv.wait(st).unwrap();
        }
    }

    pub(super) fn snapshot(&self) -> Result<Snapshot> {
        Ok(self.snapshot_parts()?.build(self))
    }

    /// What a snapshot of everything applied so far is made of, and the LSN it reaches,
    /// every run's checksums verified (a reader never reads a list before its check).
    pub(super) fn snapshot_parts(&self) -> Result<SnapshotParts> {
        let parts = self.unchecked_parts()?;
        self.pool.install(|| crate::run::verify_all(&parts.runs))?;
        Ok(parts)
    }

    /// [`Inner::snapshot_parts`] with the runs' lists not verified yet: for what the runs'
    /// headers and vertex states answer alone (`Inner::size`), never for reading a list.
    pub(super) fn unchecked_parts(&self) -> Result<SnapshotParts> {
        self.check_poisoned()?;
        let (runs, frozen, deleted, n, lsn) = {
            let mut w = self.writer.lock().unwrap();
            self.freeze_locked(&mut w, Freeze::ForReading);
            let st = self.state.lock().unwrap();
            let n = self.dict.read().unwrap().len();
            (
                st.runs.clone(),
                st.frozen.clone(),
                w.deleted.clone(),
                n,
                w.next_lsn,
            )
        };
        self.seal_pending_dram()?;
        let mut all: Vec<_> = runs.to_vec();
        for f in frozen {
            all.push(f.sealed.get().expect("sealed by seal_pending_dram").clone());
        }
        let externals = self.dict.read().unwrap().shared_externals(n);
        // Taken after the ids: every name is stored before an id numbering it is handed out.
        let names = self.keys.as_ref().map(|k| k.names());
        Ok(SnapshotParts {
            runs: all,
            deleted,
            n,
            externals,
            names,
            lsn,
            point: None,
        })
    }
}

/// The makings of a [`Snapshot`]: runs, deleted vertices, ids and names, and the LSN up to
/// which it holds every record.
#[derive(Clone)]
pub(super) struct SnapshotParts {
    pub runs: Vec<Arc<crate::run::Run>>,
    pub deleted: Arc<Vec<u64>>,
    pub n: usize,
    pub externals: crate::dict::Externals,
    pub names: Option<crate::keys::Names>,
    pub lsn: u64,
    /// Set when the snapshot is a past graph read in place: its one run masked.
    pub point: Option<Arc<crate::snapshot::PointIndex>>,
}

impl SnapshotParts {
    /// The snapshot, read as `inner`'s options say.
    pub fn build(self, inner: &Inner) -> Snapshot {
        let s = Snapshot::new(
            self.runs.into(),
            self.deleted,
            self.n,
            inner.undirected,
            self.externals,
        )
        .of_weighted_store(inner.weighted)
        .with_copy_budget(inner.opts.view_copy_bytes)
        .with_sweep_reads(inner.opts.sweep_reads)
        .with_names(self.names);
        match self.point {
            // `parts_masked` made the index for this run: the mask reads it.
            Some(idx) => s
                .with_point(idx)
                .expect("a point's run is one its mask reads"),
            None => s,
        }
    }
}
