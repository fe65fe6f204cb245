//! The group-commit writer: one thread owns the log files; submitters queue encoded blocks
//! and wait for the LSN they need to become durable.
//!
//! This is where a WAL byte becomes durable: `Log::append` writes a group of blocks with
//! one `write_at` (a direct write past the page cache on the file medium: see
//! `medium::direct`), and `Log::persist` is the `fdatasync` that every acknowledgement in
//! `sync` mode waits for.
//!
//! On media that persist cache lines without a system call (pmem, battery) a group is
//! committed in two steps, as XPGraph does: the blocks are written with the first 8 bytes
//! of the group (the first block's magic and length) zeroed and persisted, then those 8
//! bytes — the commit marker — are written with one aligned 8-byte store and persisted.
//! Recovery stops at a block without magic, so a group is either wholly there or not at
//! all, whatever the checksum says about a torn body.

use super::block;
use super::progress::{self, Position, Progress};
use super::recover::{Recovered, SegmentInfo};
use super::segment::{self, SegmentHeader};
use crate::batch::DenseBatch;
use crate::medium::{Medium, Persistence, SegmentFile};
use crate::stamp::Stamp;
use crate::types::Durability;
use crate::{Error, Result};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Segments are cut at about this size; a block never spans two segments.
pub const SEGMENT_BYTES: u64 = 64 << 20;
/// Retired segments kept for reuse instead of being deleted, within a session and across a
/// close (as InnoDB keeps its redo files and PostgreSQL recycles its segments). Overwriting
/// a segment's blocks needs no allocation, so its `fdatasync`s commit no file-system
/// metadata; and freeing blocks is slow where the file system discards them as it frees
/// (ext4 mounted with `discard`, as cloud VMs are: 45 ms per 64 MiB segment measured on
/// this project's VM, 5.5 ms without the option), which a close would otherwise wait for.
/// The cost is up to this many segments of disk held by a closed store.
const SPARES: usize = 2;

struct Queue {
    blocks: Vec<u8>,
    queued_end: u64,
    error: Option<Arc<Error>>,
    shutdown: bool,
    force_persist: bool,
    discard: bool,
    recycle_below: u64,
    spare_buf: Vec<u8>,
}

struct Shared {
    q: Mutex<Queue>,
    work: Condvar,
    done: Condvar,
    durable: AtomicU64,
    written: AtomicU64,
    bytes: AtomicU64,
}

/// What the segments the writer makes are stamped with: the store, and the manifest commit
/// in force when each is made.
#[derive(Clone)]
pub struct LogStamps {
    /// The store's id.
    pub store_id: u64,
    /// The sequence number of the root in force, kept current by the manifest's commits
    /// (see `Manifest::committed_seq`).
    pub committed: Arc<AtomicU64>,
}

impl LogStamps {
    fn now(&self) -> Stamp {
        Stamp::new(self.store_id, self.committed.load(Ordering::Acquire))
    }
}

/// Handle to the log: submit blocks, wait for durability, recycle old segments.
pub struct Wal {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    mode: Durability,
}

