//! Every exit code `tidings` uses, named, so scripts can tell a usage mistake from a daemon
//! that is not running. The non-trivial ones follow BSD `sysexits.h`, as `tidings-mcp` does,
//! and share its numbers where the meaning is the same.

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
