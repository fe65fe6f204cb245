//! LDBC Graphalytics datasets: `<g>.properties` naming a vertex file `<g>.v` (one id per line)
//! and an edge file `<g>.e` (`src dst [weight]`).

use super::detect::first_data_line;
use super::lines::{fields, parse_id, trim_start, LineReader, DEFAULT_BUF};
use super::snap::EdgeLineParser;
use super::text::{LineParser, TextSource};
use super::{RecordSource, SourceInfo};
use crate::error::{Error, Result};
use crate::types::Record;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The parts of a Graphalytics `.properties` file that evograph uses.
#[derive(Clone, Debug, PartialEq)]
pub struct LdbcProperties {
    /// The graph name `<g>` in the `graph.<g>.*` keys.
    pub name: String,
    /// The vertex file, resolved against the properties file's directory.
    pub vertex_file: PathBuf,
    /// The edge file, resolved against the properties file's directory.
    pub edge_file: PathBuf,
    /// `graph.<g>.directed`.
    pub directed: bool,
    /// True when `graph.<g>.edge-properties.names` lists any property (the weight).
    pub weighted: bool,
    /// `graph.<g>.bfs.source-vertex`.
    pub bfs_source: Option<u64>,
    /// `graph.<g>.cdlp.max-iterations`.
    pub cdlp_iterations: Option<u32>,
    /// `graph.<g>.pr.damping-factor`.
    pub pr_damping: Option<f64>,
    /// `graph.<g>.pr.num-iterations`.
    pub pr_iterations: Option<u32>,
    /// `graph.<g>.sssp.source-vertex`.
    pub sssp_source: Option<u64>,
    /// `graph.<g>.algorithms`, lowercased (e.g. `["bfs", "pr"]`).
    pub algorithms: Vec<String>,
}

/// Reads a Graphalytics `.properties` file.
///
/// Supports `key = value`, `key: value` and `#`/`!` comments (not Java's escapes or line
/// continuations, which Graphalytics files do not use). The vertex file, edge file and
/// `directed` keys are required; a malformed value is an [`Error::Parse`] at its line.
pub fn read_properties(path: &Path) -> Result<LdbcProperties> {
    Ok(parse_properties(path)?.0)
}

/// The properties plus the number of edge property columns, which the edge parser needs.
fn parse_properties(path: &Path) -> Result<(LdbcProperties, usize)> {
    let mut raw = Vec::new();
    std::fs::File::open(path)
        .map_err(|e| Error::io("open", path, e))?
        .read_to_end(&mut raw)
        .map_err(|e| Error::io("read", path, e))?;
    // Java reads properties as ISO-8859-1; anything non-UTF-8 only matters inside values we
    // would reject anyway.
    let text = String::from_utf8_lossy(&raw);
    let p = Props::new(path, key_values(&text))?;
    let edge_values = p
        .get("edge-properties.names")
        .map_or(0, |(v, _)| list(v).len());
    let id = |v: &str| parse_id(v.as_bytes(), "id").ok();
    let count = |v: &str| v.parse::<u32>().ok();
    let fraction = |v: &str| v.parse::<f64>().ok().filter(|d| (0.0..=1.0).contains(d));
    Ok((
        LdbcProperties {
            bfs_source: p.parsed("bfs.source-vertex", id, "a vertex id")?,
            cdlp_iterations: p.parsed("cdlp.max-iterations", count, "an iteration count")?,
            pr_damping: p.parsed("pr.damping-factor", fraction, "a number in 0..=1")?,
            pr_iterations: p.parsed("pr.num-iterations", count, "an iteration count")?,
            sssp_source: p.parsed("sssp.source-vertex", id, "a vertex id")?,
            algorithms: p
                .get("algorithms")
                .map(|(v, _)| list(v).iter().map(|a| a.to_ascii_lowercase()).collect())
                .unwrap_or_default(),
            vertex_file: p.file("vertex-file")?,
            edge_file: p.file("edge-file")?,
            directed: p.directed()?,
            weighted: edge_values > 0,
            name: p.name,
        },
        edge_values,
    ))
}

/// A properties file's entries, read for one graph (`graph.<name>.*`).
struct Props<'t> {
    path: &'t Path,
    entries: Vec<(&'t str, &'t str, usize)>,
    name: String,
}

impl<'t> Props<'t> {
    /// The entries of the graph the file is named after, else of the first graph it has.
    fn new(path: &'t Path, entries: Vec<(&'t str, &'t str, usize)>) -> Result<Self> {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let names: Vec<&str> = entries
            .iter()
            .filter_map(|(k, _, _)| k.strip_prefix("graph.")?.strip_suffix(".vertex-file"))
            .collect();
        let name = (names.iter().find(|n| Some(**n) == stem.as_deref()))
            .or(names.first())
            .map(|n| n.to_string());
        let mut p = Props {
            path,
            entries,
            name: String::new(),
        };
        p.name = name.ok_or_else(|| p.err(0, "no graph.<name>.vertex-file key".into()))?;
        Ok(p)
    }

