//! The memory medium: segments live in DRAM and nothing survives the process.

use super::{Mapped, Medium, MediumStats, SegmentFile};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

type Buf = Arc<RwLock<Vec<u8>>>;

/// A volatile medium (XPGraph-D): the fastest, and durable only until the process ends.
#[derive(Default)]
pub struct MemoryMedium {
    segments: Mutex<BTreeMap<String, Buf>>,
    stats: Arc<MediumStats>,
}

impl MemoryMedium {
    /// An empty medium.
    pub fn new() -> Self {
        Self::default()
    }

    fn segment(&self, name: &str, buf: Buf) -> Box<dyn SegmentFile> {
        Box::new(MemSegment {
            name: name.to_string(),
            buf,
            stats: self.stats.clone(),
        })
    }
}

fn not_found(name: &str) -> Error {
    Error::io(
        "open",
        name,
        std::io::Error::from(std::io::ErrorKind::NotFound),
    )
}

fn exists(name: &str, op: &'static str) -> Error {
    Error::io(
        op,
        name,
        std::io::Error::from(std::io::ErrorKind::AlreadyExists),
    )
}

impl Medium for MemoryMedium {
    fn kind(&self) -> &'static str {
        "memory"
    }
    fn persistence(&self) -> super::Persistence {
        super::Persistence::Volatile
    }
    fn persist_method(&self) -> String {
        "none (DRAM only)".into()
    }
    fn create(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let buf: Buf = Arc::default();
        let mut segs = self.segments.lock().unwrap();
        if segs.contains_key(name) {
            return Err(exists(name, "create"));
        }
        segs.insert(name.to_string(), buf.clone());
        Ok(self.segment(name, buf))
    }
    fn open(&self, name: &str) -> Result<Box<dyn SegmentFile>> {
        let buf = self.segments.lock().unwrap().get(name).cloned();
        buf.map(|b| self.segment(name, b))
            .ok_or_else(|| not_found(name))
    }
    fn exists(&self, name: &str) -> bool {
        self.segments.lock().unwrap().contains_key(name)
    }
    fn remove(&self, name: &str) -> Result<()> {
        self.segments
            .lock()
            .unwrap()
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| not_found(name))
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        if self.exists(to) {
            return Err(exists(to, "rename"));
        }
        self.rename_replacing(from, to)
    }
    fn rename_replacing(&self, from: &str, to: &str) -> Result<()> {
        let mut segs = self.segments.lock().unwrap();
        let buf = segs.remove(from).ok_or_else(|| not_found(from))?;
        segs.insert(to.to_string(), buf);
        Ok(())
    }
    fn list(&self) -> Result<Vec<String>> {
        Ok(self.segments.lock().unwrap().keys().cloned().collect())
    }
    fn sync_dir(&self) -> Result<()> {
        Ok(())
    }
    fn stats(&self) -> &MediumStats {
        &self.stats
    }
}

struct MemSegment {
    name: String,
    buf: Buf,
    stats: Arc<MediumStats>,
}

impl SegmentFile for MemSegment {
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.stats.on_write(data.len());
        let mut b = self.buf.write().unwrap();
        let end = offset as usize + data.len();
        if b.len() < end {
            b.resize(end, 0);
        }
        b[offset as usize..end].copy_from_slice(data);
        Ok(())
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let b = self.buf.read().unwrap();
        let start = offset as usize;
        let src = b.get(start..start + buf.len()).ok_or_else(|| {
            Error::io(
                "read",
                &self.name,
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            )
        })?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn persist(&self) -> Result<()> {
        self.stats.on_persist();
        Ok(())
    }
    fn len(&self) -> Result<u64> {
        Ok(self.buf.read().unwrap().len() as u64)
    }
    fn set_len(&self, len: u64) -> Result<()> {
        self.buf.write().unwrap().resize(len as usize, 0);
        Ok(())
    }
    fn map(&self) -> Result<Mapped> {
        Ok(Mapped::from_bytes(&self.buf.read().unwrap()))
    }
}
