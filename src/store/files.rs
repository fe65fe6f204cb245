//! What open makes of each file: whose it is, and what a file the root does not name means.
//!
//! Every file carries a [`Stamp`] (see [`crate::stamp`]): the store's id and the manifest
//! commit it was written for. Against the root in force:
//! - another store's id: the file was copied in from elsewhere. Refused, named.
//! - a file of this store that the root names must have been written for a commit at or
//!   before the root's. A later one is damage.
//! - a file the root does not name tells how it got there:
//!   - a run or dictionary chunk written for a commit at or before the root's was retired
//!     (merged away, or abandoned by a handle that failed) and may go;
//!   - one written for the root's next commit is what a crash between writing and
//!     committing leaves, *unless* it holds records the log can no longer rebuild: a flush
//!     names its run only once the log is durable past it, and the log is let go only
//!     after the commit, so such a run proves its commit happened and the root is older
//!     than the store (a `MANIFEST` restored from a copy). Refused, never deleted;
//!   - one written for a later commit proves the same directly. Refused.
//!   - a log segment made under a later root than the one in force proves it too.
//!
//! Stores from before stamps carry none; see [`Legacy`] for which of their files are taken
//! without one.

use crate::manifest::{Legacy, Root};
use crate::medium::Medium;
use crate::run::{format::RunHeader, Run};
use crate::stamp::{id_text, Stamp};
use crate::wal::segment::SegmentHeader;
use crate::{Error, Result};

/// The identity checks of one root: what every file open reads must agree with.
pub(super) struct Expected<'a> {
    root: &'a Root,
}

/// What a run file the root does not name is, and what may be done with it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Stray {
    /// Retired, abandoned or never committed: nothing the root needs. A writer removes it.
    Removable,
    /// Written for the root's next commit: removable unless it holds records past the
    /// end of the log (see the module documentation), which replay tells.
    NextCommit {
        /// The LSN after its last record.
        max_lsn: u64,
    },
}

