//! The byte format of a run's versions ([`super::versions`]), a file beside the run.
//!
//! ```text
//! header (256 B): 32 little-endian u64 words:
//!   magic "EVGVER02", flags (1 has in-direction, 16 ids are u64, bits 2-3 the width W
//!   of the ordinals: 0 u32, 1 u16, 2 u8), run id, min_lsn, max_lsn, commits,
//!   per direction (out, then in): born, died, present vertices, present spells, absent
//!   vertices, absent spells; vertex changes, store id, zeros, body crc32c (every byte
//!   after the header), header crc32c (of the 31 words before it)
//! sections, each padded to 8 bytes, in this order:
//!   commits: u64 LSN per commit (ordinal k names the k-th)
//!   per direction (out, then in if present):
//!     born: W per add, died: W per tombstone,
//!     per kind of spell (present, then absent): vertices (id each, ascending), where
//!       each vertex's spells end (u32 each), neighbors (id per spell), from (W per
//!       spell), to (W per spell)
//!   vertex changes: u32 commit per change, then id per change (top bit: deleted)
//! ```
//! A versions file is derived data: the run and the history segments of its range say
//! everything it says. It is written after the run is committed, and a reader uses it only
//! when it is whole (both checksums), names the run's id, range and store, and its
//! columns are as long as the run's lists; otherwise the point is built without it. A file
//! of the first format ("EVGVER01", events rather than spells) is read as none, and the
//! next writer to derive versions writes it again. File name: `ver-<run id as 16 hex>.ver`.

use super::ordinals::{with_ordinals, Ordinals, COLUMNS};
use super::versions::{DirVersions, Spells, Versions};
use crate::medium::{Mapped, Medium};
use crate::run::{Run, Sec};
use crate::types::{VertexId, ID_BYTES};
use crate::{Error, Result};

const MAGIC: u64 = u64::from_le_bytes(*b"EVGVER02");
/// The first format's magic: a file that is not damaged, only older.
const MAGIC_V1: u64 = u64::from_le_bytes(*b"EVGVER01");
const WORDS: usize = 32;
const HEADER: usize = WORDS * 8;
const HAS_IN: u64 = 1;
const WIDE: u64 = 16;
/// Where the flags keep the width of the ordinal columns (0: u32, 1: u16, 2: u8).
const ORD_SHIFT: u32 = 2;
const ORD_MASK: u64 = 3;
/// Header words: where each direction's counts start, and the rest.
const OUT_COUNTS: usize = 6;
const IN_COUNTS: usize = 12;
const DIR_COUNTS: usize = 6;
const VERTEX_CHANGES: usize = 18;
const STORE_ID: usize = 19;
const BODY_CRC: usize = WORDS - 2;
const HEADER_CRC: usize = WORDS - 1;

/// The name of run `id`'s versions file.
pub(crate) fn file_name(id: u64) -> String {
    Run::versions_file_name(id)
}

/// The run id a versions file name carries, if it is one.
pub(crate) fn parse_name(name: &str) -> Option<u64> {
    Run::parse_versions_file_name(name)
}

/// The element counts of one direction's sections: born, died, and per kind of spell its
/// vertices and spells.
fn dir_counts(d: Option<&DirVersions>) -> [u64; DIR_COUNTS] {
    d.map_or([0; DIR_COUNTS], |d| {
        let (born, died) = d.ords.lens();
        let (p, a) = (&d.present, &d.absent);
        [
            born,
            died,
            p.vid.get().len(),
            p.len(),
            a.vid.get().len(),
            a.len(),
        ]
        .map(|c| c as u64)
    })
}

fn put<T: bytemuck::Pod>(b: &mut Vec<u8>, s: &[T]) {
    b.extend_from_slice(bytemuck::cast_slice(s));
    b.resize(b.len().next_multiple_of(8), 0);
}

