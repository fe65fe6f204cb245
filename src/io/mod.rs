//! Input and output of edge lists and update streams.
//!
//! Every input format is read through a [`RecordSource`], which hands out batches of
//! [`Record`]s in external (user) ids. [`open_source`] picks the reader, detecting the format
//! from the file name or its first line when asked to ([`Format::Auto`]).

mod bin;
mod detect;
mod ids;
mod ldbc;
mod lines;
mod metis;
mod mtx;
mod ops;
mod snap;
mod text;
mod write;

pub use bin::BinSource;
pub use detect::detect_format;
pub use ldbc::{read_properties, LdbcProperties, LdbcSource};
pub use metis::MetisSource;
pub use mtx::MtxSource;
pub use ops::{quote_name, OpsSource};
pub use snap::SnapSource;
pub use write::{write_bin, write_bin_to, write_el, write_el_to};

use crate::error::{Error, Result};
pub use crate::keys::{KeyKind, Names};
use crate::types::Record;
use std::path::Path;

/// An input file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Decide from the extension, or failing that the first line ([`detect_format`]).
    Auto,
    /// SNAP text edge list: `src dst [weight]`, `#`/`%` comments.
    Snap,
    /// GAP `.el`/`.wel` edge list; read exactly like [`Format::Snap`].
    El,
    /// 8-byte binary records: little-endian u32 src then u32 dst (GraphOne/XPGraph).
    Bin,
    /// LDBC Graphalytics: a `.properties` file, or the `.v`/`.e` pair.
    Ldbc,
    /// Update stream: `+ u v`, `- u v`, `+ u`, `- u`.
    Ops,
    /// Matrix Market coordinate file.
    Mtx,
    /// METIS/Chaco graph file: `n m [fmt [ncon]]`, then one 1-based adjacency line per vertex.
    Metis,
    /// Comma-separated edge list `src,dst[,weight]` (a header line needs
    /// [`TextOptions::header`]).
    Csv,
}

impl Format {
    /// Every format, for help texts.
    pub const ALL: [Format; 9] = [
        Format::Auto,
        Format::Snap,
        Format::El,
        Format::Bin,
        Format::Ldbc,
        Format::Ops,
        Format::Mtx,
        Format::Metis,
        Format::Csv,
    ];

    /// The lowercase name [`FromStr`](std::str::FromStr) accepts.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Snap => "snap",
            Format::El => "el",
            Format::Bin => "bin",
            Format::Ldbc => "ldbc",
            Format::Ops => "ops",
            Format::Mtx => "mtx",
            Format::Metis => "metis",
            Format::Csv => "csv",
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                format!("unknown format '{s}': want one of {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What an input says about itself.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceInfo {
    /// `Some` only when the file states it (LDBC `directed`, Matrix Market symmetry).
    pub directed: Option<bool>,
    /// The edges carry a weight column.
    ///
    /// For plain edge lists this is judged from the first data line and becomes true later if
    /// any line carries a weight.
    pub weighted: bool,
    /// Total input size in bytes, for progress reporting.
    pub total_bytes: u64,
}

/// A stream of update records read from an input.
pub trait RecordSource: Send {
    /// Appends up to `max` records to `out`.
    ///
    /// Returns `Ok(false)` once the input is exhausted; a call returning `Ok(false)` appended
    /// nothing, so `while src.next_batch(n, &mut buf)? { .. }` sees every record. `Ok(true)` may
    /// come with fewer than `max` records. A `max` of 0 is [`Error::Invalid`]. Malformed input
    /// is [`Error::Parse`] naming the file and line.
    fn next_batch(&mut self, max: usize, out: &mut Vec<Record>) -> Result<bool>;

    /// What the input declares about itself.
    fn info(&self) -> &SourceInfo;

    /// Input bytes consumed so far (compare with [`SourceInfo::total_bytes`]).
    fn bytes_read(&self) -> u64;

    /// For an input read with string keys ([`TextOptions::keys`]): the names that the
    /// records handed out since the last call number (a record's ids are positions in
    /// it; [`crate::Graph::submit_named`] takes the two together). `None` for integer ids.
    fn take_names(&mut self) -> Option<Names> {
        None
    }

