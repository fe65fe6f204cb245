//! WAL segment files: naming, the segment header and the trailer that rotation leaves.
//!
//! A segment this build makes (format 3) starts with a header page of [`PAGE_LEN`] bytes,
//! its blocks after it:
//! ```text
//! header (64 B): magic "EVGWAL03" | seq u64 | first_lsn u64 | store_id u64 | root_seq u64
//!                | len u64 | flags u32 | 0 u32 | crc32c u32 (of the first 56 bytes) | 0 u32
//! progress slots: two of 48 B, at bytes 512 and 1024 (see [`super::progress`])
//! zeros to byte 4096, where the first block starts
//! ```
//! `len` is the file's length, set when the segment is made and never changed by the
//! writer, so a segment cut short is found by the header at its front, which a truncation
//! cannot remove. Flag 1 (`RECYCLED`): the file is a retired segment reused, so bytes past
//! its last write may be what its earlier life wrote there.
//!
//! Segments of earlier builds (format 2, then 1 from before stamps) have a header alone,
//! blocks right after it, and grow as they are written:
//! ```text
//! header (48 B): magic "EVGWAL02" | seq u64 | first_lsn u64 | store_id u64 | root_seq u64
//!                | crc32c u32 (of the first 40 bytes) | 0 u32
//! from before stamps (32 B): magic "EVGWAL01" | seq u64 | first_lsn u64
//!                | crc32c u32 (of the first 24 bytes) | 0 u32
//! ```
//! Commit blocks (see [`super::block`]) follow back to back, each 8-byte aligned.
//! `root_seq` is the manifest commit in force when the segment was made: a segment made
//! under a later root than the one open reads proves that root is older than the store.
//!
//! A segment that rotation ended holds, after its last block, a [`Trailer`] naming the next
//! segment, so that deleting the newest of several segments is found, not read as a clean
//! end of the log:
//! ```text
//! trailer (32 B): magic "WEND" u32 | 0 u32 | next_seq u64 | end_lsn u64
//!                 | crc32c u32 (of the first 24 bytes) | 0 u32
//! ```

use crate::stamp::Stamp;

/// Bytes of the header page of a segment this build makes; the first block starts there.
pub const PAGE_LEN: u64 = 4096;
/// Bytes of the header itself, at the start of the header page.
pub const HEADER_LEN: u64 = 64;
/// Bytes in a segment header of format 2 (stamped, without a header page).
pub const STAMPED_HEADER_LEN: u64 = 48;
/// Bytes in a segment header from before stamps.
pub const LEGACY_HEADER_LEN: u64 = 32;
const MAGIC: &[u8; 8] = b"EVGWAL03";
const MAGIC_STAMPED: &[u8; 8] = b"EVGWAL02";
const MAGIC_LEGACY: &[u8; 8] = b"EVGWAL01";
/// Header flag: the file is a recycled segment (bytes past its last write may be stale).
const RECYCLED: u32 = 1;
/// Bytes in a rotation trailer.
pub const TRAILER_LEN: usize = 32;
const TRAILER_MAGIC: u32 = 0x444E_4557; // "WEND"
                                        // The layouts above, field by field; blocks after a header start 8-byte aligned.
const _: () = assert!(HEADER_LEN == 8 + 8 + 8 + 8 + 8 + 8 + 4 + 4 + 4 + 4);
const _: () = assert!(
    STAMPED_HEADER_LEN == 8 + 8 + 8 + 8 + 8 + 4 + 4 && STAMPED_HEADER_LEN.is_multiple_of(8)
);
const _: () =
    assert!(LEGACY_HEADER_LEN == 8 + 8 + 8 + 4 + 4 && LEGACY_HEADER_LEN.is_multiple_of(8));
const _: () = assert!(TRAILER_LEN == 4 + 4 + 8 + 8 + 4 + 4 && TRAILER_LEN.is_multiple_of(8));
const _: () = assert!(u32::from_le_bytes(*b"WEND") == TRAILER_MAGIC);

/// Name of the segment with sequence number `seq`.
pub fn name(seq: u64) -> String {
    format!("wal-{seq:016x}.log")
}

/// Name of spare slot `k`: a retired segment kept for the writer to overwrite rather than
/// deleted and allocated again. Recovery never reads spares.
pub fn spare_name(k: usize) -> String {
    format!("wal-spare-{k}.log")
}

