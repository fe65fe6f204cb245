//! Writing a run to a medium, and opening one (its checksums verified on first use).
//!
//! [`RunWriter`] streams the neighbor arrays (the bulk of a run) as they are produced, then
//! writes the indexes, the checksum table and finally the header, and persists the file:
//! this is where a run's bytes become durable.

use super::build::{self, RunMeta};
use super::format::{self, RunHeader, CRC_BLOCK, HAS_IN, HEADER_LEN, IN_DENSE, OUT_DENSE};
use super::{DirData, Run, RunFile, Sec};
use crate::medium::{Mapped, Medium, SegmentFile};
use crate::types::{VertexId, ID_BYTES};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

pub use crate::store::Verify;

/// Writes the body of a run in order, checksumming 1 MiB blocks as it goes.
pub struct RunWriter {
    medium: Arc<dyn Medium>,
    name: String,
    seg: Box<dyn SegmentFile>,
    at: u64,
    crc: u32,
    fill: usize,
    crcs: Vec<u32>,
    adds: [u64; 2],
    dir: usize,
    /// Weights of the current direction, written after its neighbor ids.
    wts: Vec<f64>,
}

impl RunWriter {
    /// Starts the file of run `id`.
    pub fn create(medium: &Arc<dyn Medium>, id: u64) -> Result<RunWriter> {
        let name = Run::file_name(id);
        let seg = medium.create(&name)?;
        Ok(RunWriter {
            medium: medium.clone(),
            name,
            seg,
            at: HEADER_LEN as u64,
            crc: 0,
            fill: 0,
            crcs: Vec::new(),
            adds: [0; 2],
            dir: 0,
            wts: Vec::new(),
        })
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.seg.write_at(self.at, bytes)?;
        self.at += bytes.len() as u64;
        let mut rest = bytes;
        while !rest.is_empty() {
            let take = (CRC_BLOCK - self.fill).min(rest.len());
            self.crc = crc32c::crc32c_append(self.crc, &rest[..take]);
            self.fill += take;
            rest = &rest[take..];
            if self.fill == CRC_BLOCK {
                self.crcs.push(self.crc);
                self.crc = 0;
                self.fill = 0;
            }
        }
        Ok(())
    }

    fn pad8(&mut self) -> Result<()> {
        let pad = (self.at.next_multiple_of(8) - self.at) as usize;
        self.put(&[0u8; 8][..pad])
    }

    /// Appends neighbor ids of the current direction (out first, then in), with their
    /// weights in weighted runs (else `wts` is empty).
    pub fn put_adds(&mut self, adds: &[VertexId], wts: &[f64]) -> Result<()> {
        self.adds[self.dir] += adds.len() as u64;
        self.wts.extend_from_slice(wts);
        self.put(bytemuck::cast_slice(adds))
    }

    /// Ends the current direction: its neighbor ids, then its weights.
    pub fn end_direction(&mut self) -> Result<()> {
        self.pad8()?;
        let wts = std::mem::take(&mut self.wts);
        self.put(bytemuck::cast_slice(&wts))?;
        self.dir += 1;
        Ok(())
    }

    /// Gives up on the run: the partial file is removed (a leftover would be harmless too:
    /// open deletes run files the manifest does not name).
    pub fn abandon(self) {
        let RunWriter {
            medium, name, seg, ..
        } = self;
        drop(seg);
        let _ = medium.remove(&name);
    }

    /// Writes the indexes, checksums and header, persists the file and its directory entry,
    /// and returns the run mapped from the file. The directions' `adds` must have been
    /// streamed with [`RunWriter::put_adds`]; their own `adds` arrays are ignored.
    pub fn finish(
        self,
        meta: &RunMeta,
        out: &DirData,
        inn: Option<&DirData>,
        vertex_ops: &[VertexId],
    ) -> Result<Run> {
        let (run, unpersisted) = self.finish_unpersisted(meta, out, inn, vertex_ops)?;
        unpersisted.persist()?;
        Ok(run)
    }

