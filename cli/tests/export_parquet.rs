//! `evograph export --format parquet`: the tables hold exactly the graph `export` prints
//! and `run` computes, across files and row groups, for directed, undirected, weighted
//! stores with deleted vertices; bad requests fail clearly and write nothing.

mod common;

use arrow_array::{Array, Float64Array, Int64Array, RecordBatch, UInt64Array};
use common::{assert_no_panic, evograph};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::collections::BTreeMap;
use std::path::Path;

/// Row groups summed over the files of one table.
fn row_groups(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let f = std::fs::File::open(e.unwrap().path()).unwrap();
            let b = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
            b.metadata().num_row_groups()
        })
        .sum()
}

/// Every row of every file of one table, in file order.
fn read_table(dir: &Path) -> Vec<RecordBatch> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        assert_eq!(
            f.extension().unwrap(),
            "parquet",
            "stray file {}",
            f.display()
        );
        let r = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&f).unwrap())
            .unwrap()
            .build()
            .unwrap();
        out.extend(r.map(|b| b.unwrap()));
    }
    out
}

/// An integer column as u64s: ids and degrees are `int64` (every id here is below 2^63),
/// ids `uint64` where some id is not.
fn u64s(b: &RecordBatch, name: &str) -> Vec<u64> {
    let c = b.column_by_name(name).unwrap();
    if let Some(u) = c.as_any().downcast_ref::<UInt64Array>() {
        return u.values().to_vec();
    }
    let i = c.as_any().downcast_ref::<Int64Array>().unwrap();
    i.values()
        .iter()
        .map(|&x| u64::try_from(x).unwrap())
        .collect()
}

/// The type of an id column.
fn column_type(b: &RecordBatch, name: &str) -> arrow_schema::DataType {
    b.column_by_name(name).unwrap().data_type().clone()
}

fn ok(args: &[&str]) -> String {
    let out = evograph(args);
    assert!(
        out.status.success(),
        "evograph {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `src dst [w]` lines of the text export as a map to the weight (1 when unweighted).
fn text_edges(store: &str) -> BTreeMap<(u64, u64), f64> {
    ok(&["export", store])
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let w = f.get(2).map_or(1.0, |w| w.parse().unwrap());
            ((f[0].parse().unwrap(), f[1].parse().unwrap()), w)
        })
        .collect()
}

fn check_store(dir: &Path, input: &str, ingest_flags: &[&str], delete: &str) {
    let store = dir.join("s");
    let s = store.to_str().unwrap();
    std::fs::write(dir.join("g.el"), input).unwrap();
    let el = dir.join("g.el");
    let mut args = vec!["ingest", s, el.to_str().unwrap()];
    args.extend(ingest_flags);
    ok(&args);
    std::fs::write(dir.join("d.ops"), delete).unwrap();
    ok(&[
        "ingest",
        s,
        dir.join("d.ops").to_str().unwrap(),
        "--format",
        "ops",
    ]);
    let out = dir.join("pq");
    let o = out.to_str().unwrap();
    // Tiny files and row groups, so that several of each are written and read back.
    ok(&[
        "export",
        s,
        "--format",
        "parquet",
        o,
        "--kernels",
        "pr,wcc",
        "--rows-per-file",
        "4",
        "--row-group",
        "2",
    ]);
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("evograph.json")).unwrap()).unwrap();

    let edges = read_table(&out.join("edges"));
    let files = std::fs::read_dir(out.join("edges")).unwrap().count();
    assert!(files > 1, "expected several files");
    // Vertex files hold exactly --rows-per-file rows: row groups of 2 split them.
    let vfiles = std::fs::read_dir(out.join("vertices")).unwrap().count();
    assert!(
        row_groups(&out.join("vertices")) > vfiles,
        "expected several row groups per file"
    );
    let weighted = meta["weighted"].as_bool().unwrap();
    let mut got = BTreeMap::new();
    for b in &edges {
        let w: Vec<f64> = match b.column_by_name("weight") {
            Some(c) => c
                .as_any()
                .downcast_ref::<Float64Array>()
                .unwrap()
                .values()
                .to_vec(),
            None => vec![1.0; b.num_rows()],
        };
        assert_eq!(b.column_by_name("weight").is_some(), weighted);
        for ((x, y), w) in u64s(b, "src").into_iter().zip(u64s(b, "dst")).zip(w) {
            assert!(got.insert((x, y), w).is_none(), "edge {x} {y} twice");
        }
    }
    assert_eq!(got, text_edges(s), "the edge table is the text export");
    assert_eq!(meta["edges"].as_u64().unwrap(), got.len() as u64);

    let vertices = read_table(&out.join("vertices"));
    let mut ids = Vec::new();
    let mut pr = BTreeMap::new();
    let mut wcc = BTreeMap::new();
    let (mut outd, mut ind) = (BTreeMap::new(), BTreeMap::new());
    for b in &vertices {
        let id = u64s(b, "id");
        let p = b.column_by_name("pr").unwrap();
        let p = p.as_any().downcast_ref::<Float64Array>().unwrap();
        let c = b.column_by_name("wcc").unwrap();
        let c = c.as_any().downcast_ref::<Int64Array>().unwrap();
        for (i, &v) in id.iter().enumerate() {
            pr.insert(v, p.value(i));
            wcc.insert(v, c.value(i));
            outd.insert(v, u64s(b, "out_degree")[i]);
            ind.insert(v, u64s(b, "in_degree")[i]);
        }
        ids.extend(id);
    }
    let run = |k: &str| -> BTreeMap<u64, String> {
        ok(&["run", s, k])
            .lines()
            .map(|l| {
                let (a, b) = l.split_once(' ').unwrap();
                (a.parse().unwrap(), b.to_string())
            })
            .collect()
    };
    let want_pr = run("pr");
    assert_eq!(ids.len(), want_pr.len(), "one row per existing vertex");
    for (v, x) in &want_pr {
        let want: f64 = x.parse().unwrap();
        assert!((pr[v] - want).abs() <= 1e-15 * want.abs(), "pr of {v}");
    }
    for (v, x) in run("wcc") {
        assert_eq!(wcc[&v].to_string(), x, "wcc of {v}");
    }
    // Degrees: counted from the text export (both directions listed once when undirected).
    let undirected = !meta["directed"].as_bool().unwrap();
    let (mut o, mut n) = (BTreeMap::new(), BTreeMap::new());
    for &(x, y) in got.keys() {
        *o.entry(x).or_insert(0u64) += 1;
        *n.entry(y).or_insert(0u64) += 1;
        if undirected && x != y {
            *o.entry(y).or_insert(0u64) += 1;
            *n.entry(x).or_insert(0u64) += 1;
        }
    }
    for v in &ids {
        assert_eq!(outd[v], o.get(v).copied().unwrap_or(0), "out-degree of {v}");
        assert_eq!(ind[v], n.get(v).copied().unwrap_or(0), "in-degree of {v}");
    }
}

