//! The agents' part of [`State`](super::State): each program behind the connections (or HTTP
//! token), what identifies it, its grant, and what it holds now.
//!
//! Grants are counts, never values: a sender list is how many entries it keeps.

use serde::{Deserialize, Serialize};

/// What the user decided about an agent.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentAccess {
    /// It has a grant in settings.toml and may receive what it grants.
    Allowed,
    /// The user denied it: every request is refused.
    Denied,
    /// It asked, and waits for the user's answer.
    Asking,
    /// No grant: `[agents] new` applies to it.
    New,
}

/// How an agent was identified.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    /// A program, by its executable (and its script, for an interpreter).
    Program,
    /// A program by its code signature (macOS).
    Signed,
    /// An HTTP bearer token made for it.
    Token,
    /// What could not be identified (the parent exited, a sandbox hid it).
    Unidentified,
}

impl AgentKind {
    /// The kind an identity key says.
    pub fn of_key(key: &str) -> AgentKind {
        if key.starts_with("signed:") {
            AgentKind::Signed
        } else if key.starts_with("token:") {
            AgentKind::Token
        } else if key.starts_with("exe:") {
            AgentKind::Program
        } else {
            AgentKind::Unidentified
        }
    }
}

/// One type's part of an agent's grant.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeGrantState {
    /// The event type's wire name.
    pub event_type: String,
    /// Whether the agent may receive it at all.
    pub granted: bool,
    /// How many of the type's allowlist entries it keeps; `None`: every sender the type lets
    /// through.
    pub senders: Option<usize>,
}

/// One agent.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentState {
    /// Its id (`tidings agents allow ID`), the key of its grant in settings.toml.
    pub id: String,
    /// What identifies it (`exe:/usr/bin/foo`, `signed:TEAM:ID`, `token:NAME`,
    /// `unidentified`): the `identity` of its grant in settings.toml.
    pub identity: String,
    /// What it is: the program's name, never the name it announced.
    pub name: String,
    /// Who signed it (macOS), when known.
    pub signer: Option<String>,
    /// The program's path, home-relative, when known.
    pub program: Option<String>,
    /// How it was identified.
    pub kind: AgentKind,
    /// The names its connections announced (`clientInfo.name`): shown, never trusted.
    pub announced: Vec<String>,
    /// What the user decided.
    pub access: AgentAccess,
    /// Its grant per type (for an agent with no grant: what `new = "allow"` would give).
    pub grants: Vec<TypeGrantState>,
    /// The type of the request waiting for the user's answer, while it asks.
    pub asking: Option<String>,
    /// Open connections (socket) or tokens in use (HTTP).
    pub connections: usize,
    /// Open streams.
    pub streams: usize,
    /// Events delivered to it since Tidings started.
    pub delivered: u64,
    /// When it last connected or made a request (ms since the Unix epoch); `None`: not seen
    /// since Tidings started.
    pub last_seen_ms: Option<u64>,
}
