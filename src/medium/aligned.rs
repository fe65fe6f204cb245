//! Buffers for direct I/O: `O_DIRECT` wants the buffer's address, like the offset and
//! length, to be a multiple of the device's logical block size.

/// Alignment of every direct read's and write's offset, length and buffer: a multiple of
/// every common logical block size.
pub(crate) const ALIGN: usize = 4096;

/// A heap buffer whose usable part starts at an [`ALIGN`]-aligned address.
pub(crate) struct AlignedBuf {
    raw: Vec<u8>,
    /// Index in `raw` of the first aligned byte; stays valid as the `Vec` itself moves,
    /// since its heap block does not.
    start: usize,
}

impl AlignedBuf {
    /// A zeroed buffer of at least `capacity` usable bytes, rounded up to [`ALIGN`].
    pub(crate) fn new(capacity: usize) -> Self {
        let raw = vec![0u8; capacity.next_multiple_of(ALIGN) + ALIGN];
        let start = raw.as_ptr().align_offset(ALIGN);
        assert!(start < ALIGN, "a byte pointer can always be aligned");
        AlignedBuf { raw, start }
    }

    /// Usable bytes, a multiple of [`ALIGN`].
    pub(crate) fn capacity(&self) -> usize {
        self.raw.len() - ALIGN
    }

    /// The usable bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.capacity()]
    }

    /// The usable bytes, to fill.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        let (s, c) = (self.start, self.capacity());
        &mut self.raw[s..s + c]
    }
}
