//! Vertex names in DRAM: an append-only list that snapshots share without copying, and a
//! set that finds a name's number.

use hashbrown::HashTable;
use std::hash::BuildHasher;
use std::sync::{Arc, OnceLock};

/// Names per block. Appending to a block a snapshot still holds copies that block only, so
/// a live snapshot costs an intern at most one block copy.
const BLOCK_NAMES: usize = 1 << 16;

/// The longest vertex name, in bytes.
pub const MAX_NAME_BYTES: usize = u16::MAX as usize;

/// The most names one store (or one batch) holds: numbers are `u32` in the index.
pub const MAX_NAMES: u64 = u32::MAX as u64;

/// One block of names: their text back to back, and where each ends.
#[derive(Clone, Default)]
struct Block {
    text: String,
    ends: Vec<u32>,
}

/// Vertex names numbered 0, 1, 2, … in the order they were added. Cloning shares the
/// blocks, so a snapshot keeps the names of its moment for the price of one `Arc` per
/// 65,536 names.
#[derive(Clone, Default)]
pub struct Names {
    blocks: Vec<Arc<Block>>,
    len: usize,
    /// The first name too long to store (position, bytes), when built from an iterator.
    too_long: Option<(usize, usize)>,
}

impl Names {
    /// How many names there are.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Name number `i`, if there is one.
    #[inline]
    pub fn get(&self, i: u64) -> Option<&str> {
        if i >= self.len as u64 {
            return None;
        }
        let b = &self.blocks[i as usize / BLOCK_NAMES];
        let j = i as usize % BLOCK_NAMES;
        let start = if j == 0 { 0 } else { b.ends[j - 1] as usize };
        Some(&b.text[start..b.ends[j] as usize])
    }

    /// The names in number order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len as u64).map(|i| self.get(i).expect("in range"))
    }

    /// An error naming the first name that was too long to keep, if one was given.
    pub fn check(&self) -> Result<(), String> {
        match self.too_long {
            Some((i, bytes)) => Err(format!(
                "name {i} of the batch has {bytes} bytes, more than the {MAX_NAME_BYTES} allowed"
            )),
            None => Ok(()),
        }
    }

    /// DRAM the names take.
    pub fn dram_bytes(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| b.text.capacity() + b.ends.capacity() * 4)
            .sum()
    }

    /// Appends a name (unchecked: callers check it).
    pub(super) fn push(&mut self, name: &str) {
        if self.len.is_multiple_of(BLOCK_NAMES) {
            self.blocks.push(Arc::default());
        }
        let b = Arc::make_mut(self.blocks.last_mut().expect("a block"));
        b.text.push_str(name);
        b.ends.push(b.text.len() as u32);
        self.len += 1;
    }
}

/// Names in the order given (repeats allowed): a batch for [`crate::Graph::submit_named`]
/// built by hand, whose records give positions in it. A name longer than
/// [`MAX_NAME_BYTES`] is not stored (its place holds an empty name) and makes
/// `submit_named` refuse the batch, saying which it was.
impl<S: AsRef<str>> FromIterator<S> for Names {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Names {
        let mut n = Names::default();
        for s in iter {
            let s = s.as_ref();
            if s.len() > MAX_NAME_BYTES {
                n.too_long.get_or_insert((n.len, s.len()));
                n.push("");
            } else {
                n.push(s);
            }
        }
        n
    }
}

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// [`Names`] with an index from name to number: the store's key table, and the names a
/// parser met in one batch.
#[derive(Clone, Default)]
pub struct NameSet {
    names: Names,
    /// Built on first use: a reader that only prints names never pays for it (hashing
    /// Kron24's 5.9 M names took a tenth of a `run`).
    index: OnceLock<Index>,
    /// Seeded per process (foldhash), so names chosen to collide cannot be prepared in
    /// advance to make the index probe long chains.
    hasher: hashbrown::DefaultHashBuilder,
}

#[derive(Clone, Default)]
struct Index {
    table: HashTable<Slot>,
    /// The first name found twice when the index was built from loaded names (only a
    /// writer's bug could store one: checksums catch damage).
    repeated: Option<u32>,
}

/// An index entry: the name's number and its hash, kept so that growing the table and
/// probing past other names never read the names themselves (a cache miss each: reading
/// them made up 40% of a named ingest's time).
#[derive(Clone, Copy)]
struct Slot {
    number: u32,
    hash: u32,
}

/// The table's 64-bit hash of a 32-bit one: the low bits pick the bucket, the high ones
/// fill the control bytes.
#[inline]
fn wide(h: u32) -> u64 {
    (u64::from(h) << 32) | u64::from(h)
}

impl NameSet {
    /// An empty set.
    pub fn new() -> NameSet {
        NameSet::default()
    }

    /// The names in number order.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// How many names there are.
    pub fn len(&self) -> usize {
        self.names.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.names.len == 0
    }

    /// A set of `names` (as loaded), indexed on first use.
    pub fn from_names(names: Names) -> NameSet {
        NameSet {
            names,
            ..NameSet::default()
        }
    }

    /// Takes the names out, leaving the set empty (and its index's memory for reuse).
    pub fn take(&mut self) -> Names {
        if let Some(i) = self.index.get_mut() {
            i.table.clear();
            i.repeated = None;
        }
        std::mem::take(&mut self.names)
    }

