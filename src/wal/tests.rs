//! The log as a whole: segments written by the writer, read back by recovery, and what
//! recovery makes of segments deleted, trailers torn and tails cut.

use super::block;
use super::recover::{recover, Expect, Recovered};
use super::segment::{self, SegmentHeader};
use super::writer::{LogStamps, Wal};
use crate::batch::DenseBatch;
use crate::medium::memory::MemoryMedium;
use crate::medium::Medium;
use crate::types::Durability;
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
    let mut records = 0;
    let rec = recover(
        m,
        &Expect {
            start_lsn: 0,
            log_in_use,
            header_ok: &any_header,
        },
        false,
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
    assert_eq!((records, rec.next_lsn, rec.cut), (200, 200, None));
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
        seg.set_len(at as u64).unwrap();
        seg.write_at(at as u64, torn).unwrap();
        seg.set_len(at as u64 + segment::TRAILER_LEN as u64)
            .unwrap();
        let (rec, records) = read_back(&m, true).unwrap();
        assert_eq!((records, rec.cut), (200, None));
    }
    // More than a trailer's worth of garbage before a later segment is damage.
    seg.write_at(at as u64, &[0xAB; 40]).unwrap();
    assert!(read_back(&m, true).is_err());
}

#[test]
fn a_cut_tail_reports_the_records_whose_headers_still_read() {
    let m = written(3);
    // The last segment: with 64-bit ids the three blocks do not fit in one.
    let name = segments(&m).pop().unwrap();
    let seg = m.open(&name).unwrap();
    let b = seg.map().unwrap().bytes().to_vec();
    // The last block, torn: its header and half its body landed.
    let last = {
        let mut at = segment::HEADER_LEN as usize;
        let mut last = at;
        while let Ok(Ok(blk)) = block::decode(&b[at..]) {
            last = at;
            at += blk.len;
        }
        last
    };
    seg.set_len(last as u64 + 40).unwrap();
    let (rec, records) = read_back(&m, true).unwrap();
    assert_eq!(records, 20);
    let cut = rec.cut.expect("the cut is reported");
    assert_eq!((cut.records, cut.lsn), (10, 20));
    assert!(cut.bytes > 32 && cut.bytes <= 40, "{cut:?}");
}
