//! Stamps the git commit into the crate as `TIDINGS_GIT_COMMIT`, for `--version`
//! (`version::LONG`). Outside a git checkout, or without `git`, the commit is "unknown": a
//! tarball or a vendored build must never fail here.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let commit = git(&["rev-parse", "--short=9", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TIDINGS_GIT_COMMIT={commit}");
    // Rebuild when HEAD moves: HEAD itself (a checkout, a detached HEAD), the branch it
    // points to (a commit) and packed-refs (where the branch lives after `git gc`). In a
    // worktree HEAD sits in the worktree's git dir and the refs in the common dir.
    if let (Some(git_dir), Some(common_dir)) = (
        git(&["rev-parse", "--git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
    ) {
        let (git_dir, common_dir) = (absolute(&git_dir), absolute(&common_dir));
        let head = git_dir.join("HEAD");
        let mut watched = vec![head.clone(), common_dir.join("packed-refs")];
        if let Some(branch) = std::fs::read_to_string(&head)
            .ok()
            .and_then(|text| text.strip_prefix("ref: ").map(|r| r.trim().to_owned()))
        {
            watched.push(common_dir.join(branch));
        }
        // A path that does not exist would make cargo rerun this script on every build.
        for path in watched.iter().filter(|path| path.exists()) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// `git <args>` in this crate's directory, trimmed; `None` when git is missing or fails.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(manifest_dir())
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (output.status.success() && !text.is_empty()).then(|| text.to_owned())
}

/// git prints paths relative to the directory it ran in.
fn absolute(path: &str) -> PathBuf {
    manifest_dir().join(path)
}

/// This crate's directory, read when the script runs: `env!` would fix the directory the
/// script was compiled in, and a build script compiled in one checkout and run for another
/// (a copied target dir, a second worktree) would then stamp the first one's commit.
fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from)
}
