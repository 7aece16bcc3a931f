//! `tidings --version` (and a subcommand's, through `propagate_version`) prints the
//! workspace version and the git commit the binary was built from.

use std::process::Command;

use crate::common::tidings_bin;

/// The commit asked of git independently of build.rs; "unknown" outside a checkout.
fn git_short_head() -> String {
    Command::new("git")
        .args(["rev-parse", "--short=9", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map_or_else(
            || "unknown".to_owned(),
            |output| String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        )
}

#[test]
fn version_names_the_version_and_the_commit() {
    let stamp = format!("{} ({})\n", env!("CARGO_PKG_VERSION"), git_short_head());
    // clap names a subcommand's version line after the subcommand.
    for (args, name) in [
        (&["--version"][..], "tidings"),
        (&["tail", "--version"][..], "tidings-tail"),
    ] {
        let output = Command::new(tidings_bin()).args(args).output().unwrap();
        assert!(output.status.success(), "{args:?}");
        assert_eq!(
            String::from_utf8(output.stdout).unwrap(),
            format!("{name} {stamp}"),
            "{args:?}"
        );
    }
}
