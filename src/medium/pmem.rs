//! The pmem and battery media: segments mapped into memory, written with stores.
//!
//! On a DAX file system a segment is mapped with `MAP_SYNC`, so that a store reaches the
//! persistence domain once its cache line is written back: `PmemSegment::persist` issues
//! `clwb` (else `clflushopt`, else `clflush`) for every dirty line and one `sfence` — no
//! system call (XPGraph, DGAP). On tmpfs (`/dev/shm`) the same instructions run as the
//! emulation of persistent memory the papers measure with: DRAM, with the cost of the
//! flushes. On any other file system `MAP_SYNC` is refused; the medium says so in
//! [`Medium::persist_method`] and persists with `msync`.
//!
//! The battery medium (XPGraph-B, eADR) assumes the caches are in the persistence domain:
//! a persist is one `sfence`. It is only as durable as the platform makes it; on a file
//! system without DAX the page cache is not battery-backed, and `persist_method` says so.
//!
//! Extending a segment is an `ftruncate` and a new mapping, so callers that append small
//! records (the WAL) allocate a segment's space ahead ([`Medium::preallocates`]). The size
//! change itself is made durable with `fdatasync` at the next persist.

use super::dir::{names_in_store_dir, Open, StoreDir};
use super::{Mapped, Medium, MediumStats, Persistence, SegmentFile};
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// How a mapped medium makes stores durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmemMode {
    /// Write back dirty cache lines, then fence (ADR platforms).
    Flush,
    /// Fence only: the caches are battery-backed (eADR).
    Battery,
}

/// What the directory's file system offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fs {
    /// DAX: `MAP_SYNC` mappings of persistent memory.
    Dax,
    /// tmpfs: DRAM standing in for persistent memory (emulation, as in the papers).
    Tmpfs,
    /// Anything else: pages reach the device by `msync`.
    Paged,
}

const FS_UNKNOWN: u8 = 0;

fn fs_code(f: Fs) -> u8 {
    match f {
        Fs::Dax => 1,
        Fs::Tmpfs => 2,
        Fs::Paged => 3,
    }
}

/// Segments are files in one directory, mapped into memory.
pub struct PmemMedium {
    dir: StoreDir,
    mode: PmemMode,
    fs: Arc<AtomicU8>,
    stats: Arc<MediumStats>,
}

impl PmemMedium {
    /// A medium rooted at `dir`.
    pub fn new(dir: &Path, mode: PmemMode) -> Self {
        PmemMedium {
            dir: StoreDir::new(dir),
            mode,
            fs: Arc::new(AtomicU8::new(FS_UNKNOWN)),
            stats: Arc::default(),
        }
    }

    /// The directory's file system: DAX if `MAP_SYNC` is accepted (probed with an unnamed
    /// temporary file, so nothing is left in the store), else tmpfs or another.
    fn fs(&self) -> Fs {
        if self.fs.load(Ordering::Acquire) == FS_UNKNOWN {
            let probe = OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_TMPFILE)
                .open(self.dir.root())
                .and_then(|f| f.set_len(4096).map(|_| f));
            let dax = probe.is_ok_and(|f| Map::new(&f, 4096, true).is_ok_and(|(_, dax)| dax));
            let fs = if dax {
                Fs::Dax
            } else if super::dir::is_tmpfs(self.dir.root()) {
                Fs::Tmpfs
            } else {
                Fs::Paged
            };
            self.fs.store(fs_code(fs), Ordering::Release);
        }
        match self.fs.load(Ordering::Acquire) {
            1 => Fs::Dax,
            2 => Fs::Tmpfs,
            _ => Fs::Paged,
        }
    }

    fn segment(&self, path: PathBuf, file: File) -> Result<Box<dyn SegmentFile>> {
        let len = file
            .metadata()
            .map_err(|e| Error::io("stat", &path, e))?
            .len() as usize;
        let fs = self.fs();
        let (map, _) =
            Map::new(&file, len, fs == Fs::Dax).map_err(|e| Error::io("mmap", &path, e))?;
        Ok(Box::new(PmemSegment {
            path,
            file,
            map: Mutex::new(map),
            mode: self.mode,
            fs,
            stats: self.stats.clone(),
        }))
    }
}

