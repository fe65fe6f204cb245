//! The store's side of run versions ([`crate::history::versions`]): a writer derives them
//! for each committed run after its commit, and a point inside a run's range reads the run
//! filtered by them instead of undoing every later change.
//!
//! Versions are derived data, never a commit's business: a flush or merge commits its run
//! (and history segment) as before, then writes the run's versions file. A crash before that
//! file is whole leaves a run without versions, which the next writer derives again; a
//! reader that finds none (or a damaged one) builds the point by the other routes. The file
//! goes with its run (`RunFile`'s drop, and open's survey of files no run names).

use super::history::{Piece, Segment};
use super::write::SnapshotParts;
use super::{Inner, Maint, RunVersions};
use crate::history::segment_read::ChangeSet;
use crate::history::versions::{self, InDirection, Versions};
use crate::history::{versions_file, versions_mask};
use crate::run::Run;
use crate::snapshot::{PointIndex, PointLists};
use crate::{Error, Result};
use std::sync::Arc;

/// What deriving a run's versions came to.
enum Derived {
    /// The versions.
    Built(Box<Versions>),
    /// Not yet: the history segments do not reach the run's end (its own is not listed
    /// yet, or history was not kept through it).
    Later,
    /// Never: the run and its history disagree, or versions do not cover the store.
    Refused,
    /// Not by this handle: the derivation would hold more DRAM than half of what is
    /// available ([`derivation_bytes`]); points inside the run are built without them.
    TooLarge,
}

/// DRAM a derivation holds at its peak, about, for a run of `entries` list entries (both
/// directions): its columns (a `u32` an entry, then narrowed) and the file encoded from
/// them, beside the changes of one range of vertices gathered and sorted (at most about
/// 400 MB; the segments are read in place, `segment_read`). A Kron24 load's run (527 M
/// entries) peaked at 2.75 GB of anonymous memory, where this says 3.7 GB.
fn derivation_bytes(entries: u64) -> u64 {
    entries.saturating_mul(6) + (512 << 20)
}

impl Inner {
    /// Writes the versions of every committed run that has none yet, while the store keeps
    /// history, if [`RunVersions`] asks for them after `step`. A failure is reported to no
    /// one: the run is read without versions (slower, never wrong). A run whose versions
    /// cannot be derived is not tried again by this handle; one whose file could not be
    /// written is, at the next step. The caller holds `maint` (`_m`), so no merge retires a
    /// run while its versions are derived.
    pub(super) fn write_versions(&self, _m: &Maint, step: RunVersions) {
        let wanted = match self.opts.run_versions {
            RunVersions::Never => false,
            RunVersions::Compact => step == RunVersions::Compact,
            RunVersions::Flush => true,
        };
        if !wanted || self.opts.read_only || !self.keeps_history() || self.weighted {
            return;
        }
        let store_id = self.store_id();
        for run in self.file_runs() {
            let name = versions_file::file_name(run.header.id);
            let refused = |id| self.versions_refused.lock().unwrap().contains(&id);
            if run.header.min_lsn >= run.header.max_lsn
                || refused(run.header.id)
                || versions_file::current(&*self.medium, &name)
            {
                continue;
            }
            let derived = self.derive_versions(&run, InDirection::Transposed);
            // A flush left its changes in DRAM for this derivation only: a bulk load's are
            // hundreds of MB, which the writer has no other reason to keep.
            if step == RunVersions::Flush {
                let ranges: Vec<(u64, u64)> = (self.range_segments(&run).unwrap_or_default())
                    .iter()
                    .map(|s| (s.r.min_lsn, s.r.max_lsn))
                    .collect();
                self.history.lock().unwrap().recent.forget(&ranges);
            }
            let v = match derived {
                Ok(Derived::Built(v)) => v,
                Ok(Derived::Later) | Err(_) => continue,
                Ok(Derived::Refused | Derived::TooLarge) => {
                    self.versions_refused.lock().unwrap().insert(run.header.id);
                    continue;
                }
            };
            // One of an older format goes first: not every medium renames over a file.
            let stale = self.medium.exists(&name) && self.medium.remove(&name).is_err();
            if stale || versions_file::write(&*self.medium, &v, store_id).is_err() {
                let _ = self.medium.remove(&format!("{name}.tmp"));
            }
        }
    }

