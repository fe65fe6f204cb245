//! Writing a run to a medium, and opening one (its checksums verified on first use).
//!
//! [`RunWriter`] streams the neighbor arrays (the bulk of a run) as they are produced, then
//! writes the indexes, the checksum table and finally the header, and persists the file:
//! this is where a run's bytes become durable.
//!
//! A run is written under a temporary name (`run-<id>.run.tmp`) and renamed to its own only
//! once it is durable ([`Unpersisted::persist_and_name`]). So a file named as a run is always
//! complete: a crash mid-write leaves a `.tmp` file, which no root ever names and the next
//! writer removes, and a run file whose header does not read was damaged after it was
//! written, never torn by a crash.

use super::build::{self, DirPart, RunMeta};
use super::format::{self, RunHeader, CRC_BLOCK, HAS_IN, IN_DENSE, OUT_DENSE};
use super::{packed, DirData, Packed, PackedIndex, Run, RunFile, Sec};
use crate::medium::{Mapped, Medium, SegmentFile};
use crate::run::Compression;
use crate::stamp::Stamp;
use crate::types::{VertexId, ID_BYTES};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use super::Verify;

/// Bytes written between two [`SegmentFile::start_persist`] hints.
const WRITEBACK_STEP: u64 = 8 << 20;

/// Writes the body of a run in order, checksumming 1 MiB blocks as it goes.
pub struct RunWriter {
    medium: Arc<dyn Medium>,
    /// The run's own name, which the file gets once durable.
    name: String,
    /// The name it is written under until then.
    tmp: String,
    seg: Box<dyn SegmentFile>,
    at: u64,
    crc: u32,
    fill: usize,
    crcs: Vec<u32>,
    adds: [u64; 2],
    dir: usize,
    /// Weights of the current direction, written after its neighbor ids.
    wts: Vec<f64>,
    /// Where the bytes not yet handed to [`SegmentFile::start_persist`] start.
    started: u64,
    compression: Compression,
    /// Packed runs: where the current direction's streams started in the file.
    dir_start: u64,
    /// Packed runs: the end of each non-empty stream, relative to its direction's start.
    ends: [Vec<u64>; 2],
    /// Packed runs: each direction's stream bytes.
    packed_len: [u64; 2],
}

impl RunWriter {
    /// Starts the file of run `id`, its neighbor lists stored as `compression` says.
    pub fn create(
        medium: &Arc<dyn Medium>,
        id: u64,
        compression: Compression,
    ) -> Result<RunWriter> {
        let name = Run::file_name(id);
        let tmp = Run::tmp_name(id);
        // A run id is used once: a root already written (even one whose persist failed) may
        // name the file. The medium refuses to create over a name, and the final name is
        // taken by a rename that refuses too; this check names the run in the error.
        if medium.exists(&name) {
            return Err(Error::corrupt(format!(
                "run file {name} already exists; a run id is never written twice"
            )));
        }
        Self::create_as(medium, name, tmp, compression)
    }

    /// Starts a file to be named `name`, written as `tmp` until then (a tail's file: see
    /// [`write_cache`]).
    fn create_as(
        medium: &Arc<dyn Medium>,
        name: String,
        tmp: String,
        compression: Compression,
    ) -> Result<RunWriter> {
        let seg = medium.create(&tmp)?;
        // Every run this build writes is stamped: its header is the long one.
        let at = format::PACKED_HEADER_LEN as u64;
        Ok(RunWriter {
            medium: medium.clone(),
            name,
            tmp,
            seg,
            at,
            crc: 0,
            fill: 0,
            crcs: Vec::new(),
            adds: [0; 2],
            dir: 0,
            wts: Vec::new(),
            started: at,
            compression,
            dir_start: at,
            ends: [Vec::new(), Vec::new()],
            packed_len: [0; 2],
        })
    }

    /// Appends the lists of parts of the current direction (vertices ascending, after
    /// those already put). Packed runs encode the parts in parallel.
    pub fn put_parts(&mut self, parts: &[DirPart]) -> Result<()> {
        match self.compression {
            Compression::None => {
                for p in parts {
                    self.put_adds(&p.adds, &p.wts)?;
                }
                Ok(())
            }
            Compression::Packed => {
                let lists: Vec<Vec<(&[VertexId], &[f64])>> =
                    parts.iter().map(|p| p.lists().collect()).collect();
                self.put_encoded(&lists)
            }
        }
    }

