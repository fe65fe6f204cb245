//! Every shipped program against a sequential reference on random histories (deleted
//! vertices and edges, several runs with tombstones), on the live snapshot, its views, the
//! compacted store and a plain CSR; push against pull; combined against delivered each; and
//! the engine's edges: the superstep limit, misuse, aggregators, programs without combiner.
//! `EVOGRAPH_PREGEL_CASES=n` runs n random histories instead of 48.

use super::programs::{Bfs, Components, PageRank, Sssp};
use super::*;
use crate::algo::graphalytics::testkit::{history, Model, Views};
use crate::algo::graphalytics::UNREACHABLE;
use crate::VertexId;
use proptest::prelude::*;
use std::collections::{BTreeMap, VecDeque};

/// Every delivery and combining mode a broadcast-only program can run in.
const MODES: [(Delivery, Combining); 4] = [
    (Delivery::Push, Combining::Combine),
    (Delivery::Push, Combining::DeliverEach),
    (Delivery::Pull, Combining::Combine),
    (Delivery::Pull, Combining::DeliverEach),
];

fn cfg(delivery: Delivery, combining: Combining) -> Config {
    Config {
        delivery: Some(delivery),
        combining,
        ..Default::default()
    }
}

fn hops(m: &Model, src: u64) -> BTreeMap<u64, i64> {
    let mut d: BTreeMap<u64, i64> = m.vertices.iter().map(|&v| (v, UNREACHABLE)).collect();
    let mut q = VecDeque::from([src]);
    d.insert(src, 0);
    while let Some(u) = q.pop_front() {
        for w in m.out(u) {
            if d[&w] == UNREACHABLE {
                d.insert(w, d[&u] + 1);
                q.push_back(w);
            }
        }
    }
    d
}

/// Each vertex mapped to the smallest external id of its weak component.
fn components(m: &Model) -> BTreeMap<u64, u64> {
    let mut label: BTreeMap<u64, u64> = m.vertices.iter().map(|&v| (v, v)).collect();
    loop {
        let mut changed = false;
        for &(a, b) in &m.edges {
            let l = label[&a].min(label[&b]);
            for x in [a, b] {
                if label[&x] > l {
                    label.insert(x, l);
                    changed = true;
                }
            }
        }
        if !changed {
            return label;
        }
    }
}

fn pagerank(m: &Model, d: f64, iters: u32) -> BTreeMap<u64, f64> {
    let n = m.vertices.len() as f64;
    let mut r: BTreeMap<u64, f64> = m.vertices.iter().map(|&v| (v, 1.0 / n)).collect();
    for _ in 0..iters {
        let sinks: f64 = m
            .vertices
            .iter()
            .filter(|&&v| m.out(v).is_empty())
            .map(|v| r[v])
            .sum();
        r = m
            .vertices
            .iter()
            .map(|&v| {
                let inc: f64 = m.inn(v).iter().map(|u| r[u] / m.out(*u).len() as f64).sum();
                (v, (1.0 - d) / n + d * inc + d * sinks / n)
            })
            .collect();
    }
    r
}

/// Labels renamed to the smallest external id carrying them, so partitions compare as maps.
fn canonical(labels: BTreeMap<u64, u64>) -> BTreeMap<u64, u64> {
    let mut least: BTreeMap<u64, u64> = BTreeMap::new();
    for (&v, &l) in &labels {
        let e = least.entry(l).or_insert(v);
        *e = (*e).min(v);
    }
    labels.into_iter().map(|(v, l)| (v, least[&l])).collect()
}

fn close(got: &BTreeMap<u64, f64>, want: &BTreeMap<u64, f64>, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: vertex sets differ");
    for (k, w) in want {
        let g = got[k];
        assert!(
            g == *w || (g - w).abs() <= 1e-9 * w.abs().max(1e-12),
            "{what}: vertex {k}: got {g}, want {w}"
        );
    }
}

