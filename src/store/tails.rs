//! Tails: the runs a writer sealed since its last flush, cached as files for readers in
//! other processes, so that a reader loads them instead of replaying the log they came from.
//!
//! A read-only open replays every update past the last flush (`reader.rs`). Beside a busy
//! writer that is millions of updates per reader, resolved against the older runs one by
//! one: the writer's own work, done again by every reader. The writer does it anyway (a
//! seal resolves each update against the older runs), so while readers are about it
//! seals every [`TAIL_BYTES`] of memtable into a DRAM run (as a snapshot would) and writes
//! that run beside the store as a *tail*: `tail-<min LSN>.run` (a run file) and
//! `tail-<min LSN>.ids` (the external ids its LSN range handed out, a `DICT` chunk). Once
//! the log is durable past a tail it is listed in `TAILS`, which names the root's log
//! start they build on (FORMAT.md, "Tails"). A reader takes the listed tails that chain
//! from the root it loaded, checks each one whole, and replays the log only past the last.
//!
//! Why a tail can never be wrong, only missing:
//! - It holds only durable records (it is listed once the log is durable past it), and a
//!   durable record keeps its LSN, so a tail is a correct image of its LSN range for as
//!   long as the runs below it end where its range starts: the reader uses one only when
//!   `TAILS` names the log start of the root it loaded, and only a chain of them from
//!   there, each starting where the one before it ended, LSNs and dense ids alike.
//! - Nothing makes a tail durable: a crash may tear one, or `TAILS`. Every byte a reader
//!   uses is checked first (the run's block checksums and offsets, the ids chunk's crc,
//!   the list's crc); a tail that does not check ends the chain there, and the reader
//!   replays the log from that point, as it would with no tails at all.
//! - Recovery never reads them, and a writer's open removes every one (a new session's
//!   seals may cut its LSN ranges differently): they are caches, not part of the store.
//!
//! A store keeping history publishes none: a reader of one replays each commit into its
//! memtable's record of changes, which a run does not keep.

use super::options::Tails;
use super::{Inner, Writer};
use crate::dict::chunk;
use crate::manifest::Root;
use crate::medium::Medium;
use crate::run::{self, format, Run, Verify};
use crate::stamp::Stamp;
use crate::Result;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The list of tails a reader may use.
pub(crate) const FILE: &str = "TAILS";
const MAGIC: u64 = u64::from_le_bytes(*b"EVGTAILS");
/// Words before the entries: magic, store id, base LSN, base ids, entry count.
const HEAD_WORDS: usize = 5;
/// Words per entry.
const ENTRY_WORDS: usize = 5;

/// Memtable bytes at which a writer publishing tails seals one (at most: less under small
/// budgets): about two million updates (6 bytes each), so a reader beside it replays at
/// most that many from the log. Smaller tails cost the writer more than they spare its
/// readers: every tail's seal looks up each update in every older run's list of its
/// vertex, and a small one finds those lists cold. Kron22 ingested beside a `stats`
/// reader every 0.5 s (`scripts/readers-beside.py`): with 3 MiB tails (eight per flush)
/// the ingest took 5.1x its time alone and readers 0.24-0.61 s (one round); with 12 MiB
/// tails (three per flush) 3.36x and a median 0.43 s, without tails 3.29x and 1.40 s (5
/// interleaved rounds each).
pub(crate) const TAIL_BYTES: usize = 12 << 20;

/// Tails written out as one run file by a flush: a freeze's worth of memtable.
///
/// Not what the writer's time hangs on: Kron22 under `--tails always` with no reader (3
/// rounds each, 12 MiB tails) took 9.65-9.81 s at 3 per flush, 9.33-9.62 s at 8 and
/// 9.07-9.78 s at 16, against 3.2 s without tails. The cost is the tails' seals, each
/// resolving its updates against every older run holding their vertices, and the merges
/// of the runs they make (`perf`: seals 34 %, `DirData::position_at` 23 % of it; merges
/// 28 %), where a writer alone at the default budget seals once, at its close, with no
/// older run to look in.
const TAILS_PER_FLUSH: usize = 3;

