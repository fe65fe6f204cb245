//! How a run is written and when it is checked: the run layer's two options, which a store
//! records at creation (`Compression`) or takes from its caller (`Verify`).

/// How runs store neighbor lists: chosen when a store is created and recorded in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    /// Plain sorted arrays: 4 bytes per neighbor (8 with 64-bit ids).
    #[default]
    None,
    /// Delta-encoded, bit-packed lists (FORMAT.md, "Packed directions"): about 1.5-1.9
    /// bytes per neighbor on Kronecker graphs, decoded inside kernels' scans.
    Packed,
}

impl Compression {
    /// The name the CLI and the manifest use.
    pub fn as_str(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Packed => "packed",
        }
    }
}

impl std::str::FromStr for Compression {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Compression::None),
            "packed" => Ok(Compression::Packed),
            _ => Err(format!("unknown compression '{s}': want none or packed")),
        }
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When a run file's block checksums (and offsets) are checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verify {
    /// All of them when the store is opened: the open reads the whole store.
    AtOpen,
    /// When the run is first read: by the first snapshot, by the first seal that resolves
    /// against it, by the merge that consumes it. A clean open reads only headers. A damaged
    /// run is still never read into a result: the first use fails with `Corrupt` instead.
    #[default]
    OnFirstUse,
    /// As [`Verify::OnFirstUse`] (what a check finds is reported on first use, never at
    /// open), but the checks start as soon as the runs' headers are read, on the store's
    /// threads, beside the rest of the open (the dictionary's load, the log's replay): a
    /// first snapshot then waits only for what is left. Read-only opens use it unless told
    /// otherwise; it reads the whole store, so a writer (whose ingest would share the
    /// cores with it) and `check` (which reads every byte itself) do not.
    Ahead,
}
