//! `evograph export --format parquet`: a vertex table and an edge table as directories of
//! Parquet files, written in parallel, a row group at a time (memory stays at a few row
//! groups whatever the graph's size).
//!
//! ```text
//! OUT/evograph.json                 what was written: counts, kind, files, columns
//! OUT/vertices/part-00000.parquet   id: int64, out_degree: int64, in_degree: int64,
//!                                   then one column per --kernels entry (int64 or double)
//! OUT/edges/part-00000.parquet      src: int64, dst: int64[, weight: double]
//! ```
//!
//! Ids are `int64` when every external id fits (below 2^63), `uint64` otherwise: Spark has
//! no unsigned longs and reads `uint64` as DECIMAL(20,0), which GraphFrames does not take.
//!
//! In a store with string keys, `id`, `src`, `dst` and the columns of kernels whose values
//! are vertices (component and community labels) are strings (`large_utf8`) holding names.
//!
//! Rows follow the store's dense order (edges grouped by source). Files appear under their
//! names only once complete (written as `.tmp`, then renamed), and `evograph.json` last.

use arrow_array::{ArrayRef, Float64Array, Int64Array, LargeStringArray, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use evograph::algo::kernel::{self, Kernel, Params, Values};
use evograph::snapshot::live_values;
use evograph::{Error, GraphView, Result, Snapshot, VertexId};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How the tables are cut into files and row groups.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// Rows per file at most (a vertex whose out-edges alone exceed it gets a file).
    pub rows_per_file: u64,
    /// Rows per row group at most.
    pub row_group: u64,
}

/// How a table holds vertex keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ids {
    /// Names (`large_utf8`), in a string-keyed store.
    Names,
    /// `int64`: every external id is below 2^63.
    Signed,
    /// `uint64`: some external id is not.
    Unsigned,
}

impl Ids {
    fn of(s: &Snapshot) -> Ids {
        match s.names() {
            Some(_) => Ids::Names,
            None if s.external_ids().iter().all(|&e| e <= i64::MAX as u64) => Ids::Signed,
            None => Ids::Unsigned,
        }
    }

    /// The column type of vertex keys.
    fn data_type(self) -> DataType {
        match self {
            Ids::Names => DataType::LargeUtf8,
            Ids::Signed => DataType::Int64,
            Ids::Unsigned => DataType::UInt64,
        }
    }

    /// A column of the keys of external ids `ext` (of [`Ids::data_type`]).
    fn column(self, s: &Snapshot, ext: impl Iterator<Item = u64>) -> ArrayRef {
        match (self, s.names()) {
            (Ids::Names, Some(names)) => {
                Arc::new(LargeStringArray::from_iter_values(ext.map(|e| {
                    names
                        .get(e)
                        .expect("a snapshot's names cover its external ids")
                })))
            }
            (Ids::Signed, _) => Arc::new(Int64Array::from_iter_values(ext.map(|e| e as i64))),
            _ => Arc::new(UInt64Array::from_iter_values(ext)),
        }
    }
}

/// What every part of an export shares.
struct Export<'a> {
    s: &'a Snapshot,
    out: &'a Path,
    ids: Ids,
    layout: Layout,
}

/// A column of per-vertex kernel results, aligned with the vertex positions.
struct Column {
    name: String,
    values: ArrayRef,
}

/// Writes `s` as Parquet tables under `out`.
pub(crate) fn write(s: &Snapshot, out: &Path, kernels: &[Kernel], layout: Layout) -> Result<()> {
    refuse_non_empty(out)?;
    let live = s.live_ids();
    // Kernels run before anything is written: a kernel that fails leaves no directory.
    let columns = kernel_columns(s, kernels, live.as_deref())?;
    let existed = out.exists();
    let x = Export {
        s,
        out,
        ids: Ids::of(s),
        layout,
    };
    let res = prepare(out).and_then(|()| write_tables(&x, live.as_deref(), &columns));
    if res.is_err() {
        // Leave no partial export behind (an existing directory was empty: keep it).
        let _ = std::fs::remove_dir_all(out.join("vertices"));
        let _ = std::fs::remove_dir_all(out.join("edges"));
        let _ = std::fs::remove_file(out.join("evograph.json.tmp"));
        let _ = std::fs::remove_file(out.join("evograph.json"));
        if !existed {
            let _ = std::fs::remove_dir(out);
        }
    }
    res
}

