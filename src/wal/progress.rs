//! A segment's progress record: how far its log was durable, and how far the writer's last
//! write reaches, kept in the segment's header page where cutting the file cannot remove it.
//!
//! Before each write of blocks, the writer records in the header page the end of the log
//! as of its last completed persist (`durable`) and the end of the write it is about to
//! make (`written`). The record and the blocks become durable with the same persist: no
//! extra `fdatasync`. So whatever a crash leaves, a record that reads
//! - claims as durable only what was durable before the write began (a crash cannot take
//!   it back: a log that ends before it was damaged, not crashed), and
//! - bounds the bytes a crash can have torn: up to `written` plus the segment's
//!   [`reserve`] (past that page a fresh file holds zeros).
//!
//! The record and the blocks after it are not ordered before that persist: a power cut can
//! keep blocks and lose the record written for them (the blocks went by direct I/O, or as
//! cache lines, the record through the page cache or as another line). So the bound a
//! crash leaves must come from a record that was durable before the write began: the
//! writer never writes past the `written` end of the newest record a persist made durable
//! plus the [`reserve`]; a write that would is preceded by a persist of its own record.
//!
//! After each persist the writer also publishes the new durable point, a record with both
//! ends there, without a persist of its own (the blocks are durable already): a reader in
//! another process replays the newest segment up to the newest record's `durable` point,
//! so it holds every batch acknowledged under `sync` and none still in flight.
//!
//! Two slots, each in a sector of its own: between two persists every record goes to the
//! slot the last persist did not make durable, so a torn write of one leaves the other;
//! the valid slot with the higher `seq` is in force. A segment is made
//! with records 0 and 1 (nothing written yet) in its two slots, persisted before its
//! header is written, so a segment whose header reads always holds a valid record, and a
//! slot of zeros in it was zeroed by something other than the writer.
//! ```text
//! slot (48 B): seq u64 | durable_offset u64 | durable_lsn u64 | written_offset u64
//!              | written_lsn u64 | crc32c u32 (of the first 40 bytes) | 0 u32
//! ```

/// How far past the `written` end of a durable progress record the writer may write,
/// in a segment `segment_len` bytes long (its header's `len`), before it makes a newer
/// record durable: the bytes a power cut can leave past a record. An eighth of the
/// segment, 8 MiB at the default size: a `sync` group commit (whose persist makes the
/// record written before its group durable) stays within it at the default batch and
/// in-flight depth, and `interval` persists pay one extra persist per 8 MiB of log (at
/// 1 MiB, 4.7 times as many `fdatasync`s and 1.08x the time for a Kron22 ingest at
/// `interval=100`). Bytes past it in a fresh file still show damage.
pub fn reserve(segment_len: u64) -> u64 {
    (segment_len / 8).max(super::segment::PAGE_LEN)
}

/// Where the two slots sit in the header page.
pub const SLOTS: [usize; 2] = [512, 1024];
/// Bytes of one slot.
pub const SLOT_LEN: usize = 48;
const _: () = assert!(SLOT_LEN == 5 * 8 + 4 + 4 && SLOTS[0] + SLOT_LEN <= SLOTS[1]);
const _: () = assert!(SLOTS[1] + SLOT_LEN <= super::segment::PAGE_LEN as usize);

/// A position in a segment: a byte offset and the LSN of the record that starts there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    /// Byte offset in the segment.
    pub offset: u64,
    /// LSN of the record at that offset.
    pub lsn: u64,
}

/// One progress record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Counts the records written to this segment; picks the newer slot.
    pub seq: u64,
    /// The log's end as of the writer's last completed persist.
    pub durable: Position,
    /// The end of the write made after this record.
    pub written: Position,
}

