//! `Graph.roll_forward`: a rolling computation of wcc, bfs, sssp or pr-tol brought forward from
//! step to step by a maintainer, as `evograph run --every` does, in the shape
//! `Graph.rolling` tables: per step, the vertices then and their values.

use evograph::algo::kernel::{Kernel, Params, Values};
use evograph::snapshot::live_values;
use evograph::standing::Maintainer;
use evograph::store::Point;
use evograph::{GraphView, VertexId};

/// The values of one step, by vertex (the vertices that exist then, by dense id).
pub(crate) enum StepValues {
    /// Hops (bfs), or labels as external ids (wcc).
    Int(Vec<i64>),
    /// Distances (sssp), scores (pr-tol).
    Float(Vec<f64>),
}

/// One step: the external ids of its vertices and their values; `None` when the step's
/// graph lacks the source.
pub(crate) type Rolled = Option<(Vec<u64>, StepValues)>;

/// Whether `kernel` is one a rolling computation brings forward.
pub(crate) fn rolls_forward(kernel: Kernel) -> bool {
    matches!(
        kernel,
        Kernel::Wcc | Kernel::Bfs | Kernel::Sssp | Kernel::PrTol
    )
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
        let values = match m.kernel_values() {
            Values::Float(x) => StepValues::Float(live_values(Some(&live), x)),
            Values::Int(x) => StepValues::Int(live_values(Some(&live), x)),
            other => unreachable!("{kernel} gives a value per vertex, not {other:?}"),
        };
        out.push(Some((ext, values)));
    }
    Ok(out)
}
