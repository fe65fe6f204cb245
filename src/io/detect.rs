//! Choosing a reader from a file's name or, failing that, its first line.

use super::lines::{show, trim_start};
use super::metis::MetisLines;
use super::snap::EdgeLineParser;
use super::text::LineParser;
use super::{Format, TextOptions};
use crate::error::{Error, Result};
use std::ffi::OsString;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

/// The end of a message that gives up on a file's format.
const NAME_IT: &str = "name it with --format (snap, el, csv, metis, bin, ldbc, ops, mtx)";

/// Comma-separated fields, as a CSV candidate is read.
const COMMA: TextOptions = TextOptions {
    delimiter: Some(b','),
    header: false,
    keys: crate::keys::KeyKind::U64,
    time_column: None,
};

/// How much of a file sniffing looks at.
const SNIFF_BYTES: usize = 64 << 10;

/// Resolves [`Format::Auto`] for `path`; never returns `Auto`.
///
/// By extension: `.bin` → Bin; `.el`, `.wel` → El; `.txt`, `.snap`, `.tsv` → Snap;
/// `.properties`, `.v`, `.e` → Ldbc; `.ops` → Ops; `.mtx` → Mtx; `.graph`, `.metis` →
/// Metis; `.csv` → Csv. A path that does not exist but has a `.properties` or `.v` sibling
/// named `<path>.<ext>` is an LDBC dataset stem.
///
/// Otherwise the first 64 KiB decide: `%%MatrixMarket` → Mtx, a leading `+`/`-` → Ops, and
/// lines that all parse as exactly one of a whitespace edge list, a METIS graph or a
/// comma-separated edge list → that format. A file that reads as more than one (a METIS
/// header `n m` is also an edge `n -> m`), or as none, is [`Error::Invalid`] naming the
/// candidates: guessing would ingest a different graph without a word.
pub fn detect_format(path: &Path) -> Result<Format> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let by_ext = match ext.as_deref() {
        Some("bin") => Some(Format::Bin),
        Some("el" | "wel") => Some(Format::El),
        Some("txt" | "snap" | "tsv") => Some(Format::Snap),
        Some("properties" | "v" | "e") => Some(Format::Ldbc),
        Some("ops") => Some(Format::Ops),
        Some("mtx") => Some(Format::Mtx),
        Some("graph" | "metis") => Some(Format::Metis),
        Some("csv") => Some(Format::Csv),
        _ => None,
    };
    if let Some(format) = by_ext {
        return Ok(format);
    }
    if !path.exists()
        && [".properties", ".v"]
            .iter()
            .any(|s| with_suffix(path, s).is_file())
    {
        return Ok(Format::Ldbc);
    }
    sniff(path)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = OsString::from(path.as_os_str());
    p.push(suffix);
    PathBuf::from(p)
}

fn sniff(path: &Path) -> Result<Format> {
    if let Some(kind) = super::stream_kind(path) {
        // Peeking would consume what the parse needs.
        return Err(Error::Invalid(format!(
            "cannot tell the format of {}: it is {kind}, read once, and its extension says nothing; {NAME_IT}",
            path.display()
        )));
    }
    let (head, whole) = read_head(path)?;
    if head.len() >= 14 && head[..14].eq_ignore_ascii_case(b"%%MatrixMarket") {
        return Ok(Format::Mtx);
    }
    let undecided = |why: String| {
        Error::Invalid(format!(
            "cannot tell the format of {}: {why}",
            path.display()
        ))
    };
    let Some((n, line)) = data_lines(&head, b"#%").next() else {
        return Err(undecided(format!(
            "no data line in its first {} KiB and no known extension; {NAME_IT}",
            SNIFF_BYTES >> 10
        )));
    };
    if matches!(line.first(), Some(b'+' | b'-' | b'@')) {
        return Ok(Format::Ops);
    }
    let complete = complete_lines(&head, whole);
    let list = reads_as(EdgeLineParser::new(1), complete, whole);
    let metis = reads_as_metis(complete, whole);
    let csv = line.contains(&b',')
        && reads_as(
            EdgeLineParser::with_text_options(1, &COMMA),
            complete,
            whole,
        );
    match (list, metis, csv) {
        (true, true, _) => Err(undecided(
            "its lines read both as an edge list ('src dst [weight]' per line) and as a METIS graph (an 'n m' header, then one 1-based adjacency line per vertex), which are different graphs; say which with --format snap or --format metis".into(),
        )),
        (true, false, _) => Ok(Format::Snap),
        (false, true, _) => Ok(Format::Metis),
        (false, false, true) => Ok(Format::Csv),
        (false, false, false) => Err(undecided(header_hint(complete, whole).unwrap_or_else(|| {
            format!("line {n} is not 'src dst [weight]', 'src,dst[,weight]', '+/- u [v]', a METIS header or a Matrix Market header; {NAME_IT}")
        }))),
    }
}

