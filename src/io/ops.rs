//! Update streams: one insertion or deletion per line.
//!
//! ```text
//! # comment
//! + 1 2        insert edge 1 -> 2
//! + 1 2 0.5    insert a weighted edge
//! - 1 2        delete edge 1 -> 2
//! + 7          insert vertex 7
//! - 7          delete vertex 7 and its edges
//! @ 1009843200 the records after this line commit at this time (Unix seconds, or RFC 3339
//!              such as 2002-01-01T00:00:00Z); it ends the batch before it
//! ```
//!
//! Fields are split at blanks. A vertex name that holds a blank (or starts with `"`) is
//! written in double quotes, with `\"` for a quote and `\\` for a backslash inside:
//! `+ "New York" "Los Angeles"`. `evograph diff` writes names so.

use super::ids::Ids;
use super::lines::{fields, parse_weight, show, trim_start, LineReader, DEFAULT_BUF};
use super::text::{text_source, InputClock, LineParser, TextSource};
use super::SourceInfo;
use crate::error::Result;
use crate::keys::{KeyKind, Names};
use crate::types::Record;
use std::borrow::Cow;
use std::path::Path;

/// Parses `+`/`-` update lines.
struct OpsParser {
    ids: Ids,
    clock: InputClock,
}

const FORMS: &str = "expected '+ u v [w]', '- u v', '+ u' or '- u'";

impl LineParser for OpsParser {
    fn parse(&mut self, line: &[u8], out: &mut Vec<Record>) -> std::result::Result<(), String> {
        let line = trim_start(line);
        // `@` lines were read by `boundary`.
        if matches!(line.first(), None | Some(b'#' | b'@')) {
            return Ok(());
        }
        let cols = match line.contains(&b'"') {
            true => quoted_fields(line)?,
            false => fields(line).map(Cow::Borrowed).collect(),
        };
        let mut cols = cols.iter().map(|c| &**c);
        let insert = match cols.next() {
            Some(b"+") => true,
            Some(b"-") => false,
            Some(other) => {
                return Err(format!(
                    "'{}' is not an update: {FORMS} (the sign stands alone)",
                    show(other)
                ))
            }
            None => return Ok(()),
        };
        let Some(u) = cols.next() else {
            return Err(format!("missing vertex id: {FORMS}"));
        };
        let u = self.ids.id(u, "vertex id")?;
        let Some(v) = cols.next() else {
            out.push(if insert {
                Record::InsertVertex(u)
            } else {
                Record::DeleteVertex(u)
            });
            return Ok(());
        };
        let v = self.ids.id(v, "destination id")?;
        let mut weight = None;
        if let Some(w) = cols.next() {
            if !insert {
                return Err(format!("a deletion takes no weight: {FORMS}"));
            }
            weight = Some(parse_weight(w, "weight")?);
        }
        if cols.next().is_some() {
            return Err(format!(
                "too many columns: {FORMS} (a vertex name holding a blank is written in double quotes)"
            ));
        }
        out.push(if let (true, Some(w)) = (insert, weight) {
            Record::InsertWeighted(u, v, w)
        } else if insert {
            Record::Insert(u, v)
        } else {
            Record::Delete(u, v)
        });
        Ok(())
    }

    fn take_names(&mut self) -> Option<Names> {
        self.ids.take_names()
    }

    fn boundary(&mut self, line: &[u8]) -> std::result::Result<Option<i64>, String> {
        let Some(rest) = trim_start(line).strip_prefix(b"@") else {
            return Ok(None);
        };
        let mut cols = fields(rest);
        let (Some(t), None) = (cols.next(), cols.next()) else {
            return Err("expected '@ TIME': one time, in Unix seconds or RFC 3339".into());
        };
        let t = crate::time::parse(&String::from_utf8_lossy(t))?;
        self.clock.advance(t)?;
        Ok(Some(t))
    }
}

