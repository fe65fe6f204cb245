//! Commit blocks: the unit the WAL writes, checksums and replays.
//!
//! ```text
//! header (32 B): magic u32 | payload_len u32 | first_lsn u64 | records u32 | sections u32
//!                | crc32c u32 (header bytes 0..24, 28..32, then payload) | durable_gap u32
//! payload: sections, each 8-byte aligned:
//!   kind u8 | 0 u8 x3 | count u32, then
//!   kind 1 (dictionary): first_dense u64 | count x u64 external ids
//!   kind 2 (edges):      count x (src id, dst id with the top bit = delete)
//!   kind 3 (vertices):   count x id with the top bit = delete, padded to 8 bytes
//!   kind 4 (weighted edges): count x (src id, dst id) as kind 2, then count x f64 weights
//!   kind 5 (commit time): count 1, then i64: when the batch commits, in Unix nanoseconds
//! ```
//! An `id` is a dense vertex id of the store's width: u32, or u64 in 64-bit stores, whose
//! edge and vertex sections have kinds 2, 3, 4 plus [`WIDE_KIND`] so that a block names its
//! width (a 32-bit store's `first_dense` is its old `u32 | 0 u32`, the same bytes).
//! All integers little-endian. LSNs count user records (edges and vertex updates), so the
//! records in a block have LSNs `first_lsn .. first_lsn + records`.
//!
//! `durable_gap` is `first_lsn` minus the LSN the log was known durable up to when the block
//! was encoded (saturating; `u32::MAX` means unknown). Recovery uses it to tell a torn tail
//! (truncate) from a damaged block that was already durable (report corruption): a valid block
//! written after the damaged one, whose hint says the damaged one was durable, proves damage.

use crate::batch::{DenseBatch, Section};
use crate::types::{id_from_le, VertexId, ID_BYTES};
use crate::{Error, Result};

/// Bytes in a block header.
pub const HEADER_LEN: usize = 32;
// The header's fields as the layout above lists them; blocks stay 8-byte aligned.
const _: () = assert!(HEADER_LEN == 4 + 4 + 8 + 4 + 4 + 4 + 4 && HEADER_LEN.is_multiple_of(8));
// The magic spells "WBLK" in the file's little-endian bytes.
const _: () = assert!(u32::from_le_bytes(*b"WBLK") == MAGIC);
const MAGIC: u32 = 0x4B4C_4257; // "WBLK"
const KIND_DICT: u8 = 1;
const KIND_EDGES: u8 = 2;
const KIND_VERTICES: u8 = 3;
const KIND_WEIGHTED_EDGES: u8 = 4;
const KIND_TIME: u8 = 5;
/// The LSNs the block takes, when not one per update (FORMAT.md, "LSNs").
const KIND_SPAN: u8 = 6;
/// Added to the kinds of sections holding ids in 64-bit stores.
pub const WIDE_KIND: u8 = 16;
/// What this build adds to id-holding kinds.
const THIS_WIDTH: u8 = if crate::types::ID_BYTES == 8 {
    WIDE_KIND
} else {
    0
};

fn put32(out: &mut Vec<u8>, x: u32) {
    out.extend_from_slice(&x.to_le_bytes());
}

fn pad8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