/// The part of `head` made of whole lines (all of it when it is the whole file).
fn complete_lines(head: &[u8], whole: bool) -> &[u8] {
    match head.iter().rposition(|&b| b == b'\n') {
        _ if whole => head,
        Some(i) => &head[..i],
        None => &[],
    }
}

/// Every line of `text` through `parser`; its end-of-input checks too when `whole`.
fn reads_as(mut parser: impl LineParser, text: &[u8], whole: bool) -> bool {
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if parser.parse(line, &mut out).is_err() {
            return false;
        }
        out.clear();
    }
    !whole || parser.finish().is_ok()
}

/// Whether `text` starts with a METIS header and every line after it fits that header.
fn reads_as_metis(text: &[u8], whole: bool) -> bool {
    let mut lines = text.split(|&b| b == b'\n');
    let header = lines.find(|l| {
        let l = trim_start(l);
        !l.is_empty() && l[0] != b'%'
    });
    let Some(Ok(parser)) =
        header.map(|h| MetisLines::from_header(h.strip_suffix(b"\r").unwrap_or(h)))
    else {
        return false;
    };
    let after = header.map_or(&[][..], |h| &from(text, h)[h.len()..]);
    reads_as(parser, after.strip_prefix(b"\n").unwrap_or(after), whole)
}

/// `text` from where its sub-slice `part` starts.
fn from<'a>(text: &'a [u8], part: &[u8]) -> &'a [u8] {
    let at = part.as_ptr() as usize - text.as_ptr() as usize;
    &text[at..]
}

/// When the first data line is not an edge but the rest read as one kind of edge list, the
/// first line is a header the user has to announce.
fn header_hint(text: &[u8], whole: bool) -> Option<String> {
    let mut lines = data_lines(text, b"#%");
    let (n, first) = lines.next()?;
    let (_, second) = lines.next()?;
    let rest = from(text, second);
    let format = if first.contains(&b',') {
        reads_as(EdgeLineParser::with_text_options(1, &COMMA), rest, whole).then_some("csv")
    } else {
        reads_as(EdgeLineParser::new(1), rest, whole).then_some("snap")
    }?;
    Some(format!(
        "line {n} ('{}') looks like a header over a {format} edge list; pass --format {format} --header",
        show(first)
    ))
}

/// The first up-to-64-KiB of `path`, and whether that is the whole file.
fn read_head(path: &Path) -> Result<(Vec<u8>, bool)> {
    let mut file = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let mut head = vec![0; SNIFF_BYTES];
    let mut len = 0;
    while len < head.len() {
        match file.read(&mut head[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("read", path, e)),
        }
    }
    head.truncate(len);
    let whole = len < SNIFF_BYTES;
    Ok((head, whole))
}

/// `(1-based line number, line)` for complete lines that are not blank or comments.
fn data_lines<'a>(
    head: &'a [u8],
    comments: &'a [u8],
) -> impl Iterator<Item = (usize, &'a [u8])> + 'a {
    head.split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, trim_start(l.strip_suffix(b"\r").unwrap_or(l))))
        .filter(move |(_, l)| l.first().is_some_and(|c| !comments.contains(c)))
}

