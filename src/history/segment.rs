//! The byte format of a history segment: one flushed memtable's commits and changes.
//!
//! ```text
//! header (88 B): 11 little-endian u64 words:
//!   magic "EVGHIS02", flags (1 weighted, 2 undirected, 16 ids are u64), min_lsn, max_lsn,
//!   commits, edge changes, vertex changes, store_id, commit (the manifest commit it was
//!   written for), head crc32c (of the header's first 9 words and the commit table),
//!   body crc32c (of every byte after the commit table)
//! commits:  per commit 4 × u64: lsn (after its last record), time (i64, Unix ns),
//!           vertices (dense ids handed out by then), vertex_end (where its vertex
//!           changes end)
//! edges:    per change, ordered by source, destination, then commit: its commit (u32,
//!           the position in the table above; padded to 8 bytes after the last), then
//!           per change src id, dst id (top bit: the edge went)
//! weights:  per change: f64 (weighted stores: the weight given, or had when removed)
//! vertices: per change: id (top bit: deleted), padded to 8 bytes
//! ```
//! The head (header and commit table) has a checksum of its own so that the log and the
//! choice of which segments a point needs read only heads: 32 bytes per commit, not the
//! changes. An `id` is a dense vertex id of the store's width. File name:
//! `hist-<min_lsn as 16 hex>-<max_lsn as 16 hex>.hist`.

use crate::medium::Medium;
use crate::memtable::history::{Change, Commit, Sealed};
use crate::stamp::Stamp;
use crate::types::{id_from_le, VertexId, ID_BYTES};
use crate::{Error, Result};

const MAGIC: u64 = u64::from_le_bytes(*b"EVGHIS02");
const HEADER_WORDS: usize = 11;
const HEAD_CRC: usize = 9;
const BODY_CRC: usize = 10;
const COMMIT_BYTES: usize = 32;
const HEADER: usize = HEADER_WORDS * 8;
const WEIGHTED: u64 = 1;
const UNDIRECTED: u64 = 2;
const WIDE_IDS: u64 = 16;
const THIS_WIDTH: u64 = if ID_BYTES == 8 { WIDE_IDS } else { 0 };

/// What a segment's header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// First LSN it covers.
    pub min_lsn: u64,
    /// LSN after the last it covers.
    pub max_lsn: u64,
    /// Whether changes carry weights.
    pub weighted: bool,
    /// Whether the store is undirected.
    pub undirected: bool,
    /// The store and commit it was written for.
    pub stamp: Stamp,
}

/// The file name of the segment covering `min..max`.
pub fn file_name(min: u64, max: u64) -> String {
    format!("hist-{min:016x}-{max:016x}.hist")
}

/// The LSN range in a segment's file name (or a segment being written, `.tmp`).
pub fn parse_name(name: &str) -> Option<(u64, u64)> {
    let rest = name.strip_prefix("hist-")?;
    let stem = rest
        .strip_suffix(".hist")
        .or_else(|| rest.strip_suffix(".hist.tmp"))?;
    let (a, b) = stem.split_once('-')?;
    let hex = |s: &str| (s.len() == 16).then(|| u64::from_str_radix(s, 16).ok())?;
    Some((hex(a)?, hex(b)?))
}

/// The bytes [`encode`] makes of `s`.
pub fn encoded_len(s: &Sealed, weighted: bool) -> u64 {
    let (ne, nv) = (s.edges.len(), s.vertices.len());
    let per_edge = 2 * ID_BYTES + if weighted { 8 } else { 0 };
    (HEADER
        + s.commits.len() * COMMIT_BYTES
        + (ne * 4).next_multiple_of(8)
        + ne * per_edge
        + (nv * ID_BYTES).next_multiple_of(8)) as u64
}

