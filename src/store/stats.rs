//! Counters and sizes of an open store.

use super::Inner;
use crate::{wal, Result};
use serde::Serialize;
use std::sync::atomic::Ordering;

/// Runs at one compaction level.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LevelStats {
    /// The level.
    pub level: u64,
    /// Run files at this level.
    pub runs: usize,
    /// Most run files any one partition has at this level (the policy bounds this; all
    /// of them for runs not confined to a partition).
    pub max_runs_per_partition: usize,
    /// Partitions with run files at this level (0 when the runs are not partitioned).
    pub partitions: usize,
    /// Neighbor ids (out direction) in them.
    pub edges: u64,
    /// Their file bytes.
    pub bytes: u64,
}

/// A log tail that a writer's recovery cut (see FORMAT.md, "The log's tail"): the end of
/// the newest WAL segment, past its last block that read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CutTail {
    /// Records cut, at least: those of the blocks whose headers could still be read, or
    /// of the last write the segment's progress record describes. Whether they had been
    /// acknowledged cannot be told from the store, but for `durable_records`.
    pub records: u64,
    /// Bytes cut that were not zero padding (or that the last write covered).
    pub bytes: u64,
    /// The LSN the log was cut at: the first record lost.
    pub lsn: u64,
    /// The manifest commit that recorded the cut (the recovering writer's first).
    pub commit: u64,
    /// When it was recorded, in Unix seconds.
    pub unix_secs: u64,
    /// The segment's file name (`None` when a build before it was recorded cut it).
    pub segment: Option<String>,
    /// The byte offset in the segment where reading stopped.
    pub offset: u64,
    /// Blocks cut whose headers could still be read.
    pub blocks: u64,
    /// Records cut that the segment's progress record proves had been durable: only
    /// damage, not a crash, loses those.
    pub durable_records: u64,
    /// Why no crash can have left the tail, when none can.
    pub damage: Option<String>,
}

/// The newest WAL segment ending in bytes that do not read as blocks, or shorter than the
/// store wrote it, as a read-only handle found it before any writer cut it (FORMAT.md,
/// "The log's tail"). The handle answers from the log up to `offset`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UnreadableTail {
    /// The segment's file name.
    pub segment: String,
    /// The byte offset where reading stops.
    pub offset: u64,
    /// The LSN there: the first record that could not be read.
    pub lsn: u64,
    /// Bytes after `offset` that are not zeros, or that the segment's progress record
    /// says its last write covered.
    pub bytes: u64,
    /// Blocks after `offset`, at least: those whose headers still read.
    pub blocks_at_least: u64,
    /// Records after `offset`, at least.
    pub records_at_least: u64,
    /// Of those, records the segment's progress record proves had been durable.
    pub durable_records_at_least: u64,
    /// Why no crash can have left this tail (`check` then fails); `None` when a crash can
    /// (the last write's blocks, torn within the pages it wrote).
    pub damage: Option<String>,
}

impl CutTail {
    pub(super) fn from_root(c: &crate::manifest::TornTail) -> CutTail {
        CutTail {
            records: c.records,
            bytes: c.bytes,
            lsn: c.lsn,
            commit: c.seq,
            unix_secs: c.unix_secs,
            segment: c.segment.clone(),
            offset: c.offset,
            blocks: c.blocks,
            durable_records: c.durable_records,
            damage: c.damage.clone(),
        }
    }

    /// What was cut, in words: where, how much, and what is known of its records.
    pub fn describe(&self) -> String {
        let at = match &self.segment {
            Some(s) => format!("at LSN {} (segment {s}, byte {})", self.lsn, self.offset),
            None => format!("at LSN {}", self.lsn),
        };
        let mut text = format!(
            "{at}: {} byte(s), at least {} record(s){}; whether they had been acknowledged cannot be told from the store",
            self.bytes,
            self.records,
            match self.segment {
                Some(_) => format!(" in at least {} block(s)", self.blocks),
                None => String::new(),
            }
        );
        if self.durable_records > 0 {
            text += &format!(
                "; at least {} of them had been made durable, as the segment's progress record says: the log was damaged, not only torn by a crash",
                self.durable_records
            );
        }
        if let Some(d) = &self.damage {
            text += &format!("; no crash leaves this: {d}");
        }
        text
    }
}

