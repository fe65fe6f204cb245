//! Background work: seal frozen memtables, flush sealed runs, compact.
//!
//! Flush is where a run becomes durable: the run file is written under a temporary name and
//! persisted, the WAL is made durable up to the run's last LSN, the file takes its name
//! ([`crate::run::file::Unpersisted::persist_and_name`]), the dictionary's new entries are
//! persisted, and the manifest commit makes the run part of the store; only then may the
//! WAL below the run's LSN be recycled. Every file is stamped for the commit that will name
//! it ([`Inner::next_stamp`], taken under `maint`). The one commit that does not hold
//! `maint`, a writer's first claim of the log ([`Inner::claim_log`]), can slip in between,
//! so a file's stamp may be one below the commit that names it, never above: what open's
//! checks rely on (`files.rs`) holds either way. Compaction is tiered and,
//! above level 0, partitioned by vertex range ([`super::policy`]): `fanout` runs of a level
//! become one run of the next, so each edge is rewritten O(log) times and the number of
//! runs stays bounded, and a merge above level 0 rewrites one partition at a time.

use super::policy::{self, Output};
use super::write::Freeze;
use super::{Frozen, Inner, Maint, RunVersions, Runs};

use crate::manifest::{self, HistRef, RunRef};
use crate::memtable::history::Sealed;
use crate::run::build::RunMeta;
use crate::run::{self, Run};
use crate::{Error, Result};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// How long a merge may run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    /// To the end (an explicit compaction).
    Done,
    /// Until the store starts closing (background merges).
    Shutdown,
}

/// What a flush merges after sealing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Merges {
    /// Nothing ([`Graph::flush`](crate::Graph::flush)).
    None,
    /// Whatever the policy asks for, given up when the store starts closing (the flusher,
    /// and a writer held back by full memtables).
    Levels,
    /// Only overdue levels ([`policy::pick_overdue`]), to the end: what `close` does.
    Overdue,
}

/// The background thread: waits for frozen memtables and keeps the store tidy.
pub(super) fn flusher_loop(inner: Arc<Inner>) {
    loop {
        {
            let mut st = inner.state.lock().unwrap();
            while !st.work && !inner.shutdown.load(Ordering::Acquire) {
                #[cfg(test)]
                if let Some(hook) = &*inner.before_flusher_wait.lock().unwrap() {
                    hook();
                }
                st = inner.state_cv.wait(st).unwrap();
            }
            if inner.shutdown.load(Ordering::Acquire) {
                return;
            }
            st.work = false;
        }
        if inner.flush_pending(Merges::Levels).is_err() {
            return;
        }
    }
}

impl Inner {
    /// Seals every frozen memtable into an in-DRAM run, oldest first: a snapshot's way
    /// (CPU only; the flusher writes them out later). The flusher itself seals straight
    /// into run files ([`Inner::seal_next_file`]), one at a time between merges.
    pub(super) fn seal_pending_dram(&self) -> Result<()> {
        let _g = self.seal_lock.lock().unwrap();
        while self.seal_oldest_dram_locked()? {}
        Ok(())
    }

    /// Seals the oldest frozen memtable, if any, into an in-DRAM run; whether there was one.
    fn seal_oldest_dram(&self) -> Result<bool> {
        let _g = self.seal_lock.lock().unwrap();
        self.seal_oldest_dram_locked()
    }

    /// [`Inner::seal_oldest_dram`] with the seal lock held.
    fn seal_oldest_dram_locked(&self) -> Result<bool> {
        let Some((f, older)) = self.oldest_frozen()? else {
            return Ok(false);
        };
        let mem = self.take_frozen(&f)?;
        let id = self.next_run_id.fetch_add(1, Ordering::AcqRel);
        let (run, history) = self.pool.install(|| mem.seal_with_history(&older, id));
        self.publish_sealed(&f, Arc::new(run), history.map(Arc::new));
        Ok(true)
    }

