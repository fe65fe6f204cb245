//! Binary edge lists: 8-byte records, little-endian u32 src then u32 dst (GraphOne/XPGraph).

use super::text::check_max;
use super::{RecordSource, SourceInfo};
use crate::error::{Error, Result};
use crate::types::Record;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

/// Bytes per record.
const RECORD: usize = 8;

/// Default read size: large enough that syscalls vanish from the profile.
const DEFAULT_BUF: usize = 4 << 20;

/// Reads a binary edge list in large chunks.
///
/// A file whose length is not a multiple of 8 is rejected at open with [`Error::Parse`]
/// (line 0, the offending offset in the message).
pub struct BinSource {
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    consumed: u64,
    info: SourceInfo,
}

impl BinSource {
    /// Opens `path` with a 4 MiB read buffer.
    pub fn open(path: &Path) -> Result<Self> {
        Self::with_buffer_size(path, DEFAULT_BUF)
    }

    /// Opens `path` reading about `buf_size` bytes at a time (rounded up to whole records).
    pub fn with_buffer_size(path: &Path, buf_size: usize) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        if !len.is_multiple_of(RECORD as u64) {
            return Err(Error::Parse {
                file: path.to_path_buf(),
                line: 0,
                msg: format!(
                    "length {len} is not a multiple of {RECORD} (u32 src, u32 dst records): \
                     {} stray bytes at offset {}",
                    len % RECORD as u64,
                    len - len % RECORD as u64
                ),
            });
        }
        let buf_size = buf_size.max(RECORD).div_ceil(RECORD) * RECORD;
        Ok(BinSource {
            file,
            path: path.to_path_buf(),
            buf: vec![0; buf_size],
            pos: 0,
            end: 0,
            eof: false,
            consumed: 0,
            info: SourceInfo {
                directed: None,
                weighted: false,
                total_bytes: len,
            },
        })
    }

    /// Keeps a partial record, then reads until the buffer is full or the file ends.
    fn refill(&mut self) -> Result<()> {
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        while self.end < self.buf.len() {
            match self.file.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io("read", &self.path, e)),
            }
        }
        if self.eof && !self.end.is_multiple_of(RECORD) {
            // The length was checked at open, so the file changed underneath us.
            return Err(Error::Parse {
                file: self.path.clone(),
                line: 0,
                msg: format!(
                    "file ends inside a record at offset {} (was it truncated while reading?)",
                    self.consumed + (self.end - self.end % RECORD) as u64
                ),
            });
        }
        Ok(())
    }
}

impl RecordSource for BinSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Record>) -> Result<bool> {
        check_max(max)?;
        let mut left = max;
        while left > 0 {
            if self.end - self.pos < RECORD {
                if self.eof {
                    break;
                }
                self.refill()?;
                continue;
            }
            let n = ((self.end - self.pos) / RECORD).min(left);
            let bytes = &self.buf[self.pos..self.pos + n * RECORD];
            out.extend(bytes.chunks_exact(RECORD).map(|r| {
                let src = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
                let dst = u32::from_le_bytes([r[4], r[5], r[6], r[7]]);
                Record::Insert(u64::from(src), u64::from(dst))
            }));
            self.pos += n * RECORD;
            self.consumed += (n * RECORD) as u64;
            left -= n;
        }
        Ok(left < max)
    }

    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn bytes_read(&self) -> u64 {
        self.consumed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::tests::{collect, temp_file};

    fn encode(edges: &[(u32, u32)]) -> Vec<u8> {
        edges
            .iter()
            .flat_map(|&(s, d)| [s.to_le_bytes(), d.to_le_bytes()].concat())
            .collect()
    }

    #[test]
    fn reads_little_endian_pairs_with_any_buffer() {
        let edges: Vec<(u32, u32)> = (0..1000u32).map(|i| (i, u32::MAX - i)).collect();
        let (_dir, path) = temp_file("g.bin", &encode(&edges));
        let want: Vec<Record> = edges
            .iter()
            .map(|&(s, d)| Record::Insert(s.into(), d.into()))
            .collect();
        for buf in [1, 8, 12, 64, 1 << 20] {
            let mut src = BinSource::with_buffer_size(&path, buf).unwrap();
            assert_eq!(collect(&mut src).unwrap(), want, "buffer {buf}");
            assert_eq!(src.bytes_read(), 8000);
        }
    }

    #[test]
    fn byte_order_is_little_endian() {
        let (_dir, path) = temp_file("one.bin", &[1, 0, 0, 0, 0, 1, 0, 0]);
        let recs = collect(&mut BinSource::open(&path).unwrap()).unwrap();
        assert_eq!(recs, vec![Record::Insert(1, 256)]);
    }

    #[test]
    fn length_not_multiple_of_8_is_rejected() {
        let (_dir, path) = temp_file("bad.bin", &[0u8; 8 * 3 + 5]);
        match BinSource::open(&path) {
            Err(Error::Parse { line: 0, msg, file }) => {
                assert_eq!(file, path);
                assert!(msg.contains("29") && msg.contains("offset 24"), "{msg}");
            }
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("accepted a 29-byte file"),
        }
    }
}