fn write_tables(x: &Export, live: Option<&[VertexId]>, columns: &[Column]) -> Result<()> {
    let (s, layout) = (x.s, x.layout);
    let rows = live.map_or(s.num_vertices(), <[VertexId]>::len);
    let dense = |p: usize| live.map_or(p as VertexId, |l| l[p]);
    let degrees: Vec<u64> = evograph::with_view!(s, |g| (0..rows)
        .into_par_iter()
        .map(|p| g.out_degree(dense(p)) as u64)
        .collect());
    // An undirected edge is written once, from its endpoint with the smaller key.
    let order = if s.is_undirected() {
        s.key_order()
    } else {
        std::borrow::Cow::Borrowed(&[][..])
    };
    let vparts = cut(&vec![1; rows], layout.rows_per_file);
    let eparts = cut(&degrees, layout.rows_per_file);
    let vfiles: Vec<(String, u64)> = vparts
        .par_iter()
        .enumerate()
        .map(|(i, r)| write_vertices(x, i, r.clone(), &dense, columns))
        .collect::<Result<_>>()?;
    let efiles: Vec<(String, u64)> = eparts
        .par_iter()
        .enumerate()
        .map(|(i, r)| write_edges(x, &order, i, r.clone(), &dense))
        .collect::<Result<_>>()?;
    describe(s, x.out, &vfiles, &efiles, columns)
}

/// Refuses an output directory that holds anything (an export never overwrites).
fn refuse_non_empty(out: &Path) -> Result<()> {
    if out.exists() && !out.is_dir() {
        return Err(Error::Invalid(format!(
            "{} exists and is not a directory",
            out.display()
        )));
    }
    if let Ok(mut entries) = std::fs::read_dir(out) {
        if entries.next().is_some() {
            return Err(Error::Invalid(format!(
                "{} is not empty: export into a new or empty directory",
                out.display()
            )));
        }
    }
    Ok(())
}

/// Makes `out` and its two table directories.
fn prepare(out: &Path) -> Result<()> {
    for d in [out.to_path_buf(), out.join("vertices"), out.join("edges")] {
        std::fs::create_dir_all(&d).map_err(|e| Error::io("create", &d, e))?;
    }
    Ok(())
}

/// Splits positions `0..weights.len()` into consecutive ranges of at most `cap` total
/// weight (a single heavier position gets a range of its own); at least one range.
fn cut(weights: &[u64], cap: u64) -> Vec<std::ops::Range<usize>> {
    let mut parts = Vec::new();
    let (mut start, mut acc) = (0, 0u64);
    for (p, &w) in weights.iter().enumerate() {
        if acc + w > cap && p > start {
            parts.push(start..p);
            (start, acc) = (p, 0);
        }
        acc += w;
    }
    parts.push(start..weights.len());
    parts
}

/// Runs each kernel and keeps its per-vertex values, aligned with the positions.
fn kernel_columns(
    s: &Snapshot,
    kernels: &[Kernel],
    live: Option<&[VertexId]>,
) -> Result<Vec<Column>> {
    let mut out = Vec::new();
    for (i, &k) in kernels.iter().enumerate() {
        if kernels[..i].contains(&k) {
            return Err(Error::Invalid(format!(
                "export --kernels: {k} is named twice"
            )));
        }
        if matches!(k, Kernel::Tc | Kernel::Khop) {
            return Err(Error::Invalid(format!(
                "export --kernels: {k} gives no value per vertex"
            )));
        }
        if k.needs_source() {
            return Err(Error::Invalid(format!(
                "export --kernels: {k} needs a source vertex; run it with `evograph run` instead"
            )));
        }
        let values: ArrayRef = match kernel::run(s, k, &Params::default())?.values {
            // Labels and parents are external ids: names, in a string-keyed store (null
            // where a BFS reached no parent).
            Values::Int(v) if k.values_are_vertices() && s.names().is_some() => {
                let names = s.names().expect("checked above");
                Arc::new(LargeStringArray::from_iter(
                    live_values(live, v)
                        .into_iter()
                        .map(|l| u64::try_from(l).ok().and_then(|e| names.get(e))),
                ))
            }
            Values::Int(v) => Arc::new(Int64Array::from(live_values(live, v))),
            Values::Float(v) => Arc::new(Float64Array::from(live_values(live, v))),
            Values::Scalar(_) | Values::Hops(_) => {
                return Err(Error::Invalid(format!(
                    "export --kernels: {k} gives no value per vertex"
                )))
            }
        };
        let name = k.name().replace('-', "_");
        out.push(Column { name, values });
    }
    Ok(out)
}

