//! Reading the log back after a crash or a clean close.
//!
//! Replay starts in the last segment whose first LSN is at or below the manifest's start LSN
//! and walks blocks in order. The first block that is short, has no magic, fails its checksum
//! or has an unexpected LSN is the durable end of the log, *unless* something written later is
//! intact and proves that point was already durable (a later segment, or a later block whose
//! durable hint covers it): then the log is damaged and recovery refuses with
//! [`Error::Corrupt`] rather than silently dropping acknowledged records.
//!
//! A missing segment is never a torn tail. The first needed one gone shows as a gap before
//! the start LSN, a middle one as a gap between segments, the newest as the trailer of the
//! one before it naming a segment that is not there, and all of them as no segment at all
//! while the manifest says a writer had the log in use ([`Expect::log_in_use`]).

use super::block::{self, Block};
use super::progress::{self, Position, Progress};
use super::segment::{self, Layout, Life, SegmentHeader, Trailer};
use crate::medium::{Mapped, Medium};
use crate::{Error, Result};

/// A live segment of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// Sequence number.
    pub seq: u64,
    /// LSN of its first record.
    pub first_lsn: u64,
    /// Bytes of its header: where its first block starts.
    pub header_len: u64,
}

/// What the newest segment holds past the end of the log that reads: a tail a crash tore,
/// or damage (FORMAT.md, "The log's tail"). Recovery cuts it (or, read-only, would).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tail {
    /// The segment's file name.
    pub segment: String,
    /// Where reading stops: the end of the last block that reads.
    pub offset: u64,
    /// The LSN there: the first record lost.
    pub lsn: u64,
    /// Bytes after `offset` that are not zeros, or that the segment's progress record says
    /// its last write covered.
    pub bytes: u64,
    /// Blocks after `offset` whose headers still read: at least this many were lost.
    pub blocks: u64,
    /// Records lost, at least: those of the blocks whose headers still read, or of the
    /// last write the progress record describes, whichever is more.
    pub records: u64,
    /// Of those, records the progress record proves had been durable (and so perhaps
    /// acknowledged): only damage loses them.
    pub durable_records: u64,
    /// Why no crash can have left this tail; `None` when one can (the last write's blocks,
    /// torn within the pages it wrote).
    pub damage: Option<String>,
}

/// Where the recovered log ends and the writer continues.
#[derive(Clone, Debug, Default)]
pub struct Recovered {
    /// Live segments, oldest first; the writer appends to the last.
    pub segments: Vec<SegmentInfo>,
    /// Byte offset in the last segment where the next block goes.
    pub end_offset: u64,
    /// LSN the next record will get.
    pub next_lsn: u64,
    /// Bytes of blocks replayed (at or after the start LSN).
    pub bytes_replayed: u64,
    /// What the newest segment holds past the log's end, if anything (cut off when
    /// repairing).
    pub tail: Option<Tail>,
    /// Records of blocks that read past the newest segment's durable point, which a reader
    /// asked for [`Reach::Durable`] left out (a live writer's group in flight).
    pub held_back: u64,
}

/// What the manifest expects of the log.
pub struct Expect<'a> {
    /// Replay starts here: every earlier record is in the runs.
    pub start_lsn: u64,
    /// Whether a writer had the log in use: then the segments holding `start_lsn` on
    /// must exist.
    pub log_in_use: bool,
    /// Checks a segment's header against the root (its store, the commit it was made
    /// under), before any segment is replayed or repaired; its error refuses the store.
    pub header_ok: &'a dyn Fn(&str, &SegmentHeader) -> Result<()>,
    /// How far a reader (no repair) replays the newest segment; a writer's recovery reads
    /// every block that reads, whatever this says.
    pub reach: Reach,
}

/// How far into the newest segment a reader replays (FORMAT.md, "What a reader in another
/// process may rely on").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reach {
    /// Up to its progress record's durable point: the blocks a live writer has made
    /// durable (under `sync`, every acknowledged batch), not a group still in flight.
    #[default]
    Durable,
    /// Every block that reads, durable or not.
    Written,
}

