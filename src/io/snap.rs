//! SNAP-style and GAP `.el`/`.wel` edge lists: `src dst [weight]` per line.

use super::detect::first_data_line;
use super::ids::Ids;
use super::lines::{
    fields, parse_weight, quick_pair, show, trim_start, Fields, LineReader, DEFAULT_BUF,
};
use super::text::{text_source, InputClock, LineParser, TextSource};
use super::{SourceInfo, TextOptions};
use crate::error::Result;
use crate::keys::Names;
use crate::types::Record;
use std::path::Path;

/// Parses `src dst [value...]` edge lines; shared with the LDBC `.e` reader.
pub(crate) struct EdgeLineParser {
    /// How many numeric columns may follow `dst` (1 for a weight).
    values: usize,
    /// Reject negative values (LDBC weights are never negative; SNAP makes no such promise).
    non_negative: bool,
    /// Field separator: `None` for runs of spaces and tabs.
    delimiter: Option<u8>,
    /// A header line still to be skipped (the first line that is not blank or a comment).
    header: bool,
    /// No data line seen yet in a plain edge list: a parse error there may be a header the
    /// user did not announce, and the message says how to skip it.
    first: bool,
    /// Set once any line carried a value column.
    pub(crate) saw_weight: bool,
    /// Integer ids or names.
    pub(crate) ids: Ids,
    /// The 0-based column of each line's commit time, and the time reached.
    time_column: Option<usize>,
    clock: InputClock,
    /// A line without its time column, reused from line to line.
    rest: Vec<u8>,
}

impl EdgeLineParser {
    /// A parser allowing up to `values` numeric columns after the endpoints.
    pub(crate) fn new(values: usize) -> Self {
        EdgeLineParser {
            values,
            non_negative: false,
            delimiter: None,
            header: false,
            first: false,
            saw_weight: false,
            ids: Ids::U64,
            time_column: None,
            clock: InputClock::default(),
            rest: Vec::new(),
        }
    }

    /// The same, with the separator and header handling of `opts`.
    pub(crate) fn with_text_options(values: usize, opts: &TextOptions) -> Self {
        EdgeLineParser {
            delimiter: opts.delimiter,
            header: opts.header,
            first: true,
            ids: Ids::new(opts.keys),
            time_column: opts.time_column.map(|c| c.saturating_sub(1)),
            ..Self::new(values)
        }
    }

    /// The same, rejecting negative values.
    pub(crate) fn non_negative(values: usize) -> Self {
        EdgeLineParser {
            non_negative: true,
            ..Self::new(values)
        }
    }
}

impl LineParser for EdgeLineParser {
    fn parse(&mut self, line: &[u8], out: &mut Vec<Record>) -> std::result::Result<(), String> {
        if self.time_column.is_some() && !self.header && !self.is_comment(trim_start(line)) {
            let mut rest = std::mem::take(&mut self.rest);
            self.without_time(line, &mut rest);
            let res = self.parse_untimed(&rest, out);
            self.rest = rest;
            return res;
        }
        self.parse_untimed(line, out)
    }

    fn saw_weight(&self) -> bool {
        self.saw_weight
    }

    fn take_names(&mut self) -> Option<Names> {
        self.ids.take_names()
    }

    fn boundary(&mut self, line: &[u8]) -> std::result::Result<Option<i64>, String> {
        let Some(c) = self.time_column else {
            return Ok(None);
        };
        if self.header || self.is_comment(trim_start(line)) {
            return Ok(None);
        }
        let Some(field) = split(line, self.delimiter).nth(c) else {
            return Err(format!("no time in column {}", c + 1));
        };
        let t = crate::time::parse(&String::from_utf8_lossy(field))?;
        if self.clock.now() == Some(t) {
            return Ok(None);
        }
        self.clock.advance(t)?;
        Ok(Some(t))
    }
}

impl EdgeLineParser {
    /// `line` without its time column, fields joined by the delimiter (a space if none).
    fn without_time(&self, line: &[u8], rest: &mut Vec<u8>) {
        rest.clear();
        let skip = self.time_column.unwrap_or(usize::MAX);
        let sep = self.delimiter.unwrap_or(b' ');
        let kept = split(line, self.delimiter)
            .enumerate()
            .filter(|&(i, _)| i != skip);
        for (k, (_, f)) in kept.enumerate() {
            if k > 0 {
                rest.push(sep);
            }
            rest.extend_from_slice(f);
        }
    }

