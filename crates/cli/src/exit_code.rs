//! Every exit code `tidings` uses, named, so scripts can tell a usage mistake from a daemon
//! that is not running. The non-trivial ones follow BSD `sysexits.h`, as `tidings-mcp` does,
//! and share its numbers where the meaning is the same.
//!
//! Each error type that means more than [`FAILURE`] implements [`Coded`]: a command's own
//! error beside its type, the libraries' errors here (they know nothing of exit codes). This
//! module is below the commands and imports none of them; `failure` holds the one table that
//! finds an error's code.

use tidings_connect::ConnectError;
use tidings_core::settings::SettingsError;
use tidings_platform::PathError;
use tidings_server::daemon::DaemonError;
use tidings_server::demo::DemoError;
use tidings_server::engine::StartError;
use tidings_server::http::HttpError;
use tidings_server::http::agent_tokens::AgentTokenError;
use tidings_server::socket::SocketError;

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

// The library's errors do not know about exit codes (the app has none); the CLI says here
// what each means.

impl Coded for ConnectError {
    fn exit_code(&self) -> u8 {
        match self {
            ConnectError::Invalid { .. } => CONFIG,
            ConnectError::Mode { .. } => USAGE,
            ConnectError::Io { .. } => FAILURE,
        }
    }
}

impl Coded for SocketError {
    fn exit_code(&self) -> u8 {
        match self {
            SocketError::AlreadyRunning { .. } => ALREADY_RUNNING,
            SocketError::PathTooLong { .. } | SocketError::Directory { .. } => CONFIG,
            _ => FAILURE,
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

impl Coded for AgentTokenError {
    fn exit_code(&self) -> u8 {
        match self {
            AgentTokenError::BadName { .. } => USAGE,
            AgentTokenError::Invalid { .. } => CONFIG,
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
