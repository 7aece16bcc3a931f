//! `subscriptions/listen` with the events extension's `eventsListChanged` filter field (and
//! `toolsListChanged`), and the `list_changed` notifications for the clients that opted in.
//!
//! Why not rmcp's own listen: rmcp 3.11 parses the filter into its typed `SubscriptionFilter`
//! (tools, prompts, resources), which drops `eventsListChanged`, and it sends the
//! acknowledgement itself from that typed filter, so the field could neither be read nor
//! echoed. The smallest sound workaround: both transports rename the method to
//! [`LISTEN_ALIAS`] (`listen_alias.rs`, the one rewrite), a custom method whose params reach
//! us as raw JSON. We then acknowledge and notify with custom notifications. Of the list
//! changes we advertise only events' and tools' (the pull tools follow the types turned on),
//! so `eventsListChanged` and `toolsListChanged` are the only fields we ever accept.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::CustomResult;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use tidings_protocol::errors::data;
use tidings_protocol::payloads::{ListChanges, Listen};
use tidings_protocol::{fields, notifications};

use super::errors::refused;
use super::wire::{final_result, notify};
use crate::clients::ConnectionState;
use crate::daemon::Daemon;

pub use crate::listen_alias::LISTEN_ALIAS;

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
    let Some(Value::Object(filter)) = params.get(fields::NOTIFICATIONS) else {
        {
            return Err(ErrorData::invalid_params(
                "notifications (the notification filter, an object) is required",
                Some(json!({data::FIELD: fields::NOTIFICATIONS})),
            ));
        }
    };
    let wants_events = opted_in(filter, fields::EVENTS_LIST_CHANGED)?;
    // The pull tools' list follows the same settings: a type turned on or off changes it.
    let wants_tools = opted_in(filter, fields::TOOLS_LIST_CHANGED)?;
    let _slot = conn.acquire(&ctx.id).map_err(refused)?;
    let mut list = daemon.list_receiver();
    list.borrow_and_update();
    let accepted = Listen {
        notifications: ListChanges {
            events_list_changed: wants_events,
            tools_list_changed: wants_tools,
        },
    };
    if notify(
        &ctx.peer,
        &ctx.id,
        notifications::ACKNOWLEDGED,
        accepted.into(),
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
                let methods = [
                    (wants_events, notifications::EVENTS_LIST_CHANGED),
                    (wants_tools, notifications::TOOLS_LIST_CHANGED),
                ];
                for (wanted, method) in methods {
                    if wanted
                        && !ctx.ct.is_cancelled()
                        && notify(&ctx.peer, &ctx.id, method, json!({})).await.is_err()
                    {
                        return Ok(final_result(&ctx.id));
                    }
                }
            }
        }
    }
    Ok(final_result(&ctx.id))
}

/// A boolean opt-in of the listen filter: absent, null or false is no.
fn opted_in(
    notifications: &serde_json::Map<String, Value>,
    field: &str,
) -> Result<bool, ErrorData> {
    match notifications.get(field) {
        None | Some(Value::Null | Value::Bool(false)) => Ok(false),
        Some(Value::Bool(true)) => Ok(true),
        Some(_) => Err(ErrorData::invalid_params(
            format!("{}.{field} must be a boolean", fields::NOTIFICATIONS),
            Some(json!({data::FIELD: format!("{}.{field}", fields::NOTIFICATIONS)})),
        )),
    }
}
