//! `check`: every checksum and invariant, reported rather than trusted.

use super::Inner;
use crate::batch::id_of;
use crate::run::{file::verify_blocks, Dir, Run};
use crate::snapshot::GraphView;
use crate::types::VertexId;
use crate::Result;
use rayon::prelude::*;
use std::sync::Arc;

/// The outcome of [`crate::Graph::check`].
#[derive(Debug, Default)]
pub struct CheckReport {
    /// Problems found; empty when the store is sound.
    pub problems: Vec<String>,
    /// Notes that are not errors (e.g. a torn manifest slot from an earlier crash).
    pub notes: Vec<String>,
    /// Runs checked.
    pub runs: usize,
    /// Edges checked.
    pub edges: u64,
    /// Vertices checked.
    pub vertices: u64,
    /// History segments checked, and the commits they hold.
    pub history: (usize, u64),
}

impl CheckReport {
    /// Whether no problem was found.
    #[must_use]
    pub fn is_sound(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Whether a run file may vanish under this handle: a read-only handle shares the store
/// with a writer that deletes runs once it has merged them (the reader opened, and
/// verified, the run before that).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Retire {
    Allowed,
    Forbidden,
}

/// Problems with one run; `gone` is set when its file was retired under a reader.
fn check_run(r: &Run, space: u64, retire: Retire, gone: &mut bool) -> Vec<String> {
    let mut p = Vec::new();
    let name = format!("run {}", r.header.id);
    if let Some(f) = &r.file {
        // Re-read the file bytes: DRAM copies are not what is on the medium.
        match f.medium_bytes() {
            Ok(Some(b)) => {
                if let Err(e) = verify_blocks(&b, &r.header) {
                    p.push(format!("{name}: {e}"));
                }
            }
            Ok(None) => {}
            Err(crate::Error::Io { source, .. })
                if retire == Retire::Allowed && source.kind() == std::io::ErrorKind::NotFound =>
            {
                *gone = true;
            }
            Err(e) => p.push(format!("{name}: {e}")),
        }
    }
    if r.header.vertex_space > space {
        p.push(format!(
            "{name}: covers {} ids, dictionary has {space}",
            r.header.vertex_space
        ));
    }
    for (dname, d) in [("out", Some(&r.out)), ("in", r.inn.as_ref())] {
        let Some(d) = d else { continue };
        if !d.dense && d.vids.get().windows(2).any(|w| w[0] >= w[1]) {
            p.push(format!(
                "{name} {dname}: vertex index not strictly ascending"
            ));
        }
        let bad = (0..d.n_index())
            .into_par_iter()
            .map_init(Vec::new, |buf, i| {
                let a = d.adds_into(i, buf);
                let t = d.tombs_at(i);
                let bad = a.windows(2).any(|w| w[0] >= w[1])
                    || t.windows(2).any(|w| w[0] >= w[1])
                    || a.iter().chain(t).any(|&x| x as u64 >= space)
                    || d.vid_at(i) as u64 >= space
                    || !r.header.span().contains(&(d.vid_at(i) as u64));
                bad.then_some(i)
            })
            .find_any(|x| x.is_some())
            .flatten();
        if let Some(i) = bad {
            p.push(format!(
                "{name} {dname}: neighbors of vertex {} unsorted, duplicated or out of range",
                d.vid_at(i)
            ));
        }
    }
    let span = r.header.span();
    if let Some(&x) = (r.vertex_ops.get().iter()).find(|&&x| !span.contains(&(id_of(x) as u64))) {
        p.push(format!(
            "{name}: vertex {} lies outside its partition",
            id_of(x)
        ));
    }
    p
}

/// Problems with the names of a string-keyed store: `KEYS` re-read from the medium must
/// hold the names in memory, and a name for every external id.
fn check_keys(
    k: &crate::keys::Keys,
    medium: &Arc<dyn crate::medium::Medium>,
    max_external: Option<u64>,
    store_id: Option<u64>,
) -> Vec<String> {
    let mut p = Vec::new();
    let names = k.names();
    match crate::keys::Keys::open(&**medium, false, None, store_id) {
        Ok(on_medium) => {
            let read = on_medium.names();
            if read.len() < names.len() || !names.iter().zip(read.iter()).all(|(a, b)| a == b) {
                p.push(format!(
                    "KEYS holds {} readable names, which do not begin with the {} in memory",
                    read.len(),
                    names.len()
                ));
            }
        }
        Err(e) => p.push(format!("KEYS: {e}")),
    }
    if let Err(e) = k.check_repeats() {
        p.push(e.to_string());
    }
    if let Err(e) = k.check_covers(max_external) {
        p.push(e.to_string());
    }
    p
}

impl Inner {
    /// A note for each file in the store that the root does not name, saying what it is.
    fn unnamed_files(&self, root: &crate::manifest::Root) -> Result<Vec<String>> {
        use crate::run::Run;
        use crate::wal::segment;
        let mut notes = Vec::new();
        for name in self.medium.list()? {
            let note = if let Some(id) = Run::parse_file_name(&name) {
                if root.runs.iter().any(|r| r.id == id) {
                    continue;
                }
                let what = match super::files::read_run_header(&*self.medium, &name) {
                    Ok(h) => match h.stamp {
                        Some(st) if st.seq > root.seq => format!(
                            "written for commit {}, which never happened (a flush or merge cut short)",
                            st.seq
                        ),
                        Some(_) | None => "retired by a merge".to_string(),
                    },
                    Err(e) => format!("unreadable ({e})"),
                };
                format!("{what}; the next writer's open removes it")
            } else if let Some(id) = crate::history::versions_file::parse_name(&name) {
                if root.runs.iter().any(|r| r.id == id) {
                    continue;
                }
                "the versions of a run no longer named; the next writer's open removes them".into()
            } else if Run::parse_tmp_name(&name).is_some() {
                "a run write cut short; the next writer's open removes it".into()
            } else if super::is_store_file(&name) || segment::parse_name(&name).is_some() {
                continue;
            } else {
                "not an evograph file".into()
            };
            notes.push(format!(
                "{} is not named by the MANIFEST: {note}",
                crate::error::printable(&name)
            ));
        }
        Ok(notes)
    }

