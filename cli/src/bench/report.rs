//! Figures of one trial, their medians over trials, the terminal table and the JSON file.

use serde_json::{json, Map, Value};

/// The figures one trial measured, by dotted name (`ingest.meps`), in the order taken.
/// `None` is a figure that does not apply (a restart on the memory medium).
#[derive(Default)]
pub struct Trial(Vec<(String, Option<f64>)>);

impl Trial {
    /// Records a figure.
    pub fn set(&mut self, name: impl Into<String>, v: impl Into<Option<f64>>) {
        self.0.push((name.into(), v.into()));
    }

    /// A figure recorded earlier.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(k, _)| k == name).and_then(|(_, v)| *v)
    }
}

/// A figure over all trials: median, and the range it came from.
#[derive(Clone, Copy)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// The median of `xs` (the mean of the middle two for an even count).
pub fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// Every figure's summary over `trials`, in the order the first trial took them.
pub fn summarize(trials: &[Trial]) -> Vec<(String, Option<Summary>)> {
    let Some(first) = trials.first() else {
        return Vec::new();
    };
    first
        .0
        .iter()
        .map(|(k, _)| {
            let xs: Vec<f64> = trials.iter().filter_map(|t| t.get(k)).collect();
            let s = median(&xs).map(|median| Summary {
                median,
                min: xs.iter().copied().fold(f64::INFINITY, f64::min),
                max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            });
            (k.clone(), s)
        })
        .collect()
}

