//! `events/poll`: check the request against the settings in force, then one bounded engine
//! call on the blocking pool.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::CustomResult;
use serde_json::Value;
use tidings_core::{Subscription, SubscriptionParams};

use super::errors::request_error;
use super::wire::{blocking, complete};
use crate::daemon::Daemon;

/// Answer one poll: `InvalidParams` / `NotFound` before any store is touched; a store failure is
/// -32603 with `data.reason`.
pub async fn poll(daemon: &Daemon, params: Value) -> Result<CustomResult, ErrorData> {
    let params =
        SubscriptionParams::parse(&params).map_err(|e| request_error(e, daemon.settings_path()))?;
    let settings = daemon.settings_arc();
    let sub = Subscription::new(&params.name, &params.arguments, &settings)
        .map_err(|e| request_error(e, daemon.settings_path()))?;
    let engine = Arc::clone(daemon.engine());
    let outcome = blocking(move || engine.poll(&sub, &params))
        .await?
        .map_err(|e| request_error(e, daemon.settings_path()))?;
    let body = serde_json::to_value(outcome)
        .map_err(|e| ErrorData::internal_error(format!("cannot encode the result: {e}"), None))?;
    Ok(complete(body))
}
