//! Retention: what the history window lets go of is let go for good, and its space freed.
//!
//! The window a setting keeps slides as commits come, and a narrower setting cuts it at
//! once. A commit it lets go must stay gone whatever window is set later (a user who
//! narrowed the window to drop old data must not see it come back), so the root records
//! the oldest commit that may still be shown, `history_floor`, and every read of history
//! starts its window there at the earliest. The bytes go too, not only when a whole segment
//! falls out: the segment the window cuts is written again without the commits before the
//! cut, in a commit that names it in place of the old one (the old file is removed after,
//! as any segment a commit stops naming; a crash before the commit leaves a file no root
//! names, which a writer's open removes).

use super::history::window;
use super::{CommitPoint, Inner};
use crate::history::{segment, History};
use crate::manifest::HistRef;
use crate::memtable::history::Sealed;
use crate::Result;
use std::sync::Arc;

/// Which commits the window is counted over.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Known {
    /// Every commit the handle knows, the memtables' included (which are sealed to read
    /// them): what `config` narrows or widens.
    Everything,
    /// The commits of committed segments only: a writer's open, which seals nothing.
    Committed,
}

/// The bytes of history segments: for the commits the window keeps, and still held for
/// commits it let go (in the segment it cuts, until a writer's open or `config` frees them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HistoryBytes {
    /// Bytes of segments, or parts of them, holding commits the window keeps.
    pub kept: u64,
    /// Bytes still held for commits the window let go.
    pub let_go: u64,
}

impl Inner {
    /// Lets go for good of the commits before the window `setting` keeps: records the new
    /// floor, drops the segments wholly before it and writes again the one it cuts, without
    /// the commits before it, in one commit.
    pub(super) fn let_go(&self, setting: History, known: Known) -> Result<()> {
        if !setting.keeps() {
            // `none` drops every segment at the next commit (`to_drop`).
            return Ok(());
        }
        let commits = self.known_commits(known)?;
        let old_floor = self.history.lock().unwrap().floor;
        let Some(start) = window(setting, old_floor, &commits) else {
            return Ok(());
        };
        let Some(first) = commits.get(start) else {
            return Ok(());
        };
        let floor = first.lsn.max(old_floor);
        let m = self.maint.lock().unwrap();
        let segs = self.history.lock().unwrap().segments.clone();
        let mut kept = Vec::with_capacity(segs.len());
        let mut gone = Vec::new();
        let mut written = None;
        for s in segs {
            if s.r.max_lsn < floor {
                gone.push(s.r);
                continue;
            }
            let head = self.segment_head(&s)?;
            let cut = head.iter().take_while(|c| c.lsn < floor).count();
            if cut == 0 {
                kept.push(s.r);
                continue;
            }
            let (r, sealed) = self.rewrite_from(&m, &s, head[cut - 1].lsn, cut)?;
            gone.push(s.r);
            kept.push(r.clone());
            written = Some((r, sealed));
        }
        if gone.is_empty() && floor == old_floor {
            return Ok(());
        }
        self.commit_history(&m, kept, floor)
            .inspect_err(|e| self.poison(e))?;
        self.history.lock().unwrap().floor = floor;
        self.settle_history(written, gone, (0, 0));
        Ok(())
    }

    /// Every commit known, oldest first, as `known` says.
    fn known_commits(&self, known: Known) -> Result<Vec<CommitPoint>> {
        if known == Known::Everything {
            return Ok(self.log()?.commits.iter().map(|(c, _)| *c).collect());
        }
        let segs = self.history.lock().unwrap().segments.clone();
        let mut out = Vec::new();
        for s in &segs {
            out.extend(self.segment_head(s)?.iter().map(|c| CommitPoint {
                lsn: c.lsn,
                unix_nanos: c.time,
            }));
        }
        Ok(out)
    }

    /// Writes segment `s` again from its commit `cut` on, covering the LSNs after `from`
    /// (the last commit let go), stamped for the next commit; its reference and history.
    fn rewrite_from(
        &self,
        _m: &super::Maint,
        s: &super::history::Segment,
        from: u64,
        cut: usize,
    ) -> Result<(HistRef, Arc<Sealed>)> {
        let sealed = Arc::new(self.segment_changes(s)?.from_commit(cut));
        let h = segment::Header {
            min_lsn: from,
            max_lsn: s.r.max_lsn,
            weighted: self.weighted,
            undirected: self.undirected,
            stamp: self.next_stamp(),
        };
        let file_len = segment::write(&*self.medium, &h, &sealed)?;
        let r = HistRef {
            min_lsn: from,
            max_lsn: s.r.max_lsn,
            file_len,
            commits: sealed.commits.len() as u64,
            last_time: s.r.last_time,
            format: segment::FORMAT,
        };
        Ok((r, sealed))
    }

    /// Commits a root whose history segments are `segs` and whose floor is `floor`, the
    /// rest as it is (the caller holds `maint`).
    fn commit_history(&self, _m: &super::Maint, segs: Vec<HistRef>, floor: u64) -> Result<()> {
        let mut man = self.manifest.lock().unwrap();
        let mut root = man.root().clone();
        root.history_segments = segs;
        root.history_floor = root.history_floor.max(floor);
        man.commit(&*self.medium, root)
    }

    /// The bytes of the history segments, apart for the commits the window keeps and those
    /// it let go (the part of the segment it cuts that lies before it: each change's
    /// encoded size, counted from the segment read whole).
    pub(super) fn history_bytes(&self) -> Result<HistoryBytes> {
        let (setting, floor, segs) = {
            let k = self.history.lock().unwrap();
            (k.setting, k.floor, k.segments.clone())
        };
        let commits = self.known_commits(Known::Everything)?;
        let start_lsn = window(setting, floor, &commits)
            .and_then(|s| commits.get(s))
            .map_or(u64::MAX, |c| c.lsn);
        let mut b = HistoryBytes::default();
        for s in &segs {
            let head = self.segment_head(s)?;
            let cut = head.iter().take_while(|c| c.lsn < start_lsn).count();
            let gone = match cut {
                0 => 0,
                n if n == head.len() => s.r.file_len,
                n => {
                    let all = self.segment_changes(s)?;
                    s.r.file_len - segment::encoded_len(&all.from_commit(n), self.weighted)
                }
            };
            b.let_go += gone;
            b.kept += s.r.file_len - gone;
        }
        Ok(b)
    }
}
