//! The `KEYS` file: every vertex name of a string-keyed store, in number order.
//!
//! ```text
//! header: "EVGKEYS1" | store id u64 (0 in files from before stamps)
//! entry:  len u32 | crc32c u32 (over the name's number u64, len u32, the name) | len bytes of UTF-8
//! ```
//! Entries are appended and persisted before any WAL block names their numbers, so the
//! file always holds every name the log and the runs use. A crash mid-append leaves a
//! torn tail that no record names: loading stops at the first entry that does not verify,
//! and a writer cuts the file there. The numbers in the checksum tie each entry to its
//! place, so an entry shifted, repeated or lost is caught like a flipped bit.

use super::names::{check_name, NameSet, Names};
use crate::medium::{Medium, SegmentFile};
use crate::{Error, Result};

/// Name of the key segment.
pub const FILE: &str = "KEYS";
pub(crate) const MAGIC: &[u8; 8] = b"EVGKEYS1";
const HEADER: usize = 16;
const ENTRY_HEADER: usize = 8;
/// Bytes read per `pread` when loading.
const READ_CHUNK: usize = 4 << 20;

/// What [`load`] found.
pub struct Loaded {
    /// The names of every entry that verified, in order.
    pub set: NameSet,
    /// Bytes of the file up to the end of the last such entry.
    pub valid_bytes: u64,
    /// The file's length (more than `valid_bytes` after a torn append).
    pub file_bytes: u64,
    /// The store id in the header (0: none, or a file from before stamps).
    pub store_id: u64,
}

/// Reads the names of `KEYS` up to the first entry that does not verify. A missing file is
/// an empty table; a file that is not a key file is `Corrupt` (a name stored twice under
/// valid checksums is found when the set is indexed: [`NameSet::repeated`]).
///
/// Reads with `pread`, not a mapping: a writer may cut a torn tail while a reader loads.
pub fn load(medium: &dyn Medium) -> Result<Loaded> {
    let set = NameSet::new();
    if !medium.exists(FILE) {
        return Ok(Loaded {
            set,
            valid_bytes: 0,
            file_bytes: 0,
            store_id: 0,
        });
    }
    let seg = medium.open(FILE)?;
    let file_bytes = seg.len()?;
    let bytes = read_all(&*seg, file_bytes)?;
    // A creation cut short before its first persist leaves a short file, or one whose
    // header sector never landed (zeros): nothing in it was ever used.
    if bytes.len() < HEADER || bytes[..HEADER].iter().all(|&b| b == 0) {
        return Ok(Loaded {
            set,
            valid_bytes: 0,
            file_bytes,
            store_id: 0,
        });
    }
    if &bytes[..8] != MAGIC {
        return Err(Error::corrupt("KEYS is not an evograph key file"));
    }
    let store_id = u64::from_le_bytes(bytes[8..HEADER].try_into().unwrap());
    let mut names = Names::default();
    let mut at = HEADER;
    while let Some((name, next)) = entry_at(&bytes, at, names.len() as u64) {
        check_name(name).map_err(|m| Error::corrupt(format!("KEYS at byte {at}: {m}")))?;
        names.push(name);
        at = next;
    }
    // Repeats are looked for when the set is first indexed (a writer's open does it).
    let set = NameSet::from_names(names);
    Ok(Loaded {
        set,
        valid_bytes: at as u64,
        file_bytes,
        store_id,
    })
}

/// Writes `store_id` into the header of a `KEYS` file from before stamps and persists it: an
/// aligned 8-byte write inside the first sector, which no power cut tears. Nothing else in
/// the file depends on those bytes.
pub fn stamp(medium: &dyn Medium, store_id: u64) -> Result<()> {
    if !medium.exists(FILE) {
        return Ok(());
    }
    let seg = medium.open(FILE)?;
    if seg.len()? < HEADER as u64 {
        return Ok(());
    }
    seg.write_at(8, &store_id.to_le_bytes())?;
    seg.persist()
}

/// The entry for name number `number` at byte `at`, and where the next one starts; `None`
/// where the verified entries end.
fn entry_at(bytes: &[u8], at: usize, number: u64) -> Option<(&str, usize)> {
    let h = bytes.get(at..at + ENTRY_HEADER)?;
    let len = u32::from_le_bytes(h[..4].try_into().unwrap()) as usize;
    let crc = u32::from_le_bytes(h[4..].try_into().unwrap());
    let name = bytes.get(at + ENTRY_HEADER..at + ENTRY_HEADER + len)?;
    if len == 0 || checksum(number, name) != crc {
        return None;
    }
    Some((std::str::from_utf8(name).ok()?, at + ENTRY_HEADER + len))
}

