//! The file medium: a directory of files, `pwrite` + `fdatasync`, mmap for reads.

use super::{Mapped, Medium, MediumStats, SegmentFile};
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Segments are files in one directory.
pub struct FileMedium {
    dir: PathBuf,
    stats: Arc<MediumStats>,
}

impl FileMedium {
    /// A medium rooted at `dir`, which must exist.
    pub fn new(dir: &Path) -> Self {
        FileMedium {
            dir: dir.to_path_buf(),
            stats: Arc::default(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn wrap(&self, path: PathBuf, file: File) -> Box<dyn SegmentFile> {
        Box::new(FileSegment {
            path,
            file,
            stats: self.stats.clone(),
        })
    }
}

impl Medium for FileMedium {
    fn kind(&self) -> &'static str {
        "file"
    }
    fn create_root(&self) -> Result<()> {
        create_dir_durably(&self.dir)
    }
    fn create(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let path = self.path(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| Error::io("create", &path, e))?;
        Ok(self.wrap(path, file))
    }
    fn open(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let path = self.path(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("open", &path, e))?;
        Ok(self.wrap(path, file))
    }
    fn exists(&self, name: &str) -> bool {
        self.path(name).exists()
    }
    fn remove(&self, name: &str) -> Result<()> {
        let path = self.path(name);
        std::fs::remove_file(&path).map_err(|e| Error::io("remove", &path, e))
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let (a, b) = (self.path(from), self.path(to));
        std::fs::rename(&a, &b).map_err(|e| Error::io("rename", &a, e))
    }
    fn list(&self) -> Result<Vec<String>> {
        list_files(&self.dir)
    }
    fn sync_dir(&self) -> Result<()> {
        self.stats.on_persist();
        sync_dir_path(&self.dir)
    }
    fn stats(&self) -> &MediumStats {
        &self.stats
    }
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

/// Names of the regular files in `dir`, sorted.
pub(crate) fn list_files(dir: &Path) -> Result<Vec<String>> {
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

/// fsync of a directory: makes the entries created, renamed or removed in it durable.
pub(crate) fn sync_dir_path(dir: &Path) -> Result<()> {
    let d = File::open(dir).map_err(|e| Error::io("open", dir, e))?;
    d.sync_all().map_err(|e| Error::io("fsync", dir, e))
}

struct FileSegment {
    path: PathBuf,
    file: File,
    stats: Arc<MediumStats>,
}

impl SegmentFile for FileSegment {
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.stats.on_write(data.len());
        self.file
            .write_all_at(data, offset)
            .map_err(|e| Error::io("write", &self.path, e))
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| Error::io("read", &self.path, e))
    }
    fn persist(&self) -> Result<()> {
        self.stats.on_persist();
        self.file
            .sync_data()
            .map_err(|e| Error::io("fdatasync", &self.path, e))
    }
    fn len(&self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| Error::io("stat", &self.path, e))
    }
    fn set_len(&self, len: u64) -> Result<()> {
        self.file
            .set_len(len)
            .map_err(|e| Error::io("truncate", &self.path, e))
    }
    fn map(&self) -> Result<Mapped> {
        if self.len()? == 0 {
            return Ok(Mapped::empty());
        }
        // SAFETY: evograph maps only segments it no longer writes (sealed runs, the dictionary
        // prefix below its committed length, WAL segments during recovery), and the store's
        // lock file keeps other evograph processes from writing them. A foreign process
        // truncating the file under us is outside what any mmap-based store can defend against.
        let map = unsafe { memmap2::Mmap::map(&self.file) }
            .map_err(|e| Error::io("mmap", &self.path, e))?;
        Ok(Mapped::from_mmap(map))
    }
}
