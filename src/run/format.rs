//! The byte layout of a run file.
//!
//! ```text
//! header (256 B): 31 little-endian u64 words (see `RunHeader::encode`) and in the last
//!                 8 bytes the crc32c of the 248 bytes before them
//! body:           sections, each starting 8-byte aligned, in this order:
//!                 out.adds id[] | out.wts f64[] | in.adds id[] | in.wts f64[]
//!                 out.vids id[] | out.offs u64[] | out.toffs u64[] | out.tombs id[]
//!                 in.vids  id[] | in.offs  u64[] | in.toffs  u64[] | in.tombs  id[]
//!                 vertex_ops id[] (top bit = deleted)
//! crc table:      u32 crc32c per 1 MiB block of the body, then padding to 8 bytes
//! ```
//! A *packed* run (flag [`PACKED`], format version 2, written by stores created with
//! compression) has a 512-byte header: the same 31 words, then the byte length of each
//! direction's streams (words 31 and 32), zeros, and the crc32c in the last 8 bytes.
//! A *stamped* run (flag [`STAMPED`], every run this build writes) has the 512-byte header
//! too, words 31 and 32 zero unless packed, and in words 33 and 34 its [`Stamp`]: the
//! store's id and the manifest commit it was written for. In it,
//! each direction's `adds` section holds the vertices' streams (see [`super::packed`])
//! followed by 16 zero bytes, and its `offs` section the stream positions: `n_index + 1`
//! entries, u32 when the streams are shorter than 4 GiB, else u64.
//! An `id` is a dense vertex id: u32, or u64 when the header has [`WIDE_IDS`] (a store of a
//! `wide-ids` build). The neighbor arrays come first so that a merge can stream them to the file as it
//! produces them and write the (small) indexes at the end. `wts` (weights, parallel to
//! `adds`) are present in weighted stores only.
//!
//! `vids` lists the vertices a sparse direction holds (empty when dense: then index `i` is
//! vertex `i`). `offs[i]..offs[i+1]` delimit vertex `i`'s neighbors in `adds`, sorted
//! ascending; `toffs`/`tombs` likewise delimit its tombstones (both empty when there are none).

use crate::stamp::Stamp;
use crate::{Error, Result};

/// Bytes before the first section of a plain run from before stamps.
pub const HEADER_LEN: usize = 256;
/// Bytes before the first section of a packed or stamped run.
pub const PACKED_HEADER_LEN: usize = 512;
/// Header words before the packed stream lengths: magic, version and flags, 12 counts and
/// ids, the section offsets and the four words of the checksum table and length.
const BASE_WORDS: usize = 8 + 6 + SECTIONS + 4;
/// Where a stamped header keeps its stamp: the store id, then the commit.
const STAMP_WORD: usize = BASE_WORDS + 2;
/// Where a timed header keeps the time of the run's newest commit.
pub const TIME_WORD: usize = STAMP_WORD + 2;
/// Word of a run with [`LOOPS`]: its out-direction's self loops, added less tombstoned.
pub const LOOPS_WORD: usize = TIME_WORD + 1;
const _: () = assert!((LOOPS_WORD + 1) * 8 <= PACKED_HEADER_LEN - 8);
const _: () = assert!(BASE_WORDS * 8 <= HEADER_LEN - 8);
/// Body bytes covered by one checksum.
pub const CRC_BLOCK: usize = 1 << 20;
const MAGIC: u64 = u64::from_le_bytes(*b"EVGRUN01");
/// Format version of plain runs.
pub const VERSION: u64 = 1;
/// Format version of packed runs.
pub const VERSION_PACKED: u64 = 2;
/// Number of sections in the body.
pub const SECTIONS: usize = 13;