/// Replays the log from `expect.start_lsn`, calling `apply(block, skip)` for every block
/// holding records at or after it (`skip` records at the block's start are older and must be
/// skipped). With `repair`, cuts a torn tail, removes segments past the end and segments
/// wholly below the start, and returns where writing continues.
pub fn recover(
    medium: &dyn Medium,
    expect: &Expect,
    repair: bool,
    mut apply: impl FnMut(&Block, u64) -> Result<()>,
) -> Result<Recovered> {
    let start_lsn = expect.start_lsn;
    let headers = read_headers(medium, expect)?;
    refuse_damaged_headers(medium, &headers, start_lsn, repair)?;
    // Where replay starts: the last intact segment at or below the start LSN.
    let Some(first) = headers
        .iter()
        .rposition(|(_, h)| h.is_some_and(|h| h.first_lsn <= start_lsn))
    else {
        return no_segment_at_start(medium, &headers, expect, repair);
    };
    let mut out = Recovered {
        next_lsn: start_lsn,
        ..Default::default()
    };
    // One buffer for every segment a reader copies: a fresh one per segment (64 MiB) was
    // a page fault and a zeroed page per 4 KiB, a seventh of a reader's work.
    let mut spare = Vec::new();
    for idx in first..headers.len() {
        let (seq, hdr) = headers[idx];
        let Some(hdr) = hdr else {
            refuse_unreadable_header_before(seq, &headers[idx + 1..])?;
            break;
        };
        if idx > first && hdr.first_lsn != out.next_lsn {
            return Err(Error::corrupt(format!(
                "WAL segment {} starts at LSN {} but the previous one ends at {}: a segment between them is missing",
                segment::name(seq),
                hdr.first_lsn,
                out.next_lsn
            )));
        }
        let later = headers[idx + 1..].iter().find(|(_, h)| h.is_some());
        let place = match later {
            Some(_) => Place::Followed,
            None => Place::Newest,
        };
        let limit = Limit::of(repair, expect.reach, place);
        let end = replay_segment(
            medium,
            &hdr,
            (place, limit),
            start_lsn,
            (repair, &mut spare),
            &mut apply,
        )?;
        out.bytes_replayed += end.bytes_replayed;
        out.segments.push(SegmentInfo {
            seq,
            first_lsn: hdr.first_lsn,
            header_len: hdr.header_len(),
        });
        out.end_offset = end.offset;
        out.next_lsn = end.lsn;
        if !settle_end(medium, &hdr, &end, later.map(|&(s, _)| s), repair)? {
            out.tail = end.tail;
            if let Some(at) = end.held_back {
                // The tail was judged where the blocks end; the reader's log ends here.
                out.held_back = end.lsn - at.lsn;
                (out.end_offset, out.next_lsn) = (at.offset as u64, at.lsn);
            }
            break;
        }
    }
    if out.next_lsn < start_lsn {
        return Err(Error::corrupt(format!(
            "WAL ends at LSN {} before the manifest's start LSN {start_lsn}: records are missing",
            out.next_lsn
        )));
    }
    if repair {
        remove_unused(medium, &headers, &out.segments)?;
    }
    Ok(out)
}

/// A header that never became durable can only belong to the newest segment: refuses
/// segment `seq`'s, which does not read, if a readable one is among `later`.
fn refuse_unreadable_header_before(seq: u64, later: &[(u64, Option<SegmentHeader>)]) -> Result<()> {
    match later.iter().find(|(_, h)| h.is_some()) {
        Some((s, _)) => Err(Error::corrupt(format!(
            "WAL segment {} has a damaged header but segment {} follows it",
            segment::name(seq),
            segment::name(*s)
        ))),
        None => Ok(()),
    }
}

/// Every segment's number and header (`None` when it does not read), each readable one
/// checked by [`Expect::header_ok`].
fn read_headers(medium: &dyn Medium, expect: &Expect) -> Result<Vec<(u64, Option<SegmentHeader>)>> {
    let mut all: Vec<u64> = medium
        .list()?
        .iter()
        .filter_map(|n| segment::parse_name(n))
        .collect();
    all.sort_unstable();
    let mut headers = Vec::with_capacity(all.len());
    for seq in all {
        let name = segment::name(seq);
        let seg = medium.open(&name)?;
        let mut h = [0u8; segment::HEADER_LEN as usize];
        let n = seg.len()?.min(segment::HEADER_LEN) as usize;
        seg.read_at(0, &mut h[..n])?;
        let hdr = SegmentHeader::decode(&h[..n]).filter(|h| h.seq == seq);
        if let Some(h) = &hdr {
            (expect.header_ok)(&name, h)?;
        }
        headers.push((seq, hdr));
    }
    Ok(headers)
}

