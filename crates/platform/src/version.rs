//! The one version string every Tidings binary prints: the workspace version (the app, the
//! `tidings` CLI and the `tidings-mcp` shim share it) and the git commit it was built from.

/// The workspace version, e.g. `0.1.0` (every crate inherits `workspace.package.version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The short git commit this build came from, or `unknown` outside a git checkout (build.rs).
pub const GIT_COMMIT: &str = env!("TIDINGS_GIT_COMMIT");

/// What `--version` prints after the program name: `0.1.0 (1a2b3c4d5)`.
pub const LONG: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("TIDINGS_GIT_COMMIT"),
    ")"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_is_version_then_commit_in_parentheses() {
        assert_eq!(LONG, format!("{VERSION} ({GIT_COMMIT})"));
        assert!(!GIT_COMMIT.is_empty());
    }
}