/// Section index of direction `d`'s neighbor ids (0 out, 1 in).
pub const fn adds(d: usize) -> usize {
    2 * d
}
/// Section index of direction `d`'s weights.
pub const fn wts(d: usize) -> usize {
    2 * d + 1
}
/// Section index of direction `d`'s vertex list.
pub const fn vids(d: usize) -> usize {
    4 + 4 * d
}
/// Section index of direction `d`'s neighbor offsets.
pub const fn offs(d: usize) -> usize {
    5 + 4 * d
}
/// Section index of direction `d`'s tombstone offsets.
pub const fn toffs(d: usize) -> usize {
    6 + 4 * d
}
/// Section index of direction `d`'s tombstones.
pub const fn tombs(d: usize) -> usize {
    7 + 4 * d
}
/// Section index of the vertex states.
pub const VERTEX_OPS: usize = 12;

/// Flag: the run holds in-adjacency.
pub const HAS_IN: u64 = 1;
/// Flag: the out direction is indexed densely.
pub const OUT_DENSE: u64 = 2;
/// Flag: the in direction is indexed densely.
pub const IN_DENSE: u64 = 4;
/// Flag: neighbors carry f64 weights.
pub const WEIGHTED: u64 = 8;
/// Flag: vertex ids are 64-bit (else 32-bit).
pub const WIDE_IDS: u64 = 16;
/// Flag: neighbor lists are compressed (format version 2).
pub const PACKED: u64 = 32;
/// Flag: the 512-byte header carries the run's [`Stamp`].
pub const STAMPED: u64 = 64;
/// Flag (stamped runs only): word [`TIME_WORD`] holds the time of the newest commit whose
/// records the run holds, in Unix nanoseconds.
pub const TIMED: u64 = 128;
/// Flag (stamped runs only): word [`LOOPS_WORD`] holds the self loops of the out direction,
/// added less tombstoned (an i64), so that an undirected store counts its edges from the
/// headers: each other edge is two adjacency entries, a loop one. Set in the runs of
/// undirected stores (`build::Loops`). Bit 16, above the partition shift's byte.
pub const LOOPS: u64 = 1 << 16;
/// Per partition of `2^shift` ids among `parts`, the positions (ascending) of the runs
/// that can hold its vertices, in one pass over `runs`: O(runs + partitions x runs that
/// are not confined to a partition).
pub fn chains_by_partition(runs: &[&RunHeader], shift: u32, parts: u64) -> Vec<Vec<u32>> {
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); parts as usize];
    if parts == 0 {
        return lists;
    }
    for (i, r) in runs.iter().enumerate() {
        let s = r.span();
        let first = (s.start >> shift).min(parts - 1);
        let last = (s.end.saturating_sub(1) >> shift).min(parts - 1);
        for l in &mut lists[first as usize..=last as usize] {
            l.push(i as u32);
        }
    }
    lists
}

/// Flag bits 8..16: the run's partition shift `s`. Zero means the run may hold any vertex;
/// otherwise it holds only vertices of one partition, the ids `j << s .. (j + 1) << s`
/// where `j = (vertex_space - 1) >> s` (see [`RunHeader::span`]). Merges above level 0
/// write such runs, so a merge rewrites one vertex range, not the whole graph.
pub const PART_SHIFT_AT: u32 = 8;
/// The mask of the partition shift within the flags.
pub const PART_SHIFT_MASK: u64 = 0xff << PART_SHIFT_AT;
// Every flag its own bit, none inside the partition shift's byte; the sections of both
// directions and the vertex states are the body's sections, each once.
const FLAGS: [u64; 9] = [
    HAS_IN, OUT_DENSE, IN_DENSE, WEIGHTED, WIDE_IDS, PACKED, STAMPED, TIMED, LOOPS,
];
/// Every flag this build knows.
const KNOWN_FLAGS: u64 = {
    let mut all = 0u64;
    let mut i = 0;
    while i < FLAGS.len() {
        all |= FLAGS[i];
        i += 1;
    }
    all
};
const _: () = {
    let mut all = 0u64;
    let mut i = 0;
    while i < FLAGS.len() {
        assert!(FLAGS[i].count_ones() == 1 && all & FLAGS[i] == 0);
        all |= FLAGS[i];
        i += 1;
    }
    assert!(all & PART_SHIFT_MASK == 0);
};
const _: () = assert!(tombs(1) + 1 == VERTEX_OPS && VERTEX_OPS + 1 == SECTIONS);

