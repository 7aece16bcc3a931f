//! The delivery task of one subscription: from its cursor, each event the subscription's
//! agent may see goes out as a signed POST, in order, one at a time; a failed POST is retried
//! with backoff (a fresh timestamp and signature each time), and when the retries run out the
//! subscription is suspended where it stands, nothing skipped, until a refresh or the
//! periodic retry gets through. 410 and 413 give up on that one event.
//!
//! Each subscription has its own task, and a POST is bounded by the poster's timeouts, so a
//! receiver that hangs or crawls holds back only its own subscription. The task reads at
//! most [`BATCH`] events at a time and holds nothing else, so a burst to a stuck receiver
//! waits in the store, not in memory.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use serde_json::{Value, json};
use tidings_core::{Cursor, RequestError, Settings, Subscription};
use tidings_webhook::Verdict;

use crate::agents::Agent;
use crate::daemon::Daemon;
use crate::events::errors::{allowlist_removed, type_turned_off};
use crate::state::now_ms;
use crate::webhooks::Hook;
use crate::webhooks::send::{self, event_message_id};

/// The most events read from the store per step.
pub const BATCH: u32 = 100;
/// The waits between the attempts at one event: five attempts over about a minute and a half.
pub const BACKOFF: [Duration; 4] = [
    Duration::from_secs(1),
    Duration::from_secs(4),
    Duration::from_secs(16),
    Duration::from_secs(60),
];
/// How often a suspended subscription tries its next event again.
pub const SUSPENDED_RETRY: Duration = Duration::from_secs(5 * 60);
/// How often an idle subscription looks at its TTL and at the settings, wakes aside.
const RECHECK: Duration = Duration::from_secs(60);
/// The longest Retry-After honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);
/// The largest body posted; a larger event is given up on and a gap is sent in its place.
pub const MAX_BODY: usize = 256 * 1024;

/// How one event's delivery ended.
enum Sent {
    /// Accepted, or given up on (410, 413): move past it.
    Past,
    /// The attempts ran out: the subscription is suspended before it.
    Suspended,
    /// The subscription ended meanwhile.
    Ended,
}

/// Deliver `hook` until it ends.
pub async fn run(daemon: Daemon, hook: Arc<Hook>) {
    let mut wake = daemon.hub().wake_receiver(hook.event_type);
    let mut settings_rx = daemon.settings_receiver();
    let agent = hook.owner.agent();
    loop {
        if hook.ended.is_cancelled() {
            return;
        }
        if hook.expired(now_ms()) {
            tracing::debug!(event_type = %hook.event_type, "webhook subscription expired");
            daemon.webhooks().remove(&hook.id);
            return;
        }
        settings_rx.borrow_and_update();
        let settings = daemon.settings_for_agent(&agent);
        let sub = match allowed(&daemon, &agent, &hook, &settings) {
            Ok(sub) => sub,
            Err(error) => {
                daemon.webhooks().terminate(&hook, &error).await;
                return;
            }
        };
        let suspended = !hook.state().active;
        if suspended {
            // Wait for a refresh (which reactivates) or the periodic retry.
            tokio::select! {
                () = hook.ended.cancelled() => return,
                () = hook.nudge.notified() => continue,
                () = tokio::time::sleep(SUSPENDED_RETRY) => {}
                _ = settings_rx.changed() => continue,
            }
        }
        wake.borrow_and_update();
        let before = hook.state().mark();
        let more = match step(
            &daemon,
            &hook,
            &sub,
            if suspended { 1 } else { BACKOFF.len() + 1 },
        )
        .await
        {
            Step::More => true,
            Step::Idle => false,
            Step::Ended => return,
        };
        // Only a step that moved something is written (an idle wake-up every minute is not).
        if hook.state().mark() != before {
            daemon.webhooks().changed();
            daemon.board_changed();
        }
        if more {
            continue;
        }
        tokio::select! {
            () = hook.ended.cancelled() => return,
            () = hook.nudge.notified() => {}
            _ = wake.changed() => {}
            _ = settings_rx.changed() => {}
            () = tokio::time::sleep(RECHECK) => {}
        }
    }
}

/// What a step did.
enum Step {
    /// Read again at once.
    More,
    /// Wait for the next wake.
    Idle,
    /// The subscription ended.
    Ended,
}

