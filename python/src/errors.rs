//! evograph errors as Python exceptions, with the messages the command line prints.

use pyo3::exceptions::{PyException, PyOSError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    evograph,
    Error,
    PyException,
    "An error of the store: the base of evograph's own exceptions."
);
pyo3::create_exception!(
    evograph,
    NotAStoreError,
    Error,
    "The path holds no evograph store (or one of another build), or creating one was refused."
);
pyo3::create_exception!(
    evograph,
    CorruptError,
    Error,
    "A checksum or an invariant of the store failed."
);
pyo3::create_exception!(
    evograph,
    LockedError,
    Error,
    "Another writer holds the store."
);
pyo3::create_exception!(evograph, ClosedError, Error, "The store was closed.");

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("NotAStoreError", py.get_type::<NotAStoreError>())?;
    m.add("CorruptError", py.get_type::<CorruptError>())?;
    m.add("LockedError", py.get_type::<LockedError>())?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    Ok(())
}

/// The Python exception for a store error: bad arguments are `ValueError`, failed I/O is
/// `OSError` (with its errno), the rest evograph's own classes.
pub(crate) fn to_py(e: evograph::Error) -> PyErr {
    let msg = e.to_string();
    match e {
        evograph::Error::Invalid(_) | evograph::Error::Parse { .. } => PyValueError::new_err(msg),
        evograph::Error::Io { ref source, .. } => match source.raw_os_error() {
            Some(errno) => PyOSError::new_err((errno, msg)),
            None => PyOSError::new_err(msg),
        },
        evograph::Error::NotAStore { .. } => NotAStoreError::new_err(msg),
        evograph::Error::Corrupt(_) => CorruptError::new_err(msg),
        evograph::Error::Locked { .. } => LockedError::new_err(msg),
        // A handle poisoned by a failed write: an OSError with the errno that did it (a
        // full disk is ENOSPC), as the first failure was.
        evograph::Error::Poisoned(_) => match e.io_error().and_then(|io| io.raw_os_error()) {
            Some(errno) => PyOSError::new_err((errno, msg)),
            None => Error::new_err(msg),
        },
        _ => Error::new_err(msg),
    }
}

/// `Result` into `PyResult`.
pub(crate) trait IntoPy<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for evograph::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
