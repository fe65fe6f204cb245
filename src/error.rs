//! The one error type every layer returns.

use std::path::PathBuf;
use std::sync::Arc;

/// Everything that can go wrong in evograph, phrased for the person who has to act on it.
/// New kinds may be added, so matches need a catch-all arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O call failed on a file we name.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What we were doing ("open", "write", "fsync", ...).
        op: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Stored bytes failed a checksum or an invariant: the store is damaged.
    #[error("corrupt store: {0}")]
    Corrupt(String),
    /// The path exists but is not an evograph store (or was written by an incompatible version).
    #[error("{} is not an evograph store: {reason}", path.display())]
    NotAStore {
        /// The directory that was opened.
        path: PathBuf,
        /// Why it was rejected.
        reason: String,
    },
    /// Another process (or handle) holds the store open for writing.
    #[error("store {} is locked by another writer (lock file {}); close it first", path.display(), path.join("LOCK").display())]
    Locked {
        /// The store directory.
        path: PathBuf,
    },
    /// An input file could not be parsed.
    #[error("{}:{line}: {msg}", file.display())]
    Parse {
        /// The input file.
        file: PathBuf,
        /// 1-based line number (0 when the format has no lines).
        line: u64,
        /// What was wrong with it.
        msg: String,
    },
    /// A caller passed an argument that cannot be honoured.
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// A previous write failed half-way; the handle refuses further writes. Reopen to recover.
    /// The failure is the source ([`Error::io_error`] reaches an I/O error through it).
    #[error("store is read-only after an earlier write failure ({0}); reopen it to recover")]
    Poisoned(#[source] Arc<Error>),
}

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an [`std::io::Error`] with the operation and path it came from.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// Builds a [`Error::Corrupt`] from anything printable.
    pub fn corrupt(msg: impl Into<String>) -> Self {
        Error::Corrupt(msg.into())
    }

    /// The operating-system error behind this one, if it is one: an [`Error::Io`], or the
    /// failure that poisoned a handle. Its `kind()` tells a full disk from a failing one.
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Poisoned(cause) => cause.io_error(),
            _ => None,
        }
    }

    /// An equal error, as far as `io::Error` allows: its kind, OS error code and message
    /// are kept (what a poisoned handle reports again to every later call).
    pub(crate) fn replica(&self) -> Error {
        match self {
            Error::Io { op, path, source } => Error::Io {
                op,
                path: path.clone(),
                source: match source.raw_os_error() {
                    Some(code) => std::io::Error::from_raw_os_error(code),
                    None => std::io::Error::new(source.kind(), source.to_string()),
                },
            },
            Error::Corrupt(m) => Error::Corrupt(m.clone()),
            Error::NotAStore { path, reason } => Error::NotAStore {
                path: path.clone(),
                reason: reason.clone(),
            },
            Error::Locked { path } => Error::Locked { path: path.clone() },
            Error::Parse { file, line, msg } => Error::Parse {
                file: file.clone(),
                line: *line,
                msg: msg.clone(),
            },
            Error::Invalid(m) => Error::Invalid(m.clone()),
            Error::Poisoned(cause) => Error::Poisoned(cause.clone()),
        }
    }
}

/// `text` with control characters escaped (`\n`, `\x1b`, ...), so that a message quoting
/// user input (a file name, a line of an input file) stays one line and cannot drive the
/// terminal it is printed on.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn a_poisoned_handle_keeps_the_io_error_that_poisoned_it() {
        let full = Error::io(
            "write",
            "DICT",
            std::io::Error::from_raw_os_error(libc::ENOSPC),
        );
        let p = Error::Poisoned(std::sync::Arc::new(full.replica()));
        let io = p.io_error().expect("reachable through the poison");
        assert_eq!(io.raw_os_error(), Some(libc::ENOSPC));
        assert_eq!(io.kind(), std::io::ErrorKind::StorageFull);
        let src = std::error::Error::source(&p).expect("the cause is the source");
        assert_eq!(src.to_string(), full.to_string());
    }

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(
            super::printable("a\tb\n\u{1b}[31mñ"),
            "a\\tb\\n\\u{1b}[31mñ"
        );
        assert_eq!(super::printable("plain"), "plain");
    }
}
