//! The manifest: the root of a store, committed by one atomic slot switch.
//!
//! The `MANIFEST` file has two slots of equal size, 64 KiB or a power of two above it: the
//! file's length is twice the slot size. A commit writes the slot not holding the current
//! root and persists it; open takes the valid slot with the higher sequence number, so a
//! commit torn by a crash leaves the previous root in force. Slot layout:
//!
//! ```text
//! magic "EVGMANI1" | seq u64 | payload_len u32 | crc32c u32 (of seq, len, payload) | payload
//! ```
//! The payload is [`Root`] as JSON: readable with `head -c`, and small next to the runs.
//!
//! A new store's manifest is written and persisted as `MANIFEST.new`, then renamed to
//! `MANIFEST` and the directory synced: a crash during creation leaves either no
//! `MANIFEST` (the store was never created, and the next open creates it) or a whole one.
//!
//! A root too large for its slot (a store of many runs: sparse vertex ids spread runs over
//! many partitions) is committed by the same rename: a manifest with slots twice as large
//! (or more) holding the new root and the previous one is written and persisted as
//! `MANIFEST.new` and renamed over `MANIFEST`. A crash before the rename leaves the old
//! manifest in force and `MANIFEST.new` unused (the next writable open removes it).

use crate::medium::{Medium, SegmentFile};
use crate::types::{width_mismatch, ID_WIDTH};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Name of the manifest segment.
pub const FILE: &str = "MANIFEST";
/// Name a new store's manifest has until it is complete and durable.
pub const NEW_FILE: &str = "MANIFEST.new";
/// Size of each slot of a new manifest, and the smallest slot size.
const SLOT: u64 = 64 << 10;
const SLOT_HEADER: usize = 24;
pub(crate) const MAGIC: &[u8; 8] = b"EVGMANI1";
// magic | seq u64 | payload_len u32 | crc32c u32, as the layout above says.
const _: () = assert!(SLOT_HEADER == MAGIC.len() + 8 + 4 + 4);
/// Store format version written by this build.
pub const FORMAT_VERSION: u32 = 1;

/// The format of a store keyed by names (`keys: "string"`): version 1 plus `KEYS`. Its own
/// number makes builds from before names refuse such a store instead of reading its name
/// numbers as integer ids.
pub const FORMAT_VERSION_KEYS: u32 = 2;

/// The format of a store whose runs are compressed (`compression: "packed"`), keyed either
/// way: builds from before compression refuse it instead of failing on its first run.
pub const FORMAT_VERSION_PACKED: u32 = 3;

/// The format of a store whose files carry its id (see the `stamp` module), whatever its options:
/// builds from before stamps refuse it instead of writing unstamped files into it. Versions
/// 1 to 3 are stores from before stamps ("legacy" stores), which this build still opens.
pub const FORMAT_VERSION_STAMPED: u32 = 4;
/// Format version of stores keeping history (builds before it would drop it unseen).
pub const FORMAT_VERSION_HISTORY: u32 = 5;
/// Format version of a store whose log is in use and written by this build (segments with
/// a header page, LSNs counting the records submitted): builds before it would read such
/// a segment as one whose header never became durable and drop its blocks. A close, which
/// retires the log, takes the store back to 4 or 5.
pub const FORMAT_VERSION_PAGED_LOG: u32 = 6;
/// Format version of a store naming a history segment of format 3 (a source index and
/// narrow commits instead of a source and a u32 commit per change): builds before it
/// would call such a segment damaged. Whatever the log's state; a store whose segments
/// of format 3 retention has all let go goes back to 5 or 6.
pub const FORMAT_VERSION_SEGMENTS_3: u32 = 7;
/// The WAL format this build writes (FORMAT.md, "WAL"): segment format 3.
pub const WAL_FORMAT: u32 = 3;

/// What a store upgraded from before stamps still holds without them, so that open accepts
/// those files and no others (see FORMAT.md, "Stores from before stamps").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Legacy {
    /// Runs with a lower id may be unstamped.
    pub runs_below: u64,
    /// Dictionary chunks that start below this byte may be of the unstamped kind.
    pub dict_bytes: u64,
    /// Log segments whose first LSN is at or below this may have the unstamped header.
    pub wal_upto_lsn: u64,
}