/// One read and its deliveries, each event with at most `attempts` attempts.
async fn step(daemon: &Daemon, hook: &Arc<Hook>, sub: &Subscription, attempts: usize) -> Step {
    let engine = Arc::clone(daemon.engine());
    let Some(cursor) = resolve_start(daemon, hook, sub).await else {
        return Step::Idle;
    };
    let read_sub = sub.clone();
    let batch =
        match tokio::task::spawn_blocking(move || engine.next(&read_sub, cursor, BATCH)).await {
            Ok(Ok(batch)) => batch,
            Ok(Err(e)) => {
                tracing::debug!(event_type = %hook.event_type, error = %e, "webhook read failed");
                return Step::Idle;
            }
            Err(_) => return Step::Idle,
        };
    if batch.truncated {
        hook.state().gap = true;
    }
    if hook.state().gap {
        // Where delivery goes on from: the replaced store's head, or (an event given up on,
        // the conformance control) where it stands, before this batch's events.
        let at = if batch.truncated {
            batch.cursor
        } else {
            cursor
        };
        let body = json!({"type": "gap", "cursor": at.to_string()}).to_string();
        match deliver(
            daemon,
            hook,
            &send::control_id("gap"),
            body.as_bytes(),
            attempts,
        )
        .await
        {
            Sent::Past => {
                let mut s = hook.state();
                s.gap = false;
                if batch.truncated {
                    s.cursor = Some(batch.cursor);
                    return Step::More;
                }
            }
            Sent::Suspended => return Step::Idle,
            Sent::Ended => return Step::Ended,
        }
    }
    for event in batch.events {
        let after: Option<Cursor> = event.cursor.parse().ok();
        let id = event_message_id(&event.event_id);
        let body = match serde_json::to_vec(&Value::from(event)) {
            Ok(b) if b.len() <= MAX_BODY => b,
            _ => {
                // Too large to post (or not encodable): given up on, and the receiver told.
                let mut s = hook.state();
                s.gap = true;
                s.cursor = after.or(s.cursor);
                continue;
            }
        };
        match deliver(daemon, hook, &id, &body, attempts).await {
            Sent::Past => {
                let mut s = hook.state();
                s.cursor = after.or(s.cursor);
            }
            Sent::Suspended => return Step::Idle,
            Sent::Ended => return Step::Ended,
        }
    }
    {
        let mut s = hook.state();
        if !s.gap {
            s.cursor = Some(batch.cursor);
        }
    }
    if batch.has_more {
        Step::More
    } else {
        Step::Idle
    }
}

/// The cursor to read after: the subscription's, or its start resolved now (the store could
/// not be read when it was made). `None`: still unresolved.
async fn resolve_start(daemon: &Daemon, hook: &Hook, sub: &Subscription) -> Option<Cursor> {
    let (cursor, requested) = {
        let s = hook.state();
        (s.cursor, s.requested)
    };
    if cursor.is_some() {
        return cursor;
    }
    let engine = Arc::clone(daemon.engine());
    let sub = sub.clone();
    let start = tokio::task::spawn_blocking(move || engine.start(&sub, requested.0, requested.1))
        .await
        .ok()?
        .ok()?;
    let mut s = hook.state();
    s.cursor = Some(start.cursor);
    s.gap |= start.truncated;
    Some(start.cursor)
}

/// POST one body with up to `attempts` attempts.
async fn deliver(daemon: &Daemon, hook: &Hook, id: &str, body: &[u8], attempts: usize) -> Sent {
    let poster = daemon.webhooks().poster();
    for attempt in 0..attempts {
        let secrets = hook.signing_secrets();
        let (verdict, retry_after) = tokio::select! {
            () = hook.ended.cancelled() => return Sent::Ended,
            v = send::post(poster, &hook.url, &hook.id, &secrets, id, body) => v,
        };
        let (failure, retry_after) = match verdict {
            Verdict::Delivered => {
                let mut s = hook.state();
                s.delivered();
                s.active = true;
                return Sent::Past;
            }
            Verdict::Skip(failure) => {
                tracing::debug!(event_type = %hook.event_type, category = failure.category.as_str(), "webhook delivery given up (non-retryable)");
                hook.state().failed(failure.category);
                return Sent::Past;
            }
            Verdict::Retry(failure) => (failure, retry_after),
        };
        tracing::debug!(event_type = %hook.event_type, category = failure.category.as_str(), attempt, "webhook delivery failed");
        hook.state().failed(failure.category);
        daemon.board_changed();
        let Some(wait) = BACKOFF.get(attempt).copied() else {
            break;
        };
        if attempt + 1 >= attempts {
            break;
        }
        let wait = retry_after.unwrap_or(wait).min(MAX_RETRY_AFTER);
        tokio::select! {
            () = hook.ended.cancelled() => return Sent::Ended,
            () = tokio::time::sleep(jitter(wait)) => {}
        }
    }
    hook.state().active = false;
    tracing::info!(event_type = %hook.event_type, "webhook subscription suspended after failed deliveries");
    Sent::Suspended
}

/// `wait` plus up to a fifth more, so subscriptions that failed together retry apart.
fn jitter(wait: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    wait + wait / 5 * (nanos % 1000) / 1000
}

/// Whether the subscription may still deliver under `settings`: its agent not denied, its
/// destination still on the list, its type on and its senders allowed.
fn allowed(
    daemon: &Daemon,
    agent: &Agent,
    hook: &Hook,
    settings: &Settings,
) -> Result<Subscription, ErrorData> {
    if let Some(denied) = daemon.agent_denied(agent) {
        return Err(denied);
    }
    if !settings.webhooks.allows(hook.url.origin()) {
        return Err(crate::webhooks::errors::destination_removed(
            hook.url.origin(),
        ));
    }
    Subscription::new(hook.event_type.name(), &hook.arguments, settings).map_err(|e| match e {
        RequestError::NotFound { .. } | RequestError::Disabled { .. } => {
            type_turned_off(hook.event_type)
        }
        _ => allowlist_removed(hook.event_type),
    })
}