/// The memtable bytes at which a writer seals a tail, under a freeze size of `freeze`: a
/// [`TAILS_PER_FLUSH`]th of it, so that small budgets (tests) make tails too; at most
/// [`TAIL_BYTES`].
pub(crate) fn tail_bytes(freeze: usize) -> usize {
    (freeze / TAILS_PER_FLUSH).clamp(1, TAIL_BYTES)
}

/// The run file of the tail starting at `min_lsn`.
pub(crate) fn run_name(min_lsn: u64) -> String {
    format!("tail-{min_lsn:016x}.run")
}

/// The ids file of the tail starting at `min_lsn`.
pub(crate) fn ids_name(min_lsn: u64) -> String {
    format!("tail-{min_lsn:016x}.ids")
}

/// Whether `name` is a tail's file, `TAILS`, or one of them being written.
pub(crate) fn is_tail_file(name: &str) -> bool {
    let n = name.strip_suffix(".tmp").unwrap_or(name);
    let hex = |h: &str| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit());
    n == FILE
        || n.strip_prefix("tail-")
            .and_then(|r| r.strip_suffix(".run").or_else(|| r.strip_suffix(".ids")))
            .is_some_and(hex)
}

/// One tail as `TAILS` lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its LSN range, `min_lsn..max_lsn`.
    pub min_lsn: u64,
    /// LSN after its last record.
    pub max_lsn: u64,
    /// The dense ids its range handed out, `first_id..end_id` (its run's vertex space).
    pub first_id: u64,
    /// See `first_id`.
    pub end_id: u64,
    /// Its run file's length.
    pub run_len: u64,
}

/// The contents of `TAILS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct List {
    /// The store the tails belong to.
    pub store_id: u64,
    /// The log start of the root they build on: the first tail starts there.
    pub base_lsn: u64,
    /// The dictionary's length at `base_lsn` (the root's committed entries).
    pub base_ids: u64,
    /// The tails, oldest first, each starting where the one before it ends.
    pub entries: Vec<Entry>,
}

impl List {
    fn encode(&self) -> Vec<u8> {
        let mut w: Vec<u64> = vec![
            MAGIC,
            self.store_id,
            self.base_lsn,
            self.base_ids,
            self.entries.len() as u64,
        ];
        for e in &self.entries {
            w.extend([e.min_lsn, e.max_lsn, e.first_id, e.end_id, e.run_len]);
        }
        let crc = crc32c::crc32c(bytemuck::cast_slice(&w)) as u64;
        w.push(crc);
        bytemuck::cast_slice(&w).to_vec()
    }

    /// The list in `b`, if it is one whole (any damage reads as no list: tails are a cache).
    fn decode(b: &[u8]) -> Option<List> {
        if !b.len().is_multiple_of(8) || b.len() < (HEAD_WORDS + 1) * 8 {
            return None;
        }
        let w: Vec<u64> = bytemuck::pod_collect_to_vec(b);
        let n = usize::try_from(w[4]).ok()?;
        if w[0] != MAGIC || w.len() != HEAD_WORDS + n.checked_mul(ENTRY_WORDS)? + 1 {
            return None;
        }
        let (body, crc) = w.split_at(w.len() - 1);
        if crc32c::crc32c(bytemuck::cast_slice(body)) as u64 != crc[0] {
            return None;
        }
        let entries = body[HEAD_WORDS..]
            .chunks_exact(ENTRY_WORDS)
            .map(|e| Entry {
                min_lsn: e[0],
                max_lsn: e[1],
                first_id: e[2],
                end_id: e[3],
                run_len: e[4],
            })
            .collect();
        Some(List {
            store_id: w[1],
            base_lsn: w[2],
            base_ids: w[3],
            entries,
        })
    }

    /// The longest prefix of `entries` that chains from the base.
    fn chained(&self) -> usize {
        let (mut lsn, mut id) = (self.base_lsn, self.base_ids);
        let mut n = 0;
        for e in &self.entries {
            if e.min_lsn != lsn || e.first_id != id || e.max_lsn <= e.min_lsn || e.end_id < id {
                break;
            }
            (lsn, id) = (e.max_lsn, e.end_id);
            n += 1;
        }
        n
    }
}

