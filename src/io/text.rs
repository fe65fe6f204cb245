//! The batching loop shared by every line-oriented format.

use super::lines::LineReader;
use crate::error::{Error, Result};
use crate::types::Record;

/// Turns one line of a text format into at most one record.
pub(crate) trait LineParser: Send {
    /// Parses `line` (without its line ending), pushing zero or one record onto `out`.
    fn parse(&mut self, line: &[u8], out: &mut Vec<Record>) -> std::result::Result<(), String>;

    /// Called once after the last line, for formats that declare their length up front.
    fn finish(&mut self) -> std::result::Result<(), String> {
        Ok(())
    }
}

/// A line reader plus the parser for its format.
pub(crate) struct TextSource<P> {
    reader: LineReader,
    parser: P,
    done: bool,
}

impl<P: LineParser> TextSource<P> {
    /// Wraps an open reader.
    pub(crate) fn new(reader: LineReader, parser: P) -> Self {
        TextSource {
            reader,
            parser,
            done: false,
        }
    }

    /// [`super::RecordSource::next_batch`] for this file.
    pub(crate) fn next_batch(&mut self, max: usize, out: &mut Vec<Record>) -> Result<bool> {
        check_max(max)?;
        let before = out.len();
        let target = before.saturating_add(max);
        while out.len() < target {
            let Some(line) = self.reader.next_line()? else {
                if !self.done {
                    self.done = true;
                    self.parser.finish().map_err(|m| self.reader.error(m))?;
                }
                // Ok(false) only when nothing was appended, so `while next_batch()?` loses nothing.
                return Ok(out.len() > before);
            };
            if let Err(msg) = self.parser.parse(line, out) {
                return Err(self.reader.error(msg));
            }
        }
        Ok(true)
    }

    /// The format parser (for state such as "saw a weight").
    pub(crate) fn parser(&self) -> &P {
        &self.parser
    }

    /// The format parser, to take the names a batch met.
    pub(crate) fn parser_mut(&mut self) -> &mut P {
        &mut self.parser
    }

    /// Bytes consumed so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.reader.bytes_read()
    }
}

/// Rejects a zero batch size, which would make a `while next_batch()?` loop spin forever.
pub(crate) fn check_max(max: usize) -> Result<()> {
    if max == 0 {
        return Err(Error::Invalid("batch size must be at least 1".into()));
    }
    Ok(())
}