impl Medium for PmemMedium {
    fn kind(&self) -> &'static str {
        match self.mode {
            PmemMode::Flush => "pmem",
            PmemMode::Battery => "battery",
        }
    }
    fn persistence(&self) -> Persistence {
        Persistence::CacheLine
    }
    fn persist_method(&self) -> String {
        const EMULATED: &str = "on tmpfs: persistent memory emulated in DRAM, as the papers measure it; nothing survives a power cut";
        match (self.mode, self.fs()) {
            (PmemMode::Flush, Fs::Dax) => {
                format!("{} + sfence (DAX, MAP_SYNC)", cpu::flush_name())
            }
            (PmemMode::Flush, Fs::Tmpfs) => format!("{} + sfence {EMULATED}", cpu::flush_name()),
            (PmemMode::Flush, Fs::Paged) => {
                "msync: not a DAX file system, so MAP_SYNC and cache-line flushes cannot make stores durable".into()
            }
            (PmemMode::Battery, Fs::Dax) => "sfence (caches assumed battery-backed, eADR)".into(),
            (PmemMode::Battery, Fs::Tmpfs) => format!("sfence {EMULATED}"),
            (PmemMode::Battery, Fs::Paged) => {
                "sfence only, on a file system without DAX: the page cache is not battery-backed, so this survives a process crash, not a power cut".into()
            }
        }
    }
    fn create_root(&self) -> Result<()> {
        self.dir.create_durably()
    }
    fn preallocates(&self) -> bool {
        true
    }
    fn create(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let (path, file) = self.dir.open_file(name, Open::Create)?;
        self.segment(path, file)
    }
    fn open(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let (path, file) = self.dir.open_file(name, Open::Existing)?;
        self.segment(path, file)
    }
    names_in_store_dir!();
}

/// Disjoint dirty ranges a mapping tracks before it merges them into one.
const DIRTY_RANGES: usize = 4;

/// A writable shared mapping of a whole segment file.
struct Map {
    ptr: *mut u8,
    len: usize,
    /// Bytes written since the last persist, as up to [`DIRTY_RANGES`] disjoint ranges
    /// `[lo, hi)`: a log writes its header page and its blocks far apart, and one range
    /// spanning both would write back the whole segment at each persist.
    dirty: Vec<(usize, usize)>,
    /// The file's size changed since the last persist.
    resized: bool,
}

impl Map {
    /// Maps `len` bytes of `file`; with `try_sync`, asks for `MAP_SYNC` first. Returns the
    /// mapping and whether `MAP_SYNC` was granted.
    fn new(file: &File, len: usize, try_sync: bool) -> std::io::Result<(Map, bool)> {
        use std::os::fd::AsRawFd;
        let mut m = Map {
            ptr: std::ptr::null_mut(),
            len: 0,
            dirty: Vec::new(),
            resized: false,
        };
        if len == 0 {
            return Ok((m, try_sync));
        }
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        let fd = file.as_raw_fd();
        // SAFETY: a fresh mapping of an open file descriptor at a kernel-chosen address; it
        // aliases no Rust object, and Map owns it until Drop unmaps it.
        let mut p = if try_sync {
            unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    prot,
                    libc::MAP_SHARED_VALIDATE | libc::MAP_SYNC,
                    fd,
                    0,
                )
            }
        } else {
            libc::MAP_FAILED
        };
        let synced = p != libc::MAP_FAILED;
        if !synced {
            // SAFETY: as above, without MAP_SYNC.
            p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
            if p == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
        }
        m.ptr = p.cast();
        m.len = len;
        Ok((m, synced))
    }

    fn unmap(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: ptr/len are a mapping this Map created and nobody else refers to (reads
            // go through their own mappings); callers hold the segment's lock.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
            self.ptr = std::ptr::null_mut();
            self.len = 0;
        }
    }

    fn touch(&mut self, mut lo: usize, mut hi: usize) {
        // Ranges that overlap or touch the new one merge into it.
        self.dirty.retain(|&(a, b)| {
            let apart = b < lo || hi < a;
            if !apart {
                (lo, hi) = (lo.min(a), hi.max(b));
            }
            apart
        });
        self.dirty.push((lo, hi));
        if self.dirty.len() > DIRTY_RANGES {
            let (a, b) =
                (self.dirty.iter()).fold((usize::MAX, 0), |(a, b), &(x, y)| (a.min(x), b.max(y)));
            self.dirty = vec![(a, b)];
        }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        self.unmap();
    }
}

