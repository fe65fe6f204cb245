//! Building one direction of a layered view's index (see the parent module): offsets for
//! the sparse runs, the dead positions of the vertices newer runs delete from, and, when
//! the budget holds the whole graph, a sorted copy of every live list.

use super::{Chain, Layer, Offsets, RankWord, Ranks, Side, CHAIN_SHIFT, CLEAN, MAX_RUNS};
use crate::run::{Dir, DirData};
use crate::snapshot::{GraphView, Snapshot};
use crate::types::{gallop, VertexId, VERTEX_TASK};
use rayon::prelude::*;

impl Snapshot {
    /// Builds direction `d`'s index; `None` if more vertices are cut than `cut_of` can
    /// number.
    pub(super) fn layer(&self, d: Dir) -> Option<Layer> {
        let runs: Vec<Offsets> = (self.runs.par_iter())
            .map(|r| offsets_of(r.dir(d)))
            .collect();
        let at = (self.runs.iter())
            .scan(0u64, |sum, r| {
                let start = *sum;
                *sum += r.dir(d).adds.get().len() as u64;
                Some(start)
            })
            .collect();
        let spans: Vec<(usize, usize)> = (self.runs.iter().zip(&runs))
            .map(|(r, o)| span_of(r.dir(d), o))
            .collect();
        let (chain_of, chains) = chains(self.n, &spans);
        let mut l = Layer {
            runs,
            at,
            cut_of: Vec::new(),
            cuts: Vec::new(),
            dels: Vec::new(),
            chain_of,
            chains,
            copy: Default::default(),
        };
        if self.runs[1..].iter().any(|r| r.dir(d).n_tombs() > 0) {
            let blocks = self.dead_blocks(d, &l);
            l.set_cuts(self.n, blocks)?;
        }
        Some(l)
    }

    /// DRAM a copy of direction `d`'s live lists takes (offsets, ids, weights), in bytes.
    pub(super) fn copy_bytes(&self, d: Dir) -> u64 {
        let unit =
            (std::mem::size_of::<VertexId>() + if self.is_weighted() { 8 } else { 0 }) as u64;
        let live: i64 = (self.runs.iter())
            .map(|r| r.dir(d).adds.get().len() as i64 - r.dir(d).n_tombs() as i64)
            .sum();
        live.max(0) as u64 * unit + (self.n as u64 + 1) * 8
    }

    /// Per block of `VERTEX_TASK` vertices, in parallel: its dead positions, sorted.
    fn dead_blocks(&self, d: Dir, l: &Layer) -> Vec<Vec<(VertexId, u64)>> {
        let side = Side::new(self, d, l);
        let tombed: Vec<usize> = (1..self.runs.len())
            .filter(|&j| self.runs[j].dir(d).n_tombs() > 0)
            .collect();
        (0..self.n.div_ceil(VERTEX_TASK))
            .into_par_iter()
            .map(|c| {
                let (lo, hi) = (c * VERTEX_TASK, ((c + 1) * VERTEX_TASK).min(self.n));
                let mut dead: Vec<(VertexId, u64)> = Vec::new();
                for &j in &tombed {
                    let dd = self.runs[j].dir(d);
                    kill(&side, j, dd, lo as VertexId..hi as VertexId, &mut dead);
                }
                // Sorted already when one run kills in one older run (a base and the
                // changes since); else tombstones kill in several runs, whose positions
                // interleave, and several runs' tombstones interleave by vertex.
                if tombed != [1] {
                    dead.sort_unstable();
                }
                dead
            })
            .collect()
    }
}

/// How a view finds vertices in run direction `dd`: its own offsets when it is dense;
/// else a rank directory of the vertices it holds (see [`Ranks`]).
fn offsets_of(dd: &DirData) -> Offsets {
    if dd.dense {
        return Offsets::Own;
    }
    let vids = dd.vids.get();
    let lo = vids.first().copied().unwrap_or(0);
    let span = vids.last().map_or(0, |&last| (last - lo) as usize + 1);
    let mut words = vec![RankWord::default(); span.div_ceil(64)];
    for &v in vids {
        let i = (v - lo) as usize;
        words[i / 64].bits |= 1 << (i % 64);
    }
    let mut before = 0;
    for w in &mut words {
        w.before = before;
        before += u64::from(w.bits.count_ones());
    }
    debug_assert_eq!(before as usize, vids.len(), "ids held are distinct");
    Offsets::Ranked(Ranks { lo, words })
}