/// Writes `bytes` as `name` without persisting it (a cache), under `name.tmp` first so
/// that a reader never finds it half written.
fn write_cached(medium: &dyn Medium, name: &str, bytes: &[u8]) -> Result<()> {
    let tmp = format!("{name}.tmp");
    if medium.exists(&tmp) {
        medium.remove(&tmp)?;
    }
    let f = medium.create(&tmp)?;
    f.write_at(0, bytes)?;
    drop(f);
    medium.rename_replacing(&tmp, name)
}

/// The whole of file `name`, if it reads.
fn read_whole(medium: &dyn Medium, name: &str) -> Option<Vec<u8>> {
    let f = medium.open(name).ok()?;
    let mut buf = vec![0u8; usize::try_from(f.len().ok()?).ok()?];
    f.read_at(0, &mut buf).ok()?;
    Some(buf)
}

/// What a writer has published.
#[derive(Default)]
pub(super) struct Published {
    /// Tails written, oldest first, chaining from the root's log start.
    written: Vec<Entry>,
    /// What `TAILS` lists now (`None`: no file).
    listed: Option<List>,
    /// A tail failed to write (a full disk, say): no more this session; readers replay.
    given_up: bool,
}

impl Inner {
    /// Whether the writer publishes tails now (`writer` held).
    pub(super) fn tails_wanted(&self, w: &Writer) -> bool {
        let wanted = match self.opts.tails {
            Tails::Never => false,
            Tails::Always => true,
            Tails::WhileReaders => self.readers.readers_about(),
        };
        wanted
            && self.wal.is_some()
            && !w.mem.keeps_history()
            && !self.tails.lock().unwrap().given_up
    }

    /// Seals what is frozen into DRAM runs, writes a tail for each that has none, and lists
    /// those the log is durable past. Called by the writer after it froze a memtable for a
    /// tail, without `writer`. A failure only ends tails for the session: the batches are
    /// in the log, and readers replay it as they would without tails. Returns whether the
    /// runs sealed into DRAM are due to be flushed (it woke the flusher for them).
    pub(super) fn publish_tails(&self) -> bool {
        if self.seal_pending_dram().is_err() {
            // Damage in the older runs: the flusher meets it too, and poisons the handle.
            return false;
        }
        {
            let mut p = self.tails.lock().unwrap();
            let res = (self.write_new_tails(&mut p)).and_then(|()| self.list_tails(&mut p));
            self.give_up_on_error(&mut p, res);
        }
        // The tails are the memtable the flusher writes out, once they add up to one.
        let tails = (self.state.lock().unwrap().runs.iter())
            .filter(|r| r.in_dram())
            .count();
        let due = tails >= TAILS_PER_FLUSH;
        if due {
            self.wake_flusher();
        }
        due
    }

    /// Lists the tails the log became durable past since they were written, if any wait:
    /// called after every batch, so it must be cheap when none do.
    pub(super) fn list_durable_tails(&self) {
        let waiting = self.tail_unlisted.load(Ordering::Acquire);
        let durable = self.wal.as_ref().map_or(0, |w| w.durable_lsn());
        if waiting == 0 || durable < waiting {
            return;
        }
        let mut p = self.tails.lock().unwrap();
        let res = self.list_tails(&mut p);
        self.give_up_on_error(&mut p, res);
    }

    /// After a commit moved the log's start: drops the tails the new root holds, and lists
    /// the rest against it. Cheap when no tail was ever written.
    pub(super) fn tails_after_commit(&self) {
        let mut p = self.tails.lock().unwrap();
        if p.written.is_empty() && p.listed.is_none() {
            return;
        }
        let res = self.list_tails(&mut p);
        self.give_up_on_error(&mut p, res);
    }

    /// Ends tails for the session if `res` failed (a full disk, say): the batches are in
    /// the log, and readers replay it as they would without tails.
    fn give_up_on_error(&self, p: &mut Published, res: Result<()>) {
        if let Err(e) = res {
            p.given_up = true;
            (self.warnings.lock().unwrap()).push(format!(
                "tails for readers given up for this session: {e} (readers replay the log instead)"
            ));
        }
    }