/// Whether `name` is a spare segment (of any slot, or of the older per-sequence naming).
pub fn is_spare(name: &str) -> bool {
    name.starts_with("wal-spare-") && name.ends_with(".log")
}

/// The sequence number in a segment name, if it is one.
pub fn parse_name(name: &str) -> Option<u64> {
    let hex = name.strip_prefix("wal-")?.strip_suffix(".log")?;
    if hex.len() != 16 {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// How a segment lays out its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Format 3: a header page with progress slots, and a length fixed when the file was
    /// made.
    Paged {
        /// The file's length.
        len: u64,
        /// Whether the file was made for it or is a retired segment reused.
        life: Life,
    },
    /// Formats 1 and 2: the header, then blocks; the file grows as it is written.
    Grown,
}

/// Whether a segment's file was made for it or is a retired segment's, reused: past its
/// writes a fresh file holds zeros, a recycled one what its earlier life left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Life {
    /// Made for this segment.
    Fresh,
    /// A retired segment's file, renamed and written over.
    Recycled,
}

/// The header of a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentHeader {
    /// Sequence number, equal to the one in the file name.
    pub seq: u64,
    /// LSN of the first record the segment holds (or would hold).
    pub first_lsn: u64,
    /// The store, and the manifest commit in force when the segment was made; `None` in a
    /// segment from before stamps.
    pub stamp: Option<Stamp>,
    /// How the file is laid out.
    pub layout: Layout,
}

impl SegmentHeader {
    /// Bytes before the segment's first block.
    pub fn header_len(&self) -> u64 {
        match (self.layout, self.stamp) {
            (Layout::Paged { .. }, _) => PAGE_LEN,
            (Layout::Grown, Some(_)) => STAMPED_HEADER_LEN,
            (Layout::Grown, None) => LEGACY_HEADER_LEN,
        }
    }

    /// The header bytes of a segment this build makes (stamped and paged: it makes no
    /// other).
    pub fn encode(&self) -> [u8; HEADER_LEN as usize] {
        let st = self.stamp.expect("a segment this build writes is stamped");
        let Layout::Paged { len, life } = self.layout else {
            panic!("a segment this build writes has a header page");
        };
        let mut h = [0u8; HEADER_LEN as usize];
        h[0..8].copy_from_slice(MAGIC);
        h[8..16].copy_from_slice(&self.seq.to_le_bytes());
        h[16..24].copy_from_slice(&self.first_lsn.to_le_bytes());
        h[24..32].copy_from_slice(&st.store_id.to_le_bytes());
        h[32..40].copy_from_slice(&st.seq.to_le_bytes());
        h[40..48].copy_from_slice(&len.to_le_bytes());
        let flags = match life {
            Life::Recycled => RECYCLED,
            Life::Fresh => 0,
        };
        h[48..52].copy_from_slice(&flags.to_le_bytes());
        let crc = crc32c::crc32c(&h[0..56]);
        h[56..60].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Reads a header of any format; `None` if it is torn or not a header.
    pub fn decode(b: &[u8]) -> Option<Self> {
        let rd64 = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        let crc_ok = |n: usize| {
            b.get(n..n + 8).is_some_and(|t| {
                u32::from_le_bytes(t[..4].try_into().unwrap()) == crc32c::crc32c(&b[..n])
                    && t[4..].iter().all(|&x| x == 0)
            })
        };
        let stamp = || Stamp {
            store_id: rd64(24),
            seq: rd64(32),
        };
        let (stamp, layout) = match b.get(..8)? {
            m if m == MAGIC && crc_ok(56) && b[52..56] == [0; 4] => {
                let flags = u32::from_le_bytes(b[48..52].try_into().unwrap());
                if flags & !RECYCLED != 0 {
                    return None;
                }
                let layout = Layout::Paged {
                    len: rd64(40),
                    life: match flags & RECYCLED != 0 {
                        true => Life::Recycled,
                        false => Life::Fresh,
                    },
                };
                (Some(stamp()), layout)
            }
            m if m == MAGIC_STAMPED && crc_ok(40) => (Some(stamp()), Layout::Grown),
            m if m == MAGIC_LEGACY && crc_ok(24) => (None, Layout::Grown),
            _ => return None,
        };
        Some(SegmentHeader {
            seq: rd64(8),
            first_lsn: rd64(16),
            stamp,
            layout,
        })
    }
}

/// What rotation writes after a segment's last block: where the log goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trailer {
    /// The sequence number of the segment that follows.
    pub next_seq: u64,
    /// The LSN after the segment's last record: the next segment's first.
    pub end_lsn: u64,
}