/// The vertices `lo..hi` whose lists run direction `dd` holds, read through `o`.
fn span_of(dd: &DirData, o: &Offsets) -> (usize, usize) {
    match o {
        Offsets::Own => (0, dd.offs.get().len().saturating_sub(1)),
        Offsets::Ranked(r) => (r.lo as usize, r.lo as usize + 64 * r.words.len()),
    }
}

/// Per block of `1 << CHAIN_SHIFT` of the `n` vertices, which of the distinct chains
/// (also returned) holds the runs whose span (`lo..hi`, by run, oldest first) meets it.
fn chains(n: usize, spans: &[(usize, usize)]) -> (Vec<u16>, Vec<Chain>) {
    debug_assert!(
        spans.len() <= MAX_RUNS,
        "a chain numbers its runs in a u8 array"
    );
    let mut distinct: Vec<Chain> = Vec::new();
    let chain_of = (0..n.div_ceil(1 << CHAIN_SHIFT))
        .map(|b| {
            let (lo, hi) = (b << CHAIN_SHIFT, (b + 1) << CHAIN_SHIFT);
            let mut c = Chain::default();
            for (k, &(a, e)) in spans.iter().enumerate() {
                if a < hi && lo < e {
                    c.runs[c.len as usize] = k as u8;
                    c.len += 1;
                }
            }
            // Blocks of one partition share its chain, so the last one usually matches.
            match distinct.iter().rposition(|d| d.runs() == c.runs()) {
                Some(k) => k as u16,
                None => {
                    distinct.push(c);
                    (distinct.len() - 1) as u16
                }
            }
        })
        .collect();
    (chain_of, distinct)
}

/// Appends to `dead` the positions that run `j`'s tombstones (direction `dd`) kill among
/// the older runs' lists of the vertices in `vs`: for each tombstone, the newest older run
/// holding its neighbor (runs are resolved: that copy is the live one).
fn kill(
    side: &Side,
    j: usize,
    dd: &DirData,
    vs: std::ops::Range<VertexId>,
    dead: &mut Vec<(VertexId, u64)>,
) {
    let older = &side.slabs()[..j];
    let mut from = vec![0usize; j];
    for i in dd.index_range(vs.start, vs.end) {
        let tombs = dd.tombs_at(i);
        if tombs.is_empty() {
            continue;
        }
        let v = dd.vid_at(i);
        from.fill(0);
        // One run's tombstones ascend: each search gallops on from the last one's place in
        // every older list, so a hub's thousands of deletions cost a walk of its lists.
        for &x in tombs {
            for (k, s) in older.iter().enumerate().rev() {
                let (a, b) = s.range(v);
                let (p, found) = gallop(&s.ids[a..b], from[k], x);
                from[k] = p;
                if found {
                    dead.push((v, s.at + (a + p) as u64));
                    break;
                }
            }
        }
    }
}

impl Layer {
    /// Records the dead positions of `blocks` (each sorted, blocks in vertex order) among
    /// `n` vertices; `None` if more vertices are cut than `cut_of` can number.
    fn set_cuts(&mut self, n: usize, blocks: Vec<Vec<(VertexId, u64)>>) -> Option<()> {
        self.cut_of = vec![CLEAN; n];
        self.dels = Vec::with_capacity(blocks.iter().map(Vec::len).sum());
        for (v, p) in blocks.into_iter().flatten() {
            if self.cut_of[v as usize] == CLEAN {
                if self.cuts.len() >= CLEAN as usize {
                    return None;
                }
                self.cut_of[v as usize] = self.cuts.len() as u32;
                self.cuts.push(self.dels.len() as u64);
            }
            debug_assert!(self.dels.last() != Some(&p), "a position dies once");
            self.dels.push(p);
        }
        self.cuts.push(self.dels.len() as u64);
        Some(())
    }
}