impl UnreadableTail {
    /// Where reading stops and what lies after it, in words.
    pub fn describe(&self) -> String {
        let durable = match self.durable_records_at_least {
            0 => String::new(),
            n => format!(", of which at least {n} had been made durable"),
        };
        format!(
            "reading stops at byte {} (LSN {}); after it {} byte(s), at least {} block(s) and {} record(s){durable}; whether they were acknowledged cannot be told from the store",
            self.offset, self.lsn, self.bytes, self.blocks_at_least, self.records_at_least
        )
    }

    pub(super) fn from_wal(t: &crate::wal::Tail) -> UnreadableTail {
        UnreadableTail {
            segment: t.segment.clone(),
            offset: t.offset,
            lsn: t.lsn,
            bytes: t.bytes,
            blocks_at_least: t.blocks,
            records_at_least: t.records,
            durable_records_at_least: t.durable_records,
            damage: t.damage.clone(),
        }
    }
}

/// What `evograph stats` prints.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// The store's id (16 hex digits), which every file it writes carries; `None` for a
    /// store from before store ids that no writer has opened since.
    pub store_id: Option<String>,
    /// What created the store, if it said (such as "evograph demo").
    pub created_by: Option<String>,
    /// The manifest commit in force.
    pub commit: u64,
    /// The last log tail a writer's recovery cut, if any ever was.
    pub last_cut: Option<CutTail>,
    /// What a read-only handle found past the end of the log it could read, before any
    /// writer cut it (`None` for a writer, which cuts it and records it in `last_cut`, and
    /// for a reader beside a live writer, whose write in progress it is).
    pub unreadable_tail: Option<UnreadableTail>,
    /// Vertices that exist.
    pub vertices: u64,
    /// Dense ids handed out (existing and deleted vertices).
    pub vertex_ids: u64,
    /// Directed edges in runs and sealed memtables (undirected edges count twice, self-loops once).
    pub edges: u64,
    /// Whether the store is undirected.
    pub undirected: bool,
    /// Whether edges carry weights.
    pub weighted: bool,
    /// How vertices are keyed: "u64" or "string".
    pub keys: String,
    /// How runs store neighbor lists: "none" or "packed".
    pub compression: String,
    /// Durability mode: this handle's for a writer; for a read-only handle, that of the
    /// last writer that opened the store ("unknown" for stores from before it was recorded).
    pub durability: String,
    /// Whether this handle is read-only (it then persists nothing itself).
    pub read_only: bool,
    /// The medium ("file", "pmem", "battery", "memory").
    pub medium: String,
    /// How the medium makes bytes durable (for pmem: whether DAX and cache-line flushes
    /// are in use, or msync because the file system has no DAX).
    pub persist_method: String,
    /// Run files per level.
    pub levels: Vec<LevelStats>,
    /// Merges above level 0 write partitions of `2^partition_bits` vertex ids (0: none).
    pub partition_bits: u32,
    /// Sealed memtables not yet flushed.
    pub dram_runs: usize,
    /// Updates buffered in the active and frozen memtables: edge updates (an undirected
    /// edge's twice, once per end) and vertex updates.
    pub memtable_updates: u64,
    /// DRAM held by the active memtable.
    pub memtable_bytes: u64,
    /// DRAM the engine accounts for: active and frozen memtables, sealed runs not yet
    /// flushed, the vertex dictionary and vertex states (not mapped run files, which the
    /// page cache holds, nor allocator slack).
    pub dram_bytes: u64,
    /// Bytes of the store's files on the medium, WAL spares excluded (they hold no data;
    /// see `wal_spare_bytes`).
    pub medium_bytes: u64,
    /// Bytes of retired WAL segments kept for the next writer to overwrite (at most two).
    pub wal_spare_bytes: u64,
    /// Run versions files: one per run file whose versions are derived (points inside its
    /// range read it filtered by them; `compact` derives them).
    pub versions_files: usize,
    /// Their bytes (part of `medium_bytes`).
    pub versions_bytes: u64,
    /// Bytes written to the medium by this handle.
    pub bytes_written_session: u64,
    /// Bytes written since the store was created (as of the last commit, plus this session).
    pub bytes_written_total: u64,
    /// WAL bytes this handle wrote (part of `bytes_written_session`).
    pub wal_bytes_written: u64,
    /// Run-file bytes this handle's flushes wrote (memtables becoming runs).
    pub flush_bytes_written: u64,
    /// Run-file bytes this handle's merges wrote (compaction). The rest of
    /// `bytes_written_session` is the dictionary and the manifest.
    pub merge_bytes_written: u64,
    /// Persists (fdatasync) issued by this handle.
    pub persists_session: u64,
    /// WAL bytes replayed when this handle opened the store.
    pub wal_bytes_replayed: u64,
    /// Tails a read-only handle loaded at its open instead of replaying their log (a writer
    /// beside it published them; [`crate::Tails`]). They count as level-0 runs above.
    pub tails_loaded: usize,
    /// Next LSN (records logged since creation).
    pub next_lsn: u64,
}