    pub(super) fn check(&self) -> Result<CheckReport> {
        let mut rep = CheckReport::default();
        let root = self.check_files(&mut rep)?;
        if let Some(k) = &self.keys {
            // Key locks are never taken under a store lock: read what the dictionary
            // needs first.
            let max = self.dict.read().unwrap().externals().iter().copied().max();
            rep.problems
                .extend(check_keys(k, &self.medium, max, root.store_id));
        }
        rep.history = self.check_history(&root, &mut rep.problems);
        let snap = self.snapshot()?;
        let runs: Vec<Arc<Run>> = snap.runs().to_vec();
        rep.runs = runs.len();
        self.check_runs(&runs, snap.num_vertices() as u64, &mut rep);
        if rep.problems.is_empty() {
            self.check_versions(&runs, &mut rep.problems);
        }
        if !rep.problems.is_empty() {
            return Ok(rep);
        }
        let problems = self
            .pool
            .install(|| self.resolution_problems(&runs, snap.num_vertices()));
        rep.problems.extend(problems);
        if runs.first().is_some_and(|r| r.out.n_tombs() > 0) {
            rep.problems.push("the oldest run holds tombstones".into());
        }
        self.check_degrees(&snap, &mut rep);
        Ok(rep)
    }

    /// The manifest, the dictionary file against the dictionary in memory, the files the
    /// root does not name and the last cut log tail; returns the root in force.
    fn check_files(&self, rep: &mut CheckReport) -> Result<crate::manifest::Root> {
        // Under `maint`, no flush commits: the dictionary's committed prefix and the root
        // read here belong together.
        let _m = self.maint.lock().unwrap();
        let (root, damaged) = {
            let man = self.manifest.lock().unwrap();
            (man.root().clone(), man.other_slot_damaged)
        };
        if damaged {
            rep.notes.push(
                "one MANIFEST slot is damaged (a commit torn by a crash, or corruption); the other slot is in force"
                    .into(),
            );
        }
        let (entries, bytes) = self.dict.read().unwrap().committed();
        let expected = super::files::Expected::new(&root);
        let stamp_ok = |at, st| expected.dict_chunk(at, st);
        match crate::dict::Dict::load(&*self.medium, entries, bytes, &stamp_ok) {
            Ok(d) if d.externals() != &self.dict.read().unwrap().externals()[..entries] => rep
                .problems
                .push("dictionary file disagrees with the dictionary in memory".into()),
            Ok(_) => {}
            Err(e) => rep.problems.push(format!("dictionary: {e}")),
        }
        rep.notes.extend(self.unnamed_files(&root)?);
        if let Some(c) = &root.last_cut {
            rep.notes.push(format!(
                "a writer's recovery (commit {}) cut the log: {}",
                c.seq,
                super::CutTail::from_root(c).describe()
            ));
        }
        self.check_log_end(rep);
        Ok(root)
    }

