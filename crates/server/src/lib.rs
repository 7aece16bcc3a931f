//! Tidings' daemon: serves `mail.received` and `messages.received` through the MCP Events
//! extension (SEP-3415, protocol 2026-07-28) to clients on a Unix socket and, optionally, on a
//! loopback Streamable HTTP endpoint.
//!
//! Module map:
//! - [`daemon`]: the running daemon: a cheap-Clone handle on the engine, settings, hub and
//!   limits; one rmcp service per connection.
//! - [`events`]: the `ServerHandler`: `server/discover`, `events/list|poll|stream|subscribe|
//!   unsubscribe`, `subscriptions/listen`, and the push stream loop.
//! - [`hub`]: store watchers (notify: FSEvents/inotify), the cheap change check, wake-ups.
//! - [`limits`]: stream caps and frame size limits.
//! - [`frames`]: newline framing with the 1 MiB frame limit in front of rmcp.
//! - [`http`]: the loopback Streamable HTTP endpoint: rmcp's stateless service behind our
//!   guard layer (Host, Origin, bearer token, body limit, `Mcp-Name`), the keychain token.
//! - `home`: paths shown to clients with the home directory as `~`.
//! - [`socket`]: the Unix socket: path, modes, peer uid check, stale socket, single instance.
//! - [`demo`]: demo mode: a fake home from the fixtures, the simulator, the conformance tools.

pub mod clients;
pub mod daemon;
pub mod demo;
pub mod engine;
pub mod events;
pub mod frames;
mod home;
pub mod http;
pub mod hub;
pub mod limits;
pub mod listen_alias;
pub mod socket;
pub mod state;
mod sync;

pub use engine::{Config, Handle, StartError, Tidings};
pub use state::State;
