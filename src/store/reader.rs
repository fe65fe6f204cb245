//! Read-only opens beside a live writer.
//!
//! A reader takes no lock and writes nothing, so any number of readers run while one
//! writer ingests, and the writer never waits for them. It sees one committed state: the
//! runs of a manifest root plus the log from that root's start LSN, as far as complete
//! blocks reach (SQLite's WAL readers and LMDB's readers work the same way).
//!
//! What the writer may do meanwhile, and why the reader copes:
//! - **Commit a new root** (a flush or merge): the reader re-reads the manifest after
//!   loading. If the root changed, runs it had not opened yet may since have been merged
//!   away and log segments it read may have been recycled: it keeps what it loaded only if
//!   that reaches the acknowledged point the writer had published when the load began
//!   ([`complete`]), and otherwise loads again from the new root.
//! - **Delete runs** a newer root no longer names: a run the reader already mapped stays
//!   readable (an unlinked file lives while mapped); one it had not opened yet is missing,
//!   which the root check above turns into a retry.
//! - **Recycle or cut log segments**: the reader copies log segments with `pread` instead of
//!   mapping them ([`crate::wal::recover`] without repair), so a segment truncated under it
//!   gives a short read, never a `SIGBUS`. Runs and the dictionary prefix it maps are never
//!   truncated by a writer.
//! - **Publish, replace or remove tails** (`tails.rs`): a reader uses only the tails that
//!   chain from the root it loaded and check whole; one missing, torn or listed for
//!   another root ends the chain, and the log gives the rest. An open that fails with
//!   tails is tried again without them.
//! - **Be half way through a block or a manifest slot**: a torn block ends the log (its
//!   checksum or, on pmem, its missing commit marker), a torn slot leaves the older root in
//!   force.
//! - **Have written a group it has not made durable yet**: the reader replays the newest
//!   segment only up to the durable point its progress record names, which the writer
//!   publishes after each persist and before it acknowledges ([`super::LogReach`]): so a
//!   reader holds every batch acknowledged before it opened and none a power cut could
//!   take back. With no writer holding the lock it reads every block that reads, as the
//!   next writer's recovery will keep them.
//!
//! A store that is damaged for real fails every attempt with the same error, which is then
//! returned; errors are retried only while a writer holds the lock or the root moves.

use super::lock::StoreLock;
use super::open::{open_on, prepare_dir};
use super::{Graph, Options};
use crate::manifest::{self, Manifest};
use crate::medium::file::FileMedium;
use crate::medium::Medium;
use crate::wal;
use crate::{Error, Result};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Attempts before a reader gives up on a root that keeps moving or an error that persists.
const ATTEMPTS: u32 = 40;

/// Opens `path` read-only; see the module documentation.
pub(super) fn open_reader(path: &Path, opts: Options) -> Result<Graph> {
    debug_assert!(opts.read_only);
    prepare_dir(path, &opts)?;
    // Held while the handle opens, not while it is open: the writer keeps what there is
    // to replay small and publishes tails for readers that open, and a handle replays only
    // then (`readers.rs`).
    let _mark = super::readers::Mark::take(path);
    // Reads go through plain files whatever medium the store was made on: a mapped log
    // segment that the writer cuts would fault, a copied one cannot. The byte format is
    // the same on every medium.
    let medium: Arc<dyn Medium> = Arc::new(FileMedium::new(path));
    let mut pause = Duration::from_millis(2);
    let mut attempt = 0;
    let mut tails = opts.tails;
    loop {
        attempt += 1;
        let before = root_seq(&*medium);
        let mut opts = opts.clone();
        opts.tails = tails;
        let writer = writer_active(path);
        if !writer {
            // No group is in flight: the next writer's recovery keeps every block that
            // reads, durable point or not (a crash can lose the record published after a
            // persist), so the reader shows them too.
            opts.log_reach = super::LogReach::Written;
        }
        // Read before loading, so that it bounds every batch acknowledged before now.
        let acknowledged = writer.then(|| wal::acknowledged_lsn(&*medium)).flatten();
        let res = open_on(path, medium.clone(), None, opts);
        let after = root_seq(&*medium);
        let moved = before != after;
        match res {
            Ok(g) if !moved || complete(&g, acknowledged) => return Ok(g),
            // Tails are a cache: whatever went wrong, the log alone decides the next try.
            Err(_) if tails != super::Tails::Never => tails = super::Tails::Never,
            Ok(_) if attempt < ATTEMPTS => {}
            Err(e) if attempt < ATTEMPTS && (moved || (retryable(&e) && writer_active(path))) => {}
            Ok(_) => {
                return Err(Error::Invalid(format!(
                    "store {} changed under every one of {ATTEMPTS} read-only opens; try again",
                    path.display()
                )))
            }
            Err(e) => return Err(e),
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

/// Whether a load whose root moved meanwhile may stand: it reached every batch the writer
/// had acknowledged before it began. The runs it opened stay readable however the root
/// moves (a run is never changed, and a mapped file outlives its removal), and the log it
/// replayed is a checked, gap-free run of whole blocks from its root's start (a segment
/// recycled under it ends the replay early, at a block whose LSN or checksum does not fit):
/// a prefix of the log that reaches `acknowledged` is a state the writer committed, new
/// enough, and one that does not is loaded again.
/// Loading again instead cost readers beside a Kron22 ingest, whose writer commits a root
/// every few tenths of a second, up to five loads of a second each.
fn complete(g: &Graph, acknowledged: Option<u64>) -> bool {
    acknowledged.is_some_and(|lsn| g.log_read_to() >= lsn)
}

/// The sequence number of the manifest's current root, if it reads.
fn root_seq(medium: &dyn Medium) -> Option<u64> {
    if !medium.exists(manifest::FILE) {
        return None;
    }
    Manifest::open(medium).ok().map(|m| m.root().seq)
}

/// Errors that a writer's work in progress can cause a reader: a file that vanished or
/// was cut between listing and reading it, or log and manifest bytes caught half written.
fn retryable(e: &Error) -> bool {
    match e {
        Error::Corrupt(_) => true,
        Error::Io { source, .. } => matches!(
            source.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::UnexpectedEof
        ),
        _ => false,
    }
}

/// Whether a writer holds the store open right now.
fn writer_active(path: &Path) -> bool {
    StoreLock::is_held(path)
}
