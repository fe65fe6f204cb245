//! Helpers for the tests that drive the `evograph` binary: the library tests' helpers
//! (`tests/common` at the workspace root) plus running the binary.
#![allow(dead_code)]

#[path = "../../../tests/common/mod.rs"]
mod shared;
#[allow(unused_imports)]
pub use shared::*;
pub mod kill;

/// Spawning a child copies every open file descriptor of this process into it until it
/// execs, the store's `LOCK` (an `flock`, held per open file description) included. A store
/// closed while another test thread is mid-spawn therefore stays locked for a moment, and an
/// immediate reopen fails with `Locked`. Spawns hold this lock shared while the child
/// starts; [`quiet_forks`] holds it exclusively around opening and closing a store.
static FORKS: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Runs `f` (open or close a store) while no child process is being started.
pub fn quiet_forks<T>(f: impl FnOnce() -> T) -> T {
    let _g = FORKS.write().unwrap_or_else(|e| e.into_inner());
    f()
}

/// Runs the `evograph` binary with `args` (no standard input) and returns its output.
pub fn evograph<I, S>(args: I) -> std::process::Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    use std::process::Stdio;
    let child = {
        let _g = FORKS.read().unwrap_or_else(|e| e.into_inner());
        // `spawn` returns once the child has exec'd, i.e. dropped the copied descriptors.
        std::process::Command::new(env!("CARGO_BIN_EXE_evograph"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run the evograph binary")
    };
    child
        .wait_with_output()
        .expect("wait for the evograph binary")
}

/// Asserts that a CLI run ended by itself (no signal) with exit code 0, 1 or 2 — never 101,
/// Rust's panic code — and printed no panic message.
pub fn assert_no_panic(out: &std::process::Output, ctx: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(
        matches!(code, Some(0..=2)),
        "{ctx}: exit status {:?}\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
    assert!(
        !stdout.contains("panicked") && !stderr.contains("panicked"),
        "{ctx}: panic\nstdout: {stdout}\nstderr: {stderr}"
    );
}