    /// The newest WAL segment's end, as this read-only handle found it: damage is a
    /// problem, a tail a crash can leave a note (the next writer cuts it), and beside a
    /// live writer, how far the log was read.
    fn check_log_end(&self, rep: &mut CheckReport) {
        let end = &self.log_end;
        if let Some(t) = self.unreadable_tail() {
            let what = t.describe();
            match &t.damage {
                Some(why) => rep.problems.push(format!(
                    "WAL segment {} is damaged, as no crash leaves it: {why}; {what}",
                    t.segment
                )),
                None => rep.notes.push(format!(
                    "WAL segment {} ends in a torn tail, as a crash leaves it: {what}; the next writer cuts it",
                    t.segment
                )),
            }
        }
        if self.opts.read_only && end.writer_present {
            rep.notes.push(format!(
                "a writer holds the store: the log was read up to LSN {}; its write in progress, past that, is not judged",
                end.lsn
            ));
        }
    }

    /// Each run's checksums and structure, and the runs' LSN order.
    fn check_runs(&self, runs: &[Arc<Run>], space: u64, rep: &mut CheckReport) {
        let retire = if self.opts.read_only {
            Retire::Allowed
        } else {
            Retire::Forbidden
        };
        let mut retired = 0;
        for r in runs {
            let mut gone = false;
            rep.problems.extend(check_run(r, space, retire, &mut gone));
            retired += usize::from(gone);
        }
        if retired > 0 {
            rep.notes.push(format!(
                "{retired} run(s) were merged away by the writer after this check opened the store; their checksums were verified when it opened"
            ));
        }
        let headers: Vec<&crate::run::RunHeader> = runs.iter().map(|r| &r.header).collect();
        rep.problems
            .extend(super::policy::lsn_order_problem(&headers));
    }

    /// Resolution: every tombstone cancels an edge live before its run, every add is new.
    fn resolution_problems(&self, runs: &[Arc<Run>], space: usize) -> Vec<String> {
        let dirs: &[Dir] = if self.undirected {
            &[Dir::Out]
        } else {
            &[Dir::Out, Dir::In]
        };
        dirs.iter()
            .flat_map(|&d| {
                (1..runs.len())
                    .into_par_iter()
                    .flat_map_iter(|j| {
                        let older = crate::snapshot::Snapshot::new(
                            runs[..j].to_vec().into(),
                            Arc::default(),
                            space,
                            self.undirected,
                            Default::default(),
                        );
                        unresolved(&older, &runs[j], d)
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Degree sums and out/in symmetry on the resolved graph; no deleted vertex has edges.
    fn check_degrees(&self, snap: &crate::snapshot::Snapshot, rep: &mut CheckReport) {
        let super::mirror::Mirror {
            out_sum,
            in_sum,
            unmirrored: asym,
        } = self.pool.install(|| super::mirror::mirror(snap));
        if out_sum != in_sum {
            rep.problems.push(format!(
                "out-degrees sum to {out_sum}, in-degrees to {in_sum}"
            ));
        }
        if asym > 0 {
            rep.problems.push(format!(
                "{asym} edges lack their mirror in the other direction"
            ));
        }
        if out_sum != snap.num_edges() {
            rep.problems.push(format!(
                "degree sum {out_sum} differs from the edge count {}",
                snap.num_edges()
            ));
        }
        let dead_with_edges = (0..snap.num_vertices() as VertexId)
            .find(|&v| !snap.vertex_exists(v) && (snap.out_degree(v) > 0 || snap.in_degree(v) > 0));
        if let Some(v) = dead_with_edges {
            rep.problems.push(format!(
                "deleted vertex {} still has edges",
                snap.external_id(v)
            ));
        }
        rep.edges = out_sum;
        rep.vertices = snap.live_vertices() as u64;
    }
}

/// The first place where `run` is not resolved against `older` (the runs before it) in
/// direction `d`: an add of an edge live before it (not a weight update), or a tombstone
/// of one that is not.
fn unresolved(older: &crate::snapshot::Snapshot, run: &Run, d: Dir) -> Option<String> {
    let dd = run.dir(d);
    let mut buf = Vec::new();
    for i in 0..dd.n_index() {
        let v = dd.vid_at(i);
        // In v's own direction: only v's chain of runs orders its lists (another
        // partition's runs may sit anywhere).
        let live = |x: VertexId| older.has_dir_edge(d, v, x);
        // An add of a live edge is a weight update only beside its tombstone.
        let t = dd.tombs_at(i);
        let adds = dd.adds_into(i, &mut buf);
        if let Some(&x) = adds
            .iter()
            .find(|&&x| live(x) && t.binary_search(&x).is_err())
        {
            return Some(format!(
                "run {} re-adds live edge at {v}/{x}",
                run.header.id
            ));
        }
        if let Some(&x) = t.iter().find(|&&x| !live(x)) {
            return Some(format!(
                "run {} tombstones missing edge at {v}/{x}",
                run.header.id
            ));
        }
    }
    None
}
