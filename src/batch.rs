//! A batch of updates in dense ids: the unit that is logged, applied and acknowledged.

use crate::types::VertexId;

/// Set on a neighbor id (memtable entries, WAL edge records) or a vertex id (vertex records)
/// to mean "delete": the top bit of a [`VertexId`]. Dense ids stay below
/// [`crate::types::MAX_VERTICES`], so the bit is free.
pub const DEL: VertexId = 1 << (VertexId::BITS - 1);

/// Strips the [`DEL`] flag.
#[inline]
pub fn id_of(x: VertexId) -> VertexId {
    x & !DEL
}

/// Whether the [`DEL`] flag is set.
#[inline]
pub fn is_del(x: VertexId) -> bool {
    x & DEL != 0
}

/// One homogeneous run of updates inside a batch, in the order they were given.
#[derive(Clone, Debug, PartialEq)]
pub enum Section {
    /// Edge inserts and deletes: `[src, dst]`, with [`DEL`] set on `dst` for a delete, and
    /// in weighted stores the weight of each (deletes carry 0); empty otherwise.
    Edges(Vec<[VertexId; 2]>, Vec<f64>),
    /// Vertex inserts and deletes: the id, with [`DEL`] set for a delete.
    Vertices(Vec<VertexId>),
}

impl Section {
    /// How many user records the section holds.
    pub fn len(&self) -> usize {
        match self {
            Section::Edges(e, _) => e.len(),
            Section::Vertices(v) => v.len(),
        }
    }
    /// Whether the section is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Updates translated to dense ids, plus the dictionary entries the translation created.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DenseBatch {
    /// Dense id given to `new_ids[0]`; the rest follow consecutively.
    pub first_new_id: VertexId,
    /// External ids that received dense ids while translating this batch.
    pub new_ids: Vec<u64>,
    /// The updates, in order.
    pub sections: Vec<Section>,
    /// Whether edge sections carry weights (the store is weighted).
    pub weighted: bool,
    /// When the batch commits (Unix nanoseconds); `None` in blocks from before commit
    /// times were logged.
    pub time: Option<i64>,
    /// The LSNs the batch takes: the records the caller submitted, whatever they came to
    /// (FORMAT.md, "LSNs"); `None` in blocks from before that rule, which took one per
    /// update logged.
    pub span: Option<u64>,
}

impl DenseBatch {
    /// Number of updates logged (edge and vertex updates).
    pub fn records(&self) -> u64 {
        self.sections.iter().map(|s| s.len() as u64).sum()
    }

    /// The LSNs the batch takes.
    pub fn lsn_span(&self) -> u64 {
        self.span.unwrap_or_else(|| self.records())
    }

    /// Appends an edge update, opening a new section if the last one holds vertices.
    /// `weight` is kept in weighted batches only.
    pub fn push_edge(&mut self, src: VertexId, dst: VertexId, delete: bool, weight: f64) {
        let rec = [src, if delete { dst | DEL } else { dst }];
        if !matches!(self.sections.last(), Some(Section::Edges(..))) {
            self.sections.push(Section::Edges(Vec::new(), Vec::new()));
        }
        if let Some(Section::Edges(v, w)) = self.sections.last_mut() {
            v.push(rec);
            if self.weighted {
                w.push(weight);
            }
        }
    }

    /// Appends a vertex update, opening a new section if the last one holds edges.
    pub fn push_vertex(&mut self, v: VertexId, delete: bool) {
        let rec = if delete { v | DEL } else { v };
        match self.sections.last_mut() {
            Some(Section::Vertices(s)) => s.push(rec),
            _ => self.sections.push(Section::Vertices(vec![rec])),
        }
    }
}
