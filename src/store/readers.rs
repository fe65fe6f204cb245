//! Readers in other processes make themselves known to the writer, which then keeps its
//! memtable small and publishes tails (`tails.rs`).
//!
//! A read-only open replays every update the log holds past the last flush (`reader.rs`).
//! Under the default budget that is everything a Kron22 ingest wrote (64 M updates: 2 s
//! and 1.1 GB per reader), and readers started every half second beside it piled up until
//! the machine ran out of memory and the writer was killed. So a reader announces itself
//! on `READERS` while it opens: it holds a shared `flock` on the file and sets the file's
//! modification time. The writer looks every [`PROBE_EVERY`] (an exclusive `try_lock`, let
//! go at once, and an `fstat`) and, while it saw a reader within [`LINGER`], freezes its
//! memtable at [`FREEZE_BYTES_WITH_READERS`] (a flush like any other, so a reader replays
//! at most that much) and publishes tails, so a reader replays far less.
//!
//! Why both: the lock says "a reader is opening now", the time "one began since you last
//! looked". A reader that loaded tails held the lock for a few tens of milliseconds, which
//! a writer looking only between its seals missed; it stopped publishing, and the next
//! reader replayed seconds of log. The time cannot be missed. And why only while it opens:
//! a read-only handle is a fixed state and never replays again, yet one held open for an
//! hour (a notebook's) kept the writer at small memtables and tails all that hour, 2.7x
//! its time alone for a Kron22 ingest. Nothing is stored: the file is empty, the lock and
//! the time are the message, and a reader killed with `kill -9` lets go of the lock with
//! its descriptors and stops costing the writer [`LINGER`] after it began.
//!
//! The writer creates the file; a reader of a store no writer opened since (or that a
//! read-only file system keeps from it) opens without announcing itself, and one that may
//! not write the file only holds the lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// The file readers lock while they open.
pub(crate) const FILE: &str = "READERS";

/// How long after it last saw a reader the writer keeps its memtables small: readers
/// started every half second keep it so, and one that opened (or was killed opening)
/// stops costing the writer within a second.
pub(crate) const LINGER: Duration = Duration::from_millis(750);

/// How often the writer looks for readers: a look is three system calls (a lock tried and
/// let go, and an `fstat`).
const PROBE_EVERY: Duration = Duration::from_millis(20);

/// The memtable size at which a writer with readers about freezes it: about 5 M updates.
/// Kron22 ingested with a stats reader started every 0.5 s (`scripts/readers-beside.py`, 3
/// rounds, medians): at 64 MiB the ingest took 2.95x its time alone and readers 0.85-3.6 s;
/// at 32 MiB 2.76x and 0.5-2.1 s. Most of the writer's loss is its own work, not the
/// readers' share of the cores: with tails and no reader at all (`--tails always`) the
/// ingest took 2.9x its time alone (14.8 CPU-s against 4.5), its small seals each
/// resolving their updates against the runs before them, and those runs merged.
/// 8 MiB did no better (one round: 4.73x against 4.04x at 32 MiB the same day): the flusher
/// falls behind the smaller memtables, so readers still replayed 1-4.5 M updates.
pub(crate) const FREEZE_BYTES_WITH_READERS: usize = 32 << 20;

