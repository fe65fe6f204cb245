//! Synthetic graph generators: Graph500 Kronecker and uniform random edge lists.
//!
//! Every generator is deterministic in its [`GenSpec`]: edges are produced in fixed-size chunks,
//! each with its own RNG stream derived from `(seed, chunk index)`, so the output does not
//! depend on how many rayon threads happen to run the chunks.

mod kron;
mod shuffle;
mod urand;

pub use shuffle::shuffle;

use crate::error::{Error, Result};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::{SplitMix64, Xoshiro256PlusPlus};
use rayon::prelude::*;

/// Which generator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenKind {
    /// Graph500 Kronecker (R-MAT) graph with a = 0.57, b = c = 0.19: a skewed degree distribution.
    Kron,
    /// Uniform random graph: both endpoints drawn uniformly from all vertices.
    Urand,
}

impl std::str::FromStr for GenKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "kron" => Ok(GenKind::Kron),
            "urand" => Ok(GenKind::Urand),
            _ => Err(format!("unknown generator '{s}': want kron or urand")),
        }
    }
}

impl std::fmt::Display for GenKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GenKind::Kron => "kron",
            GenKind::Urand => "urand",
        })
    }
}

/// What to generate: `2^scale` vertices and `2^scale * edge_factor` edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenSpec {
    /// The generator.
    pub kind: GenKind,
    /// Log2 of the vertex count, 1..=31.
    pub scale: u32,
    /// Edges per vertex (at least 1).
    pub edge_factor: u32,
    /// RNG seed; the same spec always yields the same edges.
    pub seed: u64,
}

/// Edges per independently seeded chunk. Fixed (not derived from the thread count) so that the
/// output is the same however the chunks are scheduled.
const CHUNK_EDGES: usize = 1 << 16;

/// Stream ids keep the RNGs of different uses of one seed independent.
pub(crate) const STREAM_KRON: u64 = 1;
pub(crate) const STREAM_URAND: u64 = 2;
pub(crate) const STREAM_PERM: u64 = 3;
pub(crate) const STREAM_SHUFFLE: u64 = 4;

/// Generates the edge list `spec` describes; duplicates and self-loops are kept.
///
/// Fails with [`Error::Invalid`] if `scale` is outside 1..=31, `edge_factor` is 0, or the edge
/// list cannot be allocated.
pub fn generate(spec: &GenSpec) -> Result<Vec<(u32, u32)>> {
    if !(1..=31).contains(&spec.scale) {
        return Err(Error::Invalid(format!(
            "scale {} is out of range: want 1..=31 (2^scale vertices)",
            spec.scale
        )));
    }
    if spec.edge_factor == 0 {
        return Err(Error::Invalid("edge factor must be at least 1".into()));
    }
    let n = 1u64 << spec.scale;
    let m = n
        .checked_mul(u64::from(spec.edge_factor))
        .and_then(|m| usize::try_from(m).ok())
        .ok_or_else(|| Error::Invalid(format!("{n} x {} edges is too many", spec.edge_factor)))?;
    let mut edges = alloc_zeroed(m, "edges")?;
    match spec.kind {
        GenKind::Kron => {
            let perm = kron::VertexPerm::new(spec.scale, spec.seed);
            edges
                .par_chunks_mut(CHUNK_EDGES)
                .enumerate()
                .for_each(|(i, chunk)| {
                    let mut rng = stream_rng(spec.seed, STREAM_KRON, i as u64);
                    kron::fill(chunk, &mut rng, spec.scale, &perm);
                });
        }
        GenKind::Urand => {
            edges
                .par_chunks_mut(CHUNK_EDGES)
                .enumerate()
                .for_each(|(i, chunk)| {
                    let mut rng = stream_rng(spec.seed, STREAM_URAND, i as u64);
                    urand::fill(chunk, &mut rng, spec.scale);
                });
        }
    }
    Ok(edges)
}

/// Allocates `len` default values, turning allocation failure into an error instead of an abort
/// (a large scale is a user input, not a programming error).
fn alloc_zeroed<T: Clone + Default>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Error::Invalid(format!("cannot allocate {len} {what}: not enough memory")))?;
    v.resize(len, T::default());
    Ok(v)
}

/// SplitMix64's output for state `x`: a cheap bijective mixer with good avalanche
/// (its algorithm is fixed by its definition, unlike a crate's seed expansion).
fn splitmix64(x: u64) -> u64 {
    SplitMix64::from_seed(x.to_le_bytes()).next_u64()
}

/// An RNG for chunk `index` of stream `stream` under `seed`.
///
/// The state is filled by our own SplitMix64 rather than `seed_from_u64`, so generated graphs
/// stay the same even if the RNG crate changes how it expands seeds.
pub(crate) fn stream_rng(seed: u64, stream: u64, index: u64) -> Xoshiro256PlusPlus {
    let mut key = splitmix64(splitmix64(seed ^ splitmix64(stream)) ^ index);
    let mut bytes = [0u8; 32];
    for word in bytes.chunks_exact_mut(8) {
        key = splitmix64(key);
        word.copy_from_slice(&key.to_le_bytes());
    }
    Xoshiro256PlusPlus::from_seed(bytes)
}