    fn err(&self, line: usize, msg: String) -> Error {
        Error::Parse {
            file: self.path.to_path_buf(),
            line: line as u64,
            msg,
        }
    }

    /// The value of `graph.<name>.<suffix>` and its line; later keys override earlier
    /// ones, as in java.util.Properties.
    fn get(&self, suffix: &str) -> Option<(&'t str, usize)> {
        let key = format!("graph.{}.{suffix}", self.name);
        (self.entries.iter().rev())
            .find(|(k, _, _)| *k == key)
            .map(|&(_, v, line)| (v, line))
    }

    fn required(&self, suffix: &str) -> Result<(&'t str, usize)> {
        let missing = || self.err(0, format!("missing key graph.{}.{suffix}", self.name));
        self.get(suffix).ok_or_else(missing)
    }

    /// A file the key names, beside the properties file.
    fn file(&self, suffix: &str) -> Result<PathBuf> {
        let (v, line) = self.required(suffix)?;
        if v.is_empty() {
            return Err(self.err(line, format!("graph.{}.{suffix} is empty", self.name)));
        }
        Ok(self.path.parent().unwrap_or(Path::new("")).join(v))
    }

    fn directed(&self) -> Result<bool> {
        let (v, line) = self.required("directed")?;
        match v.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.err(line, format!("directed must be true or false, not '{v}'"))),
        }
    }

    /// An optional value, `parse`d; one `parse` refuses is not `want`.
    fn parsed<T>(
        &self,
        suffix: &str,
        parse: impl Fn(&str) -> Option<T>,
        want: &str,
    ) -> Result<Option<T>> {
        match self.get(suffix) {
            None => Ok(None),
            Some((v, line)) => {
                (parse(v).map(Some)).ok_or_else(|| self.err(line, format!("'{v}' is not {want}")))
            }
        }
    }
}

/// `(key, value, 1-based line)` for every non-comment line.
fn key_values(text: &str) -> Vec<(&str, &str, usize)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                return None;
            }
            // The key ends at the first '=', ':' or whitespace, as in java.util.Properties.
            let end = line
                .find(|c: char| c == '=' || c == ':' || c.is_whitespace())
                .unwrap_or(line.len());
            let (key, rest) = line.split_at(end);
            let rest = rest.trim_start();
            let value = rest
                .strip_prefix('=')
                .or_else(|| rest.strip_prefix(':'))
                .unwrap_or(rest);
            Some((key, value.trim(), i + 1))
        })
        .collect()
}

/// A comma-separated list without empty items.
fn list(v: &str) -> Vec<&str> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parses `.v` lines: exactly one vertex id each.
struct VertexParser;

impl LineParser for VertexParser {
    fn parse(&mut self, line: &[u8], out: &mut Vec<Record>) -> std::result::Result<(), String> {
        let line = trim_start(line);
        if matches!(line.first(), None | Some(b'#' | b'%')) {
            return Ok(());
        }
        let mut cols = fields(line);
        let id = parse_id(cols.next().unwrap_or_default(), "vertex id")?;
        if cols.next().is_some() {
            return Err(format!(
                "expected one vertex id per line, found {} columns",
                fields(line).count()
            ));
        }
        out.push(Record::InsertVertex(id));
        Ok(())
    }
}

/// Reads a Graphalytics dataset: every vertex of `.v` as [`Record::InsertVertex`], then every
/// edge of `.e` as [`Record::Insert`].
pub struct LdbcSource {
    vertices: TextSource<VertexParser>,
    edges: TextSource<EdgeLineParser>,
    vertices_done: bool,
    info: SourceInfo,
}

impl LdbcSource {
    /// Opens a dataset from its `.properties`, `.v` or `.e` path, or from the path without
    /// extension (`dir/<g>` finds `dir/<g>.properties`, else `dir/<g>.v` and `dir/<g>.e`).
    ///
    /// Given `.v` or `.e`, the sibling with the same stem is read too, and a `.properties`
    /// with that stem, if present, supplies directedness and the edge columns.
    pub fn open(path: &Path) -> Result<Self> {
        Self::with_buffer_size(path, DEFAULT_BUF)
    }

