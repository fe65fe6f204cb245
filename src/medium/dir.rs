//! A store directory as the file-backed media see it: named files, and the directory
//! operations (create, rename, remove, sync) that make names durable.

use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// Whether opening a segment creates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Open {
    /// Create a file that must not exist (`O_EXCL`): an existing one is never cut.
    Create,
    /// The file must exist.
    Existing,
}

/// The directory holding a store's segment files.
pub(crate) struct StoreDir {
    dir: PathBuf,
}

impl StoreDir {
    pub(crate) fn new(dir: &Path) -> Self {
        StoreDir {
            dir: dir.to_path_buf(),
        }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The directory itself (for file-system probes).
    pub(crate) fn root(&self) -> &Path {
        &self.dir
    }

    /// Opens segment `name` for reading and writing.
    pub(crate) fn open_file(&self, name: &str, how: Open) -> Result<(PathBuf, File)> {
        let path = self.path(name);
        let mut o = OpenOptions::new();
        o.read(true).write(true);
        if how == Open::Create {
            o.create_new(true);
        }
        let op = match how {
            Open::Create => "create",
            Open::Existing => "open",
        };
        let file = o.open(&path).map_err(|e| Error::io(op, &path, e))?;
        Ok((path, file))
    }

    pub(crate) fn exists(&self, name: &str) -> bool {
        self.path(name).exists()
    }

    /// Removes a file (durable after [`StoreDir::sync`]).
    pub(crate) fn remove(&self, name: &str) -> Result<()> {
        let path = self.path(name);
        std::fs::remove_file(&path).map_err(|e| Error::io("remove", &path, e))
    }

    /// Renames a file atomically (durable after [`StoreDir::sync`]), failing with
    /// `AlreadyExists` if `to` exists: `renameat2(RENAME_NOREPLACE)` on Linux. Where the file
    /// system lacks it, the name is checked first; the writer's `LOCK` keeps other evograph
    /// processes out of that window.
    pub(crate) fn rename(&self, from: &str, to: &str) -> Result<()> {
        let (a, b) = (self.path(from), self.path(to));
        let err = |e| Error::io("rename", &a, e);
        match rename_noreplace(&a, &b) {
            Ok(()) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                if b.exists() {
                    return Err(err(std::io::Error::from(std::io::ErrorKind::AlreadyExists)));
                }
                std::fs::rename(&a, &b).map_err(err)
            }
            Err(e) => Err(err(e)),
        }
    }

    /// Renames `from` over `to`, replacing it (the manifest's commit rename only).
    pub(crate) fn rename_replacing(&self, from: &str, to: &str) -> Result<()> {
        let (a, b) = (self.path(from), self.path(to));
        std::fs::rename(&a, &b).map_err(|e| Error::io("rename", &a, e))
    }

    /// Names of the regular files, sorted.
    pub(crate) fn list(&self) -> Result<Vec<String>> {
        let dir = &self.dir;
        let rd = std::fs::read_dir(dir).map_err(|e| Error::io("list", dir, e))?;
        let mut names = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|e| Error::io("list", dir, e))?;
            if entry.file_type().map(|t| t.is_file()).unwrap_or(false) {
                if let Some(n) = entry.file_name().to_str() {
                    names.push(n.to_string());
                }
            }
        }
        names.sort();
        Ok(names)
    }

    /// Makes creations, renames and removals in the directory durable.
    pub(crate) fn sync(&self) -> Result<()> {
        sync_dir_path(&self.dir)
    }

    /// Creates the directory and its missing ancestors durably.
    pub(crate) fn create_durably(&self) -> Result<()> {
        create_dir_durably(&self.dir)
    }
}

