//! The persistent dictionary from external 64-bit vertex ids to dense [`VertexId`]s.
//!
//! Dense ids are handed out in first-seen order. New assignments are logged in the WAL with
//! the batch that created them, and appended to the `DICT` file when a flush commits, so the
//! file plus the log always rebuild the same mapping. The file is a sequence of chunks
//! (see [`chunk`]), each stamped with the store and the commit it was written for.
//! The manifest records how many entries and bytes are committed; anything past that is a
//! flush that never committed and is cut on open.

pub(crate) mod chunk;
mod lookup;

pub use lookup::Lookup;

use crate::medium::Medium;
use crate::stamp::Stamp;
use crate::types::{VertexId, MAX_VERTICES};
use crate::{Error, Result};
use std::sync::{Arc, OnceLock};

/// Name of the dictionary segment.
pub const FILE: &str = "DICT";

/// External ids by dense id as of some moment: what a snapshot reads, shared with the
/// dictionary it came from (the first `n` of its ids, which never change once handed out).
#[derive(Clone, Default)]
pub struct Externals {
    ids: Arc<Vec<u64>>,
    n: usize,
}

impl std::ops::Deref for Externals {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        &self.ids[..self.n]
    }
}

impl From<Vec<u64>> for Externals {
    fn from(ids: Vec<u64>) -> Externals {
        let n = ids.len();
        Externals {
            ids: Arc::new(ids),
            n,
        }
    }
}

/// The dictionary: both directions in DRAM, the committed prefix on the medium.
#[derive(Default)]
pub struct Dict {
    /// Shared with snapshots ([`Dict::shared_externals`]); copied when a new id is handed
    /// out while one holds it.
    to_ext: Arc<Vec<u64>>,
    /// External → dense, built on first use from `to_ext`: a clean open only reads the
    /// external ids, and readers that print results by external id never need it. A
    /// duplicate external id (a damaged dictionary) is kept here as the error.
    lookup: OnceLock<std::result::Result<Lookup, u64>>,
    persisted: usize,
    file_bytes: u64,
}

impl Dict {
    /// DRAM the dictionary holds: external ids by dense id and the reverse lookup.
    pub fn dram_bytes(&self) -> usize {
        let lookup = match self.lookup.get() {
            Some(Ok(l)) => l.dram_bytes(),
            _ => 0,
        };
        self.to_ext.capacity() * 8 + lookup
    }

    /// Number of dense ids handed out.
    pub fn len(&self) -> usize {
        self.to_ext.len()
    }

    /// Whether no id was handed out yet.
    pub fn is_empty(&self) -> bool {
        self.to_ext.is_empty()
    }

    /// The external → dense lookup, built now if this is its first use; `Corrupt` if the
    /// dictionary gives one external id two dense ids.
    pub fn lookup(&self) -> Result<&Lookup> {
        match self.lookup.get_or_init(|| Lookup::build(&self.to_ext)) {
            Ok(l) => Ok(l),
            Err(ext) => Err(Error::corrupt(format!(
                "dictionary DICT: vertex {ext} appears twice"
            ))),
        }
    }

    fn lookup_mut(&mut self) -> Result<&mut Lookup> {
        self.lookup()?;
        match self.lookup.get_mut() {
            Some(Ok(l)) => Ok(l),
            _ => unreachable!("lookup() built it without error"),
        }
    }

    /// The dense id of an external id, if it has one.
    pub fn get(&self, ext: u64) -> Result<Option<VertexId>> {
        Ok(self.lookup()?.get(ext))
    }

    /// The external id of a dense id.
    #[inline]
    pub fn external(&self, v: VertexId) -> u64 {
        self.to_ext[v as usize]
    }

    /// All external ids, indexed by dense id.
    pub fn externals(&self) -> &[u64] {
        &self.to_ext
    }

    /// The external ids of dense ids below `n` (at most [`Dict::len`]), shared rather than
    /// copied: a snapshot's copy was 262 MB and a tenth of a second of its open at Kron26.
    pub fn shared_externals(&self, n: usize) -> Externals {
        assert!(
            n <= self.to_ext.len(),
            "{n} ids asked of a dictionary of {}",
            self.len()
        );
        Externals {
            ids: self.to_ext.clone(),
            n,
        }
    }

