//! Edge lookups per second (`lookup.*`): random existing and random absent pairs, asked of
//! a hash set of the edges, a binary search in the plain CSR and the store's snapshots.

use super::report::Trial;
use evograph::{GraphView, Snapshot, VertexId};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use std::time::Instant;

/// Pairs asked per kind.
const PAIRS: usize = 1 << 20;

/// The queries: pairs that are edges, pairs that are not, and the edge set that tells.
pub struct Queries {
    existing: Vec<(VertexId, VertexId)>,
    absent: Vec<(VertexId, VertexId)>,
    set: FxHashSet<(VertexId, VertexId)>,
}

fn key(u: VertexId, v: VertexId) -> (VertexId, VertexId) {
    (u, v)
}

impl Queries {
    /// Seeded random pairs over the dense ids of `s` (a compacted snapshot holding every
    /// edge): existing ones drawn from its edges, absent ones drawn uniformly and kept when
    /// not an edge.
    pub fn new(s: &Snapshot, seed: u64) -> Queries {
        let n = s.num_vertices();
        let mut set = FxHashSet::default();
        set.reserve(s.num_edges() as usize);
        let mut all = Vec::with_capacity(s.num_edges() as usize);
        for u in 0..n as VertexId {
            s.for_each_out(u, |v| {
                set.insert(key(u, v));
                all.push((u, v));
            });
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut next = || rng.next_u64();
        let existing = (0..PAIRS.min(all.len() * 4))
            .map(|_| all[(next() % all.len() as u64) as usize])
            .collect();
        let mut absent = Vec::with_capacity(PAIRS);
        while absent.len() < PAIRS && n > 0 {
            let (u, v) = (
                (next() % n as u64) as VertexId,
                (next() % n as u64) as VertexId,
            );
            if !set.contains(&key(u, v)) {
                absent.push((u, v));
            }
        }
        Queries {
            existing,
            absent,
            set,
        }
    }

    /// Times `has` over both kinds of pairs (in parallel on the current pool), checks every
    /// answer, and records millions of lookups per second as `lookup.<kind>.<name>_mlps`.
    pub fn measure(
        &self,
        name: &str,
        has: impl Fn(VertexId, VertexId) -> bool + Sync,
        t: &mut Trial,
    ) -> evograph::Result<()> {
        for (kind, pairs, want) in [
            ("existing", &self.existing, true),
            ("absent", &self.absent, false),
        ] {
            let start = Instant::now();
            let wrong = pairs
                .par_iter()
                .filter(|&&(u, v)| has(u, v) != want)
                .count();
            let secs = start.elapsed().as_secs_f64().max(1e-9);
            if wrong > 0 {
                return Err(evograph::Error::Invalid(format!(
                    "lookup {name}: {wrong} of {} {kind} pairs answered wrong",
                    pairs.len()
                )));
            }
            t.set(
                format!("lookup.{kind}.{name}_mlps"),
                pairs.len() as f64 / secs / 1e6,
            );
        }
        Ok(())
    }

    /// Hash-set lookups: the baseline a user could build in DRAM.
    pub fn measure_hash_set(&self, t: &mut Trial) -> evograph::Result<()> {
        self.measure("hash_set", |u, v| self.set.contains(&key(u, v)), t)
    }
}