/// Puts `v` at dotted path `key` in a nested object.
fn insert_path(root: &mut Map<String, Value>, key: &str, v: Value) {
    let mut parts = key.split('.').peekable();
    let mut obj = root;
    while let Some(p) = parts.next() {
        if parts.peek().is_none() {
            obj.insert(p.to_string(), v);
            return;
        }
        let entry = obj
            .entry(p.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        obj = entry.as_object_mut().expect("just made an object");
    }
}

/// The medians as nested JSON, plus every trial's raw figures under `trials_raw`.
pub fn to_json(summary: &[(String, Option<Summary>)], trials: &[Trial], head: Value) -> Value {
    let mut root = match head {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    for (k, s) in summary {
        insert_path(&mut root, k, s.map_or(Value::Null, |s| json!(s.median)));
    }
    let raw: Vec<Value> = trials
        .iter()
        .map(|t| {
            let mut m = Map::new();
            for (k, v) in &t.0 {
                insert_path(&mut m, k, v.map_or(Value::Null, |x| json!(x)));
            }
            Value::Object(m)
        })
        .collect();
    root.insert("trials_raw".into(), Value::Array(raw));
    Value::Object(root)
}

/// A number in a table cell: few digits for large values, more for small ones.
pub fn fmt(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{x:.3e}")
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else if a >= 0.01 {
        format!("{x:.4}")
    } else {
        format!("{x:.2e}")
    }
}

/// The readable table: kernels as rows of a grid, every other figure on its own line with
/// its median and, over several trials, the range.
pub fn table(summary: &[(String, Option<Summary>)], trials: usize) -> String {
    let mut out = String::new();
    let cell = |s: Option<Summary>| s.map_or("-".to_string(), |s| fmt(s.median));
    let ratio = |s: Option<Summary>| s.map_or("-".to_string(), |s| format!("{:.2}", s.median));
    let mut kernels: Vec<&str> = Vec::new();
    for (k, _) in summary {
        if let Some(name) = k.strip_prefix("kernels.").and_then(|r| r.split('.').next()) {
            if !kernels.contains(&name) {
                kernels.push(name);
            }
        }
    }
    let find = |k: &str| summary.iter().find(|(n, _)| n == k).and_then(|(_, s)| *s);
    let mut sections: Vec<&str> = Vec::new();
    for (k, _) in summary {
        let sec = k.split('.').next().unwrap_or("");
        if sec != "kernels" && sec != "pregel" && !sections.contains(&sec) {
            sections.push(sec);
        }
    }
    for sec in sections {
        out.push_str(&format!("\n{sec}\n"));
        for (k, s) in summary
            .iter()
            .filter(|(k, _)| k.split('.').next() == Some(sec))
        {
            let range = match s {
                Some(s) if trials > 1 && s.min != s.max => {
                    format!("   [{} .. {}]", fmt(s.min), fmt(s.max))
                }
                _ => String::new(),
            };
            let name = &k[sec.len() + 1..];
            out.push_str(&format!("  {name:<28} {:>12}{range}\n", cell(*s)));
        }
    }
    if !kernels.is_empty() {
        out.push_str(&format!(
            "\nkernels (seconds; ratios against a plain CSR of the same edges; del: the live snapshot \
             after 4% deletes, 10% del: after 10% more, unflushed)\n  {:<10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>8} {:>8}\n",
            "kernel", "live", "compacted", "csr", "live/csr", "comp/csr", "del", "10% del"
        ));
        for name in kernels {
            let f = |what: &str| find(&format!("kernels.{name}.{what}"));
            out.push_str(&format!(
                "  {name:<10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>8} {:>8}\n",
                cell(f("live_seconds")),
                cell(f("compacted_seconds")),
                cell(f("csr_seconds")),
                ratio(f("ratio_live")),
                ratio(f("ratio_compacted")),
                ratio(f("ratio_deletes")),
                ratio(f("ratio_unflushed_deletes")),
            ));
        }
    }
    out.push_str(&pregel_grid(summary));
    out
}

/// The Pregel programs as rows: seconds of the program and of the hand-written kernel it
/// matches on the compacted store, their ratio (and on the live snapshot), push and pull.
fn pregel_grid(summary: &[(String, Option<Summary>)]) -> String {
    let mut programs: Vec<&str> = Vec::new();
    for (k, _) in summary {
        if let Some(name) = k.strip_prefix("pregel.").and_then(|r| r.split('.').next()) {
            if !programs.contains(&name) {
                programs.push(name);
            }
        }
    }
    if programs.is_empty() {
        return String::new();
    }
    let find = |k: &str| summary.iter().find(|(n, _)| n == k).and_then(|(_, s)| *s);
    let cell = |s: Option<Summary>| s.map_or("-".to_string(), |s| fmt(s.median));
    let ratio = |s: Option<Summary>| s.map_or("-".to_string(), |s| format!("{:.2}", s.median));
    let mut out = format!(
        "
pregel (seconds on the compacted store; ratios against the hand-written kernel)
  {:<8} {:>9} {:>9} {:>7} {:>7} {:>9} {:>9} {:>9} {:>7}
",
        "program", "pregel", "hand", "ratio", "live", "push", "pull", "push/pull", "GTEPS"
    );
    for name in programs {
        let f = |what: &str| find(&format!("pregel.{name}.{what}"));
        out.push_str(&format!(
            "  {name:<8} {:>9} {:>9} {:>7} {:>7} {:>9} {:>9} {:>9} {:>7}\n",
            cell(f("seconds")),
            cell(f("hand_seconds")),
            ratio(f("ratio")),
            ratio(f("ratio_live")),
            cell(f("push_seconds")),
            cell(f("pull_seconds")),
            ratio(f("push_over_pull")),
            ratio(f("gteps")),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_nesting() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        let mut a = Trial::default();
        a.set("ingest.meps", 10.0);
        a.set("restart.crash_seconds", None);
        a.set("kernels.bfs.live_seconds", 1.0);
        let mut b = Trial::default();
        b.set("ingest.meps", 14.0);
        b.set("restart.crash_seconds", None);
        b.set("kernels.bfs.live_seconds", 3.0);
        let trials = [a, b];
        let s = summarize(&trials);
        let j = to_json(&s, &trials, json!({"params": {"scale": 5}}));
        assert_eq!(j["ingest"]["meps"], json!(12.0));
        assert_eq!(j["restart"]["crash_seconds"], Value::Null);
        assert_eq!(j["kernels"]["bfs"]["live_seconds"], json!(2.0));
        assert_eq!(j["params"]["scale"], json!(5));
        assert_eq!(j["trials_raw"][1]["ingest"]["meps"], json!(14.0));
        let t = table(&s, 2);
        assert!(t.contains("meps") && t.contains("[10.00 .. 14.00]"), "{t}");
        assert!(t.contains("bfs"), "{t}");
    }
}