/// Encodes `batch` as one commit block starting at `first_lsn`, appending to `out`.
/// `durable_lsn` is how far the log is known durable right now.
pub fn encode(batch: &DenseBatch, first_lsn: u64, durable_lsn: u64, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + HEADER_LEN, 0);
    let mut sections = 0u32;
    if !batch.new_ids.is_empty() {
        sections += 1;
        out.push(KIND_DICT);
        out.extend_from_slice(&[0; 3]);
        put32(out, batch.new_ids.len() as u32);
        out.extend_from_slice(&(batch.first_new_id as u64).to_le_bytes());
        out.extend_from_slice(bytemuck::cast_slice(&batch.new_ids));
    }
    if let Some(t) = batch.time {
        sections += 1;
        out.push(KIND_TIME);
        out.extend_from_slice(&[0; 3]);
        put32(out, 1);
        out.extend_from_slice(&t.to_le_bytes());
    }
    if let Some(n) = batch.span {
        sections += 1;
        out.push(KIND_SPAN);
        out.extend_from_slice(&[0; 3]);
        put32(out, 1);
        out.extend_from_slice(&n.to_le_bytes());
    }
    for s in &batch.sections {
        if s.is_empty() {
            continue;
        }
        sections += 1;
        match s {
            Section::Edges(e, w) => {
                out.push(
                    THIS_WIDTH
                        + if batch.weighted {
                            KIND_WEIGHTED_EDGES
                        } else {
                            KIND_EDGES
                        },
                );
                out.extend_from_slice(&[0; 3]);
                put32(out, e.len() as u32);
                out.extend_from_slice(bytemuck::cast_slice(e));
                if batch.weighted {
                    debug_assert_eq!(w.len(), e.len());
                    out.extend_from_slice(bytemuck::cast_slice(w));
                }
            }
            Section::Vertices(v) => {
                out.push(THIS_WIDTH + KIND_VERTICES);
                out.extend_from_slice(&[0; 3]);
                put32(out, v.len() as u32);
                out.extend_from_slice(bytemuck::cast_slice(v));
                pad8(out);
            }
        }
    }
    let payload_len = (out.len() - start - HEADER_LEN) as u32;
    let h = &mut out[start..start + HEADER_LEN];
    h[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    h[4..8].copy_from_slice(&payload_len.to_le_bytes());
    h[8..16].copy_from_slice(&first_lsn.to_le_bytes());
    h[16..20].copy_from_slice(&(batch.lsn_span() as u32).to_le_bytes());
    h[20..24].copy_from_slice(&sections.to_le_bytes());
    let gap = u32::try_from(first_lsn.saturating_sub(durable_lsn)).unwrap_or(u32::MAX);
    h[28..32].copy_from_slice(&gap.to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&out[start..start + 24]), &out[start + 28..]);
    out[start + 24..start + 28].copy_from_slice(&crc.to_le_bytes());
}

/// A block read back from the log.
#[derive(Debug)]
pub struct Block {
    /// LSN of the first record.
    pub first_lsn: u64,
    /// The LSNs it takes (FORMAT.md, "LSNs").
    pub records: u64,
    /// The decoded updates.
    pub batch: DenseBatch,
    /// Total encoded length, header included.
    pub len: usize,
    /// The log was durable at least up to this LSN when the block was encoded.
    pub durable_hint: u64,
}

fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn rd64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Why a block could not be read: the reader treats all of these as the end of the log.
#[derive(Debug, PartialEq, Eq)]
pub enum Invalid {
    /// Fewer bytes than a header, or than the header announces.
    Short,
    /// No block magic at this offset (zeros or stale data).
    NoMagic,
    /// The checksum does not match: a torn or corrupted write.
    Checksum,
}

/// What the header of a block says, read without checking its checksum: how much a cut
/// torn tail held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peeked {
    /// LSN of its first record.
    pub first_lsn: u64,
    /// Its records.
    pub records: u64,
    /// Its length, header included; 0 when its first 8 bytes (magic and length: the
    /// commit marker on cache-line media) never landed.
    pub len: usize,
}

/// The header at the start of `bytes`, if it reads as one: with its magic, or with magic and
/// length still zero (a group whose commit marker was not written yet).
pub fn peek_header(bytes: &[u8]) -> Option<Peeked> {
    let h = bytes.get(..HEADER_LEN)?;
    let records = rd32(h, 16) as u64;
    let len = match (rd32(h, 0), rd32(h, 4)) {
        (MAGIC, n) => HEADER_LEN + n as usize,
        (0, 0) if records > 0 => 0,
        _ => return None,
    };
    Some(Peeked {
        first_lsn: rd64(h, 8),
        records,
        len,
    })
}

