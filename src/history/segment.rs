//! The byte format of a history segment: one flushed memtable's commits and changes.
//!
//! ```text
//! header (104 B): 13 little-endian u64 words:
//!   magic "EVGHIS03", flags (1 weighted, 2 undirected, 16 ids are u64), min_lsn, max_lsn,
//!   commits, edge changes, vertex changes, store_id, commit (the manifest commit it was
//!   written for), sources (distinct sources among the edge changes), commit width (bytes
//!   of a change's commit: 1, 2 or 4), head crc32c (of the header's first 11 words and the
//!   commit table), body crc32c (of every byte after the commit table)
//! commits:  per commit 4 × u64: lsn (after its last record), time (i64, Unix ns),
//!           vertices (dense ids handed out by then), vertex_end (where its vertex
//!           changes end)
//! sources:  per source, ascending: its id, padded to 8 bytes; then per source a u64, where
//!           its changes end
//! edges:    per change, ordered by source, destination, then commit: its commit (the
//!           position in the table above, commit width bytes), padded to 8 bytes; then
//!           per change its dst id (top bit: the edge went), padded to 8 bytes
//! weights:  per change: f64 (weighted stores: the weight given, or had when removed)
//! vertices: per change: id (top bit: deleted), padded to 8 bytes
//! ```
//! Format 2 (`EVGHIS02`, written by builds before this one and still read) has an 88-byte
//! header without the sources and commit width words, every commit a u32 and every change
//! its src id beside its dst id: 12 bytes a change where format 3 takes 5 (a bulk load of
//! Kron20, 256 commits: 193 MB then, 92 MB now, written beside its run at every flush).
//!
//! The head (header and commit table) has a checksum of its own so that the log and the
//! choice of which segments a point needs read only heads: 32 bytes per commit, not the
//! changes. An `id` is a dense vertex id of the store's width. File name:
//! `hist-<min_lsn as 16 hex>-<max_lsn as 16 hex>.hist`.

use crate::medium::Medium;
use crate::memtable::history::{Change, Changes, Commit, Sealed};
use crate::stamp::Stamp;
use crate::types::{id_from_le, VertexId, ID_BYTES};
use crate::{Error, Result};

const MAGIC: u64 = u64::from_le_bytes(*b"EVGHIS03");
const MAGIC_V2: u64 = u64::from_le_bytes(*b"EVGHIS02");
const COMMIT_BYTES: usize = 32;
/// The largest header (format 3's), what a reader of a head reads first.
const HEADER: usize = V3.words * 8;

/// Where a format's header words are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    version: u32,
    words: usize,
    head_crc: usize,
    body_crc: usize,
}

const V2: Layout = Layout {
    version: 2,
    words: 11,
    head_crc: 9,
    body_crc: 10,
};
const V3: Layout = Layout {
    version: 3,
    words: 13,
    head_crc: 11,
    body_crc: 12,
};

impl Layout {
    fn header_len(&self) -> usize {
        self.words * 8
    }
}

/// The segment format this build writes.
pub const FORMAT: u32 = 3;
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

/// Bytes a change's commit takes in a segment of `commits` commits.
fn commit_width(commits: usize) -> usize {
    match commits {
        0..=256 => 1,
        257..=65_536 => 2,
        _ => 4,
    }
}

/// The number of distinct sources among `s`'s edge changes (sorted by source).
fn sources(s: &Sealed) -> usize {
    s.edges.chunk_by(|a, b| a.src == b.src).count()
}

/// The bytes [`encode`] makes of `s`.
pub fn encoded_len(s: &Sealed, weighted: bool) -> u64 {
    let (ne, nv) = (s.edges.len(), s.vertices.len());
    let body = body_len(ne, nv, sources(s), commit_width(s.commits.len()), weighted);
    (V3.header_len() + s.commits.len() * COMMIT_BYTES) as u64 + body.unwrap_or(u64::MAX)
}

/// The bytes after a format 3 commit table, `None` if they overflow.
fn body_len(ne: usize, nv: usize, ns: usize, width: usize, weighted: bool) -> Option<u64> {
    let pad = |x: usize| x.checked_next_multiple_of(8);
    let parts = [
        pad(ns.checked_mul(ID_BYTES)?)?,
        ns.checked_mul(8)?,
        pad(ne.checked_mul(width)?)?,
        pad(ne.checked_mul(ID_BYTES)?)?,
        if weighted { ne.checked_mul(8)? } else { 0 },
        pad(nv.checked_mul(ID_BYTES)?)?,
    ];
    let sum = parts.iter().try_fold(0usize, |a, &x| a.checked_add(x))?;
    Some(sum as u64)
}

