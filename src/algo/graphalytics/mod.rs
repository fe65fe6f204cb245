//! The LDBC Graphalytics kernels, as the specification defines them.
//!
//! Definitions: *LDBC Graphalytics Benchmark*, spec v1.0.6-draft (arXiv:2011.15028), section
//! "Algorithms" and the pseudo-code appendix, summarised with their validation rules in
//! `../shared/data/graphalytics/SPEC.md`. Each kernel is one short file in the style of GAPBS:
//!
//! - [`bfs()`]: breadth-first search depths (exact; unreachable = `i64::MAX`).
//! - [`pagerank()`]: PageRank with sink mass spread over all vertices, fixed iterations.
//! - [`wcc()`]: weakly connected components (labels checked for equivalence).
//! - [`cdlp()`]: community detection by synchronous label propagation (exact labels).
//! - [`lcc()`]: local clustering coefficient, directed definition.
//! - [`sssp()`]: shortest-path lengths over edge weights (unreachable = infinity).
//! - [`one_hop()`] / [`two_hop()`]: k-hop neighbourhood queries (not part of Graphalytics).
//!
//! Kernels run on any [`GraphView`](crate::GraphView) and return one value per *dense* id
//! `0..num_vertices()`. Deleted vertices (`vertex_exists(v) == false`) have no edges, do not
//! count in |V|, and get a placeholder value that callers must not print (each kernel says
//! which). Output lines (`<external id> <value>`) are written by the caller, with
//! [`format_f64`] and [`format_i64`].
//!
//! Self-loops (which Graphalytics inputs never contain) are ordinary edges for BFS, WCC, PR
//! and CDLP, and are ignored by LCC; the kernel docs give details.

pub mod bfs;
pub mod cdlp;
pub mod khop;
pub mod lcc;
pub mod pr;
pub mod sssp;
pub mod wcc;

pub use bfs::{bfs, UNREACHABLE};
pub use cdlp::cdlp;
pub use khop::{one_hop, two_hop};
pub use lcc::lcc;
pub use pr::pagerank;
pub use sssp::sssp;
pub use wcc::wcc;

/// Formats a floating-point result like the Graphalytics reference files (C's `%.15e`,
/// e.g. `1.477629166666667e-01`): 16 significant digits, far more than the 1e-4 relative
/// check needs (and which [`str::parse`] and Python's `float` read back). Infinities print
/// as `Infinity` / `-Infinity`, NaN as `NaN`.
pub fn format_f64(x: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_f64(&mut out, x);
    String::from_utf8(out).expect("formatted digits are ASCII")
}

/// The largest f64 whose 16 significant digits (`1.797693134862315e308`) read back finite:
/// the two above it round to `1.797693134862316e308`, past `f64::MAX`.
const LARGEST_16_DIGITS: f64 = f64::from_bits(f64::MAX.to_bits() - 2);

/// Appends [`format_f64`]'s text to `out` without allocating a string per value: printing a
/// kernel's values took as long as running PageRank when each went through three
/// `String`s and a parse.
pub fn write_f64(out: &mut Vec<u8>, x: f64) {
    use std::io::Write;
    if x.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"Infinity" } else { b"-Infinity" });
        return;
    }
    // Within 5e-16 relative of f64::MAX, 16 digits round up past it and would read back as
    // infinity; print the shortest round-trip form there instead.
    if x.abs() > LARGEST_16_DIGITS {
        write!(out, "{x:e}").expect("writing to a Vec cannot fail");
        return;
    }
    if write_integral(out, x) {
        return;
    }
    // Rust prints `1.477629166666667e-1`; C pads the exponent to two digits with a sign.
    let at = out.len();
    write!(out, "{x:.15e}").expect("writing to a Vec cannot fail");
    let e = at + (out[at..].iter().position(|&b| b == b'e')).expect("`{:e}` has an exponent");
    let (sign, digits) = match out[e + 1] {
        b'-' => ('-', e + 2),
        _ => ('+', e + 1),
    };
    let exp = (out[digits..].iter()).fold(0u32, |a, &d| a * 10 + u32::from(d - b'0'));
    out.truncate(e + 1);
    write!(out, "{sign}{exp:02}").expect("writing to a Vec cannot fail");
}