    /// Seals the oldest frozen memtable into a committed run file (committing runs sealed
    /// into DRAM by snapshots first); whether anything was committed.
    ///
    /// The memtable is written to its run file under the seal lock, then persisted and
    /// committed after the lock is released: a snapshot waiting for the seal lock waits for
    /// the writing, never for the `fdatasync`. `maint` is held throughout, so no commit can
    /// name the run before it is durable.
    fn seal_next_file(&self) -> Result<bool> {
        let mut m = self.maint.lock().unwrap();
        // Runs sealed into DRAM for snapshots are older than every frozen memtable, and
        // the manifest lists runs in order: they are committed first, and with the oldest
        // frozen memtable (sealed into DRAM beside them) as one run file, one segment and
        // one commit, not one each.
        if self.has_dram_runs() {
            let sealed = self.seal_oldest_dram()?;
            self.flush_dram(&mut m)?;
            return Ok(sealed);
        }
        let (run, unpersisted, history) = {
            let _g = self.seal_lock.lock().unwrap();
            if self.has_dram_runs() {
                // A snapshot sealed more in between. Report progress instead of looping
                // here: the caller merges levels before coming back, and a writer that
                // snapshots after every batch kept this loop busy while level 0 grew
                // unmerged past what a manifest slot can list.
                return Ok(true);
            }
            let Some((f, older)) = self.oldest_frozen()? else {
                return Ok(false);
            };
            let mem = self.take_frozen(&f)?;
            let id = self.next_run_id.fetch_add(1, Ordering::AcqRel);
            let stamp = self.next_stamp();
            let (run, unpersisted, history) = self
                .pool
                .install(|| mem.seal_to_file(&older, id, &self.medium, self.compression, stamp))
                .inspect_err(|e| self.poison(e))?;
            let run = Arc::new(run);
            let history = history.map(Arc::new);
            self.publish_sealed(&f, run.clone(), history.clone());
            (run, unpersisted, history)
        };
        self.run_bytes
            .flushed
            .fetch_add(run.header.file_len, Ordering::Relaxed);
        let name = || unpersisted.persist_and_name(|| self.log_durable_to(run.header.max_lsn));
        let seg = |m: &Maint| self.segment_of(m, &run, history.as_ref());
        let keeps = self.history.lock().unwrap().setting.keeps();
        let (named, seg) = match history.as_ref().filter(|_| keeps) {
            // Both must be durable before the commit, neither needs the other: the
            // segment's encode and write overlap the run's persist.
            Some(_) => std::thread::scope(|sc| {
                let maint = &*m;
                let seg = sc.spawn(move || seg(maint));
                (
                    name(),
                    seg.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                )
            }),
            None => (name(), Ok(None)),
        };
        named
            .and(seg)
            .and_then(|seg| self.commit_flushed(&mut m, &run, None, seg))
            .inspect_err(|e| self.poison(e))?;
        Ok(true)
    }

    /// Waits until the log is durable up to `lsn`: before a flushed run takes its name, so
    /// that an unnamed run's records are always in the log until a commit names it (how
    /// open tells a crash before the commit from a rolled-back manifest: `files.rs`), and
    /// before a root starts the log at `lsn`.
    fn log_durable_to(&self, lsn: u64) -> Result<()> {
        match &self.wal {
            Some(wal) => wal.wait_durable(lsn),
            None => Ok(()),
        }
    }

    /// The oldest frozen memtable and the runs older than it, verified: its seal resolves
    /// against them.
    fn oldest_frozen(&self) -> Result<Option<(Arc<Frozen>, Runs)>> {
        let next = {
            let st = self.state.lock().unwrap();
            st.frozen.front().map(|f| (f.clone(), st.runs.clone()))
        };
        if let Some((_, older)) = &next {
            self.pool.install(|| run::verify_all(older))?;
        }
        Ok(next)
    }

    fn has_dram_runs(&self) -> bool {
        self.state.lock().unwrap().runs.iter().any(|r| r.in_dram())
    }

    /// Takes a frozen memtable to seal it. A seal that failed consumed its memtable and
    /// poisoned the handle: the memtable is gone, and so is any further write.
    fn take_frozen(&self, f: &Frozen) -> Result<crate::memtable::Memtable> {
        f.mem.lock().unwrap().take().ok_or_else(|| {
            Error::Poisoned(self.poison_error().unwrap_or_else(|| {
                Arc::new(Error::Invalid(
                    "an earlier seal of this memtable failed".into(),
                ))
            }))
        })
    }

