//! WAL segment files: naming and the 32-byte segment header.
//!
//! ```text
//! magic "EVGWAL01" | seq u64 | first_lsn u64 | crc32c u32 (of the first 24 bytes) | 0 u32
//! ```
//! followed by commit blocks (see [`super::block`]) back to back, each 8-byte aligned.

/// Bytes in a segment header; the first block starts here.
pub const HEADER_LEN: u64 = 32;
const MAGIC: &[u8; 8] = b"EVGWAL01";

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

/// The header of a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentHeader {
    /// Sequence number, equal to the one in the file name.
    pub seq: u64,
    /// LSN of the first record the segment holds (or would hold).
    pub first_lsn: u64,
}

impl SegmentHeader {
    /// The 32 header bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN as usize] {
        let mut h = [0u8; HEADER_LEN as usize];
        h[0..8].copy_from_slice(MAGIC);
        h[8..16].copy_from_slice(&self.seq.to_le_bytes());
        h[16..24].copy_from_slice(&self.first_lsn.to_le_bytes());
        let crc = crc32c::crc32c(&h[0..24]);
        h[24..28].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Reads a header; `None` if it is torn or not a header.
    pub fn decode(b: &[u8]) -> Option<Self> {
        if b.len() < HEADER_LEN as usize || &b[0..8] != MAGIC {
            return None;
        }
        let crc = u32::from_le_bytes(b[24..28].try_into().ok()?);
        if crc != crc32c::crc32c(&b[0..24]) {
            return None;
        }
        Some(SegmentHeader {
            seq: u64::from_le_bytes(b[8..16].try_into().ok()?),
            first_lsn: u64::from_le_bytes(b[16..24].try_into().ok()?),
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
        };
        let mut b = h.encode();
        assert_eq!(SegmentHeader::decode(&b), Some(h));
        b[17] ^= 1;
        assert_eq!(SegmentHeader::decode(&b), None);
    }
}
