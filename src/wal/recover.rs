//! Reading the log back after a crash or a clean close.
//!
//! Replay starts in the last segment whose first LSN is at or below the manifest's start LSN
//! and walks blocks in order. The first block that is short, has no magic, fails its checksum
//! or has an unexpected LSN is the durable end of the log, *unless* something written later is
//! intact and proves that point was already durable (a later segment, or a later block whose
//! durable hint covers it): then the log is damaged and recovery refuses with
//! [`Error::Corrupt`] rather than silently dropping acknowledged records.

use super::block::{self, Block};
use super::segment::{self, SegmentHeader};
use crate::medium::{Mapped, Medium};
use crate::{Error, Result};

/// A live segment of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// Sequence number.
    pub seq: u64,
    /// LSN of its first record.
    pub first_lsn: u64,
}

/// Where the recovered log ends and the writer continues.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Live segments, oldest first; the writer appends to the last.
    pub segments: Vec<SegmentInfo>,
    /// Byte offset in the last segment where the next block goes.
    pub end_offset: u64,
    /// LSN the next record will get.
    pub next_lsn: u64,
    /// Bytes of blocks replayed (at or after the start LSN).
    pub bytes_replayed: u64,
    /// Whether a torn tail was cut off.
    pub truncated_tail: bool,
}

/// Replays the log from `start_lsn`, calling `apply(block, skip)` for every block holding
/// records at or after it (`skip` records at the block's start are older and must be
/// skipped). Cuts a torn tail, removes segments past the end and segments wholly below the
/// start, and returns where writing continues.
pub fn recover(
    medium: &dyn Medium,
    start_lsn: u64,
    repair: bool,
    mut apply: impl FnMut(&Block, u64) -> Result<()>,
) -> Result<Recovered> {
    let mut all: Vec<u64> = medium
        .list()?
        .iter()
        .filter_map(|n| segment::parse_name(n))
        .collect();
    all.sort_unstable();
    let mut headers = Vec::with_capacity(all.len());
    for &seq in &all {
        let seg = medium.open(&segment::name(seq))?;
        let mut h = [0u8; segment::HEADER_LEN as usize];
        let hdr = if seg.len()? >= segment::HEADER_LEN {
            seg.read_at(0, &mut h)?;
            SegmentHeader::decode(&h).filter(|h| h.seq == seq)
        } else {
            None
        };
        headers.push((seq, hdr));
    }
    // Where replay starts: the last intact segment at or below the start LSN.
    let first = headers
        .iter()
        .rposition(|(_, h)| h.is_some_and(|h| h.first_lsn <= start_lsn));
    for (seq, h) in &headers {
        // The writer persists a segment's header before any block: a damaged header in
        // front of intact blocks of the live log is damage, never a torn write. Blocks
        // below the start LSN are what a recycled segment held in its earlier life: a
        // crash while it is being reused (its new header not yet durable) leaves them.
        if h.is_none() && holds_blocks(medium, *seq, start_lsn, repair)? {
            return Err(Error::corrupt(format!(
                "WAL segment {} has a damaged header but holds intact blocks",
                segment::name(*seq)
            )));
        }
    }
    let Some(first) = first else {
        if let Some((seq, Some(h))) = headers.iter().find(|(_, h)| h.is_some()) {
            if h.first_lsn > start_lsn {
                return Err(Error::corrupt(format!(
                    "WAL segment {} starts at LSN {} but the manifest needs LSN {start_lsn}: a segment is missing",
                    segment::name(*seq),
                    h.first_lsn
                )));
            }
        }
        if repair {
            for (seq, _) in &headers {
                medium.remove(&segment::name(*seq))?;
            }
        }
        return Ok(Recovered {
            next_lsn: start_lsn,
            ..Default::default()
        });
    };
    let mut out = Recovered {
        next_lsn: start_lsn,
        ..Default::default()
    };
    let mut expect: Option<u64> = None;
    let mut idx = first;
    let mut ended = false;
    while idx < headers.len() && !ended {
        let (seq, hdr) = headers[idx];
        let Some(hdr) = hdr else {
            // A header that never became durable can only belong to the newest segment.
            if headers[idx + 1..].iter().any(|(_, h)| h.is_some()) {
                return Err(Error::corrupt(format!(
                    "WAL segment {} has a damaged header but later segments exist",
                    segment::name(seq)
                )));
            }
            break;
        };
        if let Some(e) = expect {
            if hdr.first_lsn != e {
                return Err(Error::corrupt(format!(
                    "WAL segment {} starts at LSN {} but the previous one ends at {e}",
                    segment::name(seq),
                    hdr.first_lsn
                )));
            }
        }
        let mut lsn = hdr.first_lsn;
        let map = SegmentBytes::read(medium, seq, repair)?;
        let bytes = map.bytes();
        let mut off = segment::HEADER_LEN as usize;
        loop {
            match block::decode(&bytes[off.min(bytes.len())..])? {
                Ok(b) if b.first_lsn == lsn => {
                    let end = lsn + b.records;
                    if end > start_lsn {
                        apply(&b, start_lsn.saturating_sub(lsn))?;
                        out.bytes_replayed += b.len as u64;
                    }
                    lsn = end;
                    off += b.len;
                }
                _ => {
                    // The end of what was written here: torn, never written, or damaged.
                    check_tail_is_torn(bytes, off, lsn, seq)?;
                    if off < bytes.len() {
                        // Rotation cuts and persists a segment before starting the next, so
                        // garbage here with an intact later segment means damage, not a tear.
                        if let Some((s, _)) = headers[idx + 1..].iter().find(|(_, h)| h.is_some()) {
                            return Err(Error::corrupt(format!(
                                "WAL segment {} is damaged at byte {off} (LSN {lsn}) but segment {} follows it",
                                segment::name(seq),
                                segment::name(*s)
                            )));
                        }
                        out.truncated_tail = true;
                    }
                    break;
                }
            }
        }
        out.segments.push(SegmentInfo {
            seq,
            first_lsn: hdr.first_lsn,
        });
        out.end_offset = off as u64;
        out.next_lsn = lsn;
        expect = Some(lsn);
        drop(map);
        let seg = medium.open(&segment::name(seq))?;
        if (off as u64) < seg.len()? {
            // Cut the torn tail so that a later, shorter write cannot be followed by stale
            // blocks that happen to be intact.
            if repair {
                seg.set_len(off as u64)?;
                seg.persist()?;
            }
            ended = true;
        }
        idx += 1;
    }
    if out.next_lsn < start_lsn {
        return Err(Error::corrupt(format!(
            "WAL ends at LSN {} before the manifest's start LSN {start_lsn}: records are missing",
            out.next_lsn
        )));
    }
    // Drop segments past the end (never durable) and wholly below the start.
    let keep: Vec<u64> = out.segments.iter().map(|s| s.seq).collect();
    let mut removed = false;
    for (seq, _) in headers.iter().filter(|_| repair) {
        if !keep.contains(seq) {
            medium.remove(&segment::name(*seq))?;
            removed = true;
        }
    }
    if removed {
        medium.sync_dir()?;
    }
    Ok(out)
}