/// The bytes of the segment of `h` holding `s`.
pub fn encode(h: &Header, s: &Sealed) -> Vec<u8> {
    let width = commit_width(s.commits.len());
    let groups = SourceGroups::of(&s.edges);
    let words = [
        MAGIC,
        flags_of(h),
        h.min_lsn,
        h.max_lsn,
        s.commits.len() as u64,
        s.edges.len() as u64,
        s.vertices.len() as u64,
        h.stamp.store_id,
        h.stamp.seq,
        groups.ids.len() as u64,
        width as u64,
        0,
        0,
    ];
    let (ne, nv, ns) = (s.edges.len(), s.vertices.len(), groups.ids.len());
    let body = body_len(ne, nv, ns, width, h.weighted).expect("a segment in DRAM fits its length");
    let len = V3.header_len() + s.commits.len() * COMMIT_BYTES + body as usize;
    // Zeroed lazily by the allocator: the columns' pages are first touched by the threads
    // that fill them, not by one thread zeroing a bulk load's tens of MB first.
    let mut out = Cursor {
        buf: vec![0u8; len],
        at: 0,
    };
    words.iter().for_each(|w| out.put(&w.to_le_bytes()));
    out.put(&commit_table(s));
    encode_changes(&mut out, s, &groups, width, h.weighted);
    debug_assert_eq!(out.at, len);
    let mut out = out.buf;
    let (head, body) = crcs(&out, s.commits.len(), V3);
    out[V3.head_crc * 8..V3.head_crc * 8 + 8].copy_from_slice(&head.to_le_bytes());
    out[V3.body_crc * 8..V3.body_crc * 8 + 8].copy_from_slice(&body.to_le_bytes());
    out
}

/// A segment's bytes being written front to back into a buffer of their final length.
struct Cursor {
    buf: Vec<u8>,
    at: usize,
}

impl Cursor {
    fn put(&mut self, b: &[u8]) {
        self.buf[self.at..self.at + b.len()].copy_from_slice(b);
        self.at += b.len();
    }

    /// The next `n` bytes, to be filled, and the cursor after them padded to 8 bytes.
    fn column(&mut self, n: usize) -> &mut [u8] {
        let at = self.at;
        self.at = (at + n).next_multiple_of(8);
        &mut self.buf[at..at + n]
    }
}

/// The distinct sources of edge changes sorted by source, and where each one's end.
struct SourceGroups {
    ids: Vec<VertexId>,
    ends: Vec<u64>,
}

impl SourceGroups {
    fn of(edges: &[Change]) -> SourceGroups {
        let mut g = SourceGroups {
            ids: Vec::new(),
            ends: Vec::new(),
        };
        for (i, c) in edges.iter().enumerate() {
            if g.ids.last() != Some(&c.src) {
                if i > 0 {
                    g.ends.push(i as u64);
                }
                g.ids.push(c.src);
            }
        }
        if !edges.is_empty() {
            g.ends.push(edges.len() as u64);
        }
        g
    }
}

/// The segment's flags word.
fn flags_of(h: &Header) -> u64 {
    THIS_WIDTH | if h.weighted { WEIGHTED } else { 0 } | if h.undirected { UNDIRECTED } else { 0 }
}

/// The commit table (the same in formats 2 and 3): each commit with where its vertex
/// changes end.
fn commit_table(s: &Sealed) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.commits.len() * COMMIT_BYTES);
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
    out
}

