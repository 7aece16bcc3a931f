//! `events/stream`: validate, take a place under the caps, confirm with `active`, then deliver
//! until the client cancels (over HTTP: drops the response), the connection goes, the daemon
//! shuts down, or settings or a token rotation end the subscription (`terminated`).
//!
//! The loop: `engine.next(sub, cursor, 100)` on the blocking pool, send the events, advance
//! the cursor; with `has_more` go again at once, else wait on the hub's wake for this store,
//! the heartbeat timer, a settings change, or cancellation.
//!
//! Only `NotFound`, Forbidden, `InvalidParams`, Unsupported and `ResourceExhausted` refuse a stream.
//! A store that cannot be read when the stream opens is a passing condition, not a refusal:
//! the stream opens with `active` on the client's own cursor, reports the failure with
//! `notifications/events/error`, and resolves its start on each wake or heartbeat until the
//! store is back (see [`Stream::resolve`]).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CustomResult, RequestId};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use tidings_core::{
    Cursor, Engine, RequestError, Settings, Start, StoreError, Subscription, SubscriptionParams,
};
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use super::errors::{
    allowlist_removed, error_object, refused, request_error, revoked, store_error, type_turned_off,
};
use super::wire::{blocking, final_result, notify};
use crate::clients::{ConnectionState, Revocation, Subscribed, filter_summary, sender_of};
use crate::daemon::Daemon;
use crate::hub::LATENCY;
use crate::state::Mode;

/// The request `_meta` key with which `tidings-mcp --channel` marks its streams, so the app
/// lists them as `channel` rather than `push` (docs/decisions/channel.md). A label only: it
/// changes nothing about what the stream may receive.
pub const CHANNEL_META: &str = "dev.tidings/channel";

/// Events per engine call: bounded work between checks for cancellation.
const BATCH: u32 = tidings_core::poll::DEFAULT_MAX_EVENTS;

/// Serve one `events/stream` request to its end.
#[allow(clippy::too_many_lines)] // one loop, read top to bottom; its steps are the functions below
pub async fn stream(
    daemon: &Daemon,
    conn: &Arc<ConnectionState>,
    params: Value,
    ctx: RequestContext<RoleServer>,
) -> Result<CustomResult, ErrorData> {
    // Everything that can refuse the subscription runs before the first notification, so a
    // refusal is a plain JSON-RPC error and no stream opens.
    let params =
        SubscriptionParams::parse(&params).map_err(|e| request_error(e, daemon.settings_path()))?;
    let mut settings_rx = daemon.settings_receiver();
    let settings = settings_rx.borrow_and_update().clone();
    let sub = Subscription::new(&params.name, &params.arguments, &settings)
        .map_err(|e| request_error(e, daemon.settings_path()))?;
    let _slot = conn.acquire(&ctx.id).map_err(refused)?;
    // Subscribe to wake-ups before reading the start, so no change falls in between.
    let mut wake = daemon.hub().wake_receiver(sub.event_type());
    wake.borrow_and_update();
    let engine = Arc::clone(daemon.engine());
    let mode = if ctx.meta.get(CHANNEL_META) == Some(&Value::Bool(true)) {
        Mode::Channel
    } else {
        Mode::Push
    };
    let mut s = Stream {
        peer: ctx.peer.clone(),
        id: ctx.id.clone(),
        cancelled: ctx.ct.clone(),
        engine,
        sub,
        cursor: None,
        requested: (params.cursor, params.max_age_ms),
        last_error: None,
        generation: 0,
        settings_file: daemon.settings_path().to_owned(),
        tracked: conn.subscribe(
            params.name.as_str(),
            filter_summary(&params.arguments),
            mode,
        ),
    };
    let (cursor, truncated, failure) = match s.start().await? {
        Ok(start) => {
            s.cursor = Some(start.cursor);
            (Some(start.cursor), start.truncated, None)
        }
        Err(RequestError::Store(e)) => (params.cursor, false, Some(e)),
        Err(refused) => return Err(request_error(refused, daemon.settings_path())),
    };
    tracing::debug!(event_type = %s.sub.event_type(), resolved = failure.is_none(), "stream opened");
    if !s
        .send(
            "notifications/events/active",
            json!({"cursor": cursor.map(|c| c.to_string()), "truncated": truncated}),
        )
        .await
    {
        return Ok(final_result(&s.id));
    }
    if let Some(e) = failure
        && !s.report(&e).await
    {
        return Ok(final_result(&s.id));
    }
    let period = daemon.limits().heartbeat;
    let mut heartbeat = tokio::time::interval_at(Instant::now() + period, period);
    heartbeat.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let shutdown = daemon.shutdown_token().clone();
    let mut beat = false;
    loop {
        s.generation = *wake.borrow_and_update();
        if !s.drain().await {
            return Ok(final_result(&s.id));
        }
        if beat {
            beat = false;
            let cursor = s.safe_cursor().map(|c| c.to_string());
            if !s
                .send("notifications/events/heartbeat", json!({"cursor": cursor}))
                .await
            {
                return Ok(final_result(&s.id));
            }
        }
        tokio::select! {
            biased;
            () = ctx.ct.cancelled() => return Ok(final_result(&s.id)),
            () = conn.closed.cancelled() => return Ok(final_result(&s.id)),
            () = shutdown.cancelled() => return Ok(final_result(&s.id)),
            () = conn.revoked.cancelled() => {
                let why = conn.revocation().unwrap_or(Revocation::ByUser);
                tracing::debug!(event_type = %s.sub.event_type(), ?why, "stream terminated: revoked");
                s.send(
                    "notifications/events/terminated",
                    json!({"error": error_object(&revoked(why))}),
                )
                .await;
                return Ok(final_result(&s.id));
            }
            changed = settings_rx.changed() => {
                if changed.is_err() {
                    return Ok(final_result(&s.id));
                }
                let settings = settings_rx.borrow_and_update().clone();
                if let Err(ended) = s.revalidate(&params, &settings) {
                    tracing::debug!(event_type = %s.sub.event_type(), code = ended.code.0, "stream terminated by settings");
                    s.send(
                        "notifications/events/terminated",
                        json!({"error": error_object(&ended)}),
                    )
                    .await;
                    return Ok(final_result(&s.id));
                }
            }
            changed = wake.changed() => {
                if changed.is_err() {
                    return Ok(final_result(&s.id));
                }
            }
            _ = heartbeat.tick() => beat = true,
        }
    }
}