#[test]
fn parquet_tables_are_the_graph() {
    let dir = tempfile::tempdir().unwrap();
    let input = "1 2\n2 3\n3 1\n3 4\n4 5\n5 6\n6 4\n7 8\n8 9\n9 7\n10 11\n11 12\n1 12\n";
    check_store(dir.path(), input, &[], "- 7 8\n- 11\n");
    let dir = tempfile::tempdir().unwrap();
    check_store(dir.path(), input, &["--undirected"], "- 3\n");
    let dir = tempfile::tempdir().unwrap();
    let weighted = "1 2 0.5\n2 3 1.5\n3 1 2\n3 4 7\n4 5 1\n5 1 3\n6 2 4\n";
    check_store(dir.path(), weighted, &[], "- 5 1\n");
}

/// Ids are `int64` (what Spark reads as `long`) when every id fits, `uint64` otherwise;
/// degrees are always `int64`.
#[test]
fn ids_are_int64_when_they_fit_and_uint64_otherwise() {
    use arrow_schema::DataType;
    let dir = tempfile::tempdir().unwrap();
    for (name, input, want) in [
        ("small", "1 2\n2 3\n", DataType::Int64),
        ("huge", "1 18446744073709551615\n", DataType::UInt64),
    ] {
        let store = dir.path().join(name);
        let el = dir.path().join(format!("{name}.el"));
        std::fs::write(&el, input).unwrap();
        ok(&["ingest", store.to_str().unwrap(), el.to_str().unwrap()]);
        let out = dir.path().join(format!("{name}-pq"));
        ok(&[
            "export",
            store.to_str().unwrap(),
            "--format",
            "parquet",
            out.to_str().unwrap(),
        ]);
        let v = read_table(&out.join("vertices"));
        let e = read_table(&out.join("edges"));
        assert_eq!(column_type(&v[0], "id"), want, "{name}");
        assert_eq!(column_type(&e[0], "src"), want, "{name}");
        assert_eq!(column_type(&v[0], "out_degree"), DataType::Int64, "{name}");
        let mut ids: Vec<u64> = v.iter().flat_map(|b| u64s(b, "id")).collect();
        ids.sort_unstable();
        let want_ids: Vec<u64> = match name {
            "small" => vec![1, 2, 3],
            _ => vec![1, u64::MAX],
        };
        assert_eq!(ids, want_ids, "{name}");
    }
}

