//! Buffered line splitting and the field parsers shared by the text formats.
//!
//! Lines are handed out as byte slices into one large read buffer, so parsing a multi-gigabyte
//! edge list allocates nothing per line; a line cut by the buffer end is moved to the front
//! before the next read.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

/// Default read-buffer size for text formats.
pub(crate) const DEFAULT_BUF: usize = 1 << 20;

/// A line longer than this is a malformed input (or a binary file), not something to buffer.
const MAX_LINE: usize = 64 << 20;

/// Splits a file into lines without allocating per line.
pub(crate) struct LineReader {
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    line: u64,
    consumed: u64,
    size: u64,
}

impl LineReader {
    /// Opens `path` with a read buffer of `buf_size` bytes (at least 1).
    pub(crate) fn open(path: &Path, buf_size: usize) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
        let size = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        Ok(LineReader {
            file,
            path: path.to_path_buf(),
            buf: vec![0; buf_size.max(1)],
            pos: 0,
            end: 0,
            eof: false,
            line: 0,
            consumed: 0,
            size,
        })
    }

    /// The next line without its `\n` (or `\r\n`), or `None` at end of file.
    pub(crate) fn next_line(&mut self) -> Result<Option<&[u8]>> {
        loop {
            let pending = &self.buf[self.pos..self.end];
            let (len, skip) = match find_newline(pending) {
                Some(i) => (i, i + 1),
                // The last line may lack a newline.
                None if self.eof && !pending.is_empty() => (pending.len(), pending.len()),
                None if self.eof => return Ok(None),
                None => {
                    self.refill()?;
                    continue;
                }
            };
            let start = self.pos;
            self.pos += skip;
            self.consumed += skip as u64;
            self.line += 1;
            let mut line = &self.buf[start..start + len];
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            if self.line == 1 {
                line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            }
            return Ok(Some(line));
        }
    }

    /// Moves the unfinished line to the front and reads more after it.
    fn refill(&mut self) -> Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            if self.buf.len() >= MAX_LINE {
                return Err(self.error_at(
                    self.line + 1,
                    format!(
                        "line longer than {} MiB; is this a text file?",
                        MAX_LINE >> 20
                    ),
                ));
            }
            let grown = (self.buf.len() * 2).min(MAX_LINE);
            self.buf.resize(grown, 0);
        }
        loop {
            match self.file.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io("read", &self.path, e)),
            }
        }
    }

    /// Bytes of the file consumed so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.consumed
    }

    /// The file's size when it was opened.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// A parse error at the line last returned.
    pub(crate) fn error(&self, msg: String) -> Error {
        self.error_at(self.line, msg)
    }

    fn error_at(&self, line: u64, msg: String) -> Error {
        Error::Parse {
            file: self.path.clone(),
            line,
            msg,
        }
    }
}

/// Position of the first `\n`, eight bytes at a time (the classic "has zero byte" trick on
/// `word ^ 0x0a0a..`): lines of long ids or weights are common and this halves the scan cost.
fn find_newline(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut chunks = s.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        let w = u64::from_le_bytes(bytes) ^ NL;
        let zero = w.wrapping_sub(LO) & !w & HI;
        if zero != 0 {
            // Little-endian: the lowest flagged byte is the first newline (false positives
            // only appear above a true zero byte).
            return Some(base + (zero.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| base + i)
}

/// Whitespace-separated fields of a line (space or tab).
pub(crate) fn fields(line: &[u8]) -> Fields<'_> {
    Fields { rest: line }
}

/// Iterator behind [`fields`]: a plain cursor, measurably cheaper than `split` + `filter` on
/// the hot path of edge-list parsing.
pub(crate) struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let is_space = |b: &u8| *b == b' ' || *b == b'\t';
        let start = self.rest.iter().position(|b| !is_space(b))?;
        let rest = &self.rest[start..];
        let len = rest.iter().position(is_space).unwrap_or(rest.len());
        self.rest = &rest[len..];
        Some(&rest[..len])
    }
}

/// The line without leading spaces and tabs.
pub(crate) fn trim_start(line: &[u8]) -> &[u8] {
    let n = line
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(line.len());
    &line[n..]
}