/// `v`'s bytes, for the store `store_id`.
pub(crate) fn encode(v: &Versions, store_id: u64) -> Vec<u8> {
    let mut b = vec![0u8; HEADER];
    put(&mut b, v.commits.get());
    for d in std::iter::once(&v.out).chain(v.inn.as_ref()) {
        with_ordinals!(&d.ords, |c| {
            let [born, died, pf, pt, af, at] = c.columns();
            put(&mut b, born);
            put(&mut b, died);
            for (sp, from, to) in [(&d.present, pf, pt), (&d.absent, af, at)] {
                put(&mut b, sp.vid.get());
                put(&mut b, sp.end.get());
                put(&mut b, sp.nbr.get());
                put(&mut b, from);
                put(&mut b, to);
            }
        });
    }
    put(&mut b, v.vx_at.get());
    put(&mut b, v.vx.get());
    let code = match v.out.ords.width() {
        4 => 0,
        2 => 1,
        _ => 2,
    };
    let flags = if v.inn.is_some() { HAS_IN } else { 0 }
        | if ID_BYTES == 8 { WIDE } else { 0 }
        | code << ORD_SHIFT;
    let mut w = [0u64; WORDS];
    w[..6].copy_from_slice(&[
        MAGIC,
        flags,
        v.run_id,
        v.min_lsn,
        v.max_lsn,
        v.commits.get().len() as u64,
    ]);
    w[OUT_COUNTS..OUT_COUNTS + DIR_COUNTS].copy_from_slice(&dir_counts(Some(&v.out)));
    w[IN_COUNTS..IN_COUNTS + DIR_COUNTS].copy_from_slice(&dir_counts(v.inn.as_ref()));
    w[VERTEX_CHANGES] = v.vx.get().len() as u64;
    w[STORE_ID] = store_id;
    w[BODY_CRC] = u64::from(crate::checksum::crc32c(&b[HEADER..]));
    w[HEADER_CRC] = u64::from(crc32c::crc32c(bytemuck::cast_slice(&w[..HEADER_CRC])));
    b[..HEADER].copy_from_slice(bytemuck::cast_slice(&w));
    b
}

/// Writes `v` for the store `store_id`: under a temporary name, persisted, then renamed.
pub(crate) fn write(medium: &dyn Medium, v: &Versions, store_id: u64) -> Result<()> {
    crate::medium::write_whole(medium, &file_name(v.run_id), &encode(v, store_id))
}

/// Whether the file `name` holds versions of the current format (of any run): a writer
/// derives a run's versions again when it finds none, or older ones.
pub(crate) fn current(medium: &dyn Medium, name: &str) -> bool {
    let magic = |m: Mapped| m.bytes().get(..8).map(|b| b == MAGIC.to_le_bytes());
    medium.exists(name)
        && (medium.open(name).and_then(|f| f.map())).is_ok_and(|m| magic(m) == Some(true))
}

/// The versions of `run` from the medium, mapped in place: `None` when there is no file
/// (or one of the first format, which a writer derives again); an error when one is there
/// but damaged or not `run`'s.
pub(crate) fn read(medium: &dyn Medium, run: &Run, store_id: u64) -> Result<Option<Versions>> {
    let name = file_name(run.header.id);
    if !medium.exists(&name) {
        return Ok(None);
    }
    let map = medium.open(&name)?.map()?;
    if map.bytes().get(..8) == Some(&MAGIC_V1.to_le_bytes()[..]) {
        return Ok(None);
    }
    decode(map, run, store_id)
        .map(Some)
        .map_err(|m| Error::corrupt(format!("{name}: {m}")))
}