struct Stream {
    peer: rmcp::Peer<RoleServer>,
    id: RequestId,
    cancelled: CancellationToken,
    engine: Arc<Engine>,
    sub: Subscription,
    /// Everything up to here was delivered or skipped: safe for the client to persist. `None`
    /// until the start is resolved (the store failed when the stream opened).
    cursor: Option<Cursor>,
    /// The client's cursor and `maxAgeMs`, to resolve the start from once the store is back.
    requested: (Option<Cursor>, Option<u64>),
    /// The store failure already reported, so each distinct failure is sent once.
    last_error: Option<(&'static str, String)>,
    /// The hub's generation of the store when this drain began, for the latency trace.
    generation: u64,
    /// `settings.toml`, named in refusals that tell the user what to change.
    settings_file: std::path::PathBuf,
    /// This stream's entry in its client's subscriptions (delivery counts, activity).
    tracked: Subscribed,
}

impl Stream {
    /// Send one notification unless the request was cancelled; false when the stream must
    /// end (cancelled, or the connection is gone).
    async fn send(&self, method: &str, params: Value) -> bool {
        if self.cancelled.is_cancelled() {
            return false;
        }
        notify(&self.peer, &self.id, method, params).await.is_ok()
    }

    /// The position a heartbeat may hand out: the resolved cursor, or until then the client's
    /// own (it is what the client already holds, so it stays safe to persist).
    fn safe_cursor(&self) -> Option<Cursor> {
        self.cursor.or(self.requested.0)
    }

    /// `engine.start` from the client's cursor, on the blocking pool.
    async fn start(&self) -> Result<Result<Start, RequestError>, ErrorData> {
        let (engine, sub) = (self.engine.clone(), self.sub.clone());
        let (cursor, max_age) = self.requested;
        blocking(move || engine.start(&sub, cursor, max_age)).await
    }

    /// Send `notifications/events/error` for a store failure, once per distinct failure.
    async fn report(&mut self, e: &StoreError) -> bool {
        let key = (e.reason(), e.to_string());
        if self.last_error.as_ref() == Some(&key) {
            return true;
        }
        tracing::debug!(event_type = %self.sub.event_type(), error = %e, "stream store error");
        self.last_error = Some(key);
        let error = error_object(&store_error(e));
        self.send("notifications/events/error", json!({"error": error}))
            .await
    }

