//! The file medium's log segments: appended with direct I/O (`O_DIRECT`), past the page cache.
//!
//! Why: a buffered write into a new file costs the writer a copy into freshly allocated
//! page-cache pages, and on ext4 that copy is slow. Measured on this project's VM, 128 MiB
//! in 2 MiB appends with an `fdatasync` after each, into a new file: 0.24–0.27 s of system
//! CPU buffered against 0.01–0.03 s with `O_DIRECT`, for the same wall time (the device's).
//! A WAL is written once and read only by recovery, so its pages are worth nothing in the
//! cache, and the CPU the copy took is what the ingest threads beside the WAL writer need.
//!
//! How: a direct write's offset, length and buffer address must be multiples of the device's
//! logical block size; [`ALIGN`] (4 KiB) is a multiple of every common one. The segment keeps
//! the partial page at its end in memory ([`Tail`]) and writes each append as that page and
//! the new bytes, padded with zeros to a page boundary. So a log segment differs from a
//! plain one in two ways, both harmless to a log whose reader stops at the first block
//! without magic: the bytes after the last write up to the next page boundary are zeros,
//! and the file's length may be rounded up to a page. Rewriting the tail page rewrites bytes
//! already durable with their own values, so a torn direct write cannot lose them.
//!
//! Everything but the write (reads, length, truncation, mapping and `fdatasync`) goes
//! through the medium's plain segment of the same file, a second, buffered handle. The
//! kernel keeps its page cache coherent with direct writes, and an `fdatasync` of either
//! handle flushes the inode and the device's cache; a direct write's own errors come back
//! from the write itself.
//!
//! If the file system refuses a direct write (`EINVAL`: no `O_DIRECT` support, or an
//! alignment coarser than 4 KiB) the segment writes that and every later append buffered.
//!
//! Where the pages go is a [`PageWriter`]: a file opened with `O_DIRECT` ([`DirectFile`]),
//! or the sim medium's recorded writes, so that its power-cut images tear a log segment's
//! writes as they tear on a disk: whole padded pages, the rewritten tail page included.
//!
//! Concurrency: a log segment has one writer (the WAL thread). [`Tail`] sits under a mutex
//! only because [`SegmentFile`] methods take `&self`; it is held across the write, which is
//! the point: an append must not interleave with another.

use super::aligned::{AlignedBuf, ALIGN};
use super::{Mapped, MediumStats, SegmentFile};
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Most bytes one direct write carries: a larger append (a group of many blocks under
/// `interval` durability) goes out in pieces, so the staging buffer stays this small.
const CHUNK: usize = 1 << 20;

/// How a log segment's appends reach the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WriteMode {
    /// Direct writes of whole pages.
    Direct,
    /// Plain writes, after the file system refused a direct one.
    Buffered,
}

/// What became of a direct write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Direct {
    /// The pages are written.
    Written,
    /// The file system takes no direct writes (of this alignment); nothing was written.
    Refused,
}

/// Where a [`DirectSegment`]'s pages go, past any cache.
pub(super) trait PageWriter: Send + Sync {
    /// Writes `pages`, whole [`ALIGN`]-byte pages from an aligned buffer, at `offset`, a
    /// multiple of [`ALIGN`].
    fn write_pages(&self, offset: u64, pages: &[u8]) -> Result<Direct>;
}

/// A file opened with `O_DIRECT`, for writes only.
pub(super) struct DirectFile {
    path: PathBuf,
    file: File,
}

impl DirectFile {
    /// Opens `path` for direct writes; `None` if the file system takes no `O_DIRECT` opens.
    pub(super) fn open(path: PathBuf) -> Option<Self> {
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .ok()?;
        Some(DirectFile { path, file })
    }
}

impl PageWriter for DirectFile {
    fn write_pages(&self, offset: u64, pages: &[u8]) -> Result<Direct> {
        match self.file.write_all_at(pages, offset) {
            Ok(()) => Ok(Direct::Written),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(Direct::Refused),
            Err(e) => Err(Error::io("write", &self.path, e)),
        }
    }
}

