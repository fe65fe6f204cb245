//! File stamps: which store a file belongs to and which commit it was written for.
//!
//! Every file a store writes carries, in its header, the store's id (a random number drawn
//! when the store is created, as PostgreSQL's system identifier) and the sequence number of
//! the manifest commit it was written for. Open compares them with the manifest's root:
//! - a file with another store's id was copied in from another store, and is refused;
//! - a file written for a commit later than the root's next one proves that the root is
//!   older than the store (a `MANIFEST` restored from a copy), and is refused;
//! - a run file written for the root's next commit and not named by the root is what a
//!   crash between writing and committing leaves, and may be removed.
//!
//! The checks live in the store layer (`store::files`), which alone knows the root; every
//! layer below reads and writes the stamp as plain data.

use rand::Rng;

/// The identity a file header carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stamp {
    /// The store's id, drawn at creation; never 0 (0 marks files from before stamps).
    pub store_id: u64,
    /// The manifest sequence number the file was written for: the commit that first names
    /// it (runs, dictionary chunks), or the root in force when it was made (log segments).
    pub seq: u64,
}

impl Stamp {
    /// A stamp of store `store_id` for commit `seq`.
    pub fn new(store_id: u64, seq: u64) -> Stamp {
        debug_assert_ne!(store_id, 0, "0 is no store's id");
        Stamp { store_id, seq }
    }
}

/// A fresh store id: random, never 0.
pub fn new_store_id() -> u64 {
    let mut rng = rand::rng();
    loop {
        let id: u64 = rng.random();
        if id != 0 {
            return id;
        }
    }
}

/// The form stores ids take in messages and in the manifest: 16 hex digits.
pub fn id_text(id: u64) -> String {
    format!("{id:016x}")
}