    /// The ids to change, copied first if a snapshot shares them. The copy has room to
    /// grow, so a writer beside readers copies once per snapshot, as a snapshot's own copy
    /// did, and not again at the next id.
    fn ids_mut(&mut self) -> &mut Vec<u64> {
        if Arc::get_mut(&mut self.to_ext).is_none() {
            let len = self.to_ext.len();
            let mut ids = Vec::with_capacity(self.to_ext.capacity().max(len + len / 4 + 1024));
            ids.extend_from_slice(&self.to_ext);
            self.to_ext = Arc::new(ids);
        }
        Arc::get_mut(&mut self.to_ext).expect("no other holder after the copy")
    }

    /// Returns the dense id of `ext`, handing out the next one if it has none.
    pub fn get_or_assign(&mut self, ext: u64) -> Result<VertexId> {
        if let Some(v) = self.lookup()?.get(ext) {
            return Ok(v);
        }
        self.room_for(ext)?;
        let v = self.to_ext.len() as VertexId;
        self.ids_mut().push(ext);
        let n = self.to_ext.len();
        self.lookup_mut()?.insert(ext, v, n);
        Ok(v)
    }

    /// Re-applies assignments read back from the WAL. Entries already present must agree.
    pub fn replay(&mut self, first: VertexId, ids: &[u64]) -> Result<()> {
        for (i, &ext) in ids.iter().enumerate() {
            let v = first as usize + i;
            if v < self.to_ext.len() {
                if self.to_ext[v] != ext {
                    return Err(Error::corrupt(format!(
                        "WAL gives dense id {v} to vertex {ext}, the dictionary to {}",
                        self.to_ext[v]
                    )));
                }
            } else if v == self.to_ext.len() {
                self.assign_replayed(ext)?;
            } else {
                return Err(Error::corrupt(format!(
                    "WAL assigns dense id {v} but the dictionary has only {}",
                    self.to_ext.len()
                )));
            }
        }
        Ok(())
    }

    /// Hands the next dense id to `ext`, read back from the log. While nothing has looked
    /// an id up, the lookup is not built and the id is only appended: the lookup, built on
    /// first use, refuses a vertex named twice as it does one the file names twice. A
    /// reader that never looks an id up (`stats`, a kernel) then never builds it: it was a
    /// hash insert per new id of every replay, a tenth of a reader's work beside an ingest.
    fn assign_replayed(&mut self, ext: u64) -> Result<()> {
        let v = self.to_ext.len();
        if self.lookup.get().is_some() {
            if self.get_or_assign(ext)? != v as VertexId {
                return Err(Error::corrupt(format!("WAL assigns vertex {ext} twice")));
            }
            return Ok(());
        }
        self.room_for(ext)?;
        self.ids_mut().push(ext);
        Ok(())
    }

    /// Whether a new id can be handed to `ext`: the id width bounds the vertex count.
    fn room_for(&self, ext: u64) -> Result<()> {
        if self.to_ext.len() as u64 >= MAX_VERTICES {
            return Err(Error::Invalid(format!(
                "vertex {ext} would exceed the {MAX_VERTICES} vertices a 32-bit store holds"
            )));
        }
        Ok(())
    }

    /// Entries and bytes committed in the file.
    pub fn committed(&self) -> (usize, u64) {
        (self.persisted, self.file_bytes)
    }

