//! Stores keyed by names from the command line: ingest of edge lists and ops streams with
//! names, kernels and exports that print names, the store remembering its kind, and clear
//! refusals where names and integers meet.

mod common;

use common::{assert_no_panic, evograph};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn ok(args: &[&str]) -> String {
    let out = evograph(args);
    assert_no_panic(&out, &format!("{args:?}"));
    assert!(
        out.status.success(),
        "evograph {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a command that must fail with exit 2, returning its stderr.
fn refused(args: &[&str]) -> String {
    let out = evograph(args);
    assert_no_panic(&out, &format!("{args:?}"));
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

/// `name<TAB>value` lines of `evograph run` as a map.
fn values(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .map(|l| {
            let (k, v) = l.split_once('\t').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

const DEPS: &str = "# package\tdependency\n\
python3\tlibc6\n\
python3\tzlib1g\n\
zlib1g\tlibc6\n\
curl\tlibcurl4\n\
libcurl4\tlibc6\n\
libcurl4\tzlib1g\n\
名前\tlibc6\n\
lonely\tisland\n";

fn ingest_deps(dir: &Path) -> String {
    let input = dir.join("deps.tsv");
    std::fs::write(&input, DEPS).unwrap();
    let store = dir.join("s").to_str().unwrap().to_string();
    ok(&[
        "ingest",
        &store,
        input.to_str().unwrap(),
        "--keys",
        "string",
    ]);
    store
}

#[test]
fn kernels_and_exports_speak_names() {
    let d = tempfile::tempdir().unwrap();
    let s = ingest_deps(d.path());
    assert!(ok(&["stats", &s]).contains("keys            string"));
    assert!(ok(&["check", &s]).starts_with("sound"));

    let wcc = values(&ok(&["run", &s, "wcc"]));
    let names: Vec<&str> = wcc.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["curl", "island", "libc6", "libcurl4", "lonely", "python3", "zlib1g", "名前"],
        "one line per vertex, sorted by name"
    );
    // Labels are names of members: two components.
    let comps: BTreeSet<&str> = wcc.values().map(String::as_str).collect();
    assert_eq!(comps.len(), 2);
    assert!(comps.iter().all(|c| wcc.contains_key(*c)));
    assert_eq!(wcc["lonely"], wcc["island"]);
    assert_ne!(wcc["lonely"], wcc["curl"]);

    let bfs = values(&ok(&["run", &s, "bfs", "--source", "curl"]));
    assert_eq!(bfs["curl"], "0");
    assert_eq!(bfs["libcurl4"], "1");
    assert_eq!(bfs["libc6"], "2");
    assert_eq!(bfs["python3"], i64::MAX.to_string());
    let parents = values(&ok(&["run", &s, "gap-bfs", "--source", "curl"]));
    assert_eq!(parents["libc6"], "libcurl4");
    assert_eq!(parents["curl"], "curl");
    assert_eq!(parents["python3"], "-1");
    let bc = ok(&[
        "run",
        &s,
        "bc",
        "--source",
        "名前",
        "--samples",
        "1",
        "--json",
    ]);
    assert!(bc.contains("\"sources\":[\"名前\"]"), "{bc}");
    let e = refused(&["run", &s, "bfs", "--source", "nope"]);
    assert!(e.contains("vertex nope is not in the graph"), "{e}");

    // The text export is tab-separated names, and reads back into an equal store.
    let text = ok(&["export", &s]);
    assert!(text.contains("python3\tlibc6\n"), "{text}");
    assert_eq!(text.lines().count(), 8);
    let again = d.path().join("again.tsv");
    std::fs::write(&again, &text).unwrap();
    let s2 = d.path().join("s2");
    let s2 = s2.to_str().unwrap();
    ok(&["ingest", s2, again.to_str().unwrap(), "--keys", "string"]);
    assert_eq!(ok(&["export", s2]), text);
}

#[test]
fn ops_streams_and_later_ingests_use_the_stores_names() {
    let d = tempfile::tempdir().unwrap();
    let s = ingest_deps(d.path());
    let ops = d.path().join("u.ops");
    std::fs::write(
        &ops,
        "+ curl python3\n- curl libcurl4\n- nobody python3\n- ghost\n+ new-pkg\n- zlib1g\n",
    )
    .unwrap();
    // No --keys: the store says it takes names.
    ok(&["ingest", &s, ops.to_str().unwrap()]);
    let text = ok(&["export", &s]);
    let edges: BTreeSet<&str> = text.lines().collect();
    let want: BTreeSet<&str> = [
        "curl\tpython3",
        "libcurl4\tlibc6",
        "lonely\tisland",
        "python3\tlibc6",
        "名前\tlibc6",
    ]
    .into();
    assert_eq!(edges, want);
    let wcc = values(&ok(&["run", &s, "wcc"]));
    assert!(wcc.contains_key("new-pkg"));
    assert!(!wcc.contains_key("zlib1g"), "deleted");
    assert!(!wcc.contains_key("nobody") && !wcc.contains_key("ghost"));
}

#[test]
fn names_and_integers_refuse_each_other_clearly() {
    let d = tempfile::tempdir().unwrap();
    let s = ingest_deps(d.path());
    let ints = d.path().join("ints.el");
    std::fs::write(&ints, "1 2\n").unwrap();
    let before = ok(&["export", &s]);
    let e = refused(&["ingest", &s, ints.to_str().unwrap(), "--keys", "u64"]);
    assert!(e.contains("keyed by string names"), "{e}");
    assert_eq!(
        ok(&["export", &s]),
        before,
        "a refused ingest changes nothing"
    );

    // Names into a store of integers: the message says how to make one that takes names.
    let is = d.path().join("is");
    let is = is.to_str().unwrap();
    ok(&["ingest", is, ints.to_str().unwrap()]);
    let named = d.path().join("n.tsv");
    std::fs::write(&named, "a\tb\n").unwrap();
    let e = refused(&["ingest", is, named.to_str().unwrap()]);
    assert!(e.contains("--keys string"), "{e}");
    let e = refused(&["run", is, "bfs", "--source", "a"]);
    assert!(e.contains("not a vertex id"), "{e}");

    // Formats whose vertices are numbers cannot carry names, and nothing is created.
    let bin = d.path().join("g.bin");
    std::fs::write(&bin, [0u8; 8]).unwrap();
    let fresh = d.path().join("fresh");
    let e = refused(&[
        "ingest",
        fresh.to_str().unwrap(),
        bin.to_str().unwrap(),
        "--keys",
        "string",
    ]);
    assert!(e.contains("not from bin input"), "{e}");
    assert!(!fresh.exists());
    let e = refused(&["ingest", is, ints.to_str().unwrap(), "--keys", "text"]);
    assert!(e.contains("want u64 or string"), "{e}");
}

#[test]
fn names_with_spaces_travel_through_csv_and_tab_exports() {
    let d = tempfile::tempdir().unwrap();
    let csv = d.path().join("people.csv");
    std::fs::write(
        &csv,
        "from,to,weight\nAda Lovelace,Charles Babbage,2.5\nCharles Babbage,Ada Lovelace,1\n",
    )
    .unwrap();
    let s = d.path().join("s");
    let s = s.to_str().unwrap();
    ok(&[
        "ingest",
        s,
        csv.to_str().unwrap(),
        "--keys",
        "string",
        "--header",
    ]);
    let text = ok(&["export", s]);
    assert_eq!(
        text,
        "Ada Lovelace\tCharles Babbage\t2.5\nCharles Babbage\tAda Lovelace\t1\n"
    );
    let tsv = d.path().join("back.tsv");
    std::fs::write(&tsv, &text).unwrap();
    let s2 = d.path().join("s2");
    let s2 = s2.to_str().unwrap();
    ok(&[
        "ingest",
        s2,
        tsv.to_str().unwrap(),
        "--keys",
        "string",
        "--delimiter",
        "\\t",
    ]);
    assert_eq!(ok(&["export", s2]), text);
    let sssp = values(&ok(&["run", s2, "sssp", "--source", "Ada Lovelace"]));
    assert_eq!(sssp["Charles Babbage"], "2.500000000000000e+00");
    assert_eq!(sssp["Ada Lovelace"], "0.000000000000000e+00");
}

#[test]
fn an_undirected_store_of_names_lists_each_edge_once_smaller_name_first() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("u.tsv");
    std::fs::write(&input, "zeta\talpha\nmid\tzeta\nalpha\tmid\nmid\tmid\n").unwrap();
    let s = d.path().join("s");
    let s = s.to_str().unwrap();
    ok(&[
        "ingest",
        s,
        input.to_str().unwrap(),
        "--keys",
        "string",
        "--undirected",
    ]);
    assert_eq!(
        ok(&["export", s]),
        "alpha\tmid\nalpha\tzeta\nmid\tmid\nmid\tzeta\n"
    );
    let tc = ok(&["run", s, "tc"]);
    assert_eq!(tc.trim(), "1");
}

#[test]
fn hashtags_are_names_and_lone_hashes_are_comments() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("tags.tsv");
    std::fs::write(
        &input,
        "# hashtag co-occurrence\n#rust\t#python\n#\talso a comment\n%d\tformat\n#python\t%d\n",
    )
    .unwrap();
    let s = d.path().join("s");
    let s = s.to_str().unwrap();
    ok(&["ingest", s, input.to_str().unwrap(), "--keys", "string"]);
    let text = ok(&["export", s]);
    assert_eq!(text, "#python\t%d\n#rust\t#python\n%d\tformat\n");
    // The export reads back whole.
    let back = d.path().join("back.tsv");
    std::fs::write(&back, &text).unwrap();
    let s2 = d.path().join("s2");
    let s2 = s2.to_str().unwrap();
    ok(&["ingest", s2, back.to_str().unwrap(), "--keys", "string"]);
    assert_eq!(ok(&["export", s2]), text);

    // An update stream taken for an edge list is refused, not read as vertices "+" and "-".
    let ops = d.path().join("v.txt");
    std::fs::write(&ops, "+ alpha\n+ beta\n- alpha\n").unwrap();
    let fresh = d.path().join("fresh");
    let e = refused(&[
        "ingest",
        fresh.to_str().unwrap(),
        ops.to_str().unwrap(),
        "--keys",
        "string",
    ]);
    assert!(e.contains("--format ops"), "{e}");
    assert!(!fresh.exists());
}
