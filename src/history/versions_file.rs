//! The byte format of a run's versions ([`super::versions`]), a file beside the run.
//!
//! ```text
//! header (128 B): 16 little-endian u64 words:
//!   magic "EVGVER01", flags (1 has in-direction, 16 ids are u64, bits 2-3 the width
//!   of born and died: 0 u32, 1 u16, 2 u8), run id, min_lsn,
//!   max_lsn, commits, out born, out died, out events, in born, in died, in events,
//!   vertex changes, store id, body crc32c (every byte after the header), header crc32c
//!   (of the 15 words before it)
//! sections, each padded to 8 bytes, in this order:
//!   commits: u64 LSN per commit (ordinal k names the k-th)
//!   per direction (out, then in if present):
//!     born: an ordinal per add, died: one per tombstone (u8 below 256 commits, u16
//!       below 65,536, else u32),
//!     event vertices: id per event, event neighbors: id per event,
//!     event commits: u32 per event (top bit: the edge went)
//!   vertex changes: u32 commit per change, then id per change (top bit: deleted)
//! ```
//! A versions file is derived data: the run and the history segments of its range say
//! everything it says. It is written after the run is committed, and a reader uses it only
//! when it is whole (both checksums), names the run's id, range and store, and its
//! columns are as long as the run's lists; otherwise the point is built without it. File
//! name: `ver-<run id as 16 hex>.ver`.

use super::ordinals::{with_ordinals, Ordinals};
use super::versions::{DirVersions, Versions};
use crate::medium::{Mapped, Medium};
use crate::run::{Run, Sec};
use crate::types::{VertexId, ID_BYTES};
use crate::{Error, Result};

const MAGIC: u64 = u64::from_le_bytes(*b"EVGVER01");
const WORDS: usize = 16;
const HEADER: usize = WORDS * 8;
const HAS_IN: u64 = 1;
const WIDE: u64 = 16;
/// Where the flags keep the width of the ordinal columns (0: u32, 1: u16, 2: u8).
const ORD_SHIFT: u32 = 2;
const ORD_MASK: u64 = 3;

/// The name of run `id`'s versions file.
pub(crate) fn file_name(id: u64) -> String {
    Run::versions_file_name(id)
}

/// The run id a versions file name carries, if it is one.
pub(crate) fn parse_name(name: &str) -> Option<u64> {
    Run::parse_versions_file_name(name)
}

/// The element counts of one direction's sections: born, died, events.
fn dir_counts(d: Option<&DirVersions>) -> [u64; 3] {
    d.map_or([0; 3], |d| {
        let (born, died) = d.ords.lens();
        [born as u64, died as u64, d.ev_v.get().len() as u64]
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
            put(&mut b, c.born.get());
            put(&mut b, c.died.get());
        });
        put(&mut b, d.ev_v.get());
        put(&mut b, d.ev_nbr.get());
        put(&mut b, d.ev_at.get());
    }
    put(&mut b, v.vx_at.get());
    put(&mut b, v.vx.get());
    let (o, i) = (dir_counts(Some(&v.out)), dir_counts(v.inn.as_ref()));
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
    w[6..9].copy_from_slice(&o);
    w[9..12].copy_from_slice(&i);
    w[12] = v.vx.get().len() as u64;
    w[13] = store_id;
    w[14] = u64::from(crate::checksum::crc32c(&b[HEADER..]));
    w[15] = u64::from(crc32c::crc32c(bytemuck::cast_slice(&w[..15])));
    b[..HEADER].copy_from_slice(bytemuck::cast_slice(&w));
    b
}

/// Writes `v` for the store `store_id`: under a temporary name, persisted, then renamed.
pub(crate) fn write(medium: &dyn Medium, v: &Versions, store_id: u64) -> Result<()> {
    crate::medium::write_whole(medium, &file_name(v.run_id), &encode(v, store_id))
}

/// The versions of `run` from the medium, mapped in place: `None` when there is no file;
/// an error when one is there but damaged or not `run`'s.
pub(crate) fn read(medium: &dyn Medium, run: &Run, store_id: u64) -> Result<Option<Versions>> {
    let name = file_name(run.header.id);
    if !medium.exists(&name) {
        return Ok(None);
    }
    let map = medium.open(&name)?.map()?;
    decode(map, run, store_id)
        .map(Some)
        .map_err(|m| Error::corrupt(format!("{name}: {m}")))
}

/// Parses and checks the mapped bytes `m` as `run`'s versions.
fn decode(m: Mapped, run: &Run, store_id: u64) -> std::result::Result<Versions, String> {
    let b = m.bytes();
    let (w, width) = header(b, run, store_id)?;
    let mut at = HEADER;
    let mut take = |n: u64, size: usize| -> std::result::Result<usize, String> {
        let off = at;
        let len = (n as usize)
            .checked_mul(size)
            .ok_or("a count out of range")?;
        at = off
            .checked_add(len)
            .ok_or("a count out of range")?
            .next_multiple_of(8);
        match at <= b.len() {
            true => Ok(off),
            false => Err("shorter than its counts say".into()),
        }
    };
    let commits = Sec::mapped(m.clone(), take(w[5], 8)?, w[5] as usize);
    let mut dir = |c: &[u64]| -> std::result::Result<DirVersions, String> {
        let u32s = |off: usize, n: u64| Sec::<u32>::mapped(m.clone(), off, n as usize);
        let ids = |off: usize, n: u64| Sec::<VertexId>::mapped(m.clone(), off, n as usize);
        let at = (take(c[0], width)?, take(c[1], width)?);
        let ords = Ordinals::mapped(&m, width, at, (c[0] as usize, c[1] as usize));
        Ok(DirVersions {
            ords,
            ev_v: ids(take(c[2], ID_BYTES)?, c[2]),
            ev_nbr: ids(take(c[2], ID_BYTES)?, c[2]),
            ev_at: u32s(take(c[2], 4)?, c[2]),
        })
    };
    let out = dir(&w[6..9])?;
    let inn = match w[1] & HAS_IN != 0 {
        true => Some(dir(&w[9..12])?),
        false => None,
    };
    let vx_at = Sec::mapped(m.clone(), take(w[12], 4)?, w[12] as usize);
    let vx = Sec::mapped(m.clone(), take(w[12], ID_BYTES)?, w[12] as usize);
    let v = Versions {
        run_id: w[2],
        min_lsn: w[3],
        max_lsn: w[4],
        commits,
        out,
        inn,
        vx_at,
        vx,
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
    if w[15] != u64::from(crc32c::crc32c(&b[..15 * 8])) {
        return Err("header checksum mismatch".into());
    }
    let wide = w[1] & WIDE != 0;
    if wide != (ID_BYTES == 8) {
        return Err("written for another vertex id width".into());
    }
    let h = &run.header;
    if (w[2], w[3], w[4], w[13]) != (h.id, h.min_lsn, h.max_lsn, store_id) {
        return Err("written for another run".into());
    }
    if w[14] != u64::from(crate::checksum::crc32c(&b[HEADER..])) {
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

/// Whether the columns are as long as `run`'s lists.
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
    match ok {
        true => Ok(()),
        false => Err("its columns do not match the run's lists".into()),
    }
}