/// This build's width flag.
pub const THIS_WIDTH: u64 = if crate::types::ID_BYTES == 8 {
    WIDE_IDS
} else {
    0
};

/// Element counts of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirCounts {
    /// Entries in the vertex index.
    pub n_index: u64,
    /// Neighbor ids.
    pub n_adds: u64,
    /// Tombstones.
    pub n_tombs: u64,
}

/// Everything the header says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunHeader {
    /// [`HAS_IN`], [`OUT_DENSE`], [`IN_DENSE`].
    pub flags: u64,
    /// Unique id; the file is `run-<id>.run`.
    pub id: u64,
    /// Compaction level (0 for a flushed memtable).
    pub level: u64,
    /// First LSN whose effects the run holds.
    pub min_lsn: u64,
    /// LSN after the last one whose effects the run holds.
    pub max_lsn: u64,
    /// Vertex ids in the run are below this.
    pub vertex_space: u64,
    /// Number of vertex-state entries.
    pub n_vertex_ops: u64,
    /// Counts for out and in.
    pub dirs: [DirCounts; 2],
    /// Byte offset of each section.
    pub section_off: [u64; SECTIONS],
    /// Byte offset of the crc table.
    pub crc_table_off: u64,
    /// Number of checksummed body blocks.
    pub crc_blocks: u64,
    /// crc32c of the crc table.
    pub crc_table_crc: u64,
    /// Total file length.
    pub file_len: u64,
    /// Byte length of each direction's streams (packed runs; 0 otherwise).
    pub packed_len: [u64; 2],
    /// The store and commit the run was written for; `None` in runs from before stamps.
    pub stamp: Option<Stamp>,
    /// The time of the newest commit the run holds records of (Unix nanoseconds); `None`
    /// in runs written before commit times were kept.
    pub last_time: Option<i64>,
    /// Self loops of the out direction, added less tombstoned; `None` in runs written
    /// before they were counted (and in DRAM runs whose maker did not count them).
    pub loops: Option<i64>,
}

impl RunHeader {
    /// Whether neighbor lists are compressed.
    pub fn is_packed(&self) -> bool {
        self.flags & PACKED != 0
    }

    /// Bytes of the header.
    pub fn header_len(&self) -> usize {
        if self.is_packed() || self.flags & STAMPED != 0 {
            PACKED_HEADER_LEN
        } else {
            HEADER_LEN
        }
    }

    /// Bytes per stream position of direction `d` of a packed run.
    pub fn index_width(&self, d: usize) -> u64 {
        if self.packed_len[d] <= u32::MAX as u64 {
            4
        } else {
            8
        }
    }

    /// The partition shift (0: the run is not confined to a partition).
    pub fn part_shift(&self) -> u32 {
        ((self.flags & PART_SHIFT_MASK) >> PART_SHIFT_AT) as u32
    }

    /// The vertex ids the run may hold: all of them, or one partition's.
    pub fn span(&self) -> std::ops::Range<u64> {
        match self.part_shift() {
            0 => 0..u64::MAX,
            s => {
                let lo = (self.vertex_space.saturating_sub(1) >> s) << s;
                lo..self.vertex_space
            }
        }
    }

    /// Whether the run can hold any vertex of `ids`.
    pub fn overlaps(&self, ids: &std::ops::Range<u64>) -> bool {
        let s = self.span();
        s.start < ids.end && ids.start < s.end
    }