/// The writer persists a segment's header before any block: a damaged header in front of
/// intact blocks of the live log is damage, never a torn write. Blocks below the start LSN
/// are what a recycled segment held in its earlier life: a crash while it is being reused
/// (its new header not yet durable) leaves them.
fn refuse_damaged_headers(
    medium: &dyn Medium,
    headers: &[(u64, Option<SegmentHeader>)],
    start_lsn: u64,
    repair: bool,
) -> Result<()> {
    for (seq, h) in headers {
        if h.is_none() && holds_blocks(medium, *seq, start_lsn, repair)? {
            return Err(Error::corrupt(format!(
                "WAL segment {} has a damaged header but holds intact blocks",
                segment::name(*seq)
            )));
        }
    }
    Ok(())
}

/// No segment holds the start LSN: the log is empty, unless the manifest needs it.
fn no_segment_at_start(
    medium: &dyn Medium,
    headers: &[(u64, Option<SegmentHeader>)],
    expect: &Expect,
    repair: bool,
) -> Result<Recovered> {
    let start_lsn = expect.start_lsn;
    if let Some((seq, Some(h))) = headers.iter().find(|(_, h)| h.is_some()) {
        return Err(Error::corrupt(format!(
            "WAL segment {} starts at LSN {} but the manifest needs LSN {start_lsn}: a segment is missing",
            segment::name(*seq),
            h.first_lsn
        )));
    }
    if expect.log_in_use {
        // A segment whose header does not read is the one to blame, by name.
        let unread: Vec<String> = headers.iter().map(|(s, _)| segment::name(*s)).collect();
        let why = match unread.as_slice() {
            [] => "a wal-*.log file was deleted".to_string(),
            names => format!(
                "{} is there, but its header does not read (cut short or damaged)",
                names.join(", ")
            ),
        };
        return Err(Error::corrupt(format!(
            "the manifest needs the WAL from LSN {start_lsn} (the store was not closed cleanly) but no WAL segment holds it: {why}"
        )));
    }
    if repair {
        for (seq, _) in headers {
            medium.remove(&segment::name(*seq))?;
        }
    }
    Ok(Recovered {
        next_lsn: start_lsn,
        ..Default::default()
    })
}

/// How one segment's blocks ended.
struct SegmentEnd {
    /// Where its last valid block ends.
    offset: u64,
    /// The LSN after its last valid record.
    lsn: u64,
    /// Bytes of blocks replayed.
    bytes_replayed: u64,
    /// The trailer rotation left after the blocks, if whole.
    trailer: Option<Trailer>,
    /// What lies past the blocks, judged as the newest segment's tail.
    tail: Option<Tail>,
    /// Whether that is no more than a trailer torn by a crash during rotation.
    torn_trailer: bool,
    /// The segment's progress record, for repairing it (segments with a header page).
    progress: Option<Progress>,
    /// The segment's length as its header records it (segments with a header page).
    len: Option<u64>,
    /// The file's length.
    file_len: u64,
    /// Where replay stopped short of `offset`: the durable point of a segment replayed to
    /// [`Limit::Durable`], when blocks that read follow it.
    held_back: Option<At>,
}

/// Where a segment stands in the log: a rotation ends every segment but the newest with a
/// trailer, which a crash may have torn.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// No later segment follows it.
    Newest,
    /// A later segment follows it.
    Followed,
}

/// How far one segment is replayed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Limit {
    /// To its progress record's durable point (a reader's newest segment).
    Durable,
    /// To its last block that reads.
    Written,
}

impl Limit {
    /// A reader that asked for [`Reach::Durable`] stops in the newest segment (one that no
    /// newest segment); every segment before it is durable whole, and a writer's
    /// recovery reads everything.
    fn of(repair: bool, reach: Reach, place: Place) -> Limit {
        match (repair, reach, place) {
            (false, Reach::Durable, Place::Newest) => Limit::Durable,
            _ => Limit::Written,
        }
    }
}

/// Replays the blocks of one segment (at `place` in the log), checking that whatever
/// follows the last valid one cannot be a block made durable before it was damaged.
fn replay_segment(
    medium: &dyn Medium,
    hdr: &SegmentHeader,
    (place, limit): (Place, Limit),
    start_lsn: u64,
    (repair, spare): (bool, &mut Vec<u8>),
    apply: &mut impl FnMut(&Block, u64) -> Result<()>,
) -> Result<SegmentEnd> {
    let map = SegmentBytes::read_into(medium, hdr.seq, repair, std::mem::take(spare))?;
    let end = replay_bytes(map.bytes(), hdr, (place, limit), start_lsn, apply);
    *spare = map.into_spare();
    end
}