/// The partial page at the end of what this handle wrote.
struct Tail {
    /// Whether `start` and `buf` describe the file; false until the first write and after
    /// a truncation, so the next write loads its page from the file.
    loaded: bool,
    /// File offset of `buf`'s first byte, a multiple of [`ALIGN`].
    start: u64,
    /// Bytes of `buf` that hold the file from `start` on; always less than a page, and the
    /// next append is expected at `start + len`.
    len: usize,
    buf: AlignedBuf,
    mode: WriteMode,
    /// Tests: the next direct write is refused as a file system without `O_DIRECT` would.
    #[cfg(test)]
    refuse_next: bool,
}

/// A log segment written in whole pages; see the module doc.
pub(super) struct DirectSegment<P> {
    /// Where appends go while direct writes are taken.
    direct: P,
    /// The same file, buffered: reads, length, truncation, mapping, persists, and appends
    /// once a direct write was refused.
    plain: Box<dyn SegmentFile>,
    /// Counts the bytes appended directly (`plain` counts its own).
    stats: Arc<MediumStats>,
    tail: Mutex<Tail>,
}

impl<P: PageWriter> DirectSegment<P> {
    /// Appends to `plain`'s file through `direct`, counting in `stats` what they carry.
    pub(super) fn new(direct: P, plain: Box<dyn SegmentFile>, stats: Arc<MediumStats>) -> Self {
        DirectSegment {
            direct,
            plain,
            stats,
            tail: Mutex::new(Tail {
                loaded: false,
                start: 0,
                len: 0,
                buf: AlignedBuf::new(CHUNK),
                mode: WriteMode::Direct,
                #[cfg(test)]
                refuse_next: false,
            }),
        }
    }

