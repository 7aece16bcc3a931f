//! The wire's vocabulary: every name, key, version and code that the daemon, the CLI and the
//! `tidings-mcp` shim put on the wire or look for on it, and the typed payloads of the events
//! extension's notifications. A leaf: serde only, so the shim can speak the protocol without
//! the daemon.
//!
//! Module map:
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope: its version and the request, notification,
//!   result and error frames.
//! - [`versions`]: the MCP revisions: the one the events extension is served on, the last
//!   `initialize` one.
//! - [`methods`]: request method names (`initialize`, `server/discover`, `events/*`,
//!   `subscriptions/listen`, `tidings/*`, `tools/*`).
//! - [`notifications`]: notification method names (`notifications/events/*` and the core ones).
//! - [`meta`]: the `_meta` keys and the `_meta` a 2026-07-28 request carries.
//! - [`capabilities`]: the server's name, the extension identifiers and capability keys.
//! - [`fields`]: field names the code builds or looks up by name.
//! - [`errors`]: JSON-RPC error codes, the `data.reason` and `data.kind` values, and the
//!   `{code, message, data}` object.
//! - [`payloads`]: typed params of the stream notifications (`active`, `heartbeat`, `error`,
//!   `terminated`), of listen and cancellation, and the token rotation's result.
//! - [`event`]: the `notifications/events/event` frame built around an occurrence's JSON, and
//!   the sender read from an occurrence's envelope.
//! - [`headers`]: the Streamable HTTP headers the guard checks.
//! - [`tools`]: the tool names: the pull tools and the demo's conformance levers.
//! - [`event_types`]: the event type names.

pub mod capabilities;
pub mod errors;
pub mod event;
pub mod event_types;
pub mod fields;
pub mod headers;
pub mod jsonrpc;
pub mod meta;
pub mod methods;
pub mod notifications;
pub mod payloads;
pub mod tools;
pub mod versions;