    /// The time the records of the last batch commit at, when the input gives times (an
    /// update stream's `@ TIME` lines, an edge list's [`TextOptions::time_column`]); `None`
    /// for the wall clock. A batch never spans two times, and times never go backwards:
    /// a line going back is an [`Error::Parse`] naming it.
    fn commit_time(&self) -> Option<i64> {
        None
    }
}

/// Whether `path` can be read only once (a pipe, FIFO or terminal such as `/dev/stdin`):
/// nothing may peek at it before the real read, and it cannot be read twice.
pub fn is_stream(path: &Path) -> bool {
    stream_kind(path).is_some()
}

/// What kind of file `path` is, in words, when it is not a regular file or a directory:
/// "a pipe", "a character device" (`/dev/null`, a terminal), "a block device", "a socket".
pub fn stream_kind(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::metadata(path).ok()?.file_type();
    Some(match () {
        _ if t.is_file() || t.is_dir() => return None,
        _ if t.is_fifo() => "a pipe",
        _ if t.is_char_device() => "a character device",
        _ if t.is_block_device() => "a block device",
        _ if t.is_socket() => "a socket",
        _ => "not a regular file",
    })
}

/// How text inputs are read: the split of delimited edge lists (snap, el, csv), and for
/// those and ops streams whether vertices are integers or names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// Field separator; `None` splits at runs of spaces and tabs (csv defaults to `,`).
    pub delimiter: Option<u8>,
    /// The first line that is not blank or a comment is a header, not an edge.
    pub header: bool,
    /// Vertex fields are unsigned integers ([`KeyKind::U64`]) or names taken as they stand
    /// ([`KeyKind::String`]: any UTF-8 without the field separator, up to 65,535 bytes;
    /// a header line then must be announced, as it would read as an edge; a comment line
    /// starts with a `#` that stands alone, so `#rust` and `%d` are names).
    pub keys: KeyKind,
    /// The 1-based column holding each edge's commit time (Unix seconds or RFC 3339, see
    /// [`crate::time`]); the other columns keep their meaning. Consecutive lines of one
    /// time commit together; a time before the one above it is an error naming the line.
    pub time_column: Option<usize>,
}

/// Opens `path` as `format`, detecting the format first if it is [`Format::Auto`].
///
/// Formats whose header carries metadata (LDBC properties, Matrix Market banner and size line,
/// METIS header) are validated here, so a bad header fails at open rather than at the first
/// batch.
pub fn open_source(path: &Path, format: Format) -> Result<Box<dyn RecordSource>> {
    open_source_with(path, format, &TextOptions::default())
}

