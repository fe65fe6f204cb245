//! Records the source revision in the binary, so `evograph bench` results name the code
//! that produced them.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let rev = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=EVOGRAPH_GIT_REVISION={rev}{suffix}");
    // Re-run when the checked-out commit or the working tree changes (paths that do not
    // exist, outside a git checkout, would make cargo re-run this on every build).
    for p in [
        "../.git/HEAD",
        "../.git/refs/heads",
        "../.git/index",
        "src",
        "../src",
    ] {
        if Path::new(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