    /// Byte length of each section, from the counts.
    pub fn section_lens(&self) -> [u64; SECTIONS] {
        let mut l = [0u64; SECTIONS];
        let id = if self.flags & WIDE_IDS != 0 { 8 } else { 4 };
        for d in 0..2 {
            let c = &self.dirs[d];
            let dense = self.flags & if d == 0 { OUT_DENSE } else { IN_DENSE } != 0;
            let present = d == 0 || self.flags & HAS_IN != 0;
            if !present {
                // A packed run's writer ends every direction with the slack, present or not.
                if self.is_packed() {
                    l[adds(d)] = super::packed::SLACK as u64;
                }
                continue;
            }
            l[vids(d)] = if dense { 0 } else { c.n_index * id };
            if self.is_packed() {
                l[offs(d)] = (c.n_index + 1) * self.index_width(d);
                l[adds(d)] = self.packed_len[d] + super::packed::SLACK as u64;
            } else {
                l[offs(d)] = (c.n_index + 1) * 8;
                l[adds(d)] = c.n_adds * id;
            }
            l[wts(d)] = if self.flags & WEIGHTED != 0 {
                c.n_adds * 8
            } else {
                0
            };
            l[toffs(d)] = if c.n_tombs > 0 {
                (c.n_index + 1) * 8
            } else {
                0
            };
            l[tombs(d)] = c.n_tombs * id;
        }
        l[VERTEX_OPS] = self.n_vertex_ops * id;
        l
    }

    /// Fills in section offsets, the crc table position and the file length.
    pub fn lay_out(&mut self) {
        let mut at = self.header_len() as u64;
        for (i, len) in self.section_lens().into_iter().enumerate() {
            self.section_off[i] = at;
            at = (at + len).next_multiple_of(8);
        }
        self.crc_table_off = at;
        self.crc_blocks = (at - self.header_len() as u64).div_ceil(CRC_BLOCK as u64);
        self.file_len = (at + self.crc_blocks * 4).next_multiple_of(8);
    }