/// The fields of a line some of whose fields are in double quotes (see the module docs).
fn quoted_fields(line: &[u8]) -> std::result::Result<Vec<Cow<'_, [u8]>>, String> {
    let mut out = Vec::new();
    let mut rest = line;
    loop {
        rest = trim_start(rest);
        let Some(&first) = rest.first() else {
            return Ok(out);
        };
        if first != b'"' {
            let field = fields(rest).next().unwrap_or_default();
            rest = &rest[field.len()..];
            out.push(Cow::Borrowed(field));
            continue;
        }
        let mut field = Vec::new();
        let mut at = 1;
        loop {
            match rest.get(at) {
                None => return Err("a quoted name has no closing '\"'".into()),
                Some(b'"') => break,
                Some(b'\\') => match rest.get(at + 1) {
                    Some(&c @ (b'"' | b'\\')) => {
                        field.push(c);
                        at += 1;
                    }
                    _ => return Err("in a quoted name, '\\' comes before '\"' or '\\' only".into()),
                },
                Some(&c) => field.push(c),
            }
            at += 1;
        }
        rest = &rest[at + 1..];
        if !matches!(rest.first(), None | Some(b' ' | b'\t')) {
            return Err(
                "a quoted name runs into the next field (a blank must follow its closing '\"')"
                    .into(),
            );
        }
        out.push(Cow::Owned(field));
    }
}

