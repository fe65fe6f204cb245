//! Imports flow down the layers: every `crate::…` a layer's code names is a module that
//! ARCHITECTURE.md's layer table lets it import. The table is read from the document, so
//! the rule and its statement cannot drift apart.
//!
//! Test code is exempt (a layer's tests may build their inputs with the layers above):
//! files named `tests.rs`, `*_tests.rs` or `testkit.rs`, and whatever follows a
//! `#[cfg(test)]` in a file. Comments and doc comments are not code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What the crate root re-exports, by the module that defines it.
const ROOT_NAMES: &[(&str, &str)] = &[
    ("Error", "error"),
    ("Result", "error"),
    ("GraphView", "snapshot"),
    ("Snapshot", "snapshot"),
    ("Key", "snapshot"),
    ("with_view", "snapshot"),
    ("Graph", "store"),
    ("Options", "store"),
    ("Compression", "run"),
    ("Verify", "run"),
    ("Durability", "types"),
    ("Record", "types"),
    ("VertexId", "types"),
    ("KeyKind", "keys"),
    ("Names", "keys"),
    ("check_name", "keys"),
    ("MAX_NAME_BYTES", "keys"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The layer table of ARCHITECTURE.md: each layer and the layers it may import.
fn allowed() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = doc
        .find("<!-- layers: begin")
        .expect("the layer table's start marker");
    let end = doc
        .find("<!-- layers: end")
        .expect("the layer table's end marker");
    let mut table = BTreeMap::new();
    for line in doc[start..end].lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let names = |s: &str| -> BTreeSet<String> {
            s.split_whitespace()
                .map(|w| w.trim_matches('`').to_string())
                .collect()
        };
        let layer = cells[1].trim_matches('`').to_string();
        table.insert(layer, names(cells[2]));
    }
    assert!(table.len() > 10, "the layer table has {} rows", table.len());
    table
}

/// The source files of the library, but `lib.rs`, with the layer each belongs to.
fn sources() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root().join("src")).unwrap();
                let first = rel.components().next().unwrap().as_os_str();
                let layer = first.to_string_lossy().trim_end_matches(".rs").to_string();
                if layer != "lib" {
                    out.push((layer, p));
                }
            }
        }
    }
    out.sort();
    out
}

fn is_test_file(p: &Path) -> bool {
    let name = p.file_name().unwrap().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs") || name == "testkit.rs"
}

/// The code of a file: comments dropped, and what follows `#[cfg(test)]` (a test module
/// declared on the next line, or the rest of the file for an inline one).
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            match lines.next() {
                Some(next) if next.trim_end().ends_with(';') => continue,
                _ => break,
            }
        }
        if t.starts_with("//") {
            continue;
        }
        let code = match line.find("//") {
            // A `//` inside a string is kept: no layer path contains one.
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The modules named by `crate::` paths in `code`: `crate::x::…`, `crate::X` (a root
/// re-export) and the groups of `use crate::{…}`.
fn named_modules(code: &str) -> BTreeSet<String> {
    let modules: BTreeSet<String> = allowed().into_keys().collect();
    let resolve = |name: &str| -> Option<String> {
        if modules.contains(name) {
            return Some(name.to_string());
        }
        ROOT_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| m.to_string())
    };
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: the first identifier of each comma part.
            let mut depth = 0;
            let mut part_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => part_start = true,
                    c if part_start && (c.is_alphanumeric() || c == '_') => {
                        let id: String = group[j..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        out.extend(resolve(&id));
                        part_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let id: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.extend(resolve(&id));
        }
    }
    out
}

#[test]
fn every_layer_imports_only_the_layers_below_it() {
    let table = allowed();
    let mut problems = Vec::new();
    for (layer, path) in sources() {
        let Some(may) = table.get(&layer) else {
            problems.push(format!(
                "{}: layer `{layer}` is not in ARCHITECTURE.md's table",
                path.display()
            ));
            continue;
        };
        if is_test_file(&path) {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(&path).unwrap());
        for m in named_modules(&code) {
            if m != layer && !may.contains(&m) {
                problems.push(format!(
                    "{}: `{layer}` imports `{m}`, which the layer table does not allow",
                    path.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_layer_table_is_acyclic() {
    let table = allowed();
    // Kahn's algorithm: repeatedly take the layers whose imports are all taken.
    let mut left: BTreeMap<&String, &BTreeSet<String>> = table.iter().collect();
    while !left.is_empty() {
        let ready: Vec<&String> = left
            .iter()
            .filter(|(_, deps)| deps.iter().all(|d| !left.contains_key(d)))
            .map(|(l, _)| *l)
            .collect();
        assert!(
            !ready.is_empty(),
            "the layer table has a cycle among {:?}",
            left.keys()
        );
        for l in ready {
            left.remove(l);
        }
    }
    for (layer, deps) in &table {
        for d in deps {
            assert!(
                table.contains_key(d),
                "`{layer}` may import `{d}`, which is no layer"
            );
        }
    }
}

#[test]
fn the_checker_sees_the_imports_it_must() {
    let code = code_of(
        "use crate::run::{self, Run};\n// use crate::store::Graph;\nuse crate::{Error, GraphView, wal::Wal};\nfn f() { crate::dict::FILE }\n#[cfg(test)]\nmod tests { use crate::io::X; }\n",
    );
    let got: Vec<String> = named_modules(&code).into_iter().collect();
    assert_eq!(got, ["dict", "error", "run", "snapshot", "wal"]);
}