    /// Loads the committed prefix (`entries`, `bytes`) of the dictionary file, verifying every
    /// chunk, and calling `stamp_ok(offset, stamp)` on each chunk's stamp (`None` for a chunk
    /// from before stamps): its error refuses the file. Bytes past the prefix are left alone
    /// (see [`Dict::cut_uncommitted`]).
    pub fn load(
        medium: &dyn Medium,
        entries: usize,
        bytes: u64,
        stamp_ok: &dyn Fn(u64, Option<Stamp>) -> Result<()>,
    ) -> Result<Dict> {
        if !medium.exists(FILE) {
            return if entries == 0 && bytes == 0 {
                Ok(Dict::default())
            } else {
                Err(Error::corrupt(format!(
                    "dictionary file DICT is missing (the manifest commits {entries} entries in {bytes} bytes of it)"
                )))
            };
        }
        Self::load_committed(medium, entries, bytes, stamp_ok).map_err(|e| {
            // Another store's DICT is that before it is one of the wrong size or shape:
            // its first chunk, read whole, says whose it is.
            match Self::uncommitted_stamp(medium, 0) {
                Ok(Some(st)) => stamp_ok(0, Some(st)).err().unwrap_or(e),
                _ => e,
            }
        })
    }

    /// [`Dict::load`] of a `DICT` that exists.
    fn load_committed(
        medium: &dyn Medium,
        entries: usize,
        bytes: u64,
        stamp_ok: &dyn Fn(u64, Option<Stamp>) -> Result<()>,
    ) -> Result<Dict> {
        let mut d = Dict::default();
        let seg = medium.open(FILE)?;
        let len = seg.len()?;
        if len < bytes {
            return Err(Error::corrupt(format!(
                "dictionary DICT has {len} bytes, the manifest commits {bytes}"
            )));
        }
        let map = seg.map()?;
        let b = &map.bytes()[..bytes as usize];
        let mut at = 0usize;
        d.ids_mut().reserve(entries);
        while at < b.len() {
            let bad = |m: &str| Error::corrupt(format!("dictionary DICT at byte {at}: {m}"));
            let c = chunk::parse(&b[at..]).map_err(bad)?;
            if c.first != d.to_ext.len() as u64 {
                return Err(bad("chunk out of order"));
            }
            stamp_ok(at as u64, c.stamp)?;
            d.ids_mut().extend(
                c.payload
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap())),
            );
            at += c.len;
        }

        if d.to_ext.len() != entries {
            return Err(Error::corrupt(format!(
                "dictionary DICT holds {} entries, the manifest commits {entries}",
                d.to_ext.len()
            )));
        }
        d.persisted = entries;
        d.file_bytes = bytes;
        Ok(d)
    }

    /// The stamp of the chunk that starts at byte `bytes` (the end of the committed prefix),
    /// if one is there whole and verifies: a flush that wrote it and never committed, or (if
    /// its commit is past the root's next) a root older than the store.
    pub fn uncommitted_stamp(medium: &dyn Medium, bytes: u64) -> Result<Option<Stamp>> {
        if !medium.exists(FILE) {
            return Ok(None);
        }
        let seg = medium.open(FILE)?;
        let len = seg.len()?;
        if len <= bytes {
            return Ok(None);
        }
        // Mapped, not read: asked for the first chunk (`bytes` 0) on every open, it is the
        // whole dictionary, and a copy of it was a tenth of a second at Kron26.
        let map = seg.map()?;
        let b = map.bytes().get(bytes as usize..).unwrap_or(&[]);
        Ok(chunk::parse(b).ok().and_then(|c| c.stamp))
    }

    /// Cuts a dictionary file back to its committed `bytes` (entries a flush appended
    /// but never committed).
    pub fn cut_uncommitted(medium: &dyn Medium, bytes: u64) -> Result<()> {
        if !medium.exists(FILE) {
            return Ok(());
        }
        let seg = medium.open(FILE)?;
        if seg.len()? > bytes {
            seg.set_len(bytes)?;
            seg.persist()?;
        }
        Ok(())
    }

    /// Appends entries `[committed, upto)` to the file and persists them. They count as
    /// committed once the manifest that records the returned `(entries, bytes)` is durable.
    pub fn write_upto(
        &mut self,
        medium: &dyn Medium,
        upto: usize,
        stamp: Stamp,
    ) -> Result<(usize, u64)> {
        if let Some(c) = self.chunk_upto(upto, stamp) {
            c.write(medium)?;
            self.chunk_written(&c);
        }
        Ok(self.committed())
    }

    /// Entries `[committed, upto)` encoded as the file's next chunk, if there are any. The
    /// store writes it without holding the dictionary's lock ([`Chunk::write`]), then
    /// records it ([`Dict::chunk_written`]), so lookups never wait for its `fdatasync`.
    pub fn chunk_upto(&self, upto: usize, stamp: Stamp) -> Option<Chunk> {
        if upto <= self.persisted {
            return None;
        }
        let ids = &self.to_ext[self.persisted..upto];
        let buf = chunk::encode(self.persisted as u64, ids, stamp);
        Some(Chunk {
            offset: self.file_bytes,
            from: self.persisted,
            upto,
            bytes: buf,
        })
    }

    /// Records that `c` is written and durable.
    pub fn chunk_written(&mut self, c: &Chunk) {
        assert_eq!(
            (c.from, c.offset),
            (self.persisted, self.file_bytes),
            "dictionary chunks are written in order, one at a time"
        );
        self.persisted = c.upto;
        self.file_bytes += c.bytes.len() as u64;
    }
}