/// Writes format 3's sections after the commit table: sources, commits, destinations,
/// weights, vertex changes. The per-change columns are filled in parallel: at a bulk
/// load's flush the segment is the last thing the flush waits for.
fn encode_changes(out: &mut Cursor, s: &Sealed, g: &SourceGroups, width: usize, weighted: bool) {
    fill(
        out.column(g.ids.len() * ID_BYTES),
        ID_BYTES,
        &g.ids,
        |x, b| b.copy_from_slice(bytemuck::bytes_of(x)),
    );
    fill(out.column(g.ends.len() * 8), 8, &g.ends, |x, b| {
        b.copy_from_slice(&x.to_le_bytes())
    });
    let commits = out.column(s.edges.len() * width);
    match width {
        1 => fill(commits, 1, &s.edges, |c, b| b[0] = c.commit as u8),
        2 => fill(commits, 2, &s.edges, |c, b| {
            b.copy_from_slice(&(c.commit as u16).to_le_bytes())
        }),
        _ => fill(commits, 4, &s.edges, |c, b| {
            b.copy_from_slice(&c.commit.to_le_bytes())
        }),
    }
    fill(
        out.column(s.edges.len() * ID_BYTES),
        ID_BYTES,
        &s.edges,
        |c, b| b.copy_from_slice(bytemuck::bytes_of(&c.dst)),
    );
    if weighted {
        // A change without a weight (none in a seal's output) reads as weight 0.
        fill(out.column(s.edges.len() * 8), 8, &s.weights, |w, b| {
            b.copy_from_slice(&w.to_le_bytes())
        });
    }
    fill(
        out.column(s.vertices.len() * ID_BYTES),
        ID_BYTES,
        &s.vertices,
        |v, b| b.copy_from_slice(bytemuck::bytes_of(&v.1)),
    );
}

/// Fills `dst`, `w` bytes per item, item by item with `put`, in parallel over chunks of
/// items (bytes past the last item stay zero).
fn fill<T: Sync>(dst: &mut [u8], w: usize, items: &[T], put: impl Fn(&T, &mut [u8]) + Sync) {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    debug_assert!(items.len() * w <= dst.len());
    (dst.par_chunks_mut(w * CHUNK))
        .zip(items.par_chunks(CHUNK))
        .for_each(|(d, xs)| {
            for (b, x) in d.chunks_exact_mut(w).zip(xs) {
                put(x, b);
            }
        });
}

/// The head's and the body's checksums of segment bytes `b` of format `l` (the body may be
/// absent).
fn crcs(b: &[u8], commits: usize, l: Layout) -> (u64, u64) {
    let end = l.header_len() + commits * COMMIT_BYTES;
    let head = crc32c::crc32c_append(
        crc32c::crc32c(&b[..l.head_crc * 8]),
        &b[l.header_len()..end],
    );
    (
        head as u64,
        crate::checksum::crc32c(b.get(end..).unwrap_or(&[])) as u64,
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
    pub(super) ends: Vec<usize>,
    /// Edge and vertex changes held.
    pub(super) counts: (usize, usize),
    /// Its format, and (format 3) its distinct sources and commit width.
    layout: Layout,
    pub(super) sources: usize,
    pub(super) width: usize,
}

impl Head {
    /// The segment's format (2 or 3).
    pub(super) fn format(&self) -> u32 {
        self.layout.version
    }
}

/// The layout magic `m` names; `name` is used in errors.
fn layout_of(m: u64, name: &str) -> Result<Layout> {
    let bad = |m: &str| Error::corrupt(format!("history segment {name}: {m}"));
    match m {
        MAGIC => Ok(V3),
        MAGIC_V2 => Ok(V2),
        _ if m == u64::from_le_bytes(*b"EVGHIS01") => Err(bad("segment format 1, written by a development build of evograph 0.1.0 before its history format settled; this build reads formats 2 and 3 (re-ingest the history to keep it)")),
        _ => Err(bad("bad magic")),
    }
}

/// Reads a segment's head from `b`, which holds at least the head; `name` is used in errors.
pub fn decode_head(b: &[u8], name: &str) -> Result<Head> {
    let bad = |m: &str| Error::corrupt(format!("history segment {name}: {m}"));
    if b.len() < 8 {
        return Err(bad("shorter than its header"));
    }
    let w = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
    let l = layout_of(w(0), name)?;
    let hl = l.header_len();
    if b.len() < hl {
        return Err(bad("shorter than its header"));
    }
    let nc = usize::try_from(w(4))
        .ok()
        .filter(|&n| n <= (b.len() - hl) / COMMIT_BYTES);
    let nc = nc.ok_or_else(|| bad("cut inside its commit table, or a bad count"))?;
    if crcs(&b[..hl + nc * COMMIT_BYTES], nc, l).0 != w(l.head_crc) {
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
    let (sources, width) = match l.version {
        2 => (0, 4),
        _ => (w(9) as usize, w(10) as usize),
    };
    if width != commit_width(nc) && l.version == 3 {
        return Err(bad("its commit width does not match its commit count"));
    }
    let word = |at: usize| w(l.words + at);
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
        layout: l,
        sources,
        width,
    })
}

