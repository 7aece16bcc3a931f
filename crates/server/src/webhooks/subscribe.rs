//! `events/subscribe` and `events/unsubscribe`. A subscribe is checked as a poll is (the
//! params, the agent's grant, the type and its senders), then against the user's list of
//! destinations; a new (principal, url) is verified with a challenge before anything is
//! delivered to it. The same key again is a refresh: the secret replaced, the TTL re-granted,
//! delivery reactivated.

use std::fmt::Write as _;
use std::sync::Arc;

use rmcp::ErrorData;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tidings_core::{EventType, Subscription};
use tidings_webhook::CallbackUrl;

use super::hook::{Hook, HookState, Owner};
use super::{deliver, errors, params, send};
use crate::clients::ConnectionState;
use crate::daemon::Daemon;
use crate::events::errors::{
    daemon_request_error, not_found_subscription, request_error, utc_time as error_time,
};
use crate::notices::Notice;
use crate::state::now_ms;

/// Answer `events/subscribe`.
pub(crate) async fn subscribe(
    daemon: &Daemon,
    conn: &Arc<ConnectionState>,
    params: &Value,
) -> Result<Value, ErrorData> {
    let p = params::subscribe(params, |e| request_error(e, daemon.settings_path()))?;
    if !conn.authenticated() {
        return Err(errors::unauthenticated());
    }
    if let Some(ty) = EventType::from_name(&p.name) {
        daemon.agent_gate(conn, ty, &p.arguments).await?;
    }
    let settings = daemon.settings_for(conn);
    let sub = Subscription::new(&p.name, &p.arguments, &settings)
        .map_err(|e| daemon_request_error(e, daemon))?;
    let origin = p.url.origin();
    if !settings.webhooks.allows(origin) {
        let asked = daemon.agents().prompts()
            && daemon
                .webhooks()
                .ask(&origin.to_string(), &conn.agent().label());
        if asked {
            daemon.notify(Notice::AgentAsks {
                agent: conn.agent().label(),
                wants: format!("to post events to {origin}"),
            });
            daemon.board_changed();
        }
        return Err(errors::destination_not_allowed(origin, asked));
    }
    let owner = Owner {
        key: conn.agent().key().to_owned(),
        id: conn.agent().id.clone(),
        name: conn.agent().label(),
    };
    let id = subscription_id(&owner.key, &p.url, sub.event_type(), &p.arguments);
    let webhooks = daemon.webhooks();
    let granted = p.ttl.granted();
    let refresh_before_ms = granted.map(|ttl| now_ms().saturating_add(ttl));
    if let Some(hook) = webhooks.get(&id) {
        // A refresh: the cursor stays where delivery stands.
        hook.state().refresh(p.secret, refresh_before_ms);
        hook.nudge.notify_one();
        webhooks.save();
        daemon.board_changed();
        return Ok(result(&hook, false));
    }
    if webhooks.count_for(&owner.key) >= errors::MAX_PER_AGENT {
        return Err(errors::exhausted());
    }
    if !webhooks.is_verified(&owner.key, p.url.as_str()) {
        send::challenge(webhooks.poster(), &p.url, &id, &p.secret)
            .await
            .map_err(|f| errors::endpoint_failed(&f))?;
        webhooks.verified(&owner.key, p.url.as_str());
    }
    let engine = Arc::clone(daemon.engine());
    let start_sub = sub.clone();
    let (cursor, max_age) = (p.cursor, p.max_age_ms);
    let start = tokio::task::spawn_blocking(move || engine.start(&start_sub, cursor, max_age))
        .await
        .map_err(|e| ErrorData::internal_error(format!("blocking task failed: {e}"), None))?;
    let (resolved, truncated) = match start {
        Ok(start) => (Some(start.cursor), start.truncated),
        // The store cannot be read now: delivery resolves the start once it is back.
        Err(tidings_core::RequestError::Store(_)) => (None, false),
        Err(refused) => return Err(request_error(refused, daemon.settings_path())),
    };
    let state = HookState::new(
        p.secret,
        refresh_before_ms,
        resolved,
        (p.cursor, p.max_age_ms),
    );
    let hook = Hook::new(id, owner, sub.event_type(), p.arguments, p.url, state);
    webhooks.insert(Arc::clone(&hook));
    daemon.subscribed(conn, sub.event_type(), &hook.arguments);
    tokio::spawn(deliver::run(daemon.clone(), Arc::clone(&hook)));
    daemon.board_changed();
    Ok(result(&hook, truncated))
}

/// Answer `events/unsubscribe`: the subscription with this key ends, with no envelope.
pub(crate) fn unsubscribe(
    daemon: &Daemon,
    conn: &Arc<ConnectionState>,
    params: &Value,
) -> Result<Value, ErrorData> {
    let p = params::unsubscribe(params, |e| request_error(e, daemon.settings_path()))?;
    if !conn.authenticated() {
        return Err(errors::unauthenticated());
    }
    let Some(ty) = EventType::from_name(&p.name) else {
        return Err(not_found_subscription());
    };
    let id = subscription_id(conn.agent().key(), &p.url, ty, &p.arguments);
    match daemon.webhooks().remove(&id) {
        Some(_) => {
            daemon.board_changed();
            Ok(json!({}))
        }
        None => Err(not_found_subscription()),
    }
}

/// The subscribe result for `hook`.
fn result(hook: &Hook, truncated: bool) -> Value {
    let s = hook.state();
    json!({
        "id": hook.id,
        "refreshBefore": s.refresh_before_ms.map(error_time),
        "cursor": s.cursor.or(s.requested.0).map(|c| c.to_string()),
        "truncated": truncated,
        "deliveryStatus": {
            "active": s.active,
            "lastDeliveryAt": s.last_delivery_ms.map(error_time),
            "lastError": s.last_error.map(tidings_webhook::Category::as_str),
            "failedSince": s.failed_since_ms.map(error_time),
        },
    })
}

/// `sub_` and 16 hex digits of SHA-256 over the key: the principal, the URL, the type and the
/// arguments as canonical JSON (object keys sorted, which `serde_json`'s map keeps). Stable
/// across refreshes and restarts; a routing handle, never accepted as input.
pub fn subscription_id(
    principal: &str,
    url: &CallbackUrl,
    ty: EventType,
    arguments: &serde_json::Map<String, Value>,
) -> String {
    let key = json!([principal, url.as_str(), ty.name(), arguments]).to_string();
    let digest = Sha256::digest(key.as_bytes());
    let mut id = String::from("sub_");
    for b in &digest[..8] {
        let _ = write!(id, "{b:02x}");
    }
    id
}
