//! Matrix Market coordinate files (`%%MatrixMarket matrix coordinate <field> <symmetry>`).
//!
//! Entry indices are kept as given: they are external ids, and external ids are opaque, so
//! the 1-based convention is not "corrected".

use super::lines::{fields, parse_id, parse_weight, show, trim_start, LineReader, DEFAULT_BUF};
use super::text::{text_source, LineParser, TextSource};
use super::SourceInfo;
use crate::error::Result;
use crate::types::Record;
use std::path::Path;

/// What the banner line declares.
struct Banner {
    /// Numeric columns per entry: 0 (pattern), 1 (real, integer) or 2 (complex).
    values: usize,
    /// Symmetric, skew-symmetric and hermitian matrices are undirected graphs.
    symmetric: bool,
}

fn parse_banner(line: &[u8]) -> std::result::Result<Banner, String> {
    const WANT: &str = "expected '%%MatrixMarket matrix coordinate <field> <symmetry>'";
    let words: Vec<String> = fields(line)
        .map(|f| String::from_utf8_lossy(f).to_ascii_lowercase())
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let [banner, object, format, field, symmetry] = words[..] else {
        return Err(format!("not a Matrix Market header: {WANT}"));
    };
    if banner != "%%matrixmarket" || object != "matrix" {
        return Err(format!("not a Matrix Market header: {WANT}"));
    }
    if format != "coordinate" {
        return Err(format!(
            "'{format}' Matrix Market files are dense matrices, not graphs: {WANT}"
        ));
    }
    let values = match field {
        "pattern" => 0,
        "real" | "double" | "integer" => 1,
        "complex" => 2,
        other => {
            return Err(format!(
                "unknown field '{other}': want real, integer, complex or pattern"
            ))
        }
    };
    let symmetric = match symmetry {
        "general" => false,
        "symmetric" | "skew-symmetric" | "hermitian" => true,
        other => {
            return Err(format!(
                "unknown symmetry '{other}': want general, symmetric, skew-symmetric or hermitian"
            ))
        }
    };
    Ok(Banner { values, symmetric })
}

/// Parses the entry lines that follow the size line.
struct MtxEntries {
    rows: u64,
    cols: u64,
    declared: u64,
    seen: u64,
    values: usize,
}

impl MtxEntries {
    /// Parses the `rows cols entries` size line.
    fn from_size_line(line: &[u8], values: usize) -> std::result::Result<Self, String> {
        let mut cols = fields(line);
        let mut next = |what: &str| match cols.next() {
            Some(f) => parse_id(f, what),
            None => Err(format!(
                "size line needs 'rows columns entries'; missing {what}"
            )),
        };
        let rows = next("row count")?;
        let ncols = next("column count")?;
        let declared = next("entry count")?;
        if cols.next().is_some() {
            return Err("size line has extra columns; want 'rows columns entries'".into());
        }
        Ok(MtxEntries {
            rows,
            cols: ncols,
            declared,
            seen: 0,
            values,
        })
    }
}

impl LineParser for MtxEntries {
    fn parse(&mut self, line: &[u8], out: &mut Vec<Record>) -> std::result::Result<(), String> {
        let line = trim_start(line);
        if matches!(line.first(), None | Some(b'%')) {
            return Ok(());
        }
        if self.seen == self.declared {
            return Err(format!(
                "more entries than the {} the size line declares",
                self.declared
            ));
        }
        let mut cols = fields(line);
        let i = parse_id(cols.next().unwrap_or_default(), "row index")?;
        let j = match cols.next() {
            Some(f) => parse_id(f, "column index")?,
            None => return Err("missing column index (expected 'row column [value]')".into()),
        };
        if !(1..=self.rows).contains(&i) {
            return Err(format!("row index {i} is outside 1..={}", self.rows));
        }
        if !(1..=self.cols).contains(&j) {
            return Err(format!("column index {j} is outside 1..={}", self.cols));
        }
        let mut weight = None;
        for k in 0..self.values {
            match cols.next() {
                Some(v) => {
                    let w = parse_weight(v, "value")?;
                    weight.get_or_insert(w);
                }
                None => {
                    return Err(format!(
                        "entry has {k} of the {} values its field needs",
                        self.values
                    ))
                }
            }
        }
        if let Some(extra) = cols.next() {
            return Err(format!(
                "unexpected extra column '{}' ({} columns, want {})",
                show(extra),
                fields(line).count(),
                2 + self.values
            ));
        }
        self.seen += 1;
        out.push(match weight {
            Some(w) => Record::InsertWeighted(i, j, w),
            None => Record::Insert(i, j),
        });
        Ok(())
    }

    fn finish(&mut self) -> std::result::Result<(), String> {
        if self.seen < self.declared {
            return Err(format!(
                "file ends after {} of the {} entries the size line declares",
                self.seen, self.declared
            ));
        }
        Ok(())
    }
}

