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

    /// Called before [`LineParser::parse`] on every line: the commit time the line starts,
    /// if it starts one (an update stream's `@ TIME` line, a new value in an edge list's
    /// time column), checked not to come before the time in force ([`InputClock`]).
    fn boundary(&mut self, _line: &[u8]) -> std::result::Result<Option<i64>, String> {
        Ok(None)
    }
}

/// The commit time an input has reached: its times may repeat, never go back.
#[derive(Default)]
pub(crate) struct InputClock {
    now: Option<i64>,
}

impl InputClock {
    /// The time in force, if the input gave one yet.
    pub(crate) fn now(&self) -> Option<i64> {
        self.now
    }

    /// Moves to `t`: an error naming both times if `t` comes before the time in force.
    pub(crate) fn advance(&mut self, t: i64) -> std::result::Result<(), String> {
        if let Some(now) = self.now.filter(|&now| t < now) {
            return Err(format!(
                "time {} comes before the time of the lines above it, {}: times in an input never go backwards",
                crate::time::show(t),
                crate::time::show(now)
            ));
        }
        self.now = Some(t);
        Ok(())
    }
}

/// A line reader plus the parser for its format, and what the input says of itself: the
/// [`RecordSource`] of every line-oriented format (see [`text_source!`]).
pub(crate) struct TextSource<P> {
    reader: LineReader,
    parser: P,
    info: SourceInfo,
    done: bool,
    /// The line that started a new commit time and so ended the last batch: the first line
    /// of the next one.
    carried: Option<Vec<u8>>,
    /// The time the next batch commits at, set by the line carried.
    next_time: Option<i64>,
    /// The time the records of the last batch commit at (`None`: the input gave none).
    batch_time: Option<i64>,
}

impl<P: LineParser> TextSource<P> {
    /// Wraps an open reader.
    pub(crate) fn new(reader: LineReader, parser: P, info: SourceInfo) -> Self {
        TextSource {
            reader,
            parser,
            info,
            done: false,
            carried: None,
            next_time: None,
            batch_time: None,
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

    fn commit_time(&self) -> Option<i64> {
        self.batch_time
    }
}

impl<P: LineParser> TextSource<P> {
    /// Parses lines into `out` until it holds `max` more records, a line starts a new
    /// commit time (the batch ends before it: one batch, one time), or the input ends.
    fn read_lines(&mut self, max: usize, out: &mut Vec<Record>) -> Result<bool> {
        check_max(max)?;
        let before = out.len();
        let target = before.saturating_add(max);
        if let Some(t) = self.next_time.take() {
            self.batch_time = Some(t);
        }
        if let Some(line) = self.carried.take() {
            // Its time is in force already: only its record is left to parse.
            if let Err(msg) = self.parser.parse(&line, out) {
                return Err(self.reader.error(msg));
            }
        }
        while out.len() < target {
            let Some(line) = self.reader.next_line()? else {
                if !self.done {
                    self.done = true;
                    self.parser.finish().map_err(|m| self.reader.error(m))?;
                }
                // Ok(false) only when nothing was appended, so `while next_batch()?` loses nothing.
                return Ok(out.len() > before);
            };
            match self.parser.boundary(line) {
                Err(msg) => return Err(self.reader.error(msg)),
                Ok(Some(t)) if out.len() > before => {
                    self.carried = Some(line.to_vec());
                    self.next_time = Some(t);
                    return Ok(true);
                }
                Ok(Some(t)) => self.batch_time = Some(t),
                Ok(None) => {}
            }
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

            fn commit_time(&self) -> Option<i64> {
                self.0.commit_time()
            }
        }
    };
}
pub(crate) use text_source;