/// `rename(2)` that refuses to replace `to`: `EEXIST` if it exists, `EINVAL` where the file
/// system cannot promise that.
#[cfg(target_os = "linux")]
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let (a, b) = (c(from)?, c(to)?);
    // SAFETY: both are valid NUL-terminated paths that outlive the call; renameat2 reads
    // them and touches no other memory of ours.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    match std::io::Error::last_os_error() {
        // A kernel without the call: as a file system without the flag.
        e if e.raw_os_error() == Some(libc::ENOSYS) => {
            Err(std::io::Error::from_raw_os_error(libc::EINVAL))
        }
        e => Err(e),
    }
}

/// Elsewhere the caller checks the name first.
#[cfg(not(target_os = "linux"))]
fn rename_noreplace(_from: &Path, _to: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// Creates `dir` and its missing ancestors, fsyncing each new directory's parent after
/// creating it: POSIX makes a new directory entry durable only through its parent.
pub(crate) fn create_dir_durably(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    create_dir_durably(&parent)?;
    match std::fs::create_dir(dir) {
        Ok(()) => {}
        // Another process created it in between: its creator makes it durable, but syncing
        // the parent again below costs little and makes it so here too.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
        Err(e) => return Err(Error::io("create", dir, e)),
    }
    sync_dir_path(&parent)
}

/// fsync of a directory: makes the entries created, renamed or removed in it durable.
pub(crate) fn sync_dir_path(dir: &Path) -> Result<()> {
    let d = File::open(dir).map_err(|e| Error::io("open", dir, e))?;
    d.sync_all().map_err(|e| Error::io("fsync", dir, e))
}

/// `statfs`'s `f_type` of tmpfs.
const TMPFS_MAGIC: i64 = 0x0102_1994;

/// Whether `dir` lies on tmpfs, whose files are page cache and nothing else.
pub(crate) fn is_tmpfs(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: statfs writes into the buffer we own; `c` is a valid C string.
    let rc = unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) };
    // SAFETY: statfs returned 0, so it filled the buffer.
    // f_type's integer type differs between targets.
    #[allow(clippy::unnecessary_cast)]
    let tmpfs = rc == 0 && unsafe { st.assume_init() }.f_type as i64 == TMPFS_MAGIC;
    tmpfs
}

/// The [`super::Medium`] methods that name files, for a medium whose files live in a
/// [`StoreDir`] (`self.dir`) and that counts its persists in `self.stats`: what the file
/// and pmem media share, written once. Expands inside their `impl Medium` blocks.
macro_rules! names_in_store_dir {
    () => {
        fn exists(&self, name: &str) -> bool {
            self.dir.exists(name)
        }
        fn remove(&self, name: &str) -> crate::Result<()> {
            self.dir.remove(name)
        }
        fn rename(&self, from: &str, to: &str) -> crate::Result<()> {
            self.dir.rename(from, to)
        }
        fn rename_replacing(&self, from: &str, to: &str) -> crate::Result<()> {
            self.dir.rename_replacing(from, to)
        }
        fn list(&self) -> crate::Result<Vec<String>> {
            self.dir.list()
        }
        fn sync_dir(&self) -> crate::Result<()> {
            self.stats.on_persist();
            self.dir.sync()
        }
        fn stats(&self) -> &super::MediumStats {
            &self.stats
        }
    };
}
pub(crate) use names_in_store_dir;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_and_renames_never_replace_a_file() {
        let tmp = tempfile::tempdir().unwrap();
        let d = StoreDir::new(tmp.path());
        std::fs::write(d.path("a"), b"keep").unwrap();
        std::fs::write(d.path("b"), b"other").unwrap();
        let kind = |r: Result<()>| match r {
            Err(Error::Io { source, .. }) => source.kind(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            kind(d.open_file("a", Open::Create).map(|_| ())),
            std::io::ErrorKind::AlreadyExists
        );
        assert_eq!(kind(d.rename("b", "a")), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(d.path("a")).unwrap(), b"keep");
        d.rename("b", "c").unwrap();
        d.rename_replacing("c", "a").unwrap();
        assert_eq!(std::fs::read(d.path("a")).unwrap(), b"other");
    }
}