    /// Publishes the run sealed from the oldest frozen memtable `f` in its place.
    fn publish_sealed(&self, f: &Frozen, run: Arc<Run>, history: Option<Arc<Sealed>>) {
        let _ = f.sealed.set(run.clone());
        let mut st = self.state.lock().unwrap();
        if let Some(h) = history {
            let range = (run.header.min_lsn, run.header.max_lsn);
            st.dram_history.push((range, h));
        }
        debug_assert!(st.frozen.front().is_some_and(|x| std::ptr::eq(&**x, f)));
        let mut runs = st.runs.to_vec();
        runs.push(run);
        st.runs = runs.into();
        st.frozen.pop_front();
        drop(st);
        self.state_cv.notify_all();
    }

    /// Seals and flushes what is frozen, without freezing the active memtable; with
    /// `compact`, then merges levels that reached the fanout.
    ///
    /// Levels are merged after each sealed run, not once every frozen memtable is sealed:
    /// under a small memtable budget the writer freezes memtables as fast as they are
    /// sealed, and merging only when none is left let level-0 runs pile up unmerged, each
    /// seal slower than the last (it resolves against every older run). Merging in between
    /// bounds the run count; the writer waits on the memtable budget meanwhile.
    ///
    /// A failure poisons the handle, whoever called: a failed persist of a manifest commit
    /// leaves a root that may or may not be in force, so no later flush may rewrite what
    /// it names (a retry would recreate a named run's file, cut to nothing), and the log
    /// must stay as the only sure copy until a reopen reads back what is there.
    pub(super) fn flush_pending(&self, merges: Merges) -> Result<()> {
        self.seal_and_merge_pending(merges)
            .inspect_err(|e| self.poison(e))
    }

    fn seal_and_merge_pending(&self, merges: Merges) -> Result<()> {
        loop {
            // After a failure nothing commits: a run published before its failed commit
            // is in the list of file runs, and a merge would take it for a committed one.
            self.check_poisoned()?;
            let sealed = self.seal_next_file()?;
            let mut m = self.maint.lock().unwrap();
            self.flush_dram(&mut m)?;
            match merges {
                Merges::None => {}
                Merges::Levels => self.compact_levels(&mut m)?,
                Merges::Overdue => self.merge_overdue(&mut m)?,
            }
            self.write_versions(&m, RunVersions::Flush);
            if !sealed {
                return Ok(());
            }
        }
    }

    /// Freezes the active memtable and makes everything applied so far part of committed
    /// run files (no compaction: that is background work).
    pub(super) fn flush(&self) -> Result<()> {
        self.flush_then(Merges::None)
    }

    /// [`Inner::flush`], then the merges `merges` asks for.
    pub(super) fn flush_then(&self, merges: Merges) -> Result<()> {
        self.check_poisoned()?;
        if self.opts.read_only {
            return Err(crate::Error::Invalid(
                "the store was opened read-only".into(),
            ));
        }
        {
            let mut w = self.writer.lock().unwrap();
            self.freeze_locked(&mut w, Freeze::Full);
        }
        self.flush_pending(merges)
    }

    /// Commits a root that says no writer has the log in use (see
    /// [`crate::manifest::Root::log_in_use`]), in both slots: what a close does once every
    /// record is in committed runs, before it retires the log.
    pub(super) fn commit_log_released(&self) -> Result<()> {
        let next_lsn = self.writer.lock().unwrap().next_lsn;
        let mut man = self.manifest.lock().unwrap();
        let root = man.root();
        assert_eq!(
            root.wal_start_lsn, next_lsn,
            "the log is released only once every record is in committed runs"
        );
        if !root.log_in_use {
            return Ok(());
        }
        let mut root = root.clone();
        root.log_in_use = false;
        // Twice, so that both slots hold a root that needs no log: if the newest slot is
        // damaged later, the one in force still says the log was released, and the store
        // opens instead of being refused for the log it retired.
        man.commit(&*self.medium, root.clone())
            .and_then(|()| man.commit(&*self.medium, root))
            .inspect_err(|e| self.poison(e))
    }