/// Dictionary entries encoded for the file, not yet written.
pub struct Chunk {
    offset: u64,
    from: usize,
    upto: usize,
    bytes: Vec<u8>,
}

impl Chunk {
    /// Appends the chunk to `DICT` (created, durably, if missing) and persists it.
    pub fn write(&self, medium: &dyn Medium) -> Result<()> {
        let seg = if medium.exists(FILE) {
            medium.open(FILE)?
        } else {
            let s = medium.create(FILE)?;
            medium.sync_dir()?;
            s
        };
        seg.write_at(self.offset, &self.bytes)?;
        seg.persist()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::memory::MemoryMedium;

    const STAMP: Stamp = Stamp {
        store_id: 1,
        seq: 2,
    };

    fn any(_: u64, _: Option<Stamp>) -> Result<()> {
        Ok(())
    }

    /// A snapshot's ids are the dictionary's, not a copy, yet ids handed out after it never
    /// show in it, and the dictionary goes on handing out and finding ids as before.
    #[test]
    fn shared_ids_stay_as_they_were_while_the_dictionary_grows() {
        let mut d = Dict::default();
        for ext in [40, 7, 900] {
            d.get_or_assign(ext).unwrap();
        }
        let early = d.shared_externals(2);
        let all = d.shared_externals(3);
        assert_eq!(&*early, &[40, 7]);
        for ext in 1000..3000 {
            d.get_or_assign(ext).unwrap();
        }
        assert_eq!(&*early, &[40, 7]);
        assert_eq!(&*all, &[40, 7, 900]);
        assert_eq!(d.len(), 2003);
        assert_eq!(d.get(900).unwrap(), Some(2));
        assert_eq!(d.get(2999).unwrap(), Some(2002));
        assert_eq!(d.externals()[2002], 2999);
    }

    #[test]
    fn assign_persist_reload() {
        let m = MemoryMedium::new();
        let mut d = Dict::default();
        let ids = [5u64, 1 << 40, 7, 5, u64::MAX, 0];
        let dense: Vec<_> = ids.iter().map(|&e| d.get_or_assign(e).unwrap()).collect();
        assert_eq!(dense, vec![0, 1, 2, 0, 3, 4]);
        let (n, b) = d.write_upto(&m, 3, STAMP).unwrap();
        assert_eq!(n, 3);
        let (n2, b2) = d.write_upto(&m, 5, Stamp::new(1, 3)).unwrap();
        assert_eq!(n2, 5);
        assert!(b2 > b);
        let r = Dict::load(&m, n2, b2, &any).unwrap();
        assert_eq!(r.externals(), d.externals());
        assert_eq!(r.get(1 << 40).unwrap(), Some(1));
        assert_eq!(r.get(8).unwrap(), None);
        // An uncommitted tail is ignored (its stamp is told), then cut.
        let r = Dict::load(&m, n, b, &any).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(
            Dict::uncommitted_stamp(&m, b).unwrap(),
            Some(Stamp::new(1, 3))
        );
        let seen = std::cell::RefCell::new(Vec::new());
        Dict::load(&m, n2, b2, &|at, st| {
            seen.borrow_mut().push((at, st));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            *seen.borrow(),
            [(0, Some(STAMP)), (b, Some(Stamp::new(1, 3)))]
        );
        Dict::cut_uncommitted(&m, b).unwrap();
        assert_eq!(m.open(FILE).unwrap().len().unwrap(), b);
        assert_eq!(Dict::uncommitted_stamp(&m, b).unwrap(), None);
    }

    #[test]
    fn a_duplicate_id_with_a_valid_checksum_is_refused_at_first_lookup() {
        // Only a writer's bug could write this (checksums catch damage): the dictionary is
        // indexed on first use, and that use fails instead of answering.
        let m = MemoryMedium::new();
        let mut d = Dict::default();
        d.get_or_assign(5).unwrap();
        d.get_or_assign(6).unwrap();
        d.ids_mut()[1] = 5;
        let (n, b) = d.write_upto(&m, 2, STAMP).unwrap();
        let mut r = Dict::load(&m, n, b, &any).expect("a clean open reads the ids only");
        assert_eq!(r.externals(), &[5, 5]);
        for res in [r.get(7), r.get_or_assign(7).map(Some)] {
            match res {
                Err(Error::Corrupt(msg)) => assert!(msg.contains("vertex 5 appears twice")),
                other => panic!("expected Corrupt, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_replayed_id_the_dictionary_holds_is_refused_at_first_lookup() {
        let m = MemoryMedium::new();
        let mut d = Dict::default();
        d.get_or_assign(5).unwrap();
        let (n, b) = d.write_upto(&m, 1, STAMP).unwrap();
        let mut r = Dict::load(&m, n, b, &any).unwrap();
        // Replayed before anything looks an id up: appended, not yet checked.
        r.replay(1, &[6, 5]).unwrap();
        assert_eq!(r.externals(), &[5, 6, 5]);
        for res in [r.get(7), r.get_or_assign(7).map(Some)] {
            match res {
                Err(Error::Corrupt(msg)) => assert!(msg.contains("vertex 5 appears twice")),
                other => panic!("expected Corrupt, got {other:?}"),
            }
        }
        // Once the lookup is built, a replay checks each id as it comes.
        let mut r = Dict::load(&m, n, b, &any).unwrap();
        assert_eq!(r.get(5).unwrap(), Some(0));
        r.replay(1, &[6]).unwrap();
        match r.replay(2, &[5]) {
            Err(Error::Corrupt(msg)) => assert!(msg.contains("WAL assigns vertex 5 twice")),
            other => panic!("expected Corrupt, got {other:?}"),
        }
        assert_eq!(r.get(6).unwrap(), Some(1));
    }

    #[test]
    fn flipped_byte_is_an_error() {
        let m = MemoryMedium::new();
        let mut d = Dict::default();
        for e in 0..100u64 {
            d.get_or_assign(e * 3).unwrap();
        }
        let (n, b) = d.write_upto(&m, 100, STAMP).unwrap();
        for i in [0usize, 5, 9, 17, 40, 300, b as usize - 1] {
            let seg = m.open(FILE).unwrap();
            let mut x = [0u8];
            seg.read_at(i as u64, &mut x).unwrap();
            seg.write_at(i as u64, &[x[0] ^ 4]).unwrap();
            assert!(
                matches!(Dict::load(&m, n, b, &any), Err(Error::Corrupt(_))),
                "flip at {i}"
            );
            seg.write_at(i as u64, &x).unwrap();
        }
        assert!(Dict::load(&m, n, b, &any).is_ok());
    }

    #[test]
    fn replay_must_agree() {
        let mut d = Dict::default();
        d.replay(0, &[10, 20]).unwrap();
        d.replay(1, &[20, 30]).unwrap();
        assert_eq!(d.externals(), &[10, 20, 30]);
        assert!(d.replay(1, &[99]).is_err());
        assert!(d.replay(5, &[99]).is_err());
    }
}
