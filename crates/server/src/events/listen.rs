//! `subscriptions/listen` with the events extension's `eventsListChanged` filter field, and
//! `notifications/events/list_changed` for the clients that opted in.
//!
//! Why not rmcp's own listen: rmcp 3.11 parses the filter into its typed `SubscriptionFilter`
//! (tools, prompts, resources), which drops `eventsListChanged`, and it sends the
//! acknowledgement itself from that typed filter, so the field could neither be read nor
//! echoed. The smallest sound workaround: the framer (`frames.rs`), which sees every raw line
//! anyway, renames the method to [`LISTEN_ALIAS`], a custom method whose params reach us as raw
//! JSON. We then acknowledge and notify with custom notifications. We advertise no
//! tools/prompts/resources list changes, so `eventsListChanged` is the only field we ever
//! accept. The HTTP endpoint's guard layer (`http/guard.rs`) does the same rename.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::CustomResult;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::wire::{final_result, notify};
use crate::daemon::{ConnectionState, Daemon};

/// The internal method name `subscriptions/listen` is served under.
pub const LISTEN_ALIAS: &str = "tidings/internal/subscriptions/listen";

/// Serve one listen request until it is cancelled, the connection goes or the daemon stops.
/// A listen is a long-lived request like a push stream, so it takes a place under the same
/// caps (per connection or token, and process-wide): otherwise it would be an unbounded way
/// to hold the daemon's resources.
pub async fn listen(
    daemon: &Daemon,
    conn: &Arc<ConnectionState>,
    params: Value,
    ctx: RequestContext<RoleServer>,
) -> Result<CustomResult, ErrorData> {
    let Some(Value::Object(notifications)) = params.get("notifications") else {
        {
            return Err(ErrorData::invalid_params(
                "notifications (the notification filter, an object) is required",
                Some(json!({"field": "notifications"})),
            ));
        }
    };
    let wants_events = match notifications.get("eventsListChanged") {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "notifications.eventsListChanged must be a boolean",
                Some(json!({"field": "notifications.eventsListChanged"})),
            ));
        }
    };
    let _slot = daemon.acquire_stream(conn, &ctx.id)?;
    let mut list = daemon.list_receiver();
    list.borrow_and_update();
    let accepted = if wants_events {
        json!({"eventsListChanged": true})
    } else {
        json!({})
    };
    if notify(
        &ctx.peer,
        &ctx.id,
        "notifications/subscriptions/acknowledged",
        json!({"notifications": accepted}),
    )
    .await
    .is_err()
    {
        return Ok(final_result(&ctx.id));
    }
    let shutdown = daemon.shutdown_token().clone();
    loop {
        tokio::select! {
            biased;
            () = ctx.ct.cancelled() => break,
            () = conn.closed.cancelled() => break,
            () = conn.revoked.cancelled() => break,
            () = shutdown.cancelled() => break,
            changed = list.changed() => {
                if changed.is_err() {
                    break;
                }
                if wants_events
                    && !ctx.ct.is_cancelled()
                    && notify(&ctx.peer, &ctx.id, "notifications/events/list_changed", json!({}))
                        .await
                        .is_err()
                {
                    break;
                }
            }
        }
    }
    Ok(final_result(&ctx.id))
}
