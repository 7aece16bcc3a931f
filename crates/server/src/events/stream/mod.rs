//! `events/stream`: validate, take a place under the caps, confirm with `active`, then deliver
//! until the client cancels (over HTTP: drops the response), the connection goes, the daemon
//! shuts down, or settings or a token rotation end the subscription (`terminated`).
//!
//! The loop: each [`Step`] reads the next batch (from the fan-out's shared read once the stream
//! is at the head, else `engine.next(sub, cursor, 100)` on the blocking pool) and writes
//! the events, moving the cursor only past events written (one that cannot be encoded holds
//! the stream before it); with `has_more` it goes again at once, else it waits on the hub's
//! wake for this store, the heartbeat timer, a settings change, or cancellation, until an
//! [`End`].
//!
//! On a socket connection a stream writes its notifications itself, as whole frames, to the
//! connection's writer queue (behind what it sent before; rmcp's final result comes after
//! them all), and an event from a shared read is encoded to JSON once for every stream
//! ([`crate::fanout::SharedRead::encoded`]): a commit fanned out to a thousand streams is one
//! read, one encoding and a thousand copies. While such a stream waits at the head it parks at its
//! connection's head ([`crate::heads`]), whose one task writes the changes for every stream
//! of the connection in one write, and hands the stream back whatever it cannot finish alone.
//! Over HTTP, notifications go through rmcp as before.
//!
//! Only `NotFound`, Forbidden, `InvalidParams`, Unsupported and `ResourceExhausted` refuse a stream.
//! A store that cannot be read when the stream opens is a passing condition, not a refusal:
//! the stream opens with `active` on the client's own cursor, reports the failure with
//! `notifications/events/error`, and resolves its start on each wake or heartbeat until the
//! store is back (see [`Stream::resolve`]).
//!
//! Its parts: `wire` (where the notifications go, within the write deadline), `read` (the
//! shared reads at the head, else core on the blocking pool) and `batch` (what a step read,
//! how writing it went, and the cursor safe after it).

mod batch;
mod read;
mod wire;

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::CustomResult;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tidings_core::{
    Cursor, Engine, EventType, RequestError, Settings, StoreError, Subscription, SubscriptionParams,
};
use tidings_protocol::errors::reason;
use tidings_protocol::payloads::{Active, ErrorNote, Heartbeat};
use tidings_protocol::{meta, notifications};
use tokio::sync::watch;
use tokio::time::{Instant, MissedTickBehavior};

