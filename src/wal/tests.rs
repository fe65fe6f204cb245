//! The log as a whole: segments written by the writer, read back by recovery, and what
//! recovery makes of segments deleted, trailers torn and tails cut.

use super::block;
use super::progress;
use super::recover::{acknowledged_lsn, recover, Expect, Reach, Recovered};
use super::segment::{self, SegmentHeader};
use super::writer::{LogStamps, Wal};
use crate::batch::DenseBatch;
use crate::medium::memory::MemoryMedium;
use crate::medium::sim::{SimMedium, Tear};
use crate::medium::{Medium, SegmentFile};
use crate::types::{Durability, VertexId};
use crate::Result;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Blocks of 10 records each; segments of 512 bytes hold a few.
const SEGMENT: u64 = 512;

fn stamps() -> LogStamps {
    LogStamps {
        store_id: 77,
        committed: Arc::new(AtomicU64::new(3)),
    }
}

fn any_header(_: &str, h: &SegmentHeader) -> Result<()> {
    assert_eq!(h.stamp.map(|s| s.store_id), Some(77));
    Ok(())
}

fn read_back(m: &MemoryMedium, log_in_use: bool) -> Result<(Recovered, u64)> {
    read_back_from(m, log_in_use)
}

fn read_back_from(m: &dyn Medium, log_in_use: bool) -> Result<(Recovered, u64)> {
    read_back_after(m, log_in_use, 0)
}

/// Reads the log back from `start_lsn` (segments wholly below it may be gone).
fn read_back_after(m: &dyn Medium, log_in_use: bool, start_lsn: u64) -> Result<(Recovered, u64)> {
    recover_after(m, log_in_use, start_lsn, false)
}

/// Recovers the log from `start_lsn`, cutting its tail with `repair` as a writer does.
fn recover_after(
    m: &dyn Medium,
    log_in_use: bool,
    start_lsn: u64,
    repair: bool,
) -> Result<(Recovered, u64)> {
    let mut records = 0;
    let rec = recover(
        m,
        &Expect {
            start_lsn,
            log_in_use,
            header_ok: &any_header,
            reach: Reach::Written,
        },
        repair,
        |b, skip| {
            records += b.records - skip;
            Ok(())
        },
    )?;
    Ok((rec, records))
}

/// A log of `batches` blocks of 10 records, in segments of [`SEGMENT`] bytes, its writer
/// stopped without retiring anything (as a crash leaves it).
fn written(batches: u64) -> Arc<MemoryMedium> {
    let m = Arc::new(MemoryMedium::new());
    let wal = Wal::start(
        m.clone(),
        Recovered::default(),
        Durability::Sync,
        SEGMENT,
        Vec::new(),
        stamps(),
    )
    .unwrap();
    for i in 0..batches {
        let mut b = DenseBatch::default();
        for j in 0..10 {
            b.push_edge(j, j + 1, false, 0.0);
        }
        let end = wal.submit(&b, i * 10).unwrap();
        wal.wait_durable(end).unwrap();
    }
    wal.shutdown(false).unwrap();
    m
}

fn segments(m: &MemoryMedium) -> Vec<String> {
    segments_of(m)
}

fn segments_of(m: &dyn Medium) -> Vec<String> {
    let mut v: Vec<String> = (m.list().unwrap().into_iter())
        .filter(|n| segment::parse_name(n).is_some())
        .collect();
    v.sort();
    v
}

#[test]
fn rotation_ends_each_segment_with_a_trailer_naming_the_next() {
    let m = written(20);
    let segs = segments(&m);
    assert!(segs.len() >= 3, "{segs:?}");
    let (rec, records) = read_back(&m, true).unwrap();
    assert_eq!((records, rec.next_lsn, rec.tail), (200, 200, None));
    for (i, name) in segs[..segs.len() - 1].iter().enumerate() {
        let b = m.open(name).unwrap().map().unwrap();
        let t = (0..b.bytes().len())
            .step_by(8)
            .find_map(|at| segment::Trailer::decode(&b.bytes()[at..]))
            .unwrap_or_else(|| panic!("{name} has no trailer"));
        assert_eq!(t.next_seq, i as u64 + 2, "{name}");
    }
}