/// Runs every program in every mode on `g` (whose dense ids `dense`/`ext` translate) and
/// checks each against the references.
fn check_all<G: GraphView>(
    g: &G,
    m: &Model,
    map: &dyn Fn(&[f64]) -> BTreeMap<u64, f64>,
    dense: &dyn Fn(u64) -> VertexId,
    what: &str,
) {
    let Some(&src) = m.vertices.iter().next() else {
        return;
    };
    let as_f = |xs: &[i64]| xs.iter().map(|&x| x as f64).collect::<Vec<_>>();
    let want_bfs: BTreeMap<u64, f64> = hops(m, src)
        .into_iter()
        .map(|(k, v)| (k, v as f64))
        .collect();
    let want_sssp: BTreeMap<u64, f64> = hops(m, src)
        .into_iter()
        .map(|(k, v)| {
            (
                k,
                if v == UNREACHABLE {
                    f64::INFINITY
                } else {
                    v as f64
                },
            )
        })
        .collect();
    let want_cc = canonical(components(m));
    let want_pr = pagerank(m, 0.85, 7);
    let mut phase = vec![3u8; g.num_vertices()];
    for &x in &m.vertices {
        phase[dense(x) as usize] = (x % 3) as u8;
    }
    let pulses = Pulses(phase);
    let want_pulses: BTreeMap<u64, f64> = m
        .vertices
        .iter()
        .map(|&w| {
            let inn = m.inn(w);
            let heard: u64 = inn.iter().map(|&u| 3 + 2 * (u % 3)).sum();
            let phases: std::collections::BTreeSet<u64> = inn.iter().map(|u| u % 3).collect();
            (w, (heard * 16 + 2 * phases.len() as u64) as f64)
        })
        .collect();
    for (delivery, combining) in MODES {
        let c = cfg(delivery, combining);
        let w = format!("{what} {delivery:?} {combining:?}");
        let o = run(g, &Bfs { source: dense(src) }, &c).unwrap();
        assert!(o.halted(), "{w}: bfs halts");
        close(&map(&as_f(&o.values)), &want_bfs, &format!("{w} bfs"));
        let o = run(g, &Components, &c).unwrap();
        let labels = map(&o.values.iter().map(|&l| l as f64).collect::<Vec<_>>());
        // Labels are dense ids: equal labels must be exactly the reference's partition.
        let got = canonical(labels.into_iter().map(|(k, l)| (k, l as u64)).collect());
        assert_eq!(got, want_cc, "{w} components");
        let o = run(
            g,
            &PageRank {
                damping: 0.85,
                iterations: 7,
            },
            &c,
        )
        .unwrap();
        assert_eq!(
            o.supersteps, 8,
            "{w}: pagerank runs its iterations plus the first"
        );
        close(&map(&o.values), &want_pr, &format!("{w} pagerank"));
        let o = run(g, &pulses, &c).unwrap();
        let got = map(&o.values.iter().map(|&x| x as f64).collect::<Vec<_>>());
        assert_eq!(got, want_pulses, "{w} pulses");
        if delivery == Delivery::Push {
            let o = run(g, &Sssp { source: dense(src) }, &c).unwrap();
            close(&map(&o.values), &want_sssp, &format!("{w} sssp"));
        }
    }
}

/// Random histories per run: 48, or `EVOGRAPH_PREGEL_CASES` for a soak.
fn cases() -> u32 {
    std::env::var("EVOGRAPH_PREGEL_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn programs_match_references_in_every_mode((undirected, steps) in history()) {
        let v = Views::build(undirected, &steps);
        let m = &v.model;
        let snap_map = |xs: &[f64]| v.snap_map(xs);
        let snap_dense = |x: u64| v.snap_dense(x);
        check_all(&v.snap, m, &snap_map, &snap_dense, "live snapshot");
        crate::with_view!(&v.snap, |g| check_all(g, m, &snap_map, &snap_dense, "live view"));
        check_all(&v.csr, m, &|xs: &[f64]| v.csr_map(xs), &|x| v.csr_dense(x), "csr");
        v.graph.compact().unwrap();
        let comp = v.graph.snapshot().unwrap();
        let comp_map = |xs: &[f64]| {
            (0..xs.len() as VertexId)
                .filter(|&u| comp.vertex_exists(u))
                .map(|u| (comp.external_id(u), xs[u as usize]))
                .collect::<BTreeMap<_, _>>()
        };
        crate::with_view!(&comp, |g| check_all(g, m, &comp_map, &snap_dense, "compacted"));
    }
}

/// Each vertex broadcasts `s` in the supersteps `s < 6` with `s % 3` its phase (given by
/// dense id; 3 never speaks), and keeps 16 times the sum of what it hears plus the number of
/// supersteps in which it heard anything. In pull delivery, a vertex that does not broadcast
/// in a superstep must not be heard with what it broadcast before, and a broadcast of 0 (the
/// sum's identity) is still heard.
struct Pulses(Vec<u8>);

impl Program for Pulses {
    type Value = u64;
    type Message = u64;
    type Combiner = Sum;
    fn init(&self, _: VertexId) -> u64 {
        0
    }
    fn compute<G: GraphView>(&self, ctx: &mut Context<'_, Self, G>, msgs: Messages<'_, u64>) {
        let heard = !msgs.is_empty() as u64;
        *ctx.value_mut() += msgs.iter().sum::<u64>() * 16 + heard;
        let s = ctx.superstep();
        if s == 6 {
            return ctx.vote_to_halt();
        }
        if u32::from(self.0[ctx.vertex() as usize]) == s % 3 {
            ctx.broadcast(u64::from(s));
        }
    }
}

/// Never halts: every vertex broadcasts every superstep.
struct Chatter;