    /// Commits a root that says the log is in use, once per handle, before its first batch
    /// is logged: from then on a missing segment is damage, not a clean end (see
    /// [`crate::manifest::Root::log_in_use`]). Deferred to the first batch so that a writer
    /// that writes nothing leaves the store's files as they were.
    pub(super) fn claim_log(&self) -> Result<()> {
        if self.wal.is_none() || self.log_claimed.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut man = self.manifest.lock().unwrap();
        let root = man.root();
        if !root.log_in_use || root.wal_format != manifest::WAL_FORMAT {
            let mut root = root.clone();
            root.log_in_use = true;
            // Before any block of this build's format: builds that cannot read it refuse
            // the store from this commit on (format 6), until a close retires the log.
            root.wal_format = manifest::WAL_FORMAT;
            man.commit(&*self.medium, root)
                .inspect_err(|e| self.poison(e))?;
        }
        self.log_claimed.store(true, Ordering::Release);
        Ok(())
    }

    /// Flush, then merge every run into one base run.
    pub(super) fn compact_full(&self) -> Result<()> {
        self.flush()?;
        let mut m = self.maint.lock().unwrap();
        let runs = self.file_runs();
        // One dense run without tombstones is already the compacted form.
        let needs = runs.len() > 1
            || runs.first().is_some_and(|r| {
                r.out.n_tombs() > 0 || !r.out.dense || r.inn.as_ref().is_some_and(|i| !i.dense)
            });
        if needs {
            // A damaged run is refused before anything is written, without poisoning the
            // handle: the store is as it was, and closes cleanly.
            self.pool.install(|| run::verify_all(&runs))?;
            let level = runs.iter().map(|r| r.header.level).max().unwrap_or(0);
            self.merge_and_install(
                &mut m,
                &runs,
                level.max(1),
                true,
                Output::Whole,
                Until::Done,
            )
            .inspect_err(|e| self.poison(e))?;
        }
        self.write_versions(&m, RunVersions::Compact);
        Ok(())
    }

    /// The committed run files, oldest first (those before the first run sealed into DRAM).
    pub(super) fn file_runs(&self) -> Vec<Arc<Run>> {
        let st = self.state.lock().unwrap();
        st.runs
            .iter()
            .take_while(|r| !r.in_dram())
            .cloned()
            .collect()
    }

    /// The stamp of a file written for the next commit.
    pub(super) fn next_stamp(&self) -> crate::stamp::Stamp {
        self.manifest.lock().unwrap().root().next_stamp()
    }

    /// Commits a root naming `runs` (oldest first) with the log starting at `wal_start`
    /// (`None`: where it starts now), the dictionary's committed prefix and the next run id:
    /// the commit point of every flush and merge. The caller holds `maint` (`_m`).
    /// Also names the history segment `added` (written for this commit), and lets go of the
    /// segments the history setting no longer keeps: returns those.
    pub(super) fn commit_runs(
        &self,
        _m: &mut Maint,
        runs: &[Arc<Run>],
        wal_start: Option<u64>,
        added: Option<HistRef>,
    ) -> Result<Vec<HistRef>> {
        let (dict_entries, dict_bytes) = self.dict.read().unwrap().committed();
        // Read before `manifest` is taken: both are leaves.
        let setting = self.history.lock().unwrap().setting;
        let mut man = self.manifest.lock().unwrap();
        let mut root = man.root().clone();
        root.dict_entries = dict_entries as u64;
        root.dict_bytes = dict_bytes;
        root.wal_start_lsn = wal_start.unwrap_or(root.wal_start_lsn);
        root.next_run_id = self.next_run_id.load(Ordering::Acquire);
        root.logged = self.wal.is_some();
        root.bytes_written = self.bytes_written_base + self.medium.stats().snapshot().bytes_written;
        root.runs = runs
            .iter()
            .map(|r| RunRef {
                id: r.header.id,
                level: r.header.level,
                min_lsn: r.header.min_lsn,
                max_lsn: r.header.max_lsn,
                file_len: r.header.file_len,
            })
            .collect();
        root.history_segments.extend(added);
        root.history = setting.keeps().then(|| setting.to_string());
        let n = super::history::to_drop(setting, &root.history_segments);
        let dropped: Vec<HistRef> = root.history_segments.drain(..n).collect();
        root.format_version = root.expected_format();
        man.commit(&*self.medium, root)?;
        Ok(dropped)
    }

