//! Reads for sweeps: a section of a segment read once, front to back, in large pieces,
//! past the page cache where the file system allows it (`O_DIRECT`).
//!
//! Why: a kernel that sweeps lists larger than the memory left to it reads them again each
//! pass. Through a mapping every page comes in as a page fault and goes into the page
//! cache, which the memory cap then has to evict: measured on this project's VM, a Kron24
//! store read that way under a 768 MiB cgroup came in at 0.40 GB/s, where `dd` with
//! `O_DIRECT` and 1 MiB blocks reads the same disk at 1.6 GB/s. A direct read goes from the
//! device into the caller's buffer: no fault per page, no cache to evict, nothing charged
//! to the cgroup but the buffer.
//!
//! Where the file system refuses `O_DIRECT` (tmpfs, or an alignment coarser than
//! [`ALIGN`]) the reads are plain `pread`s into the same buffers, and [`SweepFile::is_direct`]
//! says so.

use super::aligned::ALIGN;
use crate::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// A segment opened for sweeps: aligned reads, direct where possible.
pub struct SweepFile {
    path: PathBuf,
    plain: File,
    /// The same file opened with `O_DIRECT`, if the file system took that.
    direct: Option<File>,
    /// Cleared when a direct read was refused: every later read is plain.
    direct_ok: AtomicBool,
    /// Bytes read so far, direct or not.
    read: AtomicU64,
}

impl SweepFile {
    /// Opens `path` for reading, directly if the file system allows it.
    pub(crate) fn open(path: &Path) -> Result<SweepFile> {
        let plain = File::open(path).map_err(|e| Error::io("open", path, e))?;
        let direct = open_direct(path);
        Ok(SweepFile {
            path: path.to_path_buf(),
            direct_ok: AtomicBool::new(direct.is_some()),
            plain,
            direct,
            read: AtomicU64::new(0),
        })
    }

    /// Whether reads bypass the page cache.
    pub fn is_direct(&self) -> bool {
        self.direct.is_some() && self.direct_ok.load(Relaxed)
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Relaxed)
    }

    /// Fills `buf` (the start of an [`AlignedBuf`], its length a multiple of [`ALIGN`])
    /// with the file from `offset`, a multiple of [`ALIGN`]; returns how many bytes it
    /// read, fewer than asked only at the end of the file.
    pub(crate) fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        debug_assert!(offset.is_multiple_of(ALIGN as u64) && buf.len().is_multiple_of(ALIGN));
        debug_assert!((buf.as_ptr() as usize).is_multiple_of(ALIGN));
        let mut done = 0;
        while done < buf.len() {
            let (n, direct) = self.read_some(offset + done as u64, &mut buf[done..])?;
            done += n;
            // A direct read comes back short only at the end of the file; reading on would
            // be a direct read at an unaligned offset, which some file systems refuse.
            if n == 0 || direct {
                break;
            }
        }
        self.read.fetch_add(done as u64, Relaxed);
        Ok(done)
    }

    /// One `pread`, retried when a signal interrupts it: direct while that is taken, else
    /// plain; how many bytes it read and whether directly. A direct read reads all it was
    /// asked for but at the end of the file.
    fn read_some(&self, offset: u64, buf: &mut [u8]) -> Result<(usize, bool)> {
        loop {
            let direct = self.is_direct();
            let r = match (&self.direct, direct) {
                (Some(d), true) => match d.read_at(buf, offset) {
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                        self.direct_ok.store(false, Relaxed);
                        continue;
                    }
                    r => r,
                },
                _ => self.plain.read_at(buf, offset),
            };
            match r {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => {
                    return r
                        .map(|n| (n, direct))
                        .map_err(|e| Error::io("read", &self.path, e))
                }
            }
        }
    }
}

/// `path` opened with `O_DIRECT`; `None` where the file system refuses that.
#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_path: &Path) -> Option<File> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::AlignedBuf;

    /// Reads come back whole and in place, the last one short at the end of the file, direct
    /// or not.
    #[test]
    fn reads_are_whole_and_the_last_is_short() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..3 * ALIGN + 100).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let f = SweepFile::open(&path).unwrap();
        let mut buf = AlignedBuf::new(2 * ALIGN);
        assert_eq!(f.read_at(0, buf.bytes_mut()).unwrap(), 2 * ALIGN);
        assert_eq!(buf.bytes(), &data[..2 * ALIGN]);
        assert_eq!(
            f.read_at(2 * ALIGN as u64, buf.bytes_mut()).unwrap(),
            ALIGN + 100
        );
        assert_eq!(&buf.bytes()[..ALIGN + 100], &data[2 * ALIGN..]);
        assert_eq!(f.read_at(4 * ALIGN as u64, buf.bytes_mut()).unwrap(), 0);
        assert_eq!(f.bytes_read(), 3 * ALIGN as u64 + 100);
    }
}
