//! The file medium: a directory of files, `pwrite` + `fdatasync`, mmap for reads.

use super::dir::{names_in_store_dir, Open, StoreDir};
use super::flusher::Flusher;
use super::{Mapped, Medium, MediumStats, SegmentFile};
use crate::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Segments are files in one directory.
pub struct FileMedium {
    dir: StoreDir,
    stats: Arc<MediumStats>,
    /// Whether log segments are written with direct I/O: not on tmpfs, where the page cache
    /// is the storage and a direct write is a buffered one with extra steps. Probed once.
    direct_logs: OnceLock<bool>,
}

impl FileMedium {
    /// A medium rooted at `dir`, which must exist.
    pub fn new(dir: &Path) -> Self {
        FileMedium {
            dir: StoreDir::new(dir),
            stats: Arc::default(),
            direct_logs: OnceLock::new(),
        }
    }

    fn wrap(&self, path: PathBuf, file: File) -> Box<dyn SegmentFile> {
        plain_segment(path, file, self.stats.clone())
    }

    /// A log segment written with direct I/O (see `direct`), or a plain one on tmpfs and
    /// where the file system takes no `O_DIRECT`.
    #[cfg(target_os = "linux")]
    fn wrap_log(&self, path: PathBuf, file: File) -> Box<dyn SegmentFile> {
        use super::direct::{DirectFile, DirectSegment};
        let direct = *self
            .direct_logs
            .get_or_init(|| !super::dir::is_tmpfs(self.dir.root()));
        let pages = if direct {
            DirectFile::open(path.clone())
        } else {
            None
        };
        let plain = self.wrap(path, file);
        match pages {
            Some(pages) => Box::new(DirectSegment::new(pages, plain, self.stats.clone())),
            None => plain,
        }
    }
}

/// `file` (opened at `path`) as a plain segment: `pwrite` and `fdatasync`.
pub(super) fn plain_segment(
    path: PathBuf,
    file: File,
    stats: Arc<MediumStats>,
) -> Box<dyn SegmentFile> {
    Box::new(FileSegment {
        path,
        file,
        stats,
        flusher: OnceLock::new(),
    })
}

impl Medium for FileMedium {
    fn kind(&self) -> &'static str {
        "file"
    }
    fn create_root(&self) -> Result<()> {
        self.dir.create_durably()
    }
    fn create(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let (path, file) = self.dir.open_file(name, Open::Create)?;
        Ok(self.wrap(path, file))
    }
    fn open(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let (path, file) = self.dir.open_file(name, Open::Existing)?;
        Ok(self.wrap(path, file))
    }
    #[cfg(target_os = "linux")]
    fn create_log(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let (path, file) = self.dir.open_file(name, Open::Create)?;
        Ok(self.wrap_log(path, file))
    }
    fn open_sweep(&self, name: &str) -> Result<Option<super::SweepFile>> {
        super::SweepFile::open(&self.dir.path(name)).map(Some)
    }
    #[cfg(target_os = "linux")]
    fn open_log(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let (path, file) = self.dir.open_file(name, Open::Existing)?;
        Ok(self.wrap_log(path, file))
    }
    names_in_store_dir!();
}

struct FileSegment {
    path: PathBuf,
    file: File,
    stats: Arc<MediumStats>,
    /// Started by the first [`SegmentFile::start_persist`]: only files written long enough
    /// to ask for early write-back get a thread. `None` inside if none could be started.
    flusher: OnceLock<Option<Flusher>>,
}

impl SegmentFile for FileSegment {
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.stats.on_write(data.len());
        self.file
            .write_all_at(data, offset)
            .map_err(|e| Error::io("write", &self.path, e))
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        read_file_at(&self.file, &self.path, offset, buf)
    }
    fn persist(&self) -> Result<()> {
        self.stats.on_persist();
        // A write-back error that a background `fdatasync` was told of is not told again to
        // this one, so the flusher is paused (its sync in flight waited for) around ours and
        // hands over what it met (see `flusher`).
        let paused = self.flusher.get().and_then(|f| Some(f.as_ref()?.pause()));
        let ours = self.file.sync_data();
        let theirs = paused.and_then(|mut p| p.take_error());
        match theirs.map_or(ours, Err) {
            Ok(()) => Ok(()),
            Err(e) => Err(Error::io("fdatasync", &self.path, e)),
        }
    }
    #[cfg(target_os = "linux")]
    fn start_persist(&self, offset: u64, len: u64) {
        use std::os::fd::AsRawFd;
        let (Ok(off), Ok(n)) = (i64::try_from(offset), i64::try_from(len)) else {
            return;
        };
        // SAFETY: a plain syscall on a descriptor this segment owns; no memory is passed.
        // Its result is ignored on purpose: this only starts writeback early, and `persist`
        // (fdatasync) is what makes the bytes durable and reports any error.
        unsafe {
            libc::sync_file_range(self.file.as_raw_fd(), off, n, libc::SYNC_FILE_RANGE_WRITE);
        }
        // `sync_file_range` puts the bytes on the device but sends no cache flush; the
        // flusher's `fdatasync` does, so a write-back cache drains while the run is still
        // being written (see `flusher`).
        if let Some(f) = self.flusher.get_or_init(|| Flusher::start(&self.file)) {
            f.request();
        }
    }
    #[cfg(target_os = "linux")]
    fn write_ahead(&self, offset: u64, data: &[u8]) -> Result<()> {
        use std::os::fd::AsRawFd;
        self.write_at(offset, data)?;
        let (Ok(off), Ok(n)) = (i64::try_from(offset), i64::try_from(data.len())) else {
            return Ok(());
        };
        // SAFETY: a plain syscall on a descriptor this segment owns; no memory is passed.
        // Its result is ignored: it only starts the write-back (the device writes these
        // pages while the caller's next direct write is in flight), and `persist` is what
        // waits for them and reports any error.
        unsafe {
            libc::sync_file_range(self.file.as_raw_fd(), off, n, libc::SYNC_FILE_RANGE_WRITE);
        }
        Ok(())
    }
    fn len(&self) -> Result<u64> {
        file_len(&self.file, &self.path)
    }
    fn set_len(&self, len: u64) -> Result<()> {
        self.file
            .set_len(len)
            .map_err(|e| Error::io("truncate", &self.path, e))
    }
    fn map(&self) -> Result<Mapped> {
        map_file(&self.file, &self.path)
    }
}

/// Fills `buf` from `offset` of a segment file, naming the file in the error.
pub(super) fn read_file_at(file: &File, path: &Path, offset: u64, buf: &mut [u8]) -> Result<()> {
    file.read_exact_at(buf, offset)
        .map_err(|e| Error::io("read", path, e))
}

/// A segment file's length, naming the file in the error.
pub(super) fn file_len(file: &File, path: &Path) -> Result<u64> {
    file.metadata()
        .map(|m| m.len())
        .map_err(|e| Error::io("stat", path, e))
}

/// A read-only mapping of a whole segment file.
pub(super) fn map_file(file: &File, path: &Path) -> Result<Mapped> {
    if file_len(file, path)? == 0 {
        return Ok(Mapped::empty());
    }
    // SAFETY: evograph maps only segments it no longer writes (sealed runs, the dictionary
    // prefix below its committed length, WAL segments during recovery), and the store's
    // lock file keeps other evograph processes from writing them. A foreign process
    // truncating the file under us is outside what any mmap-based store can defend against.
    let map = unsafe { memmap2::Mmap::map(file) }.map_err(|e| Error::io("mmap", path, e))?;
    Ok(Mapped::from_mmap(map))
}