/// [`replay_segment`] on the segment's bytes.
fn replay_bytes(
    bytes: &[u8],
    hdr: &SegmentHeader,
    (place, limit): (Place, Limit),
    start_lsn: u64,
    apply: &mut impl FnMut(&Block, u64) -> Result<()>,
) -> Result<SegmentEnd> {
    let durable = durable_lsn(bytes, hdr, limit).map(|d| d.max(start_lsn));
    let mut lsn = hdr.first_lsn;
    let mut off = hdr.header_len() as usize;
    let mut replayed = 0;
    let mut held_back = None;
    // Blocks past the durable point are read on, unapplied: the tail is judged where the
    // blocks end, as a writer's recovery would judge it.
    while let Ok(b) = block::decode(&bytes[off.min(bytes.len())..])? {
        if b.first_lsn != lsn {
            break;
        }
        let end = lsn + b.records;
        if held_back.is_none() && durable.is_some_and(|d| end > d) {
            held_back = Some(At { offset: off, lsn });
        }
        if end > start_lsn && held_back.is_none() {
            apply(&b, start_lsn.saturating_sub(lsn))?;
            replayed += b.len as u64;
        }
        lsn = end;
        off += b.len;
    }
    let rest = bytes.get(off..).unwrap_or_default();
    let trailer = Trailer::decode(rest).filter(|t| t.end_lsn == lsn && t.next_seq == hdr.seq + 1);
    let at = At { offset: off, lsn };
    let (tail, torn_trailer, progress) = match hdr.layout {
        _ if trailer.is_some() => (None, false, None),
        Layout::Grown => grown_tail(bytes, hdr.seq, at)?,
        Layout::Paged { len, life } => paged_tail(bytes, hdr.seq, at, len, (life, place))?,
    };
    Ok(SegmentEnd {
        offset: off as u64,
        lsn,
        bytes_replayed: replayed,
        trailer,
        tail,
        torn_trailer,
        progress,
        len: match hdr.layout {
            Layout::Paged { len, .. } => Some(len),
            Layout::Grown => None,
        },
        file_len: bytes.len() as u64,
        held_back,
    })
}

/// The durable point a segment replayed to `limit` stops at: its progress record's, when
/// it has a header page whose record reads (a segment of an earlier format, or one whose
/// record does not read, is replayed whole, as before).
fn durable_lsn(bytes: &[u8], hdr: &SegmentHeader, limit: Limit) -> Option<u64> {
    if limit != Limit::Durable || !matches!(hdr.layout, Layout::Paged { .. }) {
        return None;
    }
    let page = &bytes[..bytes.len().min(segment::PAGE_LEN as usize)];
    progress::read(page).newest.map(|p| p.durable.lsn)
}

/// How far a live writer has acknowledged its log, as the progress record of its newest
/// segment names it (the durable point, published before the batches under it are
/// acknowledged): every batch acknowledged under `sync` so far ends at or before it. A
/// reader that loaded at least this far holds every batch acknowledged before it looked.
/// `None` when the newest segment is of an earlier format, or its header or record does
/// not read (it may be in the middle of being made).
pub fn acknowledged_lsn(medium: &dyn Medium) -> Option<u64> {
    let list = medium.list().ok()?;
    let newest = list.iter().filter_map(|n| segment::parse_name(n)).max()?;
    let seg = medium.open(&segment::name(newest)).ok()?;
    let mut page = vec![0u8; segment::PAGE_LEN as usize];
    let n = seg.len().ok()?.min(segment::PAGE_LEN) as usize;
    seg.read_at(0, &mut page[..n]).ok()?;
    let hdr = SegmentHeader::decode(&page[..n]).filter(|h| h.seq == newest)?;
    if !matches!(hdr.layout, Layout::Paged { .. }) {
        return None;
    }
    progress::read(&page[..n]).newest.map(|p| p.durable.lsn)
}

/// Where reading a segment stopped: its byte offset and the LSN expected there.
#[derive(Clone, Copy)]
struct At {
    offset: usize,
    lsn: u64,
}