/// What `stats` counts of the published runs: levels, DRAM runs, edges.
struct RunCounts {
    levels: Vec<LevelStats>,
    dram_runs: usize,
    edges: u64,
    frozen_ops: u64,
}

/// What the root in force says of the store, for `stats`.
struct RootFacts {
    store_id: Option<String>,
    created_by: Option<String>,
    commit: u64,
    last_cut: Option<CutTail>,
    durability: String,
    medium: String,
}

impl Inner {
    pub(super) fn stats(&self) -> Result<Stats> {
        let (mem_ops, mem_bytes, next_lsn, deleted) = {
            let w = self.writer.lock().unwrap();
            let deleted: u64 = w.deleted.iter().map(|x| x.count_ones() as u64).sum();
            (w.mem.ops(), w.mem.bytes() as u64, w.next_lsn, deleted)
        };
        let runs = self.run_counts();
        let root = self.root_facts();
        let ids = self.dict.read().unwrap().len() as u64;
        let io = self.medium.stats().snapshot();
        let (durability, medium, persist_method) = if self.opts.read_only {
            // A reader goes through plain files whatever the store was made on; report the
            // store, not the reader.
            let method = "none (read-only handle)".to_string();
            (root.durability, root.medium, method)
        } else {
            (
                self.opts.durability.to_string(),
                self.medium.kind().to_string(),
                self.medium.persist_method(),
            )
        };
        let (medium_bytes, wal_spare_bytes, (versions_files, versions_bytes)) =
            self.file_bytes()?;
        Ok(Stats {
            store_id: root.store_id,
            created_by: root.created_by,
            commit: root.commit,
            last_cut: root.last_cut,
            unreadable_tail: self.unreadable_tail(),
            vertices: ids - deleted,
            vertex_ids: ids,
            edges: runs.edges,
            undirected: self.undirected,
            weighted: self.weighted,
            keys: match self.keys {
                Some(_) => "string".into(),
                None => "u64".into(),
            },
            compression: self.compression.as_str().into(),
            durability,
            read_only: self.opts.read_only,
            medium,
            persist_method,
            levels: runs.levels,
            partition_bits: self.part_shift,
            dram_runs: runs.dram_runs,
            memtable_updates: mem_ops + runs.frozen_ops,
            memtable_bytes: mem_bytes,
            dram_bytes: self.dram_bytes(),
            medium_bytes,
            wal_spare_bytes,
            versions_files,
            versions_bytes,
            bytes_written_session: io.bytes_written,
            bytes_written_total: self.bytes_written_base + io.bytes_written,
            wal_bytes_written: self.wal.as_ref().map_or(0, |w| w.bytes_written()),
            flush_bytes_written: self.run_bytes.flushed.load(Ordering::Relaxed),
            merge_bytes_written: self.run_bytes.merged.load(Ordering::Relaxed),
            persists_session: io.persists,
            wal_bytes_replayed: self.wal_bytes_replayed,
            tails_loaded: self.tails_loaded,
            next_lsn,
        })
    }