impl Progress {
    /// The slot's bytes.
    pub fn encode(&self) -> [u8; SLOT_LEN] {
        let mut b = [0u8; SLOT_LEN];
        let words = [
            self.seq,
            self.durable.offset,
            self.durable.lsn,
            self.written.offset,
            self.written.lsn,
        ];
        for (i, w) in words.iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        let crc = crc32c::crc32c(&b[..40]);
        b[40..44].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Where this record's slot (by `seq`) sits in the header page.
    pub fn slot_offset(&self) -> usize {
        SLOTS[(self.seq % 2) as usize]
    }

    /// Writes this record into its slot of `page`.
    pub fn put(&self, page: &mut [u8]) {
        let at = self.slot_offset();
        page[at..at + SLOT_LEN].copy_from_slice(&self.encode());
    }
}

/// What a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// Zeros: never written.
    Empty,
    Valid(Progress),
    /// Neither: torn by a crash, or damaged.
    Unreadable,
}

fn decode(b: &[u8]) -> Slot {
    if b.iter().all(|&x| x == 0) {
        return Slot::Empty;
    }
    let rd = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
    let crc = u32::from_le_bytes(b[40..44].try_into().unwrap());
    if crc != crc32c::crc32c(&b[..40]) || b[44..48] != [0; 4] {
        return Slot::Unreadable;
    }
    let p = Progress {
        seq: rd(0),
        durable: Position {
            offset: rd(1),
            lsn: rd(2),
        },
        written: Position {
            offset: rd(3),
            lsn: rd(4),
        },
    };
    match p.durable.offset <= p.written.offset && p.durable.lsn <= p.written.lsn {
        true => Slot::Valid(p),
        false => Slot::Unreadable,
    }
}

/// The progress record a header page holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// The newest valid record, if any slot holds one.
    pub newest: Option<Progress>,
    /// Slots that hold neither a record nor zeros. One can be a crash's (the slot being
    /// written); two cannot.
    pub unreadable: usize,
    /// Slots of zeros: a segment is made with records 0 and 1 in its slots, durable before
    /// its header, so none has one.
    pub empty: usize,
}

impl Recorded {
    /// Why no crash leaves these slots, if none can: a segment holds a record in each slot
    /// from before its header was written, and a crash tears at most the one being written.
    pub fn damage(&self) -> Option<&'static str> {
        match self.newest {
            _ if self.unreadable == 2 => Some("both of its progress records are damaged"),
            None => Some("its progress records are gone (zeroed or damaged)"),
            Some(_) if self.empty > 0 => Some("one of its progress records was zeroed"),
            _ => None,
        }
    }
}

/// Reads the progress slots of a header page (`page` may be short: missing slots read as
/// unreadable).
pub fn read(page: &[u8]) -> Recorded {
    let mut r = Recorded::default();
    for at in SLOTS {
        match page.get(at..at + SLOT_LEN).map_or(Slot::Unreadable, decode) {
            Slot::Empty => r.empty += 1,
            Slot::Unreadable => r.unreadable += 1,
            Slot::Valid(p) => {
                if r.newest.is_none_or(|n| n.seq < p.seq) {
                    r.newest = Some(p);
                }
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: u64) -> Progress {
        Progress {
            seq,
            durable: Position {
                offset: 4096,
                lsn: 10,
            },
            written: Position {
                offset: 4096 + seq * 100,
                lsn: 10 + seq,
            },
        }
    }

    #[test]
    fn the_newer_valid_slot_is_in_force_and_a_torn_one_is_counted() {
        let mut page = vec![0u8; 4096];
        assert_eq!(read(&page).newest, None);
        record(1).put(&mut page);
        record(2).put(&mut page);
        assert_eq!(read(&page).newest, Some(record(2)));
        // Tear the newer slot: the older one stands.
        page[SLOTS[0] + 3] ^= 0x40;
        let r = read(&page);
        assert_eq!((r.newest, r.unreadable), (Some(record(1)), 1));
        page[SLOTS[1] + 9] ^= 1;
        let r = read(&page);
        assert_eq!((r.newest, r.unreadable), (None, 2));
        assert!(r.damage().is_some());
    }
}