/// Parses and checks the mapped bytes `m` as `run`'s versions.
fn decode(m: Mapped, run: &Run, store_id: u64) -> std::result::Result<Versions, String> {
    let b = m.bytes();
    let (w, width) = header(b, run, store_id)?;
    let mut at = HEADER;
    let mut take = |n: u64, size: usize| -> std::result::Result<(usize, usize), String> {
        let off = at;
        let len = (n as usize)
            .checked_mul(size)
            .ok_or("a count out of range")?;
        at = off
            .checked_add(len)
            .ok_or("a count out of range")?
            .next_multiple_of(8);
        match at <= b.len() {
            true => Ok((off, n as usize)),
            false => Err("shorter than its counts say".into()),
        }
    };
    let commits = {
        let (off, n) = take(w[5], 8)?;
        Sec::mapped(m.clone(), off, n)
    };
    let mut dir = |c: &[u64]| -> std::result::Result<DirVersions, String> {
        let ids = |(off, n)| Sec::<VertexId>::mapped(m.clone(), off, n);
        let mut ords = [(0, 0); COLUMNS];
        ords[0] = take(c[0], width)?;
        ords[1] = take(c[1], width)?;
        let mut spells = |vertices: u64, n: u64, col: usize| {
            let s = Spells {
                vid: ids(take(vertices, ID_BYTES)?),
                end: {
                    let (off, k) = take(vertices, 4)?;
                    Sec::mapped(m.clone(), off, k)
                },
                nbr: ids(take(n, ID_BYTES)?),
            };
            ords[col] = take(n, width)?;
            ords[col + 1] = take(n, width)?;
            Ok::<_, String>(s)
        };
        let present = spells(c[2], c[3], 2)?;
        let absent = spells(c[4], c[5], 4)?;
        Ok(DirVersions {
            ords: Ordinals::mapped(&m, width, ords),
            present,
            absent,
        })
    };
    let out = dir(&w[OUT_COUNTS..OUT_COUNTS + DIR_COUNTS])?;
    let inn = match w[1] & HAS_IN != 0 {
        true => Some(dir(&w[IN_COUNTS..IN_COUNTS + DIR_COUNTS])?),
        false => None,
    };
    let (vx_at, vx) = (
        take(w[VERTEX_CHANGES], 4)?,
        take(w[VERTEX_CHANGES], ID_BYTES)?,
    );
    let v = Versions {
        run_id: w[2],
        min_lsn: w[3],
        max_lsn: w[4],
        commits,
        out,
        inn,
        vx_at: Sec::mapped(m.clone(), vx_at.0, vx_at.1),
        vx: Sec::mapped(m.clone(), vx.0, vx.1),
    };
    fits(&v, run)?;
    Ok(v)
}

/// The header words of the file bytes `b`, checked (both checksums, the run and store it
/// names, the id width), and the width of its ordinals.
fn header(b: &[u8], run: &Run, store_id: u64) -> std::result::Result<(Vec<u64>, usize), String> {
    if b.len() < HEADER {
        return Err("shorter than its header".into());
    }
    let w: Vec<u64> = (b[..HEADER].chunks_exact(8))
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    if w[0] != MAGIC {
        return Err("not a versions file".into());
    }
    if w[HEADER_CRC] != u64::from(crc32c::crc32c(&b[..HEADER_CRC * 8])) {
        return Err("header checksum mismatch".into());
    }
    let wide = w[1] & WIDE != 0;
    if wide != (ID_BYTES == 8) {
        return Err("written for another vertex id width".into());
    }
    let h = &run.header;
    if (w[2], w[3], w[4], w[STORE_ID]) != (h.id, h.min_lsn, h.max_lsn, store_id) {
        return Err("written for another run".into());
    }
    if w[BODY_CRC] != u64::from(crate::checksum::crc32c(&b[HEADER..])) {
        return Err("body checksum mismatch".into());
    }
    let width = match (w[1] >> ORD_SHIFT) & ORD_MASK {
        0 => 4,
        1 => 2,
        2 => 1,
        _ => return Err("an unknown width of its ordinals".into()),
    };
    Ok((w, width))
}

/// Whether the columns are as long as `run`'s lists, and each kind of spell is grouped as
/// its readers slice it (vertices ascending, each one's spells ending after the last's,
/// the last where the spells end).
fn fits(v: &Versions, run: &Run) -> std::result::Result<(), String> {
    let fit = |d: &DirVersions, r: &crate::run::DirData| {
        let (born, died) = d.ords.lens();
        born as u64 == r.n_adds() && died as u64 == r.n_tombs()
    };
    let ok = fit(&v.out, &run.out)
        && match (&v.inn, &run.inn) {
            (Some(d), Some(r)) => fit(d, r),
            (None, None) => true,
            _ => false,
        };
    if !ok {
        return Err("its columns do not match the run's lists".into());
    }
    let grouped = |s: &Spells| {
        let (vid, end) = (s.vid.get(), s.end.get());
        vid.windows(2).all(|w| w[0] < w[1])
            && end.windows(2).all(|w| w[0] < w[1])
            && end.last().map_or(0, |&e| e as usize) == s.len()
            && end.first().is_none_or(|&e| e > 0)
    };
    let dirs = std::iter::once(&v.out).chain(v.inn.as_ref());
    match dirs
        .into_iter()
        .all(|d| grouped(&d.present) && grouped(&d.absent))
    {
        true => Ok(()),
        false => Err("its spells are not grouped by vertex".into()),
    }
}