use super::errors::{
    NOT_FOUND, allowlist_removed, daemon_request_error, error_object, paused_until, refused,
    request_error, revoked, store_error, type_paused, type_turned_off,
};
use super::wire::final_result;
use crate::clients::{ConnectionState, Revocation, Subscribed, filter_summary, sender_of};
use crate::daemon::Daemon;
use crate::fanout::Fanout;
use crate::heads::{self, Back, Head, Ticket};
use crate::hub::LATENCY;
use crate::state::Mode;
use batch::{Item, Written, cursor_after, write_events};
use read::Read;
use wire::{Wire, unencodable};

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
    // The agent's grant first: an agent with none may wait here for the user's answer,
    // holding no stream slot.
    if let Some(ty) = EventType::from_name(&params.name) {
        daemon.agent_gate(conn, ty, &params.arguments).await?;
    }
    let mut settings_rx = daemon.settings_receiver();
    settings_rx.borrow_and_update();
    let settings = daemon.settings_for(conn);
    let sub = Subscription::new(&params.name, &params.arguments, &settings)
        .map_err(|e| daemon_request_error(e, daemon))?;
    let _slot = conn.acquire(&ctx.id).map_err(refused)?;
    daemon.subscribed(conn, sub.event_type(), &params.arguments);
    // Subscribe to wake-ups before reading the start, so no change falls in between.
    let mut wake = daemon.hub().wake_receiver(sub.event_type());
    wake.borrow_and_update();
    let engine = Arc::clone(daemon.engine());
    // The channel's label (docs/decisions/channel.md).
    let mode = if ctx.meta.get(meta::CHANNEL) == Some(&Value::Bool(true)) {
        Mode::Channel
    } else {
        Mode::Push
    };
    let mut s = Stream {
        fanout: Arc::clone(daemon.fanout()),
        wake: wake.clone(),
        at_head: false,
        shared: daemon.limits().shared_reads,
        wire: Wire {
            peer: ctx.peer.clone(),
            id: ctx.id.clone(),
            id_json: ctx.id.clone().into_json_value().to_string(),
            cancelled: ctx.ct.clone(),
            deadline: daemon.limits().write_deadline,
            direct: conn.direct(),
        },
        engine,
        sub,
        cursor: None,
        requested: (params.cursor, params.max_age_ms),
        last_error: None,
        generation: 0,
        settings_file: daemon.settings_path().to_owned(),
        tracked: Arc::new(conn.subscribe(
            params.name.as_str(),
            filter_summary(&params.arguments),
            mode,
        )),
    };
    let (cursor, truncated, failure) = match s.start().await {
        Read::Done(start) => {
            s.cursor = Some(start.cursor);
            (Some(start.cursor), start.truncated, None)
        }
        Read::Failed(RequestError::Store(e)) => (params.cursor, false, Some(e)),
        Read::Failed(refused) => return Err(request_error(refused, daemon.settings_path())),
        Read::Lost(e) => return Err(e),
    };
    tracing::debug!(event_type = %s.sub.event_type(), resolved = failure.is_none(), "stream opened");
    // Logs "stream ended" however the stream goes, rmcp dropping this future included.
    let mut ended = EndLog {
        event_type: s.sub.event_type(),
        end: None,
    };
    let active = Active {
        cursor: cursor.map(|c| c.to_string()),
        truncated,
    };
    if s.send(notifications::ACTIVE, active).await.is_err() {
        return Ok(final_result(&s.wire.id));
    }
    if let Some(e) = failure
        && s.report_store(&e).await.is_err()
    {
        return Ok(final_result(&s.wire.id));
    }
    let period = daemon.limits().heartbeat;
    let mut heartbeat = tokio::time::interval_at(Instant::now() + period, period);
    heartbeat.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut beat = false;
    // Made once, not on each turn: a thousand streams woken by one commit would otherwise
    // each join and leave three waiter lists per turn. The daemon's shutdown is not waited
    // on here: it cancels `conn.closed`, a child of it (one waiter list shared by every
    // stream in the process was the costliest of them).
    let cancelled = ctx.ct.cancelled();
    let closed = conn.closed.cancelled();
    let revoked_by = conn.revoked.cancelled();
    tokio::pin!(cancelled, closed, revoked_by);
    let end = loop {
        s.generation = *wake.borrow_and_update();
        if let Err(end) = s.drain().await {
            break end;
        }
        if beat {
            beat = false;
            let cursor = s.safe_cursor().map(|c| c.to_string());
            if let Err(end) = s.send(notifications::HEARTBEAT, Heartbeat { cursor }).await {
                break end;
            }
        }
        // At the head of a socket connection, the connection's one task writes the changes
        // (crate::heads); this task sleeps until something only it can do.
        let ticket = s.park(conn, &wake, &settings_rx);
        let woke = tokio::select! {
            biased;
            () = &mut cancelled => Woke::Closed,
            () = &mut closed => Woke::Closed,
            () = &mut revoked_by => Woke::Revoked,
            changed = settings_rx.changed() => if changed.is_ok() { Woke::Settings } else { Woke::Closed },
            changed = wake.changed(), if ticket.is_none() => if changed.is_ok() { Woke::Store } else { Woke::Closed },
            () = handed_back(ticket.as_ref()) => Woke::Store,
            _ = heartbeat.tick() => Woke::Beat,
        };
        if let Some(ticket) = ticket {
            let (cursor, back) = ticket.take_back().await;
            s.cursor = Some(cursor);
            if back == Some(Back::Closed) {
                break End::Closed;
            }
        }
        match woke {
            Woke::Closed => break End::Closed,
            Woke::Revoked => {
                let why = conn.revocation().unwrap_or(Revocation::ByUser);
                tracing::debug!(event_type = %s.sub.event_type(), ?why, "stream terminated: revoked");
                break s.terminate(&revoked(why)).await;
            }
            Woke::Settings => {
                settings_rx.borrow_and_update();
                // Denied by the user: the stream ends now, as a revoked client's does.
                if let Some(refused) = daemon.agent_refused(conn) {
                    tracing::debug!(event_type = %s.sub.event_type(), "stream terminated: agent denied");
                    break s.terminate(&refused).await;
                }
                let settings = daemon.settings_for(conn);
                if let Err(mut ended) = s.revalidate(&params, &settings) {
                    // Hidden by a pause, not turned off: say so, and until when.
                    let ty = s.sub.event_type();
                    if ended.code == NOT_FOUND
                        && let Some(until) = paused_until(daemon, ty)
                    {
                        ended = type_paused(ty, until);
                    }
                    tracing::debug!(event_type = %s.sub.event_type(), code = ended.code.0, "stream terminated by settings");
                    break s.terminate(&ended).await;
                }
            }
            Woke::Store => {}
            Woke::Beat => beat = true,
        }
    };
    ended.end = Some(end);
    Ok(final_result(&s.wire.id))
}