/// A log tail that a writer's recovery cut: the end of the newest WAL segment that did not
/// read as blocks (FORMAT.md, "The log's tail"). Kept in the root until a later recovery
/// cuts one again, so that `stats` and `check` can say what was cut. Whether the records
/// cut had been acknowledged cannot be told from the store, but for `durable_records`.
/// Fields past `unix_secs` are absent in roots of earlier builds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TornTail {
    /// Records cut, at least: in the blocks whose headers could still be read, or in the
    /// last write the segment's progress record describes.
    pub records: u64,
    /// Bytes cut that were not zero padding (or that the last write covered).
    pub bytes: u64,
    /// The LSN the log was cut at: the next record written gets it.
    pub lsn: u64,
    /// The commit that recorded the cut (the recovering writer's first).
    pub seq: u64,
    /// When it was recorded, in Unix seconds.
    pub unix_secs: u64,
    /// The segment's file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
    /// The byte offset in the segment where reading stopped.
    #[serde(default)]
    pub offset: u64,
    /// Blocks cut whose headers could still be read.
    #[serde(default)]
    pub blocks: u64,
    /// Records cut that the segment's progress record proves had been durable.
    #[serde(default)]
    pub durable_records: u64,
    /// Why no crash can have left the tail, when none can (it was damaged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damage: Option<String>,
}

/// The store id as the root's JSON holds it: 16 hex digits, a string (JSON tools read
/// numbers as doubles and would round it).
mod hex_id {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(id: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match id {
            Some(id) => s.serialize_str(&crate::stamp::id_text(*id)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        let Some(text) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        match u64::from_str_radix(&text, 16) {
            Ok(id) if id != 0 && text.len() == 16 => Ok(Some(id)),
            _ => Err(serde::de::Error::custom(format!(
                "store id '{text}' is not 16 hex digits"
            ))),
        }
    }
}

/// A live run as the manifest names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRef {
    /// Run id (file `run-<id>.run`).
    pub id: u64,
    /// Compaction level.
    pub level: u64,
    /// First LSN covered.
    pub min_lsn: u64,
    /// LSN after the last covered.
    pub max_lsn: u64,
    /// Expected file length.
    pub file_len: u64,
}

/// A history segment a root names (`hist-<min_lsn>-<max_lsn>.hist`, see
/// `src/history/segment.rs`), with what retention needs without reading it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistRef {
    /// First LSN it covers.
    pub min_lsn: u64,
    /// LSN after the last it covers.
    pub max_lsn: u64,
    /// Expected file length.
    pub file_len: u64,
    /// Commits it holds.
    pub commits: u64,
    /// Its newest commit's time (Unix nanoseconds).
    pub last_time: i64,
    /// Its format (`src/history/segment.rs`): 3, or 2 (absent) when a build before format
    /// 3 wrote it.
    #[serde(default = "default_segment_format", skip_serializing_if = "is_two")]
    pub format: u32,
}

fn default_segment_format() -> u32 {
    2
}

fn is_two(x: &u32) -> bool {
    *x == 2
}

