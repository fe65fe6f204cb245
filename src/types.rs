//! Small shared types: vertex ids, update records, durability modes.

/// A dense internal vertex id.
///
/// Stores record their id width in the manifest; this build supports 32-bit ids. The top bit
/// is reserved inside the memtable to mark deletions, so a store holds at most
/// [`MAX_VERTICES`] vertices.
pub type VertexId = u32;

/// The largest number of vertices a 32-bit store can hold.
pub const MAX_VERTICES: u64 = (1u64 << 31) - 1;

/// One update as it comes from a user or an input file, in external (user) ids.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Record {
    /// Insert the edge `src -> dst` (a no-op if present). Creates missing endpoints.
    /// In a weighted store the edge gets weight 1.
    Insert(u64, u64),
    /// Insert the edge `src -> dst` with a weight; re-inserting an edge updates its weight.
    /// Unweighted stores refuse it.
    InsertWeighted(u64, u64, f64),
    /// Delete the edge `src -> dst` (a no-op if absent).
    Delete(u64, u64),
    /// Make the vertex exist (a no-op if it does).
    InsertVertex(u64),
    /// Delete the vertex and every edge that touches it.
    DeleteVertex(u64),
}

/// When an update is acknowledged, and so what a crash can lose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Acknowledge only once the WAL block holding the update is durable on the medium.
    Sync,
    /// Acknowledge on apply; a background thread persists the WAL every `n` milliseconds,
    /// so a crash loses at most about that window.
    Interval(u64),
    /// No WAL at all: updates reach the medium only when a flush writes a run.
    None,
}

impl std::str::FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sync" => Ok(Durability::Sync),
            "none" => Ok(Durability::None),
            _ => match s.strip_prefix("interval=") {
                Some(ms) => ms
                    .trim_end_matches("ms")
                    .parse::<u64>()
                    .ok()
                    .filter(|&m| m > 0)
                    .map(Durability::Interval)
                    .ok_or_else(|| format!("bad interval in '{s}': want interval=<milliseconds>")),
                None => Err(format!(
                    "unknown durability '{s}': want sync, interval=<ms> or none"
                )),
            },
        }
    }
}

impl std::fmt::Display for Durability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Durability::Sync => write!(f, "sync"),
            Durability::Interval(ms) => write!(f, "interval={ms}"),
            Durability::None => write!(f, "none"),
        }
    }
}
