//! The clients' part of [`State`](super::State): who is connected, how, and what it listens to.
//!
//! Filters are counts, never values.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How a client is connected.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// The Unix socket (directly or through `tidings-mcp`).
    Socket,
    /// The loopback HTTP endpoint: all requests made with one bearer token.
    Http,
}

/// One connected client and what it listens to.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientState {
    /// The engine's id for it (for `Handle::revoke`); never reused while the engine runs.
    pub id: u64,
    /// The name it announced (`clientInfo.name`), cut to 64 characters.
    pub name: Option<String>,
    /// The version it announced.
    pub version: Option<String>,
    /// How it is connected.
    pub transport: Transport,
    /// When it connected (ms since the Unix epoch).
    pub connected_since_ms: u64,
    /// Its process id, where the OS tells (socket connections).
    pub pid: Option<i32>,
    /// The id of the agent behind it (`State.agents`), whose grant applies.
    pub agent: String,
    /// Whether it was revoked (it gets Forbidden until it reconnects).
    pub revoked: bool,
    /// Its subscriptions: open streams, and the polls and tool calls it made.
    pub subscriptions: Vec<SubscriptionState>,
}

/// How a client receives events.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// An open `events/stream`.
    Push,
    /// `events/poll` calls.
    Poll,
    /// The pull tools (`tidings_check`, `tidings_wait`).
    Tools,
    /// A host channel fed by the shim.
    Channel,
}

/// One subscription of a client.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionState {
    /// The event type's wire name.
    pub event_type: String,
    /// The filter, as the number of values per argument (`{"from": 2}`), never the values.
    pub filter: BTreeMap<String, usize>,
    /// How it receives.
    pub mode: Mode,
    /// Events delivered through it.
    pub delivered: u64,
    /// When it last delivered (ms since the Unix epoch).
    pub last_delivery_ms: Option<u64>,
}