    /// The header bytes ([`RunHeader::header_len`] of them).
    pub fn encode(&self) -> Vec<u8> {
        let version = if self.is_packed() {
            VERSION_PACKED
        } else {
            VERSION
        };
        let mut w: Vec<u64> = vec![
            MAGIC,
            version | (self.flags << 32),
            self.id,
            self.level,
            self.min_lsn,
            self.max_lsn,
            self.vertex_space,
            self.n_vertex_ops,
        ];
        for d in &self.dirs {
            w.extend([d.n_index, d.n_adds, d.n_tombs]);
        }
        w.extend(self.section_off);
        w.extend([
            self.crc_table_off,
            self.crc_blocks,
            self.crc_table_crc,
            self.file_len,
        ]);
        if self.header_len() == PACKED_HEADER_LEN {
            w.extend(self.packed_len);
        }
        if let Some(st) = self.stamp {
            debug_assert!(self.flags & STAMPED != 0);
            w.extend([st.store_id, st.seq]);
        }
        if let Some(t) = self.last_time {
            debug_assert!(self.flags & TIMED != 0 && w.len() == TIME_WORD);
            w.push(t as u64);
        }
        if let Some(l) = self.loops {
            debug_assert!(self.flags & LOOPS != 0 && w.len() >= TIME_WORD);
            w.resize(LOOPS_WORD, 0);
            w.push(l as u64);
        }
        let len = self.header_len();
        let mut out = vec![0u8; len];
        for (i, x) in w.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&x.to_le_bytes());
        }
        // The last word checksums every byte before it, the zero padding included.
        let crc = crc32c::crc32c(&out[..len - 8]) as u64;
        out[len - 8..].copy_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parses and checks a header; `name` is used in errors.
    pub fn decode(b: &[u8], name: &str) -> Result<RunHeader> {
        let bad = |m: &str| Error::corrupt(format!("run {name}: {m}"));
        if b.len() < HEADER_LEN {
            return Err(bad("shorter than its header"));
        }
        let w = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
        if w(0) != MAGIC {
            return Err(bad("bad magic"));
        }
        let flags = w(1) >> 32;
        let unknown = flags & !(KNOWN_FLAGS | PART_SHIFT_MASK);
        if unknown != 0 {
            return Err(Error::Invalid(format!(
                "run {name} uses format flags {unknown:#x} this evograph does not know: it was written by a newer evograph"
            )));
        }
        let stamped = flags & STAMPED != 0;
        let (len, words) = header_shape(w(1) & 0xffff_ffff, flags).map_err(|m| bad(&m))?;
        if b.len() < len {
            return Err(bad("shorter than its header"));
        }
        if crc32c::crc32c(&b[..len - 8]) as u64 != w(len / 8 - 1) {
            return Err(bad("header checksum mismatch"));
        }
        if b[words * 8..len - 8].iter().any(|&x| x != 0) {
            return Err(bad("header padding is not zero"));
        }
        if flags & WIDE_IDS != THIS_WIDTH {
            let width = if flags & WIDE_IDS != 0 { 64 } else { 32 };
            return Err(Error::Invalid(crate::types::width_mismatch(
                &format!("run {name}"),
                width,
            )));
        }
        let shift = (flags & PART_SHIFT_MASK) >> PART_SHIFT_AT;
        if shift > 62 || (shift > 0 && w(6) == 0) {
            return Err(bad("partition shift out of range"));
        }
        let mut h = RunHeader::from_words(&w);
        if h.is_packed() && h.packed_len.iter().any(|&l| l >= 1 << 48) {
            return Err(bad("stream length out of range"));
        }
        if !h.is_packed() && stamped && (w(BASE_WORDS) != 0 || w(BASE_WORDS + 1) != 0) {
            return Err(bad("header padding is not zero"));
        }
        h.read_stamped_words(&w).map_err(bad)?;
        // The offsets must be the ones the counts imply; anything else is damage.
        let mut expect = h.clone();
        expect.lay_out();
        if expect.section_off != h.section_off
            || expect.crc_table_off != h.crc_table_off
            || expect.file_len != h.file_len
            || expect.crc_blocks != h.crc_blocks
        {
            return Err(bad("section layout does not match its counts"));
        }
        Ok(h)
    }

    /// The words after the base ones, as the flags say: the stamp, the last commit's time
    /// and the loop count; or why they cannot be.
    fn read_stamped_words(&mut self, w: &impl Fn(usize) -> u64) -> std::result::Result<(), &str> {
        if self.flags & STAMPED != 0 {
            if w(STAMP_WORD) == 0 {
                return Err("stamped with store id 0");
            }
            self.stamp = Some(Stamp {
                store_id: w(STAMP_WORD),
                seq: w(STAMP_WORD + 1),
            });
        }
        if self.flags & TIMED != 0 {
            self.last_time = Some(w(TIME_WORD) as i64);
        } else if self.flags & LOOPS != 0 && w(TIME_WORD) != 0 {
            return Err("header padding is not zero");
        }
        if self.flags & LOOPS != 0 {
            self.loops = Some(w(LOOPS_WORD) as i64);
        }
        Ok(())
    }

    /// The header's fields from its words (`w(i)` is word `i`), unchecked; no stamp.
    fn from_words(w: &impl Fn(usize) -> u64) -> RunHeader {
        let mut h = RunHeader {
            flags: w(1) >> 32,
            id: w(2),
            level: w(3),
            min_lsn: w(4),
            max_lsn: w(5),
            vertex_space: w(6),
            n_vertex_ops: w(7),
            ..Default::default()
        };
        for d in 0..2 {
            h.dirs[d] = DirCounts {
                n_index: w(8 + d * 3),
                n_adds: w(9 + d * 3),
                n_tombs: w(10 + d * 3),
            };
        }
        for i in 0..SECTIONS {
            h.section_off[i] = w(14 + i);
        }
        h.crc_table_off = w(14 + SECTIONS);
        h.crc_blocks = w(15 + SECTIONS);
        h.crc_table_crc = w(16 + SECTIONS);
        h.file_len = w(17 + SECTIONS);
        if h.is_packed() {
            h.packed_len = [w(18 + SECTIONS), w(19 + SECTIONS)];
        }
        h
    }
}

