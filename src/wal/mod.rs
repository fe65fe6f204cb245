//! The write-ahead edge log: segmented, checksummed commit blocks with group commit.
//!
//! - [`block`]: the byte format of a commit block.
//! - [`segment`]: segment files and their headers.
//! - [`writer`]: the group-commit thread; the `fdatasync` that acknowledges lives here.
//! - [`recover`]: replay to the last valid block, telling torn tails from damage.
//!
//! Segments wholly below the manifest's start LSN are recycled (renamed and overwritten),
//! as XPGraph recycles its circular edge log.

pub mod block;
pub mod progress;
pub mod recover;
pub mod segment;
pub mod writer;

#[cfg(test)]
mod tests;

pub use recover::{acknowledged_lsn, recover, Expect, Reach, Recovered, SegmentInfo, Tail};
pub use writer::{LogStamps, Wal};