/// The first data line of a `#`/`%`-commented text file after `skip` others (a header), if
/// the first 64 KiB hold a complete one; used to tell weighted edge lists from unweighted
/// ones before reading them.
pub(crate) fn first_data_line(path: &Path, skip: usize) -> Result<Option<Vec<u8>>> {
    let (head, whole) = read_head(path)?;
    // A line cut off by the 64 KiB window could show too few columns: only trust lines that
    // end in a newline, or the file's real last line.
    let complete = complete_lines(&head, whole);
    let first = data_lines(complete, b"#%")
        .nth(skip)
        .map(|(_, l)| l.to_vec());
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::tests::temp_file;

    #[test]
    fn extensions_decide_first() {
        for (name, want) in [
            ("a.bin", Format::Bin),
            ("a.el", Format::El),
            ("a.WEL", Format::El),
            ("a.txt", Format::Snap),
            ("a.snap", Format::Snap),
            ("a.tsv", Format::Snap),
            ("a.properties", Format::Ldbc),
            ("a.v", Format::Ldbc),
            ("a.e", Format::Ldbc),
            ("a.ops", Format::Ops),
            ("a.mtx", Format::Mtx),
            ("a.graph", Format::Metis),
            ("a.metis", Format::Metis),
            ("a.csv", Format::Csv),
        ] {
            // The content disagrees on purpose: the extension wins without reading.
            assert_eq!(detect_format(Path::new(name)).unwrap(), want, "{name}");
        }
    }

    #[test]
    fn unknown_extensions_are_sniffed() {
        for (content, want) in [
            ("# comment\n% other\n\n1 2\n", Format::Snap),
            ("1\t2\t0.5\r\n", Format::Snap),
            ("# stream\n+ 1 2\n", Format::Ops),
            ("- 7\n", Format::Ops),
            (
                "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n",
                Format::Mtx,
            ),
        ] {
            let (_dir, path) = temp_file("data", content.as_bytes());
            assert_eq!(detect_format(&path).unwrap(), want, "{content:?}");
        }
    }

    #[test]
    fn undecidable_files_get_a_clear_error() {
        for content in [
            "",
            "# only a comment\n",
            "a;b\n1;2\n",
            "1 2 3 4\n",
            "1\n",
            "\x00\x01\x02",
        ] {
            let (_dir, path) = temp_file("mystery.dat", content.as_bytes());
            match detect_format(&path) {
                Err(Error::Invalid(msg)) => {
                    assert!(
                        msg.contains("mystery.dat") && msg.contains("--format"),
                        "{msg}"
                    )
                }
                other => panic!("{content:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_file_that_reads_as_edge_list_and_metis_is_refused_naming_both() {
        // The issue's 5-cycle: as an edge list it is 5 -> 5, 2 -> 5, 1 -> 3, ...
        for content in ["5 5\n2 5\n1 3\n2 4\n3 5\n4 1\n", "% c\n3 1 1\n2 1\n1 1\n\n"] {
            let (_dir, path) = temp_file("mesh", content.as_bytes());
            match detect_format(&path) {
                Err(Error::Invalid(msg)) => assert!(
                    msg.contains("edge list")
                        && msg.contains("METIS")
                        && msg.contains("--format snap or --format metis"),
                    "{msg}"
                ),
                other => panic!("{content:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn sniffing_takes_the_one_format_a_file_fits() {
        for (content, want) in [
            // Wider than three columns: only METIS fits (K5).
            (
                "5 10\n2 3 4 5\n1 3 4 5\n1 2 4 5\n1 2 3 5\n1 2 3 4\n",
                Format::Metis,
            ),
            // A vertex with no neighbours is a blank line, and a line of one id.
            ("% c\n3 1\n2\n1\n\n", Format::Metis),
            ("3 3 1\n2 7 3 1\n1 7 3 2\n1 1 2 2\n", Format::Metis),
            // Ids beyond the first line's n rule METIS out.
            ("1 2\n2 3\n3 4\n", Format::Snap),
            // A '#' comment is not METIS.
            ("# edges\n2 1\n1 2\n", Format::Snap),
            ("1,2\n3,4,0.5\n", Format::Csv),
        ] {
            let (_dir, path) = temp_file("data", content.as_bytes());
            assert_eq!(detect_format(&path).unwrap(), want, "{content:?}");
        }
    }

    #[test]
    fn a_header_line_gets_a_hint() {
        for (content, want) in [
            ("src,dst\n1,2\n3,4\n", "--format csv --header"),
            ("from to\n1 2\n3 4\n", "--format snap --header"),
        ] {
            let (_dir, path) = temp_file("deps", content.as_bytes());
            match detect_format(&path) {
                Err(Error::Invalid(msg)) => assert!(msg.contains(want), "{msg}"),
                other => panic!("{content:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn ldbc_stem_without_extension() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("g.v"), "1\n").unwrap();
        assert_eq!(detect_format(&dir.path().join("g")).unwrap(), Format::Ldbc);
        match detect_format(&dir.path().join("h")) {
            Err(Error::Io { op: "open", .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn first_data_line_skips_comments_and_ignores_cut_lines() {
        let (_d, p) = temp_file("x", b"# c\n\n  % c\n3 4 0.5\r\n5 6\n");
        assert_eq!(first_data_line(&p, 0).unwrap(), Some(b"3 4 0.5".to_vec()));
        let (_d, p) = temp_file("y", b"# only\n");
        assert_eq!(first_data_line(&p, 0).unwrap(), None);
        let (_d, p) = temp_file("z", b"7 8");
        assert_eq!(first_data_line(&p, 0).unwrap(), Some(b"7 8".to_vec()));
    }
}