/// Reads a segment's bytes back; `name` is used in errors.
pub fn decode(b: &[u8], name: &str) -> Result<(Header, Sealed)> {
    let bad = |m: &str| Error::corrupt(format!("history segment {name}: {m}"));
    let head = decode_head(b, name)?;
    let body = checked_body(b, &head, name)?;
    let (nc, (ne, nv), l) = (head.commits.len(), head.counts, head.layout);
    let weighted = head.header.weighted;
    let (edges, vts) = match l.version {
        2 => changes_v2(body, ne, weighted),
        _ => changes(body, ne, head.sources, head.width, weighted).map_err(|m| bad(&m))?,
    };
    if edges.edges.iter().any(|c| c.commit as usize >= nc) {
        return Err(bad("a change names a commit it does not hold"));
    }
    let sealed = Sealed {
        commits: head.commits,
        edges: edges.edges,
        weights: edges.weights,
        vertices: vertex_changes(vts, &head.ends, nv),
    };
    Ok((head.header, sealed))
}

/// The body of segment bytes `b` (every byte after the commit table) whose head is
/// `head`, its length and checksum checked; `name` is used in errors.
pub(super) fn checked_body<'b>(b: &'b [u8], head: &Head, name: &str) -> Result<&'b [u8]> {
    let bad = |m: &str| Error::corrupt(format!("history segment {name}: {m}"));
    let (nc, (ne, nv), l) = (head.commits.len(), head.counts, head.layout);
    let body = match l.version {
        2 => body_len_v2(ne, nv, head.header.weighted),
        _ => body_len(ne, nv, head.sources, head.width, head.header.weighted),
    };
    let need = body
        .and_then(|x| usize::try_from(x).ok())
        .and_then(|x| x.checked_add(l.header_len() + nc * COMMIT_BYTES))
        .ok_or_else(|| bad("counts out of range"))?;
    if !b.len().is_multiple_of(8) || need.next_multiple_of(8) != b.len() {
        return Err(bad("length does not match its counts"));
    }
    let stored = u64::from_le_bytes(b[l.body_crc * 8..l.body_crc * 8 + 8].try_into().unwrap());
    if crcs(b, nc, l).1 != stored {
        return Err(bad("checksum mismatch"));
    }
    Ok(&b[l.header_len() + nc * COMMIT_BYTES..])
}

/// The bytes after a format 2 commit table, `None` if they overflow.
fn body_len_v2(ne: usize, nv: usize, weighted: bool) -> Option<u64> {
    let per = 2 * ID_BYTES + if weighted { 8 } else { 0 };
    let x = ne.checked_mul(4)?.checked_next_multiple_of(8)?;
    let x = x.checked_add(ne.checked_mul(per)?)?;
    Some(x.checked_add(nv.checked_mul(ID_BYTES)?)? as u64)
}

/// Format 3's edge changes in `b` (the bytes after the commit table), checked to list
/// their sources ascending, each with a change; and the bytes of its vertex changes.
fn changes(
    b: &[u8],
    ne: usize,
    ns: usize,
    width: usize,
    weighted: bool,
) -> std::result::Result<(Changes, &[u8]), String> {
    let srcs = &b[..ns * ID_BYTES];
    let ends_at = (ns * ID_BYTES).next_multiple_of(8);
    let ends = &b[ends_at..ends_at + ns * 8];
    let commits = &b[ends_at + ns * 8..];
    let dsts = &commits[(ne * width).next_multiple_of(8)..];
    let wts = &dsts[(ne * ID_BYTES).next_multiple_of(8)..];
    let vts = &wts[if weighted { ne * 8 } else { 0 }..];
    let mut edges = Changes::with_capacity(ne, weighted);
    let (mut last_src, mut from) = (None, 0usize);
    for k in 0..ns {
        let src: VertexId = id_from_le(&srcs[k * ID_BYTES..]);
        let end = u64::from_le_bytes(ends[k * 8..k * 8 + 8].try_into().unwrap());
        let end = usize::try_from(end).unwrap_or(usize::MAX);
        if last_src.is_some_and(|l| l >= src) || end <= from || end > ne {
            return Err("its sources are out of order or their changes out of range".into());
        }
        edges.edges.extend((from..end).map(|i| Change {
            commit: commit_at(commits, i, width),
            src,
            dst: id_from_le(&dsts[i * ID_BYTES..]),
        }));
        if weighted {
            (edges.weights).extend((from..end).map(|i| weight_at(wts, i)));
        }
        (last_src, from) = (Some(src), end);
    }
    match from == ne {
        true => Ok((edges, vts)),
        false => Err("its sources do not hold every change".into()),
    }
}