/// One mapped segment. Writes are stores into the mapping under the segment's lock.
struct PmemSegment {
    path: PathBuf,
    file: File,
    map: Mutex<Map>,
    mode: PmemMode,
    fs: Fs,
    stats: Arc<MediumStats>,
}

// SAFETY: the raw pointer in Map is only used while holding the segment's Mutex, and the
// mapping it points to is shared memory owned by the segment, valid on any thread.
unsafe impl Send for PmemSegment {}
// SAFETY: as above: every access to the mapping goes through the Mutex.
unsafe impl Sync for PmemSegment {}

impl PmemSegment {
    /// Resizes the file and maps it anew (called with the lock held).
    fn resize(&self, m: &mut Map, len: usize) -> Result<()> {
        self.file
            .set_len(len as u64)
            .map_err(|e| Error::io("truncate", &self.path, e))?;
        for (lo, hi) in std::mem::take(&mut m.dirty) {
            let (lo, hi) = (lo.min(len), hi.min(len));
            if lo < hi {
                // Dirty lines must reach the medium before their mapping goes away.
                self.write_back(m, lo, hi)?;
            }
        }
        m.unmap();
        let (fresh, _) = Map::new(&self.file, len, self.fs == Fs::Dax)
            .map_err(|e| Error::io("mmap", &self.path, e))?;
        *m = fresh;
        m.resized = true;
        Ok(())
    }

    /// Makes `[lo, hi)` of the mapping durable (flush mode only; battery needs no write-back).
    fn write_back(&self, m: &Map, lo: usize, hi: usize) -> Result<()> {
        if self.mode == PmemMode::Battery {
            return Ok(());
        }
        if self.fs != Fs::Paged {
            // SAFETY: [lo, hi) lies inside the live mapping (callers clamp to m.len).
            unsafe { cpu::flush_range(m.ptr.add(lo), hi - lo) };
            return Ok(());
        }
        let page = 4096;
        let start = lo / page * page;
        // SAFETY: msync on a page-aligned range inside the live mapping.
        let rc = unsafe { libc::msync(m.ptr.add(start).cast(), hi - start, libc::MS_SYNC) };
        if rc != 0 {
            return Err(Error::io(
                "msync",
                &self.path,
                std::io::Error::last_os_error(),
            ));
        }
        Ok(())
    }
}

impl SegmentFile for PmemSegment {
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        self.stats.on_write(data.len());
        let mut m = self.map.lock().unwrap();
        let (off, end) = (offset as usize, offset as usize + data.len());
        if end > m.len {
            self.resize(&mut m, end)?;
        }
        // SAFETY: [off, end) is inside the mapping (grown above), which nothing else
        // writes while the lock is held; readers use their own read-only mappings.
        unsafe {
            let dst = m.ptr.add(off);
            if data.len() == 8 && off % 8 == 0 {
                // An aligned 8-byte store is atomic: commit markers rely on it.
                let v = u64::from_ne_bytes(data.try_into().unwrap());
                std::ptr::write_volatile(dst.cast::<u64>(), v);
            } else {
                std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len());
            }
        }
        m.touch(off, end);
        Ok(())
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        super::file::read_file_at(&self.file, &self.path, offset, buf)
    }
    fn persist(&self) -> Result<()> {
        self.stats.on_persist();
        let mut m = self.map.lock().unwrap();
        let mut dirty = std::mem::take(&mut m.dirty);
        if self.fs == Fs::Paged && dirty.len() > 1 {
            // `msync` writes back only the dirty pages of its range, then flushes the
            // device once: one call over all the ranges costs one flush, one per range one
            // each. (Cache-line write-back, below, costs per line: there ranges stay apart.)
            let hull = (dirty.iter()).fold((usize::MAX, 0), |(a, b), &(x, y)| (a.min(x), b.max(y)));
            dirty = vec![hull];
        }
        for (lo, hi) in dirty {
            if lo < hi.min(m.len) {
                self.write_back(&m, lo, hi.min(m.len))?;
            }
        }
        cpu::fence();
        if std::mem::take(&mut m.resized) {
            // The new size is file-system metadata: only fdatasync makes it durable.
            self.file
                .sync_data()
                .map_err(|e| Error::io("fdatasync", &self.path, e))?;
        }
        Ok(())
    }
    fn len(&self) -> Result<u64> {
        Ok(self.map.lock().unwrap().len as u64)
    }
    fn set_len(&self, len: u64) -> Result<()> {
        let mut m = self.map.lock().unwrap();
        if len as usize != m.len {
            self.resize(&mut m, len as usize)?;
        }
        Ok(())
    }
    fn map(&self) -> Result<Mapped> {
        if self.len()? == 0 {
            return Ok(Mapped::empty());
        }
        // SAFETY: as for the file medium: evograph maps for reading only segments it no
        // longer writes, and the store's lock keeps other evograph processes out.
        let map = unsafe { memmap2::Mmap::map(&self.file) }
            .map_err(|e| Error::io("mmap", &self.path, e))?;
        Ok(Mapped::from_mmap(map))
    }
}