/// The byte length of a header of format `version` with `flags`, and how many of its
/// words before the checksum are used (the rest must be zero); or why it cannot be.
fn header_shape(version: u64, flags: u64) -> std::result::Result<(usize, usize), String> {
    let (packed, stamped) = (flags & PACKED != 0, flags & STAMPED != 0);
    let timed = usize::from(flags & TIMED != 0);
    if timed == 1 && !stamped {
        return Err("a commit time in a header without a stamp".into());
    }
    if flags & LOOPS != 0 {
        if !stamped {
            return Err("a loop count in a header without a stamp".into());
        }
        // The time's word stays (zero when untimed) before the count.
        return match (version, packed) {
            (VERSION, false) | (VERSION_PACKED, true) => Ok((PACKED_HEADER_LEN, LOOPS_WORD + 1)),
            (VERSION | VERSION_PACKED, _) => Err("compression flag and version disagree".into()),
            (v, _) => Err(format!("unsupported format version {v}")),
        };
    }
    Ok(match version {
        VERSION if !packed && !stamped => (HEADER_LEN, BASE_WORDS),
        VERSION if !packed => (PACKED_HEADER_LEN, STAMP_WORD + 2 + timed),
        VERSION_PACKED if packed => (
            PACKED_HEADER_LEN,
            BASE_WORDS + 2 + 2 * usize::from(stamped) + timed,
        ),
        VERSION | VERSION_PACKED => return Err("compression flag and version disagree".into()),
        v => return Err(format!("unsupported format version {v}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RunHeader {
        let mut h = RunHeader {
            flags: HAS_IN | OUT_DENSE | THIS_WIDTH,
            id: 7,
            level: 1,
            min_lsn: 10,
            max_lsn: 99,
            vertex_space: 1000,
            n_vertex_ops: 3,
            dirs: [
                DirCounts {
                    n_index: 1000,
                    n_adds: 5000,
                    n_tombs: 2,
                },
                DirCounts {
                    n_index: 40,
                    n_adds: 5000,
                    n_tombs: 0,
                },
            ],
            ..Default::default()
        };
        h.lay_out();
        h
    }

    #[test]
    fn round_trip() {
        let h = sample();
        assert_eq!(RunHeader::decode(&h.encode(), "t").unwrap(), h);
        for (i, off) in h.section_off.iter().enumerate() {
            assert_eq!(off % 8, 0, "section {i} misaligned");
        }
    }

    #[test]
    fn a_run_of_the_other_id_width_is_refused_by_name() {
        let mut h = sample();
        h.flags ^= WIDE_IDS;
        h.lay_out();
        let e = RunHeader::decode(&h.encode(), "run-7.run")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("run run-7.run uses") && e.contains("-bit vertex ids but this evograph"),
            "{e}"
        );
    }

    #[test]
    fn a_partitioned_run_spans_its_partition_up_to_its_vertex_space() {
        let mut h = sample();
        assert_eq!(h.span(), 0..u64::MAX);
        h.flags |= 10 << PART_SHIFT_AT;
        h.vertex_space = 3 * 1024 + 5;
        h.lay_out();
        assert_eq!(h.part_shift(), 10);
        assert_eq!(h.span(), 3072..3077);
        h.vertex_space = 4096;
        assert_eq!(h.span(), 3072..4096);
        assert_eq!(RunHeader::decode(&h.encode(), "t").unwrap(), h);
        h.flags |= 63 << PART_SHIFT_AT;
        assert!(RunHeader::decode(&h.encode(), "t").is_err());
    }

    #[test]
    fn any_flip_is_caught() {
        for h in [
            sample(),
            packed_sample(),
            stamped(sample()),
            stamped(packed_sample()),
        ] {
            let b = h.encode();
            for i in 0..b.len() {
                let mut c = b.clone();
                c[i] ^= 0x20;
                assert!(RunHeader::decode(&c, "t").is_err(), "flip at {i}");
            }
        }
    }

    fn stamped(mut h: RunHeader) -> RunHeader {
        h.flags |= STAMPED;
        h.stamp = Some(Stamp::new(0x1234_5678_9abc_def0, 42));
        h.lay_out();
        h
    }

    #[test]
    fn a_stamped_header_round_trips_with_its_stamp() {
        for h in [stamped(sample()), stamped(packed_sample())] {
            let b = h.encode();
            assert_eq!(b.len(), PACKED_HEADER_LEN);
            let d = RunHeader::decode(&b, "t").unwrap();
            assert_eq!(d, h);
            assert_eq!(d.stamp, Some(Stamp::new(0x1234_5678_9abc_def0, 42)));
            assert_eq!(h.section_off[0], PACKED_HEADER_LEN as u64);
        }
        assert_eq!(
            RunHeader::decode(&sample().encode(), "t").unwrap().stamp,
            None
        );
    }

    fn with_loops(mut h: RunHeader, loops: i64, time: Option<i64>) -> RunHeader {
        h.flags |= LOOPS | if time.is_some() { TIMED } else { 0 };
        h.loops = Some(loops);
        h.last_time = time;
        h.lay_out();
        h
    }

    /// Sets `word` of an encoded header to `x` and checksums it again: damage the
    /// checksum cannot catch, for the checks behind it.
    fn rewritten(b: &[u8], word: usize, x: u64) -> Vec<u8> {
        let mut c = b.to_vec();
        c[word * 8..word * 8 + 8].copy_from_slice(&x.to_le_bytes());
        let n = c.len();
        let crc = crc32c::crc32c(&c[..n - 8]) as u64;
        c[n - 8..].copy_from_slice(&crc.to_le_bytes());
        c
    }

    /// The loop count round-trips after a commit time or its zero word, plain or packed,
    /// negative too (a run tombstoning loops older runs added); the untimed word before
    /// it stays zero, and without the flag its word is padding.
    #[test]
    fn a_loop_count_round_trips_with_or_without_a_time() {
        for base in [stamped(sample()), stamped(packed_sample())] {
            for (loops, time) in [(3, Some(-7)), (-2, None), (0, Some(1 << 60))] {
                let h = with_loops(base.clone(), loops, time);
                let b = h.encode();
                let d = RunHeader::decode(&b, "t").unwrap();
                assert_eq!((d.loops, d.last_time), (Some(loops), time));
                assert_eq!(d, h);
                let c = rewritten(&b, LOOPS_WORD, 9);
                assert_eq!(RunHeader::decode(&c, "t").unwrap().loops, Some(9));
                if time.is_none() {
                    assert!(RunHeader::decode(&rewritten(&b, TIME_WORD, 1), "t").is_err());
                }
            }
            let b = base.encode();
            assert!(RunHeader::decode(&rewritten(&b, LOOPS_WORD, 1), "t").is_err());
        }
        // A count needs the stamped header's room.
        let mut h = sample();
        h.flags |= LOOPS;
        assert!(RunHeader::decode(&h.encode(), "t").is_err());
    }

    /// A flag this build does not know is refused as a newer writer's, not as damage.
    #[test]
    fn a_flag_from_a_newer_build_is_named_as_such() {
        let b = stamped(sample()).encode();
        let w1 = u64::from_le_bytes(b[8..16].try_into().unwrap());
        let e = RunHeader::decode(&rewritten(&b, 1, w1 | 1 << 52), "run-3.run").unwrap_err();
        assert!(matches!(e, Error::Invalid(_)), "{e:?}");
        assert!(
            e.to_string().contains("run-3.run") && e.to_string().contains("newer"),
            "{e}"
        );
    }

    fn packed_sample() -> RunHeader {
        let mut h = sample();
        h.flags |= PACKED;
        h.packed_len = [7001, 5 << 32];
        h.lay_out();
        h
    }

    #[test]
    fn a_packed_header_round_trips_with_its_stream_lengths() {
        let h = packed_sample();
        let b = h.encode();
        assert_eq!(b.len(), PACKED_HEADER_LEN);
        assert_eq!(RunHeader::decode(&b, "t").unwrap(), h);
        assert_eq!(h.section_off[0], PACKED_HEADER_LEN as u64);
        assert_eq!(h.index_width(0), 4);
        assert_eq!(h.index_width(1), 8);
        let lens = h.section_lens();
        assert_eq!(lens[offs(0)], 1001 * 4);
        assert_eq!(lens[adds(1)], (5 << 32) + 16);
        // A plain build's reader of version 1 headers would stop at the version.
        let mut c = b.clone();
        c[8] = 1;
        assert!(RunHeader::decode(&c, "t").is_err());
    }
}