    /// Writes sealed in-DRAM runs to files, oldest first, committing each.
    fn flush_dram(&self, m: &mut Maint) -> Result<()> {
        // Only the runs sealed before this call: snapshots may keep sealing more, and
        // flushing until none were left never ended for a writer that took a snapshot after
        // every batch (no merge ran meanwhile, and level 0 outgrew the manifest).
        let pending: Vec<Arc<Run>> = {
            let st = self.state.lock().unwrap();
            st.runs.iter().filter(|r| r.in_dram()).cloned().collect()
        };
        if pending.len() > 1 {
            return self.flush_dram_as_one(m, &pending);
        }
        for r in pending {
            let stamp = self.next_stamp();
            let (file_run, unpersisted) =
                run::file::write_unpersisted(&r, &self.medium, self.compression, stamp)?;
            unpersisted.persist_and_name(|| self.log_durable_to(r.header.max_lsn))?;
            let file_run = Arc::new(file_run);
            self.run_bytes
                .flushed
                .fetch_add(file_run.header.file_len, Ordering::Relaxed);
            let seg = self.segment_of(m, &file_run, self.dram_history_of(&r).as_ref())?;
            self.commit_flushed(m, &file_run, Some(&r), seg)?;
        }
        Ok(())
    }

    /// Flushes consecutive DRAM runs (`pending`, oldest first) as one run file, one history
    /// segment and one commit. A writer whose snapshots seal every batch (a standing kernel
    /// over batches it cannot patch) leaves a DRAM run per batch: flushed one by one they
    /// made a run file, a segment and a manifest commit each, thousands per flush.
    fn flush_dram_as_one(&self, m: &mut Maint, pending: &[Arc<Run>]) -> Result<()> {
        debug_assert!(
            pending
                .windows(2)
                .all(|w| w[0].header.max_lsn == w[1].header.min_lsn),
            "DRAM runs cover consecutive LSN ranges"
        );
        let meta = RunMeta {
            id: self.next_run_id.fetch_add(1, Ordering::AcqRel),
            ..self.merged_meta(pending, 0)
        };
        // The merged file takes its name as it is written: the log must hold every record
        // it has first, as before any flushed run is named.
        self.log_durable_to(meta.max_lsn)?;
        let merged = Arc::new(run::merge::merge_to_file(
            pending,
            meta,
            false,
            &self.medium,
        )?);
        self.run_bytes
            .flushed
            .fetch_add(merged.header.file_len, Ordering::Relaxed);
        let histories: Option<Vec<Arc<Sealed>>> =
            pending.iter().map(|r| self.dram_history_of(r)).collect();
        let history = histories.map(|h| {
            let refs: Vec<&Sealed> = h.iter().map(|s| &**s).collect();
            Arc::new(self.pool.install(|| Sealed::concat(&refs)))
        });
        let seg = self.segment_of(m, &merged, history.as_ref())?;
        self.commit_flushed_replacing(m, &merged, pending, seg)
    }

    /// The description of a run merged from `inputs` at `level` (id 0: the caller's),
    /// stamped for the next commit.
    fn merged_meta(&self, inputs: &[Arc<Run>], level: u64) -> RunMeta {
        RunMeta {
            id: 0,
            level,
            min_lsn: inputs.iter().map(|r| r.header.min_lsn).min().unwrap_or(0),
            max_lsn: inputs.iter().map(|r| r.header.max_lsn).max().unwrap_or(0),
            vertex_space: (inputs.iter().map(|r| r.header.vertex_space))
                .max()
                .unwrap_or(0),
            weighted: self.weighted,
            part_shift: 0,
            compression: self.compression,
            stamp: self.next_stamp(),
            last_time: inputs.iter().filter_map(|r| r.header.last_time).max(),
        }
    }

