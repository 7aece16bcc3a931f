//! `events/poll`: check the request against the settings in force, then one bounded engine
//! call on the blocking pool.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::CustomResult;
use serde_json::Value;
use tidings_core::{EventType, Subscription, SubscriptionParams};

use super::errors::{daemon_request_error, request_error};
use super::wire::{blocking, complete};
use crate::clients::{ConnectionState, filter_summary, sender_of};
use crate::daemon::Daemon;
use crate::state::Mode;

/// Answer one poll: `InvalidParams` / `NotFound` before any store is touched; a store failure is
/// -32603 with `data.reason`.
/// The events returned are counted under `conn`'s poll subscription of that type and filter.
pub async fn poll(
    daemon: &Daemon,
    conn: &Arc<ConnectionState>,
    params: Value,
) -> Result<CustomResult, ErrorData> {
    let params =
        SubscriptionParams::parse(&params).map_err(|e| request_error(e, daemon.settings_path()))?;
    // The agent's grant first: an agent with none may wait here for the user's answer.
    if let Some(ty) = EventType::from_name(&params.name) {
        daemon.agent_gate(conn, ty, &params.arguments).await?;
    }
    let settings = daemon.settings_for(conn);
    let sub = Subscription::new(&params.name, &params.arguments, &settings)
        .map_err(|e| daemon_request_error(e, daemon))?;
    let engine = Arc::clone(daemon.engine());
    let (ty, filter) = (sub.event_type(), filter_summary(&params.arguments));
    daemon.subscribed(conn, ty, &params.arguments);
    let outcome = blocking(move || engine.poll(&sub, &params))
        .await?
        .map_err(|e| request_error(e, daemon.settings_path()))?;
    let senders: Vec<String> = outcome.events.iter().map(|e| sender_of(&e.data)).collect();
    conn.polled(ty.name(), filter, Mode::Poll, &senders);
    Ok(complete(Value::from(outcome)))
}