/// The line that says a stream ended: written when the stream's future is done or dropped
/// (rmcp drops a handler whose HTTP client hung up once its drain is over; a line written only
/// at the loop's end would then never come).
struct EndLog {
    event_type: EventType,
    /// How the loop ended; `None`: the future was dropped before it did.
    end: Option<End>,
}

impl Drop for EndLog {
    fn drop(&mut self) {
        if let Some(end) = &self.end {
            tracing::debug!(event_type = %self.event_type, ?end, "stream ended");
        } else {
            tracing::debug!(event_type = %self.event_type, "stream ended: dropped");
        }
    }
}

/// What a waiting stream woke for.
enum Woke {
    /// Cancelled, the connection went, or the daemon shuts down.
    Closed,
    /// The client's credential was revoked.
    Revoked,
    /// The settings changed.
    Settings,
    /// The store changed, or the connection's head handed the stream back.
    Store,
    /// Time for a heartbeat.
    Beat,
}

/// Resolves when the head hands the parked stream back; never without a ticket.
async fn handed_back(ticket: Option<&Ticket>) {
    match ticket {
        Some(ticket) => ticket.handed_back().await,
        None => std::future::pending().await,
    }
}

/// Why a stream ends. Either way its request gets the final result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The client cancelled, the connection went, or the daemon shuts down: nothing more is
    /// sent on the stream.
    Closed,
    /// `notifications/events/terminated` went out: settings or a token rotation ended the
    /// subscription, or the store came back and refused it.
    Terminated,
}

/// What one read-and-write step of [`Stream::step`] did.
#[derive(Debug, PartialEq)]
enum Step {
    /// The events read were written (maybe none) and the cursor moved past them; `more`: the
    /// store has more now, so read again at once.
    Delivered { more: bool },
    /// The store was replaced: `active` went out again with `truncated` and the new cursor;
    /// read again at once.
    Gap,
    /// Nothing more until the next wake or heartbeat: the start is not resolved yet, the store
    /// failed, or an event could not be encoded (each reported once; the cursor stays before
    /// what was not written).
    Wait,
    /// The stream ends.
    Ended(End),
}

/// Where resolving the start of a stream that opened on a failing store stands.
enum Resolution {
    /// The cursor is set; deliver from it.
    Resolved,
    /// The store still fails (reported once); try again on the next wake or heartbeat.
    Pending,
    /// The stream ends: the connection went, or the store refused the subscription.
    Ended(End),
}

struct Stream {
    /// The shared reads this stream takes its batches from once it is at the head.
    fanout: Arc<Fanout>,
    /// The hub's generation of the store, sampled when a shared read begins.
    wake: watch::Receiver<u64>,
    /// The last own read found nothing more: take batches from the shared reads. Cleared
    /// when the shared reads no longer cover the cursor (this stream fell behind).
    at_head: bool,
    /// Whether shared reads are on ([`crate::limits::ServerLimits::shared_reads`]).
    shared: bool,
    /// Where its notifications go (the deadline is
    /// [`crate::limits::ServerLimits::write_deadline`]).
    wire: Wire,
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
    /// This stream's entry in its client's subscriptions (delivery counts, activity); shared
    /// with the connection's head while parked there.
    tracked: Arc<Subscribed>,
}

