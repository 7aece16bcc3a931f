//! Every exit code `tidings` uses, named, so scripts can tell a usage mistake from a daemon
//! that is not running. The non-trivial ones follow BSD `sysexits.h`, as `tidings-mcp` does,
//! and share its numbers where the meaning is the same.
//!
//! Which error means which code is decided here and nowhere else: each error type that means
//! more than [`FAILURE`] implements [`Coded`], and [`of`] walks an error's chain once, outermost
//! first, and takes the first code it finds (the table in [`coded`]).

use std::error::Error;

use tidings_core::settings::SettingsError;
use tidings_platform::PathError;
use tidings_server::daemon::DaemonError;
use tidings_server::demo::DemoError;
use tidings_server::engine::StartError;
use tidings_server::http::HttpError;
use tidings_server::socket::SocketError;

use super::check::CheckError;
use super::client::ClientError;
use super::connect::ConnectCliError;
use super::doctor::Unhealthy;
use super::login::InstallError;
use super::tail::TailError;
use super::token::TokenError;
use tidings_connect::ConnectError;

/// `tidings doctor` found a check that failed (each printed with its fix).
pub const UNHEALTHY: u8 = 3;
/// Done: a clean shutdown, Ctrl-C in `tail`, or a reader that closed our stdout.
pub const SUCCESS: u8 = 0;
/// Any failure not listed below (a broken connection, a stream the daemon terminated).
pub const FAILURE: u8 = 1;
/// Bad command line (clap's own choice of code, kept).
pub const USAGE: u8 = 2;
/// The daemon answered a request with a JSON-RPC error (`EX_DATAERR`): the request was wrong.
pub const REFUSED: u8 = 65;
/// No daemon answers on the socket (`EX_UNAVAILABLE`), the same code as `tidings-mcp`.
pub const NOT_RUNNING: u8 = 69;
/// Another daemon already serves on the socket (`EX_TEMPFAIL`): try again once it stops.
pub const ALREADY_RUNNING: u8 = 75;
/// The socket exists but we may not connect to it (`EX_NOPERM`).
pub const PERMISSION_DENIED: u8 = 77;
/// Paths or settings could not be worked out or read (`EX_CONFIG`).
pub const CONFIG: u8 = 78;

/// An error that knows the exit code it means.
pub trait Coded {
    /// The process exit code when this error ends a command.
    fn exit_code(&self) -> u8;
}

/// The exit code for an error that ended a command: the first error in its chain that knows
/// its code, else [`FAILURE`]. Outermost first, so a socket write that hit a broken pipe is
/// the connection's failure, not a reader that closed our stdout.
pub fn of(error: &anyhow::Error) -> u8 {
    error.chain().find_map(coded).unwrap_or(FAILURE)
}

/// The one downcast table: every error type with a [`Coded`] impl is listed here.
fn coded(cause: &(dyn Error + 'static)) -> Option<u8> {
    fn code<E: Coded + Error + 'static>(cause: &(dyn Error + 'static)) -> Option<u8> {
        cause.downcast_ref::<E>().map(Coded::exit_code)
    }
    code::<ClientError>(cause)
        .or_else(|| code::<Unhealthy>(cause))
        .or_else(|| code::<TailError>(cause))
        .or_else(|| code::<CheckError>(cause))
        .or_else(|| code::<TokenError>(cause))
        .or_else(|| code::<InstallError>(cause))
        .or_else(|| code::<ConnectCliError>(cause))
        .or_else(|| code::<ConnectError>(cause))
        .or_else(|| code::<StartError>(cause))
        .or_else(|| code::<SocketError>(cause))
        .or_else(|| code::<PathError>(cause))
        .or_else(|| code::<HttpError>(cause))
        .or_else(|| code::<DaemonError>(cause))
        .or_else(|| code::<DemoError>(cause))
        .or_else(|| code::<SettingsError>(cause))
        .or_else(|| code::<std::io::Error>(cause))
}

impl Coded for ConnectCliError {
    fn exit_code(&self) -> u8 {
        match self {
            ConnectCliError::UnknownHost(_)
            | ConnectCliError::NoHost
            | ConnectCliError::BadShim(_) => USAGE,
            ConnectCliError::NoHome | ConnectCliError::NoShim => CONFIG,
            ConnectCliError::NotConnected(_) => FAILURE,
        }
    }
}

