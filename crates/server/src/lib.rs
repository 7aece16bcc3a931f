//! Tidings' daemon: serves `mail.received` and `messages.received` through the MCP Events
//! extension (SEP-3415, protocol 2026-07-28) to clients on a Unix socket and, optionally, on a
//! loopback Streamable HTTP endpoint.
//!
//! Module map (each imports only modules listed after it, tests aside; docs/architecture.md
//! draws the tree):
//! - `ui_contract` (tests only): the settings window's TypeScript types and test fixtures,
//!   rendered from this crate's types and a demo engine, checked against the committed files.
//! - [`app`]: what the menu-bar app calls, one function per bridge command, on a [`Handle`]:
//!   the [`app::SettingsView`], settings changes, pause, the token, the connect snippet.
//! - [`engine`]: the embedding API: [`Tidings::start`] runs socket, daemon, HTTP endpoint and
//!   demo; the [`Handle`] is what `tidings serve` and the menu-bar app hold.
//! - [`socket`]: the Unix socket: path, modes, peer uid check, stale socket, single instance,
//!   and one rmcp service per connection.
//! - [`http`]: the loopback Streamable HTTP endpoint: rmcp's stateless service behind our
//!   guard layer (Host, Origin, bearer token, body limit, `Mcp-Name`), the keychain token,
//!   the supervisor that follows `[http]` settings.
//! - [`frames`]: newline framing with the 1 MiB frame limit in front of rmcp.
//! - [`events`]: the `ServerHandler`: `server/discover`, `events/list|poll|stream|subscribe|
//!   unsubscribe`, `subscriptions/listen`, `tidings/status`, the push stream loop, and the
//!   pull tools (`tidings_check`, `tidings_wait`) for hosts on either era.
//! - [`daemon`]: the running daemon: a cheap-Clone handle on the engine, settings, hub,
//!   limits and clients; builds the [`State`]. Its methods live by what they serve: settings,
//!   the settings watcher, pause, status, access record, notices, the layers' accessors.
//! - [`demo`]: demo mode: a fake home from the fixtures, the simulator, the conformance tools.
//! - [`logfile`]: the daily log file in the platform's log directory (the CLI's and the app's).
//! - [`logfilter`]: the log filters both share: rmcp capped, a response nobody takes dropped.
//! - [`clients`]: the registry of connections and HTTP tokens; admission (stream slots under
//!   the caps, stream ids, the socket's connection cap); activity (subscriptions, delivery
//!   counts, the activity log).
//! - [`agents`]: the programs behind the connections, known by what the OS says they are:
//!   the registry of agents seen and the questions open about them (the daemon's gate and
//!   grants use it).
//! - `heads`: per socket connection, one task that writes the frames of every stream of it at
//!   a store's head, joined into one write.
//! - `fanout`: one shared read per change for the streams at a store's head, the bound on
//!   stream reader threads.
//! - [`hub`]: store watchers (notify: FSEvents/inotify), the cheap change check, wake-ups.
//! - [`state`]: the one serialisable model ([`State`]) that `tidings/status` answers; its
//!   parts by file: the stores, the clients, the board (HTTP and settings-file state).
//! - [`notices`]: what the user is told ([`notices::Notice`]: first subscription, Full Disk
//!   Access, a store rebuilt, a settings edit rejected) and [`notices::deliver`], which shows
//!   them through a `tidings_platform::Notifier`.
//! - [`listen_alias`]: the one `subscriptions/listen` rewrite both transports use.
//! - [`events_key`]: the one outbound rewrite both transports use: `capabilities.events`
//!   beside the extension on `server/discover`, for clients of the extension's earlier draft.
//! - [`limits`]: stream caps and frame size limits.
//! - `home`: paths shown to clients with the home directory as `~`.
//! - [`settings_file`]: `settings.toml` written: core's text, the platform's atomic write.
//! - `sync`: the one poison-recovering lock.
//! - [`webhooks`]: webhook delivery: `events/subscribe` and `events/unsubscribe`, each
//!   subscription's delivery task, and `webhooks.json`, which keeps them across restarts.

pub mod agents;
pub mod app;
pub mod clients;
pub mod daemon;
pub mod demo;
pub mod engine;
pub mod events;
pub mod events_key;
mod fanout;
pub mod frames;
mod heads;
mod home;
pub mod http;
pub mod hub;
pub mod limits;
pub mod listen_alias;
pub mod logfile;
pub mod logfilter;
pub mod notices;
pub mod settings_file;
pub mod socket;
pub mod state;
mod sync;
#[cfg(test)]
mod ui_contract;
pub mod webhooks;

pub use engine::{Config, Handle, StartError, Tidings};
pub use home::home_relative;
pub use state::State;
