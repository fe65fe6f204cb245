//! Vertex names handed in from Python (lists of `str`, numpy `U` arrays), copied into Rust
//! and checked while the GIL is held, so the store's work can run without it.

use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

/// The longest vertex name, in bytes: checked here as well as by the library, so that a bad
/// name fails a call before any batch is stored.
use evograph::MAX_NAME_BYTES;

/// Names in the order given, their UTF-8 back to back: one allocation for a whole call
/// rather than one per name.
#[derive(Default)]
pub(crate) struct NameBuf {
    text: String,
    /// Where each name ends in `text`.
    ends: Vec<usize>,
}

impl NameBuf {
    /// Reads `obj` (a list or tuple of `str`, or a one-dimensional, contiguous, aligned
    /// numpy `U` array of native byte order), checking every name; `what` names the
    /// argument in errors.
    pub(crate) fn read(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<NameBuf> {
        if let Ok(list) = obj.cast::<PyList>() {
            return NameBuf::from_objects(list.iter(), list.len(), what);
        }
        if let Ok(tuple) = obj.cast::<PyTuple>() {
            return NameBuf::from_objects(tuple.iter(), tuple.len(), what);
        }
        if let Ok(arr) = obj.cast::<PyUntypedArray>() {
            if arr.dtype().kind() == b'U' {
                return NameBuf::from_ucs4(arr, what);
            }
            return Err(PyTypeError::new_err(format!(
                "{what} must hold str names, got an array of dtype {}",
                arr.dtype()
            )));
        }
        Err(PyTypeError::new_err(format!(
            "{what} must be a list of str or a numpy str array, got {}",
            type_name(obj)
        )))
    }

    /// Number of names.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Name `i` (below `len()`).
    pub(crate) fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    fn from_objects<'py>(
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        len: usize,
        what: &str,
    ) -> PyResult<NameBuf> {
        let mut buf = NameBuf::with_capacity(len);
        for (i, item) in items.enumerate() {
            let s = item.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{what}[{i}] is {}, not a str: this store is keyed by strings (vertex names)",
                    a_type(&item)
                ))
            })?;
            let s = s.to_str().map_err(|e| {
                PyValueError::new_err(format!("{what}[{i}] is not valid Unicode: {e}"))
            })?;
            buf.text.push_str(s);
            buf.end_name(i, what)?;
        }
        Ok(buf)
    }

    /// Reads a numpy `U` array from its buffer: UCS-4 code points, padded with NULs to the
    /// item size (so, as numpy itself does, a name never ends in NUL).
    fn from_ucs4(arr: &Bound<'_, PyUntypedArray>, what: &str) -> PyResult<NameBuf> {
        let dtype = arr.dtype();
        if arr.ndim() != 1 || !arr.is_c_contiguous() || !arr.is_aligned() {
            return Err(PyValueError::new_err(format!(
                "{what} must be a one-dimensional, contiguous, aligned array"
            )));
        }
        if dtype.is_native_byteorder() == Some(false) {
            return Err(PyValueError::new_err(format!(
                "{what} must be in the machine's byte order, got dtype {dtype}"
            )));
        }
        let (n, width) = (arr.len(), dtype.itemsize() / 4);
        if n == 0 {
            return Ok(NameBuf::default());
        }
        if width == 0 {
            // A `U0` array holds nothing but empty names.
            return NameBuf::default()
                .end_name(0, what)
                .map(|()| NameBuf::default());
        }
        // SAFETY: the array is one-dimensional, C-contiguous and aligned (checked above),
        // so its data is `n * itemsize` bytes of u32 code points; the GIL is held for the
        // whole read, so no Python code can resize or free the array meanwhile.
        let codes: &[u32] = unsafe {
            let data = (*arr.as_array_ptr()).fields.data as *const u32;
            std::slice::from_raw_parts(data, n * width)
        };
        let mut buf = NameBuf::with_capacity(n);
        for (i, item) in codes.chunks_exact(width).enumerate() {
            let used = item.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
            for &c in &item[..used] {
                let ch = char::from_u32(c).ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "{what}[{i}] is not valid Unicode (code point {c:#x})"
                    ))
                })?;
                buf.text.push(ch);
            }
            buf.end_name(i, what)?;
        }
        Ok(buf)
    }

    fn with_capacity(n: usize) -> NameBuf {
        NameBuf {
            text: String::with_capacity(n * 16),
            ends: Vec::with_capacity(n),
        }
    }

    /// Ends name `i` at the end of the text, refusing it if it is empty or too long.
    fn end_name(&mut self, i: usize, what: &str) -> PyResult<()> {
        let start = self.ends.last().copied().unwrap_or(0);
        let bytes = self.text.len() - start;
        if bytes == 0 {
            return Err(PyValueError::new_err(format!(
                "{what}[{i}] is an empty name: vertex names may not be empty"
            )));
        }
        if bytes > MAX_NAME_BYTES {
            return Err(PyValueError::new_err(format!(
                "{what}[{i}] is a name of {bytes} bytes, longer than the {MAX_NAME_BYTES} allowed"
            )));
        }
        // The library's other rules (no tabs, line breaks or NUL; no space at either end).
        evograph::check_name(&self.text[start..])
            .map_err(|m| PyValueError::new_err(format!("{what}[{i}]: {m}")))?;
        self.ends.push(self.text.len());
        Ok(())
    }
}

/// The type of `obj` as a noun phrase for messages ("an int", "a float", "None").
fn a_type(obj: &Bound<'_, PyAny>) -> String {
    if obj.is_none() {
        return "None".into();
    }
    let name = type_name(obj);
    let article = match name.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    };
    format!("{article} {name}")
}

/// The name of `obj`'s type, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "object".into(), |n| n.to_string())
}