/// Change `i`'s commit, `width` bytes at its place in `b`.
pub(super) fn commit_at(b: &[u8], i: usize, width: usize) -> u32 {
    let mut w = [0u8; 4];
    w[..width].copy_from_slice(&b[i * width..(i + 1) * width]);
    u32::from_le_bytes(w)
}

/// Format 2's edge changes in `b` (the bytes after the commit table), and the bytes of its
/// vertex changes.
fn changes_v2(b: &[u8], ne: usize, weighted: bool) -> (Changes, &[u8]) {
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
            }
        })
        .collect();
    let weights = match weighted {
        true => (0..ne).map(|i| weight_at(wts, i)).collect(),
        false => Vec::new(),
    };
    (Changes { edges, weights }, vts)
}

/// Weight `i` of the little-endian f64s in `wts`.
fn weight_at(wts: &[u8], i: usize) -> f64 {
    f64::from_le_bytes(wts[i * 8..i * 8 + 8].try_into().unwrap())
}

/// The `nv` vertex changes in `vts`, each with the commit whose `ends` cover it.
pub(super) fn vertex_changes(vts: &[u8], ends: &[usize], nv: usize) -> Vec<(u32, VertexId)> {
    let mut vertices = Vec::with_capacity(nv);
    let mut k = 0;
    for i in 0..nv {
        while ends[k] <= i {
            k += 1;
        }
        vertices.push((k as u32, id_from_le(&vts[i * ID_BYTES..])));
    }
    vertices
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
    crate::medium::write_whole(medium, &file_name(h.min_lsn, h.max_lsn), &bytes)?;
    Ok(bytes.len() as u64)
}

