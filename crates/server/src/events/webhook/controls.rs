//! Demo mode with `--conformance-controls` only: the conformance suite's webhook controls,
//! each a tool acting through the registry as a real request or restart would. They let a
//! harness that holds one principal and listens on loopback grade what it otherwise could
//! not: a second tenant's subscription, its own callback origin, a per-subscription gap or
//! termination, and a restart over the same store.
//!
//! Every control keeps the user's rule: a subscription made on another principal's behalf
//! must still name an origin on the list (`events_conformance_allow_callback_origin` adds one,
//! in the demo's own settings).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::Tool;
use serde_json::{Map, Value, json};
use tidings_core::EventType;
use tidings_webhook::{CallbackUrl, Secret};

use crate::daemon::Daemon;
use crate::state::now_ms;
use crate::webhooks::{Hook, HookState, MAX_PER_AGENT, Owner, params, subscription_id};

/// The restarts the controls made (`events_conformance_generation`).
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The controls' names and what each does.
const CONTROLS: [(&str, &str); 9] = [
    (
        "events_conformance_subscribe_as",
        "Register a webhook subscription on behalf of another principal ({principal, url, name, secret?}); answers its id.",
    ),
    (
        "events_conformance_allow_callback_origin",
        "Add one callback origin ({origin}) to the demo's list of webhook destinations.",
    ),
    (
        "events_conformance_subscription_exists",
        "Whether a subscription is registered: {id}, or {principal, url, name}; answers true or false.",
    ),
    (
        "events_conformance_subscription_state",
        "A subscription's state ({id}): active, suspended or absent.",
    ),
    (
        "events_conformance_webhook_gap",
        "Send a gap envelope to one subscription ({id}).",
    ),
    (
        "events_conformance_webhook_terminate",
        "End one subscription ({id}) with a terminated envelope.",
    ),
    (
        "events_conformance_restart",
        "Rebuild the webhook registry from its file, as a restart would; answers the new generation.",
    ),
    (
        "events_conformance_generation",
        "The registry's restart generation.",
    ),
    (
        "events_conformance_quota",
        "The webhook subscription cap per principal, as {\"name\", \"max\"}.",
    ),
];

/// The webhook controls, for `tools/list`.
pub fn tools() -> Vec<Tool> {
    let schema = match json!({"type": "object", "additionalProperties": true}) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    CONTROLS
        .iter()
        .map(|(name, description)| Tool::new(*name, *description, schema.clone()))
        .collect()
}

/// Whether `name` is one of them.
pub fn is_control(name: &str) -> bool {
    CONTROLS.iter().any(|(n, _)| *n == name)
}

/// Run control `name`: `Ok` text for the tool's answer, `Err` a message for a tool error.
pub async fn call(
    daemon: &Daemon,
    name: &str,
    args: &Map<String, Value>,
) -> Result<String, String> {
    let webhooks = daemon.webhooks();
    match name {
        "events_conformance_subscribe_as" => subscribe_as(daemon, args),
        "events_conformance_allow_callback_origin" => {
            let origin = text(args, "origin").ok_or("origin is required")?;
            daemon
                .allow_destination(&origin)
                .map_err(|e| e.to_string())?;
            Ok(format!("allowed {origin}"))
        }
        "events_conformance_subscription_exists" => {
            let id = if let Some(id) = text(args, "id") {
                id
            } else {
                key_id(args)?
            };
            Ok(webhooks.get(&id).is_some().to_string())
        }
        "events_conformance_subscription_state" => {
            let id = text(args, "id").ok_or("id is required")?;
            Ok(match webhooks.get(&id) {
                Some(h) if h.state().active => "active",
                Some(_) => "suspended",
                None => "absent",
            }
            .to_owned())
        }
        "events_conformance_webhook_gap" => {
            let id = text(args, "id").ok_or("id is required")?;
            let hook = webhooks.get(&id).ok_or("no such subscription")?;
            hook.state().gap = true;
            hook.nudge.notify_one();
            Ok("gap sent".into())
        }
        "events_conformance_webhook_terminate" => {
            let id = text(args, "id").ok_or("id is required")?;
            daemon.end_webhook(&id).await.map_err(|e| e.to_string())?;
            Ok("terminated".into())
        }
        "events_conformance_restart" => {
            webhooks.reload();
            super::start(daemon);
            Ok((GENERATION.fetch_add(1, Ordering::Relaxed) + 1).to_string())
        }
        "events_conformance_generation" => Ok(GENERATION.load(Ordering::Relaxed).to_string()),
        "events_conformance_quota" => Ok(json!({
            "name": EventType::MailReceived.name(),
            "max": MAX_PER_AGENT
        })
        .to_string()),
        _ => Err(format!("unknown control `{name}`")),
    }
}

/// `events_conformance_subscribe_as`: a subscription on behalf of `principal`, to an origin
/// on the list; its id. The harness's other tenant is never verified with a challenge.
fn subscribe_as(daemon: &Daemon, args: &Map<String, Value>) -> Result<String, String> {
    let webhooks = daemon.webhooks();
    let principal = text(args, "principal").ok_or("principal (a string) is required")?;
    let url = callback(args)?;
    let ty = event_type(text(args, "name").as_deref())?;
    if !daemon.settings_arc().webhooks.allows(url.origin()) {
        return Err(format!(
            "{} is not on the list of destinations",
            url.origin()
        ));
    }
    if webhooks.count_for(&principal) >= MAX_PER_AGENT {
        return Err("the principal holds the most subscriptions allowed".into());
    }
    let secret = text(args, "secret").unwrap_or_else(|| DEFAULT_SECRET.to_owned());
    let secret = Secret::parse(&secret).map_err(|e| e.to_string())?;
    let arguments = arguments(args);
    let id = subscription_id(&principal, &url, ty, &arguments);
    if webhooks.get(&id).is_none() {
        let owner = Owner {
            key: principal.clone(),
            id: principal.clone(),
            name: principal,
        };
        let ttl = Some(now_ms() + params::DEFAULT_TTL_MS);
        let state = HookState::new(secret, ttl, None, (None, None));
        let hook = Hook::new(id.clone(), owner, ty, arguments, url, state);
        if webhooks.insert(Arc::clone(&hook)).is_none() {
            super::spawn(daemon, hook);
        }
    }
    Ok(id)
}

/// The id of the key `{principal, url, name, arguments}` names.
fn key_id(args: &Map<String, Value>) -> Result<String, String> {
    let principal = text(args, "principal").ok_or("id, or principal, url and name")?;
    let ty = event_type(text(args, "name").as_deref())?;
    Ok(subscription_id(
        &principal,
        &callback(args)?,
        ty,
        &arguments(args),
    ))
}

/// The secret a `subscribe_as` without one signs with (the Standard Webhooks test vector's).
const DEFAULT_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

fn text(args: &Map<String, Value>, key: &str) -> Option<String> {
    args.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn callback(args: &Map<String, Value>) -> Result<CallbackUrl, String> {
    CallbackUrl::parse(&text(args, "url").ok_or("url is required")?).map_err(|e| e.to_string())
}

fn arguments(args: &Map<String, Value>) -> Map<String, Value> {
    args.get("arguments")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn event_type(name: Option<&str>) -> Result<EventType, String> {
    name.and_then(EventType::from_name)
        .ok_or_else(|| "name must be mail.received or messages.received".to_owned())
}
