//! The webhooks' part of [`State`](super::State): the user's destinations, each subscription
//! with how its deliveries go, and the destinations the window asks about.
//!
//! A subscription is shown by its destination's origin only: a callback URL's path can hold a
//! receiver's routing token, and its secret is never shown anywhere.

use serde::{Deserialize, Serialize};

/// Webhook delivery as the window and `tidings status` show it.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhooksState {
    /// The origins on `[webhooks] allow`, as the file holds them.
    pub destinations: Vec<String>,
    /// Every subscription, by id.
    pub subscriptions: Vec<WebhookState>,
    /// Destinations an agent asked for that are not on the list, oldest first.
    pub asks: Vec<DestinationAskState>,
}

/// One webhook subscription.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookState {
    /// `sub_…`, as the `X-MCP-Subscription-Id` header carries it.
    pub id: String,
    /// `mail.received` or `messages.received`.
    pub event_type: String,
    /// The destination's origin.
    pub destination: String,
    /// The agent it belongs to (its id) and how it is shown.
    pub agent: String,
    pub agent_name: String,
    /// The filter, as the number of values per argument (`{"domains": 1}`), never the
    /// values.
    pub filter: std::collections::BTreeMap<String, usize>,
    /// Deliveries go out; false once the retries ran out (suspended).
    pub active: bool,
    /// When it lapses unless refreshed (ms since the epoch); `None`: never.
    pub refresh_before_ms: Option<u64>,
    /// The last accepted delivery (ms since the epoch).
    pub last_delivery_ms: Option<u64>,
    /// The last failure's category (`connection_refused`, `timeout`, `tls_error`,
    /// `http_4xx`, `http_5xx`, `challenge_failed`).
    pub last_error: Option<String>,
    /// Since when deliveries fail (ms since the epoch).
    pub failed_since_ms: Option<u64>,
    /// Events delivered.
    pub delivered: u64,
}

/// A destination an agent asked for, not on the list: the window asks the user.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DestinationAskState {
    /// The origin, as the list would hold it.
    pub origin: String,
    /// Who asked.
    pub agent: String,
    /// When it first asked (ms since the epoch).
    pub since_ms: u64,
}