    /// Parses one line that holds no time column.
    fn parse_untimed(
        &mut self,
        line: &[u8],
        out: &mut Vec<Record>,
    ) -> std::result::Result<(), String> {
        if self.delimiter.is_none() && !self.header && self.ids.is_u64() {
            if let Some((src, dst)) = quick_pair(line) {
                self.first = false;
                out.push(Record::Insert(src, dst));
                return Ok(());
            }
        }
        let line = trim_start(line);
        if self.is_comment(line) {
            return Ok(());
        }
        if std::mem::take(&mut self.header) {
            self.first = false;
            return Ok(());
        }
        let first = std::mem::take(&mut self.first);
        self.parse_edge(line, out).map_err(|msg| {
            if first && line.iter().any(u8::is_ascii_alphabetic) {
                format!("{msg}; if this line is a header, pass --header to skip it")
            } else {
                msg
            }
        })
    }

    /// Whether `line` (trimmed at the start) is blank or a comment. With integer ids a
    /// comment starts with `#` or `%`; with names, `#` must stand alone (followed by a
    /// space, a tab or the line's end), so that `#rust` and `%d` stay vertex names.
    fn is_comment(&self, line: &[u8]) -> bool {
        match line {
            [] => true,
            [b'#' | b'%', ..] if self.ids.is_u64() => true,
            [b'#'] | [b'#', b' ' | b'\t', ..] => true,
            _ => false,
        }
    }

    fn parse_edge(
        &mut self,
        line: &[u8],
        out: &mut Vec<Record>,
    ) -> std::result::Result<(), String> {
        let mut cols = split(line, self.delimiter);
        let Some(src) = cols.next() else {
            return Ok(()); // unreachable after trim_start, but a blank line is never an error
        };
        if !self.ids.is_u64() && matches!(src, b"+" | b"-") {
            return Err(format!(
                "a vertex named '{}' makes this line read like an update ('+ u v'): for an ops stream pass --format ops",
                show(src)
            ));
        }
        let src = self.ids.id(src, "source id")?;
        let dst = match cols.next() {
            Some(d) => self.ids.id(d, "destination id")?,
            None => return Err("missing destination id (expected 'src dst [weight]')".into()),
        };
        let mut values = 0;
        let mut weight = None;
        for col in cols {
            values += 1;
            if values > self.values {
                return Err(format!(
                    "too many columns: found {}, expected at most {} (src dst{})",
                    split(line, self.delimiter).count(),
                    2 + self.values,
                    match self.values {
                        0 => String::new(),
                        1 => " weight".to_string(),
                        n => format!(" and {n} values"),
                    }
                ));
            }
            let w = parse_weight(col, "weight")?;
            if self.non_negative && w < 0.0 {
                return Err(format!("weight {w} is negative"));
            }
            self.saw_weight = true;
            weight.get_or_insert(w);
        }
        out.push(match weight {
            Some(w) => Record::InsertWeighted(src, dst, w),
            None => Record::Insert(src, dst),
        });
        Ok(())
    }
}

/// Fields of `line` split at `delimiter` (each trimmed of spaces and tabs), or at runs of
/// spaces and tabs when there is none.
fn split(line: &[u8], delimiter: Option<u8>) -> Split<'_> {
    match delimiter {
        None => Split::Blank(fields(line)),
        Some(d) => Split::At(d, Some(line)),
    }
}

/// Iterator behind [`split`] (an enum rather than a box: this runs once per weighted line).
enum Split<'a> {
    Blank(Fields<'a>),
    At(u8, Option<&'a [u8]>),
}

impl<'a> Iterator for Split<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        match self {
            Split::Blank(f) => f.next(),
            Split::At(d, rest) => {
                let line = rest.take()?;
                let (field, tail) = match line.iter().position(|b| b == d) {
                    Some(i) => (&line[..i], Some(&line[i + 1..])),
                    None => (line, None),
                };
                *rest = tail;
                let field = trim_start(field);
                let end = field
                    .iter()
                    .rposition(|&b| b != b' ' && b != b'\t')
                    .map_or(0, |i| i + 1);
                Some(&field[..end])
            }
        }
    }
}

text_source!(
    /// Reads a whitespace-separated edge list (`.el`, `.wel`, `.txt`, `.snap`, `.tsv`).
    ///
    /// Comment lines start with `#` or `%`; blank lines and CRLF endings are accepted. Emits
    /// [`Record::Insert`] per edge.
    SnapSource(EdgeLineParser)
);

