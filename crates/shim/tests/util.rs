//! Shared test helpers: spawning the shim, binding a test socket, and capped waits.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tempfile::TempDir;
use tokio::net::UnixListener;
use tokio::process::Command;

/// The longest any single wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(15);

/// Exit codes the shim promises (mirrors `src/exit_code.rs`).
pub const NOT_RUNNING: i32 = 69;
pub const USAGE: i32 = 2;

/// Awaits `fut`, failing the test with `what` if it takes longer than [`WAIT`].
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, fut)
        .await
        .unwrap_or_else(|_| panic!("timed out after {WAIT:?} waiting for {what}"))
}

/// A temp dir holding a socket path, with a listener bound to it.
pub struct TestSocket {
    // Held so the directory outlives the test.
    _dir: TempDir,
    pub path: PathBuf,
    pub listener: UnixListener,
}

/// Binds a fresh listener at `<tempdir>/tidings.sock`.
pub fn bind() -> TestSocket {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tidings.sock");
    let listener = UnixListener::bind(&path).unwrap();
    TestSocket {
        _dir: dir,
        path,
        listener,
    }
}

/// The shim with piped stdio, killed if the test drops it, and with no `TIDINGS_SOCKET` or
/// `XDG_RUNTIME_DIR` leaking in from the developer's environment.
pub fn shim<S: AsRef<OsStr>>(args: &[S]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tidings-mcp"));
    cmd.args(args)
        .env_remove("TIDINGS_SOCKET")
        .env_remove("XDG_RUNTIME_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// `--socket <path>` as arguments.
pub fn socket_args(path: &std::path::Path) -> [&OsStr; 2] {
    [OsStr::new("--socket"), path.as_os_str()]
}