    /// The versions of `run` from the committed history segments of its range, its
    /// in-direction derived as `inn` says.
    fn derive_versions(&self, run: &Run, inn: InDirection) -> Result<Derived> {
        let Some(covering) = self.range_segments(run) else {
            return Ok(Derived::Later);
        };
        let entries = std::iter::once(&run.out)
            .chain(run.inn.as_ref())
            .map(|d| d.n_adds() + d.n_tombs())
            .sum();
        let need = derivation_bytes(entries);
        if crate::medium::dram::available().is_some_and(|a| need > a / 2) {
            return Ok(Derived::TooLarge);
        }
        let loaded: Vec<ChangeSet> = (covering.iter())
            .map(|s| self.segment_change_set(s))
            .collect::<Result<_>>()?;
        run.verify()?;
        let refs: Vec<&ChangeSet> = loaded.iter().collect();
        Ok(
            match self.pool.install(|| versions::build(run, &refs, inn)) {
                Ok(v) => Derived::Built(Box::new(v)),
                Err(_) => Derived::Refused,
            },
        )
    }

    /// The committed history segments of `run`'s range, in LSN order; `None` unless
    /// they reach its end without a gap (a run committed before its segment is listed,
    /// or one whose history was never kept, has none).
    pub(super) fn range_segments(&self, run: &Run) -> Option<Vec<Segment>> {
        let (lo, hi) = (run.header.min_lsn, run.header.max_lsn);
        let segments = self.history.lock().unwrap().segments.clone();
        let mut covering: Vec<Segment> = (segments.into_iter())
            .filter(|s| s.r.max_lsn > lo && s.r.min_lsn < hi)
            .collect();
        covering.sort_by_key(|s| s.r.min_lsn);
        let whole = covering
            .windows(2)
            .all(|w| w[0].r.max_lsn == w[1].r.min_lsn)
            && covering.last().is_some_and(|s| s.r.max_lsn >= hi);
        whole.then_some(covering)
    }

    /// The store id files are stamped with (0 for stores from before stamps).
    pub(super) fn store_id(&self) -> u64 {
        self.manifest.lock().unwrap().root().store_id.unwrap_or(0)
    }

    /// The graph at commit `lsn` from the runs read in place: those wholly before it as
    /// they are, each run whose range holds it filtered by its versions, those after it
    /// left out; or, where `shape` allows and the run holding `lsn` is the only one the
    /// point reads, that run masked in place (`versions_mask.rs`). `None` when a run that
    /// holds `lsn` has no usable versions (a DRAM run, or one whose versions are not
    /// written yet or are damaged).
    pub(super) fn parts_versioned(
        &self,
        mut parts: SnapshotParts,
        pieces: &[Piece],
        lsn: u64,
        shape: PointShape,
    ) -> Result<Option<SnapshotParts>> {
        if !every_partition_reaches(&parts.runs, lsn, self.part_shift, parts.n) {
            return Ok(None);
        }
        let store_id = self.store_id();
        let holding: Vec<&Arc<Run>> = (parts.runs.iter())
            .filter(|r| r.header.min_lsn < lsn)
            .collect();
        let mut runs = Vec::with_capacity(holding.len());
        for r in holding.iter().copied() {
            if r.header.max_lsn <= lsn {
                runs.push(r.clone());
                continue;
            }
            if r.in_dram() {
                return Ok(None);
            }
            let Ok(Some(v)) = versions_file::read(&*self.medium, r, store_id) else {
                return Ok(None);
            };
            r.verify()?;
            if shape == PointShape::Masked && holding.len() == 1 {
                if let Some(p) = self.parts_masked(&parts, r, &v, pieces, lsn) {
                    return Ok(Some(p));
                }
            }
            let id = self
                .next_run_id
                .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
            let layer = self.pool.install(|| versions::layer_at(r, &v, lsn, id));
            runs.push(Arc::new(
                layer.map_err(|e| Error::io("map", "anonymous memory", e))?,
            ));
        }
        let mut gone = super::history::vertex_states(&runs);
        super::history::mark_unborn(&mut gone, super::history::vertices_at(pieces, lsn), parts.n);
        parts.runs = runs;
        parts.deleted = Arc::new(gone);
        Ok(Some(parts))
    }

