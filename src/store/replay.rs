//! Replaying the log into a fresh memtable, the dictionary and the deleted-vertex bits.

use crate::batch::{id_of, is_del, Section};
use crate::dict::Dict;
use crate::manifest::Root;
use crate::medium::Medium;
use crate::memtable::Memtable;
use crate::run::Run;
use crate::types::{bits, VertexId};
use crate::wal;
use crate::{Error, Result};
use std::sync::Arc;

/// Vertices deleted as of the runs: the last vertex op of each vertex wins. Read at open,
/// before the runs' checks, so each id is bounded by the dictionary's `entries` first: a
/// damaged one sized the bit set (2^31 bits, and at 64 bits an allocation that aborts).
pub(super) fn deleted_in_runs(runs: &[Arc<Run>], entries: u64) -> Result<Vec<u64>> {
    let mut deleted = Vec::new();
    for r in runs {
        for &x in r.vertex_ops.get() {
            if id_of(x) as u64 >= entries {
                let name = Run::file_name(r.header.id);
                return Err(Error::corrupt(format!(
                    "run {name}: a vertex state names id {}, past the dictionary's {entries}",
                    id_of(x)
                )));
            }
            mark_deleted(&mut deleted, x);
        }
    }
    Ok(deleted)
}

fn mark_deleted(deleted: &mut Vec<u64>, x: VertexId) {
    bits::assign(deleted, id_of(x), is_del(x));
}

/// Replays the log from the manifest's start LSN into the memtable, the dictionary and the
/// deleted-vertex bits.
pub(super) fn replay_wal(
    medium: &dyn Medium,
    root: &Root,
    expect: &wal::Expect,
    repair: bool,
    pool: &rayon::ThreadPool,
    (dict, mem, deleted): (&mut Dict, &mut Memtable, &mut Vec<u64>),
) -> Result<wal::Recovered> {
    let mut replay = |blk: &wal::block::Block, skip: u64| -> Result<()> {
        // Recovery hands over each block once, in LSN order, from the manifest's start:
        // the part of a block below the start is skipped, never applied twice.
        assert!(
            blk.first_lsn + skip >= root.wal_start_lsn && skip <= blk.records,
            "replay starts at the manifest's log start"
        );
        assert!(
            blk.first_lsn + skip >= mem.max_lsn,
            "blocks replay in LSN order"
        );
        if blk.batch.span.is_some() && skip > 0 {
            // Runs end at commits: a block whose LSNs count records submitted, not updates,
            // cannot be split by the log's start.
            return Err(Error::corrupt(format!(
                "the log starts inside the commit at LSN {}",
                blk.first_lsn
            )));
        }
        dict.replay(blk.batch.first_new_id, &blk.batch.new_ids)?;
        mem.ensure_vertices(dict.len() as VertexId);
        let mut skip = skip as usize;
        for s in &blk.batch.sections {
            let from = skip.min(s.len());
            skip -= from;
            match s {
                Section::Edges(e, wts) => {
                    if blk.batch.weighted != root.weighted {
                        return Err(Error::corrupt(format!(
                            "WAL block at LSN {} disagrees with the store on edge weights",
                            blk.first_lsn
                        )));
                    }
                    if e[from..]
                        .iter()
                        .any(|&[a, b]| a as usize >= dict.len() || id_of(b) as usize >= dict.len())
                    {
                        return Err(Error::corrupt(format!(
                            "WAL block at LSN {} names a vertex the dictionary lacks",
                            blk.first_lsn
                        )));
                    }
                    let w = if wts.is_empty() {
                        &[][..]
                    } else {
                        &wts[from..]
                    };
                    pool.install(|| mem.apply_edges(&e[from..], w));
                }
                Section::Vertices(v) => {
                    for &x in &v[from..] {
                        if id_of(x) as usize >= dict.len() {
                            return Err(Error::corrupt("WAL vertex record beyond the dictionary"));
                        }
                        mark_deleted(deleted, x);
                        mem.apply_vertex(x);
                    }
                }
            }
        }
        mem.max_lsn = blk.first_lsn + blk.records;
        if blk.batch.time.is_some() {
            mem.last_time = blk.batch.time;
        }
        let time = mem.last_time.unwrap_or(0);
        mem.end_commit(mem.max_lsn, time, dict.len() as u64);
        Ok(())
    };
    wal::recover(medium, expect, repair, &mut replay)
}