/// The bytes of the segment of `h` holding `s`.
pub fn encode(h: &Header, s: &Sealed) -> Vec<u8> {
    let flags = THIS_WIDTH
        | if h.weighted { WEIGHTED } else { 0 }
        | if h.undirected { UNDIRECTED } else { 0 };
    let words = [
        MAGIC,
        flags,
        h.min_lsn,
        h.max_lsn,
        s.commits.len() as u64,
        s.edges.len() as u64,
        s.vertices.len() as u64,
        h.stamp.store_id,
        h.stamp.seq,
        0,
        0,
    ];
    let len = encoded_len(s, h.weighted) as usize;
    // Sized once: a bulk load's segment is hundreds of MB, and growing it copied it over.
    let mut out: Vec<u8> = Vec::with_capacity(len);
    out.extend(words.iter().flat_map(|w| w.to_le_bytes()));
    let mut v = 0usize;
    for (k, c) in s.commits.iter().enumerate() {
        v += s.vertices[v..]
            .iter()
            .take_while(|x| x.0 == k as u32)
            .count();
        for w in [c.lsn, c.time as u64, c.vertices, v as u64] {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    debug_assert!(v == s.vertices.len(), "vertex changes by commit");
    s.edges
        .iter()
        .for_each(|c| out.extend_from_slice(&c.commit.to_le_bytes()));
    out.resize(out.len().next_multiple_of(8), 0);
    for c in &s.edges {
        out.extend_from_slice(bytemuck::bytes_of(&c.src));
        out.extend_from_slice(bytemuck::bytes_of(&c.dst));
    }
    if h.weighted {
        s.edges
            .iter()
            .for_each(|c| out.extend_from_slice(&c.weight.to_le_bytes()));
    }
    for &(_, x) in &s.vertices {
        out.extend_from_slice(bytemuck::bytes_of(&x));
    }
    out.resize(out.len().next_multiple_of(8), 0);
    debug_assert_eq!(out.len(), len);
    let (head, body) = crcs(&out, s.commits.len());
    out[HEAD_CRC * 8..HEAD_CRC * 8 + 8].copy_from_slice(&head.to_le_bytes());
    out[BODY_CRC * 8..BODY_CRC * 8 + 8].copy_from_slice(&body.to_le_bytes());
    out
}

/// The head's and the body's checksums of segment bytes `b` (the body may be absent).
fn crcs(b: &[u8], commits: usize) -> (u64, u64) {
    let end = HEADER + commits * COMMIT_BYTES;
    let head = crc32c::crc32c_append(crc32c::crc32c(&b[..HEAD_CRC * 8]), &b[HEADER..end]);
    (
        head as u64,
        crc32c::crc32c(b.get(end..).unwrap_or(&[])) as u64,
    )
}

/// A segment's head: its header and commit table.
#[derive(Clone, Debug, PartialEq)]
pub struct Head {
    /// The header.
    pub header: Header,
    /// Its commits, oldest first.
    pub commits: Vec<Commit>,
    /// Where each commit's vertex changes end.
    ends: Vec<usize>,
    /// Edge and vertex changes held.
    counts: (usize, usize),
}

/// Reads a segment's head from `b`, which holds at least the head; `name` is used in errors.
pub fn decode_head(b: &[u8], name: &str) -> Result<Head> {
    let bad = |m: &str| Error::corrupt(format!("history segment {name}: {m}"));
    if b.len() < HEADER {
        return Err(bad("shorter than its header"));
    }
    let w = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
    if w(0) == u64::from_le_bytes(*b"EVGHIS01") {
        return Err(bad("segment format 1, written by a development build of evograph 0.1.0 before its history format settled; this build reads format 2 (re-ingest the history to keep it)"));
    }
    if w(0) != MAGIC {
        return Err(bad("bad magic"));
    }
    let nc = usize::try_from(w(4))
        .ok()
        .filter(|&n| n <= (b.len() - HEADER) / COMMIT_BYTES);
    let nc = nc.ok_or_else(|| bad("cut inside its commit table, or a bad count"))?;
    if crcs(&b[..HEADER + nc * COMMIT_BYTES], nc).0 != w(HEAD_CRC) {
        return Err(bad("checksum mismatch in its head"));
    }
    let flags = w(1);
    if flags & WIDE_IDS != THIS_WIDTH {
        return Err(Error::Invalid(crate::types::width_mismatch(
            &format!("history segment {name}"),
            if flags & WIDE_IDS != 0 { 64 } else { 32 },
        )));
    }
    let header = Header {
        min_lsn: w(2),
        max_lsn: w(3),
        weighted: flags & WEIGHTED != 0,
        undirected: flags & UNDIRECTED != 0,
        stamp: Stamp {
            store_id: w(7),
            seq: w(8),
        },
    };
    let word = |at: usize| w(HEADER_WORDS + at);
    let (mut commits, mut ends) = (Vec::with_capacity(nc), Vec::with_capacity(nc));
    for k in 0..nc {
        commits.push(Commit {
            lsn: word(k * 4),
            time: word(k * 4 + 1) as i64,
            vertices: word(k * 4 + 2),
        });
        ends.push(word(k * 4 + 3) as usize);
    }
    let counts = (w(5) as usize, w(6) as usize);
    check_commits(&commits, &ends, counts.1, &header).map_err(|m| bad(&m))?;
    Ok(Head {
        header,
        commits,
        ends,
        counts,
    })
}

/// Reads a segment's bytes back; `name` is used in errors.
pub fn decode(b: &[u8], name: &str) -> Result<(Header, Sealed)> {
    let bad = |m: &str| Error::corrupt(format!("history segment {name}: {m}"));
    let head = decode_head(b, name)?;
    let (nc, (ne, nv)) = (head.commits.len(), head.counts);
    let need = (ne.checked_mul(4).map(|x| x.next_multiple_of(8)))
        .and_then(|x| {
            let per = 2 * ID_BYTES + if head.header.weighted { 8 } else { 0 };
            x.checked_add(ne.checked_mul(per)?)
        })
        .and_then(|x| x.checked_add(nv.checked_mul(ID_BYTES)?))
        .and_then(|x| x.checked_add(HEADER + nc * COMMIT_BYTES))
        .ok_or_else(|| bad("counts out of range"))?;
    if !b.len().is_multiple_of(8) || need.next_multiple_of(8) != b.len() {
        return Err(bad("length does not match its counts"));
    }
    let stored = u64::from_le_bytes(b[BODY_CRC * 8..BODY_CRC * 8 + 8].try_into().unwrap());
    if crcs(b, nc).1 != stored {
        return Err(bad("checksum mismatch"));
    }
    let body = &b[HEADER + nc * COMMIT_BYTES..];
    let (edges, vertices) = changes(body, &head.ends, ne, nv, head.header.weighted);
    if edges.iter().any(|c| c.commit as usize >= nc) {
        return Err(bad("a change names a commit it does not hold"));
    }
    let sealed = Sealed {
        commits: head.commits,
        edges,
        vertices,
    };
    Ok((head.header, sealed))
}

/// The edge and vertex changes in `b` (the bytes after the commit table); each vertex
/// change with the commit whose `ends` cover it.
fn changes(
    b: &[u8],
    ends: &[usize],
    ne: usize,
    nv: usize,
    weighted: bool,
) -> (Vec<Change>, Vec<(u32, VertexId)>) {
    let ids = &b[(ne * 4).next_multiple_of(8)..];
    let wts = &ids[ne * 2 * ID_BYTES..];
    let vts = &wts[if weighted { ne * 8 } else { 0 }..];
    let edges = (0..ne)
        .map(|i| {
            let at = i * 2 * ID_BYTES;
            Change {
                commit: u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap()),
                src: id_from_le(&ids[at..]),
                dst: id_from_le(&ids[at + ID_BYTES..]),
                weight: match weighted {
                    true => f64::from_le_bytes(wts[i * 8..i * 8 + 8].try_into().unwrap()),
                    false => 0.0,
                },
            }
        })
        .collect();
    let mut vertices = Vec::with_capacity(nv);
    let mut k = 0;
    for i in 0..nv {
        while ends[k] <= i {
            k += 1;
        }
        vertices.push((k as u32, id_from_le(&vts[i * ID_BYTES..])));
    }
    (edges, vertices)
}

/// The commit table's own consistency: LSNs rising inside the segment's range, times never
/// going back, vertex change ends rising to their count.
fn check_commits(
    c: &[Commit],
    ends: &[usize],
    nv: usize,
    h: &Header,
) -> std::result::Result<(), String> {
    let rising = c
        .windows(2)
        .all(|p| p[0].lsn < p[1].lsn && p[0].time <= p[1].time)
        && ends.windows(2).all(|p| p[0] <= p[1]);
    let in_range =
        c.first().is_none_or(|f| f.lsn > h.min_lsn) && c.last().is_none_or(|l| l.lsn <= h.max_lsn);
    let counted = ends.last().map_or(nv == 0, |&v| v == nv);
    match rising && in_range && counted {
        true => Ok(()),
        false => Err("its commit table is inconsistent".into()),
    }
}

/// Writes segment `h` holding `s`, persisted and named, the directory synced: before the
/// commit that names it.
pub fn write(medium: &dyn Medium, h: &Header, s: &Sealed) -> Result<u64> {
    let bytes = encode(h, s);
    let name = file_name(h.min_lsn, h.max_lsn);
    let tmp = format!("{name}.tmp");
    if medium.exists(&tmp) {
        medium.remove(&tmp)?;
    }
    let seg = medium.create(&tmp)?;
    seg.write_at(0, &bytes)?;
    seg.persist()?;
    drop(seg);
    medium.rename(&tmp, &name)?;
    medium.sync_dir()?;
    Ok(bytes.len() as u64)
}

/// Reads the head of segment `name`, checked: its commits without its changes.
pub fn read_head(medium: &dyn Medium, name: &str) -> Result<Head> {
    let seg = medium.open(name)?;
    let len = seg.len()? as usize;
    let mut b = vec![0u8; HEADER.min(len)];
    seg.read_at(0, &mut b)?;
    if let Ok(w) = <[u8; 8]>::try_from(b.get(32..40).unwrap_or(&[])) {
        let table = (u64::from_le_bytes(w) as usize).saturating_mul(COMMIT_BYTES);
        b.resize(HEADER.saturating_add(table).min(len), 0);
        seg.read_at(HEADER as u64, &mut b[HEADER..])?;
    }
    decode_head(&b, name)
}

/// Reads segment `name` back, checked.
pub fn read(medium: &dyn Medium, name: &str) -> Result<(Header, Sealed)> {
    let seg = medium.open(name)?;
    let mut b = vec![0u8; seg.len()? as usize];
    seg.read_at(0, &mut b)?;
    decode(&b, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::DEL;

    fn sample() -> Sealed {
        let ch = |commit, src, dst, weight| Change {
            commit,
            src,
            dst,
            weight,
        };
        Sealed {
            commits: vec![
                Commit {
                    lsn: 12,
                    time: -5,
                    vertices: 4,
                },
                Commit {
                    lsn: 13,
                    time: 7,
                    vertices: 4,
                },
                Commit {
                    lsn: 20,
                    time: 7,
                    vertices: 9,
                },
            ],
            edges: vec![ch(0, 1, 2, 0.5), ch(0, 1, 3 | DEL, 2.0), ch(2, 8, 1, 1.5)],
            vertices: vec![(1, 3 | DEL), (2, 3)],
        }
    }

    #[test]
    fn a_segment_reads_back_as_written_and_damage_is_refused() {
        for weighted in [false, true] {
            let mut s = sample();
            if !weighted {
                s.edges.iter_mut().for_each(|c| c.weight = 0.0);
            }
            let h = Header {
                min_lsn: 10,
                max_lsn: 20,
                weighted,
                undirected: !weighted,
                stamp: Stamp {
                    store_id: 9,
                    seq: 3,
                },
            };
            let b = encode(&h, &s);
            assert_eq!(decode(&b, "x").unwrap(), (h, s.clone()));
            for at in [0, 9, HEADER + 3, b.len() - 1] {
                let mut d = b.clone();
                d[at] ^= 1;
                assert!(decode(&d, "x").is_err(), "flip at {at}");
            }
            assert!(decode(&b[..b.len() - 8], "x").is_err());
            // The head alone reads back from the header and commit table.
            let head = decode_head(&b[..HEADER + 3 * COMMIT_BYTES], "x").unwrap();
            assert_eq!((head.header, &head.commits), (h, &s.commits));
            assert!(decode_head(&b[..HEADER + 2 * COMMIT_BYTES], "x").is_err());
        }
        assert_eq!(parse_name(&file_name(10, 20)), Some((10, 20)));
        assert_eq!(
            parse_name("hist-0000000000000001-0000000000000002.hist.tmp"),
            Some((1, 2))
        );
        assert_eq!(parse_name("run-0000000000000001.run"), None);
    }
}