    /// Buffered writes beside the direct ones (the log's header page) never touch the
    /// tail's page, which the next direct write would overwrite with its own copy.
    fn assert_off_tail(&self, offset: u64, len: usize) {
        let t = self.lock();
        debug_assert!(
            !t.loaded || offset + len as u64 <= t.start,
            "a buffered write stays off the tail's page"
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tail> {
        // A panic while writing leaves at worst a tail that no longer matches the file;
        // marking it unloaded makes the next write read it back.
        self.tail.lock().unwrap_or_else(|p| {
            let mut t = p.into_inner();
            t.loaded = false;
            t
        })
    }

    /// Points the tail at the page holding `offset`, with the file's bytes before `offset`
    /// (zeros where the file is shorter).
    fn load(&self, t: &mut Tail, offset: u64) -> Result<()> {
        let start = offset & !(ALIGN as u64 - 1);
        let len = (offset - start) as usize;
        let have = self.plain.len()?.saturating_sub(start).min(len as u64) as usize;
        let buf = &mut t.buf.bytes_mut()[..len];
        if have > 0 {
            self.plain.read_at(start, &mut buf[..have])?;
        }
        buf[have..].fill(0);
        t.loaded = true;
        t.start = start;
        t.len = len;
        Ok(())
    }

    /// Writes `data` at the tail's end, in pieces of at most [`CHUNK`] bytes with the tail
    /// (the rest buffered once a direct write was refused).
    fn append(&self, t: &mut Tail, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let take = data.len().min(CHUNK - t.len);
            // Where this piece goes, taken before the write: a refused direct write writes
            // the piece buffered and leaves the tail where it was.
            let at = t.start + t.len as u64;
            self.append_piece(t, &data[..take])?;
            data = &data[take..];
            if t.mode == WriteMode::Buffered {
                return self.plain.write_at(at + take as u64, data);
            }
        }
        Ok(())
    }

    /// Writes `data` (at most [`CHUNK`] bytes with the tail) at the tail's end as whole
    /// pages, then keeps the new partial page.
    fn append_piece(&self, t: &mut Tail, data: &[u8]) -> Result<()> {
        let end = t.len + data.len();
        let padded = end.next_multiple_of(ALIGN);
        assert!(
            padded <= t.buf.capacity(),
            "a piece fits the staging buffer"
        );
        let buf = t.buf.bytes_mut();
        buf[t.len..end].copy_from_slice(data);
        buf[end..padded].fill(0);
        match self.write_direct(t, padded) {
            Ok(Direct::Written) => self.stats.on_write(data.len()),
            Ok(Direct::Refused) => {
                t.mode = WriteMode::Buffered;
                return self.plain.write_at(t.start + t.len as u64, data);
            }
            Err(e) => {
                t.loaded = false;
                return Err(e);
            }
        }
        let full = end - end % ALIGN;
        t.buf.bytes_mut().copy_within(full..padded, 0);
        t.start += full as u64;
        t.len = end - full;
        debug_assert!(t.len < ALIGN && t.start.is_multiple_of(ALIGN as u64));
        Ok(())
    }

    /// The direct write of the staging buffer's first `len` bytes at the tail's start.
    fn write_direct(&self, t: &mut Tail, len: usize) -> Result<Direct> {
        #[cfg(test)]
        if std::mem::take(&mut t.refuse_next) {
            return Ok(Direct::Refused);
        }
        let start = t.start;
        self.direct.write_pages(start, &t.buf.bytes_mut()[..len])
    }
}

impl<P: PageWriter> SegmentFile for DirectSegment<P> {
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        let mut t = self.lock();
        if t.mode == WriteMode::Buffered {
            return self.plain.write_at(offset, data);
        }
        if !t.loaded || offset != t.start + t.len as u64 {
            self.load(&mut t, offset)?;
        }
        self.append(&mut t, data)
    }
    /// Through the page cache, its write-back started at once: a direct write here would
    /// wait for the device before the blocks' own direct write could start (measured: one
    /// more device round trip per group commit, 0.09 ms on this project's VM), while
    /// buffered, the two are on the device together. Only for pages that are not the
    /// tail's (the log's header page), which direct writes never touch.
    fn write_ahead(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.assert_off_tail(offset, data.len());
        self.plain.write_ahead(offset, data)
    }
    /// Through the page cache, left for the next persist: off the tail's page, as a
    /// write ahead is.
    fn write_behind(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.assert_off_tail(offset, data.len());
        self.plain.write_at(offset, data)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.plain.read_at(offset, buf)
    }
    fn persist(&self) -> Result<()> {
        self.plain.persist()
    }
    fn len(&self) -> Result<u64> {
        self.plain.len()
    }
    fn set_len(&self, len: u64) -> Result<()> {
        self.lock().loaded = false;
        self.plain.set_len(len)
    }
    fn map(&self) -> Result<Mapped> {
        self.plain.map()
    }
}