/// A segment's bytes: mapped when this process owns the log (`repair`), copied otherwise.
/// A read-only open may run beside a writer that cuts the segment (rotation, its own
/// recovery); a mapping would then fault past the new end, a copy just comes out short.
enum SegmentBytes {
    Mapped(Mapped),
    Copied(Vec<u8>),
}

impl SegmentBytes {
    fn read(medium: &dyn Medium, seq: u64, repair: bool) -> Result<SegmentBytes> {
        let seg = medium.open(&segment::name(seq))?;
        if repair {
            return Ok(SegmentBytes::Mapped(seg.map()?));
        }
        let mut buf = vec![0u8; seg.len()? as usize];
        // A segment cut between `len` and the read fails the read; the reader retries.
        seg.read_at(0, &mut buf)?;
        Ok(SegmentBytes::Copied(buf))
    }

    fn bytes(&self) -> &[u8] {
        match self {
            SegmentBytes::Mapped(m) => m.bytes(),
            SegmentBytes::Copied(v) => v,
        }
    }
}

/// Whether any intact block of records at or after `start_lsn` lies in segment `seq` past
/// its header.
fn holds_blocks(medium: &dyn Medium, seq: u64, start_lsn: u64, repair: bool) -> Result<bool> {
    let map = SegmentBytes::read(medium, seq, repair)?;
    let b = map.bytes();
    let mut at = segment::HEADER_LEN as usize;
    while at + block::HEADER_LEN <= b.len() {
        if let Ok(Ok(blk)) = block::decode(&b[at..]) {
            if blk.first_lsn + blk.records > start_lsn {
                return Ok(true);
            }
        }
        at += 8;
    }
    Ok(false)
}

/// Called at the first invalid block: errors if any intact block further on proves the
/// invalid one had been durable (its durable hint lies past `lsn`).
fn check_tail_is_torn(bytes: &[u8], off: usize, lsn: u64, seq: u64) -> Result<()> {
    let mut at = off + 8;
    while at + block::HEADER_LEN <= bytes.len() {
        if let Ok(Ok(b)) = block::decode(&bytes[at..]) {
            if b.durable_hint > lsn {
                return Err(Error::corrupt(format!(
                    "WAL segment {} is damaged at byte {off} (LSN {lsn}): a later block shows it was durable",
                    segment::name(seq)
                )));
            }
            at += b.len;
        } else {
            at += 8;
        }
    }
    Ok(())
}