/// Everything a store needs to open: options fixed at creation and the committed state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// Store format version.
    pub format_version: u32,
    /// Width of dense vertex ids in bits.
    pub id_width: u32,
    /// Undirected stores keep one symmetric adjacency.
    pub undirected: bool,
    /// Whether edges carry weights (reserved; this build writes `false`).
    pub weighted: bool,
    /// Commit sequence number.
    pub seq: u64,
    /// Dictionary entries committed in `DICT`.
    pub dict_entries: u64,
    /// Bytes of `DICT` committed.
    pub dict_bytes: u64,
    /// WAL replay starts here: every earlier record is in the runs.
    pub wal_start_lsn: u64,
    /// Next unused run id.
    pub next_run_id: u64,
    /// Bytes written to the medium since the store was created (as of this commit).
    #[serde(default)]
    pub bytes_written: u64,
    /// Live runs, oldest first.
    pub runs: Vec<RunRef>,
    /// The medium the store was created on ("file", "pmem" or "battery").
    #[serde(default = "default_medium")]
    pub medium: String,
    /// Whether the handle that committed this root wrote a WAL. With a WAL, a commit torn
    /// by a crash always leaves the log that rebuilds what it held, which lets open tell a
    /// torn commit from a damaged one.
    #[serde(default = "default_logged")]
    pub logged: bool,
    /// The durability mode of the last writer that opened the store ("sync",
    /// "interval=MS", "none"), so that read-only handles can report it. Absent in stores
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<String>,
    /// How vertices are keyed: "u64" (external ids are the user's integers) or "string"
    /// (external ids number the names in `KEYS`). Absent means "u64".
    #[serde(default = "default_keys")]
    pub keys: String,
    /// How runs store neighbor lists: "none" or "packed". Absent means "none".
    #[serde(default = "default_compression")]
    pub compression: String,
    /// The store's id, which every file it writes carries (see the `stamp` module). Absent in
    /// stores from before stamps until a writer opens them.
    #[serde(default, with = "hex_id", skip_serializing_if = "Option::is_none")]
    pub store_id: Option<u64>,
    /// Files a store upgraded from before stamps still holds without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy: Option<Legacy>,
    /// Whether a writer with a log has the store open, or died with it open: then the log
    /// from `wal_start_lsn` on must exist, and a missing segment is damage, not a clean
    /// end. A clean close commits `false` before it retires the log. Absent (false) in
    /// stores from before it was recorded.
    #[serde(default)]
    pub log_in_use: bool,
    /// The format of the log's segments while it is in use: 3 (this build), or 2 when a
    /// build before it claimed the log (absent).
    #[serde(default = "default_wal_format")]
    pub wal_format: u32,
    /// The last torn log tail a writer's recovery cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_cut: Option<TornTail>,
    /// What created the store (such as "evograph demo"), if it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// What history the store keeps (`all`, a duration such as `7d`, a number of commits);
    /// absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<String>,
    /// The history segments kept, oldest first, covering consecutive LSN ranges that end
    /// where the log starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history_segments: Vec<HistRef>,
    /// The LSN of the oldest commit history may still show: a window narrowed (or slid on)
    /// past a commit lets it go for good, whatever window is set later. 0: none let go.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub history_floor: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn default_wal_format() -> u32 {
    2
}

fn default_compression() -> String {
    "none".into()
}

impl Root {
    /// The format version a root with these options must carry.
    pub fn expected_format(&self) -> u32 {
        if self.history_segments.iter().any(|s| s.format >= 3) {
            FORMAT_VERSION_SEGMENTS_3
        } else if self.log_in_use && self.wal_format >= WAL_FORMAT && self.store_id.is_some() {
            FORMAT_VERSION_PAGED_LOG
        } else if self.history.is_some() || !self.history_segments.is_empty() {
            FORMAT_VERSION_HISTORY
        } else if self.store_id.is_some() {
            FORMAT_VERSION_STAMPED
        } else if self.compression != "none" {
            FORMAT_VERSION_PACKED
        } else if self.keys == "string" {
            FORMAT_VERSION_KEYS
        } else {
            FORMAT_VERSION
        }
    }
}

fn default_keys() -> String {
    "u64".into()
}

fn default_medium() -> String {
    "file".into()
}

fn default_logged() -> bool {
    true
}

impl Root {
    /// The root of a new, empty store.
    pub fn new(undirected: bool) -> Root {
        Root {
            format_version: FORMAT_VERSION,
            id_width: ID_WIDTH,
            undirected,
            weighted: false,
            seq: 0,
            dict_entries: 0,
            dict_bytes: 0,
            wal_start_lsn: 0,
            next_run_id: 1,
            bytes_written: 0,
            runs: Vec::new(),
            medium: default_medium(),
            logged: true,
            durability: None,
            keys: default_keys(),
            compression: default_compression(),
            store_id: None,
            legacy: None,
            log_in_use: false,
            wal_format: WAL_FORMAT,
            last_cut: None,
            created_by: None,
            history: None,
            history_segments: Vec::new(),
            history_floor: 0,
        }
    }

    /// The stamp of a file written for the next commit of this root.
    ///
    /// # Panics
    /// On a root without a store id: only stamped roots are ever written to.
    pub fn next_stamp(&self) -> crate::stamp::Stamp {
        let id = self.store_id.expect("a store written to has an id");
        crate::stamp::Stamp::new(id, self.seq + 1)
    }
}

