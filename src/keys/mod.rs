//! Vertex names: the key table of a string-keyed store.
//!
//! A store is created with integer keys (external ids are the user's `u64`s) or with string
//! keys ([`KeyKind::String`]). A string-keyed store numbers each name 0, 1, 2, … in the
//! order it is first seen and keeps the names in `KEYS` ([`file`]); from there on the
//! number is the vertex's external id, which the dictionary maps to a dense id like any
//! other. So the WAL, the runs and the kernels never see a string: names are turned into
//! numbers before a batch is submitted and back into names when results are printed.
//!
//! # Concurrency contract
//!
//! `file` is held by one interning thread at a time, across the write and `fdatasync` of
//! new entries; `table` (a leaf) is written only by that thread, after the entries are
//! durable, and read by lookups and by snapshots (which clone [`Names`], sharing blocks).
//! Lock order: `file`, then `table`. Neither is held while any store lock is taken: names
//! are interned before the batch that uses them is submitted.

mod file;
mod names;

pub use file::FILE;
pub(crate) use file::MAGIC;
pub use names::{check_name, NameSet, Names, MAX_NAMES, MAX_NAME_BYTES};

use crate::medium::Medium;
use crate::{Error, Result};
use std::sync::{Mutex, RwLock};

/// How a store's vertices are keyed: chosen at creation and recorded in the manifest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// Unsigned 64-bit integers (the default).
    #[default]
    U64,
    /// UTF-8 names of 1 to 65,535 bytes (package names, user names, URLs).
    String,
}

impl KeyKind {
    /// The name the command line, Python and the manifest use.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::U64 => "u64",
            KeyKind::String => "string",
        }
    }
}

impl std::str::FromStr for KeyKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "u64" | "int" => Ok(KeyKind::U64),
            "string" | "str" => Ok(KeyKind::String),
            _ => Err(format!("unknown key kind '{s}': want u64 or string")),
        }
    }
}

impl std::fmt::Display for KeyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The key table of an open string-keyed store.
pub struct Keys {
    table: RwLock<NameSet>,
    file: Mutex<file::KeyFile>,
}

impl Keys {
    /// Loads `KEYS` and checks that it belongs to store `store_id` (`None`: a store from
    /// before stamps, whose file carries none) and names every external id up to
    /// `max_external` (the largest the dictionary and log use); only then, with `repair` (a
    /// writer), cuts a torn tail, so a store refused as damaged is left as it was found.
    pub fn open(
        medium: &dyn Medium,
        repair: bool,
        max_external: Option<u64>,
        store_id: Option<u64>,
    ) -> Result<Keys> {
        let loaded = file::load(medium)?;
        if let Some(id) = store_id.filter(|&id| loaded.valid_bytes > 0 && loaded.store_id != id) {
            return Err(Error::corrupt(format!(
                "KEYS belongs to another store: its header names store {}, the manifest store {}",
                crate::stamp::id_text(loaded.store_id),
                crate::stamp::id_text(id)
            )));
        }
        covers(loaded.set.len(), max_external)?;
        if repair {
            // A writer indexes now, so a repeated name stops the open, not a later write.
            refuse_repeats(&loaded.set)?;
        }
        let f = file::KeyFile::open(medium, &loaded, repair, store_id.unwrap_or(0))?;
        Ok(Keys {
            table: RwLock::new(loaded.set),
            file: Mutex::new(f),
        })
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.table.read().unwrap().len()
    }

    /// Refuses a store whose dictionary or log names a number `KEYS` does not hold: its
    /// names were lost, which no crash can do (they are durable before they are used).
    pub fn check_covers(&self, max_external: Option<u64>) -> Result<()> {
        covers(self.len(), max_external)
    }

    /// The number of `name`, if it was ever stored.
    pub fn find(&self, name: &str) -> Option<u64> {
        self.table.read().unwrap().find(name).map(u64::from)
    }

    /// `Corrupt` if a name is stored twice (indexes the table if it was not yet).
    pub fn check_repeats(&self) -> Result<()> {
        refuse_repeats(&self.table.read().unwrap())
    }

    /// The names as they are now, sharing their blocks.
    pub fn names(&self) -> Names {
        self.table.read().unwrap().names().clone()
    }

    /// DRAM the table takes.
    pub fn dram_bytes(&self) -> usize {
        self.table.read().unwrap().dram_bytes()
    }