#[test]
fn a_deleted_segment_is_missing_log_wherever_it_was() {
    let segs = segments(&written(20));
    for (i, name) in segs.iter().enumerate() {
        let m = written(20);
        m.remove(name).unwrap();
        let e = read_back(&m, true)
            .err()
            .unwrap_or_else(|| panic!("{name} deleted, and read"));
        let msg = e.to_string();
        assert!(
            msg.contains("missing") && msg.contains("WAL"),
            "{name}: {msg}"
        );
        let newest = i + 1 == segs.len();
        assert!(!newest || msg.contains(name), "the newest: {msg}");
    }
    // All of them: missing while the root says the log is in use; nothing to read when
    // the store was closed cleanly.
    let m = written(20);
    for name in &segs {
        m.remove(name).unwrap();
    }
    let msg = read_back(&m, true).err().unwrap().to_string();
    assert!(msg.contains("no WAL segment holds it"), "{msg}");
    let (rec, records) = read_back(&m, false).unwrap();
    assert_eq!((records, rec.next_lsn), (0, 0));
}

#[test]
fn a_trailer_torn_by_a_crash_during_rotation_reads_on_into_the_next_segment() {
    let m = written(20);
    let first = &segments(&m)[0];
    let seg = m.open(first).unwrap();
    let b = seg.map().unwrap().bytes().to_vec();
    let at = (0..b.len())
        .step_by(8)
        .find(|&at| segment::Trailer::decode(&b[at..]).is_some())
        .unwrap();
    // Half the trailer landed, or none of it, or all but its checksum.
    for torn in [&b[at..at + 16], &[][..], &b[at..at + 24]] {
        seg.write_at(at as u64, &[0u8; segment::TRAILER_LEN])
            .unwrap();
        seg.write_at(at as u64, torn).unwrap();
        let (rec, records) = read_back(&m, true).unwrap();
        assert_eq!((records, rec.tail), (200, None));
    }
    // More than a trailer's worth of garbage before a later segment is damage.
    seg.write_at(at as u64, &[0xAB; 40]).unwrap();
    assert!(read_back(&m, true).is_err());
}

/// The newest segment of `m`, open, and its bytes as they are now.
fn newest_segment(m: &MemoryMedium) -> (Box<dyn SegmentFile>, Vec<u8>) {
    let seg = m.open(&segments(m).pop().unwrap()).unwrap();
    let b = seg.map().unwrap().bytes().to_vec();
    (seg, b)
}

/// The offset where the last block of segment bytes `b` starts.
fn last_block(b: &[u8]) -> usize {
    let mut at = segment::PAGE_LEN as usize;
    let mut last = at;
    while let Ok(Ok(blk)) = block::decode(&b[at..]) {
        last = at;
        at += blk.len;
    }
    last
}

#[test]
fn a_segment_cut_short_is_damage_and_counts_the_records_whose_headers_still_read() {
    let m = written(3);
    // The last segment: with 64-bit ids the three blocks do not fit in one.
    let (seg, b) = newest_segment(&m);
    // The last block, cut: its header and half its body remain.
    let last = last_block(&b);
    seg.set_len(last as u64 + 40).unwrap();
    let (rec, records) = read_back(&m, true).unwrap();
    assert_eq!(records, 20);
    let t = rec.tail.expect("the cut is reported");
    assert_eq!(
        (t.records, t.blocks, t.lsn, t.offset),
        (10, 1, 20, last as u64)
    );
    let why = t
        .damage
        .expect("a file shorter than its header says is damage");
    assert!(why.contains("cut short"), "{why}");
}

