//! What the bench reads off the process and the machine: resident memory, cores, memory
//! size, processor, and the source revision it was built from.

use serde_json::json;

/// The revision of the source tree at build time (`-dirty` when it had uncommitted
/// changes to tracked files).
pub const GIT_REVISION: &str = env!("EVOGRAPH_GIT_REVISION");

/// A `kB` field of `/proc/self/status`, in bytes.
fn status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resident set size now.
pub fn rss() -> Option<u64> {
    status_kb("VmRSS:")
}

/// Peak resident set size since the process started or the last [`reset_peak_rss`].
pub fn peak_rss() -> Option<u64> {
    status_kb("VmHWM:")
}

/// Resets the peak RSS to the current RSS (Linux `clear_refs` value 5); false if the
/// kernel refused, in which case the peak covers the whole process lifetime.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Cores, memory and processor of this machine.
pub fn machine() -> serde_json::Value {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|kb| kb * 1024);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string());
    json!({
        "cores": cores,
        "memory_bytes": memory,
        "cpu": cpu,
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
    })
}