    /// The commit point of a flush: the dictionary entries the run needs are made durable,
    /// then the manifest naming the run (after every file run before it) is committed, and
    /// the WAL below the run's end is let go. `replacing` is the DRAM run it stands for.
    fn commit_flushed(
        &self,
        m: &mut Maint,
        new: &Arc<Run>,
        replacing: Option<&Arc<Run>>,
        segment: Option<(HistRef, Arc<Sealed>)>,
    ) -> Result<()> {
        let old = replacing.map(std::slice::from_ref).unwrap_or_default();
        self.commit_flushed_replacing(m, new, old, segment)
    }

    /// [`Inner::commit_flushed`] of a run standing for the DRAM runs `replacing` (none for
    /// a memtable sealed straight to a file).
    fn commit_flushed_replacing(
        &self,
        m: &mut Maint,
        new: &Arc<Run>,
        replacing: &[Arc<Run>],
        segment: Option<(HistRef, Arc<Sealed>)>,
    ) -> Result<()> {
        // Written without the dictionary's lock: lookups never wait for this persist.
        // Only the holder of `maint` writes chunks, so they go in order.
        let stamp = self.next_stamp();
        let chunk = (self.dict.read().unwrap()).chunk_upto(new.header.vertex_space as usize, stamp);
        if let Some(c) = chunk {
            c.write(&*self.medium)?;
            self.dict.write().unwrap().chunk_written(&c);
        }
        // The root is about to start the log at the run's end. The log must be durable that
        // far first, or a crash leaves a root that starts past the log's end (the run was
        // named after the same wait; this one costs nothing and keeps the rule local).
        self.log_durable_to(new.header.max_lsn)?;
        debug_assert!(
            new.header.stamp.is_some_and(|st| st.seq <= stamp.seq),
            "a run is stamped for a commit at or before the one that names it"
        );
        let mut files = self.file_runs();
        // A run sealed straight to a file is published (readable) before it commits.
        if !files.last().is_some_and(|r| Arc::ptr_eq(r, new)) {
            files.push(new.clone());
        }
        debug_assert_eq!(files.iter().filter(|r| Arc::ptr_eq(r, new)).count(), 1);
        let added = segment.as_ref().map(|s| s.0.clone());
        let dropped = self.commit_runs(m, &files, Some(new.header.max_lsn), added)?;
        self.settle_history(segment, dropped, (new.header.min_lsn, new.header.max_lsn));
        if !replacing.is_empty() {
            self.replace_runs(replacing, std::slice::from_ref(new));
        }
        if let Some(wal) = &self.wal {
            wal.recycle_below(new.header.max_lsn);
        }
        self.tails_after_commit();
        Ok(())
    }

    /// Merges what the policy ([`super::policy`]) asks for until nothing is left, except
    /// that while memtables wait to be sealed it rewrites at most one partition: partition
    /// merges are large, and the writer waits for the seals, not for them.
    fn compact_levels(&self, m: &mut Maint) -> Result<()> {
        let mut partitions_done = 0;
        loop {
            // Merges can wait for the next open: a closing store seals what is frozen and
            // merges only overdue levels (`Merges::Overdue`).
            if self.shutdown.load(Ordering::Acquire) {
                return Ok(());
            }
            let Some((p, group)) = self.next_merge(policy::pick) else {
                return Ok(());
            };
            if p.is_partition() && partitions_done > 0 && self.frozen_waiting() {
                return Ok(());
            }
            partitions_done += usize::from(p.is_partition());
            self.merge_group(m, &p, &group, Until::Shutdown)?;
        }
    }

    /// Merges overdue levels ([`policy::pick_overdue`]) to the end, closing or not: the
    /// bound on runs that does not depend on a session living long enough for background
    /// merges.
    fn merge_overdue(&self, m: &mut Maint) -> Result<()> {
        while let Some((p, group)) = self.next_merge(policy::pick_overdue) {
            self.merge_group(m, &p, &group, Until::Done)?;
        }
        Ok(())
    }