impl Wal {
    /// Starts the writer thread, continuing the log where recovery left it.
    /// Segments are cut at about `segment_bytes` ([`SEGMENT_BYTES`] unless a test wants
    /// rotation and recycling to happen often).
    /// `spares` are the spare segments the store holds (see [`segment::is_spare`]): the
    /// writer reuses them, and removes those past the number it keeps.
    pub fn start(
        medium: Arc<dyn Medium>,
        rec: Recovered,
        mode: Durability,
        segment_bytes: u64,
        spares: Vec<String>,
        stamps: LogStamps,
    ) -> Result<Wal> {
        let next = rec.next_lsn;
        let log = Log::open(
            medium,
            rec,
            segment_bytes.max(segment::TRAILER_LEN as u64 + 8),
            spares,
            stamps,
        )?;
        let shared = Arc::new(Shared {
            q: Mutex::new(Queue {
                blocks: Vec::new(),
                queued_end: next,
                error: None,
                shutdown: false,
                force_persist: false,
                discard: false,
                recycle_below: 0,
                spare_buf: Vec::new(),
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            durable: AtomicU64::new(next),
            written: AtomicU64::new(next),
            bytes: AtomicU64::new(0),
        });
        let sh = shared.clone();
        let interval = match mode {
            Durability::Interval(ms) => Some(Duration::from_millis(ms)),
            _ => None,
        };
        let thread = std::thread::Builder::new()
            .name("evograph-wal".into())
            .spawn(move || writer_loop(sh, log, interval))
            .map_err(|e| Error::io("spawn", "evograph-wal", e))?;
        Ok(Wal {
            shared,
            thread: Mutex::new(Some(thread)),
            mode,
        })
    }

    /// Encodes `batch` as the block holding LSNs `first_lsn..` and queues it. Blocks must be
    /// submitted in LSN order (the store's writer lock guarantees it).
    pub fn submit(&self, batch: &DenseBatch, first_lsn: u64) -> Result<u64> {
        let end = first_lsn + batch.lsn_span();
        let durable = self.shared.durable.load(Ordering::Acquire);
        let mut q = self.shared.q.lock().unwrap();
        if let Some(e) = &q.error {
            return Err(Error::Poisoned(e.clone()));
        }
        // The log holds every LSN once, in order: a block that does not start where the
        // last one ended would read back as a torn tail (a gap) or a repeat.
        assert_eq!(
            first_lsn, q.queued_end,
            "WAL blocks are submitted in LSN order, without gaps"
        );
        block::encode(batch, first_lsn, durable, &mut q.blocks);
        q.queued_end = end;
        drop(q);
        self.shared.work.notify_one();
        Ok(end)
    }

    /// Blocks until every record below `lsn` is durable, forcing a persist under
    /// `interval` (under `sync` the writer persists every group anyway). A flush calls it
    /// before committing a manifest whose WAL start is `lsn`: the manifest must never start
    /// the log past its durable end.
    pub fn wait_durable(&self, lsn: u64) -> Result<()> {
        if self.shared.durable.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        let mut q = self.shared.q.lock().unwrap();
        loop {
            if let Some(e) = &q.error {
                return Err(Error::Poisoned(e.clone()));
            }
            if self.shared.durable.load(Ordering::Acquire) >= lsn {
                return Ok(());
            }
            if self.mode != Durability::Sync {
                q.force_persist = true;
                self.shared.work.notify_one();
            }
            q = self.shared.done.wait(q).unwrap();
        }
    }

    /// Makes everything submitted so far durable, whatever the mode.
    pub fn sync(&self) -> Result<()> {
        let end = self.shared.q.lock().unwrap().queued_end;
        let mut q = self.shared.q.lock().unwrap();
        q.force_persist = true;
        drop(q);
        self.shared.work.notify_one();
        self.wait_durable(end)
    }

    /// Records below this LSN are in runs the manifest names: their segments may go.
    pub fn recycle_below(&self, lsn: u64) {
        let mut q = self.shared.q.lock().unwrap();
        q.recycle_below = q.recycle_below.max(lsn);
        drop(q);
        self.shared.work.notify_one();
    }

    /// The LSN up to which records are durable.
    pub fn durable_lsn(&self) -> u64 {
        self.shared.durable.load(Ordering::Acquire)
    }

    /// Bytes of blocks written since this handle started.
    pub fn bytes_written(&self) -> u64 {
        self.shared.bytes.load(Ordering::Relaxed)
    }

    /// An error the writer hit, if any; the store must refuse further writes.
    pub fn error(&self) -> Option<Arc<Error>> {
        self.shared.q.lock().unwrap().error.clone()
    }

    /// Persists what is queued and stops the writer thread. With `discard`, every record is
    /// known to be in committed runs, so every segment is retired too (kept as a spare for
    /// the next writer, or removed).
    pub fn shutdown(&self, discard: bool) -> Result<()> {
        {
            let mut q = self.shared.q.lock().unwrap();
            q.shutdown = true;
            q.force_persist = true;
            q.discard |= discard;
        }
        self.shared.work.notify_one();
        if let Some(t) = self.thread.lock().unwrap().take() {
            let _ = t.join();
        }
        match self.error() {
            Some(e) => Err(Error::Poisoned(e)),
            None => Ok(()),
        }
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        let _ = self.shutdown(false);
    }
}

fn writer_loop(sh: Arc<Shared>, mut log: Log, interval: Option<Duration>) {
    let mut last_persist = Instant::now();
    let mut buf = Vec::new();
    loop {
        let (end, force, shutdown, recycle, discard);
        {
            let mut q = sh.q.lock().unwrap();
            loop {
                let timed_out = interval.is_some_and(|i| {
                    last_persist.elapsed() >= i && log.next_lsn > sh.durable.load(Ordering::Acquire)
                });
                if !q.blocks.is_empty() || q.shutdown || q.force_persist || timed_out {
                    break;
                }
                q = match interval {
                    Some(i) => sh.work.wait_timeout(q, i).unwrap().0,
                    None => sh.work.wait(q).unwrap(),
                };
            }
            std::mem::swap(&mut buf, &mut q.blocks);
            if q.blocks.capacity() == 0 {
                q.blocks = std::mem::take(&mut q.spare_buf);
            }
            end = q.queued_end;
            force = std::mem::take(&mut q.force_persist);
            shutdown = q.shutdown;
            recycle = q.recycle_below;
            discard = q.discard;
        }
        let res = (|| -> Result<()> {
            if !buf.is_empty() {
                log.append(&mut buf, end)?;
                sh.written.store(end, Ordering::Release);
                sh.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
            }
            let due = interval.is_none_or(|i| last_persist.elapsed() >= i);
            if (due || force || shutdown) && log.next_lsn > sh.durable.load(Ordering::Acquire) {
                log.persist()?;
                last_persist = Instant::now();
                sh.durable.store(log.next_lsn, Ordering::Release);
            }
            log.recycle(recycle)
        })();
        buf.clear();
        {
            let mut q = sh.q.lock().unwrap();
            if q.spare_buf.capacity() < buf.capacity() {
                q.spare_buf = std::mem::take(&mut buf);
            }
            if let Err(e) = res {
                q.error.get_or_insert(Arc::new(e));
            }
        }
        sh.done.notify_all();
        if shutdown && sh.q.lock().unwrap().blocks.is_empty() {
            if discard {
                if let Err(e) = log.discard() {
                    sh.q.lock().unwrap().error.get_or_insert(Arc::new(e));
                }
            }
            return;
        }
    }
}

/// The writer thread's view of the files.
struct Log {
    medium: Arc<dyn Medium>,
    segments: VecDeque<SegmentInfo>,
    cur: Box<dyn SegmentFile>,
    /// The current segment's header page, with its progress slots (a segment of an earlier
    /// format, continued after recovery, has none).
    page: Option<Box<[u8]>>,
    /// Where the current segment's blocks (and trailer) must end: within the length fixed
    /// when it was made, at about `segment_bytes` of blocks (`None`: a segment of an
    /// earlier format, which grows).
    cur_limit: Option<u64>,
    /// The progress record written last in the current segment.
    progress_seq: u64,
    /// Which slot the next progress record goes to.
    next_slot: NextSlot,
    /// Where the log was durable as of the last completed persist.
    durable: Position,
    /// The furthest byte a write may end at before a newer progress record is durable:
    /// the `written` end of the newest durable record plus [`Log::reserve`]. Past it a
    /// power cut could keep blocks that no surviving record accounts for, which recovery
    /// must call damage.
    bound: u64,
    offset: u64,
    stamps: LogStamps,
    next_lsn: u64,
    spares: Vec<String>,
    /// Segments hold about this many bytes of blocks.
    segment_bytes: u64,
    /// Two-step commits with 8-byte markers (cache-line media).
    marked: bool,
    /// Commit markers written after the next persist of the body: (offset, bytes).
    markers: Vec<(u64, [u8; 8])>,
}

impl Log {
    fn open(
        medium: Arc<dyn Medium>,
        rec: Recovered,
        segment_bytes: u64,
        mut spares: Vec<String>,
        stamps: LogStamps,
    ) -> Result<Log> {
        spares.sort();
        if spares.len() > SPARES {
            for extra in spares.drain(SPARES..) {
                medium.remove(&extra)?;
            }
            medium.sync_dir()?;
        }
        let mut segments: VecDeque<SegmentInfo> = rec.segments.into();
        let marked = medium.persistence() == Persistence::CacheLine;
        let Current {
            file: cur,
            page,
            offset,
        } = match segments.back() {
            Some(last) => continue_segment(&*medium, last, rec.end_offset, segment_bytes)?,
            None => {
                let info = SegmentInfo {
                    seq: 1,
                    first_lsn: rec.next_lsn,
                    header_len: segment::PAGE_LEN,
                };
                segments.push_back(info);
                // A new file rather than a spare: a writer that appends nothing and closes
                // removes it again (the spares are kept already) and leaves the store's
                // files as they were. Spares are taken at rotation.
                let made = new_segment(&*medium, info, None, segment_bytes, stamps.now())?;
                Current {
                    file: made.file,
                    page: Some(made.page),
                    offset: segment::PAGE_LEN,
                }
            }
        };
        let recorded = page.as_deref().map(progress::read).unwrap_or_default();
        let behind = page.is_some() && recorded.newest.is_none_or(|p| p.durable.lsn < rec.next_lsn);
        let mut log = Log {
            cur_limit: match page {
                Some(_) => Some(cur.len()?.min(segment::PAGE_LEN + segment_bytes)),
                None => None,
            },
            medium,
            segments,
            cur,
            page,
            progress_seq: recorded.newest.map_or(0, |p| p.seq),
            // What recovery left (or a new segment's making) is durable.
            next_slot: NextSlot::Other,
            durable: Position {
                offset,
                lsn: rec.next_lsn,
            },
            bound: 0,
            offset,
            stamps,
            next_lsn: rec.next_lsn,
            spares,
            segment_bytes,
            marked,
            markers: Vec::new(),
        };
        // `continue_segment` persisted the page as recovery left it.
        log.bound = recorded.newest.map_or(offset, |p| p.written.offset) + log.reserve();
        if behind {
            // Recovery kept blocks past the record's durable point (a crash lost the record
            // published after their persist), and `continue_segment` persisted them: say so
            // before anything is written, or a reader would leave them out until the next
            // persist.
            log.publish_durable()?;
        }
        Ok(log)
    }

    /// Writes a group of encoded blocks ending at LSN `end` (with its commit marker held
    /// back on cache-line media; `blocks` is scratch afterwards).
    fn append(&mut self, blocks: &mut [u8], end: u64) -> Result<()> {
        debug_assert!(blocks.len() >= block::HEADER_LEN);
        assert!(
            end > self.next_lsn,
            "a group of blocks holds LSNs past the log's end"
        );
        // Room is kept for the trailer that rotation writes after the last block.
        let room = blocks.len() as u64 + segment::TRAILER_LEN as u64;
        let full = match self.cur_limit {
            // A segment of a fixed length takes only what fits; a group larger than a
            // segment gets one of its own, made to its size.
            Some(limit) => self.offset + room > limit,
            // A segment of an earlier format, continued after recovery, takes no block of
            // this build's (builds before it could not tell them from damage).
            None => true,
        };
        if full {
            self.rotate(room)?;
        }
        if self.marked {
            let mut m = [0u8; 8];
            m.copy_from_slice(&blocks[..8]);
            blocks[..8].fill(0);
            self.markers.push((self.offset, m));
        }
        let written = Position {
            offset: self.offset + blocks.len() as u64,
            lsn: end,
        };
        self.record_progress(written)?;
        if self.page.is_some() && written.offset > self.bound {
            self.persist_record(written)?;
        }
        debug_assert!(
            self.page.is_none() || written.offset <= self.bound,
            "a write past what a durable progress record accounts for"
        );
        self.cur.write_at(self.offset, blocks)?;
        self.offset += blocks.len() as u64;
        self.next_lsn = end;
        Ok(())
    }

    /// Records in the header page, before a write of blocks ending at `written`, the log's
    /// durable end and that write's end (see `progress`): both become durable with the
    /// blocks, by the same persist.
    fn record_progress(&mut self, written: Position) -> Result<()> {
        self.put_progress(written, PageWrite::Ahead)
    }

    /// Makes the progress record just written for a write ending at `written` durable
    /// before the write: it reaches past [`Log::bound`] (a group larger than
    /// [`Log::reserve`], or many groups between two persists), and the record in
    /// force after a power cut must account for every byte the cut keeps. The next record
    /// goes to the other slot, so that tearing it cannot take this one.
    fn persist_record(&mut self, written: Position) -> Result<()> {
        self.cur.persist()?;
        self.next_slot = NextSlot::Other;
        self.bound = written.offset + self.reserve();
        Ok(())
    }

    /// Writes the next progress record, with its write-back started (`Ahead`: the persist
    /// that follows waits for it) or left to the next persist (`Behind`).
    fn put_progress(&mut self, written: Position, how: PageWrite) -> Result<()> {
        let Some(page) = self.page.as_mut() else {
            return Ok(());
        };
        // Every record between two persists goes to one slot, which a crash can tear; the
        // other holds the record the last persist made durable.
        self.progress_seq += match std::mem::replace(&mut self.next_slot, NextSlot::Same) {
            NextSlot::Other => 1,
            NextSlot::Same => 2,
        };
        let p = Progress {
            seq: self.progress_seq,
            durable: self.durable,
            written,
        };
        p.put(page);
        // Cache-line media write back what was stored: the slot, not the page.
        let (at, bytes) = match self.marked {
            true => (
                p.slot_offset(),
                &page[p.slot_offset()..][..progress::SLOT_LEN],
            ),
            false => (0, &page[..]),
        };
        match how {
            PageWrite::Ahead => self.cur.write_ahead(at as u64, bytes),
            PageWrite::Behind => self.cur.write_behind(at as u64, bytes),
        }
    }

    /// The persist every `sync` acknowledgement waits for: the group's bytes, then (on
    /// cache-line media) its commit markers.
    fn persist(&mut self) -> Result<()> {
        self.cur.persist()?;
        // Every record written so far is durable, the newest one written for the last
        // write (or published at the last persist, or made with the segment): its
        // `written` end is where the log ends.
        if self.page.is_some() {
            self.bound = self.offset + self.reserve();
        }
        if !self.markers.is_empty() {
            for (off, m) in std::mem::take(&mut self.markers) {
                self.cur.write_at(off, &m)?;
            }
            self.cur.persist()?;
        }
        self.durable = Position {
            offset: self.offset,
            lsn: self.next_lsn,
        };
        self.next_slot = NextSlot::Other;
        self.publish_durable()
    }

    /// Records in the header page that the log is durable to its end, without a persist
    /// of its own. A reader in another process takes the log up to the newest record's
    /// durable point (`recover` with [`Reach::Durable`](super::recover::Reach)), and a
    /// `sync` acknowledgement waits for this write, so such a reader holds every
    /// acknowledged record and none still in flight. The claim holds whichever of the
    /// header page's writes a crash keeps: the blocks were durable before it was made.
    fn publish_durable(&mut self) -> Result<()> {
        // Through the page cache, no write-back started: a direct write of the page, or
        // one started now that the next record's write of the page would wait for, made
        // a sync ingest of 4-record batches take 2x and 1.19x as long.
        self.put_progress(self.durable, PageWrite::Behind)
    }

    /// How far past a durable record the current segment may be written: the reserve of
    /// its length as this writer knows it, which is at most its header's (a spare made
    /// longer, or a segment made to a large group's size, only widens recovery's).
    fn reserve(&self) -> u64 {
        progress::reserve(self.cur_limit.unwrap_or(0))
    }

    /// Bytes of the current segment's header.
    fn cur_header_len(&self) -> u64 {
        self.segments
            .back()
            .expect("log always has a segment")
            .header_len
    }

    /// Ends the current segment and starts the next. The order is what recovery relies on:
    /// 1. the current segment's blocks are durable and stale bytes of a recycled file cut,
    ///    so every segment but the last is complete;
    /// 2. the next segment exists durably (header persisted, directory synced);
    /// 3. only then the trailer naming it is written after the last block and persisted,
    ///    so a trailer always names a segment that exists, and a missing one is damage.
    ///
    /// A crash between 2 and 3 leaves a segment that ends without a trailer, or with a torn
    /// one, followed by an empty segment: recovery reads on into it.
    ///
    /// A segment of a fixed length keeps it (its header says it; bytes past a recycled
    /// file's last write are told apart by their LSNs and the progress record); one of an
    /// earlier format is cut at its last block. The next segment holds at least `room`.
    fn rotate(&mut self, room: u64) -> Result<()> {
        if self.cur_limit.is_none() {
            self.cur.set_len(self.offset)?;
        }
        self.persist()?;
        let last = *self.segments.back().expect("log always has a segment");
        let info = SegmentInfo {
            seq: last.seq + 1,
            first_lsn: self.next_lsn,
            header_len: segment::PAGE_LEN,
        };
        let blocks = self.segment_bytes.max(room);
        let next = new_segment(
            &*self.medium,
            info,
            self.spares.pop(),
            blocks,
            self.stamps.now(),
        )?;
        let trailer = segment::Trailer {
            next_seq: info.seq,
            end_lsn: self.next_lsn,
        };
        self.cur.write_at(self.offset, &trailer.encode())?;
        self.cur.persist()?;
        self.cur = next.file;
        self.cur_limit = Some(segment::PAGE_LEN + blocks);
        self.page = Some(next.page);
        // Records 0 and 1 are the new segment's making.
        self.progress_seq = 1;
        self.next_slot = NextSlot::Other;
        self.segments.push_back(info);
        self.offset = segment::PAGE_LEN;
        self.durable = Position {
            offset: self.offset,
            lsn: self.next_lsn,
        };
        // Its making persisted records 0 and 1, written where its blocks begin.
        self.bound = self.offset + self.reserve();
        Ok(())
    }

    /// Retires every segment: the caller committed runs holding every record. A last
    /// segment nothing was appended to (a session that wrote nothing) is removed, not kept:
    /// it costs nothing to free, and keeping it would change a store the session did not
    /// write to.
    ///
    /// The last segment, when it was made new rather than recycled, is cut to the pages
    /// written once it is a spare: past them it is a hole of the fixed length, which costs
    /// no disk but makes a small closed store look 64 MiB larger to whatever copies it
    /// without holes (`tar`, `rsync`, `std::fs::copy`). Only once it is a spare: a segment
    /// shorter than its header records is damage. A recycled one keeps its old blocks, as
    /// spares do, so that freeing them is not waited for.
    fn discard(&mut self) -> Result<()> {
        let unused_last = if self.offset == self.cur_header_len() {
            self.segments.pop_back()
        } else {
            None
        };
        let fresh_last = self
            .segments
            .back()
            .copied()
            .filter(|_| self.cur_is_fresh());
        let mut cut = None;
        for s in std::mem::take(&mut self.segments) {
            let spare = self.retire(s.seq)?;
            if fresh_last.is_some_and(|l| l.seq == s.seq) {
                cut = spare;
            }
        }
        if let Some(s) = unused_last {
            self.medium.remove(&segment::name(s.seq))?;
        }
        if let Some(spare) = cut {
            self.medium
                .open(&spare)?
                .set_len(self.offset.next_multiple_of(segment::PAGE_LEN))?;
        }
        self.medium.sync_dir()
    }

    /// Whether the current segment was made new (its bytes past the last write a hole),
    /// not a retired one reused or a segment of an earlier format.
    fn cur_is_fresh(&self) -> bool {
        let header = self.page.as_deref().and_then(SegmentHeader::decode);
        matches!(
            header.map(|h| h.layout),
            Some(segment::Layout::Paged {
                life: segment::Life::Fresh,
                ..
            })
        )
    }

    /// Retires segments whose records all lie below `lsn`.
    fn recycle(&mut self, lsn: u64) -> Result<()> {
        let mut changed = false;
        while self.segments.len() > 1 && self.segments[1].first_lsn <= lsn {
            let old = self.segments.pop_front().unwrap();
            self.retire(old.seq)?;
            changed = true;
        }
        if changed {
            self.medium.sync_dir()?;
        }
        Ok(())
    }

    /// Makes segment `seq` a spare, or removes it when [`SPARES`] are kept already. The
    /// caller syncs the directory. A spare keeps its old blocks: recovery never reads a
    /// spare, and once reused its stale blocks carry LSNs below the log's, which recovery
    /// tells from new ones.
    /// Returns the spare's name when it is kept.
    fn retire(&mut self, seq: u64) -> Result<Option<String>> {
        let name = segment::name(seq);
        if self.spares.len() < SPARES {
            let spare = (1..)
                .map(segment::spare_name)
                .find(|n| !self.spares.contains(n))
                .expect("a free slot among SPARES + 1 names");
            self.medium.rename(&name, &spare)?;
            self.spares.push(spare.clone());
            Ok(Some(spare))
        } else {
            self.medium.remove(&name)?;
            Ok(None)
        }
    }
}

/// A segment just made.
struct Made {
    file: Box<dyn SegmentFile>,
    /// Its header page, as written.
    page: Box<[u8]>,
}

/// Makes segment `info` durably, from a spare when one is given, its header stamped with
/// `stamp`, with room for `blocks` bytes of blocks (more if a spare is larger): its length
/// and its first progress records are made durable before the header that records them,
/// so a header that reads never claims a length the file did not have, nor stands in
/// front of slots that were never written.
fn new_segment(
    medium: &dyn Medium,
    info: SegmentInfo,
    spare: Option<String>,
    blocks: u64,
    stamp: Stamp,
) -> Result<Made> {
    let name = segment::name(info.seq);
    let life = match spare {
        Some(_) => segment::Life::Recycled,
        None => segment::Life::Fresh,
    };
    let seg = match spare {
        Some(s) => {
            // The spare's old header goes before it takes a segment's name: a crash
            // between the rename and the new header's persist must not leave an intact
            // header, which would name this sequence number when a close restarted the
            // numbering, and recovery would replay the spare's stale blocks as the log.
            let old = medium.open(&s)?;
            old.write_at(0, &[0u8; segment::PAGE_LEN as usize])?;
            old.persist()?;
            drop(old);
            medium.rename(&s, &name)?;
            medium.open_log(&name)?
        }
        None => medium.create_log(&name)?,
    };
    let want = segment::PAGE_LEN + blocks.next_multiple_of(segment::PAGE_LEN);
    let len = seg.len()?.next_multiple_of(segment::PAGE_LEN).max(want);
    if seg.len()? != len {
        seg.set_len(len)?;
        seg.persist()?;
    }
    let hdr = SegmentHeader {
        seq: info.seq,
        first_lsn: info.first_lsn,
        stamp: Some(stamp),
        layout: segment::Layout::Paged { len, life },
    };
    let mut page = vec![0u8; segment::PAGE_LEN as usize].into_boxed_slice();
    let start = Position {
        offset: segment::PAGE_LEN,
        lsn: info.first_lsn,
    };
    for seq in [0, 1] {
        let made = Progress {
            seq,
            durable: start,
            written: start,
        };
        made.put(&mut page);
    }
    // The progress slots are durable before the header that makes the file a segment: a
    // header that reads always has them behind it, so slots gone beside one are damage.
    seg.write_at(0, &page)?;
    seg.persist()?;
    page[..segment::HEADER_LEN as usize].copy_from_slice(&hdr.encode());
    seg.write_at(0, &page)?;
    seg.persist()?;
    medium.sync_dir()?;
    Ok(Made { file: seg, page })
}

/// Opens the segment recovery ended in, to append after its last block: its header page
/// if it has one (whose progress record recovery left current), else a segment of an
/// earlier format preallocated as before on media that preallocate. What recovery read
/// is persisted first: a killed writer's last blocks may have reached the file but not
/// the medium, and the progress record is about to claim them durable.
fn continue_segment(
    medium: &dyn Medium,
    last: &SegmentInfo,
    end_offset: u64,
    segment_bytes: u64,
) -> Result<Current> {
    let file = medium.open_log(&segment::name(last.seq))?;
    let mut page = None;
    if last.header_len == segment::PAGE_LEN {
        let mut p = vec![0u8; segment::PAGE_LEN as usize].into_boxed_slice();
        file.read_at(0, &mut p)?;
        file.persist()?;
        page = Some(p);
    } else if medium.preallocates() && file.len()? < segment_bytes {
        file.set_len(segment_bytes)?;
        file.persist()?;
    }
    Ok(Current {
        file,
        page,
        offset: end_offset,
    })
}

/// How a progress record reaches the medium.
#[derive(Clone, Copy)]
enum PageWrite {
    /// Written, and its write-back started for the persist that follows.
    Ahead,
    /// Written where readers see it; the next persist writes it back.
    Behind,
}

/// Where the next progress record goes. A persist makes the slot written last durable;
/// until the next one, records (the durable point published, the next writes' records) all
/// go to the other slot, so that a crash, which tears at most the slot being written,
/// always leaves one record that reads. Its `seq` rises by 2 to stay in the slot.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NextSlot {
    /// The slot not written last: the first record after a persist.
    Other,
    /// The slot written last, which no persist has made durable since.
    Same,
}

/// The segment the writer appends to when it starts.
struct Current {
    file: Box<dyn SegmentFile>,
    /// Its header page (segments of earlier formats have none).
    page: Option<Box<[u8]>>,
    /// Where the next block goes.
    offset: u64,
}
