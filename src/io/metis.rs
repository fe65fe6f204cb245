//! METIS (and Chaco) graph files: an `n m [fmt [ncon]]` header, then one line per vertex
//! listing its neighbours, 1-based.
//!
//! ```text
//! % a 5-cycle
//! 5 5
//! 2 5
//! 1 3
//! ...
//! ```
//! `fmt` is up to three 0/1 digits: vertex sizes, vertex weights (`ncon` of them, 1 by
//! default), edge weights. Vertex sizes and weights have no place in a store and are skipped;
//! edge weights follow each neighbour. Vertex `i` is external id `i` (kept as given, like
//! Matrix Market indices). The graph is undirected and lists every edge from both ends, so
//! the header's `m` must equal half the adjacency entries: a file that disagrees with its
//! own header is refused rather than ingested as some other graph.

use super::lines::{fields, parse_id, parse_weight, show, trim_start, LineReader, DEFAULT_BUF};
use super::text::{text_source, LineParser, TextSource};
use super::SourceInfo;
use crate::error::Result;
use crate::types::Record;
use std::path::Path;

/// The header line and the vertex lines after it.
pub(crate) struct MetisLines {
    vertices: u64,
    edges: u64,
    vertex_sizes: bool,
    vertex_weights: u64,
    edge_weights: bool,
    /// Vertex lines seen so far: the next line is vertex `seen + 1`.
    seen: u64,
    /// Adjacency entries seen (each undirected edge counts twice).
    entries: u64,
}

impl MetisLines {
    /// Parses the header `n m [fmt [ncon]]`.
    pub(crate) fn from_header(line: &[u8]) -> std::result::Result<Self, String> {
        const WANT: &str = "a METIS header is 'vertices edges [fmt [ncon]]'";
        let cols: Vec<&[u8]> = fields(line).collect();
        if !(2..=4).contains(&cols.len()) {
            return Err(format!("{WANT}; this line has {} fields", cols.len()));
        }
        let vertices = parse_id(cols[0], "vertex count")?;
        let edges = parse_id(cols[1], "edge count")?;
        let fmt = cols.get(2).copied().unwrap_or(b"0");
        if fmt.len() > 3 || !fmt.iter().all(|b| matches!(b, b'0' | b'1')) {
            return Err(format!(
                "METIS fmt '{}' is not up to three 0/1 digits ({WANT})",
                show(fmt)
            ));
        }
        let digit = |i: usize| fmt.len() > i && fmt[fmt.len() - 1 - i] == b'1';
        let ncon = match cols.get(3) {
            Some(c) => parse_id(c, "ncon")?,
            None => 1,
        };
        if cols.len() == 4 && !digit(1) {
            return Err("METIS ncon is given but fmt declares no vertex weights".into());
        }
        if edges > vertices.saturating_mul(vertices.saturating_sub(1)) / 2 {
            return Err(format!(
                "{edges} edges cannot fit among {vertices} vertices without repeats"
            ));
        }
        Ok(MetisLines {
            vertices,
            edges,
            vertex_sizes: digit(2),
            vertex_weights: if digit(1) { ncon } else { 0 },
            edge_weights: digit(0),
            seen: 0,
            entries: 0,
        })
    }

    /// Skips a vertex line's size and weights.
    fn skip_vertex_values<'a>(
        &self,
        cols: &mut impl Iterator<Item = &'a [u8]>,
    ) -> std::result::Result<(), String> {
        let skip = u64::from(self.vertex_sizes) + self.vertex_weights;
        for k in 0..skip {
            match cols.next() {
                Some(f) => {
                    parse_id(f, "vertex size or weight")?;
                }
                None => {
                    return Err(format!(
                        "vertex line has {k} of the {skip} size and weight values fmt declares"
                    ))
                }
            }
        }
        Ok(())
    }
}

impl LineParser for MetisLines {
    fn parse(&mut self, line: &[u8], out: &mut Vec<Record>) -> std::result::Result<(), String> {
        let line = trim_start(line);
        if line.first() == Some(&b'%') {
            return Ok(());
        }
        if self.seen == self.vertices {
            if line.is_empty() {
                return Ok(()); // blank lines after the last vertex
            }
            return Err(format!(
                "more vertex lines than the {} the header declares",
                self.vertices
            ));
        }
        self.seen += 1;
        let v = self.seen;
        let mut cols = fields(line);
        self.skip_vertex_values(&mut cols)?;
        let before = out.len();
        while let Some(f) = cols.next() {
            let u = parse_id(f, "neighbour")?;
            if !(1..=self.vertices).contains(&u) {
                return Err(format!(
                    "neighbour {u} of vertex {v} is outside 1..={} (METIS ids are 1-based)",
                    self.vertices
                ));
            }
            self.entries += 1;
            if self.edge_weights {
                let w = match cols.next() {
                    Some(w) => parse_weight(w, "edge weight")?,
                    None => return Err(format!("neighbour {u} of vertex {v} has no edge weight")),
                };
                out.push(Record::InsertWeighted(v, u, w));
            } else {
                out.push(Record::Insert(v, u));
            }
        }
        if out.len() == before {
            out.push(Record::InsertVertex(v));
        }
        Ok(())
    }

    fn finish(&mut self) -> std::result::Result<(), String> {
        if self.seen < self.vertices {
            return Err(format!(
                "file ends after {} of the {} vertex lines the header declares",
                self.seen, self.vertices
            ));
        }
        if self.entries != 2 * self.edges {
            return Err(format!(
                "the header declares {} edges, so {} adjacency entries (every edge from both ends), but the vertex lines hold {}",
                self.edges,
                2 * self.edges,
                self.entries
            ));
        }
        Ok(())
    }
}