impl Coded for ConnectError {
    fn exit_code(&self) -> u8 {
        match self {
            ConnectError::Invalid { .. } => CONFIG,
            ConnectError::Mode { .. } => USAGE,
            ConnectError::Io { .. } => FAILURE,
        }
    }
}

// The library's errors do not know about exit codes (the app has none); the CLI says here
// what each means.

impl Coded for SocketError {
    fn exit_code(&self) -> u8 {
        match self {
            SocketError::AlreadyRunning { .. } => ALREADY_RUNNING,
            SocketError::PathTooLong { .. } | SocketError::Directory { .. } => CONFIG,
            _ => FAILURE,
        }
    }
}

impl Coded for Unhealthy {
    fn exit_code(&self) -> u8 {
        UNHEALTHY
    }
}

impl Coded for CheckError {
    fn exit_code(&self) -> u8 {
        match self {
            CheckError::Name(_) => USAGE,
            CheckError::Refused(_) => REFUSED,
            CheckError::CursorFile { .. } => FAILURE,
        }
    }
}

impl Coded for StartError {
    /// Most variants are transparent wrappers (their `source` is the inner error's source, so
    /// the chain skips the inner error): ask the inner error.
    fn exit_code(&self) -> u8 {
        match self {
            StartError::NoHome => CONFIG,
            StartError::Path(e) => e.exit_code(),
            StartError::Socket(e) => e.exit_code(),
            StartError::Demo(e) => e.exit_code(),
            StartError::Settings(e) => e.exit_code(),
            StartError::Daemon(e) => e.exit_code(),
            _ => FAILURE,
        }
    }
}

impl Coded for PathError {
    fn exit_code(&self) -> u8 {
        CONFIG
    }
}

impl Coded for HttpError {
    /// A forced endpoint that cannot start: the `--http` address or the token store is wrong.
    fn exit_code(&self) -> u8 {
        CONFIG
    }
}

impl Coded for DaemonError {
    fn exit_code(&self) -> u8 {
        match self {
            DaemonError::NoRuntime => FAILURE,
            _ => CONFIG,
        }
    }
}

impl Coded for DemoError {
    fn exit_code(&self) -> u8 {
        match self {
            DemoError::Dir { .. } | DemoError::Settings(_) => CONFIG,
            _ => FAILURE,
        }
    }
}

impl Coded for SettingsError {
    fn exit_code(&self) -> u8 {
        CONFIG
    }
}

impl Coded for std::io::Error {
    /// Whoever reads our stdout went away (`tidings status | head -1`): not a failure.
    fn exit_code(&self) -> u8 {
        if self.kind() == std::io::ErrorKind::BrokenPipe {
            SUCCESS
        } else {
            FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::path::PathBuf;

    use super::*;

    fn settings_error() -> SettingsError {
        SettingsError::Io {
            path: PathBuf::from("/nowhere/settings.toml"),
            source: io::Error::from(io::ErrorKind::PermissionDenied),
        }
    }

    #[test]
    fn a_code_is_found_under_a_wrapper_that_has_none() {
        // A settings error under the demo's transparent wrapper, under a context line.
        let error = anyhow::Error::new(DemoError::Settings(settings_error())).context("demo");
        assert_eq!(of(&error), CONFIG);
        let error = anyhow::Error::new(settings_error()).context("starting");
        assert_eq!(of(&error), CONFIG);
    }

    #[test]
    fn the_outermost_code_wins() {
        // A broken pipe on the daemon's socket is the connection's failure.
        let error = anyhow::Error::new(ClientError::Io {
            path: PathBuf::from("/tmp/t.sock"),
            source: io::Error::from(io::ErrorKind::BrokenPipe),
        });
        assert_eq!(of(&error), FAILURE);
        let error = anyhow::Error::new(ClientError::NotRunning {
            path: PathBuf::from("/tmp/t.sock"),
        })
        .context("rotating");
        assert_eq!(of(&error), NOT_RUNNING);
    }

    #[test]
    fn a_closed_stdout_is_success_and_anything_else_failure() {
        let error = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("x");
        assert_eq!(of(&error), SUCCESS);
        assert_eq!(of(&anyhow::anyhow!("something else")), FAILURE);
    }
}
