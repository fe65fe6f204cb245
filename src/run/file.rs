//! Writing a run to a medium, and opening one with its checksums verified.

use super::format::{RunHeader, CRC_BLOCK, HAS_IN, HEADER_LEN, IN_DENSE, OUT_DENSE};
use super::{DirData, Run, RunFile, Sec};
use crate::medium::{Mapped, Medium, SegmentFile};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Streams body bytes to the file in checksummed blocks.
struct BlockWriter<'a> {
    seg: &'a dyn SegmentFile,
    buf: Vec<u8>,
    at: u64,
    crcs: Vec<u32>,
}

impl BlockWriter<'_> {
    fn put(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let take = (CRC_BLOCK - self.buf.len()).min(bytes.len());
            self.buf.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.buf.len() == CRC_BLOCK {
                self.emit()?;
            }
        }
        Ok(())
    }

    fn pad8(&mut self) -> Result<()> {
        let pad = (self.at as usize + self.buf.len()).next_multiple_of(8)
            - (self.at as usize + self.buf.len());
        self.put(&[0u8; 8][..pad])
    }

    fn emit(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.crcs.push(crc32c::crc32c(&self.buf));
        self.seg.write_at(self.at, &self.buf)?;
        self.at += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

fn dir_sections(d: &DirData) -> [&[u8]; 5] {
    [
        bytemuck::cast_slice(d.vids.get()),
        bytemuck::cast_slice(d.offs.get()),
        bytemuck::cast_slice(d.adds.get()),
        bytemuck::cast_slice(d.toffs.get()),
        bytemuck::cast_slice(d.tombs.get()),
    ]
}

/// Writes `run` as file `Run::file_name(id)`, persists it and its directory entry, and
/// returns the run reopened from the file (so its DRAM copy can be dropped).
pub fn write(run: &Run, medium: &Arc<dyn Medium>) -> Result<Run> {
    let name = Run::file_name(run.header.id);
    let seg = medium.create(&name)?;
    let mut header = run.header.clone();
    header.lay_out();
    let mut w = BlockWriter {
        seg: &*seg,
        buf: Vec::with_capacity(CRC_BLOCK),
        at: HEADER_LEN as u64,
        crcs: Vec::new(),
    };
    let mut sections: Vec<&[u8]> = dir_sections(&run.out).to_vec();
    match &run.inn {
        Some(i) => sections.extend(dir_sections(i)),
        None => sections.extend([&[][..]; 5]),
    }
    sections.push(bytemuck::cast_slice(run.vertex_ops.get()));
    let lens = header.section_lens();
    for (i, s) in sections.iter().enumerate() {
        debug_assert_eq!(s.len() as u64, lens[i], "section {i}");
        debug_assert_eq!(w.at + w.buf.len() as u64, header.section_off[i]);
        w.put(s)?;
        w.pad8()?;
    }
    w.emit()?;
    debug_assert_eq!(w.at, header.crc_table_off);
    let mut table: Vec<u8> = bytemuck::cast_slice(&w.crcs).to_vec();
    header.crc_table_crc = crc32c::crc32c(&table) as u64;
    table.resize(table.len().next_multiple_of(8), 0);
    seg.write_at(header.crc_table_off, &table)?;
    seg.write_at(0, &header.encode())?;
    seg.persist()?;
    medium.sync_dir()?;
    let map = seg.map()?;
    open_mapped(map, &name, medium.clone(), false)
}

/// Opens run file `name`; with `verify`, checks every block checksum (in parallel).
pub fn open(medium: &Arc<dyn Medium>, name: &str, verify: bool) -> Result<Run> {
    let map = medium.open(name)?.map()?;
    open_mapped(map, name, medium.clone(), verify)
}

fn open_mapped(map: Mapped, name: &str, medium: Arc<dyn Medium>, verify: bool) -> Result<Run> {
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
    if verify {
        verify_blocks(b, &h).map_err(bad)?;
    }
    let lens = h.section_lens();
    let sec32 =
        |i: usize| Sec::Mapped(map.clone(), h.section_off[i] as usize, lens[i] as usize / 4);
    let sec64 =
        |i: usize| Sec::Mapped(map.clone(), h.section_off[i] as usize, lens[i] as usize / 8);
    let dir = |d: usize, dense: bool| DirData {
        dense,
        vids: sec32(d * 5),
        offs: sec64(d * 5 + 1),
        adds: sec32(d * 5 + 2),
        toffs: sec64(d * 5 + 3),
        tombs: sec32(d * 5 + 4),
    };
    let run = Run {
        out: dir(0, h.flags & OUT_DENSE != 0),
        inn: (h.flags & HAS_IN != 0).then(|| dir(1, h.flags & IN_DENSE != 0)),
        vertex_ops: sec32(10),
        file: Some(RunFile {
            name: name.to_string(),
            medium,
            obsolete: AtomicBool::new(false),
        }),
        header: h,
    };
    check_offsets(&run).map_err(bad)?;
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

/// Cheap structural checks that keep lookups in bounds even on a damaged file whose
/// checksums were not verified: offsets start at 0, never decrease and end at the counts.
fn check_offsets(run: &Run) -> std::result::Result<(), String> {
    for (name, d) in [("out", Some(&run.out)), ("in", run.inn.as_ref())] {
        let Some(d) = d else { continue };
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