#[test]
fn bad_parquet_requests_fail_clearly_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let s = store.to_str().unwrap();
    std::fs::write(dir.path().join("g.el"), "1 2\n2 3\n").unwrap();
    ok(&["ingest", s, dir.path().join("g.el").to_str().unwrap()]);
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep.txt"), "mine").unwrap();
    let f = full.to_str().unwrap();
    let fresh = dir.path().join("fresh");
    let fr = fresh.to_str().unwrap();
    for (args, msg) in [
        (
            vec!["export", s, "--format", "parquet"],
            "needs an output directory",
        ),
        (vec!["export", s, "--format", "parquet", f], "is not empty"),
        (vec!["export", s, "out"], "takes no OUT"),
        (vec!["export", s, "--format", "csv"], "invalid value 'csv'"),
        (
            vec!["export", s, "--format", "parquet", fr, "--kernels", "bfs"],
            "needs a source",
        ),
        (
            vec!["export", s, "--format", "parquet", fr, "--kernels", "tc"],
            "no value per vertex",
        ),
        (
            vec!["export", s, "--format", "parquet", fr, "--kernels", "nope"],
            "unknown kernel",
        ),
    ] {
        let out = evograph(&args);
        assert_no_panic(&out, &format!("{args:?}"));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string(full.join("keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&full).unwrap().count(), 1);
    assert!(!fresh.join("evograph.json").exists());
}

fn strings(b: &RecordBatch, name: &str) -> Vec<String> {
    let c = b.column_by_name(name).unwrap();
    let a = c
        .as_any()
        .downcast_ref::<arrow_array::LargeStringArray>()
        .unwrap_or_else(|| panic!("{name} is {:?}, not large_utf8", c.data_type()));
    (0..a.len()).map(|i| a.value(i).to_string()).collect()
}

/// A store keyed by names exports names: the id, src and dst columns and the label
/// column are strings equal to what `export` prints and `run wcc` computes.
#[test]
fn string_keys_export_as_string_columns() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("deps.tsv");
    let lines: Vec<String> = (0..300)
        .map(|i| format!("pkg-{}\tlib-ü{}", i % 97, (i * 7) % 41))
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let s = d.path().join("s");
    let s = s.to_str().unwrap();
    ok(&["ingest", s, input.to_str().unwrap(), "--keys", "string"]);
    let ops = d.path().join("del.ops");
    std::fs::write(&ops, "- pkg-3\n- pkg-5 lib-ü35\n").unwrap();
    ok(&["ingest", s, ops.to_str().unwrap()]);
    let out = d.path().join("pq");
    ok(&[
        "export",
        s,
        "--format",
        "parquet",
        out.to_str().unwrap(),
        "--kernels",
        "wcc,pr",
        "--rows-per-file",
        "40",
        "--row-group",
        "16",
    ]);
    let meta = std::fs::read_to_string(out.join("evograph.json")).unwrap();
    assert!(meta.contains("\"keys\": \"string\""), "{meta}");

    let mut edges: Vec<String> = Vec::new();
    for b in read_table(&out.join("edges")) {
        let (src, dst) = (strings(&b, "src"), strings(&b, "dst"));
        edges.extend(src.iter().zip(&dst).map(|(a, b)| format!("{a}\t{b}")));
    }
    edges.sort();
    let text: Vec<String> = ok(&["export", s]).lines().map(String::from).collect();
    assert_eq!(edges, text);
    assert!(!edges.iter().any(|e| e.starts_with("pkg-3\t")));

    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    for b in read_table(&out.join("vertices")) {
        labels.extend(strings(&b, "id").into_iter().zip(strings(&b, "wcc")));
    }
    let run: BTreeMap<String, String> = ok(&["run", s, "wcc"])
        .lines()
        .map(|l| {
            let (a, b) = l.split_once('\t').unwrap();
            (a.to_string(), b.to_string())
        })
        .collect();
    assert_eq!(labels, run);
    // gap-bfs parents are names, and null where no parent was reached (not a panic).
    let out2 = d.path().join("pq2");
    ok(&[
        "export",
        s,
        "--format",
        "parquet",
        out2.to_str().unwrap(),
        "--kernels",
        "gap-bfs",
    ]);
    let mut nulls = 0;
    for b in read_table(&out2.join("vertices")) {
        let c = b.column_by_name("gap_bfs").unwrap();
        nulls += c.null_count();
        assert!(c
            .as_any()
            .downcast_ref::<arrow_array::LargeStringArray>()
            .is_some());
    }
    assert!(
        nulls > 0,
        "some vertex has no parent (pkg-3 is deleted, lib-ü* have no out-edges)"
    );
    assert!(row_groups(&out.join("vertices")) > 3);
}
