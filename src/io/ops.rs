//! Update streams: one insertion or deletion per line.
//!
//! ```text
//! # comment
//! + 1 2        insert edge 1 -> 2
//! + 1 2 0.5    insert a weighted edge
//! - 1 2        delete edge 1 -> 2
//! + 7          insert vertex 7
//! - 7          delete vertex 7 and its edges
//! ```

use super::ids::Ids;
use super::lines::{fields, parse_weight, show, trim_start, LineReader, DEFAULT_BUF};
use super::text::{text_source, LineParser, TextSource};
use super::SourceInfo;
use crate::error::Result;
use crate::keys::{KeyKind, Names};
use crate::types::Record;
use std::path::Path;

/// Parses `+`/`-` update lines.
struct OpsParser {
    ids: Ids,
}

const FORMS: &str = "expected '+ u v [w]', '- u v', '+ u' or '- u'";

impl LineParser for OpsParser {
    fn parse(&mut self, line: &[u8], out: &mut Vec<Record>) -> std::result::Result<(), String> {
        let line = trim_start(line);
        if matches!(line.first(), None | Some(b'#')) {
            return Ok(());
        }
        let mut cols = fields(line);
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
                "too many columns ({}): {FORMS}",
                fields(line).count()
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