    /// Appends every list of `d` as the current direction.
    pub fn put_dir(&mut self, d: &DirData) -> Result<()> {
        match self.compression {
            Compression::None => self.put_adds(d.adds.get(), d.wts.get()),
            Compression::Packed => {
                debug_assert!(!d.is_packed(), "only DRAM runs (plain) are written whole");
                const SPAN: usize = 1 << 14;
                let n = d.n_index();
                for wave in (0..n).step_by(SPAN * 16) {
                    // Plain DRAM runs lend their lists without a copy.
                    let lists: Vec<Vec<(&[VertexId], &[f64])>> = (wave..(wave + SPAN * 16).min(n))
                        .step_by(SPAN)
                        .map(|s| {
                            (s..(s + SPAN).min(n))
                                .map(|i| (d.adds_at(i), d.wts_at(i)))
                                .collect()
                        })
                        .collect();
                    self.put_encoded(&lists)?;
                }
                Ok(())
            }
        }
    }

    /// Encodes groups of lists in parallel (each group's streams in order; an empty list
    /// has none) and appends them in order, with their weights.
    fn put_encoded(&mut self, groups: &[Vec<(&[VertexId], &[f64])>]) -> Result<()> {
        // Weight positions continue from the lists before: each group starts where the
        // ones before it end.
        let mut base = Vec::with_capacity(groups.len());
        let mut at = self.adds[self.dir];
        for g in groups {
            base.push(at);
            at += g.iter().map(|(a, _)| a.len() as u64).sum::<u64>();
        }
        let encoded: Vec<(Vec<u8>, Vec<u64>)> = groups
            .par_iter()
            .zip(base.par_iter())
            .map(|(g, &first)| {
                let mut buf = Vec::new();
                let mut ends = Vec::new();
                let mut e = first;
                for (adds, wts) in g {
                    if adds.is_empty() {
                        continue;
                    }
                    packed::encode(adds, (!wts.is_empty()).then_some(e), &mut buf);
                    e += adds.len() as u64;
                    ends.push(buf.len() as u64);
                }
                (buf, ends)
            })
            .collect();
        for (g, (buf, ends)) in groups.iter().zip(encoded) {
            let start = self.at - self.dir_start;
            self.ends[self.dir].extend(ends.iter().map(|&e| start + e));
            for (adds, wts) in g {
                self.adds[self.dir] += adds.len() as u64;
                self.wts.extend_from_slice(wts);
            }
            self.put(&buf)?;
        }
        Ok(())
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.seg.write_at(self.at, bytes)?;
        self.at += bytes.len() as u64;
        if self.at - self.started >= WRITEBACK_STEP {
            // Runs are written for hundreds of milliseconds and persisted once at the end:
            // without this the device sits idle until that `fdatasync`, then the writer
            // waits for all of it.
            self.seg.start_persist(self.started, self.at - self.started);
            self.started = self.at;
        }
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
    /// weights in weighted runs (else `wts` is empty). Plain runs only: a packed run needs
    /// the lists' bounds ([`RunWriter::put_parts`]).
    fn put_adds(&mut self, adds: &[VertexId], wts: &[f64]) -> Result<()> {
        debug_assert_eq!(self.compression, Compression::None);
        self.adds[self.dir] += adds.len() as u64;
        self.wts.extend_from_slice(wts);
        self.put(bytemuck::cast_slice(adds))
    }

    /// Ends the current direction: its neighbor ids, then its weights.
    pub fn end_direction(&mut self) -> Result<()> {
        if self.compression == Compression::Packed {
            self.packed_len[self.dir] = self.at - self.dir_start;
            self.put(&[0u8; packed::SLACK])?;
        }
        self.pad8()?;
        let wts = std::mem::take(&mut self.wts);
        self.put(bytemuck::cast_slice(&wts))?;
        self.dir += 1;
        self.dir_start = self.at;
        Ok(())
    }

    /// Gives up on the run: the partial file is removed (a leftover would be harmless too:
    /// a writer's open removes every `.tmp` run file).
    pub fn abandon(self) {
        let RunWriter {
            medium, tmp, seg, ..
        } = self;
        drop(seg);
        let _ = medium.remove(&tmp);
    }

    /// Writes the indexes, checksums and header, persists the file, names it and syncs the
    /// directory, and returns the run mapped from the file. The directions' `adds` must have
    /// been streamed with [`RunWriter::put_adds`]; their own `adds` arrays are ignored.
    pub fn finish(
        self,
        meta: &RunMeta,
        out: &DirData,
        inn: Option<&DirData>,
        vertex_ops: &[VertexId],
    ) -> Result<Run> {
        let (run, unpersisted) = self.finish_unpersisted(meta, out, inn, vertex_ops)?;
        unpersisted.persist_and_name(|| Ok(()))?;
        Ok(run)
    }

    /// As [`RunWriter::finish`], but leaves the persist to the caller: the run can be read
    /// at once (it is mapped from its temporary file), and becomes durable and takes its
    /// name (and may be committed) only after [`Unpersisted::persist_and_name`].
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
        if self.compression == Compression::Packed {
            header.flags |= format::PACKED;
            header.packed_len = self.packed_len;
            header.lay_out();
        }
        assert_eq!(
            self.adds[0],
            out.n_adds(),
            "out lists written and indexed differ"
        );
        assert_eq!(
            self.adds[1],
            inn.map_or(0, |d| d.n_adds()),
            "in lists differ"
        );
        for (d, dd) in [(0, Some(out)), (1, inn)] {
            let Some(dd) = dd else { continue };
            debug_assert_eq!(self.at, header.section_off[format::vids(d)]);
            self.put(bytemuck::cast_slice(dd.vids.get()))?;
            self.pad8()?;
            match self.compression {
                Compression::None => self.put(bytemuck::cast_slice(dd.offs.get()))?,
                Compression::Packed => {
                    let idx = stream_index(dd, &self.ends[d], self.packed_len[d]);
                    if header.index_width(d) == 4 {
                        let narrow: Vec<u32> = idx.iter().map(|&x| x as u32).collect();
                        self.put(bytemuck::cast_slice(&narrow))?;
                        self.pad8()?;
                    } else {
                        self.put(bytemuck::cast_slice(&idx))?;
                    }
                }
            }
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
        debug_assert_eq!(self.dir, 2);
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
                tmp: self.tmp,
                name: self.name,
            },
        ))
    }
}

