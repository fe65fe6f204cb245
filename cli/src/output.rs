//! Where a command may write. Every path a command writes (`--changes`, `run --output`,
//! `export`'s Parquet directory, `generate -o`, `bench --json`, `bench --dir`) is checked
//! here before anything is written, so that no output destroys a store or the command's own
//! input:
//!
//! - a path that, with its symlinks resolved, lies inside an evograph store directory (any
//!   store, or the one the command opens or creates) is refused;
//! - a regular file with the device and inode of an input of the command, or of a file of a
//!   store it opens (a hard link elsewhere), is refused;
//! - character devices, FIFOs and sockets (`/dev/stdout`, `/dev/null`, a pipe) are written
//!   as given and never compared.
//!
//! An existing regular file is replaced only when the command succeeds: [`Replacement`]
//! writes beside it and renames over it at the end (`--changes`, which readers follow while
//! it grows, is written in place: [`open_changes`]).

use evograph::{Error, Result};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// What an output must not touch: the stores a command opens and the files it reads.
#[derive(Default)]
pub struct Guard {
    /// Store directories the command opens or creates (resolved; they may not exist yet).
    stores: Vec<PathBuf>,
    /// (device, inode) of every input and store file, with what it is.
    files: Vec<((u64, u64), String)>,
}

/// A checked output path.
pub enum Target {
    /// A character device, FIFO or socket: written as given.
    Special(PathBuf),
    /// A regular file (existing or not), symlinks resolved.
    File(PathBuf),
}

impl Target {
    /// The path written.
    pub fn path(&self) -> &Path {
        match self {
            Target::Special(p) | Target::File(p) => p,
        }
    }
}

impl Guard {
    pub fn new() -> Guard {
        Guard::default()
    }

    /// The command reads `path`: an output must not be the same file.
    pub fn input(mut self, path: &Path) -> Guard {
        if let Some(m) = std::fs::metadata(path).ok().filter(|m| m.is_file()) {
            let what = format!("the input {}", path.display());
            self.files.push(((m.dev(), m.ino()), what));
        }
        self
    }

    /// The command opens (or creates) the store at `dir`: no output may lie in it, nor be a
    /// link to one of its files.
    pub fn store(mut self, dir: &Path) -> Guard {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                if let Some(m) = e.metadata().ok().filter(|m| m.is_file()) {
                    let what = format!("{} of the store {}", e.path().display(), dir.display());
                    self.files.push(((m.dev(), m.ino()), what));
                }
            }
        }
        self.stores.push(resolve(dir));
        self
    }

    /// Checks the file `path` a command is about to write.
    pub fn file(&self, path: &Path, flag: &str) -> Result<Target> {
        let refuse = |why: String| {
            Err(Error::Invalid(format!(
                "{flag} {}: {why}; nothing was written",
                path.display()
            )))
        };
        if names_descriptor(path) {
            return Ok(Target::Special(path.into()));
        }
        match std::fs::metadata(path) {
            Ok(m) if is_special(&m.file_type()) => return Ok(Target::Special(path.into())),
            Ok(m) if m.is_dir() => return refuse("is a directory, not a file".into()),
            Ok(m) => {
                if let Some((_, what)) = self.files.iter().find(|(id, _)| *id == (m.dev(), m.ino()))
                {
                    return refuse(format!("is {what}"));
                }
            }
            Err(_) => {}
        }
        let resolved = resolve(path);
        if let Some(store) = self.store_around(&resolved) {
            return refuse(format!(
                "lies inside the evograph store {} (writing there would damage it)",
                store.display()
            ));
        }
        Ok(Target::File(resolved))
    }

    /// Checks the directory `path` a command is about to write into (or create).
    pub fn dir(&self, path: &Path, flag: &str) -> Result<PathBuf> {
        let resolved = resolve(path);
        match self.store_around(&resolved) {
            Some(store) => Err(Error::Invalid(format!(
                "{flag} {}: lies inside the evograph store {} (writing there would damage it); nothing was written",
                path.display(),
                store.display()
            ))),
            None => Ok(resolved),
        }
    }

    /// The store directory `path` (resolved) is or lies in, if any.
    fn store_around(&self, path: &Path) -> Option<PathBuf> {
        if let Some(s) = self.stores.iter().find(|s| path.starts_with(s)) {
            return Some(s.clone());
        }
        path.ancestors()
            .find(|d| d.is_dir() && evograph::store::holds_store(d))
            .map(Path::to_path_buf)
    }
}

/// Whether `path` names one of this process's open descriptors (`/dev/stdout`,
/// `/dev/fd/N`, `/proc/self/fd/N`): written as given whatever it leads to, as a shell's
/// redirection set it up.
fn names_descriptor(path: &Path) -> bool {
    ["/dev/stdout", "/dev/stderr"]
        .iter()
        .any(|d| path == Path::new(d))
        || ["/dev/fd", "/proc/self/fd"]
            .iter()
            .any(|d| path.parent() == Some(Path::new(d)))
}