    /// As [`RunWriter::finish`], but leaves the persist to the caller: the run can be read
    /// at once, and becomes durable (and may be committed) only after
    /// [`Unpersisted::persist`].
    pub fn finish_unpersisted(
        mut self,
        meta: &RunMeta,
        out: &DirData,
        inn: Option<&DirData>,
        vertex_ops: &[VertexId],
    ) -> Result<(Run, Unpersisted)> {
        while self.dir < 2 {
            self.end_direction()?;
        }
        let mut header = build::header(meta, out, inn, vertex_ops.len() as u64);
        debug_assert_eq!(self.adds[0], out.n_adds());
        debug_assert_eq!(self.adds[1], inn.map_or(0, |d| d.n_adds()));
        for (d, dd) in [(0, Some(out)), (1, inn)] {
            let Some(dd) = dd else { continue };
            debug_assert_eq!(self.at, header.section_off[format::vids(d)]);
            self.put(bytemuck::cast_slice(dd.vids.get()))?;
            self.pad8()?;
            self.put(bytemuck::cast_slice(dd.offs.get()))?;
            self.put(bytemuck::cast_slice(dd.toffs.get()))?;
            self.put(bytemuck::cast_slice(dd.tombs.get()))?;
            self.pad8()?;
        }
        debug_assert_eq!(self.at, header.section_off[format::VERTEX_OPS]);
        self.put(bytemuck::cast_slice(vertex_ops))?;
        self.pad8()?;
        if self.fill > 0 {
            self.crcs.push(self.crc);
        }
        debug_assert_eq!(self.at, header.crc_table_off);
        let mut table: Vec<u8> = bytemuck::cast_slice(&self.crcs).to_vec();
        header.crc_table_crc = crc32c::crc32c(&table) as u64;
        table.resize(table.len().next_multiple_of(8), 0);
        self.seg.write_at(header.crc_table_off, &table)?;
        self.seg.write_at(0, &header.encode())?;
        let map = self.seg.map()?;
        let run = open_mapped(map, &self.name, self.medium.clone(), Checked::Written)?;
        Ok((
            run,
            Unpersisted {
                seg: self.seg,
                medium: self.medium,
            },
        ))
    }
}

/// A run file written in full but not yet durable.
#[must_use = "a run is durable only once persisted"]
pub struct Unpersisted {
    seg: Box<dyn SegmentFile>,
    medium: Arc<dyn Medium>,
}

impl Unpersisted {
    /// Persists the file (through the handle that wrote it: on mapped media only it knows
    /// which cache lines are dirty) and its directory entry.
    pub fn persist(self) -> Result<()> {
        self.seg.persist()?;
        self.medium.sync_dir()
    }
}

/// Writes an in-DRAM `run` to its file (see [`RunWriter::finish`]).
pub fn write(run: &Run, medium: &Arc<dyn Medium>) -> Result<Run> {
    let h = &run.header;
    let meta = RunMeta {
        id: h.id,
        level: h.level,
        min_lsn: h.min_lsn,
        max_lsn: h.max_lsn,
        vertex_space: h.vertex_space,
        weighted: h.flags & format::WEIGHTED != 0,
        part_shift: h.part_shift(),
    };
    let mut w = RunWriter::create(medium, h.id)?;
    w.put_adds(run.out.adds.get(), run.out.wts.get())?;
    w.end_direction()?;
    if let Some(i) = &run.inn {
        w.put_adds(i.adds.get(), i.wts.get())?;
    }
    w.end_direction()?;
    w.finish(&meta, &run.out, run.inn.as_ref(), run.vertex_ops.get())
}

/// Opens run file `name`. Only its header and size are read here; `verify` says when its
/// block checksums and offsets are checked (see [`Verify`]).
pub fn open(medium: &Arc<dyn Medium>, name: &str, verify: Verify) -> Result<Run> {
    let map = medium.open(name)?.map()?;
    let run = open_mapped(map, name, medium.clone(), Checked::No)?;
    if verify == Verify::AtOpen {
        run.verify()?;
    }
    Ok(run)
}

/// Whether a run's body is already known good.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checked {
    /// This process just wrote it.
    Written,
    /// It was opened from the medium: verified on first use.
    No,
}