fn parquet_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::io("write", path, std::io::Error::other(e.to_string()))
}

/// A Parquet file written as `name.tmp` and renamed to `name` once closed.
struct PartWriter {
    w: ArrowWriter<std::fs::File>,
    schema: Arc<Schema>,
    tmp: PathBuf,
    path: PathBuf,
    rows: u64,
}

impl PartWriter {
    fn create(dir: &Path, i: usize, schema: Arc<Schema>, layout: Layout) -> Result<PartWriter> {
        let path = dir.join(format!("part-{i:05}.parquet"));
        let tmp = path.with_extension("parquet.tmp");
        let f = std::fs::File::create(&tmp).map_err(|e| Error::io("create", &tmp, e))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(layout.row_group as usize))
            .build();
        let w = ArrowWriter::try_new(f, schema.clone(), Some(props))
            .map_err(|e| parquet_err(&tmp, e))?;
        Ok(PartWriter {
            w,
            schema,
            tmp,
            path,
            rows: 0,
        })
    }

    fn write(&mut self, columns: Vec<ArrayRef>) -> Result<()> {
        let batch = RecordBatch::try_new(self.schema.clone(), columns)
            .map_err(|e| parquet_err(&self.tmp, e))?;
        self.rows += batch.num_rows() as u64;
        self.w.write(&batch).map_err(|e| parquet_err(&self.tmp, e))
    }

    /// Closes the file, makes it durable and gives it its name: `(file name, rows)`.
    fn finish(self) -> Result<(String, u64)> {
        let f = self.w.into_inner().map_err(|e| parquet_err(&self.tmp, e))?;
        f.sync_all().map_err(|e| Error::io("fsync", &self.tmp, e))?;
        std::fs::rename(&self.tmp, &self.path).map_err(|e| Error::io("rename", &self.tmp, e))?;
        let name = self
            .path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        Ok((name, self.rows))
    }
}

fn write_vertices(
    x: &Export,
    i: usize,
    range: std::ops::Range<usize>,
    dense: &(impl Fn(usize) -> VertexId + Sync),
    columns: &[Column],
) -> Result<(String, u64)> {
    let (s, layout) = (x.s, x.layout);
    // Degrees are int64 too: Spark has no unsigned longs, and a degree always fits.
    let mut fields = vec![
        Field::new("id", x.ids.data_type(), false),
        Field::new("out_degree", DataType::Int64, false),
        Field::new("in_degree", DataType::Int64, false),
    ];
    for c in columns {
        let nullable = c.values.null_count() > 0;
        fields.push(Field::new(&c.name, c.values.data_type().clone(), nullable));
    }
    let schema = Arc::new(Schema::new(fields));
    let mut w = PartWriter::create(&x.out.join("vertices"), i, schema, layout)?;
    let step = layout.row_group as usize;
    for start in range.clone().step_by(step) {
        let r = start..(start + step).min(range.end);
        let (ids, outd, ind) = evograph::with_view!(s, |g| {
            let ids: Vec<u64> = r.clone().map(|p| s.external_id(dense(p))).collect();
            let o: Vec<i64> = r.clone().map(|p| g.out_degree(dense(p)) as i64).collect();
            let n: Vec<i64> = r.clone().map(|p| g.in_degree(dense(p)) as i64).collect();
            (ids, o, n)
        });
        let mut cols: Vec<ArrayRef> = vec![
            x.ids.column(s, ids.into_iter()),
            Arc::new(Int64Array::from(outd)),
            Arc::new(Int64Array::from(ind)),
        ];
        cols.extend(columns.iter().map(|c| c.values.slice(r.start, r.len())));
        w.write(cols)?;
    }
    w.finish()
}