text_source!(
    /// Reads a Matrix Market coordinate file; each entry `i j [value]` becomes `Insert(i, j)`.
    ///
    /// The banner and size line are checked at open. `symmetric` (and skew-symmetric, hermitian)
    /// files report `directed: Some(false)`.
    MtxSource(MtxEntries)
);

impl MtxSource {
    /// Opens `path` with the default 1 MiB read buffer.
    pub fn open(path: &Path) -> Result<Self> {
        Self::with_buffer_size(path, DEFAULT_BUF)
    }

    /// Opens `path` reading `buf_size` bytes at a time.
    pub fn with_buffer_size(path: &Path, buf_size: usize) -> Result<Self> {
        let mut reader = LineReader::open(path, buf_size)?;
        let banner = match reader.next_line()? {
            Some(line) => parse_banner(line),
            None => Err("empty file: expected a '%%MatrixMarket' header".into()),
        }
        .map_err(|m| reader.error(m))?;
        let entries = loop {
            let parsed = match reader.next_line()? {
                None => Err("file ends before the size line".to_string()),
                Some(line) => {
                    let line = trim_start(line);
                    if matches!(line.first(), None | Some(b'%')) {
                        continue;
                    }
                    MtxEntries::from_size_line(line, banner.values)
                }
            };
            break parsed.map_err(|m| reader.error(m))?;
        };
        let info = SourceInfo {
            directed: banner.symmetric.then_some(false),
            weighted: banner.values > 0,
            total_bytes: reader.size(),
        };
        Ok(MtxSource(TextSource::new(reader, entries, info)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::io::tests::{collect, temp_file};
    use crate::io::RecordSource;
    use crate::io::{open_source, Format};

    const SYM: &str = "%%MatrixMarket matrix coordinate real symmetric\n\
                       % a comment\n\
                       %\n\
                       4 4 3\n\
                       2 1 0.5\n\
                       3 1 -1e2\n\
                       4 3 7\n";

    #[test]
    fn symmetric_real_file() {
        let (_dir, path) = temp_file("m.mtx", SYM.as_bytes());
        let mut src = open_source(&path, Format::Auto).unwrap();
        assert_eq!(src.info().directed, Some(false));
        assert!(src.info().weighted);
        assert_eq!(
            collect(src.as_mut()).unwrap(),
            vec![
                Record::InsertWeighted(2, 1, 0.5),
                Record::InsertWeighted(3, 1, -100.0),
                Record::InsertWeighted(4, 3, 7.0)
            ]
        );
        assert_eq!(src.bytes_read(), SYM.len() as u64);
    }

    #[test]
    fn general_pattern_file_with_crlf() {
        let text = "%%MatrixMarket matrix coordinate pattern general\r\n3 3 2\r\n1 2\r\n3 1\r\n";
        let (_dir, path) = temp_file("p.mtx", text.as_bytes());
        for buf in [1, 4, 1 << 20] {
            let mut src = MtxSource::with_buffer_size(&path, buf).unwrap();
            assert_eq!(src.info().directed, None);
            assert!(!src.info().weighted);
            assert_eq!(
                collect(&mut src).unwrap(),
                vec![Record::Insert(1, 2), Record::Insert(3, 1)]
            );
        }
    }

    fn error_of(text: &str) -> (u64, String) {
        let (_dir, path) = temp_file("bad.mtx", text.as_bytes());
        match MtxSource::open(&path).and_then(|mut s| collect(&mut s)) {
            Err(Error::Parse { line, msg, .. }) => (line, msg),
            other => panic!("expected a parse error for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn malformed_files_are_rejected_with_lines() {
        let h = "%%MatrixMarket matrix coordinate real general\n";
        for (text, line, msg) in [
            ("1 2\n".to_string(), 1, "not a Matrix Market header"),
            (
                "%%MatrixMarket matrix array real general\n".into(),
                1,
                "dense",
            ),
            (
                "%%MatrixMarket matrix coordinate real odd\n".into(),
                1,
                "symmetry",
            ),
            (format!("{h}% only comments\n"), 2, "before the size line"),
            (format!("{h}3 3\n"), 2, "missing entry count"),
            (format!("{h}3 3 1\n1 2\n"), 3, "values"),
            (format!("{h}3 3 1\n0 2 1.0\n"), 3, "outside"),
            (format!("{h}3 3 1\n1 4 1.0\n"), 3, "outside"),
            (format!("{h}3 3 1\n1 2 1.0\n2 2 1.0\n"), 4, "more entries"),
            (format!("{h}3 3 2\n1 2 1.0\n"), 3, "ends after 1 of the 2"),
            (format!("{h}3 3 1\n1 2 1.0 5\n"), 3, "extra column"),
            (format!("{h}3 3 1\n1 x 1.0\n"), 3, "not an unsigned"),
        ] {
            let (got_line, got_msg) = error_of(&text);
            assert_eq!(got_line, line, "{text:?}: {got_msg}");
            assert!(got_msg.contains(msg), "{text:?}: {got_msg}");
        }
    }
}