fn open_mapped(map: Mapped, name: &str, medium: Arc<dyn Medium>, checked: Checked) -> Result<Run> {
    let b = map.bytes();
    let h = RunHeader::decode(b, name)?;
    let bad = |m: String| Error::corrupt(format!("run {name}: {m}"));
    if b.len() as u64 != h.file_len {
        return Err(bad(format!(
            "file has {} bytes, its header says {}",
            b.len(),
            h.file_len
        )));
    }
    let table_end = (h.crc_table_off + h.crc_blocks * 4) as usize;
    if b[table_end..].iter().any(|&x| x != 0) {
        return Err(bad("padding after the checksum table is not zero".into()));
    }
    let lens = h.section_lens();
    let ids = |i: usize| {
        Sec::mapped(
            map.clone(),
            h.section_off[i] as usize,
            lens[i] as usize / ID_BYTES,
        )
    };
    let sec64 =
        |i: usize| Sec::mapped(map.clone(), h.section_off[i] as usize, lens[i] as usize / 8);
    let secf = |i: usize| Sec::mapped(map.clone(), h.section_off[i] as usize, lens[i] as usize / 8);
    let dir = |d: usize, dense: bool| DirData {
        dense,
        vids: ids(format::vids(d)),
        offs: sec64(format::offs(d)),
        adds: ids(format::adds(d)),
        wts: secf(format::wts(d)),
        toffs: sec64(format::toffs(d)),
        tombs: ids(format::tombs(d)),
        n_adds: h.dirs[d].n_adds,
    };
    let run = Run {
        out: dir(0, h.flags & OUT_DENSE != 0),
        inn: (h.flags & HAS_IN != 0).then(|| dir(1, h.flags & IN_DENSE != 0)),
        vertex_ops: ids(format::VERTEX_OPS),
        file: Some(RunFile {
            name: name.to_string(),
            medium,
            obsolete: AtomicBool::new(false),
            verified: match checked {
                Checked::Written => OnceLock::from(Ok(())),
                Checked::No => OnceLock::new(),
            },
            map,
        }),
        header: h,
    };
    Ok(run)
}

/// Verifies the crc table and every body block.
pub fn verify_blocks(b: &[u8], h: &RunHeader) -> std::result::Result<(), String> {
    let t0 = h.crc_table_off as usize;
    let table = &b[t0..t0 + h.crc_blocks as usize * 4];
    if crc32c::crc32c(table) as u64 != h.crc_table_crc {
        return Err("checksum table is damaged".into());
    }
    let body = &b[HEADER_LEN..t0];
    let crcs: &[u32] = bytemuck::cast_slice(table);
    let bad = body
        .par_chunks(CRC_BLOCK)
        .zip(crcs.par_iter())
        .position_first(|(blk, &c)| crc32c::crc32c(blk) != c);
    match bad {
        Some(i) => Err(format!(
            "checksum mismatch in block {i} (bytes {}..{})",
            HEADER_LEN + i * CRC_BLOCK,
            (HEADER_LEN + (i + 1) * CRC_BLOCK).min(t0)
        )),
        None => Ok(()),
    }
}

/// Structural checks that keep lookups in bounds: offsets start at 0, never decrease and
/// end at the counts. Run with the checksums, so a writer's bug is caught as well as damage.
pub(super) fn check_offsets(run: &Run) -> std::result::Result<(), String> {
    let span = run.header.span();
    for (name, d) in [("out", Some(&run.out)), ("in", run.inn.as_ref())] {
        let Some(d) = d else { continue };
        if d.dense && span.start > 0 {
            return Err(format!("{name}: a partition's index is dense"));
        }
        let vids = d.vids.get();
        let inside = |x: Option<&VertexId>| x.is_none_or(|&v| span.contains(&(v as u64)));
        if !inside(vids.first()) || !inside(vids.last()) {
            return Err(format!("{name}: vertices outside the run's partition"));
        }
        for (what, offs, n) in [
            ("neighbor", d.offs.get(), d.n_adds()),
            ("tombstone", d.toffs.get(), d.n_tombs()),
        ] {
            if offs.is_empty() {
                continue;
            }
            if offs[0] != 0 || *offs.last().unwrap() != n || offs.windows(2).any(|w| w[0] > w[1]) {
                return Err(format!("{name} {what} offsets are inconsistent"));
            }
        }
    }
    Ok(())
}