    /// The merge `choose` ([`policy::pick`] or [`policy::pick_overdue`]) picks among the
    /// committed file runs, with its inputs.
    pub(super) fn next_merge(
        &self,
        choose: policy::Choose,
    ) -> Option<(policy::Pick, Vec<Arc<Run>>)> {
        let runs = self.file_runs();
        let headers: Vec<&crate::run::RunHeader> = runs.iter().map(|r| &r.header).collect();
        let space = headers.iter().map(|h| h.vertex_space).max().unwrap_or(0);
        let p = choose(&headers, self.opts.fanout, self.part_shift, space)?;
        let group = p.inputs.iter().map(|&i| runs[i].clone()).collect();
        Some((p, group))
    }

    /// Verifies the inputs `group` of merge `p`, then merges and installs them.
    fn merge_group(
        &self,
        m: &mut Maint,
        p: &policy::Pick,
        group: &[Arc<Run>],
        until: Until,
    ) -> Result<()> {
        self.pool.install(|| run::verify_all(group))?;
        self.merge_and_install(m, group, p.level, p.base, p.output, until)
    }

    pub(super) fn frozen_waiting(&self) -> bool {
        !self.state.lock().unwrap().frozen.is_empty()
    }

    /// Merges file runs `inputs` (verified by the caller; see [`policy::Pick`]) into new
    /// run files and commits them in their place (where the oldest input was); with
    /// `Until::Shutdown`, gives the merge up (nothing committed, the partial files removed)
    /// once the store starts closing.
    fn merge_and_install(
        &self,
        m: &mut Maint,
        inputs: &[Arc<Run>],
        level: u64,
        base: bool,
        output: Output,
        until: Until,
    ) -> Result<()> {
        debug_assert!(
            inputs.iter().all(|r| r.is_verified()),
            "merge inputs unverified"
        );
        let meta = self.merged_meta(inputs, level);
        // A merge of committed runs: nothing it holds is past the log's start.
        assert!(
            meta.max_lsn <= self.manifest.lock().unwrap().root().wal_start_lsn,
            "a merge's inputs are committed runs"
        );
        let Some(outputs) = self
            .pool
            .install(|| self.merge_files(inputs, &meta, base, output, until))?
        else {
            return Ok(());
        };
        let outputs: Vec<Arc<Run>> = outputs.into_iter().map(Arc::new).collect();
        for r in &outputs {
            assert_eq!(r.header.level, level, "a merge writes runs of its level");
            self.run_bytes
                .merged
                .fetch_add(r.header.file_len, Ordering::Relaxed);
        }
        let files = splice(&self.file_runs(), inputs, &outputs);
        let dropped = self.commit_runs(m, &files, None, None)?;
        self.settle_history(None, dropped, (0, 0));
        self.replace_runs(inputs, &outputs);
        for r in inputs {
            r.retire();
        }
        Ok(())
    }

    /// Writes the run files merge `output` makes of `inputs`, each run `meta` but for its
    /// id; `None` when the merge was given up (the store closing, with `Until::Shutdown`).
    fn merge_files(
        &self,
        inputs: &[Arc<Run>],
        meta: &RunMeta,
        base: bool,
        output: Output,
        until: Until,
    ) -> Result<Option<Vec<Run>>> {
        let stop = || until == Until::Shutdown && self.shutdown.load(Ordering::Acquire);
        let next_id = || self.next_run_id.fetch_add(1, Ordering::AcqRel);
        let parts = |shift, parts| {
            run::merge::merge_partitions_until(
                inputs,
                meta,
                base,
                shift,
                parts,
                &next_id,
                &self.medium,
                &stop,
            )
        };
        match output {
            Output::Whole => {
                let meta = RunMeta {
                    id: next_id(),
                    ..*meta
                };
                let r = run::merge::merge_to_file_until(inputs, meta, base, &self.medium, &stop)?;
                Ok(r.map(|r| vec![r]))
            }
            Output::Split { shift } => parts(shift, 0..meta.vertex_space.div_ceil(1 << shift)),
            Output::Partition { shift, part } => parts(shift, part..part + 1),
        }
    }