/// The tail of a segment of an earlier format (no header page): whatever is not zeros
/// after the last block, up to the first block an earlier life of a recycled file left. A
/// crash can leave any of it. Also whether it is no more than a torn trailer.
fn grown_tail(bytes: &[u8], seq: u64, at: At) -> Result<(Option<Tail>, bool, Option<Progress>)> {
    let stale = scan_tail(bytes, at.offset, bytes.len(), at.lsn, seq)?;
    let tail = &bytes[at.offset.min(stale)..stale];
    let Some(nonzero) = last_nonzero(tail).map(|i| i as u64 + 1) else {
        return Ok((None, false, None));
    };
    let (blocks, records) = readable_blocks(tail, at.lsn);
    let t = Tail {
        segment: segment::name(seq),
        offset: at.offset as u64,
        lsn: at.lsn,
        bytes: nonzero,
        blocks,
        records,
        durable_records: 0,
        damage: None,
    };
    Ok((Some(t), nonzero <= segment::TRAILER_LEN as u64, None))
}

/// The tail of a segment with a header page, judged by its length and progress record: a
/// crash can leave the blocks of writes made after the record torn, within
/// [`progress::reserve`] of its `written` end (the writer persists a newer record before it
/// writes further), nothing else.
fn paged_tail(
    bytes: &[u8],
    seq: u64,
    at: At,
    len: u64,
    (life, place): (Life, Place),
) -> Result<(Option<Tail>, bool, Option<Progress>)> {
    let file_len = bytes.len() as u64;
    let page = &bytes[..bytes.len().min(segment::PAGE_LEN as usize)];
    let recorded = progress::read(page);
    let p = recorded.newest.unwrap_or_default();
    let x = at.offset as u64;
    let Window { reach, limit } = crash_window(bytes, &p, at, len, (life, place));
    // A file cut inside its header page ends before its first block.
    let from = at.offset.min(bytes.len());
    let end = from + last_nonzero(&bytes[from.min(limit)..limit]).map_or(0, |i| i + 1);
    // A block starts with its magic, so none starts at or past `end`; one may end past it
    // in zeros of its own.
    scan_tail(&bytes[..limit], from, end, at.lsn, seq)?;
    let nonzero = end as u64;
    let damage = if file_len < len {
        Some(format!(
            "the file is {file_len} bytes long but its header says {len}: it was cut short"
        ))
    } else if let Some(why) = recorded.damage() {
        Some(why.to_string())
    } else if p.durable.offset > x {
        Some(format!(
            "its progress record says the log was durable to byte {} (LSN {}), past where it now ends",
            p.durable.offset, p.durable.lsn
        ))
    } else if life == Life::Fresh && p.written.offset >= x && nonzero > reach {
        Some(format!(
            "it holds bytes that are not zeros past byte {reach}, beyond where writes after its progress record can reach"
        ))
    } else {
        None
    };
    let lost = nonzero.max(p.written.offset);
    if damage.is_none() && lost <= x {
        return Ok((None, false, recorded.newest));
    }
    let (blocks, records) = readable_blocks(&bytes[from..end.max(from)], at.lsn);
    let t = Tail {
        segment: segment::name(seq),
        offset: x,
        lsn: at.lsn,
        bytes: lost.saturating_sub(x),
        blocks,
        records: records.max(p.written.lsn.saturating_sub(at.lsn)),
        durable_records: p.durable.lsn.saturating_sub(at.lsn),
        damage,
    };
    let torn_trailer = t.damage.is_none()
        && p.written.offset <= x
        && nonzero.saturating_sub(x) <= segment::TRAILER_LEN as u64;
    Ok((Some(t), torn_trailer, recorded.newest))
}

/// Where the bytes a crash can have written past the log's end lie in a segment with a
/// header page.
struct Window {
    /// Past this page a fresh file holds zeros.
    reach: u64,
    /// Where the bytes judged as the tail end (a recycled file's earlier life lies past).
    limit: usize,
}