impl Program for Chatter {
    type Value = u32;
    type Message = u32;
    type Combiner = Sum;
    fn init(&self, _: VertexId) -> u32 {
        0
    }
    fn compute<G: GraphView>(&self, ctx: &mut Context<'_, Self, G>, msgs: Messages<'_, u32>) {
        *ctx.value_mut() += msgs.len() as u32;
        ctx.broadcast(1);
    }
}

fn ring(n: VertexId) -> crate::snapshot::Csr {
    let e: Vec<_> = (0..n).map(|v| (v, (v + 1) % n)).collect();
    crate::snapshot::Csr::from_edges(n as usize, &e, false)
}

#[test]
fn a_program_that_never_halts_stops_at_the_limit_and_says_so() {
    let g = ring(10);
    for delivery in [Delivery::Push, Delivery::Pull] {
        let c = Config {
            max_supersteps: 25,
            delivery: Some(delivery),
            ..Default::default()
        };
        let o = run(&g, &Chatter, &c).unwrap();
        assert_eq!(o.supersteps, 25);
        assert_eq!(
            o.stop,
            Stop::SuperstepLimit {
                active: 10,
                in_flight: 10
            }
        );
        assert!(!o.halted());
        assert!(o.stop.to_string().contains("superstep limit"), "{}", o.stop);
        // Each vertex heard one message in each superstep after the first.
        assert!(o.values.iter().all(|&x| x == 24), "{:?}", o.values);
    }
}

/// Sends to an id given at construction, in superstep 0.
struct SendTo(VertexId);

impl Program for SendTo {
    type Value = u32;
    type Message = u32;
    type Combiner = Sum;
    fn init(&self, _: VertexId) -> u32 {
        0
    }
    fn compute<G: GraphView>(&self, ctx: &mut Context<'_, Self, G>, msgs: Messages<'_, u32>) {
        if ctx.superstep() == 0 {
            ctx.send(self.0, 1);
        }
        *ctx.value_mut() += msgs.iter().sum::<u32>();
        ctx.vote_to_halt();
    }
}

#[test]
fn send_reaches_any_vertex_and_misuse_is_an_error() {
    let g = ring(5);
    let o = run(&g, &SendTo(3), &Config::default()).unwrap();
    assert_eq!(o.values, vec![0, 0, 0, 5, 0]);
    assert_eq!((o.supersteps, o.messages), (2, 5));
    let e = run(&g, &SendTo(5), &Config::default()).unwrap_err();
    assert!(e.to_string().contains("outside the graph"), "{e}");
    let pull = cfg(Delivery::Pull, Combining::Combine);
    let e = run(&g, &SendTo(1), &pull).unwrap_err();
    assert!(e.to_string().contains("pull delivery"), "{e}");
}

/// Degrees through messages (no combiner) and aggregators.
struct Census;

impl Program for Census {
    type Value = (usize, usize);
    type Message = VertexId;
    type Combiner = NoCombiner;
    const AGGREGATES: &'static [Aggregate] = &[Aggregate::Sum, Aggregate::Min, Aggregate::Max];
    fn init(&self, _: VertexId) -> (usize, usize) {
        (0, 0)
    }
    fn compute<G: GraphView>(&self, ctx: &mut Context<'_, Self, G>, msgs: Messages<'_, VertexId>) {
        match ctx.superstep() {
            0 => ctx.broadcast(ctx.vertex()),
            1 => {
                let senders: Vec<VertexId> = msgs.iter().collect();
                ctx.set_value((senders.len(), ctx.in_degree()));
                let d = ctx.out_degree() as f64;
                for (i, x) in [d, d, d].into_iter().enumerate() {
                    ctx.aggregate(i, x);
                }
                ctx.vote_to_halt();
            }
            _ => unreachable!("every vertex halts in superstep 1"),
        }
    }
}

#[test]
fn without_a_combiner_every_message_arrives_and_aggregators_fold() {
    let e = [(0, 1), (0, 2), (1, 2), (3, 2), (2, 2)];
    let g = crate::snapshot::Csr::from_edges(5, &e, false);
    for delivery in [Delivery::Push, Delivery::Pull] {
        let o = run(&g, &Census, &cfg(delivery, Combining::Combine)).unwrap();
        for v in 0..5 {
            assert_eq!(o.values[v].0, o.values[v].1, "{delivery:?}: vertex {v}");
        }
        assert_eq!(o.values[2], (4, 4));
        assert_eq!(o.aggregates, vec![5.0, 0.0, 2.0], "{delivery:?}");
        assert!(o.halted());
    }
}

#[test]
fn an_empty_graph_runs_no_superstep() {
    let g = crate::snapshot::Csr::from_edges(0, &[], false);
    let o = run(&g, &Components, &Config::default()).unwrap();
    assert_eq!((o.supersteps, o.halted()), (0, true));
    assert!(o.values.is_empty());
}