    /// Writes the tails of DRAM runs that have none, oldest first, as long as they chain.
    fn write_new_tails(&self, p: &mut Published) -> Result<()> {
        let (start, base_ids, stamp) = self.tail_base();
        self.drop_tails_below(p, start)?;
        let dram: Vec<Arc<Run>> = (self.state.lock().unwrap().runs.iter())
            .filter(|r| r.in_dram())
            .cloned()
            .collect();
        let (mut lsn, mut id) = p
            .written
            .last()
            .map_or((start, base_ids), |e| (e.max_lsn, e.end_id));
        let from = dram.iter().position(|r| r.header.min_lsn >= lsn);
        for r in &dram[from.unwrap_or(dram.len())..] {
            let h = &r.header;
            if h.min_lsn != lsn || h.vertex_space < id {
                break;
            }
            let ids: Vec<u64> = {
                let d = self.dict.read().unwrap();
                match d.externals().get(id as usize..h.vertex_space as usize) {
                    Some(x) => x.to_vec(),
                    None => break,
                }
            };
            let run_len = run::file::write_cache(r, &self.medium, &run_name(lsn), stamp)?;
            write_cached(
                &*self.medium,
                &ids_name(lsn),
                &chunk::encode(id, &ids, stamp),
            )?;
            p.written.push(Entry {
                min_lsn: lsn,
                max_lsn: h.max_lsn,
                first_id: id,
                end_id: h.vertex_space,
                run_len,
            });
            (lsn, id) = (h.max_lsn, h.vertex_space);
        }
        Ok(())
    }

    /// Rewrites `TAILS` to list the written tails the log is durable past, against the
    /// root in force; removes it when none are.
    fn list_tails(&self, p: &mut Published) -> Result<()> {
        let (start, base_ids, stamp) = self.tail_base();
        self.drop_tails_below(p, start)?;
        let durable = self.wal.as_ref().map_or(0, |w| w.durable_lsn());
        let list = List {
            store_id: stamp.store_id,
            base_lsn: start,
            base_ids,
            entries: (p.written.iter())
                .take_while(|e| e.max_lsn <= durable)
                .copied()
                .collect(),
        };
        let waiting = p.written.last().filter(|e| e.max_lsn > durable);
        self.tail_unlisted
            .store(waiting.map_or(0, |e| e.max_lsn), Ordering::Release);
        if list.entries.is_empty() {
            if p.listed.take().is_some() {
                self.medium.remove(FILE)?;
            }
            return Ok(());
        }
        if p.listed.as_ref() != Some(&list) {
            debug_assert_eq!(list.chained(), list.entries.len(), "a writer lists a chain");
            write_cached(&*self.medium, FILE, &list.encode())?;
            p.listed = Some(list);
        }
        Ok(())
    }

    /// Forgets and removes the tails that end at or before `start` (a commit holds them
    /// now), and all of them if the first left does not start there.
    fn drop_tails_below(&self, p: &mut Published, start: u64) -> Result<()> {
        let keep_from = p.written.iter().position(|e| e.max_lsn > start);
        let mut gone: Vec<Entry> = match keep_from {
            Some(i) => p.written.drain(..i).collect(),
            None => std::mem::take(&mut p.written),
        };
        if p.written.first().is_some_and(|e| e.min_lsn != start) {
            gone.append(&mut p.written);
        }
        for e in gone {
            for name in [run_name(e.min_lsn), ids_name(e.min_lsn)] {
                if self.medium.exists(&name) {
                    self.medium.remove(&name)?;
                }
            }
        }
        Ok(())
    }

    /// The root's log start, its committed dictionary entries, and a stamp for tails.
    fn tail_base(&self) -> (u64, u64, Stamp) {
        let man = self.manifest.lock().unwrap();
        let root = man.root();
        (root.wal_start_lsn, root.dict_entries, root.next_stamp())
    }
}

/// Tails a reader loaded: runs after the root's, the ids they handed out, and where the
/// log's replay starts instead of the root's log start.
pub(super) struct Loaded {
    /// Their runs, oldest first.
    pub runs: Vec<Arc<Run>>,
    /// Per tail, its first dense id and the external ids from there.
    pub ids: Vec<(u64, Vec<u64>)>,
    /// LSN after the last tail's last record.
    pub end_lsn: u64,
}