/// The bytes a crash may have written: the writes' made since the record `p` (within the
/// reserve of its `written` end), and a trailer after them in a segment that rotation
/// ended ([`Place::Followed`]). A fresh file holds zeros past the page where they can end; a
/// recycled one, past them, what its earlier life left there (media that write whole pages
/// pad the page with zeros).
fn crash_window(
    bytes: &[u8],
    p: &Progress,
    at: At,
    len: u64,
    (life, place): (Life, Place),
) -> Window {
    let file_len = bytes.len() as u64;
    let x = at.offset as u64;
    let end_of_write = (p.written.offset + progress::reserve(len)).max(x);
    let trailer = match place {
        Place::Followed => segment::TRAILER_LEN as u64,
        Place::Newest => 0,
    };
    let reach = (end_of_write + segment::TRAILER_LEN as u64)
        .next_multiple_of(segment::PAGE_LEN)
        .min(file_len);
    let from = at.offset.min(bytes.len());
    // In a recycled file only the recorded write's bytes, and intact blocks of this life
    // past them (a later write whose record a power cut lost), count: they must be cut, or
    // a later, shorter write could be followed by them. Torn ones cannot be read on into.
    let limit = match life {
        Life::Recycled => {
            let to = end_of_write.min(file_len) as usize;
            (p.written.offset + trailer)
                .max(new_blocks_end(bytes, from, to, at.lsn))
                .max(x)
                .min(file_len)
        }
        Life::Fresh => file_len,
    } as usize;
    Window { reach, limit }
}

/// Where the last intact block of this life (records at or past `lsn`) that starts in
/// `bytes[from..to]` ends, or `from` if none does.
fn new_blocks_end(bytes: &[u8], from: usize, to: usize, lsn: u64) -> u64 {
    let mut end = from;
    let mut at = from;
    while at < to && at + block::HEADER_LEN <= bytes.len() {
        match block::decode(&bytes[at..]) {
            Ok(Ok(b)) if b.first_lsn >= lsn => {
                end = at + b.len;
                at += b.len;
            }
            _ => at += 8,
        }
    }
    end as u64
}

/// The index of the last byte of `b` that is not zero.
fn last_nonzero(b: &[u8]) -> Option<usize> {
    // Whole words from the end first: a preallocated segment is mostly zeros.
    let mut end = b.len();
    while end >= 8 && b[end - 8..end] == [0u8; 8] {
        end -= 8;
    }
    b[..end].iter().rposition(|&x| x != 0)
}

/// Decides what the end of segment `hdr` means, given the next intact segment `later`
/// (if any): whether replay goes on into it. Cuts a torn tail when repairing.
fn settle_end(
    medium: &dyn Medium,
    hdr: &SegmentHeader,
    end: &SegmentEnd,
    later: Option<u64>,
    repair: bool,
) -> Result<bool> {
    let name = segment::name(hdr.seq);
    if let Some(t) = end.trailer {
        if later != Some(t.next_seq) {
            return Err(Error::corrupt(format!(
                "WAL segment {name} ends saying the log goes on in {}, which is missing: records from LSN {} on are lost",
                segment::name(t.next_seq),
                t.end_lsn
            )));
        }
    }
    match (later, &end.tail) {
        // Rotation cuts and persists a segment before starting the next, so more than a
        // trailer torn by a crash during rotation, with an intact later segment, is damage.
        (Some(s), Some(_)) if !(end.trailer.is_none() && end.torn_trailer) => {
            Err(Error::corrupt(format!(
                "WAL segment {name} is damaged at byte {} (LSN {}) but segment {} follows it",
                end.offset,
                end.lsn,
                segment::name(s)
            )))
        }
        (Some(_), _) => Ok(true),
        (None, tail) => {
            if repair && end.trailer.is_none() {
                cut_tail(medium, &name, end, tail.as_ref())?;
            }
            Ok(false)
        }
    }
}

/// Cuts the newest segment's tail, so that a later, shorter write cannot be followed by
/// blocks of the torn one that happen to be intact. A segment of an earlier format is cut
/// short at its last block; one with a header page keeps its length (restored, if it was
/// cut short): its torn bytes are zeroed and its progress record says the log ends here.
fn cut_tail(medium: &dyn Medium, name: &str, end: &SegmentEnd, tail: Option<&Tail>) -> Result<()> {
    let seg = medium.open(name)?;
    let Some(len) = end.len else {
        if end.offset < end.file_len {
            seg.set_len(end.offset)?;
            seg.persist()?;
        }
        return Ok(());
    };
    let Some(t) = tail else {
        return Ok(());
    };
    if end.file_len < len {
        seg.set_len(len)?;
    }
    let torn_end = (t.offset + t.bytes).min(end.file_len);
    if torn_end > t.offset {
        seg.write_at(t.offset, &vec![0u8; (torn_end - t.offset) as usize])?;
    }
    let mut page = vec![0u8; segment::PAGE_LEN as usize];
    seg.read_at(0, &mut page)?;
    let here = Position {
        offset: end.offset,
        lsn: end.lsn,
    };
    let fresh = Progress {
        seq: end.progress.map_or(0, |p| p.seq) + 1,
        durable: here,
        written: here,
    };
    fresh.put(&mut page);
    // The other slot too: both must read, or the next reader counts a damaged one.
    Progress {
        seq: fresh.seq + 1,
        ..fresh
    }
    .put(&mut page);
    seg.write_at(0, &page)?;
    seg.persist()
}