/// The stream positions of `dd`'s index slots: a slot with neighbors takes the next of
/// `ends` (streams were written in slot order), an empty one the position before it.
fn stream_index(dd: &DirData, ends: &[u64], len: u64) -> Vec<u64> {
    let offs = dd.offs.get();
    let mut idx = Vec::with_capacity(offs.len());
    idx.push(0u64);
    let mut next = ends.iter();
    let mut cur = 0u64;
    for w in offs.windows(2) {
        if w[1] > w[0] {
            cur = *next.next().expect("a stream per vertex with neighbors");
        }
        idx.push(cur);
    }
    assert!(
        next.next().is_none(),
        "more streams than vertices with neighbors"
    );
    assert_eq!(cur, len, "the index ends where the streams do");
    idx
}

/// A run file written in full under its temporary name, not yet durable.
#[must_use = "a run is durable only once persisted"]
pub struct Unpersisted {
    seg: Box<dyn SegmentFile>,
    medium: Arc<dyn Medium>,
    tmp: String,
    name: String,
}

impl Unpersisted {
    /// Persists the file (through the handle that wrote it: on mapped media only it knows
    /// which cache lines are dirty), then calls `before_naming`, then renames the file to
    /// the run's name (refusing to replace one) and syncs the directory.
    ///
    /// `before_naming` is where a flush makes the log durable up to the run's last LSN: a
    /// named run file then never holds records the log could not rebuild unless a root
    /// committed it, which is how open tells a crash before the commit from a `MANIFEST`
    /// rolled back past it.
    pub fn persist_and_name(self, before_naming: impl FnOnce() -> Result<()>) -> Result<()> {
        self.seg.persist()?;
        before_naming()?;
        self.medium.rename(&self.tmp, &self.name)?;
        self.medium.sync_dir()
    }
}

/// Writes an in-DRAM `run` as file `name`, plain, stamped with `stamp`, and names it
/// without persisting it: a cache of records the log holds (a writer's tail), which a
/// crash may tear and its reader must check whole before use. Written under `name.tmp`
/// (one a crash left is replaced) and renamed over any file of that name, so a reader
/// never finds it half written. Returns the file's length.
pub(crate) fn write_cache(
    run: &Run,
    medium: &Arc<dyn Medium>,
    name: &str,
    stamp: Stamp,
) -> Result<u64> {
    let tmp = format!("{name}.tmp");
    if medium.exists(&tmp) {
        medium.remove(&tmp)?;
    }
    let w = RunWriter::create_as(medium, name.to_string(), tmp.clone(), Compression::None)?;
    let (written, u) = write_with(w, run, Compression::None, stamp)?;
    drop(u.seg);
    medium.rename_replacing(&tmp, name)?;
    Ok(written.header.file_len)
}