/// Whether `path`'s file system takes direct writes here (for tests and reports).
#[cfg(test)]
fn supports_direct(path: &std::path::Path) -> bool {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn segment(dir: &Path, name: &str) -> DirectSegment<DirectFile> {
        let path = dir.join(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .unwrap();
        let stats = Arc::<MediumStats>::default();
        let plain = super::super::file::plain_segment(path.clone(), file, stats.clone());
        let direct = DirectFile::open(path).expect("O_DIRECT open");
        DirectSegment::new(direct, plain, stats)
    }

    /// A temporary directory on a file system that takes `O_DIRECT`, or `None` (and a note
    /// on stderr) where it does not, such as tmpfs before Linux 6.6.
    fn direct_dir() -> Option<tempfile::TempDir> {
        let dir = tempfile::tempdir().unwrap();
        if supports_direct(&dir.path().join("probe")) {
            Some(dir)
        } else if std::env::var("CI").as_deref() == Ok("true") {
            panic!("no O_DIRECT on {} and CI=true", dir.path().display());
        } else {
            eprintln!("skipped: no O_DIRECT on {}", dir.path().display());
            None
        }
    }

    fn contents(dir: &Path, name: &str) -> Vec<u8> {
        std::fs::read(dir.join(name)).unwrap()
    }

    /// Appends of every size across page boundaries read back as plain writes would, with
    /// zeros after the last write up to a page.
    #[test]
    fn appends_read_back_as_written() {
        let Some(dir) = direct_dir() else { return };
        let seg = segment(dir.path(), "a.log");
        let mut want = Vec::new();
        let mut x = 7u32;
        for len in [
            32usize,
            1,
            4063,
            4096,
            5000,
            8192,
            3,
            70_000,
            4095,
            2,
            CHUNK + 5000,
            7,
        ] {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16) as u8
                })
                .collect();
            seg.write_at(want.len() as u64, &data).unwrap();
            want.extend_from_slice(&data);
            let got = contents(dir.path(), "a.log");
            assert_eq!(got.len(), want.len().next_multiple_of(ALIGN));
            assert_eq!(&got[..want.len()], &want[..]);
            assert!(got[want.len()..].iter().all(|&b| b == 0));
        }
        assert_eq!(seg.tail.lock().unwrap().mode, WriteMode::Direct);
    }

    /// A new handle continuing a file mid-page keeps the bytes before the offset; a
    /// truncation makes the next write read its page back; a write elsewhere reloads.
    #[test]
    fn continues_an_existing_file_and_survives_truncation() {
        let Some(dir) = direct_dir() else { return };
        let old: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join("b.log"), &old).unwrap();
        let seg = segment(dir.path(), "b.log");
        seg.write_at(6000, b"hello").unwrap();
        let got = contents(dir.path(), "b.log");
        assert_eq!(&got[..6000], &old[..6000]);
        assert_eq!(&got[6000..6005], b"hello");
        assert!(got[6005..8192].iter().all(|&b| b == 0));
        assert_eq!(
            &got[8192..10_000],
            &old[8192..10_000],
            "later pages untouched"
        );

        seg.set_len(6002).unwrap();
        seg.write_at(6002, b"LP").unwrap();
        let got = contents(dir.path(), "b.log");
        assert_eq!(&got[6000..6004], b"heLP");

        seg.write_at(0, b"HDR").unwrap();
        let got = contents(dir.path(), "b.log");
        assert_eq!(&got[..3], b"HDR");
        assert!(got[3..4096].iter().all(|&b| b == 0));
        assert_eq!(&got[4096..6000], &old[4096..6000]);
        seg.persist().unwrap();
        assert_eq!(seg.stats.snapshot().bytes_written, 5 + 2 + 3);
    }

    /// After a refused direct write the segment goes on buffered, at the right offsets.
    #[test]
    fn buffered_after_a_refusal_continues_in_place() {
        let Some(dir) = direct_dir() else { return };
        let seg = segment(dir.path(), "c.log");
        seg.write_at(0, &[1; 5000]).unwrap();
        seg.lock().mode = WriteMode::Buffered;
        seg.write_at(5000, &[2; CHUNK + 10]).unwrap();
        let got = contents(dir.path(), "c.log");
        assert_eq!(got.len(), 5000 + CHUNK + 10);
        assert!(got[..5000].iter().all(|&b| b == 1));
        assert!(got[5000..].iter().all(|&b| b == 2));
    }

    /// A direct write refused in the middle of an append: that piece and the rest of the
    /// append land buffered where they belong, and later appends follow them.
    #[test]
    fn a_refusal_mid_append_writes_the_rest_in_place() {
        let Some(dir) = direct_dir() else { return };
        let seg = segment(dir.path(), "d.log");
        seg.write_at(0, &[1; 5000]).unwrap();
        seg.lock().refuse_next = true;
        let big: Vec<u8> = (0..CHUNK + 10).map(|i| (i % 251) as u8).collect();
        seg.write_at(5000, &big).unwrap();
        assert_eq!(seg.lock().mode, WriteMode::Buffered);
        seg.write_at(5000 + big.len() as u64, b"end").unwrap();
        let got = contents(dir.path(), "d.log");
        assert_eq!(got.len(), 5000 + big.len() + 3);
        assert!(got[..5000].iter().all(|&b| b == 1));
        assert_eq!(&got[5000..5000 + big.len()], &big[..]);
        assert_eq!(&got[5000 + big.len()..], b"end");
    }
}