/// 2^53: every integer below it is an f64, and has at most 16 digits.
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// Appends `x` in [`write_f64`]'s form if it is a whole number below [`EXACT_INTEGERS`]
/// (hop counts: SSSP on an unweighted graph), from its integer digits; whether it was one.
/// Its 16 digits or fewer are the form's exactly, with no rounding to decide, where
/// `{:.15e}` fell back to a bignum algorithm for most of them: printing Kron24's gap-sssp
/// distances was a quarter of the command's time.
fn write_integral(out: &mut Vec<u8>, x: f64) -> bool {
    if x.fract() != 0.0 || x.abs() >= EXACT_INTEGERS {
        return false;
    }
    if x.is_sign_negative() {
        out.push(b'-');
    }
    // The digits, last first, into the end of a buffer: no formatter per value.
    let (mut n, mut buf, mut at) = (x.abs() as u64, [0u8; 20], 20);
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let digits = &buf[at..];
    // One digit, the point, 15 decimals (the digits' rest, then zeros), the exponent.
    out.extend_from_slice(&[digits[0], b'.']);
    out.extend_from_slice(&digits[1..]);
    out.extend(std::iter::repeat_n(b'0', 16 - digits.len()));
    let e = digits.len() - 1;
    out.extend_from_slice(&[b'e', b'+', b'0' + (e / 10) as u8, b'0' + (e % 10) as u8]);
    true
}

