//! A read-only, 8-byte-aligned view of a segment's bytes.

use std::sync::Arc;

/// How a reader is about to go through mapped bytes (see [`Mapped::advise`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// In order, once or many times over (PageRank, connected components, label
    /// propagation).
    Sequential,
    /// Scattered point probes (edge lookups): no readahead at all. Not for traversals:
    /// BFS under a memory cap ran 1.9x slower with it, as its bottom-up steps sweep.
    Random,
    /// No particular order: the kernel's default readahead.
    Normal,
}

/// Bytes of a segment: a memory map of a file, or an aligned heap copy.
///
/// Cloning is cheap (reference counted). The bytes start 8-byte aligned so that sections of
/// `u32`/`u64` can be viewed in place with `bytemuck`.
#[derive(Clone)]
pub struct Mapped(Arc<Inner>);

enum Inner {
    Map(memmap2::Mmap),
    Heap { words: Vec<u64>, len: usize },
    Empty,
}

impl Mapped {
    pub(crate) fn from_mmap(map: memmap2::Mmap) -> Self {
        Mapped(Arc::new(Inner::Map(map)))
    }

    /// Copies `bytes` into an aligned heap buffer.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        Mapped(Arc::new(Inner::Heap {
            words,
            len: bytes.len(),
        }))
    }

    pub(crate) fn empty() -> Self {
        Mapped(Arc::new(Inner::Empty))
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        match &*self.0 {
            Inner::Map(m) => m,
            Inner::Heap { words, len } => &bytemuck::cast_slice(words)[..*len],
            Inner::Empty => &[],
        }
    }

    /// Tells the kernel how the view is about to be read, so that readahead fits: long
    /// sequential sweeps read far ahead, random probes read only the page they touch
    /// (readahead there fills the page cache with pages nobody asked for, which under a
    /// memory cap evicts the ones somebody will). A hint only: errors are ignored.
    pub fn advise(&self, access: Access) {
        if let Inner::Map(m) = &*self.0 {
            let _ = m.advise(match access {
                Access::Sequential => memmap2::Advice::Sequential,
                Access::Random => memmap2::Advice::Random,
                Access::Normal => memmap2::Advice::Normal,
            });
        }
    }

    /// Advises the kernel that the whole view will be read soon.
    pub fn will_need(&self) {
        if let Inner::Map(m) = &*self.0 {
            let _ = m.advise(memmap2::Advice::WillNeed);
        }
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.bytes()
    }
}