/// The tails listed for `root` that chain from it and check whole, for a reader whose
/// dictionary holds the root's `dict_len` entries; `None` when there are none to use.
pub(super) fn load(medium: &Arc<dyn Medium>, root: &Root, dict_len: u64) -> Option<Loaded> {
    let store_id = root.store_id?;
    let list = List::decode(&read_whole(&**medium, FILE)?)?;
    if list.store_id != store_id || list.base_lsn != root.wal_start_lsn || list.base_ids != dict_len
    {
        return None;
    }
    let mut out = Loaded {
        runs: Vec::new(),
        ids: Vec::new(),
        end_lsn: root.wal_start_lsn,
    };
    for e in &list.entries[..list.chained()] {
        let Some((run, ids)) = load_one(medium, e, store_id, root.weighted) else {
            break;
        };
        out.runs.push(Arc::new(run));
        out.ids.push((e.first_id, ids));
        out.end_lsn = e.max_lsn;
    }
    (!out.runs.is_empty()).then_some(out)
}

/// Tail `e`'s run, checked whole, and its ids, if both are what the list says.
fn load_one(
    medium: &Arc<dyn Medium>,
    e: &Entry,
    store_id: u64,
    weighted: bool,
) -> Option<(Run, Vec<u64>)> {
    let run = run::file::open(medium, &run_name(e.min_lsn), Verify::AtOpen).ok()?;
    let h = &run.header;
    let fits = h.min_lsn == e.min_lsn
        && h.max_lsn == e.max_lsn
        && h.vertex_space == e.end_id
        && h.file_len == e.run_len
        && h.level == 0
        && h.stamp.is_some_and(|s| s.store_id == store_id)
        && (h.flags & format::WEIGHTED != 0) == weighted;
    if !fits {
        return None;
    }
    let bytes = read_whole(&**medium, &ids_name(e.min_lsn))?;
    let c = chunk::parse(&bytes).ok()?;
    let n = (e.end_id - e.first_id) as usize;
    let fits = c.first == e.first_id
        && c.len == bytes.len()
        && c.payload.len() == n * 8
        && c.stamp.is_some_and(|s| s.store_id == store_id);
    fits.then(|| (run, bytemuck::pod_collect_to_vec(c.payload)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> List {
        List {
            store_id: 7,
            base_lsn: 100,
            base_ids: 10,
            entries: vec![
                Entry {
                    min_lsn: 100,
                    max_lsn: 150,
                    first_id: 10,
                    end_id: 12,
                    run_len: 4096,
                },
                Entry {
                    min_lsn: 150,
                    max_lsn: 190,
                    first_id: 12,
                    end_id: 12,
                    run_len: 1024,
                },
            ],
        }
    }

    #[test]
    fn a_list_reads_back_and_any_damage_reads_as_none() {
        let b = list().encode();
        assert_eq!(List::decode(&b), Some(list()));
        for i in 0..b.len() {
            let mut d = b.clone();
            d[i] ^= 0x10;
            assert_eq!(List::decode(&d), None, "a flipped byte {i} went unnoticed");
        }
        for n in 0..b.len() {
            assert_eq!(List::decode(&b[..n]), None, "cut at {n}");
        }
    }

    #[test]
    fn only_a_chain_from_the_base_is_used() {
        let mut l = list();
        assert_eq!(l.chained(), 2);
        l.entries[1].first_id = 13;
        assert_eq!(l.chained(), 1, "a gap in the ids ends the chain");
        l.entries[1].first_id = 12;
        l.entries[1].min_lsn = 151;
        assert_eq!(l.chained(), 1, "a gap in the LSNs ends it");
        l.base_lsn = 99;
        assert_eq!(l.chained(), 0, "a list for another root has none");
    }

    #[test]
    fn tail_files_are_told_by_name() {
        for n in [
            "TAILS",
            "TAILS.tmp",
            "tail-00000000000000ff.run",
            "tail-00000000000000ff.ids.tmp",
        ] {
            assert!(is_tail_file(n), "{n}");
        }
        for n in [
            "tail-ff.run",
            "tail-00000000000000ff.ver",
            "run-00000000000000ff.run",
        ] {
            assert!(!is_tail_file(n), "{n}");
        }
    }
}