text_source!(
    /// Reads a METIS graph file; emits `Insert(v, u)` per adjacency entry (both directions, as
    /// the file lists them) and `InsertVertex(v)` for a vertex with no neighbours.
    ///
    /// Reports `directed: Some(false)`: METIS graphs are undirected.
    MetisSource(MetisLines)
);

impl MetisSource {
    /// Opens `path` with the default 1 MiB read buffer.
    pub fn open(path: &Path) -> Result<Self> {
        Self::with_buffer_size(path, DEFAULT_BUF)
    }

    /// Opens `path` reading `buf_size` bytes at a time; the header is checked here.
    pub fn with_buffer_size(path: &Path, buf_size: usize) -> Result<Self> {
        let mut reader = LineReader::open(path, buf_size)?;
        let lines = loop {
            let parsed = match reader.next_line()? {
                None => Err("file ends before the METIS header 'vertices edges [fmt]'".into()),
                Some(line) => {
                    let line = trim_start(line);
                    if matches!(line.first(), None | Some(b'%')) {
                        continue;
                    }
                    MetisLines::from_header(line)
                }
            };
            break parsed.map_err(|m| reader.error(m))?;
        };
        let info = SourceInfo {
            directed: Some(false),
            weighted: lines.edge_weights,
            total_bytes: reader.size(),
        };
        Ok(MetisSource(TextSource::new(reader, lines, info)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::io::tests::{collect, temp_file};
    use crate::io::RecordSource;

    fn parse(content: &str) -> Result<Vec<Record>> {
        let (_dir, path) = temp_file("g.graph", content.as_bytes());
        collect(&mut MetisSource::with_buffer_size(&path, 7)?)
    }

    fn error(content: &str) -> (u64, String) {
        match parse(content) {
            Err(Error::Parse { line, msg, .. }) => (line, msg),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn a_five_cycle_reads_as_its_ten_directed_entries() {
        let recs = parse("% cycle\n5 5\n2 5\n1 3\n2 4\n3 5\n4 1\n").unwrap();
        let want: Vec<Record> = [(1, 2), (1, 5), (2, 1), (2, 3), (3, 2), (3, 4)]
            .into_iter()
            .chain([(4, 3), (4, 5), (5, 4), (5, 1)])
            .map(|(a, b)| Record::Insert(a, b))
            .collect();
        assert_eq!(recs, want);
    }

    #[test]
    fn isolated_vertices_and_trailing_blank_lines() {
        let recs = parse("3 1\n2\n1\n\n\n\n").unwrap();
        assert_eq!(
            recs,
            vec![
                Record::Insert(1, 2),
                Record::Insert(2, 1),
                Record::InsertVertex(3)
            ]
        );
    }

    #[test]
    fn edge_weights_and_skipped_vertex_values() {
        // fmt 011: one vertex weight then (neighbour, weight) pairs.
        let recs = parse("2 1 011\n7 2 0.5\n9 1 0.5\n").unwrap();
        assert_eq!(
            recs,
            vec![
                Record::InsertWeighted(1, 2, 0.5),
                Record::InsertWeighted(2, 1, 0.5)
            ]
        );
        // fmt 110 with ncon 2: a size and two weights, no edge weights.
        let recs = parse("2 1 110 2\n1 5 6 2\n1 5 6 1\n").unwrap();
        assert_eq!(recs, vec![Record::Insert(1, 2), Record::Insert(2, 1)]);
        let (_d, p) = temp_file("w.graph", b"2 1 1\n2 3\n1 3\n");
        let src = MetisSource::open(&p).unwrap();
        assert!(src.info().weighted);
        assert_eq!(src.info().directed, Some(false));
    }

    #[test]
    fn files_that_disagree_with_their_header_are_refused() {
        let (line, msg) = error("3 2\n2\n1\n");
        assert_eq!(line, 3);
        assert!(msg.contains("2 of the 3 vertex lines"), "{msg}");
        let (_, msg) = error("3 2\n2\n1\n\n");
        assert!(
            msg.contains("4 adjacency entries") && msg.contains("hold 2"),
            "{msg}"
        );
        let (line, msg) = error("2 1\n2\n1\n1\n");
        assert_eq!(line, 4);
        assert!(msg.contains("more vertex lines"), "{msg}");
        let (line, msg) = error("2 1\n3\n1\n");
        assert_eq!(line, 2);
        assert!(
            msg.contains("outside 1..=2") && msg.contains("1-based"),
            "{msg}"
        );
        let (_, msg) = error("2 1\n0\n1\n");
        assert!(msg.contains("outside"), "{msg}");
        let (_, msg) = error("2 1 1\n2\n1 1\n");
        assert!(msg.contains("no edge weight"), "{msg}");
        let (line, msg) = error("2 1 2\n");
        assert_eq!(line, 1);
        assert!(msg.contains("fmt '2'"), "{msg}");
        let (_, msg) = error("2 5\n");
        assert!(msg.contains("cannot fit"), "{msg}");
        let (_, msg) = error("1 2 3 4 5\n");
        assert!(msg.contains("5 fields"), "{msg}");
        let (_, msg) = error("% only a comment\n");
        assert!(msg.contains("before the METIS header"), "{msg}");
    }
}