/// The common edge line `src dst` (single pass, no tokenising), or `None` for anything else
/// (comments, weights, odd spacing, errors), which the general parser then handles.
#[inline]
pub(crate) fn quick_pair(line: &[u8]) -> Option<(u64, u64)> {
    let (src, mut i) = quick_digits(line, 0)?;
    let sep = i;
    while matches!(line.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    if i == sep {
        return None;
    }
    let (dst, mut i) = quick_digits(line, i)?;
    while matches!(line.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    (i == line.len()).then_some((src, dst))
}

/// A run of 1 to 19 digits (too few to overflow) starting at `start`, and where it ends.
#[inline]
fn quick_digits(line: &[u8], start: usize) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    let mut i = start;
    while let Some(&b) = line.get(i) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    (1..=19).contains(&(i - start)).then_some((v, i))
}

/// Parses an unsigned 64-bit decimal id; `what` names the field in the message.
#[inline]
pub(crate) fn parse_id(field: &[u8], what: &str) -> std::result::Result<u64, String> {
    // Up to 19 digits cannot overflow, so the common case needs no checked arithmetic and
    // no early exit; bad bytes only clear `ok` and the slow path explains them.
    if !field.is_empty() && field.len() <= 19 {
        let mut v: u64 = 0;
        let mut ok = true;
        for &b in field {
            let d = b.wrapping_sub(b'0');
            ok &= d <= 9;
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        }
        if ok {
            return Ok(v);
        }
    }
    parse_id_slow(field, what)
}

/// [`parse_id`] with overflow checks and specific error messages.
#[cold]
fn parse_id_slow(field: &[u8], what: &str) -> std::result::Result<u64, String> {
    if field.is_empty() {
        return Err(format!("missing {what}"));
    }
    let mut v: u64 = 0;
    for &b in field {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            let negative =
                field.len() > 1 && field[0] == b'-' && field[1..].iter().all(u8::is_ascii_digit);
            return Err(if negative {
                format!("{what} '{}' is negative; ids are unsigned", show(field))
            } else {
                format!("{what} '{}' is not an unsigned integer", show(field))
            });
        }
        v = match v.checked_mul(10).and_then(|v| v.checked_add(u64::from(d))) {
            Some(v) => v,
            None => {
                return Err(format!(
                    "{what} '{}' does not fit in 64 bits (max {})",
                    show(field),
                    u64::MAX
                ))
            }
        };
    }
    Ok(v)
}

/// Parses a weight or other numeric value, which must be a finite number.
pub(crate) fn parse_weight(field: &[u8], what: &str) -> std::result::Result<f64, String> {
    std::str::from_utf8(field)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|w| w.is_finite())
        .ok_or_else(|| format!("{what} '{}' is not a finite number", show(field)))
}

/// A field quoted in an error message, cut short so a binary blob cannot flood the terminal.
pub(crate) fn show(field: &[u8]) -> String {
    const MAX: usize = 40;
    let s = String::from_utf8_lossy(&field[..field.len().min(MAX)]);
    if field.len() > MAX {
        format!("{s}...")
    } else {
        s.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(content: &[u8], buf: usize) -> Vec<Vec<u8>> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        let mut r = LineReader::open(f.path(), buf).unwrap();
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l.to_vec());
        }
        out
    }

    #[test]
    fn splits_lines_for_every_buffer_size() {
        let text = b"1 2\r\nlonger line with words\n\nlast";
        let want: Vec<Vec<u8>> = vec![
            b"1 2".to_vec(),
            b"longer line with words".to_vec(),
            b"".to_vec(),
            b"last".to_vec(),
        ];
        for buf in [1, 2, 3, 7, 8, 64, 1 << 20] {
            assert_eq!(lines_of(text, buf), want, "buffer {buf}");
        }
    }

    #[test]
    fn strips_bom_and_handles_empty_file() {
        assert_eq!(lines_of(b"\xEF\xBB\xBF5 6\n", 4), vec![b"5 6".to_vec()]);
        assert!(lines_of(b"", 4).is_empty());
        assert_eq!(lines_of(b"\n", 4), vec![Vec::<u8>::new()]);
    }

    #[test]
    fn find_newline_matches_naive_search() {
        let mut s = vec![b'x'; 40];
        assert_eq!(find_newline(&s), None);
        for i in 0..40 {
            s[i] = b'\n';
            assert_eq!(find_newline(&s), Some(i));
            s[i] = 0x8a; // high-bit bytes must not look like newlines
            assert_eq!(find_newline(&s), None);
            s[i] = b'x';
        }
    }

    #[test]
    fn id_errors_are_specific() {
        assert_eq!(parse_id(b"0", "id"), Ok(0));
        assert_eq!(parse_id(b"18446744073709551615", "id"), Ok(u64::MAX));
        assert!(parse_id(b"18446744073709551616", "id")
            .unwrap_err()
            .contains("64 bits"));
        assert!(parse_id(b"-3", "id").unwrap_err().contains("negative"));
        assert!(parse_id(b"3a", "id")
            .unwrap_err()
            .contains("not an unsigned"));
        assert!(parse_id(b"+3", "id")
            .unwrap_err()
            .contains("not an unsigned"));
        assert!(parse_id(b"-", "id")
            .unwrap_err()
            .contains("not an unsigned"));
        assert!(parse_id(b"-3a", "id")
            .unwrap_err()
            .contains("not an unsigned"));
    }

    #[test]
    fn quick_pair_takes_only_plain_pairs() {
        assert_eq!(quick_pair(b"1 2"), Some((1, 2)));
        assert_eq!(quick_pair(b"10\t20 \t"), Some((10, 20)));
        assert_eq!(
            quick_pair(b"9999999999999999999 0"),
            Some((9_999_999_999_999_999_999, 0))
        );
        for other in [
            &b""[..],
            b"1",
            b"1 ",
            b" 1 2",
            b"12",
            b"1 2 3",
            b"1 2 0.5",
            b"1 -2",
            b"1 2x",
            b"10000000000000000000 1",
            b"# 1 2",
        ] {
            assert_eq!(quick_pair(other), None, "{:?}", show(other));
        }
    }

    #[test]
    fn weights_must_be_finite() {
        assert_eq!(parse_weight(b"0.5", "w"), Ok(0.5));
        assert_eq!(parse_weight(b"-2e3", "w"), Ok(-2000.0));
        for bad in [&b"nan"[..], b"inf", b"x", b"1e999", b"\xff"] {
            assert!(parse_weight(bad, "w").is_err());
        }
    }
}