impl Stream {
    /// Send one notification with `payload` as its params unless the request was cancelled;
    /// `End::Closed` when the stream must end (cancelled, or the connection is gone).
    async fn send(&self, method: &str, payload: impl Into<Value>) -> Result<(), End> {
        self.wire.send(method, payload.into()).await
    }

    /// Park at the connection's head of the store when this stream is at the head on a
    /// socket connection with shared reads on: `None` otherwise. `wake` and `settings` are
    /// the stream's receivers of the store's wake-ups and of the settings.
    fn park(
        &self,
        conn: &ConnectionState,
        wake: &watch::Receiver<u64>,
        settings: &watch::Receiver<Arc<Settings>>,
    ) -> Option<Ticket> {
        if !self.at_head || !self.shared {
            return None;
        }
        let cursor = self.cursor?;
        let queue = self.wire.direct.clone()?;
        let head = conn.heads.get(self.sub.event_type(), || {
            Head::new(
                self.sub.event_type(),
                Arc::clone(&self.fanout),
                conn.revoked.clone(),
                queue,
                self.wire.deadline,
                Box::new(conn.delivery_signal()),
            )
        });
        let tracked = Arc::clone(&self.tracked);
        let stream = heads::Stream {
            sub: self.sub.clone(),
            cursor,
            id_json: self.wire.id_json.clone(),
            delivered: Box::new(move |event| {
                tracked.record(event.name, &sender_of(&event.data));
            }),
            settings: settings.clone(),
        };
        Some(head.park(stream, wake, self.generation))
    }

    /// Send `terminated` with `error` (the connection may already be gone); the stream ends.
    async fn terminate(&self, error: &ErrorData) -> End {
        let note = ErrorNote {
            error: error_object(error),
        };
        let _ = self.send(notifications::TERMINATED, note).await;
        End::Terminated
    }

    /// The position a heartbeat may hand out: the resolved cursor, or until then the client's
    /// own (it is what the client already holds, so it stays safe to persist).
    fn safe_cursor(&self) -> Option<Cursor> {
        self.cursor.or(self.requested.0)
    }

    /// Send `notifications/events/error` for a store failure, once per distinct failure.
    async fn report_store(&mut self, e: &StoreError) -> Result<(), End> {
        tracing::debug!(event_type = %self.sub.event_type(), error = %e, "stream store error");
        self.report(e.reason(), e.to_string(), store_error(e)).await
    }

    /// Send `notifications/events/error` with `error` unless the failure keyed `(reason,
    /// detail)` is the one already reported.
    async fn report(
        &mut self,
        reason: &'static str,
        detail: String,
        error: ErrorData,
    ) -> Result<(), End> {
        let key = (reason, detail);
        if self.last_error.as_ref() == Some(&key) {
            return Ok(());
        }
        self.last_error = Some(key);
        let note = ErrorNote {
            error: error_object(&error),
        };
        self.send(notifications::ERROR, note).await
    }

    /// Resolve the start of a stream that opened while its store failed. Once resolved, a
    /// `truncated` start re-sends `active` with the fresh cursor (an untruncated one is where
    /// the client's cursor said, so nothing more is due). A store that came back and refused
    /// the subscription (an unknown mailbox) ends the stream with `terminated`.
    async fn resolve(&mut self) -> Resolution {
        match self.start().await {
            Read::Done(start) => {
                self.cursor = Some(start.cursor);
                self.last_error = None;
                if start.truncated {
                    let active = Active {
                        cursor: Some(start.cursor.to_string()),
                        truncated: true,
                    };
                    if let Err(end) = self.send(notifications::ACTIVE, active).await {
                        return Resolution::Ended(end);
                    }
                }
                Resolution::Resolved
            }
            Read::Failed(RequestError::Store(e)) => match self.report_store(&e).await {
                Ok(()) => Resolution::Pending,
                Err(end) => Resolution::Ended(end),
            },
            Read::Failed(refused) => {
                tracing::debug!(event_type = %self.sub.event_type(), "stream terminated at start");
                let error = request_error(refused, &self.settings_file);
                Resolution::Ended(self.terminate(&error).await)
            }
            Read::Lost(e) => {
                tracing::warn!(error = %e.message, "stream start failed");
                Resolution::Pending
            }
        }
    }