/// Removes segments past the end (never durable) and wholly below the start.
fn remove_unused(
    medium: &dyn Medium,
    headers: &[(u64, Option<SegmentHeader>)],
    keep: &[SegmentInfo],
) -> Result<()> {
    let mut removed = false;
    for (seq, _) in headers {
        if !keep.iter().any(|k| k.seq == *seq) {
            medium.remove(&segment::name(*seq))?;
            removed = true;
        }
    }
    if removed {
        medium.sync_dir()?;
    }
    Ok(())
}

/// Blocks at the start of `tail` whose headers still read (magic, and the LSN the log
/// expects next), however damaged their bodies, and their records: what a cut loses.
fn readable_blocks(tail: &[u8], mut lsn: u64) -> (u64, u64) {
    let mut at = 0;
    let (mut blocks, mut records) = (0, 0);
    while let Some(h) = block::peek_header(tail.get(at..).unwrap_or_default()) {
        if h.first_lsn != lsn {
            break;
        }
        blocks += 1;
        records += h.records;
        lsn += h.records;
        if h.len == 0 {
            break;
        }
        at += h.len;
    }
    (blocks, records)
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
        Self::read_into(medium, seq, repair, Vec::new())
    }

    /// Segment `seq` mapped (`repair`: a writer's recovery) or copied into `buf`, whose
    /// bytes are overwritten (a buffer already as long costs no page faults).
    fn read_into(
        medium: &dyn Medium,
        seq: u64,
        repair: bool,
        mut buf: Vec<u8>,
    ) -> Result<SegmentBytes> {
        let seg = medium.open(&segment::name(seq))?;
        if repair {
            return Ok(SegmentBytes::Mapped(seg.map()?));
        }
        // Only bytes past the old length are zeroed: the read overwrites the rest.
        buf.resize(seg.len()? as usize, 0);
        // A segment cut between `len` and the read fails the read; the reader retries.
        seg.read_at(0, &mut buf)?;
        Ok(SegmentBytes::Copied(buf))
    }

    /// The copy's buffer, for the next segment (nothing for a mapping).
    fn into_spare(self) -> Vec<u8> {
        match self {
            SegmentBytes::Mapped(_) => Vec::new(),
            SegmentBytes::Copied(buf) => buf,
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            SegmentBytes::Mapped(m) => m.bytes(),
            SegmentBytes::Copied(v) => v,
        }
    }
}

/// Whether any intact block of records at or after `start_lsn` lies in segment `seq` past
/// its header (of either length).
fn holds_blocks(medium: &dyn Medium, seq: u64, start_lsn: u64, repair: bool) -> Result<bool> {
    let map = SegmentBytes::read(medium, seq, repair)?;
    let b = map.bytes();
    let mut at = segment::LEGACY_HEADER_LEN as usize;
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

/// Called at the first invalid block, at byte `off`: errors if any intact block starting
/// before `starts_before` proves the invalid one had been durable (its durable hint lies
/// past `lsn`). Returns where the first intact block from an earlier life of the file starts
/// (its records lie below `lsn`), or the end of `bytes`.
fn scan_tail(bytes: &[u8], off: usize, starts_before: usize, lsn: u64, seq: u64) -> Result<usize> {
    let mut stale = None;
    let mut at = off;
    while at + block::HEADER_LEN <= bytes.len() && at < starts_before {
        if let Ok(Ok(b)) = block::decode(&bytes[at..]) {
            if b.durable_hint > lsn {
                return Err(Error::corrupt(format!(
                    "WAL segment {} is damaged at byte {off} (LSN {lsn}): a later block shows it was durable",
                    segment::name(seq)
                )));
            }
            if b.first_lsn + b.records <= lsn {
                stale.get_or_insert(at);
            }
            at += b.len;
        } else {
            at += 8;
        }
    }
    Ok(stale.unwrap_or(bytes.len()).max(off))
}