impl<'a> Expected<'a> {
    pub(super) fn new(root: &'a Root) -> Expected<'a> {
        Expected { root }
    }

    /// Whose the file with `stamp` is: an error unless this store's (or a file from before
    /// stamps that `legacy_ok` allows).
    fn owner(
        &self,
        what: &str,
        stamp: Option<Stamp>,
        legacy_ok: impl Fn(&Legacy) -> bool,
    ) -> Result<()> {
        match (self.root.store_id, stamp) {
            (Some(id), Some(st)) if st.store_id == id => Ok(()),
            (Some(id), Some(st)) => Err(Error::corrupt(format!(
                "{what} belongs to another store: it carries store id {}, the MANIFEST names store {}",
                id_text(st.store_id),
                id_text(id)
            ))),
            (Some(_), None) if self.root.legacy.as_ref().is_some_and(legacy_ok) => Ok(()),
            (Some(id), None) => Err(Error::corrupt(format!(
                "{what} carries no store id (a file from before store ids), but the MANIFEST names store {} and it has one on every file it wrote since: it belongs to another store",
                id_text(id)
            ))),
            // A store from before stamps: its files carry none, and nothing stamped can be
            // its own (a writer stamps the root before it writes any stamped file).
            (None, None) => Ok(()),
            (None, Some(st)) => Err(Error::corrupt(format!(
                "{what} carries store id {}, but the MANIFEST is from before store ids: the file belongs to another store, or the MANIFEST is older than the store",
                id_text(st.store_id)
            ))),
        }
    }

    /// A run file the root names: this store's, written for a commit up to the root's.
    pub(super) fn named_run(&self, name: &str, h: &RunHeader) -> Result<()> {
        self.owner(&format!("run file {name}"), h.stamp, |l| {
            h.id < l.runs_below
        })?;
        match h.stamp {
            Some(st) if st.seq > self.root.seq => Err(Error::corrupt(format!(
                "run file {name} was written for commit {}, after the MANIFEST's commit {} that names it",
                st.seq, self.root.seq
            ))),
            _ => Ok(()),
        }
    }

    /// A history segment the root names: this store's, written for a commit up to the
    /// root's.
    pub(super) fn named_history(&self, name: &str, stamp: Stamp) -> Result<()> {
        self.owner(&format!("history segment {name}"), Some(stamp), |_| false)?;
        match stamp.seq > self.root.seq {
            true => Err(Error::corrupt(format!(
                "history segment {name} was written for commit {}, after the MANIFEST's commit {} that names it",
                stamp.seq, self.root.seq
            ))),
            false => Ok(()),
        }
    }

    /// A run file the root does not name: what it is, or the error that refuses the store.
    pub(super) fn stray_run(&self, name: &str, h: &RunHeader) -> Result<Stray> {
        self.owner(&format!("run file {name}"), h.stamp, |l| {
            h.id < l.runs_below
        })?;
        let Some(st) = h.stamp else {
            return Ok(Stray::Removable);
        };
        let next = self.root.seq + 1;
        match st.seq {
            s if s < next => Ok(Stray::Removable),
            s if s == next => Ok(Stray::NextCommit { max_lsn: h.max_lsn }),
            s => Err(self.rolled_back(&format!("run file {name} was written for commit {s}"))),
        }
    }

    /// The error for a root shown older than the store by `evidence`.
    fn rolled_back(&self, evidence: &str) -> Error {
        Error::corrupt(format!(
            "{evidence}, but the MANIFEST's root is commit {}: the MANIFEST is older than the store's files (restored from a copy?); refusing to open it and lose what was committed since",
            self.root.seq
        ))
    }

    /// A run written for the next commit, whose records reach `max_lsn`, beside a log that
    /// ends at `log_end`: removable, or the proof of a later commit.
    pub(super) fn next_commit_run(&self, name: &str, max_lsn: u64, log_end: u64) -> Result<()> {
        if self.root.logged && max_lsn > log_end {
            return Err(self.rolled_back(&format!(
                "run file {name} holds records up to LSN {max_lsn}, which the log (ending at LSN {log_end}) cannot rebuild: a commit after this root named it"
            )));
        }
        Ok(())
    }

    /// A chunk of `DICT` at byte `at` of the committed prefix.
    pub(super) fn dict_chunk(&self, at: u64, stamp: Option<Stamp>) -> Result<()> {
        let what = format!("the DICT chunk at byte {at}");
        self.owner(&what, stamp, |l| at < l.dict_bytes)?;
        match stamp {
            Some(st) if st.seq > self.root.seq => Err(Error::corrupt(format!(
                "{what} was written for commit {}, after the MANIFEST's commit {} that counts it",
                st.seq, self.root.seq
            ))),
            _ => Ok(()),
        }
    }

    /// The chunk past `DICT`'s committed prefix, if one verifies: a flush that did not
    /// commit, unless written for a later commit than the next.
    pub(super) fn dict_tail(&self, stamp: Option<Stamp>) -> Result<()> {
        let Some(st) = stamp else { return Ok(()) };
        self.owner(
            "the DICT chunk past the committed entries",
            Some(st),
            |_| false,
        )?;
        if st.seq > self.root.seq + 1 {
            return Err(self.rolled_back(&format!(
                "DICT holds entries written for commit {} past the {} bytes the root commits",
                st.seq, self.root.dict_bytes
            )));
        }
        Ok(())
    }

    /// A log segment's header.
    pub(super) fn segment(&self, name: &str, h: &SegmentHeader) -> Result<()> {
        let what = format!("WAL segment {name}");
        self.owner(&what, h.stamp, |l| h.first_lsn <= l.wal_upto_lsn)?;
        match h.stamp {
            Some(st) if st.seq > self.root.seq => {
                Err(self.rolled_back(&format!("{what} was made under commit {}", st.seq)))
            }
            _ => Ok(()),
        }
    }
}

/// The run files in the store the root does not name, each with its header; temporary run
/// files (a write a crash cut short, never named by any root) apart.
pub(super) struct Survey {
    /// Run files the root does not name, with their headers.
    pub strays: Vec<(String, RunHeader)>,
    /// `.tmp` run files: removable by a writer whatever they hold.
    pub unfinished: Vec<String>,
}

/// Finds the files `root` does not name. A run file that does not read is refused: a run
/// is named only once it is durable, so only damage leaves one half there, except in a
/// store from before stamps, whose runs were written in place (such a file is an
/// unfinished write).
pub(super) fn survey(medium: &dyn Medium, root: &Root) -> Result<Survey> {
    let mut out = Survey {
        strays: Vec::new(),
        unfinished: Vec::new(),
    };
    for name in medium.list()? {
        if let Some((min, max)) = crate::history::segment::parse_name(&name) {
            // A segment the root does not name was written for a commit that never
            // happened (the log still holds its records) or let go by one that did.
            let named = root
                .history_segments
                .iter()
                .any(|h| (h.min_lsn, h.max_lsn) == (min, max));
            if !named || name.ends_with(".tmp") {
                out.unfinished.push(name);
            }
            continue;
        }
        // Tails are caches of one writer session's log: the next writer's seals may cut
        // its LSN ranges differently, so its open removes them.
        if Run::parse_tmp_name(&name).is_some() || super::tails::is_tail_file(&name) {
            out.unfinished.push(name);
            continue;
        }
        // A run's versions are derived after its commit: those of a run no longer named,
        // or cut short, go.
        if let Some(id) = crate::history::versions_file::parse_name(name.trim_end_matches(".tmp")) {
            if name.ends_with(".tmp") || !root.runs.iter().any(|r| r.id == id) {
                out.unfinished.push(name);
            }
            continue;
        }
        let Some(id) = Run::parse_file_name(&name) else {
            continue;
        };
        if root.runs.iter().any(|r| r.id == id) {
            continue;
        }
        match read_run_header(medium, &name) {
            Ok(h) => out.strays.push((name, h)),
            Err(_) if written_in_place(root, id) => out.unfinished.push(name),
            Err(e) => {
                return Err(Error::corrupt(format!(
                    "run file {name}, which the MANIFEST does not name, is damaged ({e}); remove it by hand if it is no part of the store"
                )))
            }
        }
    }
    Ok(out)
}

/// Refuses a `MANIFEST` copied in from another store, by its name: when the files that
/// carry a store id (the first `DICT` chunk, run files, WAL segments; a few of each) agree
/// on one the `MANIFEST` does not name, it is the stranger, not each of them. One file
/// alone that disagrees is blamed itself, as the checks of each file do.
pub(super) fn foreign_manifest(medium: &dyn Medium, root: &Root) -> Result<()> {
    let Some(ours) = root.store_id else {
        return Ok(());
    };
    let mut seen: Vec<(String, u64)> = Vec::new();
    if let Some(st) = crate::dict::Dict::uncommitted_stamp(medium, 0)? {
        seen.push((crate::dict::FILE.to_string(), st.store_id));
    }
    let mut names = medium.list()?;
    names.sort();
    for name in names {
        if seen.len() >= 4 {
            break;
        }
        if let Some(id) = file_store_id(medium, &name) {
            seen.push((name, id));
        }
    }
    let Some((_, theirs)) = seen.first() else {
        return Ok(());
    };
    if seen.len() < 2 || *theirs == ours || seen.iter().any(|(_, id)| id != theirs) {
        return Ok(());
    }
    let files: Vec<&str> = seen.iter().map(|(n, _)| n.as_str()).collect();
    Err(Error::corrupt(format!(
        "MANIFEST belongs to another store: it names store {}, while the store's files ({}) all carry store id {}",
        id_text(ours),
        files.join(", "),
        id_text(*theirs)
    )))
}

/// The store id a run file or WAL segment carries, if it is one and its header reads.
fn file_store_id(medium: &dyn Medium, name: &str) -> Option<u64> {
    if Run::parse_file_name(name).is_some() {
        return read_run_header(medium, name)
            .ok()?
            .stamp
            .map(|s| s.store_id);
    }
    crate::wal::segment::parse_name(name)?;
    let seg = medium.open(name).ok()?;
    let mut h = [0u8; crate::wal::segment::HEADER_LEN as usize];
    let n = seg.len().ok()?.min(h.len() as u64) as usize;
    seg.read_at(0, &mut h[..n]).ok()?;
    SegmentHeader::decode(&h[..n])?.stamp.map(|s| s.store_id)
}

/// Whether run `id` was written by a build that wrote runs in place (from before stamps).
fn written_in_place(root: &Root, id: u64) -> bool {
    match (root.store_id, &root.legacy) {
        (None, _) => true,
        (Some(_), Some(l)) => id < l.runs_below,
        (Some(_), None) => false,
    }
}

/// The header of run file `name`, read without mapping the file.
pub(super) fn read_run_header(medium: &dyn Medium, name: &str) -> Result<RunHeader> {
    let seg = medium.open(name)?;
    let len = seg.len()?.min(crate::run::format::PACKED_HEADER_LEN as u64) as usize;
    let mut b = vec![0u8; len];
    seg.read_at(0, &mut b)?;
    RunHeader::decode(&b, name)
}