/// The open manifest file and its current root.
pub struct Manifest {
    seg: Box<dyn SegmentFile>,
    /// Size of each of the file's two slots.
    slot: u64,
    root: Root,
    /// The sequence number of the root in force, for threads that stamp files without the
    /// store's locks (the log writer: [`crate::wal::Wal`]). Set after each commit is durable,
    /// so a stamp taken from it never names a commit that could still be lost.
    committed: Arc<AtomicU64>,
    /// Whether open found the other slot damaged (a torn commit or corruption).
    pub other_slot_damaged: bool,
}

enum Slot {
    Empty,
    Damaged(String),
    Valid(Box<Root>),
}

fn encode(root: &Root) -> Result<Vec<u8>> {
    let payload = serde_json::to_vec(root).map_err(|e| Error::Invalid(e.to_string()))?;
    let len = u32::try_from(payload.len())
        .map_err(|_| Error::Invalid(format!("a root of {} runs", root.runs.len())))?;
    let mut b = Vec::with_capacity(SLOT_HEADER + payload.len());
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&root.seq.to_le_bytes());
    b.extend_from_slice(&len.to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&b[8..20]), &payload);
    b.extend_from_slice(&crc.to_le_bytes());
    b.extend_from_slice(&payload);
    Ok(b)
}

fn decode(b: &[u8]) -> Slot {
    if b.len() < SLOT_HEADER || b[..8].iter().all(|&x| x == 0) {
        return Slot::Empty;
    }
    if &b[..8] != MAGIC {
        return Slot::Damaged("bad magic".into());
    }
    let seq = u64::from_le_bytes(b[8..16].try_into().unwrap());
    let len = u32::from_le_bytes(b[16..20].try_into().unwrap()) as usize;
    let crc = u32::from_le_bytes(b[20..24].try_into().unwrap());
    let Some(payload) = b.get(SLOT_HEADER..SLOT_HEADER + len) else {
        return Slot::Damaged("length past the slot".into());
    };
    if crc32c::crc32c_append(crc32c::crc32c(&b[8..20]), payload) != crc {
        return Slot::Damaged("checksum mismatch".into());
    }
    match serde_json::from_slice::<Root>(payload) {
        Ok(r) if r.seq == seq => Slot::Valid(Box::new(r)),
        Ok(_) => Slot::Damaged("sequence numbers disagree".into()),
        Err(e) => Slot::Damaged(format!("unreadable root: {e}")),
    }
}

impl Manifest {
    /// Writes the first root of a new store: complete and durable under a temporary name,
    /// then renamed into place.
    pub fn create(medium: &dyn Medium, mut root: Root) -> Result<Manifest> {
        root.seq = 1;
        let bytes = encode(&root)?;
        let slot = slot_for(bytes.len(), SLOT);
        // Slot seq % 2, as every commit: the first commit then goes to the other slot.
        let seg = write_new(medium, slot, &[(1, &bytes)], Replace::No)?;
        Ok(Manifest {
            seg,
            slot,
            committed: Arc::new(AtomicU64::new(root.seq)),
            root,
            other_slot_damaged: false,
        })
    }