/// Reads the head of segment `name`, checked: its commits without its changes.
pub fn read_head(medium: &dyn Medium, name: &str) -> Result<Head> {
    let seg = medium.open(name)?;
    let len = seg.len()? as usize;
    // Format 3's header is the longer: its length covers format 2's header and the
    // start of its commit table, read again below with the rest.
    let mut b = vec![0u8; HEADER.min(len)];
    seg.read_at(0, &mut b)?;
    if let Ok(w) = <[u8; 8]>::try_from(b.get(32..40).unwrap_or(&[])) {
        let table = (u64::from_le_bytes(w) as usize).saturating_mul(COMMIT_BYTES);
        let hl = match b[..8] == MAGIC_V2.to_le_bytes() {
            true => V2.header_len(),
            false => HEADER,
        };
        if b.len() >= hl {
            b.resize(hl.saturating_add(table).min(len), 0);
            seg.read_at(hl as u64, &mut b[hl..])?;
        }
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
        let ch = |commit, src, dst| Change { commit, src, dst };
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
            edges: vec![ch(0, 1, 2), ch(0, 1, 3 | DEL), ch(2, 8, 1)],
            weights: vec![0.5, 2.0, 1.5],
            vertices: vec![(1, 3 | DEL), (2, 3)],
        }
    }

    #[test]
    fn a_segment_reads_back_as_written_and_damage_is_refused() {
        for weighted in [false, true] {
            let mut s = sample();
            if !weighted {
                s.weights.clear();
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
            // Format 2, as builds before format 3 wrote it, still reads back.
            let old = encode_v2(&h, &s);
            assert_eq!(decode(&old, "x").unwrap(), (h, s.clone()));
            let head = decode_head(&old[..V2.header_len() + 3 * COMMIT_BYTES], "x").unwrap();
            assert_eq!(head.commits, s.commits);
        }
        assert_eq!(parse_name(&file_name(10, 20)), Some((10, 20)));
        assert_eq!(
            parse_name("hist-0000000000000001-0000000000000002.hist.tmp"),
            Some((1, 2))
        );
        assert_eq!(parse_name("run-0000000000000001.run"), None);
    }

    fn header() -> Header {
        Header {
            min_lsn: 0,
            max_lsn: 1 << 20,
            weighted: false,
            undirected: false,
            stamp: Stamp {
                store_id: 1,
                seq: 1,
            },
        }
    }

    #[test]
    fn commits_take_one_two_or_four_bytes_by_their_count() {
        for (nc, width) in [(1, 1), (256, 1), (257, 2), (65_536, 2), (65_537, 4)] {
            assert_eq!(commit_width(nc), width);
            let commits: Vec<Commit> = (0..nc as u64)
                .map(|k| Commit {
                    lsn: k + 1,
                    time: k as i64,
                    vertices: 10,
                })
                .collect();
            let edges: Vec<Change> = (0..nc as u32)
                .step_by(97)
                .chain([nc as u32 - 1])
                .enumerate()
                .map(|(i, commit)| Change {
                    commit,
                    src: (i / 50) as VertexId,
                    dst: i as VertexId,
                })
                .collect();
            let s = Sealed {
                commits,
                edges,
                weights: vec![],
                vertices: vec![],
            };
            let b = encode(&header(), &s);
            assert_eq!(b.len() as u64, encoded_len(&s, false));
            assert_eq!(decode(&b, "x").unwrap().1, s, "{nc} commits");
            if s.edges.len() > 100 {
                assert!(b.len() < encode_v2(&header(), &s).len());
            }
        }
    }

    #[test]
    fn sources_out_of_order_or_short_of_the_changes_are_refused() {
        let s = sample();
        let h = Header {
            weighted: true,
            ..header()
        };
        let b = encode(&h, &s);
        // The sources section starts after the header and 3 commits: 1 then 8.
        let at = HEADER + 3 * COMMIT_BYTES;
        let reseal = |mut d: Vec<u8>| {
            let (_, body) = crcs(&d, 3, V3);
            d[V3.body_crc * 8..V3.body_crc * 8 + 8].copy_from_slice(&body.to_le_bytes());
            d
        };
        let mut swapped = b.clone();
        swapped[at..at + ID_BYTES].copy_from_slice(bytemuck::bytes_of(&(9 as VertexId)));
        let e = decode(&reseal(swapped), "x").unwrap_err().to_string();
        assert!(e.contains("out of order"), "{e}");
        let ends = at + (2 * ID_BYTES).next_multiple_of(8);
        let mut short = b.clone();
        short[ends..ends + 8].copy_from_slice(&1u64.to_le_bytes());
        short[ends + 8..ends + 16].copy_from_slice(&2u64.to_le_bytes());
        let e = decode(&reseal(short), "x").unwrap_err().to_string();
        assert!(e.contains("every change"), "{e}");
    }

    #[test]
    fn a_segment_file_cut_inside_its_header_is_refused_not_a_panic() {
        use crate::medium::{memory::MemoryMedium, Medium};
        let m = MemoryMedium::new();
        let b = encode(&header(), &sample());
        for len in [0, 7, 39, 40, 60, 87, 90, HEADER + 10] {
            let seg = m.create("cut").unwrap();
            seg.write_at(0, &b[..len]).unwrap();
            drop(seg);
            assert!(read_head(&m, "cut").is_err(), "cut at {len}");
            assert!(read(&m, "cut").is_err(), "cut at {len}");
            m.remove("cut").unwrap();
        }
    }

    /// Format 2's bytes, as builds before format 3 wrote them.
    fn encode_v2(h: &Header, s: &Sealed) -> Vec<u8> {
        let words = [
            MAGIC_V2,
            flags_of(h),
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
        let mut out: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        out.extend(commit_table(s));
        (s.edges.iter()).for_each(|c| out.extend_from_slice(&c.commit.to_le_bytes()));
        out.resize(out.len().next_multiple_of(8), 0);
        for c in &s.edges {
            out.extend_from_slice(bytemuck::bytes_of(&c.src));
            out.extend_from_slice(bytemuck::bytes_of(&c.dst));
        }
        if h.weighted {
            (0..s.edges.len()).for_each(|i| out.extend_from_slice(&s.weight(i).to_le_bytes()));
        }
        for &(_, x) in &s.vertices {
            out.extend_from_slice(bytemuck::bytes_of(&x));
        }
        out.resize(out.len().next_multiple_of(8), 0);
        let (head, body) = crcs(&out, s.commits.len(), V2);
        out[V2.head_crc * 8..V2.head_crc * 8 + 8].copy_from_slice(&head.to_le_bytes());
        out[V2.body_crc * 8..V2.body_crc * 8 + 8].copy_from_slice(&body.to_le_bytes());
        out
    }
}