/// [`open_source`] with a delimiter and header line for the edge-list formats; other
/// formats refuse them.
pub fn open_source_with(
    path: &Path,
    format: Format,
    text: &TextOptions,
) -> Result<Box<dyn RecordSource>> {
    let format = match format {
        Format::Auto => detect_format(path)?,
        f => f,
    };
    let is_list = matches!(format, Format::Snap | Format::El | Format::Csv);
    if !is_list && (text.delimiter.is_some() || text.header) {
        return Err(Error::Invalid(format!(
            "--delimiter and --header apply to edge lists (snap, el, csv), not to {format} input"
        )));
    }
    if text.keys == KeyKind::String && !is_list && format != Format::Ops {
        return Err(Error::Invalid(format!(
            "vertex names (string keys) can be read from edge lists (snap, el, csv) and ops streams, not from {format} input, whose vertices are numbers"
        )));
    }
    if text.time_column.is_some() && !matches!(format, Format::Snap | Format::El | Format::Csv) {
        return Err(Error::Invalid(format!(
            "a time column can be read from edge lists (snap, el, csv), not from {format} input{}",
            if format == Format::Ops {
                ", which gives times on '@ TIME' lines"
            } else {
                ""
            }
        )));
    }
    Ok(match format {
        Format::Snap | Format::El => {
            Box::new(SnapSource::with_options(path, text, lines::DEFAULT_BUF)?)
        }
        Format::Csv => {
            let text = TextOptions {
                delimiter: text.delimiter.or(Some(b',')),
                ..text.clone()
            };
            Box::new(SnapSource::with_options(path, &text, lines::DEFAULT_BUF)?)
        }
        Format::Bin => Box::new(BinSource::open(path)?),
        Format::Ldbc => Box::new(LdbcSource::open(path)?),
        Format::Ops => Box::new(OpsSource::with_keys(path, text.keys, lines::DEFAULT_BUF)?),
        Format::Mtx => Box::new(MtxSource::open(path)?),
        Format::Metis => Box::new(MetisSource::open(path)?),
        Format::Auto => {
            return Err(Error::Invalid(format!(
                "could not decide the format of {}",
                path.display()
            )))
        }
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Writes `content` to `name` in a fresh temporary directory (kept alive by the guard).
    pub(crate) fn temp_file(name: &str, content: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        (dir, path)
    }

    /// Drains a source in batches of at most `max` records: each batch with its commit time.
    pub(crate) fn timed_batches(
        src: &mut dyn RecordSource,
        max: usize,
    ) -> Result<Vec<(Vec<Record>, Option<i64>)>> {
        let mut out = Vec::new();
        loop {
            let mut b = Vec::new();
            let more = src.next_batch(max, &mut b)?;
            if !b.is_empty() {
                out.push((b, src.commit_time()));
            }
            if !more {
                return Ok(out);
            }
        }
    }

    /// Drains a source in small batches so batch boundaries get exercised.
    pub(crate) fn collect(src: &mut dyn RecordSource) -> Result<Vec<Record>> {
        let mut out = Vec::new();
        while src.next_batch(3, &mut out)? {}
        Ok(out)
    }

    fn edges_as_records(edges: &[(u32, u32)]) -> Vec<Record> {
        edges
            .iter()
            .map(|&(s, d)| Record::Insert(u64::from(s), u64::from(d)))
            .collect()
    }

    fn sample_edges() -> Vec<(u32, u32)> {
        let mut edges = vec![(0, 0), (u32::MAX, 0), (0, u32::MAX), (9, 10), (10, 99_999)];
        edges.extend((0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761), i)));
        edges
    }

    #[test]
    fn format_names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.to_string().parse::<Format>(), Ok(f));
        }
        assert!("gml".parse::<Format>().is_err());
        assert!("SNAP".parse::<Format>().is_err());
    }

    #[test]
    fn el_round_trip() {
        let edges = sample_edges();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.el");
        write_el(&path, &edges).unwrap();
        let mut src = open_source(&path, Format::Auto).unwrap();
        assert_eq!(collect(src.as_mut()).unwrap(), edges_as_records(&edges));
        assert_eq!(src.bytes_read(), src.info().total_bytes);
        assert!(!src.info().weighted);
        // Explicit format, unknown extension.
        let other = dir.path().join("g.data");
        std::fs::copy(&path, &other).unwrap();
        let mut src = open_source(&other, Format::El).unwrap();
        assert_eq!(collect(src.as_mut()).unwrap(), edges_as_records(&edges));
    }

    #[test]
    fn bin_round_trip() {
        let edges = sample_edges();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.bin");
        write_bin(&path, &edges).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            8 * edges.len() as u64
        );
        let mut src = open_source(&path, Format::Auto).unwrap();
        assert_eq!(collect(src.as_mut()).unwrap(), edges_as_records(&edges));
        assert_eq!(src.bytes_read(), src.info().total_bytes);
    }

    #[test]
    fn empty_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["e.el", "e.bin"] {
            let path = dir.path().join(name);
            if name.ends_with("el") {
                write_el(&path, &[]).unwrap();
            } else {
                write_bin(&path, &[]).unwrap();
            }
            let mut src = open_source(&path, Format::Auto).unwrap();
            assert!(collect(src.as_mut()).unwrap().is_empty());
        }
    }

    #[test]
    fn missing_file_is_an_io_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope.el");
        for format in Format::ALL {
            let path = match format {
                Format::Auto | Format::Snap | Format::El => path.clone(),
                other => dir.path().join(format!("nope.{other}")),
            };
            match open_source(&path, format) {
                Err(Error::Io {
                    op: "open",
                    path: p,
                    source,
                }) => {
                    assert_eq!(source.kind(), std::io::ErrorKind::NotFound, "{format}");
                    assert!(p.starts_with(dir.path()), "{format}: {}", p.display());
                }
                Err(other) => panic!("{format}: {other}"),
                Ok(_) => panic!("{format}: opened a missing file"),
            }
        }
    }

    #[test]
    fn generated_graph_survives_shuffle_and_write() {
        let spec = crate::gen::GenSpec {
            kind: crate::gen::GenKind::Kron,
            scale: 8,
            edge_factor: 4,
            seed: 5,
        };
        let mut edges = crate::gen::generate(&spec).unwrap();
        crate::gen::shuffle(&mut edges, 5);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.wel.txt");
        write_el(&path, &edges).unwrap();
        let mut src = SnapSource::with_buffer_size(&path, 100).unwrap();
        assert_eq!(collect(&mut src).unwrap(), edges_as_records(&edges));
    }
}