    /// Whether `MANIFEST` exists but never had a root committed (both slots empty): what an
    /// earlier build that wrote it in place left after a crash during creation.
    pub fn never_committed(medium: &dyn Medium) -> Result<bool> {
        let seg = medium.open(FILE)?;
        let len = seg.len()?;
        let slot = slot_of_len(len);
        for i in 0..2 {
            let n = len.saturating_sub(i * slot).min(SLOT_HEADER as u64) as usize;
            let mut b = vec![0u8; n];
            if n > 0 {
                seg.read_at(i * slot, &mut b)?;
            }
            if b.iter().any(|&x| x != 0) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Reads both slots and takes the newest valid root.
    pub fn open(medium: &dyn Medium) -> Result<Manifest> {
        let seg = medium.open(FILE)?;
        let len = seg.len()?;
        let slot = slot_of_len(len);
        let mut slots = Vec::new();
        for i in 0..2 {
            let start = i * slot;
            let n = len.saturating_sub(start).min(slot) as usize;
            let mut b = vec![0u8; n];
            if n > 0 {
                seg.read_at(start, &mut b)?;
            }
            slots.push(decode(&b));
        }
        let valid: Vec<&Root> = slots
            .iter()
            .filter_map(|s| match s {
                Slot::Valid(r) => Some(&**r),
                _ => None,
            })
            .collect();
        let Some(root) = valid.iter().max_by_key(|r| r.seq).map(|r| (*r).clone()) else {
            let why: Vec<String> = slots
                .iter()
                .enumerate()
                .map(|(i, s)| match s {
                    Slot::Empty => format!("slot {i} empty"),
                    Slot::Damaged(w) => format!("slot {i}: {w}"),
                    Slot::Valid(_) => unreachable!(),
                })
                .collect();
            return Err(Error::corrupt(format!(
                "MANIFEST has no valid root ({})",
                why.join("; ")
            )));
        };
        if root.format_version != root.expected_format() {
            return Err(Error::corrupt(format!(
                "store format {} is not supported by this build (format {FORMAT_VERSION}, {FORMAT_VERSION_KEYS} with names, {FORMAT_VERSION_PACKED} compressed)",
                root.format_version
            )));
        }
        if root.id_width != ID_WIDTH {
            return Err(Error::Invalid(width_mismatch(
                "the store",
                root.id_width as u64,
            )));
        }
        if root.format_version == FORMAT_VERSION_STAMPED && root.store_id.is_none() {
            return Err(Error::corrupt(
                "MANIFEST: a root of format 4 without a store id",
            ));
        }
        let other_slot_damaged = slots.iter().any(|s| matches!(s, Slot::Damaged(_)));
        Ok(Manifest {
            seg,
            slot,
            committed: Arc::new(AtomicU64::new(root.seq)),
            root,
            other_slot_damaged,
        })
    }

    /// The current root.
    pub fn root(&self) -> &Root {
        &self.root
    }

    /// The sequence number of the root in force, kept current by every commit (see the
    /// field's documentation).
    pub fn committed_seq(&self) -> Arc<AtomicU64> {
        self.committed.clone()
    }

    /// Atomically replaces the root: write the other slot, persist. The commit point of
    /// every flush and compaction. A root too large for its slot is committed by writing a
    /// larger manifest and renaming it over this one ([`Manifest::grow`]).
    pub fn commit(&mut self, medium: &dyn Medium, mut root: Root) -> Result<()> {
        assert_eq!(
            root.store_id, self.root.store_id,
            "a commit never changes the store id"
        );
        if root.store_id.is_some() {
            // The version follows what the root holds: a log in use of this build's
            // format (6) goes back to 4 or 5 with the close that releases it.
            root.format_version = root.expected_format();
        }
        let mut ids: Vec<u64> = root.runs.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        assert!(
            ids.windows(2).all(|w| w[0] != w[1]),
            "a root names each run once"
        );
        assert!(
            ids.last().is_none_or(|&id| id < root.next_run_id),
            "a root's runs have ids below its next run id"
        );
        // What a commit makes durable only grows: a root that moved the log's start back
        // would replay records a run already holds, one that shrank the dictionary would
        // orphan ids the runs use, and a run id handed out twice would name two files.
        let old = &self.root;
        assert!(
            root.wal_start_lsn >= old.wal_start_lsn,
            "the log's start never moves back"
        );
        assert!(
            root.dict_entries >= old.dict_entries,
            "the dictionary never shrinks"
        );
        assert!(
            root.next_run_id >= old.next_run_id,
            "run ids are never handed out twice"
        );
        assert!(
            root.bytes_written >= old.bytes_written,
            "bytes written only grow"
        );
        root.seq = self.root.seq + 1;
        let slot = root.seq % 2;
        let bytes = encode(&root)?;
        if bytes.len() as u64 > self.slot {
            self.grow(medium, &bytes)?;
        } else {
            self.seg.write_at(slot * self.slot, &bytes)?;
            self.seg.persist()?;
        }
        self.committed.store(root.seq, Ordering::Release);
        self.root = root;
        Ok(())
    }

    /// Commits `root` as the first root that carries a store id: what a writer's open of a
    /// store from before stamps does (see FORMAT.md, "Stores from before stamps").
    pub fn commit_upgrade(&mut self, medium: &dyn Medium, root: Root) -> Result<()> {
        assert!(self.root.store_id.is_none() && root.store_id.is_some());
        self.root.store_id = root.store_id;
        self.commit(medium, root)
    }

    /// Commits the encoded root `bytes` (one sequence number past the current root) in a
    /// new manifest whose slots fit it, which also keeps the current root in its slot so
    /// that a damaged newest slot still falls back to it. The rename is the commit point.
    fn grow(&mut self, medium: &dyn Medium, bytes: &[u8]) -> Result<()> {
        let seq = self.root.seq + 1;
        let current = encode(&self.root)?;
        let slot = slot_for(bytes.len(), self.slot * 2);
        let seg = write_new(
            medium,
            slot,
            &[(seq % 2, bytes), ((seq - 1) % 2, &current)],
            Replace::Yes,
        )?;
        debug_assert_eq!(slot_of_len(seg.len()?), slot);
        self.seg = seg;
        self.slot = slot;
        Ok(())
    }
}

/// The smallest power-of-two slot size, at least `min`, that holds `len` bytes.
fn slot_for(len: usize, min: u64) -> u64 {
    (len as u64).next_power_of_two().max(min).max(SLOT)
}

/// The slot size of a manifest file of `len` bytes: half its length when that is a power
/// of two of at least 64 KiB (every manifest this build writes), else 64 KiB, so that a
/// file cut short still has its first slot read where it was written.
fn slot_of_len(len: u64) -> u64 {
    let half = len / 2;
    if len.is_multiple_of(2) && half >= SLOT && half.is_power_of_two() {
        half
    } else {
        SLOT
    }
}

/// Whether [`write_new`]'s rename may replace a `MANIFEST`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Replace {
    /// A growth: the new file replaces the one in force (the commit point).
    Yes,
    /// A creation: there is no `MANIFEST`, and finding one is an error.
    No,
}

/// Writes a manifest of two `slot`-byte slots holding `slots` (slot index, encoded root)
/// as `MANIFEST.new`, persists it, renames it to `MANIFEST` and syncs the directory: a
/// crash leaves either the old `MANIFEST` or the whole new one.
fn write_new(
    medium: &dyn Medium,
    slot: u64,
    slots: &[(u64, &[u8])],
    replace: Replace,
) -> Result<Box<dyn SegmentFile>> {
    let seg = medium.create(NEW_FILE)?;
    for &(i, bytes) in slots {
        assert!(bytes.len() as u64 <= slot, "a root larger than its slot");
        seg.write_at(i * slot, bytes)?;
    }
    seg.set_len(2 * slot)?;
    seg.persist()?;
    match replace {
        Replace::Yes => medium.rename_replacing(NEW_FILE, FILE)?,
        Replace::No => medium.rename(NEW_FILE, FILE)?,
    }
    medium.sync_dir()?;
    Ok(seg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::memory::MemoryMedium;

    #[test]
    fn a_store_of_the_other_id_width_is_refused_with_the_build_it_needs() {
        let m = MemoryMedium::new();
        let mut root = Root::new(false);
        root.id_width = if ID_WIDTH == 32 { 64 } else { 32 };
        Manifest::create(&m, root).unwrap();
        let e = Manifest::open(&m)
            .err()
            .expect("opened a store of the other width");
        let msg = e.to_string();
        assert!(matches!(e, Error::Invalid(_)), "{msg}");
        assert!(msg.contains("it needs a build with"), "{msg}");
    }

    #[test]
    fn newest_valid_slot_wins() {
        let m = MemoryMedium::new();
        let mut man = Manifest::create(&m, Root::new(false)).unwrap();
        let mut r = man.root().clone();
        r.wal_start_lsn = 5;
        man.commit(&m, r.clone()).unwrap();
        r.wal_start_lsn = 9;
        man.commit(&m, r).unwrap();
        let o = Manifest::open(&m).unwrap();
        assert_eq!(o.root().wal_start_lsn, 9);
        assert_eq!(o.root().seq, 3);
        // Tear the newest slot (seq 3 lives in slot 1): the previous root is in force.
        m.open(FILE).unwrap().write_at(SLOT + 30, b"xx").unwrap();
        let o = Manifest::open(&m).unwrap();
        assert_eq!(o.root().wal_start_lsn, 5);
        assert!(o.other_slot_damaged);
        // Both damaged: a clear error.
        m.open(FILE).unwrap().write_at(30, b"xx").unwrap();
        assert!(matches!(Manifest::open(&m), Err(Error::Corrupt(_))));
    }

    /// The root of commit `seq` in the growth tests: `seq * 40` runs, so that it outgrows
    /// 64 KiB slots after a few dozen commits.
    fn root_of(seq: u64) -> Root {
        let mut r = Root::new(false);
        r.runs = (0..seq * 40)
            .map(|i| RunRef {
                id: i + 1,
                level: i % 5,
                min_lsn: i * 1_000_000,
                max_lsn: (i + 1) * 1_000_000,
                file_len: 123_456_789 + i,
            })
            .collect();
        r.next_run_id = seq * 40 + 1;
        r.wal_start_lsn = seq;
        r
    }

    #[test]
    fn a_segment_of_format_3_puts_the_store_at_7_and_its_going_takes_it_back() {
        let mut r = Root::new(false);
        r.store_id = Some(7);
        let seg = |format| HistRef {
            min_lsn: 0,
            max_lsn: 10,
            file_len: 200,
            commits: 2,
            last_time: 5,
            format,
        };
        r.history_segments = vec![seg(2)];
        assert_eq!(r.expected_format(), FORMAT_VERSION_HISTORY);
        r.log_in_use = true;
        assert_eq!(r.expected_format(), FORMAT_VERSION_PAGED_LOG);
        r.history_segments.push(seg(3));
        assert_eq!(r.expected_format(), FORMAT_VERSION_SEGMENTS_3);
        // Format 2's field is left out, so builds before format 3 read the root as before.
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json.matches("\"format\":3").count(), 1, "{json}");
        let back: Root = serde_json::from_str(&json).unwrap();
        assert_eq!(back.history_segments, r.history_segments);
        r.history_segments.remove(1);
        r.log_in_use = false;
        assert_eq!(r.expected_format(), FORMAT_VERSION_HISTORY);
    }

    #[test]
    fn a_root_larger_than_its_slot_is_committed_in_a_larger_manifest() {
        let m = MemoryMedium::new();
        let mut man = Manifest::create(&m, Root::new(false)).unwrap();
        assert_eq!(m.open(FILE).unwrap().len().unwrap(), 2 * SLOT);
        for seq in 2..=120 {
            man.commit(&m, root_of(seq)).unwrap();
            let o = Manifest::open(&m).unwrap();
            assert_eq!(o.root().seq, seq);
            assert_eq!(o.root().runs, root_of(seq).runs);
            assert!(!o.other_slot_damaged);
        }
        let len = m.open(FILE).unwrap().len().unwrap();
        assert!(len > 2 * SLOT && (len / 2).is_power_of_two(), "{len}");
        assert!(encode(&root_of(120)).unwrap().len() as u64 <= len / 2);
        // The grown manifest keeps the previous root: a damaged newest slot falls back.
        let newest = 120 % 2;
        m.open(FILE)
            .unwrap()
            .write_at(newest * (len / 2) + 30, b"xx")
            .unwrap();
        let o = Manifest::open(&m).unwrap();
        assert_eq!(o.root().seq, 119);
        assert_eq!(o.root().runs, root_of(119).runs);
        assert!(o.other_slot_damaged);
    }

    #[test]
    fn a_power_cut_while_the_manifest_grows_leaves_a_committed_root() {
        use crate::medium::sim::{SimMedium, Tear};
        let sim = SimMedium::new(Tear::Sector);
        sim.create_root().unwrap();
        let mut man = Manifest::create(&sim, Root::new(false)).unwrap();
        sim.mark(1);
        let mut grew = 0;
        for seq in 2..=80 {
            let before = man.slot;
            man.commit(&sim, root_of(seq)).unwrap();
            grew += usize::from(man.slot > before);
            sim.mark(seq);
        }
        assert!(grew >= 2, "the test must cross growths, it crossed {grew}");
        let points: Vec<usize> = (0..=sim.log_len()).collect();
        for seed in 0..4 {
            sim.images(&points, seed, |pos, img| {
                let committed = sim.mark_before(pos);
                if committed == 0 {
                    return;
                }
                let o = Manifest::open(&img)
                    .unwrap_or_else(|e| panic!("seed {seed} position {pos}: {e}"));
                let seq = o.root().seq;
                // Commit `committed + 1` may have been under way: either root may stand.
                assert!(
                    seq == committed || seq == committed + 1,
                    "seed {seed} position {pos}: root {seq} after commit {committed}"
                );
                let want = if seq == 1 {
                    Vec::new()
                } else {
                    root_of(seq).runs
                };
                assert_eq!(o.root().runs, want, "seed {seed} position {pos}");
            });
        }
    }
}
