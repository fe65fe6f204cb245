//! `evograph bench --memory-limit BYTES`: the out-of-DRAM protocol.
//!
//! The standard protocol keeps the edge list and a plain CSR in the bench's own DRAM, which
//! is what a memory cap is meant to deny. So under a cap the bench writes the shuffled
//! edges to `edges.bin`, lets them go, and runs the user's commands as child processes:
//! `evograph ingest` of that file into a fresh store, then `evograph run` of each kernel,
//! once in a memory cgroup without a limit and once in one limited to BYTES, and reports
//! each step's time (start to exit), the cgroup's peak charge (page cache included), the
//! child's peak RSS and major page faults, and capped over uncapped ratios.
//!
//! Needs root (it creates cgroups under `/sys/fs/cgroup`); cgroup v1 (the `memory`
//! hierarchy) and v2 are both handled.

use super::{invalid, io_err, Args};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Kernels of the capped protocol when `--kernels all`: a sequential sweep (PageRank),
/// label propagation over all edges (CC, WCC), and random access (BFS).
const DEFAULT_KERNELS: &[&str] = &["gap-pr", "gap-cc", "gap-bfs", "pr", "wcc"];

/// Kernels that `evograph run` refuses without `--source`.
const NEEDS_SOURCE: &[&str] = &["bfs", "sssp", "pregel-bfs", "pregel-sssp"];

/// The source of the first edge in the binary edge file: a vertex with an out-edge, the
/// root the source-taking kernels start from.
fn first_source(edges: &Path) -> evograph::Result<u32> {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(edges)
        .and_then(|mut f| f.read_exact(&mut head))
        .map_err(|e| io_err("read", edges, e))?;
    Ok(u32::from_le_bytes(head[..4].try_into().expect("4 bytes")))
}

/// A memory cgroup that this bench created and removes when dropped.
struct Cgroup {
    dir: PathBuf,
    v2: bool,
}

impl Cgroup {
    /// Creates `evograph-bench-PID-NAME` under the memory hierarchy, limited to `limit` bytes (swap included on v1
    /// when the kernel accounts it) or unlimited.
    fn create(name: &str, limit: Option<u64>) -> evograph::Result<Cgroup> {
        let v2 = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
        let root = if v2 {
            PathBuf::from("/sys/fs/cgroup")
        } else {
            PathBuf::from("/sys/fs/cgroup/memory")
        };
        if !root.is_dir() {
            return Err(invalid(
                "--memory-limit needs a memory cgroup hierarchy (/sys/fs/cgroup/memory or cgroup v2)",
            ));
        }
        let dir = root.join(format!("evograph-bench-{}-{name}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| {
            invalid(format!(
                "cannot create the cgroup {} ({e}): --memory-limit needs root",
                dir.display()
            ))
        })?;
        let cg = Cgroup { dir, v2 };
        if let Some(l) = limit {
            let file = if v2 {
                "memory.max"
            } else {
                "memory.limit_in_bytes"
            };
            cg.write(file, &l.to_string())?;
            if v2 {
                // The cap is on DRAM: no swapping around it.
                let _ = cg.write("memory.swap.max", "0");
            }
        }
        Ok(cg)
    }

    fn write(&self, file: &str, value: &str) -> evograph::Result<()> {
        let p = self.dir.join(file);
        std::fs::write(&p, value).map_err(|e| io_err("write", &p, e))
    }

    fn read_u64(&self, file: &str) -> Option<u64> {
        std::fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Peak bytes charged to the cgroup (anonymous memory and page cache), if the kernel
    /// reports it (v2 before Linux 5.19 does not).
    fn peak(&self) -> Option<u64> {
        if self.v2 {
            self.read_u64("memory.peak")
        } else {
            self.read_u64("memory.max_usage_in_bytes")
        }
    }

    /// Starts a new peak from the current charge, where the kernel allows it (v1 always;
    /// v2 since Linux 6.12); otherwise the peak covers the leg so far.
    fn reset_peak(&self) {
        let file = if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        };
        let _ = std::fs::write(self.dir.join(file), "0");
    }