/// Writes an in-DRAM `run` to its file (see [`RunWriter::finish`]), its lists stored as
/// `compression` says, stamped with `stamp`.
pub fn write(
    run: &Run,
    medium: &Arc<dyn Medium>,
    compression: Compression,
    stamp: Stamp,
) -> Result<Run> {
    let (run, u) = write_unpersisted(run, medium, compression, stamp)?;
    u.persist_and_name(|| Ok(()))?;
    Ok(run)
}

/// As [`write`], leaving the persist and the naming to the caller.
pub fn write_unpersisted(
    run: &Run,
    medium: &Arc<dyn Medium>,
    compression: Compression,
    stamp: Stamp,
) -> Result<(Run, Unpersisted)> {
    let w = RunWriter::create(medium, run.header.id, compression)?;
    write_with(w, run, compression, stamp)
}

/// Streams in-DRAM `run` through `w` and finishes it (not persisted).
fn write_with(
    mut w: RunWriter,
    run: &Run,
    compression: Compression,
    stamp: Stamp,
) -> Result<(Run, Unpersisted)> {
    let h = &run.header;
    let meta = RunMeta {
        id: h.id,
        level: h.level,
        min_lsn: h.min_lsn,
        max_lsn: h.max_lsn,
        vertex_space: h.vertex_space,
        weighted: h.flags & format::WEIGHTED != 0,
        part_shift: h.part_shift(),
        compression,
        stamp,
        last_time: h.last_time,
    };
    w.put_dir(&run.out)?;
    w.end_direction()?;
    if let Some(i) = &run.inn {
        w.put_dir(i)?;
    }
    w.end_direction()?;
    w.finish_unpersisted(&meta, &run.out, run.inn.as_ref(), run.vertex_ops.get())
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
    let sections = Sections {
        map: &map,
        h: &h,
        lens: h.section_lens(),
        checked,
    };
    let run = Run {
        out: sections.dir(0, h.flags & OUT_DENSE != 0),
        inn: (h.flags & HAS_IN != 0).then(|| sections.dir(1, h.flags & IN_DENSE != 0)),
        vertex_ops: sections.sec(format::VERTEX_OPS, ID_BYTES),
        file: Some(RunFile {
            name: name.to_string(),
            medium,
            obsolete: AtomicBool::new(false),
            verified: match checked {
                Checked::Written => OnceLock::from(Ok(())),
                Checked::No => OnceLock::new(),
            },
            map: map.clone(),
        }),
        header: h.clone(),
    };
    Ok(run)
}

/// A mapped run file's sections, as its header lays them out.
struct Sections<'a> {
    map: &'a Mapped,
    h: &'a RunHeader,
    lens: [u64; format::SECTIONS],
    checked: Checked,
}

impl Sections<'_> {
    /// Section `i`, as elements of `size` bytes.
    fn sec<T: bytemuck::Pod>(&self, i: usize, size: usize) -> Sec<T> {
        let at = self.h.section_off[i] as usize;
        Sec::mapped(self.map.clone(), at, self.lens[i] as usize / size)
    }

    /// Direction `d`'s data: plain arrays, or packed streams and their index.
    fn dir(&self, d: usize, dense: bool) -> DirData {
        let packed = self.h.is_packed();
        DirData {
            dense,
            vids: self.sec(format::vids(d), ID_BYTES),
            offs: if packed {
                Sec::default()
            } else {
                self.sec(format::offs(d), 8)
            },
            adds: if packed {
                Sec::default()
            } else {
                self.sec(format::adds(d), ID_BYTES)
            },
            wts: self.sec(format::wts(d), 8),
            toffs: self.sec(format::toffs(d), 8),
            tombs: self.sec(format::tombs(d), ID_BYTES),
            n_adds: self.h.dirs[d].n_adds,
            loops: self.h.loops,
            packed: packed.then(|| self.packed(d)),
            directory: Default::default(),
        }
    }

    /// Direction `d`'s packed streams and their index (4- or 8-byte positions).
    fn packed(&self, d: usize) -> Packed {
        let at = self.h.section_off[format::offs(d)] as usize;
        let n = self.h.dirs[d].n_index as usize + 1;
        let index = if self.h.index_width(d) == 4 {
            PackedIndex::Narrow(Sec::mapped(self.map.clone(), at, n))
        } else {
            PackedIndex::Wide(Sec::mapped(self.map.clone(), at, n))
        };
        let bytes = self.sec(format::adds(d), 1);
        let weighted = self.h.flags & format::WEIGHTED != 0;
        Packed::new(bytes, index, weighted, self.checked == Checked::Written)
    }
}