    /// [`LdbcSource::open`] reading `buf_size` bytes at a time.
    pub fn with_buffer_size(path: &Path, buf_size: usize) -> Result<Self> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        let with_suffix = |suffix: &str| {
            let mut p = OsString::from(path.as_os_str());
            p.push(suffix);
            PathBuf::from(p)
        };
        let (vertex_file, edge_file, props) = match ext.as_deref() {
            Some("properties") => {
                let props = parse_properties(path)?;
                (
                    props.0.vertex_file.clone(),
                    props.0.edge_file.clone(),
                    Some(props),
                )
            }
            Some("v" | "e") => {
                let props_path = path.with_extension("properties");
                let props = match props_path.is_file() {
                    true => Some(parse_properties(&props_path)?),
                    false => None,
                };
                (path.with_extension("v"), path.with_extension("e"), props)
            }
            _ => {
                let props_path = with_suffix(".properties");
                if props_path.is_file() {
                    let props = parse_properties(&props_path)?;
                    (
                        props.0.vertex_file.clone(),
                        props.0.edge_file.clone(),
                        Some(props),
                    )
                } else {
                    (with_suffix(".v"), with_suffix(".e"), None)
                }
            }
        };
        let vertices = LineReader::open(&vertex_file, buf_size)?;
        let edges = LineReader::open(&edge_file, buf_size)?;
        let (directed, weighted, values) = match &props {
            Some((p, values)) => (Some(p.directed), p.weighted, *values),
            None => {
                let first = first_data_line(&edge_file, 0)?;
                (None, first.is_some_and(|l| fields(&l).count() >= 3), 1)
            }
        };
        let info = SourceInfo {
            directed,
            weighted,
            total_bytes: vertices.size() + edges.size(),
        };
        Ok(LdbcSource {
            // Each file's source keeps its own copy; the dataset's is the one reported.
            vertices: TextSource::new(vertices, VertexParser, info.clone()),
            edges: TextSource::new(edges, EdgeLineParser::non_negative(values), info.clone()),
            vertices_done: false,
            info,
        })
    }
}

