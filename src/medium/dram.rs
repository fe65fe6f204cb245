//! How much DRAM is free: what a reader may spend on copies that speed its kernels up
//! without pushing out the page cache that holds the runs, or the process past its
//! cgroup's limit.

use std::path::{Path, PathBuf};

/// Bytes of DRAM this process can use now: the kernel's estimate of what can be
/// allocated without swapping (`MemAvailable`), or, under memory cgroup limits (v2, or v1's
/// `memory` hierarchy), the least headroom (limit less usage, the inactive page cache
/// counted as free) of the process's cgroup and its ancestors when that is lower. `None` where neither can be read
/// (not Linux).
pub fn available() -> Option<u64> {
    let cgroups = [cgroup_headroom(V2), cgroup_headroom(V1)];
    cgroups.into_iter().chain([mem_available()]).flatten().min()
}

/// `MemAvailable` from `/proc/meminfo`, in bytes.
fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Where one cgroup version keeps memory limits.
struct Hierarchy {
    /// How the process's line in `/proc/self/cgroup` starts (v2), or the controller it
    /// names (v1).
    line: &'static str,
    root: &'static str,
    limit: &'static str,
    usage: &'static str,
    /// The `memory.stat` key of the page cache not used lately, which the kernel reclaims
    /// first: usage less it is what the cgroup cannot give back cheaply.
    inactive_file: &'static str,
}

const V2: Hierarchy = Hierarchy {
    line: "0::",
    root: "/sys/fs/cgroup",
    limit: "memory.max",
    usage: "memory.current",
    inactive_file: "inactive_file",
};

/// v1's `memory` controller (its line is `N:memory:/path`).
const V1: Hierarchy = Hierarchy {
    line: "memory:",
    root: "/sys/fs/cgroup/memory",
    limit: "memory.limit_in_bytes",
    usage: "memory.usage_in_bytes",
    inactive_file: "total_inactive_file",
};

/// The least limit less usage from the process's cgroup up to the root of hierarchy `h`;
/// `None` when no cgroup on the way sets a limit.
fn cgroup_headroom(h: Hierarchy) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = s.lines().find_map(|l| own_path(l, &h))?;
    let root = Path::new(h.root);
    let mut dir: PathBuf = root.join(own.trim_start_matches('/'));
    let mut least: Option<u64> = None;
    // Up to the hierarchy's root included: in a container without a cgroup namespace the
    // limit may sit there.
    while dir.starts_with(root) {
        if let Some(room) = headroom(&dir, &h) {
            least = Some(least.map_or(room, |l| l.min(room)));
        }
        if dir == root || !dir.pop() {
            break;
        }
    }
    least
}

/// The cgroup path in one line of `/proc/self/cgroup` (`ID:CONTROLLERS:PATH`) if it is
/// the line of hierarchy `h`: v2's `0::PATH`, or a v1 line whose controllers (several
/// when co-mounted, `cpu,memory`) include `memory`.
fn own_path<'a>(line: &'a str, h: &Hierarchy) -> Option<&'a str> {
    if h.line == "0::" {
        return line.strip_prefix("0::");
    }
    let mut fields = line.splitn(3, ':');
    let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
    controllers
        .split(',')
        .any(|c| c == "memory")
        .then_some(path)
}

/// Limits at or above this are v1's "no limit" (the largest page-aligned `i64`).
const UNLIMITED: u64 = 1 << 62;

/// One cgroup's headroom, if it sets a limit (v2's `memory.max` is `max` when it does not;
/// v1's limit is then a value near 2^63): its limit less its usage, the inactive page cache
/// not counted as used.
fn headroom(dir: &Path, h: &Hierarchy) -> Option<u64> {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    let max: u64 = read(h.limit)?.trim().parse().ok()?;
    let used: u64 = read(h.usage)?.trim().parse().ok()?;
    let inactive: u64 = read("memory.stat")
        .and_then(|s| stat_value(&s, h.inactive_file))
        .unwrap_or(0);
    (max < UNLIMITED).then(|| max.saturating_sub(used.saturating_sub(inactive)))
}

/// The value of `key` in a `memory.stat` file.
fn stat_value(stat: &str, key: &str) -> Option<u64> {
    stat.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))?
        .trim()
        .parse()
        .ok()
}