impl SnapSource {
    /// Opens `path` with the default 1 MiB read buffer.
    pub fn open(path: &Path) -> Result<Self> {
        Self::with_buffer_size(path, DEFAULT_BUF)
    }

    /// Opens `path` reading `buf_size` bytes at a time (lines longer than that still work).
    pub fn with_buffer_size(path: &Path, buf_size: usize) -> Result<Self> {
        Self::with_options(path, &TextOptions::default(), buf_size)
    }

    /// Opens `path` with a field delimiter and header line as `opts` say (CSV, TSV).
    pub fn with_options(path: &Path, opts: &TextOptions, buf_size: usize) -> Result<Self> {
        let reader = LineReader::open(path, buf_size)?;
        // A pipe cannot be peeked at: what the sniff read would be lost to the parse. Its
        // weights are learned as lines arrive.
        let weighted = !super::is_stream(path)
            && first_data_line(path, usize::from(opts.header))?.is_some_and(|l| {
                let time = usize::from(opts.time_column.is_some());
                split(&l, opts.delimiter).count() >= 3 + time
            });
        let info = SourceInfo {
            directed: None,
            weighted,
            total_bytes: reader.size(),
        };
        Ok(SnapSource(TextSource::new(
            reader,
            EdgeLineParser::with_text_options(1, opts),
            info,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::io::tests::{collect, temp_file};
    use crate::io::RecordSource;

    fn parse(content: &str) -> Result<Vec<Record>> {
        let (_dir, path) = temp_file("g.el", content.as_bytes());
        collect(&mut SnapSource::open(&path)?)
    }

    /// Batches of at most `max` records with their times, read with a time column.
    fn timed(
        content: &str,
        opts: &TextOptions,
        max: usize,
    ) -> Result<Vec<(Vec<Record>, Option<i64>)>> {
        let (_dir, path) = temp_file("t.el", content.as_bytes());
        let mut src = SnapSource::with_options(&path, opts, 7)?;
        crate::io::tests::timed_batches(&mut src, max)
    }

    #[test]
    fn a_time_column_times_each_edge_and_batches_by_time() {
        let s = |x: i64| Some(x * 1_000_000_000);
        let col3 = TextOptions {
            time_column: Some(3),
            ..TextOptions::default()
        };
        let got = timed("# c\n1 2 100\n2 3 100\n3 4 100.5\n\n4 5 200 \n", &col3, 10).unwrap();
        assert_eq!(
            got,
            vec![
                (vec![Record::Insert(1, 2), Record::Insert(2, 3)], s(100)),
                (vec![Record::Insert(3, 4)], Some(100_500_000_000)),
                (vec![Record::Insert(4, 5)], s(200)),
            ]
        );
        assert_eq!(
            timed("1 2 100\n2 3 100\n3 4 100\n", &col3, 2)
                .unwrap()
                .len(),
            2
        );
        // First column, comma-separated, with a weight and a header; RFC 3339 times.
        let csv = TextOptions {
            delimiter: Some(b','),
            header: true,
            time_column: Some(1),
            ..TextOptions::default()
        };
        let got = timed(
            "time,src,dst,w\n2002-01-01T00:00:00Z,1,2,0.5\n2001-12-31T19:00:00-05:00,2,3,1.5\n",
            &csv,
            10,
        )
        .unwrap();
        assert_eq!(
            got,
            vec![(
                vec![
                    Record::InsertWeighted(1, 2, 0.5),
                    Record::InsertWeighted(2, 3, 1.5)
                ],
                s(1_009_843_200)
            )]
        );
        for (content, line, msg) in [
            ("1 2 5\n2 3 4\n", 2, "never go backwards"),
            ("1 2 5\n2 3\n", 2, "no time in column 3"),
            ("1 2 x\n", 1, "is not a time"),
        ] {
            match timed(content, &col3, 10) {
                Err(Error::Parse {
                    line: l, msg: m, ..
                }) => {
                    assert_eq!(l, line, "{content:?}: {m}");
                    assert!(m.contains(msg), "{content:?}: {m}");
                }
                other => panic!("{content:?}: expected a parse error, got {other:?}"),
            }
        }
    }

    /// The line number of a parse error, and its message.
    fn error_line(content: &str) -> (u64, String) {
        match parse(content) {
            Err(Error::Parse { line, msg, .. }) => (line, msg),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn parses_edges_comments_blank_lines_and_crlf() {
        let recs = parse("# header\r\n% also a comment\n1 2\r\n\n  \t\n3\t4 0.5\r\n  5  6  \n7 8")
            .unwrap();
        assert_eq!(
            recs,
            vec![
                Record::Insert(1, 2),
                Record::InsertWeighted(3, 4, 0.5),
                Record::Insert(5, 6),
                Record::Insert(7, 8)
            ]
        );
    }

    #[test]
    fn full_u64_range_is_accepted() {
        let recs = parse("0 18446744073709551615\n").unwrap();
        assert_eq!(recs, vec![Record::Insert(0, u64::MAX)]);
    }

    #[test]
    fn errors_name_the_line() {
        let (line, msg) = error_line("1 2\n# c\nx 3\n");
        assert_eq!(line, 3);
        assert!(msg.contains("not an unsigned integer"), "{msg}");

        let (line, msg) = error_line("1 2\n3 4\n\n5\n");
        assert_eq!(line, 4);
        assert!(msg.contains("missing destination"), "{msg}");

        let (line, msg) = error_line("1 2 0.5 9\n");
        assert_eq!(line, 1);
        assert!(
            msg.contains("too many columns") && msg.contains("found 4"),
            "{msg}"
        );

        let (line, msg) = error_line("1 2\n1 -2\n");
        assert_eq!(line, 2);
        assert!(msg.contains("negative"), "{msg}");

        let (line, msg) = error_line("1 2\r\n3 4\r\n18446744073709551616 1\r\n");
        assert_eq!(line, 3);
        assert!(msg.contains("64 bits"), "{msg}");

        let (line, msg) = error_line("1 2 heavy\n");
        assert_eq!(line, 1);
        assert!(msg.contains("finite"), "{msg}");

        let (line, _) = error_line("1 2 nan\n");
        assert_eq!(line, 1);
    }

    #[test]
    fn parse_error_displays_file_and_line() {
        let (_dir, path) = temp_file("bad.el", b"1 2\nfoo bar\n");
        let err = collect(&mut SnapSource::open(&path).unwrap()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("bad.el:2:"), "{text}");
    }

    #[test]
    fn records_split_across_the_buffer_boundary() {
        let content =
            "# comment longer than the buffer\n123456 7890\r\n1 22 0.25\n333 4444\n55555 6";
        let want = vec![
            Record::Insert(123456, 7890),
            Record::InsertWeighted(1, 22, 0.25),
            Record::Insert(333, 4444),
            Record::Insert(55555, 6),
        ];
        let (_dir, path) = temp_file("split.el", content.as_bytes());
        for buf in [1, 2, 3, 5, 7, 11] {
            let mut src = SnapSource::with_buffer_size(&path, buf).unwrap();
            assert_eq!(collect(&mut src).unwrap(), want, "buffer {buf}");
            assert_eq!(src.bytes_read(), content.len() as u64);
        }
    }

    #[test]
    fn errors_after_a_buffer_boundary_keep_their_line() {
        let (_dir, path) = temp_file("late.el", b"10 20\n30 40\n50 x\n");
        let mut src = SnapSource::with_buffer_size(&path, 4).unwrap();
        match collect(&mut src) {
            Err(Error::Parse { line: 3, .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn batches_respect_max_and_end_cleanly() {
        let (_dir, path) = temp_file("b.el", b"1 2\n3 4\n5 6\n7 8\n9 10\n");
        let mut src = SnapSource::open(&path).unwrap();
        let mut out = Vec::new();
        assert!(src.next_batch(2, &mut out).unwrap());
        assert_eq!(out.len(), 2);
        assert!(src.next_batch(2, &mut out).unwrap());
        assert_eq!(out.len(), 4, "next_batch appends");
        assert!(src.next_batch(2, &mut out).unwrap());
        assert_eq!(out.len(), 5);
        assert!(!src.next_batch(2, &mut out).unwrap());
        assert!(!src.next_batch(2, &mut out).unwrap());
        assert_eq!(out.len(), 5);
        assert!(matches!(
            src.next_batch(0, &mut out),
            Err(Error::Invalid(_))
        ));
    }

    #[test]
    fn info_reports_weights_and_size() {
        let (_dir, path) = temp_file("w.wel", b"# w\n1 2 0.5\n");
        let src = SnapSource::open(&path).unwrap();
        assert!(src.info().weighted);
        assert_eq!(src.info().directed, None);
        assert_eq!(src.info().total_bytes, 12);
        let (_dir2, path) = temp_file("u.el", b"1 2\n");
        assert!(!SnapSource::open(&path).unwrap().info().weighted);
    }
}