fn write_edges(
    x: &Export,
    order: &[u64],
    i: usize,
    range: std::ops::Range<usize>,
    dense: &(impl Fn(usize) -> VertexId + Sync),
) -> Result<(String, u64)> {
    let (s, layout) = (x.s, x.layout);
    let weighted = s.is_weighted();
    let mut fields = vec![
        Field::new("src", x.ids.data_type(), false),
        Field::new("dst", x.ids.data_type(), false),
    ];
    if weighted {
        fields.push(Field::new("weight", DataType::Float64, false));
    }
    let mut w = PartWriter::create(
        &x.out.join("edges"),
        i,
        Arc::new(Schema::new(fields)),
        layout,
    )?;
    let group = layout.row_group as usize;
    let ext = s.external_ids();
    let undirected = s.is_undirected();
    let (mut src, mut dst, mut wt) = (Vec::new(), Vec::new(), Vec::new());
    let mut flush = |src: &mut Vec<u64>, dst: &mut Vec<u64>, wt: &mut Vec<f64>| -> Result<()> {
        let mut cols: Vec<ArrayRef> = vec![
            x.ids.column(s, std::mem::take(src).into_iter()),
            x.ids.column(s, std::mem::take(dst).into_iter()),
        ];
        if weighted {
            cols.push(Arc::new(Float64Array::from(std::mem::take(wt))));
        }
        w.write(cols)
    };
    let res: Result<()> = evograph::with_view!(s, |g| {
        for p in range.clone() {
            let v = dense(p);
            let x = ext[v as usize];
            g.for_each_out_weighted(v, |t, weight| {
                let y = ext[t as usize];
                if !undirected || order[v as usize] <= order[t as usize] {
                    src.push(x);
                    dst.push(y);
                    if weighted {
                        wt.push(weight);
                    }
                }
            });
            if src.len() >= group {
                flush(&mut src, &mut dst, &mut wt)?;
            }
        }
        Ok(())
    });
    res?;
    if !src.is_empty() {
        flush(&mut src, &mut dst, &mut wt)?;
    }
    w.finish()
}

/// Writes `evograph.json` last: its presence says the export is complete.
fn describe(
    s: &Snapshot,
    out: &Path,
    vfiles: &[(String, u64)],
    efiles: &[(String, u64)],
    columns: &[Column],
) -> Result<()> {
    let files = |d: &str, f: &[(String, u64)]| -> Vec<serde_json::Value> {
        f.iter()
            .map(|(n, r)| serde_json::json!({"path": format!("{d}/{n}"), "rows": r}))
            .collect()
    };
    let vertex_columns: Vec<String> = ["id", "out_degree", "in_degree"]
        .iter()
        .map(|c| c.to_string())
        .chain(columns.iter().map(|c| c.name.clone()))
        .collect();
    let edge_columns = if s.is_weighted() {
        vec!["src", "dst", "weight"]
    } else {
        vec!["src", "dst"]
    };
    let meta = serde_json::json!({
        "format": "evograph-parquet",
        "version": 1,
        "directed": !s.is_undirected(),
        "weighted": s.is_weighted(),
        "keys": s.key_kind().as_str(),
        "vertices": vfiles.iter().map(|f| f.1).sum::<u64>(),
        "edges": efiles.iter().map(|f| f.1).sum::<u64>(),
        "vertex_columns": vertex_columns,
        "edge_columns": edge_columns,
        "vertex_files": files("vertices", vfiles),
        "edge_files": files("edges", efiles),
    });
    // The table files are durable (each fsynced before its rename); make their names
    // durable before the description that claims them, and the description before success.
    for d in [out.join("vertices"), out.join("edges")] {
        sync_dir(&d)?;
    }
    let path = out.join("evograph.json");
    let tmp = out.join("evograph.json.tmp");
    let text = serde_json::to_string_pretty(&meta).unwrap_or_default();
    let f = std::fs::File::create(&tmp).map_err(|e| Error::io("create", &tmp, e))?;
    std::io::Write::write_all(&mut &f, text.as_bytes()).map_err(|e| Error::io("write", &tmp, e))?;
    f.sync_all().map_err(|e| Error::io("fsync", &tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::io("rename", &tmp, e))?;
    sync_dir(out)?;
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        sync_dir(parent)?;
    }
    Ok(())
}

fn sync_dir(d: &Path) -> Result<()> {
    let f = std::fs::File::open(d).map_err(|e| Error::io("open", d, e))?;
    f.sync_all().map_err(|e| Error::io("fsync", d, e))
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn cut_bounds_every_part_and_covers_every_position() {
        assert_eq!(cut(&[], 4), vec![0..0]);
        assert_eq!(cut(&[1, 1, 1, 1, 1], 2), vec![0..2, 2..4, 4..5]);
        // A heavy position gets a part of its own, never an empty part.
        assert_eq!(cut(&[1, 9, 1], 4), vec![0..1, 1..2, 2..3]);
        assert_eq!(cut(&[0, 0, 3], 3), vec![0..3]);
    }
}
