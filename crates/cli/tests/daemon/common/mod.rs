//! Shared helpers for the daemon tests: `tidings serve` in a temp dir, the one way every test
//! runs it ([`daemon`]), an MCP client that talks to it only through the real `tidings-mcp`
//! shim with frame waits capped by a deadline ([`client`]), and an outside writer that appends
//! rows to the demo stores' `-wal` ([`writer`]). This file holds the binaries and the bounds
//! they share.

mod client;
mod daemon;
mod raw;
mod writer;

pub use client::{Client, is_event, is_note, is_response, on_stream};
pub use daemon::{Daemon, signal};
pub use raw::Raw;
pub use writer::Writer;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

/// The longest any single wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// The heartbeat period the test daemons run with.
pub const HEARTBEAT_MS: u64 = 300;

/// Exit codes the binaries promise (mirrors `src/exit_code.rs` and the shim's).
pub const NOT_RUNNING: i32 = 69;
pub const ALREADY_RUNNING: i32 = 75;
pub const REFUSED: i32 = 65;
pub const CONFIG: i32 = 78;

/// The `tidings` binary cargo built for this test run.
pub fn tidings_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tidings"))
}

/// The `tidings-mcp` shim. A binary-only crate cannot be a dev-dependency (cargo ignores it:
/// "missing a lib target"), so it is built by [`built_for_tests`].
pub fn shim_bin() -> PathBuf {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| built_for_tests("tidings-shim", "tidings-mcp"))
        .clone()
}

/// The `tidings-fixtures` tool, for a writer that must be a process of its own (the held
/// writer with the slow-flush shim preloaded). Built by [`built_for_tests`]: cargo builds only
/// this package's binaries for its tests.
pub fn fixtures_bin() -> PathBuf {
    static FIXTURES: OnceLock<PathBuf> = OnceLock::new();
    FIXTURES
        .get_or_init(|| built_for_tests("tidings-fixtures", "tidings-fixtures"))
        .clone()
}

/// Builds `bin` of `package` once per test run, into a subdirectory of this run's target dir:
/// a separate dir means no wait on the lock `cargo test` holds.
fn built_for_tests(package: &str, bin: &str) -> PathBuf {
    let profile_dir = tidings_bin().parent().expect("bin dir").to_path_buf();
    let target = profile_dir.join("shim-for-tests");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--quiet", "-p", package, "--bin", bin])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap_or_else(|e| panic!("run cargo build for {bin}: {e}"));
    assert!(status.success(), "building {bin} failed");
    target.join("debug").join(bin)
}

/// The 2026-07-28 `_meta` every request carries.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tidings-tests", "version": "0"}
    })
}

/// A copy of the shim in a world-readable directory, for running it as another user.
pub fn shim_for_everyone(tmp: &Path) -> PathBuf {
    let dir = tmp.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = dir.join("tidings-mcp");
    std::fs::copy(shim_bin(), &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    copy
}