    /// A name the set holds twice, if any (see [`NameSet::from_names`]); builds the index.
    pub fn repeated(&self) -> Option<&str> {
        let r = self.index().repeated?;
        self.names.get(u64::from(r))
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let mut idx = Index {
                table: HashTable::with_capacity(self.names.len),
                repeated: None,
            };
            for (i, name) in self.names.iter().enumerate() {
                let hash = self.hash(name);
                let found = idx.table.find(wide(hash), |s| {
                    s.hash == hash && self.names.get(u64::from(s.number)) == Some(name)
                });
                if found.is_some() {
                    idx.repeated.get_or_insert(i as u32);
                    continue;
                }
                let slot = Slot {
                    number: i as u32,
                    hash,
                };
                idx.table.insert_unique(wide(hash), slot, |s| wide(s.hash));
            }
            idx
        })
    }

    #[inline]
    fn hash(&self, name: &str) -> u32 {
        let h = self.hasher.hash_one(name);
        (h >> 32) as u32 ^ h as u32
    }

    /// The number of `name`, if it is in the set.
    #[inline]
    pub fn find(&self, name: &str) -> Option<u32> {
        let h = self.hash(name);
        self.index()
            .table
            .find(wide(h), |s| {
                s.hash == h && self.names.get(u64::from(s.number)) == Some(name)
            })
            .map(|s| s.number)
    }

    /// The number of `name`, adding it (with the next number) if it is new; whether it was.
    /// Names longer than [`MAX_NAME_BYTES`], and a set already holding [`MAX_NAMES`], are
    /// refused with a message.
    pub fn insert(&mut self, name: &str) -> Result<(u32, bool), String> {
        if let Some(i) = self.find(name) {
            return Ok((i, false));
        }
        check_name(name)?;
        if self.names.len as u64 >= MAX_NAMES {
            return Err(format!("more than {MAX_NAMES} distinct vertex names"));
        }
        let number = self.names.len as u32;
        let hash = self.hash(name);
        self.names.push(name);
        let idx = self.index.get_mut().expect("built by find above");
        idx.table
            .insert_unique(wide(hash), Slot { number, hash }, |s| wide(s.hash));
        Ok((number, true))
    }

    /// DRAM the set takes: the names and the index.
    pub fn dram_bytes(&self) -> usize {
        let slots = self.index.get().map_or(0, |i| i.table.capacity());
        self.names.dram_bytes() + slots * (std::mem::size_of::<Slot>() + 1)
    }
}

/// Whether `name` may be a vertex name: 1 to [`MAX_NAME_BYTES`] bytes, without tabs,
/// line breaks or NUL, and not beginning or ending with a space. Every name then reads back
/// exactly from the tab-separated text that `export` and `run` print.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a vertex name may not be empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| matches!(c, '\t' | '\n' | '\r' | '\0'))
    {
        return Err(format!(
            "the vertex name {name:?} holds {c:?}: names may not hold tabs, line breaks or NUL"
        ));
    }
    if name.starts_with(' ') || name.ends_with(' ') {
        return Err(format!(
            "the vertex name {name:?} begins or ends with a space (text inputs trim them)"
        ));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "a vertex name of {} bytes is longer than the {MAX_NAME_BYTES} allowed",
            name.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_first_appearance_across_blocks() {
        let mut s = NameSet::new();
        let n = BLOCK_NAMES * 2 + 17;
        for i in 0..n {
            assert_eq!(s.insert(&format!("v{i}")).unwrap(), (i as u32, true));
        }
        assert_eq!(s.insert("v5").unwrap(), (5, false));
        assert_eq!(s.len(), n);
        for i in [0, 1, BLOCK_NAMES - 1, BLOCK_NAMES, n - 1] {
            assert_eq!(s.names().get(i as u64), Some(format!("v{i}").as_str()));
            assert_eq!(s.find(&format!("v{i}")), Some(i as u32));
        }
        assert_eq!(s.names().get(n as u64), None);
        assert_eq!(s.find("v-1"), None);
    }

    #[test]
    fn a_set_of_loaded_names_indexes_them_on_first_use() {
        let names: Names = ["a", "b", "c"].into_iter().collect();
        let mut s = NameSet::from_names(names);
        assert_eq!(s.find("c"), Some(2));
        assert_eq!(s.repeated(), None);
        assert_eq!(s.insert("d").unwrap(), (3, true));
        assert_eq!(s.insert("a").unwrap(), (0, false));
        let twice: Names = ["a", "b", "a"].into_iter().collect();
        let s = NameSet::from_names(twice);
        assert_eq!(s.repeated(), Some("a"));
        assert_eq!(s.find("a"), Some(0), "the first number stands");
    }

    #[test]
    fn a_clone_keeps_its_names_while_the_set_grows() {
        let mut s = NameSet::new();
        s.insert("a").unwrap();
        let before = s.names().clone();
        s.insert("b").unwrap();
        assert_eq!(before.len(), 1);
        assert_eq!(before.iter().collect::<Vec<_>>(), ["a"]);
        assert_eq!(s.names().iter().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn empty_and_oversized_names_are_refused() {
        let mut s = NameSet::new();
        assert!(s.insert("").unwrap_err().contains("empty"));
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        assert!(s.insert(&long).unwrap_err().contains("longer"));
        assert!(s.insert(&long[1..]).is_ok());
        assert!(s.insert("ünïcødé 名前").is_ok());
        assert_eq!(s.len(), 2);
        for bad in ["a\tb", "a\nb", "a\rb", "a\0b", " a", "a "] {
            assert!(s.insert(bad).is_err(), "{bad:?}");
        }
        let huge = "y".repeat(1 << 20);
        let n: Names = ["a", huge.as_str(), "z"].into_iter().collect();
        assert_eq!(n.get(2), Some("z"));
        assert!(n
            .check()
            .unwrap_err()
            .contains("name 1 of the batch has 1048576 bytes"));
    }
}