/// Opens a special file or descriptor for writing, as given: standard output and error are
/// duplicated (so that output lands where the shell put it, at its offset, appended to a
/// file opened for appending), anything else opened without truncation.
fn open_special(p: &Path) -> Result<std::fs::File> {
    use std::os::fd::AsFd;
    let std_fd = match p.to_str() {
        Some("/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1") => Some(1),
        Some("/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2") => Some(2),
        _ => None,
    };
    let dup = match std_fd {
        Some(1) => std::io::stdout().as_fd().try_clone_to_owned(),
        Some(_) => std::io::stderr().as_fd().try_clone_to_owned(),
        None => {
            let f = std::fs::OpenOptions::new().write(true).open(p);
            return f.map_err(|e| Error::io("open", p, e));
        }
    };
    dup.map(std::fs::File::from)
        .map_err(|e| Error::io("open", p, e))
}

fn is_special(t: &std::fs::FileType) -> bool {
    t.is_char_device() || t.is_fifo() || t.is_socket()
}

/// `path` made absolute with every symlink resolved, as far as it exists: the longest
/// existing ancestor is canonicalized and the rest appended (`..` in the rest is taken
/// lexically, as nothing there exists to link elsewhere).
fn resolve(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let abs = match path.is_absolute() {
        true => path.to_path_buf(),
        false => std::env::current_dir().unwrap_or_default().join(path),
    };
    let mut base = abs.as_path();
    let mut rest = Vec::new();
    while let Some(parent) = base.parent() {
        if let Some(name) = base.file_name() {
            rest.push(name.to_os_string());
        }
        base = parent;
        if let Ok(p) = std::fs::canonicalize(base) {
            let mut out = p;
            for c in rest.iter().rev() {
                match Path::new(c).components().next() {
                    Some(Component::ParentDir) => {
                        out.pop();
                    }
                    _ => out.push(c),
                }
            }
            return out;
        }
    }
    abs
}

/// An output file being written: beside the target, renamed over it by [`commit`], removed
/// if the command fails first (dropped). A special file is written as given.
///
/// [`commit`]: Replacement::commit
pub struct Replacement {
    inner: Inner,
}

enum Inner {
    Special(std::fs::File, PathBuf),
    File(tempfile::NamedTempFile, PathBuf),
}

impl Replacement {
    /// Starts writing `target`.
    pub fn create(target: Target) -> Result<Replacement> {
        let inner = match target {
            Target::Special(p) => Inner::Special(open_special(&p)?, p),
            Target::File(p) => Inner::File(temp_beside(&p)?, p),
        };
        Ok(Replacement { inner })
    }

    /// Where the bytes go now (a temporary name beside the target, for a regular file).
    pub fn path(&self) -> &Path {
        match &self.inner {
            Inner::Special(_, p) => p,
            Inner::File(t, _) => t.path(),
        }
    }

    /// The file to write.
    pub fn file(&self) -> &std::fs::File {
        match &self.inner {
            Inner::Special(f, _) => f,
            Inner::File(t, _) => t.as_file(),
        }
    }

    /// The file to write, mutably.
    pub fn file_mut(&mut self) -> &mut std::fs::File {
        match &mut self.inner {
            Inner::Special(f, _) => f,
            Inner::File(t, _) => t.as_file_mut(),
        }
    }

    /// The command succeeded: the file takes the target's name.
    pub fn commit(self) -> Result<()> {
        match self.inner {
            Inner::Special(..) => Ok(()),
            Inner::File(t, p) => t
                .persist(&p)
                .map(drop)
                .map_err(|e| Error::io("rename to", &p, e.error)),
        }
    }
}

/// A temporary file in `target`'s directory, with the mode `target` has (or a new file's).
fn temp_beside(target: &Path) -> Result<tempfile::NamedTempFile> {
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let mode = std::fs::metadata(target).map_or(0o666, |m| m.permissions().mode() & 0o7777);
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
        .map_err(|e| Error::io("create a file in", dir, e))
}

/// Writes `bytes` to `target`, replacing an existing file only once all of it is written.
pub fn write_all(target: Target, bytes: &[u8]) -> Result<()> {
    let r = Replacement::create(target)?;
    std::io::Write::write_all(&mut r.file(), bytes).map_err(|e| Error::io("write", r.path(), e))?;
    r.commit()
}

/// How `--changes` treats a file that exists and is not empty.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Refuse it (the default: a reader may be following it).
    Refuse,
    /// Write after what it holds (`--append`).
    Append,
    /// Empty it first (`--force`).
    Truncate,
}

/// Checks the `--changes` file, which readers follow while it grows (so it is written in
/// place, not replaced): as [`Guard::file`], and an existing non-empty file only as
/// `existing` allows.
pub fn changes(guard: &Guard, path: &Path, existing: Existing) -> Result<Target> {
    let target = guard.file(path, "--changes")?;
    let len = match &target {
        Target::File(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
        Target::Special(_) => 0,
    };
    if len > 0 && existing == Existing::Refuse {
        return Err(Error::Invalid(format!(
            "--changes {}: the file exists and holds {len} bytes; give --append to write after them or --force to replace them; nothing was written",
            path.display()
        )));
    }
    Ok(target)
}

/// Opens the `--changes` file [`changes`] checked.
pub fn open_changes(target: &Target, existing: Existing) -> Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    let p = match target {
        Target::Special(p) => return open_special(p),
        Target::File(p) if existing == Existing::Append => {
            o.append(true).create(true);
            p
        }
        Target::File(p) => {
            o.write(true).truncate(true).create(true);
            p
        }
    };
    o.open(p).map_err(|e| Error::io("open", p, e))
}