    /// Times the OOM killer fired in this cgroup.
    fn oom_kills(&self) -> u64 {
        let file = if self.v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        std::fs::read_to_string(self.dir.join(file))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Runs `exe args` inside the cgroup (a shell moves itself in, then execs the
    /// command), its output kept in files under `logs`, and reaps it with `wait4` for its
    /// own resource usage.
    fn run(&self, exe: &Path, args: &[String], logs: &Path) -> evograph::Result<Step> {
        let procs = self.dir.join("cgroup.procs");
        let (out_path, err_path) = (logs.join("step.out"), logs.join("step.err"));
        let file = |p: &Path| std::fs::File::create(p).map_err(|e| io_err("create", p, e));
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(&procs)
            .arg(exe)
            .args(args)
            .stdout(file(&out_path)?)
            .stderr(file(&err_path)?);
        let t = Instant::now();
        let child = cmd.spawn().map_err(|e| io_err("start", exe, e))?;
        let mut status = 0;
        // SAFETY: rusage is plain data, zero is a valid value of it.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 fills `status` and `ru` for our own child, which std never waits
        // for afterwards (the Child handle is dropped unwaited).
        let r = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
        let seconds = t.elapsed().as_secs_f64();
        if r < 0 {
            return Err(io_err("wait for", exe, std::io::Error::last_os_error()));
        }
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        Ok(Step {
            seconds,
            ok: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            stdout: read(&out_path),
            stderr: read(&err_path),
            max_rss: ru.ru_maxrss as u64 * 1024,
            major_faults: ru.ru_majflt as u64,
        })
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Empty once its processes exited; v1 moves the remaining page-cache charge to
        // the parent on removal.
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// One child command's outcome.
struct Step {
    seconds: f64,
    ok: bool,
    stdout: String,
    stderr: String,
    /// Peak RSS, mapped file pages included.
    max_rss: u64,
    major_faults: u64,
}

/// Runs the capped protocol; `edges` is the file of shuffled edges already written.
pub(super) fn run(a: &Args, limit: u64, dir: &Path, edges: &Path) -> evograph::Result<Value> {
    let exe = std::env::current_exe().map_err(|e| io_err("find", Path::new("evograph"), e))?;
    let source = first_source(edges)?;
    let mut legs = serde_json::Map::new();
    for (leg, cap) in [("uncapped", None), ("capped", Some(limit))] {
        eprintln!("bench: {leg} leg");
        let store = dir.join(format!("store-{leg}"));
        let _ = std::fs::remove_dir_all(&store);
        let mut figures = serde_json::Map::new();
        // One cgroup for the whole leg: the page cache that ingest fills stays charged to
        // it, so the kernels after it run under the cap too (pages charged to a removed
        // cgroup move to its parent, out of the cap's reach).
        let cg = Cgroup::create(leg, cap)?;
        for (name, args) in steps(a, &store, edges, source) {
            cg.reset_peak();
            let s = cg.run(&exe, &args, dir)?;
            if !s.ok {
                let killed = match cg.oom_kills() {
                    0 => "",
                    _ => " (killed for memory)",
                };
                let why = s.stderr.trim();
                return Err(invalid(format!(
                    "the {leg} {name} step failed{killed}: {why}"
                )));
            }
            figures.insert(name.clone(), step_figures(leg, &name, &s, &cg));
        }
        figures.insert(
            "store_bytes".into(),
            json!(super::dir_bytes(&store).map_or(0, |(n, _)| n)),
        );
        legs.insert(leg.into(), Value::Object(figures));
        let _ = std::fs::remove_dir_all(&store);
        drop(cg);
    }
    Ok(json!({ "limit_bytes": limit, "legs": legs }))
}

/// A leg's steps, each a name and the command line's arguments: the ingest of `edges`
/// into `store`, then every kernel asked for (from `source` where one is needed).
fn steps(a: &Args, store: &Path, edges: &Path, source: u32) -> Vec<(String, Vec<String>)> {
    let kernels: Vec<String> = if a.kernels == "all" {
        DEFAULT_KERNELS.iter().map(|s| s.to_string()).collect()
    } else {
        a.kernels.split(',').map(|s| s.trim().to_string()).collect()
    };
    let ingest = vec![
        "ingest".to_string(),
        store.display().to_string(),
        edges.display().to_string(),
        "--format=bin".into(),
        format!("--durability={}", a.durability),
        format!("--threads={}", a.threads),
        format!("--memtable-mb={}", a.memtable_mb),
        format!("--batch={}", a.batch),
    ];
    let mut steps = vec![("ingest".to_string(), ingest)];
    for k in &kernels {
        let mut run = vec![
            "run".into(),
            store.display().to_string(),
            k.clone(),
            "--json".into(),
            "--output=/dev/null".into(),
            format!("--threads={}", a.threads),
        ];
        if NEEDS_SOURCE.contains(&k.as_str()) {
            run.push(format!("--source={source}"));
        }
        steps.push((format!("kernels.{k}"), run));
    }
    steps
}

/// What a leg records of one step that ran in `cg`, said on stderr as well.
fn step_figures(leg: &str, name: &str, s: &Step, cg: &Cgroup) -> Value {
    let kernel_seconds = serde_json::from_str::<Value>(s.stdout.trim())
        .ok()
        .and_then(|j| j["seconds"].as_f64());
    eprintln!(
        "bench: {leg} {name}: {:.2} s, peak {} MiB",
        s.seconds,
        cg.peak().map_or("?".into(), |p| (p >> 20).to_string())
    );
    json!({
        "seconds": s.seconds,
        "kernel_seconds": kernel_seconds,
        "cgroup_peak_bytes": cg.peak(),
        "peak_rss_bytes": s.max_rss,
        "major_faults": s.major_faults,
    })
}

/// The text table: each step's time, capped over uncapped, and the memory figures.
pub(super) fn table(j: &Value) -> String {
    let mib = |v: &Value| {
        v.as_u64()
            .map_or("-".to_string(), |b| (b >> 20).to_string())
    };
    let (u, c) = (&j["legs"]["uncapped"], &j["legs"]["capped"]);
    let mut out = format!(
        "memory limit {} MiB; store at rest {} MiB (uncapped); seconds from start to exit; peak\ncharge of the step's cgroup (page cache included), peak RSS (mapped run pages included)\n  {:<16} {:>9} {:>9} {:>6} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
        mib(&j["limit_bytes"]),
        mib(&u["store_bytes"]),
        "step",
        "uncapped",
        "capped",
        "ratio",
        "charge u",
        "charge c",
        "rss u",
        "rss c",
        "majflt c"
    );
    let steps = u
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, v)| v.is_object());
    for (name, uv) in steps {
        let cv = &c[name];
        let (us, cs) = (uv["seconds"].as_f64(), cv["seconds"].as_f64());
        let ratio = match (us, cs) {
            (Some(a), Some(b)) if a > 0.0 => format!("{:.2}", b / a),
            _ => "-".into(),
        };
        out.push_str(&format!(
            "  {name:<16} {:>9} {:>9} {ratio:>6} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
            us.map_or("-".into(), |s| format!("{s:.2}")),
            cs.map_or("-".into(), |s| format!("{s:.2}")),
            mib(&uv["cgroup_peak_bytes"]),
            mib(&cv["cgroup_peak_bytes"]),
            mib(&uv["peak_rss_bytes"]),
            mib(&cv["peak_rss_bytes"]),
            cv["major_faults"].as_u64().unwrap_or(0),
        ));
    }
    out
}