impl Trailer {
    /// The trailer bytes.
    pub fn encode(&self) -> [u8; TRAILER_LEN] {
        let mut t = [0u8; TRAILER_LEN];
        t[0..4].copy_from_slice(&TRAILER_MAGIC.to_le_bytes());
        t[8..16].copy_from_slice(&self.next_seq.to_le_bytes());
        t[16..24].copy_from_slice(&self.end_lsn.to_le_bytes());
        let crc = crc32c::crc32c(&t[0..24]);
        t[24..28].copy_from_slice(&crc.to_le_bytes());
        t
    }

    /// Reads a trailer at the start of `b`; `None` if none is there whole.
    pub fn decode(b: &[u8]) -> Option<Trailer> {
        let t = b.get(..TRAILER_LEN)?;
        let rd32 = |at: usize| u32::from_le_bytes(t[at..at + 4].try_into().unwrap());
        let rd64 = |at: usize| u64::from_le_bytes(t[at..at + 8].try_into().unwrap());
        let ok = rd32(0) == TRAILER_MAGIC
            && rd32(4) == 0
            && rd32(24) == crc32c::crc32c(&t[0..24])
            && rd32(28) == 0;
        ok.then(|| Trailer {
            next_seq: rd64(8),
            end_lsn: rd64(16),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(parse_name(&name(0x1f)), Some(0x1f));
        assert_eq!(parse_name("wal-12.log"), None);
        assert_eq!(parse_name("run-0000000000000001.run"), None);
        assert!(is_spare(&spare_name(2)));
        assert_eq!(parse_name(&spare_name(2)), None);
        assert!(!is_spare(&name(2)));
    }

    #[test]
    fn header_round_trip_and_checksum() {
        let h = SegmentHeader {
            seq: 3,
            first_lsn: 99,
            stamp: Some(Stamp::new(0xfeed, 7)),
            layout: Layout::Paged {
                len: 8192,
                life: Life::Recycled,
            },
        };
        let b = h.encode();
        assert_eq!(SegmentHeader::decode(&b), Some(h));
        assert_eq!(h.header_len(), PAGE_LEN);
        for i in 0..b.len() {
            let mut c = b;
            c[i] ^= 1;
            assert_eq!(SegmentHeader::decode(&c), None, "flip at {i}");
        }
    }

    #[test]
    fn headers_of_earlier_formats_read_as_grown_segments() {
        let mut h = [0u8; STAMPED_HEADER_LEN as usize];
        h[0..8].copy_from_slice(MAGIC_STAMPED);
        h[8..16].copy_from_slice(&4u64.to_le_bytes());
        h[16..24].copy_from_slice(&50u64.to_le_bytes());
        h[24..32].copy_from_slice(&9u64.to_le_bytes());
        let crc = crc32c::crc32c(&h[0..40]);
        h[40..44].copy_from_slice(&crc.to_le_bytes());
        let d = SegmentHeader::decode(&h).unwrap();
        assert_eq!((d.seq, d.layout, d.header_len()), (4, Layout::Grown, 48));
        assert_eq!(d.stamp.map(|s| s.store_id), Some(9));

        let mut h = [0u8; LEGACY_HEADER_LEN as usize];
        h[0..8].copy_from_slice(MAGIC_LEGACY);
        h[8..16].copy_from_slice(&4u64.to_le_bytes());
        h[16..24].copy_from_slice(&50u64.to_le_bytes());
        let crc = crc32c::crc32c(&h[0..24]);
        h[24..28].copy_from_slice(&crc.to_le_bytes());
        let d = SegmentHeader::decode(&h).unwrap();
        assert_eq!(
            (d.seq, d.first_lsn, d.stamp, d.header_len()),
            (4, 50, None, 32)
        );
    }

    #[test]
    fn trailer_round_trip_and_checksum() {
        let t = Trailer {
            next_seq: 5,
            end_lsn: 1234,
        };
        let b = t.encode();
        assert_eq!(Trailer::decode(&b), Some(t));
        for i in 0..b.len() {
            let mut c = b;
            c[i] ^= 4;
            assert_eq!(Trailer::decode(&c), None, "flip at {i}");
        }
    }
}