    /// Runs per level (and partitions), DRAM runs and the edge count of the published runs.
    fn run_counts(&self) -> RunCounts {
        let st = self.state.lock().unwrap();
        let frozen_ops: u64 = (st.frozen.iter())
            .filter_map(|f| f.mem.lock().unwrap().as_ref().map(|m| m.ops()))
            .sum();
        let mut levels: Vec<LevelStats> = Vec::new();
        let mut edges = 0i64;
        let mut dram_runs = 0;
        let mut parts_seen: Vec<(u64, Option<u64>)> = Vec::new();
        for r in st.runs.iter() {
            edges += r.out.n_adds() as i64 - r.out.n_tombs() as i64;
            if r.in_dram() {
                dram_runs += 1;
                continue;
            }
            let l = r.header.level;
            parts_seen.push((
                l,
                (r.header.part_shift() > 0).then(|| r.header.span().start),
            ));
            match levels.iter_mut().find(|x| x.level == l) {
                Some(x) => {
                    x.runs += 1;
                    x.edges += r.out.n_adds();
                    x.bytes += r.header.file_len;
                }
                None => levels.push(LevelStats {
                    level: l,
                    runs: 1,
                    edges: r.out.n_adds(),
                    bytes: r.header.file_len,
                    ..LevelStats::default()
                }),
            }
        }
        drop(st);
        count_partitions(&mut levels, parts_seen);
        RunCounts {
            levels,
            dram_runs,
            edges: edges.max(0) as u64,
            frozen_ops,
        }
    }

    fn root_facts(&self) -> RootFacts {
        let man = self.manifest.lock().unwrap();
        let root = man.root();
        RootFacts {
            store_id: root.store_id.map(crate::stamp::id_text),
            created_by: root.created_by.clone(),
            commit: root.seq,
            last_cut: root.last_cut.as_ref().map(CutTail::from_root),
            durability: root.durability.clone().unwrap_or_else(|| "unknown".into()),
            medium: root.medium.clone(),
        }
    }

    /// What this read-only handle found past the end of the log (see [`Stats::unreadable_tail`]).
    pub(super) fn unreadable_tail(&self) -> Option<UnreadableTail> {
        let t = self.log_end.tail.as_ref()?;
        let in_progress = self.log_end.writer_present && t.damage.is_none();
        (!in_progress).then(|| UnreadableTail::from_wal(t))
    }

    /// Bytes of the store's files, and of its WAL spares apart, from one listing.
    /// Bytes of the store's files and of its WAL spares, and the count and bytes of its
    /// run versions files.
    fn file_bytes(&self) -> Result<(u64, u64, (usize, u64))> {
        let (spares, files): (Vec<_>, Vec<_>) =
            (self.medium.sizes()?.into_iter()).partition(|(name, _)| wal::segment::is_spare(name));
        let versions: Vec<u64> = (files.iter())
            .filter(|(name, _)| crate::history::versions_file::parse_name(name).is_some())
            .map(|(_, n)| *n)
            .collect();
        let versions = (versions.len(), versions.iter().sum());
        let total = |v: Vec<(String, u64)>| v.into_iter().map(|(_, n)| n).sum::<u64>();
        Ok((total(files), total(spares), versions))
    }
}

/// Fills in each level's partition count and most runs per partition from `(level,
/// partition start)` of every file run (`None`: not confined to a partition).
fn count_partitions(levels: &mut [LevelStats], mut parts_seen: Vec<(u64, Option<u64>)>) {
    levels.sort_by_key(|l| l.level);
    parts_seen.sort_unstable();
    for x in levels {
        let at: Vec<Option<u64>> = (parts_seen.iter())
            .filter(|p| p.0 == x.level)
            .map(|p| p.1)
            .collect();
        let groups = at.chunk_by(|a, b| a == b);
        x.max_runs_per_partition = groups.clone().map(|g| g.len()).max().unwrap_or(0);
        x.partitions = groups.filter(|g| g[0].is_some()).count();
    }
}

impl Inner {
    /// DRAM the engine accounts for (see [`Stats::dram_bytes`]); cheap enough to sample
    /// while ingesting.
    pub(super) fn dram_bytes(&self) -> u64 {
        let (mem, states) = {
            let w = self.writer.lock().unwrap();
            (w.mem.bytes() as u64, w.deleted.capacity() as u64 * 8)
        };
        let (frozen, runs) = {
            let st = self.state.lock().unwrap();
            (
                st.frozen.iter().map(|f| f.bytes as u64).sum::<u64>(),
                st.runs
                    .iter()
                    .filter(|r| r.in_dram())
                    .map(|r| r.bytes())
                    .sum::<u64>(),
            )
        };
        let dict = self.dict.read().unwrap().dram_bytes() as u64;
        let keys = self.keys.as_ref().map_or(0, |k| k.dram_bytes() as u64);
        mem + states + frozen + runs + dict + keys
    }
}