/// Decodes the block at the start of `bytes`. A block that fails any check is [`Invalid`];
/// a block whose checksum holds but whose contents make no sense is [`Error::Corrupt`].
pub fn decode(bytes: &[u8]) -> Result<std::result::Result<Block, Invalid>> {
    if bytes.len() < HEADER_LEN {
        return Ok(Err(Invalid::Short));
    }
    if rd32(bytes, 0) != MAGIC {
        return Ok(Err(Invalid::NoMagic));
    }
    let len = HEADER_LEN + rd32(bytes, 4) as usize;
    if bytes.len() < len {
        return Ok(Err(Invalid::Short));
    }
    let crc = crc32c::crc32c_append(crc32c::crc32c(&bytes[..24]), &bytes[28..len]);
    if crc != rd32(bytes, 24) {
        return Ok(Err(Invalid::Checksum));
    }
    let first_lsn = rd64(bytes, 8);
    let records = rd32(bytes, 16) as u64;
    let gap = rd32(bytes, 28);
    let durable_hint = if gap == u32::MAX {
        0
    } else {
        first_lsn.saturating_sub(gap as u64)
    };
    let batch = Payload {
        p: &bytes[HEADER_LEN..len],
        at: 0,
        first_lsn,
    }
    .sections(rd32(bytes, 20))?;
    if batch.lsn_span() != records {
        return Err(corrupt_at(
            first_lsn,
            "record count does not match its sections",
        ));
    }
    Ok(Ok(Block {
        first_lsn,
        records,
        batch,
        len,
        durable_hint,
    }))
}

fn corrupt_at(first_lsn: u64, what: &str) -> Error {
    Error::corrupt(format!("WAL block at LSN {first_lsn}: {what}"))
}

/// A block's payload, read section by section (its checksum already held).
struct Payload<'a> {
    p: &'a [u8],
    at: usize,
    first_lsn: u64,
}