/// Cache-line write-back and store fences.
mod cpu {
    use std::sync::OnceLock;

    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Insn {
        Clwb,
        Clflushopt,
        Clflush,
        None,
    }

    const LINE: usize = 64;

    fn insn() -> Insn {
        static INSN: OnceLock<Insn> = OnceLock::new();
        *INSN.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            {
                // CPUID leaf 7: EBX bit 24 = CLWB, bit 23 = CLFLUSHOPT; leaf 1 EDX bit 19 =
                // CLFSH.
                #[allow(unused_unsafe)]
                // SAFETY: cpuid is available on every x86_64 processor.
                let (l7, l1) = unsafe {
                    (
                        core::arch::x86_64::__cpuid_count(7, 0),
                        core::arch::x86_64::__cpuid(1),
                    )
                };
                if l7.ebx & (1 << 24) != 0 {
                    Insn::Clwb
                } else if l7.ebx & (1 << 23) != 0 {
                    Insn::Clflushopt
                } else if l1.edx & (1 << 19) != 0 {
                    Insn::Clflush
                } else {
                    Insn::None
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            Insn::None
        })
    }

    /// The write-back instruction this processor has.
    pub fn flush_name() -> &'static str {
        match insn() {
            Insn::Clwb => "clwb",
            Insn::Clflushopt => "clflushopt",
            Insn::Clflush => "clflush",
            Insn::None => "no cache-line flush instruction",
        }
    }

    /// Writes back every cache line of `[p, p + len)`.
    ///
    /// # Safety
    /// The range must be mapped memory.
    pub unsafe fn flush_range(p: *const u8, len: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let start = p as usize / LINE * LINE;
            let end = p as usize + len;
            let kind = insn();
            let mut a = start;
            while a < end {
                let line = a as *const u8;
                // SAFETY: `line` is inside the caller's mapped range (rounded down to its
                // cache line, which is mapped too); these instructions only write back.
                unsafe {
                    match kind {
                        Insn::Clwb => {
                            core::arch::asm!("clwb [{0}]", in(reg) line, options(nostack, preserves_flags))
                        }
                        Insn::Clflushopt => {
                            core::arch::asm!("clflushopt [{0}]", in(reg) line, options(nostack, preserves_flags))
                        }
                        Insn::Clflush => core::arch::x86_64::_mm_clflush(line),
                        Insn::None => {}
                    }
                }
                a += LINE;
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (p, len, LINE);
    }

    /// Orders earlier stores and write-backs before later stores.
    pub fn fence() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: sfence has no preconditions.
        unsafe {
            core::arch::x86_64::_mm_sfence()
        };
        #[cfg(not(target_arch = "x86_64"))]
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_read_back_across_growth_and_reopen() {
        for mode in [PmemMode::Flush, PmemMode::Battery] {
            let d = tempfile::tempdir().unwrap();
            let m = PmemMedium::new(d.path(), mode);
            let s = m.create("seg").unwrap();
            s.write_at(0, b"12345678").unwrap();
            s.write_at(100_000, &[7u8; 5000]).unwrap();
            s.persist().unwrap();
            assert_eq!(s.len().unwrap(), 105_000);
            let mut b = [0u8; 8];
            s.read_at(0, &mut b).unwrap();
            assert_eq!(&b, b"12345678");
            drop(s);
            let s = m.open("seg").unwrap();
            let map = s.map().unwrap();
            assert_eq!(map.len(), 105_000);
            assert!(map[100_000..].iter().all(|&x| x == 7));
            s.set_len(10).unwrap();
            s.persist().unwrap();
            assert_eq!(m.open("seg").unwrap().len().unwrap(), 10);
            let how = m.persist_method();
            assert!(how.contains("sfence") || how.contains("msync"), "{how}");
        }
    }
}
