//! Integration tests for `tidings-mcp`: the real binary against a test Unix socket in a temp
//! dir. Built as one test binary (link time matters on a small machine); one module per
//! behaviour.

// Spawning the shim, binding a test socket, and capped waits.
mod util;

// Bytes cross in both directions unchanged, including a line over 64 KiB.
mod roundtrip;
// Stdin EOF reaches the daemon as EOF; answers still come back; then the shim exits.
mod half_close;
// The shim exits when the daemon closes, even while stdin stays open.
mod daemon_closes;
// Nothing on the socket: a named non-zero exit and exactly one stderr line with the path.
mod no_daemon;
// TIDINGS_SOCKET picks the socket when --socket is absent.
mod env_socket;
// --version, --help and bad flags.
mod flags;
// The workspace, the app and the npm packages share one version.
mod versions;