impl Payload<'_> {
    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let s = (self.p.get(self.at..self.at + n))
            .ok_or_else(|| corrupt_at(self.first_lsn, "section past the end"))?;
        self.at += n;
        Ok(s)
    }

    /// Reads `n` sections into a batch.
    fn sections(mut self, n: u32) -> Result<DenseBatch> {
        let mut batch = DenseBatch::default();
        for _ in 0..n {
            if self.at + 8 > self.p.len() {
                return Err(corrupt_at(self.first_lsn, "section header past the end"));
            }
            let kind = self.p[self.at];
            let count = rd32(self.p, self.at + 4) as usize;
            self.at += 8;
            let holds_ids = !matches!(kind, KIND_DICT | KIND_TIME | KIND_SPAN);
            if holds_ids && kind & WIDE_KIND != THIS_WIDTH {
                let width = if kind & WIDE_KIND != 0 { 64 } else { 32 };
                return Err(Error::corrupt(crate::types::width_mismatch(
                    &format!("WAL block at LSN {}", self.first_lsn),
                    width,
                )));
            }
            self.section(kind & !WIDE_KIND, count, &mut batch)?;
        }
        Ok(batch)
    }

    /// Reads one section of `kind` holding `count` entries into `batch`.
    fn section(&mut self, kind: u8, count: usize, batch: &mut DenseBatch) -> Result<()> {
        match kind {
            KIND_DICT => {
                let first = rd64(self.take(8)?, 0);
                batch.first_new_id = VertexId::try_from(first)
                    .map_err(|_| corrupt_at(self.first_lsn, "dense id past this build's width"))?;
                batch.new_ids = (self.take(count * 8)?.chunks_exact(8))
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                    .collect();
            }
            KIND_TIME if count == 1 && batch.time.is_none() => {
                batch.time = Some(i64::from_le_bytes(self.take(8)?.try_into().unwrap()));
            }
            KIND_TIME => return Err(corrupt_at(self.first_lsn, "a second commit time")),
            KIND_SPAN if count == 1 && batch.span.is_none() => {
                batch.span = Some(u64::from_le_bytes(self.take(8)?.try_into().unwrap()));
            }
            KIND_SPAN => return Err(corrupt_at(self.first_lsn, "a second LSN span")),
            KIND_EDGES | KIND_WEIGHTED_EDGES => {
                let edges = (self.take(count * 2 * ID_BYTES)?.chunks_exact(2 * ID_BYTES))
                    .map(|c| [id_from_le(c), id_from_le(&c[ID_BYTES..])])
                    .collect();
                let weights = if kind == KIND_WEIGHTED_EDGES {
                    batch.weighted = true;
                    (self.take(count * 8)?.chunks_exact(8))
                        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                        .collect()
                } else {
                    Vec::new()
                };
                batch.sections.push(Section::Edges(edges, weights));
            }
            KIND_VERTICES => {
                let raw = self.take(count * ID_BYTES)?;
                let ids = raw.chunks_exact(ID_BYTES).map(id_from_le).collect();
                batch.sections.push(Section::Vertices(ids));
                self.at = self.at.next_multiple_of(8);
            }
            k => {
                return Err(corrupt_at(
                    self.first_lsn,
                    &format!("unknown section kind {k}"),
                ))
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> DenseBatch {
        let mut b = DenseBatch {
            first_new_id: 7,
            new_ids: vec![100, 200, u64::MAX],
            // Before 1970: times are signed.
            time: Some(-1_234_567_890_123),
            ..Default::default()
        };
        b.push_edge(1, 2, false, 0.0);
        b.push_edge(3, 4, true, 0.0);
        b.push_vertex(9, true);
        b.push_edge(5, 6, false, 0.0);
        b
    }

    #[test]
    fn round_trip() {
        let b = sample();
        let mut buf = vec![];
        encode(&b, 42, 40, &mut buf);
        assert_eq!(buf.len() % 8, 0);
        let blk = decode(&buf).unwrap().unwrap();
        assert_eq!(blk.first_lsn, 42);
        assert_eq!(blk.records, 4);
        assert_eq!(blk.len, buf.len());
        assert_eq!(blk.durable_hint, 40);
        assert_eq!(blk.batch, b);
    }

    #[test]
    fn weighted_round_trip() {
        let mut b = DenseBatch {
            weighted: true,
            ..Default::default()
        };
        b.push_edge(1, 2, false, 0.5);
        b.push_vertex(3, false);
        b.push_edge(3, 4, true, 0.0);
        b.push_edge(5, 6, false, 1e300);
        let mut buf = vec![];
        encode(&b, 7, 7, &mut buf);
        assert_eq!(decode(&buf).unwrap().unwrap().batch, b);
    }

    #[test]
    fn ids_at_the_top_of_the_width_round_trip() {
        // The largest dense ids this build's width allows, next to the delete bit.
        let top = crate::types::MAX_VERTICES as VertexId - 1;
        let mut b = DenseBatch {
            first_new_id: top - 1,
            new_ids: vec![u64::MAX, 0],
            ..Default::default()
        };
        b.push_edge(top, top - 1, true, 0.0);
        b.push_edge(0, top, false, 0.0);
        b.push_vertex(top, true);
        let mut buf = vec![];
        encode(&b, 1, 0, &mut buf);
        let got = decode(&buf).unwrap().unwrap().batch;
        assert_eq!(got, b);
        let Section::Edges(e, _) = &got.sections[0] else {
            panic!("edges first")
        };
        assert!(crate::batch::is_del(e[0][1]) && crate::batch::id_of(e[0][1]) == top - 1);
    }

    #[test]
    fn a_block_of_the_other_id_width_is_refused_by_name() {
        let mut buf = vec![];
        encode(&sample(), 1, 0, &mut buf);
        // Turn the first id-holding section into the other width's kind; recompute the crc
        // so that only the width is wrong.
        // Past the dictionary section (3 ids) and the commit time section.
        let first_kind = HEADER_LEN + 8 + 8 + 3 * 8 + 16;
        buf[first_kind] ^= WIDE_KIND;
        let crc = crc32c::crc32c_append(crc32c::crc32c(&buf[..24]), &buf[28..]);
        buf[24..28].copy_from_slice(&crc.to_le_bytes());
        let e = decode(&buf).unwrap_err().to_string();
        assert!(e.contains("-bit vertex ids but this evograph"), "{e}");
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let mut buf = vec![];
        encode(&sample(), 1, 0, &mut buf);
        for i in 0..buf.len() {
            let mut c = buf.clone();
            c[i] ^= 0x10;
            assert!(
                !matches!(decode(&c), Ok(Ok(_))),
                "flip at byte {i} went unnoticed"
            );
        }
    }

    #[test]
    fn torn_block_is_short() {
        let mut buf = vec![];
        encode(&sample(), 1, 0, &mut buf);
        for cut in [0, 5, HEADER_LEN, buf.len() - 1] {
            assert!(matches!(decode(&buf[..cut]), Ok(Err(Invalid::Short))));
        }
    }
}
