//! How much DRAM is free: what a reader may spend on copies that speed its kernels up
//! without pushing out the page cache that holds the runs, or the process past its
//! cgroup's limit.

use std::path::{Path, PathBuf};

/// Bytes of DRAM this process can use now: the kernel's estimate of what can be
/// allocated without swapping (`MemAvailable`), or, under cgroup v2 memory limits, the
/// least headroom (limit less usage, page cache included) of the process's cgroup and its
/// ancestors when that is lower. `None` where neither can be read (not Linux).
pub fn available() -> Option<u64> {
    match (mem_available(), cgroup_headroom()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `MemAvailable` from `/proc/meminfo`, in bytes.
fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The least `memory.max - memory.current` from the process's cgroup up to the root;
/// `None` when no cgroup on the way sets a limit.
fn cgroup_headroom() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = s.lines().find_map(|l| l.strip_prefix("0::"))?;
    let root = Path::new("/sys/fs/cgroup");
    let mut dir: PathBuf = root.join(own.trim_start_matches('/'));
    let mut least: Option<u64> = None;
    while dir.starts_with(root) {
        if let Some(h) = headroom(&dir) {
            least = Some(least.map_or(h, |l| l.min(h)));
        }
        if !dir.pop() || dir == root {
            break;
        }
    }
    least
}

/// One cgroup's headroom, if it sets a limit (`memory.max` is `max` when it does not).
fn headroom(dir: &Path) -> Option<u64> {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?;
    let used: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(used))
}

/// A zeroed array in an anonymous mapping that asks the kernel for huge pages. A big
/// array filled once (a view's copy of a direction's lists: 1 GB for Kron24's in-lists)
/// then takes a page fault per 2 MiB instead of per 4 KiB; on this machine (a VM) those
/// faults, not the copying, were most of the time of filling a `Vec`.
pub(crate) struct HugeArray<T> {
    map: Option<memmap2::MmapMut>,
    _of: std::marker::PhantomData<T>,
}

impl<T: bytemuck::Pod> HugeArray<T> {
    /// `len` zeroed elements.
    pub(crate) fn zeroed(len: usize) -> std::io::Result<HugeArray<T>> {
        let bytes = len * std::mem::size_of::<T>();
        let map = match bytes {
            0 => None,
            _ => {
                let m = memmap2::MmapMut::map_anon(bytes)?;
                // Advice only: without huge pages the array still works, a fault per page.
                #[cfg(target_os = "linux")]
                let _ = m.advise(memmap2::Advice::HugePage);
                Some(m)
            }
        };
        Ok(HugeArray {
            map,
            _of: std::marker::PhantomData,
        })
    }
}

impl<T: bytemuck::Pod> std::ops::Deref for HugeArray<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // A mapping is page-aligned, so any `T` fits its alignment.
        self.map
            .as_ref()
            .map_or(&[], |m| bytemuck::cast_slice(&m[..]))
    }
}

impl<T: bytemuck::Pod> std::ops::DerefMut for HugeArray<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.map
            .as_mut()
            .map_or(&mut [], |m| bytemuck::cast_slice_mut(&mut m[..]))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_huge_array_is_zeroed_and_writable() {
        let mut a = super::HugeArray::<u64>::zeroed(3 << 18).unwrap();
        assert_eq!(a.len(), 3 << 18);
        assert!(a.iter().all(|&x| x == 0));
        a[12345] = 7;
        assert_eq!(a.iter().sum::<u64>(), 7);
        assert!(super::HugeArray::<u32>::zeroed(0).unwrap().is_empty());
    }

    #[test]
    fn this_machine_reports_some_available_memory() {
        if cfg!(target_os = "linux") {
            let a = super::available().expect("Linux has /proc/meminfo");
            assert!(a > 0, "a running test has some memory left");
        }
    }
}