/// A uniform integer in `0..bound` by Lemire's multiply-shift; the bias (at most bound / 2^64)
/// is far below anything a graph benchmark can notice, and it needs no rejection loop.
pub(crate) fn below(rng: &mut impl rand::RngCore, bound: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(bound)) >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: GenKind, scale: u32, edge_factor: u32, seed: u64) -> GenSpec {
        GenSpec {
            kind,
            scale,
            edge_factor,
            seed,
        }
    }

    fn with_threads<T: Send>(k: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(k)
            .build()
            .unwrap()
            .install(f)
    }

    /// Out- plus in-degree of every vertex.
    fn degrees(edges: &[(u32, u32)], n: usize) -> Vec<u32> {
        let mut d = vec![0u32; n];
        for &(s, t) in edges {
            d[s as usize] += 1;
            d[t as usize] += 1;
        }
        d
    }

    #[test]
    fn kind_parses_and_prints() {
        assert_eq!("kron".parse::<GenKind>(), Ok(GenKind::Kron));
        assert_eq!("urand".parse::<GenKind>(), Ok(GenKind::Urand));
        assert!("rmat".parse::<GenKind>().is_err());
        assert_eq!(GenKind::Kron.to_string(), "kron");
        assert_eq!(GenKind::Urand.to_string(), "urand");
    }

    #[test]
    fn bad_specs_are_invalid() {
        for s in [
            spec(GenKind::Kron, 0, 16, 1),
            spec(GenKind::Urand, 32, 16, 1),
            spec(GenKind::Kron, 4, 0, 1),
        ] {
            assert!(matches!(generate(&s), Err(Error::Invalid(_))), "{s:?}");
        }
    }

    #[test]
    fn same_output_for_one_and_two_threads() {
        for kind in [GenKind::Kron, GenKind::Urand] {
            // More than one chunk, and a partial last chunk.
            let s = spec(kind, 13, 17, 42);
            let one = with_threads(1, || generate(&s).unwrap());
            let two = with_threads(2, || generate(&s).unwrap());
            assert_eq!(one.len(), (1 << 13) * 17);
            assert!(one == two, "{kind} differs between 1 and 2 threads");
            let other_seed = generate(&spec(kind, 13, 17, 43)).unwrap();
            assert!(one != other_seed, "{kind} ignores the seed");
        }
    }

    #[test]
    fn counts_and_id_range() {
        for kind in [GenKind::Kron, GenKind::Urand] {
            for scale in [1, 5, 10] {
                let s = spec(kind, scale, 8, 7);
                let edges = generate(&s).unwrap();
                let n = 1u32 << scale;
                assert_eq!(edges.len(), n as usize * 8);
                assert!(edges.iter().all(|&(a, b)| a < n && b < n));
            }
        }
    }

    #[test]
    fn kron_is_skewed_and_urand_is_not() {
        let scale = 14;
        let n = 1usize << scale;
        let mean = 2.0 * 16.0; // out + in per vertex
        let kron = degrees(&generate(&spec(GenKind::Kron, scale, 16, 3)).unwrap(), n);
        let kmax = *kron.iter().max().unwrap() as f64;
        assert!(kmax > 20.0 * mean, "kron max degree {kmax} vs mean {mean}");
        // The permutation must spread the hubs over the id space rather than leave them at
        // small ids: the 1% highest-degree vertices should have ids averaging about n/2.
        let mut by_degree: Vec<usize> = (0..n).collect();
        by_degree.sort_by_key(|&v| std::cmp::Reverse(kron[v]));
        let top = &by_degree[..n / 100];
        let mean_id = top.iter().sum::<usize>() as f64 / top.len() as f64;
        assert!(
            (0.35..0.65).contains(&(mean_id / n as f64)),
            "hubs clustered: mean id {mean_id} of {n}"
        );

        let urand = degrees(&generate(&spec(GenKind::Urand, scale, 16, 3)).unwrap(), n);
        let umax = *urand.iter().max().unwrap() as f64;
        assert!(umax < 3.0 * mean, "urand max degree {umax} vs mean {mean}");
        let umin = *urand.iter().min().unwrap();
        assert!(
            umin > 0,
            "urand left a vertex isolated at mean degree {mean}"
        );
    }

    #[test]
    fn stream_rngs_differ() {
        use rand::RngCore;
        let a = stream_rng(1, STREAM_KRON, 0).next_u64();
        let b = stream_rng(1, STREAM_KRON, 1).next_u64();
        let c = stream_rng(1, STREAM_URAND, 0).next_u64();
        let d = stream_rng(2, STREAM_KRON, 0).next_u64();
        assert!(a != b && a != c && a != d && b != c);
        assert_eq!(a, stream_rng(1, STREAM_KRON, 0).next_u64());
    }

    #[test]
    fn below_stays_below() {
        let mut rng = stream_rng(9, 9, 9);
        for bound in [1u64, 2, 3, 7, 1000, u64::MAX] {
            for _ in 0..1000 {
                assert!(below(&mut rng, bound) < bound);
            }
        }
    }
}