/// Formats an integer result (BFS depth, WCC or CDLP label) as plain decimal.
pub fn format_i64(x: i64) -> String {
    x.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_f64_matches_c_percent_15e() {
        assert_eq!(format_f64(0.1477629166666667), "1.477629166666667e-01");
        assert_eq!(format_f64(0.0), "0.000000000000000e+00");
        assert_eq!(format_f64(-0.0), "-0.000000000000000e+00");
        assert_eq!(format_f64(1.0), "1.000000000000000e+00");
        assert_eq!(format_f64(12345.5), "1.234550000000000e+04");
        assert_eq!(format_f64(2.5e-300), "2.500000000000000e-300");
        assert_eq!(format_f64(f64::INFINITY), "Infinity");
        assert_eq!(format_f64(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(format_f64(f64::NAN), "NaN");
        assert_eq!(format_f64(f64::MAX), "1.7976931348623157e308");
        for x in [
            1.0 / 3.0,
            6.02214076e23,
            1e-17,
            5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
        ] {
            let back: f64 = format_f64(x).parse().unwrap();
            assert!((back - x).abs() <= 1e-15 * x.abs(), "{x} -> {back}");
        }
    }

    /// The C form built the plain way: `{:.15e}`, its exponent re-printed with a sign and
    /// two digits, and the shortest form where 16 digits would round past `f64::MAX`.
    fn c_form(x: f64) -> String {
        let s = format!("{x:.15e}");
        let (mantissa, exp) = s.split_once('e').unwrap();
        let exp: i32 = exp.parse().unwrap();
        let sign = if exp < 0 { '-' } else { '+' };
        let c = format!("{mantissa}e{sign}{:02}", exp.unsigned_abs());
        match c.parse::<f64>() {
            Ok(y) if y.is_finite() => c,
            _ => format!("{x:e}"),
        }
    }

    proptest::proptest! {
        /// Whole numbers, which print from their integer digits, print as the plain
        /// construction prints them, up to 2^53 and just past it.
        #[test]
        fn whole_numbers_print_the_c_form(n in -(1i64 << 54)..(1i64 << 54), small in -1000i64..1000) {
            for x in [n as f64, small as f64, (n >> 30) as f64] {
                proptest::prop_assert_eq!(format_f64(x), c_form(x));
            }
        }

        /// Any finite value, by its bits, prints as the plain construction prints it.
        #[test]
        fn write_f64_prints_the_c_form(bits: u64) {
            let x = f64::from_bits(bits);
            proptest::prop_assume!(x.is_finite());
            proptest::prop_assert_eq!(format_f64(x), c_form(x));
        }
    }

    #[test]
    fn values_next_to_f64_max_print_as_the_c_form() {
        let mut x = f64::MAX;
        for _ in 0..8 {
            assert_eq!(format_f64(x), c_form(x), "{x:e}");
            assert_eq!(format_f64(-x), c_form(-x), "{x:e}");
            x = f64::from_bits(x.to_bits() - 1);
        }
        let mut out = b"7 ".to_vec();
        write_f64(&mut out, 0.5);
        assert_eq!(out, b"7 5.000000000000000e-01");
    }

    #[test]
    fn format_i64_is_plain_decimal() {
        assert_eq!(format_i64(0), "0");
        assert_eq!(format_i64(-7), "-7");
        assert_eq!(format_i64(i64::MAX), "9223372036854775807");
    }
}

/// Shared by the kernels' tests: random update sequences, the plain model they are checked
/// against, the two views (a [`Csr`](crate::snapshot::Csr) and a store
/// [`Snapshot`](crate::Snapshot)) built from them, and the spec's two example graphs.
#[cfg(test)]
pub(crate) mod testkit {
    use crate::snapshot::Csr;
    use crate::{Graph, GraphView, Options, Record, Snapshot, VertexId};
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// The spec's `example-directed` graph (vertices 1..=10, appendix "validation examples").
    #[rustfmt::skip]
    pub const EXAMPLE_DIRECTED: [(VertexId, VertexId); 17] = [
        (1, 3), (1, 5), (2, 4), (2, 5), (2, 10), (3, 1), (3, 5), (3, 8), (3, 10),
        (5, 3), (5, 4), (5, 8), (6, 3), (6, 4), (7, 4), (8, 1), (9, 4),
    ];
    /// The spec's `example-undirected` graph (vertices 2..=10), each edge once.
    #[rustfmt::skip]
    pub const EXAMPLE_UNDIRECTED: [(VertexId, VertexId); 12] = [
        (2, 3), (2, 4), (3, 4), (3, 5), (3, 8), (5, 6), (5, 8), (6, 7), (6, 8), (6, 9),
        (6, 10), (7, 9),
    ];

    /// Per-dense-id values of an [`example`] graph keyed by vertex (`first + i`).
    pub fn by_id(first: VertexId, vals: &[f64]) -> BTreeMap<u64, f64> {
        (first as u64..).zip(vals.iter().copied()).collect()
    }

    /// An example graph as a [`Csr`] whose dense id `i` is vertex `first + i`.
    pub fn example(undirected: bool) -> (Csr, VertexId) {
        let (edges, first, last): (&[(VertexId, VertexId)], VertexId, VertexId) = if undirected {
            (&EXAMPLE_UNDIRECTED, 2, 10)
        } else {
            (&EXAMPLE_DIRECTED, 1, 10)
        };
        let e: Vec<_> = edges.iter().map(|&(s, d)| (s - first, d - first)).collect();
        (
            Csr::from_edges((last - first + 1) as usize, &e, undirected),
            first,
        )
    }

    /// The trivial reference: live vertices and directed edges in external ids (an
    /// undirected edge is stored both ways), with the store's update semantics.
    #[derive(Clone, Debug, Default)]
    pub struct Model {
        pub undirected: bool,
        pub vertices: BTreeSet<u64>,
        pub edges: BTreeSet<(u64, u64)>,
    }

    impl Model {
        fn apply(&mut self, r: &Record) {
            match *r {
                Record::Insert(u, v) | Record::InsertWeighted(u, v, _) => {
                    self.vertices.extend([u, v]);
                    self.edges.insert((u, v));
                    if self.undirected {
                        self.edges.insert((v, u));
                    }
                }
                Record::Delete(u, v) => {
                    self.edges.remove(&(u, v));
                    if self.undirected {
                        self.edges.remove(&(v, u));
                    }
                }
                Record::InsertVertex(x) => {
                    self.vertices.insert(x);
                }
                Record::DeleteVertex(x) => {
                    if self.vertices.remove(&x) {
                        self.edges.retain(|&(a, b)| a != x && b != x);
                    }
                }
            }
        }

        /// Out-neighbours of `v`.
        pub fn out(&self, v: u64) -> BTreeSet<u64> {
            self.edges
                .range((v, 0)..=(v, u64::MAX))
                .map(|e| e.1)
                .collect()
        }

        /// In-neighbours of `v`.
        pub fn inn(&self, v: u64) -> BTreeSet<u64> {
            self.edges
                .iter()
                .filter(|e| e.1 == v)
                .map(|e| e.0)
                .collect()
        }
    }

    /// One step of a random history.
    #[derive(Clone, Debug)]
    pub enum Step {
        Batch(Vec<Record>),
        Flush,
        Compact,
    }

    /// Sparse external ids: `i * 1000 + 7` for `i < 12`.
    fn id() -> impl Strategy<Value = u64> {
        (0..12u64).prop_map(|i| i * 1000 + 7)
    }

    fn record() -> impl Strategy<Value = Record> {
        prop_oneof![
            10 => (id(), id()).prop_map(|(u, v)| Record::Insert(u, v)),
            3 => (id(), id()).prop_map(|(u, v)| Record::Delete(u, v)),
            1 => id().prop_map(Record::InsertVertex),
            1 => id().prop_map(Record::DeleteVertex),
        ]
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            8 => prop::collection::vec(record(), 1..30).prop_map(Step::Batch),
            2 => Just(Step::Flush),
            1 => Just(Step::Compact),
        ]
    }

    /// A random graph history: directedness and steps (self-loops, isolated and deleted
    /// vertices, deleted edges, several runs with tombstones).
    pub fn history() -> impl Strategy<Value = (bool, Vec<Step>)> {
        (any::<bool>(), prop::collection::vec(step(), 1..8))
    }

    /// The same graph three ways.
    pub struct Views {
        pub model: Model,
        /// Live vertices only, dense ids in *descending* external order (so that no kernel
        /// can get away with confusing the two orders).
        pub csr: Csr,
        csr_ext: Vec<u64>,
        pub graph: Graph,
        /// Dense ids in first-seen order, deleted vertices included.
        pub snap: Snapshot,
    }

    impl Views {
        pub fn build(undirected: bool, steps: &[Step]) -> Views {
            let graph = Graph::in_memory(Options {
                undirected: Some(undirected),
                background: false,
                ..Default::default()
            })
            .unwrap();
            let mut model = Model {
                undirected,
                ..Default::default()
            };
            for s in steps {
                match s {
                    Step::Batch(recs) => {
                        graph.apply(recs).unwrap();
                        recs.iter().for_each(|r| model.apply(r));
                    }
                    Step::Flush => graph.flush().unwrap(),
                    Step::Compact => graph.compact().unwrap(),
                }
            }
            let snap = graph.snapshot().unwrap();
            let csr_ext: Vec<u64> = model.vertices.iter().rev().copied().collect();
            let dense: BTreeMap<u64, VertexId> = csr_ext
                .iter()
                .enumerate()
                .map(|(i, &x)| (x, i as VertexId))
                .collect();
            let edges: Vec<(VertexId, VertexId)> = model
                .edges
                .iter()
                .map(|(a, b)| (dense[a], dense[b]))
                .collect();
            let csr = Csr::from_edges(csr_ext.len(), &edges, undirected);
            Views {
                model,
                csr,
                csr_ext,
                graph,
                snap,
            }
        }

        /// Dense id of external `x` in the [`Csr`].
        pub fn csr_dense(&self, x: u64) -> VertexId {
            self.csr_ext.iter().position(|&e| e == x).unwrap() as VertexId
        }

        /// Dense id of external `x` in the [`Snapshot`].
        pub fn snap_dense(&self, x: u64) -> VertexId {
            self.graph.dense_id(x).unwrap().unwrap()
        }

        /// External id of dense `v` in the [`Csr`].
        pub fn csr_ext(&self, v: VertexId) -> u64 {
            self.csr_ext[v as usize]
        }

        /// Per-dense-id values of the [`Csr`] keyed by external id.
        pub fn csr_map<T: Clone>(&self, vals: &[T]) -> BTreeMap<u64, T> {
            assert_eq!(vals.len(), self.csr.num_vertices());
            self.csr_ext
                .iter()
                .copied()
                .zip(vals.iter().cloned())
                .collect()
        }

        /// Per-dense-id values of the [`Snapshot`] for its existing vertices, keyed by
        /// external id.
        pub fn snap_map<T: Clone>(&self, vals: &[T]) -> BTreeMap<u64, T> {
            assert_eq!(vals.len(), self.snap.num_vertices());
            (0..vals.len() as VertexId)
                .filter(|&v| self.snap.vertex_exists(v))
                .map(|v| (self.snap.external_id(v), vals[v as usize].clone()))
                .collect()
        }
    }

    /// Asserts equal keys and values equal within relative tolerance 1e-9.
    pub fn assert_close(got: &BTreeMap<u64, f64>, want: &BTreeMap<u64, f64>, ctx: &str) {
        assert_within(got, want, 1e-9, ctx)
    }

    /// Asserts equal keys and values equal within relative tolerance `tolerance`.
    pub fn assert_within(
        got: &BTreeMap<u64, f64>,
        want: &BTreeMap<u64, f64>,
        tolerance: f64,
        ctx: &str,
    ) {
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{ctx}: vertex sets differ"
        );
        for (k, w) in want {
            let g = got[k];
            assert!(
                g == *w || (g - w).abs() <= tolerance * w.abs(),
                "{ctx}: vertex {k}: got {g}, want {w}"
            );
        }
    }
}