/// Verifies the crc table and every body block.
pub fn verify_blocks(b: &[u8], h: &RunHeader) -> std::result::Result<(), String> {
    let t0 = h.crc_table_off as usize;
    let table = &b[t0..t0 + h.crc_blocks as usize * 4];
    if crc32c::crc32c(table) as u64 != h.crc_table_crc {
        return Err("checksum table is damaged".into());
    }
    let hl = h.header_len();
    let body = &b[hl..t0];
    let crcs: &[u32] = bytemuck::cast_slice(table);
    let bad = body
        .par_chunks(CRC_BLOCK)
        .zip(crcs.par_iter())
        .position_first(|(blk, &c)| crc32c::crc32c(blk) != c);
    match bad {
        Some(i) => Err(format!(
            "checksum mismatch in block {i} (bytes {}..{})",
            hl + i * CRC_BLOCK,
            (hl + (i + 1) * CRC_BLOCK).min(t0)
        )),
        None => Ok(()),
    }
}

/// Whether no offset is below the one before it. In parallel chunks, each checked by a
/// loop without an early exit that the compiler vectorizes: a level-0 run at Kron26 holds
/// an offset per vertex (33 M) in each direction, and a check an offset at a time (or a
/// parallel iterator over windows) was a sixth of a first snapshot's verification.
fn nondecreasing(offs: &[u64]) -> bool {
    const CHUNK: usize = 1 << 16;
    offs.par_chunks(CHUNK).enumerate().all(|(i, c)| {
        let joined = i == 0 || offs[i * CHUNK - 1] <= c[0];
        joined && c.windows(2).fold(true, |ok, w| ok & (w[0] <= w[1]))
    })
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
        if let Some(p) = &d.packed {
            check_packed(p, d).map_err(|m| format!("{name}: {m}"))?;
        }
        for (what, offs, n) in [
            ("neighbor", d.offs.get(), d.n_adds()),
            ("tombstone", d.toffs.get(), d.n_tombs()),
        ] {
            if offs.is_empty() {
                continue;
            }
            if offs[0] != 0 || *offs.last().unwrap() != n || !nondecreasing(offs) {
                return Err(format!("{name} {what} offsets are inconsistent"));
            }
        }
    }
    Ok(())
}

/// Checks every stream of a packed direction the way readers walk it (see
/// [`packed::check_stream`]), in parallel, then marks the direction checked.
fn check_packed(p: &Packed, d: &DirData) -> std::result::Result<(), String> {
    // Neighbors may be any vertex (a partition's run lists only its own vertices, not
    // their neighbors); `check` bounds them by the dictionary, like plain runs' neighbors.
    let space = VertexId::MAX as u64;
    let n = d.n_index();
    let b = p.bytes.get();
    let len = b.len() - packed::SLACK;
    if p.index.len() != n + 1 || p.index.at(0) != 0 || p.index.at(n) != len {
        return Err("stream index does not span the streams".into());
    }
    if b[len..].iter().any(|&x| x != 0) {
        return Err("bytes after the last stream are not zero".into());
    }
    const SPAN: usize = 1 << 14;
    // Per span of slots: its total degree and, in weighted runs, whether its weight
    // positions follow each other from where the span's first list says.
    let spans: Vec<(u64, Option<u64>)> = (0..n.div_ceil(SPAN))
        .into_par_iter()
        .map(|c| {
            let mut total = 0u64;
            let mut first_eoff = None;
            for i in c * SPAN..((c + 1) * SPAN).min(n) {
                let (s, e) = (p.index.at(i), p.index.at(i + 1));
                if s > e {
                    return Err("stream index decreases".to_string());
                }
                let Some(h) = packed::check_stream(b, s, e, p.weighted, space)? else {
                    continue;
                };
                if p.weighted {
                    let at = *first_eoff.get_or_insert(h.eoff);
                    if h.eoff != at + total {
                        return Err("weight positions do not follow the lists".into());
                    }
                }
                total += h.degree as u64;
            }
            Ok((total, first_eoff))
        })
        .collect::<std::result::Result<_, String>>()?;
    let mut sum = 0u64;
    for (total, first) in spans {
        if first.is_some_and(|f| f != sum) {
            return Err("weight positions do not follow the lists".into());
        }
        sum += total;
    }
    if sum != d.n_adds() || (p.weighted && d.wts.get().len() as u64 != sum) {
        return Err("streams hold a different number of neighbors than the header".into());
    }
    p.checked.store(true, std::sync::atomic::Ordering::Release);
    Ok(())
}