impl RecordSource for LdbcSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Record>) -> Result<bool> {
        if !self.vertices_done {
            if self.vertices.next_batch(max, out)? {
                return Ok(true);
            }
            self.vertices_done = true;
        }
        self.edges.next_batch(max, out)
    }

    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn bytes_read(&self) -> u64 {
        self.vertices.bytes_read() + self.edges.bytes_read()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::tests::{collect, temp_file};
    use crate::io::{open_source, Format};

    fn graphalytics() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/graphalytics")
    }

    /// (graph, |V|, |E|, directed, weighted) from the dataset README.
    const GRAPHS: [(&str, usize, usize, bool, bool); 14] = [
        ("example-directed", 10, 17, true, true),
        ("example-undirected", 9, 12, false, true),
        ("test-bfs-directed", 10, 17, true, false),
        ("test-bfs-undirected", 10, 14, false, false),
        ("test-cdlp-directed", 8, 18, true, false),
        ("test-cdlp-undirected", 8, 13, false, false),
        ("test-lcc-directed", 10, 17, true, false),
        ("test-lcc-undirected", 9, 12, false, false),
        ("test-pr-directed", 50, 246, true, false),
        ("test-pr-undirected", 50, 113, false, false),
        ("test-sssp-directed", 10, 13, true, true),
        ("test-sssp-undirected", 12, 14, false, true),
        ("test-wcc-directed", 8, 10, true, false),
        ("test-wcc-undirected", 8, 7, false, false),
    ];

    fn split(recs: &[Record]) -> (Vec<u64>, Vec<(u64, u64)>) {
        let mut vs = Vec::new();
        let mut es = Vec::new();
        for r in recs {
            match *r {
                Record::InsertVertex(v) => {
                    assert!(es.is_empty(), "vertex after an edge");
                    vs.push(v);
                }
                Record::Insert(s, d) | Record::InsertWeighted(s, d, _) => es.push((s, d)),
                other => panic!("unexpected {other:?}"),
            }
        }
        (vs, es)
    }

    #[test]
    fn every_shared_graph_from_every_entry_point() {
        for (g, nv, ne, directed, weighted) in GRAPHS {
            let dir = graphalytics().join(g);
            for path in [
                dir.join(format!("{g}.properties")),
                dir.join(format!("{g}.v")),
                dir.join(format!("{g}.e")),
                dir.join(g),
            ] {
                let mut src = open_source(&path, Format::Ldbc)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(src.info().directed, Some(directed), "{g}");
                assert_eq!(src.info().weighted, weighted, "{g}");
                let (vs, es) = split(&collect(src.as_mut()).unwrap());
                assert_eq!((vs.len(), es.len()), (nv, ne), "{}", path.display());
                assert_eq!(src.bytes_read(), src.info().total_bytes, "{g}");
                let known: std::collections::HashSet<u64> = vs.iter().copied().collect();
                assert!(es
                    .iter()
                    .all(|(s, d)| known.contains(s) && known.contains(d)));
            }
        }
    }

    #[test]
    fn auto_detects_ldbc_and_reads_sparse_ids() {
        let dir = graphalytics().join("example-undirected");
        let mut src = open_source(&dir.join("example-undirected.e"), Format::Auto).unwrap();
        let (vs, es) = split(&collect(src.as_mut()).unwrap());
        assert_eq!(vs, (2..=10).collect::<Vec<u64>>());
        assert_eq!(es[0], (2, 3));
        let mut src = open_source(&dir.join("example-undirected.v"), Format::Auto).unwrap();
        assert_eq!(collect(src.as_mut()).unwrap().len(), 9 + 12);
    }

    #[test]
    fn properties_carry_algorithm_parameters() {
        let p =
            read_properties(&graphalytics().join("example-directed/example-directed.properties"))
                .unwrap();
        assert_eq!(p.name, "example-directed");
        assert!(p.directed && p.weighted);
        assert!(p
            .vertex_file
            .ends_with("example-directed/example-directed.v"));
        assert!(p.vertex_file.is_file() && p.edge_file.is_file());
        assert_eq!(p.bfs_source, Some(1));
        assert_eq!(p.cdlp_iterations, Some(2));
        assert_eq!(p.pr_damping, Some(0.85));
        assert_eq!(p.pr_iterations, Some(2));
        assert_eq!(p.sssp_source, Some(1));
        assert_eq!(p.algorithms, ["bfs", "cdlp", "lcc", "pr", "sssp", "wcc"]);

        let p = read_properties(
            &graphalytics().join("test-pr-undirected/test-pr-undirected.properties"),
        )
        .unwrap();
        assert!(!p.directed && !p.weighted);
        assert_eq!((p.pr_iterations, p.bfs_source), (Some(26), None));
        assert_eq!(p.algorithms, ["pr"]);
    }

    #[test]
    fn bad_properties_name_their_line() {
        let base = "graph.g.vertex-file = g.v\ngraph.g.edge-file: g.e\n";
        for (text, line, msg) in [
            (
                format!("{base}graph.g.directed = maybe\n"),
                3,
                "true or false",
            ),
            (base.to_string(), 0, "missing key graph.g.directed"),
            (
                format!("{base}graph.g.directed=true\n# c\ngraph.g.pr.damping-factor = 1.5\n"),
                5,
                "0..=1",
            ),
            (
                format!("{base}graph.g.directed true\ngraph.g.bfs.source-vertex = -1\n"),
                4,
                "vertex id",
            ),
            ("graph.g.edge-file = g.e\n".to_string(), 0, "vertex-file"),
        ] {
            let (_dir, path) = temp_file("g.properties", text.as_bytes());
            match read_properties(&path) {
                Err(Error::Parse {
                    line: l, msg: m, ..
                }) => {
                    assert_eq!(l, line, "{text:?}: {m}");
                    assert!(m.contains(msg), "{text:?}: {m}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn edge_file_errors_name_the_edge_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("g.v"), "1\n2\n").unwrap();
        std::fs::write(dir.path().join("g.e"), "1 2 0.5\n2 1 -1\n").unwrap();
        let mut src = LdbcSource::open(&dir.path().join("g.v")).unwrap();
        assert_eq!(src.info().directed, None);
        assert!(src.info().weighted);
        match collect(&mut src) {
            Err(Error::Parse { file, line: 2, msg }) => {
                assert_eq!(file, dir.path().join("g.e"));
                assert!(msg.contains("negative"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(dir.path().join("g.v"), "1\n2 3\n").unwrap();
        match collect(&mut LdbcSource::open(&dir.path().join("g.e")).unwrap()) {
            Err(Error::Parse { file, line: 2, msg }) => {
                assert_eq!(file, dir.path().join("g.v"));
                assert!(msg.contains("one vertex id"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unweighted_properties_reject_a_weight_column() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("h.properties"),
            "graph.h.vertex-file = h.v\ngraph.h.edge-file = h.e\ngraph.h.directed = false\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("h.v"), "1\n2\n").unwrap();
        std::fs::write(dir.path().join("h.e"), "1 2\n1 2 0.5\n").unwrap();
        let mut src = open_source(&dir.path().join("h.e"), Format::Auto).unwrap();
        assert_eq!(src.info().directed, Some(false));
        match collect(src.as_mut()) {
            Err(Error::Parse { line: 2, msg, .. }) => assert!(msg.contains("too many"), "{msg}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn missing_sibling_is_an_open_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("g.v"), "1\n").unwrap();
        match LdbcSource::open(&dir.path().join("g.v")) {
            Err(Error::Io {
                op: "open", path, ..
            }) => assert_eq!(path, dir.path().join("g.e")),
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("opened without an edge file"),
        }
    }
}