fn checksum(number: u64, name: &[u8]) -> u32 {
    let c = crc32c::crc32c(&number.to_le_bytes());
    let c = crc32c::crc32c_append(c, &(name.len() as u32).to_le_bytes());
    crc32c::crc32c_append(c, name)
}

fn read_all(seg: &dyn SegmentFile, len: u64) -> Result<Vec<u8>> {
    let mut out = vec![0u8; len as usize];
    for (i, chunk) in out.chunks_mut(READ_CHUNK).enumerate() {
        seg.read_at((i * READ_CHUNK) as u64, chunk)?;
    }
    Ok(out)
}

/// The appending end of `KEYS`.
pub struct KeyFile {
    seg: Option<Box<dyn SegmentFile>>,
    len: u64,
    /// Whether the directory entry of `KEYS` is known durable. Not at open: a creator may
    /// have crashed between persisting the file and syncing the directory, and a power cut
    /// then could lose the file with names a later log block uses. The first append of
    /// each handle syncs the directory.
    dir_synced: bool,
    /// An append failed (with this error): what reached the file is unknown, so no later
    /// append may trust `len` (entries of the failed one could verify behind a shorter one).
    failed: Option<std::sync::Arc<Error>>,
    /// The id a header this handle writes carries.
    store_id: u64,
}

impl KeyFile {
    /// The file as [`load`] left it: appends go after its `valid_bytes`. With `repair` (a
    /// writer), a torn tail past them is cut now (durably), so a later append cannot leave
    /// old bytes behind a shorter entry, and the directory is synced: the handle that
    /// created the file may have died before it did, and this handle may add no name of its
    /// own while its log blocks use the names there.
    pub fn open(
        medium: &dyn Medium,
        loaded: &Loaded,
        repair: bool,
        store_id: u64,
    ) -> Result<KeyFile> {
        let seg = if medium.exists(FILE) {
            Some(medium.open(FILE)?)
        } else {
            None
        };
        let mut dir_synced = false;
        if let (Some(s), true) = (&seg, repair) {
            if loaded.file_bytes > loaded.valid_bytes {
                s.set_len(loaded.valid_bytes)?;
                s.persist()?;
            }
            medium.sync_dir()?;
            dir_synced = true;
        }
        Ok(KeyFile {
            seg,
            len: loaded.valid_bytes,
            dir_synced,
            failed: None,
            store_id,
        })
    }

