//! The `tidings` command line, one module per subcommand.
//!
//! - `args`: the clap definitions and help texts.
//! - `serve`: the headless daemon (real or demo) on the socket.
//! - `tail`: a stream client that prints events as JSON lines.
//! - `status`: asks a daemon for `tidings/status`.
//! - `client`: the newline-delimited JSON-RPC client `tail` and `status` share.
//! - `duration`: `--max-age` values like `10m`.
//! - `exit_code`: every exit code, named.

pub mod args;
pub mod client;
pub mod duration;
pub mod exit_code;
pub mod serve;
pub mod status;
pub mod tail;

use std::path::{Path, PathBuf};

/// `--socket` if given (made absolute), else the platform lookup (`TIDINGS_SOCKET`, then the
/// per-OS default; see `tidings_platform::paths`).
pub fn resolve_socket(flag: Option<&Path>) -> Result<PathBuf, tidings_platform::PathError> {
    match flag {
        Some(path) => Ok(std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())),
        None => tidings_platform::paths::socket_path(),
    }
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM. A handler that cannot be installed never fires,
/// so the caller runs until its other end condition.
pub async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    let wait_for = |kind| async move {
        match signal(kind) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = wait_for(SignalKind::interrupt()) => {}
        () = wait_for(SignalKind::terminate()) => {}
    }
}