    /// The graph at commit `lsn` as `run`, the only run it reads, masked in place by its
    /// versions `v`; `None` when a mask cannot read the run (see `versions_mask.rs`).
    fn parts_masked(
        &self,
        parts: &SnapshotParts,
        run: &Arc<Run>,
        v: &Versions,
        pieces: &[Piece],
        lsn: u64,
    ) -> Option<SnapshotParts> {
        if self.weighted || !crate::snapshot::point_reads(run) {
            return None;
        }
        let n = parts.n;
        let m = self
            .pool
            .install(|| versions_mask::mask_at(run, v, lsn, n))?;
        let lists = |d: versions_mask::DirMask, entries: usize| {
            PointLists::new(d.dead, d.spell_at, d.spells, d.spell_dead, (entries, n))
        };
        let out = lists(m.out, run.out.adds.get().len())?;
        let inn = match (m.inn, &run.inn) {
            (Some(l), Some(d)) => Some(lists(l, d.adds.get().len())?),
            (None, None) => None,
            _ => return None,
        };
        let mut gone = super::history::vertex_states_of([&m.vertex_ops[..]]);
        super::history::mark_unborn(&mut gone, super::history::vertices_at(pieces, lsn), n);
        let mut masked = parts.clone();
        masked.runs = vec![run.clone()];
        masked.deleted = Arc::new(gone);
        masked.point = Some(Arc::new(PointIndex::new(out, inn)));
        Some(masked)
    }
}

/// How a point read through run versions may be laid out.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum PointShape {
    /// As the run masked in place where it allows (a snapshot, read as it is).
    Masked,
    /// As runs only (a window lays one more run over them).
    Runs,
}

impl Inner {
    /// `check`: each run's versions file, if it has one, read whole (both checksums, the
    /// run it names, its lengths) and derived again from the history to compare. A
    /// problem here loses nothing (points read the segments without them), but says so.
    pub(super) fn check_versions(&self, runs: &[Arc<Run>], problems: &mut Vec<String>) {
        let store_id = self.store_id();
        for r in runs.iter().filter(|r| !r.in_dram()) {
            let name = versions_file::file_name(r.header.id);
            let why = match versions_file::read(&*self.medium, r, store_id) {
                Ok(None) => continue,
                Err(e) => e.to_string(),
                // Gathered, not transposed as a writer derives them: two routes that agree.
                Ok(Some(v)) => match self.derive_versions(r, InDirection::Gathered) {
                    Ok(Derived::Built(again)) if same_versions(&v, &again) => continue,
                    // Commits let go since it was derived: the file says more, not less.
                    Ok(Derived::Built(again))
                        if again.commits.get().len() < v.commits.get().len() =>
                    {
                        continue
                    }
                    Ok(Derived::Later | Derived::TooLarge) => continue,
                    Ok(Derived::Built(_)) => {
                        "it disagrees with the history segments of its range".into()
                    }
                    Ok(Derived::Refused) => "the history of its range refuses it".into(),
                    Err(e) => format!("it cannot be derived again ({e})"),
                },
            };
            problems.push(format!(
                "{name}: {why}; points inside run {}'s range read the history without it (remove the file: the next flush derives it again)",
                r.header.id
            ));
        }
    }
}

/// Whether, for every partition of `2^shift` ids below `n`, a run holding its ids either
/// straddles `lsn` or ends at it: otherwise a merge that left the partition nothing (its
/// changes over the range netted out) left no run to carry the versions of that range,
/// and the graph at `lsn` cannot be read in place for those ids.
pub(super) fn every_partition_reaches(runs: &[Arc<Run>], lsn: u64, shift: u32, n: usize) -> bool {
    if shift == 0 || shift >= 64 {
        return true;
    }
    let parts = (n as u64).div_ceil(1 << shift).max(1);
    (0..parts).all(|p| {
        let ids = (p << shift)..((p + 1) << shift);
        let holding = runs.iter().filter(|r| r.header.overlaps(&ids));
        let (mut end, mut straddled) = (0, false);
        for r in holding {
            let (lo, hi) = (r.header.min_lsn, r.header.max_lsn);
            straddled |= lo < lsn && lsn < hi;
            if hi <= lsn {
                end = end.max(hi);
            }
        }
        straddled || end == lsn
    })
}

/// Whether two versions of one run say the same.
pub(super) fn same_versions(a: &Versions, b: &Versions) -> bool {
    let dir = |x: &versions::DirVersions, y: &versions::DirVersions| {
        let same = |a: &versions::Spells, b: &versions::Spells| {
            a.vid.get() == b.vid.get() && a.end.get() == b.end.get() && a.nbr.get() == b.nbr.get()
        };
        x.ords.widened() == y.ords.widened()
            && same(&x.present, &y.present)
            && same(&x.absent, &y.absent)
    };
    a.commits.get() == b.commits.get()
        && dir(&a.out, &b.out)
        && match (&a.inn, &b.inn) {
            (Some(x), Some(y)) => dir(x, y),
            (None, None) => true,
            _ => false,
        }
        && a.vx_at.get() == b.vx_at.get()
        && a.vx.get() == b.vx.get()
}