#[test]
fn a_torn_last_write_is_a_crash_and_blocks_zeroed_before_it_are_damage() {
    let m = written(3);
    let (seg, b) = newest_segment(&m);
    let last = last_block(&b);
    // The last write persisted and published durable: torn, it is damage.
    seg.write_at(last as u64 + 40, &[0u8; 16]).unwrap();
    let t = read_back(&m, true).unwrap().0.tail.expect("reported");
    assert!(t.damage.is_some(), "{t:?}");
    seg.write_at(0, &b[..segment::PAGE_LEN as usize]).unwrap();
    // As a crash during the last write leaves the header page: the record published
    // after its persist never landed (torn), the one written before it is in force.
    let newest = progress::read(&b).newest.unwrap();
    seg.write_at(
        newest.slot_offset() as u64 + 3,
        &[b[newest.slot_offset() + 3] ^ 0x40],
    )
    .unwrap();
    // The last write's body torn (zeros where its sectors never landed): a crash's.
    seg.write_at(last as u64 + 40, &[0u8; 16]).unwrap();
    let (rec, records) = read_back(&m, true).unwrap();
    assert_eq!(records, 20);
    let t = rec.tail.expect("reported");
    assert_eq!((t.records, t.durable_records, t.damage), (10, 0, None));
    // The whole last write zeroed from its block boundary: still within the last write,
    // so reported as a crash would leave it, 10 records lost at least.
    seg.write_at(last as u64, &vec![0u8; b.len() - last])
        .unwrap();
    let (rec, _) = read_back(&m, true).unwrap();
    let t = rec
        .tail
        .expect("the progress record says the last write reached further");
    assert_eq!((t.records, t.blocks, t.damage.is_none()), (10, 0, true));
    // Zeroed from an earlier block: records the progress record says were durable are
    // gone, which no crash does.
    let first = segment::PAGE_LEN as usize;
    if last > first {
        seg.write_at(first as u64, &vec![0u8; last - first])
            .unwrap();
        let (rec, _) = read_back(&m, true).unwrap();
        let t = rec.tail.expect("reported");
        assert!(t.durable_records > 0 && t.damage.is_some(), "{t:?}");
    }
}

#[test]
fn a_damaged_block_before_one_whose_hint_covers_it_is_refused() {
    // Two blocks: one segment holds both at either id width (three do not at 64 bits).
    let m = written(2);
    let (seg, b) = newest_segment(&m);
    let last = last_block(&b);
    let first = segment::PAGE_LEN as usize;
    assert!(last > first, "two blocks in the newest segment");
    seg.write_at(first as u64, &[0xFF]).unwrap();
    assert!(read_back(&m, true).is_err());
}

/// Reads the log back as a reader asking for `reach` while a writer has it in use: the
/// records replayed, and those held back past the durable point.
fn read_to(m: &MemoryMedium, reach: Reach) -> Result<(u64, u64)> {
    let mut records = 0;
    let rec = recover(
        m,
        &Expect {
            start_lsn: 0,
            log_in_use: true,
            header_ok: &any_header,
            reach,
        },
        false,
        |b, skip| {
            records += b.records - skip;
            Ok(())
        },
    )?;
    assert_eq!(
        rec.next_lsn, records,
        "the reader's log ends where it replayed"
    );
    Ok((records, rec.held_back))
}

fn ten_edges() -> DenseBatch {
    let mut b = DenseBatch::default();
    for j in 0..10 {
        b.push_edge(j, j + 1, false, 0.0);
    }
    b
}

