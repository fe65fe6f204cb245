//! The lines a standing kernel prints (`evograph watch`, `ingest --maintain --changes`):
//! the full result at its first commit as `run` prints it, then each commit's changes.

use evograph::algo::graphalytics as ga;
use evograph::snapshot::Patched;
use evograph::standing::{Change, Maintainer, Step, Value};
use evograph::{GraphView, Snapshot};
use std::io::Write;

/// The separator of a line's fields: a tab where names may hold spaces.
fn separator(s: &Snapshot) -> char {
    if s.names().is_some() {
        '\t'
    } else {
        ' '
    }
}

/// `# lsn LSN` and the full result, as `run` prints it (from a snapshot: the first step's,
/// or one a patch is sealed into).
pub fn write_full(
    w: &mut impl Write,
    dest: &std::path::Path,
    m: &Maintainer,
    lsn: u64,
) -> evograph::Result<()> {
    let s = m.snapshot()?.expect("stepped");
    let io = |e: std::io::Error| evograph::Error::io("write", dest, e);
    writeln!(w, "# lsn {lsn}").map_err(io)?;
    crate::run::print(w, &s, m.kernel(), &m.kernel_values()).map_err(io)?;
    w.flush().map_err(io)
}

/// How many commits a step reflects, when it is more than one: its `# lsn` line says so,
/// so that a reader of the output tells a skip from a quiet commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commits {
    /// Exactly this many.
    Exactly(usize),
    /// At least this many (the store no longer lists the older ones).
    AtLeast(usize),
}

/// `# lsn LSN` (with `commits N` when the step reflects more than one) and a line per
/// change, in key order.
pub fn write_step(
    w: &mut impl Write,
    s: &Patched,
    step: &Step,
    commits: Commits,
) -> std::io::Result<()> {
    match commits {
        Commits::Exactly(n) if n <= 1 => writeln!(w, "# lsn {}", step.lsn)?,
        Commits::Exactly(n) => writeln!(w, "# lsn {} commits {n}", step.lsn)?,
        Commits::AtLeast(n) => writeln!(w, "# lsn {} commits {n}+", step.lsn)?,
    }
    let mut changes: Vec<&Change> = step.changes.iter().collect();
    changes.sort_by(|a, b| s.key(a.vertex).cmp(&s.key(b.vertex)));
    let sep = separator(s.base());
    let mut line = Vec::new();
    for c in changes {
        line.clear();
        line.extend_from_slice(s.key(c.vertex).to_string().as_bytes());
        for v in [c.old, c.new] {
            line.push(sep as u8);
            put_value(&mut line, s, v);
        }
        line.push(b'\n');
        w.write_all(&line)?;
    }
    w.flush()
}

/// A value as `run` prints it; `-` for none.
fn put_value(b: &mut Vec<u8>, s: &Patched, v: Option<Value>) {
    match v {
        None => b.push(b'-'),
        Some(Value::Int(x)) => b.extend_from_slice(itoa::Buffer::new().format(x).as_bytes()),
        Some(Value::Float(x)) => ga::write_f64(b, x),
        Some(Value::Vertex(l)) => b.extend_from_slice(s.key(l).to_string().as_bytes()),
    }
}

/// `ingest --maintain`: a kernel kept current inside the writer, its lines written to a
/// file.
pub struct Kept {
    kernel: evograph::algo::kernel::Kernel,
    params: evograph::algo::kernel::Params,
    /// The source not found yet: the kernel starts once a batch makes it exist.
    source: Option<String>,
    m: Option<Maintainer>,
    out: std::io::BufWriter<std::fs::File>,
    path: std::path::PathBuf,
}

impl Kept {
    /// Opens the changes file (checked before the store was opened); `None` without
    /// `--maintain`.
    pub fn new(
        kernel: Option<evograph::algo::kernel::Kernel>,
        changes: Option<(crate::output::Target, crate::output::Existing)>,
        source: Option<String>,
        tolerance: f64,
    ) -> evograph::Result<Option<Kept>> {
        let (Some(kernel), Some((target, existing))) = (kernel, changes) else {
            return Ok(None);
        };
        if !evograph::standing::KERNELS.contains(&kernel) {
            // Maintainer::new says which kernels can be kept current.
            evograph::standing::Maintainer::new(kernel, &Default::default())?;
        }
        if kernel.needs_source() && source.is_none() {
            return Err(evograph::Error::Invalid(format!(
                "--maintain {kernel} needs --source"
            )));
        }
        let mut params = evograph::algo::kernel::Params::default();
        params.tolerance = tolerance;
        let file = crate::output::open_changes(&target, existing)?;
        let path = target.path().to_path_buf();
        Ok(Some(Kept {
            kernel,
            params,
            source: source.filter(|_| kernel.needs_source()),
            m: None,
            out: std::io::BufWriter::new(file),
            path,
        }))
    }

    /// Brings the kernel to the batch just submitted and writes its lines.
    pub fn step(&mut self, g: &evograph::Graph) -> evograph::Result<()> {
        if self.m.is_none() && !self.start(g)? {
            return Ok(());
        }
        let m = self.m.as_mut().expect("started");
        let Some(step) = m.step(g)? else {
            return Ok(());
        };
        match step.initial {
            true => write_full(&mut self.out, &self.path, m, step.lsn),
            // Each batch is reflected before the next is submitted: one commit a step.
            false => write_step(
                &mut self.out,
                m.graph().expect("stepped"),
                &step,
                Commits::Exactly(1),
            )
            .map_err(|e| evograph::Error::io("write", &self.path, e)),
        }
    }

    /// Makes the maintainer once its source exists; whether it did.
    fn start(&mut self, g: &evograph::Graph) -> evograph::Result<bool> {
        if let Some(key) = &self.source {
            match g.dense_id_of(key)? {
                Some(v) if g.snapshot()?.vertex_exists(v) => self.params.source = Some(v),
                _ => return Ok(false),
            }
        }
        self.m = Some(Maintainer::new(self.kernel, &self.params)?);
        Ok(true)
    }
}