    /// Publishes `new` in place of the runs `old`.
    fn replace_runs(&self, old: &[Arc<Run>], new: &[Arc<Run>]) {
        let mut st = self.state.lock().unwrap();
        st.runs = splice(&st.runs, old, new).into();
        drop(st);
        self.state_cv.notify_all();
    }
}

impl Inner {
    /// Writes the history segment of `run` if its seal kept history: before the commit
    /// that names both.
    fn segment_of(
        &self,
        m: &Maint,
        run: &Run,
        history: Option<&Arc<Sealed>>,
    ) -> Result<Option<(HistRef, Arc<Sealed>)>> {
        // A memtable records changes for followers too; only a store keeping history
        // writes them.
        let keeps = self.history.lock().unwrap().setting.keeps();
        (history.filter(|_| keeps))
            .map(|h| self.write_segment(m, run, h))
            .transpose()
    }

    /// The history of the run in DRAM `r`, if its seal kept one.
    fn dram_history_of(&self, r: &Run) -> Option<Arc<Sealed>> {
        let range = (r.header.min_lsn, r.header.max_lsn);
        let st = self.state.lock().unwrap();
        (st.dram_history.iter())
            .find(|(lsns, _)| *lsns == range)
            .map(|(_, h)| h.clone())
    }

    /// After a commit: the segment it named joins the kept ones (and leaves DRAM), the
    /// ones it let go leave them and the medium. A segment left behind by a failed
    /// removal is removed by the next writer's open.
    pub(super) fn settle_history(
        &self,
        added: Option<(HistRef, Arc<Sealed>)>,
        dropped: Vec<HistRef>,
        range: (u64, u64),
    ) {
        {
            let mut kept = self.history.lock().unwrap();
            // Only its commit table is kept: a bulk load's changes are hundreds of MB that
            // the writer has no reason to keep.
            if let Some((r, s)) = added {
                let lsns = (r.min_lsn, r.max_lsn);
                kept.segments.push(super::history::Segment::written(r, &s));
                // Versions derived after each flush read the run's changes from here,
                // not decoded again from the segment just written.
                if self.opts.run_versions == RunVersions::Flush {
                    let budget = self.opts.memtable_bytes;
                    kept.recent.put(lsns, s, budget);
                }
            }
            // After the push: the commit that adds a segment may drop it at once (history
            // turned off while the memtable still kept it), and its file goes below.
            kept.segments
                .retain(|s| !dropped.iter().any(|d| d.min_lsn == s.r.min_lsn));
            let gone: Vec<(u64, u64)> = dropped.iter().map(|d| (d.min_lsn, d.max_lsn)).collect();
            kept.recent.forget(&gone);
        }
        {
            // Every DRAM piece the committed range covers (several when DRAM runs were
            // flushed as one) leaves DRAM; followers may keep each.
            let mut st = self.state.lock().unwrap();
            let within = |lsns: &(u64, u64)| lsns.0 >= range.0 && lsns.1 <= range.1;
            while let Some(i) = st.dram_history.iter().position(|(l, _)| within(l)) {
                let (lsns, changes) = st.dram_history.remove(i);
                self.keep_for_followers(&mut st, lsns, changes);
            }
        }
        for d in dropped {
            let _ = self
                .medium
                .remove(&crate::history::segment::file_name(d.min_lsn, d.max_lsn));
        }
    }
}

/// `list` with the runs `old` (all in it, in its order) removed and `new` put where the
/// first of them was.
fn splice(list: &[Arc<Run>], old: &[Arc<Run>], new: &[Arc<Run>]) -> Vec<Arc<Run>> {
    let is_old = |r: &Arc<Run>| old.iter().any(|o| Arc::ptr_eq(o, r));
    let start = list
        .iter()
        .position(is_old)
        .expect("replaced runs are live");
    debug_assert_eq!(list.iter().filter(|r| is_old(r)).count(), old.len());
    let mut out = list[..start].to_vec();
    out.extend_from_slice(new);
    out.extend(list[start..].iter().filter(|r| !is_old(r)).cloned());
    out
}
