//! `Graph.roll_forward`: a rolling computation of wcc, bfs or sssp brought forward from
//! step to step by a maintainer, as `evograph run --every` does, in the shape
//! `Graph.rolling` tables: per step, the vertices then and their values.

use evograph::algo::kernel::{Kernel, Params};
use evograph::standing::{Maintainer, Value};
use evograph::store::Point;
use evograph::{GraphView, VertexId};

/// The values of one step, by vertex (the vertices that exist then, by dense id).
pub(crate) enum StepValues {
    /// Hops (bfs), or labels as external ids (wcc).
    Int(Vec<i64>),
    /// Distances (sssp).
    Float(Vec<f64>),
}

/// One step: the external ids of its vertices and their values; `None` when the step's
/// graph lacks the source.
pub(crate) type Rolled = Option<(Vec<u64>, StepValues)>;

/// Whether `kernel` is one a rolling computation brings forward.
pub(crate) fn rolls_forward(kernel: Kernel) -> bool {
    matches!(kernel, Kernel::Wcc | Kernel::Bfs | Kernel::Sssp)
}

/// `kernel` from `source` (a dense id) at each commit of `lsns`, in order.
pub(crate) fn roll(
    g: &evograph::Graph,
    kernel: Kernel,
    source: Option<VertexId>,
    lsns: &[u64],
) -> evograph::Result<Vec<Rolled>> {
    let mut p = Params::default();
    p.source = source;
    let mut m = Maintainer::new(kernel, &p)?;
    let mut out = Vec::with_capacity(lsns.len());
    for &lsn in lsns {
        m.step_upto(g, Some(Point::Lsn(lsn)))?;
        let graph = m.graph().expect("stepped");
        if source.is_some_and(|v| !graph.vertex_exists(v)) {
            out.push(None);
            continue;
        }
        let live: Vec<VertexId> = (0..graph.num_vertices() as VertexId)
            .filter(|&v| graph.vertex_exists(v))
            .collect();
        let ext = live.iter().map(|&v| graph.external_id(v)).collect();
        let value = |v: VertexId| m.value(v).expect("an existing vertex has a value");
        let values = match kernel {
            Kernel::Sssp => StepValues::Float(
                (live.iter())
                    .map(|&v| match value(v) {
                        Value::Float(d) => d,
                        other => unreachable!("sssp gives distances, not {other:?}"),
                    })
                    .collect(),
            ),
            _ => StepValues::Int(
                (live.iter())
                    .map(|&v| match value(v) {
                        Value::Int(d) => d,
                        Value::Vertex(l) => graph.external_id(l) as i64,
                        other => unreachable!("{kernel} gives integers, not {other:?}"),
                    })
                    .collect(),
            ),
        };
        out.push(Some((ext, values)));
    }
    Ok(out)
}
