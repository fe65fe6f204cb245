//! Choosing a reader from a file's name or, failing that, its first line.

use super::lines::{fields, parse_id, parse_weight, trim_start};
use super::Format;
use crate::error::{Error, Result};
use std::ffi::OsString;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

/// How much of a file sniffing looks at.
const SNIFF_BYTES: usize = 64 << 10;

/// Resolves [`Format::Auto`] for `path`; never returns `Auto`.
///
/// By extension: `.bin` → Bin; `.el`, `.wel` → El; `.txt`, `.snap`, `.tsv` → Snap;
/// `.properties`, `.v`, `.e` → Ldbc; `.ops` → Ops; `.mtx` → Mtx. A path that does not exist
/// but has a `.properties` or `.v` sibling named `<path>.<ext>` is an LDBC dataset stem.
/// Otherwise the first non-comment line decides: `%%MatrixMarket` → Mtx, a leading `+`/`-`
/// → Ops, two or three numeric columns → Snap. Anything else is [`Error::Invalid`].
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
    let (head, _) = read_head(path)?;
    if head.len() >= 14 && head[..14].eq_ignore_ascii_case(b"%%MatrixMarket") {
        return Ok(Format::Mtx);
    }
    let undecided = |why: String| {
        Error::Invalid(format!(
            "cannot tell the format of {}: {why}; name it explicitly (snap, el, bin, ldbc, ops, mtx)",
            path.display()
        ))
    };
    let Some((n, line)) = data_lines(&head, b"#%").next() else {
        return Err(undecided(format!(
            "no data line in its first {} KiB and no known extension",
            SNIFF_BYTES >> 10
        )));
    };
    if matches!(line.first(), Some(b'+' | b'-')) {
        return Ok(Format::Ops);
    }
    let cols: Vec<&[u8]> = fields(line).collect();
    let numeric = matches!(cols.len(), 2 | 3)
        && parse_id(cols[0], "id").is_ok()
        && parse_id(cols[1], "id").is_ok()
        && cols.get(2).is_none_or(|w| parse_weight(w, "w").is_ok());
    if numeric {
        return Ok(Format::Snap);
    }
    Err(undecided(format!(
        "line {n} is not 'src dst [weight]', '+/- u [v]' or a Matrix Market header"
    )))
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

/// The first data line of a `#`/`%`-commented text file, if the first 64 KiB hold a complete
/// one; used to tell weighted edge lists from unweighted ones before reading them.
pub(crate) fn first_data_line(path: &Path) -> Result<Option<Vec<u8>>> {
    let (head, whole) = read_head(path)?;
    // A line cut off by the 64 KiB window could show too few columns: only trust lines that
    // end in a newline, or the file's real last line.
    let complete = match head.iter().rposition(|&b| b == b'\n') {
        _ if whole => &head[..],
        Some(i) => &head[..i],
        None => &[][..],
    };
    let first = data_lines(complete, b"#%").next().map(|(_, l)| l.to_vec());
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
            "a,b\n1,2\n",
            "1 2 3 4\n",
            "1\n",
            "\x00\x01\x02",
        ] {
            let (_dir, path) = temp_file("mystery.dat", content.as_bytes());
            match detect_format(&path) {
                Err(Error::Invalid(msg)) => {
                    assert!(
                        msg.contains("mystery.dat") && msg.contains("explicitly"),
                        "{msg}"
                    )
                }
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
        assert_eq!(first_data_line(&p).unwrap(), Some(b"3 4 0.5".to_vec()));
        let (_d, p) = temp_file("y", b"# only\n");
        assert_eq!(first_data_line(&p).unwrap(), None);
        let (_d, p) = temp_file("z", b"7 8");
        assert_eq!(first_data_line(&p).unwrap(), Some(b"7 8".to_vec()));
    }
}
