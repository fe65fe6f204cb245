//! A custom vertex program: k-core decomposition by synchronous peeling. Every vertex knows
//! the current k; one that has fewer than k edges left leaves the core (its core number is
//! k - 1) and tells its neighbours; when a superstep removes nobody (an aggregator says so),
//! every vertex moves on to k + 1. Edge directions are ignored; an edge counts once per end.
//!
//! Usage: `cargo run --release --example kcore [STORE]` (without a store: a Kronecker graph
//! of 2^14 vertices in a temporary one). Prints the core sizes and checks every core number
//! against sequential peeling.

use evograph::pregel::{self, Aggregate, Context, Edges, Messages, Program, Sum};
use evograph::{Graph, GraphView, Options, Snapshot, VertexId};

/// (edges left, current k, core number once out of the core).
type State = (u32, u32, Option<u32>);

struct KCore;

impl Program for KCore {
    type Value = State;
    type Message = u32; // neighbours that left the core
    type Combiner = Sum;
    const EDGES: Edges = Edges::Both;
    const AGGREGATES: &'static [Aggregate] = &[Aggregate::Sum]; // vertices removed

    fn init(&self, _: VertexId) -> State {
        (0, 0, None)
    }

    fn compute<G: GraphView>(&self, ctx: &mut Context<'_, Self, G>, left: Messages<'_, u32>) {
        let (mut edges, mut k, core) = *ctx.value();
        if core.is_some() {
            return ctx.vote_to_halt(); // woken by a message after leaving
        }
        if ctx.superstep() == 0 {
            let both = !ctx.graph().is_undirected();
            edges = (ctx.out_degree() + if both { ctx.in_degree() } else { 0 }) as u32;
        } else if ctx.aggregated(0) == 0.0 {
            k += 1; // nobody left in the last superstep: the k-core is stable
        }
        edges -= left.into_iter().sum::<u32>();
        if ctx.superstep() > 0 && edges < k {
            ctx.set_value((edges, k, Some(k - 1)));
            ctx.aggregate(0, 1.0);
            ctx.broadcast(1);
            return ctx.vote_to_halt();
        }
        ctx.set_value((edges, k, None));
    }
}

/// Core numbers by sequential peeling: repeatedly remove a vertex with at most k edges left.
fn peel(s: &Snapshot) -> Vec<Option<u32>> {
    let n = s.num_vertices();
    let neighbours = |v: VertexId| {
        let mut out = Vec::new();
        s.for_each_out(v, |w| out.push(w));
        if !s.is_undirected() {
            s.for_each_in(v, |w| out.push(w));
        }
        out
    };
    let mut left: Vec<usize> = (0..n as VertexId).map(|v| neighbours(v).len()).collect();
    let mut core = vec![None; n];
    let mut alive: Vec<VertexId> = (0..n as VertexId).filter(|&v| s.vertex_exists(v)).collect();
    let mut k = 0;
    while !alive.is_empty() {
        let mut stack: Vec<VertexId> = alive
            .iter()
            .copied()
            .filter(|&v| left[v as usize] <= k)
            .collect();
        while let Some(v) = stack.pop() {
            if core[v as usize].is_some() {
                continue;
            }
            core[v as usize] = Some(k as u32);
            for w in neighbours(v) {
                left[w as usize] -= 1;
                if left[w as usize] <= k && core[w as usize].is_none() {
                    stack.push(w);
                }
            }
        }
        alive.retain(|&v| core[v as usize].is_none());
        k += 1;
    }
    core
}

fn main() -> evograph::Result<()> {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let g = match std::env::args().nth(1) {
        Some(store) => Graph::open(store, Options::new().create(false))?,
        None => {
            let g = Graph::create(tmp.path().join("store"), Options::default())?;
            let spec = evograph::gen::GenSpec {
                kind: evograph::gen::GenKind::Kron,
                scale: 14,
                edge_factor: 8,
                seed: 1,
            };
            let edges = evograph::gen::generate(&spec)?;
            g.insert_edges(
                &edges
                    .iter()
                    .map(|&(u, v)| (u as u64, v as u64))
                    .collect::<Vec<_>>(),
            )?;
            g
        }
    };
    let s = g.snapshot()?;
    let out = pregel::run_snapshot(&s, &KCore, &pregel::Config::default())?;
    assert!(out.halted(), "{}", out.stop);
    let cores: Vec<Option<u32>> = out.values.iter().map(|v| v.2).collect();
    let max = cores.iter().flatten().max().copied().unwrap_or(0);
    for k in (0..=max).rev().take(5) {
        let size = cores.iter().filter(|c| c.is_some_and(|c| c >= k)).count();
        println!("{k}-core: {size} vertices");
    }
    println!(
        "{} supersteps, {} edges processed",
        out.supersteps, out.edges
    );
    assert_eq!(cores, peel(&s), "pregel and sequential peeling disagree");
    println!("every core number matches sequential peeling");
    drop(s);
    g.close()
}