    /// The numbers of `names`, giving new names the next numbers; new names are durable in
    /// `KEYS` before this returns. A bad name (empty, too long) fails the whole call, and
    /// then nothing is stored.
    pub fn intern<'a, I>(&self, medium: &dyn Medium, names: I) -> Result<Vec<u64>>
    where
        I: IntoIterator<Item = &'a str>,
    {
        let mut file = self.file.lock().unwrap();
        let (numbers, fresh) = self.number(names)?;
        if fresh.is_empty() {
            return Ok(numbers);
        }
        let first = self.len() as u64;
        file.append(medium, first, fresh.names().iter())?;
        let mut table = self.table.write().unwrap();
        for name in fresh.names().iter() {
            let (i, new) = table.insert(name).map_err(Error::Invalid)?;
            debug_assert!(new, "only this thread adds names, and it holds `file`");
            let _ = i;
        }
        assert_eq!(
            table.len() as u64,
            first + fresh.len() as u64,
            "interned names take the numbers after the table's last"
        );
        Ok(numbers)
    }

    /// The numbers `names` have, or will have once the new ones (returned, in first-seen
    /// order) are appended after the table's last.
    fn number<'a, I>(&self, names: I) -> Result<(Vec<u64>, NameSet)>
    where
        I: IntoIterator<Item = &'a str>,
    {
        let table = self.table.read().unwrap();
        let base = table.len() as u64;
        let mut fresh = NameSet::new();
        let mut numbers = Vec::new();
        for name in names {
            let n = match table.find(name) {
                Some(i) => u64::from(i),
                None => base + u64::from(fresh.insert(name).map_err(Error::Invalid)?.0),
            };
            numbers.push(n);
        }
        if base + fresh.len() as u64 > MAX_NAMES {
            return Err(Error::Invalid(format!(
                "a string-keyed store holds at most {MAX_NAMES} vertex names"
            )));
        }
        Ok((numbers, fresh))
    }
}

/// `Corrupt` if a name is stored twice (only a writer's bug could do that).
pub fn refuse_repeats(set: &NameSet) -> Result<()> {
    match set.repeated() {
        Some(n) => Err(Error::corrupt(format!(
            "KEYS: the name {n:?} appears twice"
        ))),
        None => Ok(()),
    }
}

/// Writes `store_id` into the header of a `KEYS` file from before stamps (a writer's open
/// upgrading such a store does, before it commits the id).
pub fn stamp_legacy(medium: &dyn Medium, store_id: u64) -> Result<()> {
    file::stamp(medium, store_id)
}

fn covers(names: usize, max_external: Option<u64>) -> Result<()> {
    let n = names as u64;
    match max_external {
        Some(m) if m >= n => Err(Error::corrupt(format!(
            "the store names vertex number {m} but KEYS holds only {n} readable names (damaged or cut)"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::memory::MemoryMedium;

    #[test]
    fn interned_names_are_durable_and_numbered_in_order() {
        let m = MemoryMedium::new();
        let k = Keys::open(&m, true, None, Some(9)).unwrap();
        assert_eq!(k.intern(&m, ["b", "a", "b"]).unwrap(), [0, 1, 0]);
        assert_eq!(k.intern(&m, ["c", "a"]).unwrap(), [2, 1]);
        let snap = k.names();
        assert_eq!(k.intern(&m, ["d"]).unwrap(), [3]);
        assert_eq!(snap.len(), 3, "a snapshot keeps the names of its moment");
        let again = Keys::open(&m, true, Some(3), Some(9)).unwrap();
        assert_eq!(
            again.names().iter().collect::<Vec<_>>(),
            ["b", "a", "c", "d"]
        );
        assert_eq!(again.find("c"), Some(2));
        assert!(again.check_covers(Some(3)).is_ok());
        assert!(matches!(
            again.check_covers(Some(4)),
            Err(Error::Corrupt(_))
        ));
    }

    #[test]
    fn the_names_of_another_store_are_refused() {
        let m = MemoryMedium::new();
        let k = Keys::open(&m, true, None, Some(9)).unwrap();
        k.intern(&m, ["a"]).unwrap();
        let e = Keys::open(&m, false, Some(0), Some(8)).err().unwrap();
        assert!(
            e.to_string().contains("KEYS belongs to another store"),
            "{e}"
        );
        // A store from before stamps reads any; an upgrade stamps the file in place.
        assert!(Keys::open(&m, false, Some(0), None).is_ok());
        stamp_legacy(&m, 8).unwrap();
        assert_eq!(Keys::open(&m, false, Some(0), Some(8)).unwrap().len(), 1);
    }

    #[test]
    fn a_bad_name_stores_nothing() {
        let m = MemoryMedium::new();
        let k = Keys::open(&m, true, None, Some(9)).unwrap();
        assert!(k.intern(&m, ["ok", ""]).is_err());
        assert_eq!(k.len(), 0);
        assert!(!m.exists(FILE));
    }

    #[test]
    fn kinds_parse_and_print() {
        for k in [KeyKind::U64, KeyKind::String] {
            assert_eq!(k.to_string().parse::<KeyKind>(), Ok(k));
        }
        assert!("text".parse::<KeyKind>().is_err());
    }
}
