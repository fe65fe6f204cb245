//! The batching loop shared by every line-oriented format.

use super::lines::LineReader;
use super::{Names, RecordSource, SourceInfo};
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

    /// Whether a line read so far carried a weight (an input whose header does not say).
    fn saw_weight(&self) -> bool {
        false
    }

    /// With string keys: the names the records parsed since the last call number.
    fn take_names(&mut self) -> Option<Names> {
        None
    }
}

/// A line reader plus the parser for its format, and what the input says of itself: the
/// [`RecordSource`] of every line-oriented format (see [`text_source!`]).
pub(crate) struct TextSource<P> {
    reader: LineReader,
    parser: P,
    info: SourceInfo,
    done: bool,
}

impl<P: LineParser> TextSource<P> {
    /// Wraps an open reader.
    pub(crate) fn new(reader: LineReader, parser: P, info: SourceInfo) -> Self {
        TextSource {
            reader,
            parser,
            info,
            done: false,
        }
    }
}

impl<P: LineParser> RecordSource for TextSource<P> {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Record>) -> Result<bool> {
        let more = self.read_lines(max, out)?;
        self.info.weighted |= self.parser.saw_weight();
        Ok(more)
    }

    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn bytes_read(&self) -> u64 {
        self.reader.bytes_read()
    }

    fn take_names(&mut self) -> Option<Names> {
        self.parser.take_names()
    }
}

impl<P: LineParser> TextSource<P> {
    /// Parses lines into `out` until it holds `max` more records or the input ends.
    fn read_lines(&mut self, max: usize, out: &mut Vec<Record>) -> Result<bool> {
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
}

/// Rejects a zero batch size, which would make a `while next_batch()?` loop spin forever.
pub(crate) fn check_max(max: usize) -> Result<()> {
    if max == 0 {
        return Err(Error::Invalid("batch size must be at least 1".into()));
    }
    Ok(())
}

/// Declares a public record source of a line-oriented format: a [`TextSource`] of its
/// parser behind a type of its own, with the [`RecordSource`] impl every such format
/// shares (the type's constructors are written beside its parser).
macro_rules! text_source {
    ($(#[$doc:meta])* $name:ident($parser:ty)) => {
        $(#[$doc])*
        pub struct $name(crate::io::text::TextSource<$parser>);

        impl crate::io::RecordSource for $name {
            fn next_batch(
                &mut self,
                max: usize,
                out: &mut Vec<crate::types::Record>,
            ) -> crate::error::Result<bool> {
                self.0.next_batch(max, out)
            }

            fn info(&self) -> &crate::io::SourceInfo {
                self.0.info()
            }

            fn bytes_read(&self) -> u64 {
                self.0.bytes_read()
            }

            fn take_names(&mut self) -> Option<crate::io::Names> {
                self.0.take_names()
            }
        }
    };
}
pub(crate) use text_source;
