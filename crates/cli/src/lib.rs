//! The `tidings` command line: one module per subcommand, run by `main.rs` (the binary), which
//! parses the arguments, sets up logging and ends with the exit code of the failure. The
//! daemon itself is `tidings_server`; the host configs `connect` edits are `tidings_connect`.
//!
//! Module map (each imports only modules listed after it; the commands also use this root's
//! [`resolve_socket`], [`resolve_config`] and [`interrupted`]):
//! - [`failure`]: the exit code a failed command ends with, the one table over every error.
//! - [`logging`]: stderr at a level per command and `-v`; `serve`'s log file.
//! - [`serve`]: the headless daemon (real or demo) on the socket.
//! - [`tail`]: a stream client that prints events as JSON lines.
//! - [`check`]: hook digests: what is new since a named consumer's last call.
//! - [`status`]: asks a daemon for `tidings/status`.
//! - [`webhooks`]: `webhooks`: the destinations from settings.toml and a running daemon's
//!   webhook subscriptions; allow, remove (settings.toml edited in place).
//! - [`agents`]: `agents`: the agents from settings.toml and a running daemon; allow, deny,
//!   forget (settings.toml edited in place).
//! - [`doctor`]: every check with its fix, and the bug report.
//! - [`token`]: shows or rotates the HTTP token in the keychain, creates, lists and revokes
//!   the agents' tokens (`tidings_server::http::agent_tokens`), and tells a running daemon.
//! - [`login`]: `install` / `uninstall`, the login item (`tidings_platform::login`).
//! - [`connect`]: `connect`, `disconnect`, `clients`: an MCP host's config entry, and its
//!   check.
//! - [`args`]: the clap definitions and help texts.
//! - [`client`]: the newline-delimited JSON-RPC client the commands share.
//! - [`duration`]: `--max-age` values like `10m`.
//! - [`exit_code`]: every exit code, named, and [`exit_code::Coded`], the error that knows
//!   its code.
//! - [`output`]: lines for the user that never fail the caller.

pub mod agents;
pub mod args;
pub mod check;
pub mod client;
pub mod connect;
pub mod doctor;
pub mod duration;
pub mod exit_code;
pub mod failure;
pub mod logging;
pub mod login;
pub mod output;
pub mod serve;
pub mod status;
pub mod tail;
pub mod token;
pub mod webhooks;

use std::path::{Path, PathBuf};

/// `--socket` if given, else `TIDINGS_SOCKET`, both made absolute against the working
/// directory, else the per-OS default (see `tidings_platform::paths`). A person typing
/// `TIDINGS_SOCKET=demo/tidings.sock tidings status` means the same as `--socket
/// demo/tidings.sock`; only the shim, which runs wherever an MCP client starts it, insists
/// on an absolute `TIDINGS_SOCKET`.
pub fn resolve_socket(flag: Option<&Path>) -> Result<PathBuf, tidings_platform::PathError> {
    let from_env = std::env::var_os(tidings_platform::paths::SOCKET_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    match flag.map(Path::to_path_buf).or(from_env) {
        Some(path) => Ok(std::path::absolute(&path).unwrap_or(path)),
        None => tidings_platform::paths::socket_path(),
    }
}

/// The config directory and the daemon's socket: with `demo_dir` (`--demo-dir`), the demo's
/// directory (its settings.toml, its `tidings.sock` unless `socket` is given), else the
/// user's config dir (`TIDINGS_CONFIG_DIR` overrides it) and [`resolve_socket`].
pub fn resolve_config(
    demo_dir: Option<&Path>,
    socket: Option<&Path>,
) -> Result<(PathBuf, PathBuf), tidings_platform::PathError> {
    if let Some(dir) = demo_dir {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let socket = match socket {
            Some(s) => resolve_socket(Some(s))?,
            None => dir.join(tidings_platform::paths::SOCKET_FILE_NAME),
        };
        return Ok((dir, socket));
    }
    Ok((
        tidings_platform::paths::config_dir()?,
        resolve_socket(socket)?,
    ))
}

/// A future that completes on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed when
/// this is called, not when the future is first polled: a signal that arrives in between
/// (say, while the daemon opens its stores) must still mean a clean stop, not the default
/// action of dying with the socket left behind. Call it inside the runtime. A handler that
/// cannot be installed never fires.
pub fn interrupted() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt()).ok();
    let mut term = signal(SignalKind::terminate()).ok();
    async move {
        tokio::select! {
            () = received(int.as_mut()) => {}
            () = received(term.as_mut()) => {}
        }
    }
}

/// Completes when `signal` is delivered; never, without a handler.
async fn received(signal: Option<&mut tokio::signal::unix::Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}