    /// Deliver everything after the cursor, step by step, until there is nothing more to read
    /// now (Ok) or the stream ends (Err).
    async fn drain(&mut self) -> Result<(), End> {
        loop {
            match self.step().await {
                Step::Delivered { more: true } | Step::Gap => {}
                Step::Delivered { more: false } | Step::Wait => return Ok(()),
                Step::Ended(end) => return Err(end),
            }
        }
    }

    /// Read the next batch after the cursor and write it. A store failure is reported once
    /// and retried on the next wake or heartbeat; a gap re-sends `active` with `truncated:
    /// true`; the cursor moves only past events written.
    async fn step(&mut self) -> Step {
        if self.wire.cancelled.is_cancelled() {
            return Step::Ended(End::Closed);
        }
        if self.cursor.is_none() {
            match self.resolve().await {
                Resolution::Resolved => {}
                Resolution::Pending => return Step::Wait,
                Resolution::Ended(end) => return Step::Ended(end),
            }
        }
        let Some(after) = self.cursor else {
            return Step::Wait;
        };
        let batch = match self.read_next(after).await {
            Read::Done(batch) => batch,
            Read::Failed(e) => {
                return match self.report_store(&e).await {
                    Ok(()) => Step::Wait,
                    Err(end) => Step::Ended(end),
                };
            }
            Read::Lost(e) => {
                tracing::warn!(error = %e.message, "stream step failed");
                return Step::Wait;
            }
        };
        let ty = self.sub.event_type();
        let rows = batch.events.len();
        tracing::debug!(target: LATENCY, event_type = %ty, generation = self.generation, rows, "latency: rows read");
        if batch.truncated {
            self.last_error = None;
            self.cursor = Some(batch.cursor);
            let active = Active {
                cursor: Some(batch.cursor.to_string()),
                truncated: true,
            };
            return match self.send(notifications::ACTIVE, active).await {
                Ok(()) => Step::Gap,
                Err(end) => Step::Ended(end),
            };
        }
        let wire = &self.wire;
        let written = write_events(&batch.events, Item::encoded, |event, json| async move {
            wire.send_event(event.as_ref(), &json).await
        })
        .await;
        // Counted for the app's model only as far as they went out.
        for event in &batch.events[..written.count(rows)] {
            let event = event.as_ref();
            self.tracked.delivered(event.name, &sender_of(&event.data));
        }
        if let Some(cursor) = cursor_after(&batch.events, batch.cursor, &written) {
            self.cursor = Some(cursor);
            self.last_error = None;
        }
        match written {
            Written::All => {
                // Caught up: from now on the shared reads serve this stream.
                self.at_head |= self.shared && !batch.has_more;
                if rows > 0 {
                    tracing::debug!(target: LATENCY, event_type = %ty, generation = self.generation, frames = rows, "latency: frames written");
                }
                Step::Delivered {
                    more: batch.has_more,
                }
            }
            Written::Closed { .. } => Step::Ended(End::Closed),
            Written::Unencodable { index, error } => {
                // Held before it, not skipped: a skipped event is lost for good to a client
                // that persists the cursor. Retried on the next wake or heartbeat.
                tracing::warn!(event_type = %ty, index, %error, "cannot encode an occurrence; the stream holds before it");
                let failure = unencodable(ty);
                match self
                    .report(reason::ENCODE_FAILED, error.to_string(), failure)
                    .await
                {
                    Ok(()) => Step::Wait,
                    Err(end) => Step::Ended(end),
                }
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

#[cfg(test)]
mod tests;