/// A zeroed array in its own anonymous mapping: allocation that can fail with an error
/// (a view's copy that does not fit is left out, not an abort), and memory returned to the
/// system when dropped.
///
/// It asks for no huge pages. It did once (a fault per 2 MiB instead of per 4 KiB), but on
/// a VM a huge page whose memory the host has taken back costs far more to fault in than
/// its 512 small pages: 1 GiB touched by two threads took 1.25-1.44 s in huge pages ten
/// seconds after the last large allocation, 0.03 s right after one, and 0.18-0.23 s in
/// small pages either way. A kernel's copy is usually the first large allocation in a
/// while, and the copies are read in order, so small pages cost their walks little.
pub(crate) struct AnonArray<T> {
    map: Option<memmap2::MmapMut>,
    _of: std::marker::PhantomData<T>,
}

impl<T: bytemuck::Pod> AnonArray<T> {
    /// `len` zeroed elements.
    pub(crate) fn zeroed(len: usize) -> std::io::Result<AnonArray<T>> {
        let bytes = len * std::mem::size_of::<T>();
        let map = match bytes {
            0 => None,
            _ => Some(memmap2::MmapMut::map_anon(bytes)?),
        };
        Ok(AnonArray {
            map,
            _of: std::marker::PhantomData,
        })
    }
}

impl<T: bytemuck::Pod> std::ops::Deref for AnonArray<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // A mapping is page-aligned, so any `T` fits its alignment.
        self.map
            .as_ref()
            .map_or(&[], |m| bytemuck::cast_slice(&m[..]))
    }
}

impl<T: bytemuck::Pod> std::ops::DerefMut for AnonArray<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.map
            .as_mut()
            .map_or(&mut [], |m| bytemuck::cast_slice_mut(&mut m[..]))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_anon_array_is_zeroed_and_writable() {
        let mut a = super::AnonArray::<u64>::zeroed(3 << 18).unwrap();
        assert_eq!(a.len(), 3 << 18);
        assert!(a.iter().all(|&x| x == 0));
        a[12345] = 7;
        assert_eq!(a.iter().sum::<u64>(), 7);
        assert!(super::AnonArray::<u32>::zeroed(0).unwrap().is_empty());
    }

    #[test]
    fn the_memory_line_is_found_among_co_mounted_controllers() {
        let own = |l| super::own_path(l, &super::V1);
        assert_eq!(own("4:memory:/a/b"), Some("/a/b"));
        assert_eq!(own("7:cpu,memory:/x"), Some("/x"));
        assert_eq!(own("3:cpuset:/"), None);
        assert_eq!(
            super::own_path("0::/user.slice", &super::V2),
            Some("/user.slice")
        );
        assert_eq!(super::own_path("4:memory:/a", &super::V2), None);
    }

    /// A cgroup's headroom is its limit less what it uses, inactive page cache not
    /// counted; v1's "no limit" and v2's `max` are no limit.
    #[test]
    fn headroom_counts_inactive_page_cache_as_free() {
        let dir = tempfile::tempdir().unwrap();
        let put = |f: &str, v: &str| std::fs::write(dir.path().join(f), v).unwrap();
        put("memory.limit_in_bytes", "1000\n");
        put("memory.usage_in_bytes", "800\n");
        put(
            "memory.stat",
            "cache 500\ninactive_file 9\ntotal_inactive_file 300\n",
        );
        assert_eq!(super::headroom(dir.path(), &super::V1), Some(500));
        put("memory.limit_in_bytes", "9223372036854771712\n");
        assert_eq!(super::headroom(dir.path(), &super::V1), None);
        put("memory.max", "max\n");
        put("memory.current", "10\n");
        assert_eq!(super::headroom(dir.path(), &super::V2), None);
        put("memory.max", "100\n");
        assert_eq!(super::headroom(dir.path(), &super::V2), Some(99));
    }

    #[test]
    fn this_machine_reports_some_available_memory() {
        if cfg!(target_os = "linux") {
            let a = super::available().expect("Linux has /proc/meminfo");
            assert!(a > 0, "a running test has some memory left");
        }
    }
}