/// A vertex name as an ops line carries it: as it is, or in double quotes when it holds a
/// blank or starts with one (see the module docs).
pub fn quote_name(name: &str) -> Cow<'_, str> {
    if !name.contains([' ', '\t']) && !name.starts_with('"') && !name.is_empty() {
        return Cow::Borrowed(name);
    }
    let mut q = String::with_capacity(name.len() + 2);
    q.push('"');
    for c in name.chars() {
        if matches!(c, '"' | '\\') {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    Cow::Owned(q)
}

text_source!(
    /// Reads an `.ops` update stream (see the module docs for the line forms).
    OpsSource(OpsParser)
);

impl OpsSource {
    /// Opens `path` with the default 1 MiB read buffer.
    pub fn open(path: &Path) -> Result<Self> {
        Self::with_buffer_size(path, DEFAULT_BUF)
    }

    /// Opens `path` reading `buf_size` bytes at a time.
    pub fn with_buffer_size(path: &Path, buf_size: usize) -> Result<Self> {
        Self::with_keys(path, KeyKind::U64, buf_size)
    }

    /// Opens `path` with vertices given as `keys`: integers, or names (then each batch's
    /// records number the names [`super::RecordSource::take_names`] returns).
    pub fn with_keys(path: &Path, keys: KeyKind, buf_size: usize) -> Result<Self> {
        let reader = LineReader::open(path, buf_size)?;
        let info = SourceInfo {
            directed: None,
            weighted: false,
            total_bytes: reader.size(),
        };
        Ok(OpsSource(TextSource::new(
            reader,
            OpsParser {
                ids: Ids::new(keys),
                clock: InputClock::default(),
            },
            info,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::io::tests::{collect, temp_file};
    use crate::io::{open_source, Format};

    fn parse(content: &str) -> Result<Vec<Record>> {
        let (_dir, path) = temp_file("u.ops", content.as_bytes());
        collect(open_source(&path, Format::Auto)?.as_mut())
    }

    fn error_line(content: &str) -> (u64, String) {
        match parse(content) {
            Err(Error::Parse { line, msg, .. }) => (line, msg),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn parses_all_four_forms() {
        let recs = parse("# stream\n+ 1 2\n+ 1 3 0.5\r\n\n- 1 2\n+ 7\n\t- 7\n+\t4\t5\n").unwrap();
        assert_eq!(
            recs,
            vec![
                Record::Insert(1, 2),
                Record::InsertWeighted(1, 3, 0.5),
                Record::Delete(1, 2),
                Record::InsertVertex(7),
                Record::DeleteVertex(7),
                Record::Insert(4, 5),
            ]
        );
    }

    #[test]
    fn bad_lines_name_their_line() {
        for (content, want_line, want_msg) in [
            ("+ 1 2\n* 1 2\n", 2, "not an update"),
            ("+1 2\n", 1, "not an update"),
            ("+ 1 2\n+\n", 2, "missing vertex id"),
            ("- 1 2 0.5\n", 1, "no weight"),
            ("+ 1 2 0.5 6\n", 1, "too many columns"),
            ("+ 1 2 x\n", 1, "finite"),
            ("\n\n- a\n", 3, "not an unsigned"),
            ("+ 1 -2\n", 1, "negative"),
            ("1 2\n", 1, "not an update"),
        ] {
            let (line, msg) = error_line(content);
            assert_eq!(line, want_line, "{content:?}: {msg}");
            assert!(msg.contains(want_msg), "{content:?}: {msg}");
        }
    }

    #[test]
    fn at_lines_end_batches_and_time_the_records_after_them() {
        use crate::io::tests::timed_batches;
        let content = "+ 1 2\n@ 1009843200\n+ 2 3\n- 1 2\n+ 4\n@ 2002-01-01T00:00:00Z\n@1009843201.5\n+ 3 4\n";
        let (_dir, path) = temp_file("t.ops", content.as_bytes());
        let jan = 1_009_843_200_000_000_000i64;
        for max in [1, 2, 1000] {
            let mut src = open_source(&path, Format::Auto).unwrap();
            let got = timed_batches(src.as_mut(), max).unwrap();
            // Batches never span a time; records before the first `@` carry none.
            let mut flat: Vec<(Record, Option<i64>)> = Vec::new();
            for (b, t) in &got {
                assert!(b.len() <= max);
                flat.extend(b.iter().map(|&r| (r, *t)));
            }
            assert_eq!(
                flat,
                vec![
                    (Record::Insert(1, 2), None),
                    (Record::Insert(2, 3), Some(jan)),
                    (Record::Delete(1, 2), Some(jan)),
                    (Record::InsertVertex(4), Some(jan)),
                    (Record::Insert(3, 4), Some(jan + 1_500_000_000)),
                ],
                "batches of {max}"
            );
            if max == 1000 {
                assert_eq!(got.len(), 3, "{got:?}");
            }
        }
        // A stream may start with its time.
        let (_d2, p2) = temp_file("u", b"@ 5\n+ 1 2\n");
        let mut src = open_source(&p2, Format::Auto).unwrap();
        let got = timed_batches(src.as_mut(), 10).unwrap();
        assert_eq!(got, vec![(vec![Record::Insert(1, 2)], Some(5_000_000_000))]);
    }

    #[test]
    fn times_going_back_or_malformed_name_their_line() {
        for (content, want_line, want_msg) in [
            ("@ 10\n+ 1 2\n@ 9\n", 3, "never go backwards"),
            ("+ 1 2\n@\n", 2, "expected '@ TIME'"),
            ("@ 10 11\n", 1, "expected '@ TIME'"),
            ("@ yesterday\n", 1, "is not a time"),
            ("@ 2002-01-01T00:00:00Z\n@ 1009843199\n", 2, "1970"),
        ] {
            let (line, msg) = error_line(content);
            assert_eq!(line, want_line, "{content:?}: {msg}");
            assert!(
                msg.contains(want_msg)
                    || (want_msg == "1970" && msg.contains("2001-12-31T23:59:59Z")),
                "{content:?}: {msg}"
            );
        }
    }

    #[test]
    fn tiny_buffer_gives_the_same_records() {
        let content = "+ 100 200\n- 100 200\n+ 300\n- 300\n";
        let (_dir, path) = temp_file("t.ops", content.as_bytes());
        let want = collect(&mut OpsSource::open(&path).unwrap()).unwrap();
        assert_eq!(want.len(), 4);
        for buf in [1, 2, 3, 5] {
            let mut src = OpsSource::with_buffer_size(&path, buf).unwrap();
            assert_eq!(collect(&mut src).unwrap(), want, "buffer {buf}");
        }
    }
}