/// A reader's announcement, held while it opens.
pub(crate) struct Mark(#[allow(dead_code)] File);

impl Mark {
    /// Announces a reader of the store at `dir`; `None` when no writer made the file.
    pub(crate) fn take(dir: &Path) -> Option<Mark> {
        let path = dir.join(FILE);
        let (f, writable) = match OpenOptions::new().write(true).open(&path) {
            Ok(f) => (f, true),
            Err(_) => (File::open(&path).ok()?, false),
        };
        // Blocks only while the writer looks (two system calls).
        f.lock_shared().ok()?;
        if writable {
            // A writer busy past this reader's open still finds the time moved; one that
            // may not be set leaves the lock to say it.
            let _ = f.set_modified(SystemTime::now());
        }
        Some(Mark(f))
    }
}

/// The writer's view of the readers.
pub(crate) struct Watch {
    file: Option<File>,
    seen: Mutex<Seen>,
}

/// What the writer saw when it last looked.
#[derive(Default)]
struct Seen {
    /// When it last looked.
    looked: Option<Instant>,
    /// When it last saw a reader.
    reader: Option<Instant>,
    /// The file's modification time then: readers set it as they begin.
    modified: Option<SystemTime>,
}

impl Watch {
    /// What a writer of the store at `dir` watches, creating the file; a read-only handle
    /// (or a writer that cannot create it) watches nothing.
    pub(crate) fn open(dir: &Path, writer: bool) -> Watch {
        let file = writer
            .then(|| {
                (OpenOptions::new().create(true).truncate(false).write(true))
                    .open(dir.join(FILE))
                    .ok()
            })
            .flatten();
        let modified = file.as_ref().and_then(modified);
        Watch {
            file,
            seen: Mutex::new(Seen {
                modified,
                ..Seen::default()
            }),
        }
    }

    /// Whether a reader was opening within [`LINGER`]; looks again if [`PROBE_EVERY`]
    /// passed since the last look.
    pub(crate) fn readers_about(&self) -> bool {
        let Some(f) = &self.file else { return false };
        let now = Instant::now();
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.looked.is_none_or(|t| now - t >= PROBE_EVERY) {
            seen.looked = Some(now);
            let m = modified(f);
            let began = m.is_some() && m != seen.modified;
            seen.modified = m;
            if began || reader_holds(f) {
                seen.reader = Some(now);
            }
        }
        seen.reader.is_some_and(|t| now - t < LINGER)
    }
}

/// When a reader last began on `f` (its modification time), if the system says.
fn modified(f: &File) -> Option<SystemTime> {
    f.metadata().and_then(|m| m.modified()).ok()
}

/// Whether some reader holds its shared lock on `f` now.
fn reader_holds(f: &File) -> bool {
    match f.try_lock() {
        Ok(()) => {
            let _ = f.unlock();
            false
        }
        Err(TryLockError::WouldBlock) => true,
        Err(TryLockError::Error(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_is_seen_while_it_holds_its_mark_and_for_the_linger_after() {
        let d = tempfile::tempdir().unwrap();
        assert!(Mark::take(d.path()).is_none(), "no writer made the file");
        let w = Watch::open(d.path(), true);
        assert!(!w.readers_about());
        let mark = Mark::take(d.path()).expect("the writer made the file");
        std::thread::sleep(PROBE_EVERY);
        assert!(w.readers_about(), "a reader holds its mark");
        drop(mark);
        std::thread::sleep(PROBE_EVERY);
        assert!(w.readers_about(), "seen within the linger");
        std::thread::sleep(LINGER);
        assert!(!w.readers_about(), "gone for longer than the linger");
        assert!(
            !Watch::open(d.path(), false).readers_about(),
            "readers watch nothing"
        );
    }

    #[test]
    fn a_reader_that_came_and_went_between_two_looks_is_seen() {
        let d = tempfile::tempdir().unwrap();
        let w = Watch::open(d.path(), true);
        assert!(!w.readers_about());
        drop(Mark::take(d.path()).expect("the writer made the file"));
        std::thread::sleep(PROBE_EVERY);
        assert!(w.readers_about(), "its time moved, though its lock is gone");
        std::thread::sleep(LINGER + PROBE_EVERY);
        assert!(!w.readers_about(), "and it is not seen again");
    }

    #[test]
    fn a_read_only_handle_kept_open_stops_costing_the_writer_once_opened() {
        let d = tempfile::tempdir().unwrap();
        let opts = crate::Options::default().memtable_bytes(1 << 30);
        let g = crate::Graph::create(d.path(), opts).unwrap();
        g.insert_edges(&[(0, 1)]).unwrap();
        let reader = crate::Graph::open(d.path(), crate::Options::default().read_only(true));
        let reader = reader.unwrap();
        std::thread::sleep(PROBE_EVERY);
        assert_eq!(
            g.inner.freeze_bytes(),
            FREEZE_BYTES_WITH_READERS,
            "it opened"
        );
        std::thread::sleep(LINGER + PROBE_EVERY);
        assert_eq!(g.inner.freeze_bytes(), 1 << 29, "open, but done replaying");
        assert_eq!(crate::GraphView::num_edges(&reader.snapshot().unwrap()), 1);
        drop(reader);
        g.close().unwrap();
    }

    #[test]
    fn a_writer_freezes_its_memtable_small_while_readers_open_beside_it() {
        let d = tempfile::tempdir().unwrap();
        let opts = crate::Options::default().memtable_bytes(1 << 30);
        let g = crate::Graph::create(d.path(), opts).unwrap();
        let inner = &g.inner;
        assert_eq!(inner.freeze_bytes(), 1 << 29, "half the budget alone");
        let mark = Mark::take(d.path()).expect("the writer made the file");
        std::thread::sleep(PROBE_EVERY);
        assert_eq!(inner.freeze_bytes(), FREEZE_BYTES_WITH_READERS);
        drop(mark);
        std::thread::sleep(LINGER + PROBE_EVERY);
        assert_eq!(inner.freeze_bytes(), 1 << 29, "the reader left");
        g.close().unwrap();
    }
}
