//! `events/subscribe` and `events/unsubscribe`. A subscribe is checked as a poll is (the
//! params, the agent's grant, the type and its senders), then against the user's list of
//! destinations; a new (principal, url) is verified with a challenge before anything is
//! delivered to it. The same key again is a refresh: the secret replaced, the TTL re-granted,
//! delivery reactivated.

use std::sync::Arc;

use rmcp::ErrorData;
use serde_json::{Value, json};
use tidings_core::{EventType, Subscription};

use crate::clients::ConnectionState;
use crate::daemon::Daemon;
use crate::events::errors::{
    daemon_request_error, not_found_subscription, request_error, utc_time as error_time,
};
use crate::notices::Notice;
use crate::state::now_ms;
use crate::webhooks::{Hook, HookState, Owner, errors, params, send, subscription_id};

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
        return Ok(refresh(daemon, &hook, p.secret, refresh_before_ms));
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
    let secret = state.secret.clone();
    let hook = Hook::new(id, owner, sub.event_type(), p.arguments, p.url, state);
    if let Some(there) = webhooks.insert(Arc::clone(&hook)) {
        // The same key subscribed twice at once: the first one made is refreshed.
        return Ok(refresh(daemon, &there, secret, refresh_before_ms));
    }
    daemon.subscribed(conn, sub.event_type(), &hook.arguments);
    super::spawn(daemon, Arc::clone(&hook));
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

/// A refresh of `hook`: the secret replaced, the TTL granted anew, delivery reactivated; the
/// cursor stays where delivery stands.
fn refresh(
    daemon: &Daemon,
    hook: &Hook,
    secret: tidings_webhook::Secret,
    refresh_before_ms: Option<u64>,
) -> Value {
    hook.state().refresh(secret, refresh_before_ms);
    hook.nudge.notify_one();
    daemon.webhooks().save();
    daemon.board_changed();
    result(hook, false)
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