    /// Resolve the start of a stream that opened while its store failed. Ok(true) once
    /// resolved (a `truncated` start re-sends `active` with the fresh cursor; an untruncated
    /// one is where the client's cursor said, so nothing more is due); Ok(false) while the
    /// store still fails; Err(()) when the stream must end: the connection is gone, or the
    /// store came back and refused the subscription (an unknown mailbox), which ends it
    /// with `terminated`.
    async fn resolve(&mut self) -> Result<bool, ()> {
        let start = match self.start().await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e.message, "stream start failed");
                return Ok(false);
            }
        };
        match start {
            Ok(start) => {
                self.cursor = Some(start.cursor);
                self.last_error = None;
                if start.truncated {
                    let cursor = start.cursor.to_string();
                    let active = json!({"cursor": cursor, "truncated": true});
                    if !self.send("notifications/events/active", active).await {
                        return Err(());
                    }
                }
                Ok(true)
            }
            Err(RequestError::Store(e)) => {
                if self.report(&e).await {
                    Ok(false)
                } else {
                    Err(())
                }
            }
            Err(refused) => {
                let error = error_object(&request_error(refused, &self.settings_file));
                tracing::debug!(event_type = %self.sub.event_type(), "stream terminated at start");
                self.send("notifications/events/terminated", json!({"error": error}))
                    .await;
                Err(())
            }
        }
    }

    /// Deliver everything after the cursor. A store failure is reported once and retried on
    /// the next wake or heartbeat; a gap re-sends `active` with `truncated: true`.
    async fn drain(&mut self) -> bool {
        if self.cursor.is_none() {
            match self.resolve().await {
                Ok(true) => {}
                Ok(false) => return true,
                Err(()) => return false,
            }
        }
        loop {
            if self.cancelled.is_cancelled() {
                return false;
            }
            let Some(after) = self.cursor else {
                return true;
            };
            let (engine, sub) = (self.engine.clone(), self.sub.clone());
            let batch = match blocking(move || engine.next(&sub, after, BATCH)).await {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(error = %e.message, "stream step failed");
                    return true;
                }
            };
            let batch = match batch {
                Ok(batch) => batch,
                Err(e) => return self.report(&e).await,
            };
            self.last_error = None;
            let ty = self.sub.event_type();
            let rows = batch.events.len();
            tracing::debug!(target: LATENCY, event_type = %ty, generation = self.generation, rows, "latency: rows read");
            if batch.truncated {
                self.cursor = Some(batch.cursor);
                let cursor = batch.cursor.to_string();
                if !self
                    .send(
                        "notifications/events/active",
                        json!({"cursor": cursor, "truncated": true}),
                    )
                    .await
                {
                    return false;
                }
                continue;
            }
            for event in batch.events {
                let params = match serde_json::to_value(&event) {
                    Ok(v) => v,
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot encode an occurrence; skipped");
                        continue;
                    }
                };
                if !self.send("notifications/events/event", params).await {
                    return false;
                }
                self.tracked.delivered(event.name, &sender_of(&event.data));
            }
            if rows > 0 {
                tracing::debug!(target: LATENCY, event_type = %ty, generation = self.generation, frames = rows, "latency: frames written");
            }
            self.cursor = Some(batch.cursor);
            if !batch.has_more {
                return true;
            }
        }
    }

    /// Rebuild the subscription from its original parameters under new settings. Err is the
    /// `terminated` error: `NotFound` when the type was turned off, Forbidden when the
    /// subscription is no longer bounded by a sender.
    fn revalidate(
        &mut self,
        params: &SubscriptionParams,
        settings: &Settings,
    ) -> Result<(), ErrorData> {
        let ty = self.sub.event_type();
        match Subscription::new(&params.name, &params.arguments, settings) {
            Ok(sub) => {
                self.sub = sub;
                Ok(())
            }
            Err(RequestError::NotFound { .. } | RequestError::Disabled { .. }) => {
                Err(type_turned_off(ty))
            }
            Err(_) => Err(allowlist_removed(ty)),
        }
    }
}
