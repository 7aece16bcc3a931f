//! Every exit code `tidings-mcp` uses, named, so scripts and MCP clients can tell a usage
//! mistake from a daemon that is not running.
//!
//! The non-trivial ones follow BSD `sysexits.h`, which launchd and shells already know.

/// The daemon closed the connection, or the client closed our stdout (a broken pipe).
pub const SUCCESS: u8 = 0;
/// The connection failed in a way not listed below, or broke while moving bytes.
pub const FAILURE: u8 = 1;
/// Bad command line (unknown flag, missing value), as most CLIs do.
pub const USAGE: u8 = 2;
/// The daemon refused the channel's subscription: no sender bound, a type turned off
/// (`EX_DATAERR`).
pub const REFUSED: u8 = 65;
/// Nothing answers on the socket and it could not be started (`EX_UNAVAILABLE`).
pub const NOT_RUNNING: u8 = 69;
/// The socket exists but we may not connect to it (`EX_NOPERM`).
pub const PERMISSION_DENIED: u8 = 77;
/// The socket path could not be worked out from the environment (`EX_CONFIG`).
pub const CONFIG: u8 = 78;