    /// Appends `names`, numbered from `first`, and makes them durable.
    pub fn append<'a>(
        &mut self,
        medium: &dyn Medium,
        first: u64,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        if let Some(cause) = &self.failed {
            return Err(Error::Poisoned(cause.clone()));
        }
        let res = self.write(medium, first, names);
        // A bad name is refused before anything is written; any other error came from I/O.
        if let Err(e) = &res {
            if !matches!(e, Error::Invalid(_)) {
                self.failed = Some(std::sync::Arc::new(e.replica()));
            }
        }
        res
    }

    fn write<'a>(
        &mut self,
        medium: &dyn Medium,
        first: u64,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        let mut buf = Vec::new();
        if self.len == 0 {
            buf.extend_from_slice(MAGIC);
            buf.extend_from_slice(&self.store_id.to_le_bytes());
        }
        for (i, name) in names.into_iter().enumerate() {
            // Callers check names first (`Keys::intern`); a bad one here writes nothing.
            check_name(name).map_err(Error::Invalid)?;
            buf.extend_from_slice(&(name.len() as u32).to_le_bytes());
            buf.extend_from_slice(&checksum(first + i as u64, name.as_bytes()).to_le_bytes());
            buf.extend_from_slice(name.as_bytes());
        }
        let seg = match &self.seg {
            Some(s) => s,
            None => self.seg.insert(medium.create(FILE)?),
        };
        debug_assert!(self.len > 0 || self.store_id != 0, "a new KEYS is stamped");
        seg.write_at(self.len, &buf)?;
        seg.persist()?;
        if !self.dir_synced {
            medium.sync_dir()?;
            self.dir_synced = true;
        }
        self.len += buf.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::memory::MemoryMedium;

    fn append(m: &MemoryMedium, f: &mut KeyFile, first: u64, names: &[&str]) {
        f.append(m, first, names.iter().copied()).unwrap();
    }

    fn names(l: &Loaded) -> Vec<String> {
        l.set.names().iter().map(String::from).collect()
    }

    #[test]
    fn appends_reload_in_order() {
        let m = MemoryMedium::new();
        let l = load(&m).unwrap();
        assert_eq!((l.set.len(), l.valid_bytes), (0, 0));
        let mut f = KeyFile::open(&m, &l, true, 7).unwrap();
        append(&m, &mut f, 0, &["libc6", "zlib1g"]);
        append(&m, &mut f, 2, &["python3", "ünï"]);
        let l = load(&m).unwrap();
        assert_eq!(names(&l), ["libc6", "zlib1g", "python3", "ünï"]);
        assert_eq!(l.valid_bytes, l.file_bytes);
        assert_eq!(l.set.find("python3"), Some(2));
        assert_eq!(l.store_id, 7);
    }

    #[test]
    fn a_torn_tail_ends_the_names_and_a_writer_cuts_it() {
        let m = MemoryMedium::new();
        let mut f = KeyFile::open(&m, &load(&m).unwrap(), true, 7).unwrap();
        append(&m, &mut f, 0, &["a", "bb"]);
        let good = m.open(FILE).unwrap().len().unwrap();
        append(&m, &mut f, 2, &["ccc", "dddd"]);
        let full = m.open(FILE).unwrap().len().unwrap();
        // Every cut inside the second append leaves exactly the first.
        for cut in good..full {
            let seg = m.open(FILE).unwrap();
            let mut keep = vec![0u8; full as usize];
            seg.read_at(0, &mut keep).unwrap();
            seg.set_len(cut).unwrap();
            let l = load(&m).unwrap();
            let whole = if cut >= good + 11 { 3 } else { 2 };
            assert_eq!(l.set.len(), whole, "cut at {cut}");
            seg.set_len(0).unwrap();
            seg.write_at(0, &keep).unwrap();
        }
        // Zeros where the append did not land are no entry either.
        let seg = m.open(FILE).unwrap();
        seg.set_len(good).unwrap();
        seg.set_len(good + 64).unwrap();
        let l = load(&m).unwrap();
        assert_eq!(names(&l), ["a", "bb"]);
        let mut f = KeyFile::open(&m, &l, true, 7).unwrap();
        assert_eq!(m.open(FILE).unwrap().len().unwrap(), good);
        append(&m, &mut f, 2, &["e"]);
        assert_eq!(names(&load(&m).unwrap()), ["a", "bb", "e"]);
    }

    #[test]
    fn a_flipped_byte_never_yields_a_wrong_name() {
        let m = MemoryMedium::new();
        let mut f = KeyFile::open(&m, &load(&m).unwrap(), true, 7).unwrap();
        let all: Vec<String> = (0..50).map(|i| format!("pkg-{i}")).collect();
        f.append(&m, 0, all.iter().map(String::as_str)).unwrap();
        let len = m.open(FILE).unwrap().len().unwrap();
        for at in HEADER as u64..len {
            let seg = m.open(FILE).unwrap();
            let mut b = [0u8];
            seg.read_at(at, &mut b).unwrap();
            seg.write_at(at, &[b[0] ^ 0x10]).unwrap();
            let l = load(&m).unwrap();
            // The damaged entry and all after it are gone; what remains is right.
            assert!(l.set.len() < all.len(), "flip at {at}");
            assert_eq!(names(&l), all[..l.set.len()], "flip at {at}");
            seg.write_at(at, &b).unwrap();
        }
        for at in 0..HEADER as u64 {
            let seg = m.open(FILE).unwrap();
            let mut b = [0u8];
            seg.read_at(at, &mut b).unwrap();
            seg.write_at(at, &[b[0] ^ 1]).unwrap();
            // The magic does not read, or the file names another store (which the table
            // refuses: `Keys::open`).
            match load(&m) {
                Err(Error::Corrupt(_)) => assert!(at < 8, "flip at {at}"),
                Ok(l) => assert!(at >= 8 && l.store_id != 7, "flip at {at}"),
                Err(e) => panic!("flip at {at}: {e}"),
            }
            seg.write_at(at, &b).unwrap();
        }
    }

    #[test]
    fn a_first_append_whose_header_never_landed_holds_no_names() {
        let m = MemoryMedium::new();
        let mut f = KeyFile::open(&m, &load(&m).unwrap(), true, 7).unwrap();
        let long = "n".repeat(600);
        append(&m, &mut f, 0, &["a", &long, "b"]);
        // Sector tearing: the first sector (header) lost, the later ones kept.
        m.open(FILE).unwrap().write_at(0, &[0u8; 512]).unwrap();
        let l = load(&m).unwrap();
        assert_eq!((l.set.len(), l.valid_bytes), (0, 0));
        let mut f = KeyFile::open(&m, &l, true, 7).unwrap();
        assert_eq!(m.open(FILE).unwrap().len().unwrap(), 0);
        append(&m, &mut f, 0, &["c"]);
        assert_eq!(names(&load(&m).unwrap()), ["c"]);
    }

    #[test]
    fn a_repeated_name_is_corrupt() {
        let m = MemoryMedium::new();
        let mut f = KeyFile::open(&m, &load(&m).unwrap(), true, 7).unwrap();
        append(&m, &mut f, 0, &["a", "b", "a"]);
        assert_eq!(load(&m).unwrap().set.repeated(), Some("a"));
    }
}