#[test]
fn a_reader_stops_at_the_durable_point_the_writer_publishes_after_each_persist() {
    let m = Arc::new(MemoryMedium::new());
    // An hour between persists: blocks are written at once and made durable by `sync`.
    let hour = Durability::Interval(3_600_000);
    let wal = Wal::start(
        m.clone(),
        Recovered::default(),
        hour,
        1 << 20,
        Vec::new(),
        stamps(),
    )
    .unwrap();
    wal.submit(&ten_edges(), 0).unwrap();
    wal.sync().unwrap();
    assert_eq!(read_to(&m, Reach::Durable).unwrap(), (10, 0));
    assert_eq!(acknowledged_lsn(&*m), Some(10));
    wal.submit(&ten_edges(), 10).unwrap();
    wal.submit(&ten_edges(), 20).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while read_to(&m, Reach::Written).unwrap().0 < 30 {
        assert!(
            std::time::Instant::now() < deadline,
            "the writer never wrote the blocks"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // Written, not durable: a reader leaves them out unless it asks for them.
    assert_eq!(read_to(&m, Reach::Durable).unwrap(), (10, 20));
    assert_eq!(read_to(&m, Reach::Written).unwrap(), (30, 0));
    assert_eq!(
        acknowledged_lsn(&*m),
        Some(10),
        "only what a persist covered"
    );
    wal.sync().unwrap();
    assert_eq!(read_to(&m, Reach::Durable).unwrap(), (30, 0));
    assert_eq!(acknowledged_lsn(&*m), Some(30));
    wal.shutdown(false).unwrap();
}

#[test]
fn the_acknowledged_point_is_the_newest_segments_and_needs_its_header() {
    let m = written(7);
    assert!(segments(&m).len() > 1, "the log spans segments");
    assert_eq!(acknowledged_lsn(&*m), Some(70));
    // A newest segment whose header does not read (being made, or damaged) names no point:
    // a reader then does not rely on one.
    let name = segments(&m).pop().unwrap();
    m.open(&name).unwrap().write_at(0, &[0u8; 8]).unwrap();
    assert_eq!(acknowledged_lsn(&*m), None);
    assert_eq!(acknowledged_lsn(&MemoryMedium::new()), None, "no log");
}

#[test]
fn a_writer_recovering_blocks_past_the_durable_point_publishes_them() {
    let m = written(3);
    let name = segments(&m).pop().unwrap();
    let seg = m.open(&name).unwrap();
    let mut page = vec![0u8; segment::PAGE_LEN as usize];
    seg.read_at(0, &mut page).unwrap();
    // As a crash that kept the blocks but lost the record published after their persist
    // leaves it: the newest record says only the first block was durable.
    let p = progress::read(&page).newest.unwrap();
    let first = progress::Position {
        offset: segment::PAGE_LEN,
        lsn: 0,
    };
    let stale = progress::Progress {
        seq: p.seq + 1,
        durable: first,
        written: p.written,
    };
    stale.put(&mut page);
    seg.write_at(0, &page).unwrap();
    let (durable, held) = read_to(&m, Reach::Durable).unwrap();
    assert!(held > 0 && durable + held == 30, "{durable} + {held}");
    let (rec, _) = read_back(&m, true).unwrap();
    let wal = Wal::start(
        m.clone(),
        rec,
        Durability::Sync,
        SEGMENT,
        Vec::new(),
        stamps(),
    )
    .unwrap();
    assert_eq!(read_to(&m, Reach::Durable).unwrap(), (30, 0));
    wal.shutdown(false).unwrap();
}

/// Batches of `n` edges each.
fn edges(n: usize) -> DenseBatch {
    let mut b = DenseBatch::default();
    for j in 0..n {
        b.push_edge((j % 1000) as VertexId, (j + 1) as VertexId, false, 0.0);
    }
    b
}

/// Writes groups of many sizes (within a page, across pages, past
/// [`progress::reserve`]) to a sim medium, each acknowledged (`Sync`) or many between two
/// persists (`Interval`), and marks each acknowledged end.
fn written_to_sim(tear: Tear, mode: Durability) -> Arc<SimMedium> {
    let m = Arc::new(SimMedium::new(tear));
    m.create_root().unwrap();
    // Segments of 256 KiB, retired as soon as they are acknowledged: later ones are spares
    // recycled, with an earlier life's blocks past the writes. Their reserve is 32 KiB.
    let wal = Wal::start(
        m.clone(),
        Recovered::default(),
        mode,
        1 << 18,
        Vec::new(),
        stamps(),
    )
    .unwrap();
    // 8 bytes an edge (16 with 64-bit ids): 12 000 edges take more than the reserve, and so
    // do the 7 batches between two persists under `Interval`.
    let sizes = [
        10, 700, 10, 3000, 10, 12_000, 10, 700, 5000, 10, 9000, 10, 10, 700,
    ];
    let mut lsn = 0;
    for (i, &n) in sizes.iter().cycle().take(3 * sizes.len()).enumerate() {
        lsn = wal.submit(&edges(n), lsn).unwrap();
        if mode == Durability::Sync || i % 7 == 6 {
            wal.wait_durable(lsn).unwrap();
            // Marked first: an image that holds a retirement holds its mark.
            m.mark(lsn);
            wal.recycle_below(lsn);
        }
    }
    wal.wait_durable(lsn).unwrap();
    m.mark(lsn);
    wal.shutdown(false).unwrap();
    m
}

/// Images at every point of the log, `EVOGRAPH_SIM_SOAK` times as many with it set.
#[test]
fn a_power_cut_anywhere_leaves_a_torn_tail_never_damage_and_keeps_what_was_acknowledged() {
    let soak: usize = std::env::var("EVOGRAPH_SIM_SOAK").map_or(1, |v| v.parse().unwrap_or(1));
    for tear in [Tear::Sector, Tear::Word] {
        for mode in [Durability::Sync, Durability::Interval(60_000)] {
            let m = written_to_sim(tear, mode);
            let marks = m.marks();
            let points: Vec<usize> = (0..=m.log_len())
                // Several writes between two persists, one torn and a later one kept, are
                // the rarer images: more of them.
                .flat_map(|p| {
                    std::iter::repeat_n(p, soak * if mode == Durability::Sync { 1 } else { 3 })
                })
                .collect();
            let mut cuts = 0;
            m.images(&points, 2706, |p, img| {
                let acked = marks
                    .iter()
                    .rfind(|&&(at, _)| at <= p)
                    .map_or(0, |&(_, l)| l);
                // Segments below the acknowledged point may have been retired.
                let (rec, _) = read_back_after(&img, false, acked)
                    .unwrap_or_else(|e| panic!("{tear:?} {mode:?} at {p}: {e}"));
                let end = rec.next_lsn;
                assert!(end >= acked, "{tear:?} {mode:?} at {p}: {end} < {acked}");
                let Some(t) = &rec.tail else {
                    return;
                };
                assert_eq!(t.damage, None, "{tear:?} {mode:?} at {p}: {t:?}");
                cuts += 1;
                // A writer's cut leaves no intact block of a torn write past the end, which
                // a later, shorter write would lead recovery on into.
                let (cut, _) = recover_after(&img, false, acked, true).unwrap();
                assert_eq!(cut.next_lsn, end);
                let newest = segments_of(&img).pop().expect("a tail is in a segment");
                let b = img.open(&newest).unwrap().map().unwrap().bytes().to_vec();
                let past = (segment::PAGE_LEN as usize..b.len() - block::HEADER_LEN)
                    .step_by(8)
                    .filter(|&at| block::peek_header(&b[at..]).is_some_and(|h| h.first_lsn >= end))
                    .find(|&at| matches!(block::decode(&b[at..]), Ok(Ok(_))));
                assert_eq!(
                    past, None,
                    "{tear:?} {mode:?} at {p}: {newest} after the cut"
                );
            });
            assert!(cuts > 0, "{tear:?} {mode:?}: no image tore a write");
        }
    }
}

#[test]
fn a_cut_in_a_recycled_segment_zeros_intact_blocks_of_a_write_whose_record_was_lost() {
    let m = written(2);
    let (seg, b) = newest_segment(&m);
    let (_, records) = read_back(&m, true).unwrap();
    // The segment as a recycled one: past its last write, an earlier life's bytes would do.
    let mut hdr = SegmentHeader::decode(&b).unwrap();
    let segment::Layout::Paged { len, .. } = hdr.layout else {
        panic!("this build's segments have a header page");
    };
    hdr.layout = segment::Layout::Paged {
        len,
        life: segment::Life::Recycled,
    };
    seg.write_at(0, &hdr.encode()).unwrap();
    // A power cut kept two later writes but not their records: the first torn (no magic),
    // the second intact, with the LSNs it would carry had the first read.
    let end = last_block(&b) + block::decode(&b[last_block(&b)..]).unwrap().unwrap().len;
    let mut torn = Vec::new();
    block::encode(&ten_edges(), records, records, &mut torn);
    let mut intact = Vec::new();
    block::encode(&ten_edges(), records + 10, records, &mut intact);
    torn[..8].fill(0);
    seg.write_at(end as u64, &torn).unwrap();
    let later = end + torn.len();
    seg.write_at(later as u64, &intact).unwrap();
    let (rec, replayed) = read_back(&m, true).unwrap();
    assert_eq!(replayed, records);
    let t = rec.tail.expect("the torn write is reported");
    assert_eq!((t.offset, &t.damage), (end as u64, &None));
    assert!(
        t.bytes > torn.len() as u64,
        "reaches into the intact block: {t:?}"
    );
    // A writer's recovery cuts both, so that no later write can be followed by the intact one.
    recover_after(&*m, true, 0, true).unwrap();
    let after = seg.map().unwrap().bytes().to_vec();
    assert!(after[end..later + intact.len()].iter().all(|&x| x == 0));
}
