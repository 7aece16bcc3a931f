//! What one client's streams share: a socket connection's (or an HTTP token's) stream count
//! and cap, a socket connection's live stream ids (kept by the framer), its cancellation
//! tokens, and the RAII places that keep the counts true.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use rmcp::model::RequestId;
use tokio_util::sync::CancellationToken;

use super::{Daemon, Inner};
use crate::events::errors::{StreamCap, streams_exhausted, token_rotated};
use crate::limits::ServerLimits;
use crate::sync::lock;

/// The state one principal's handlers share: a socket connection, or one HTTP bearer token
/// (all the POSTs made with it).
pub(crate) struct ConnectionState {
    streams: AtomicUsize,
    /// The cap on `streams`, as the error names it.
    cap: StreamCap,
    /// Cancelled when the client is gone (a write failed), its HTTP endpoint stops, or the
    /// daemon shuts down.
    pub(crate) closed: CancellationToken,
    /// Cancelled when the credential is revoked (the HTTP token was rotated): its streams end
    /// with `terminated` Forbidden. Never cancelled for a socket connection.
    pub(crate) revoked: CancellationToken,
    /// The request ids of a socket connection's open streams. A stream's id is its
    /// `subscriptionId` and the key of `notifications/cancelled`, and rmcp keeps one
    /// cancellation entry per id, so a second stream under a live id would share the first's
    /// notifications and leave one of the two uncancellable: it is refused. The framer owns
    /// the set: it reserves an id as it forwards the request, in order, before rmcp sees the
    /// next line; the id is freed when the stream's handler is done with it
    /// ([`StreamIdHold`]) or when rmcp answers the request without the handler, never on a
    /// cancel (see `frames.rs`). `None` over HTTP, which is stateless per request: each POST
    /// is its own JSON-RPC exchange with its own rmcp service and response stream (a stream
    /// is cancelled by dropping it), so two POSTs with the same id under one token never meet.
    live_ids: Option<Mutex<HashSet<RequestId>>>,
    /// When the client last sent a line (ms on [`clock`]); the socket's cap evicts the
    /// connection idle longest first.
    last_active: AtomicU64,
}

/// Milliseconds since the first call: a cheap monotonic clock for `last_active`.
fn clock() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = START.get_or_init(Instant::now);
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl ConnectionState {
    /// A socket connection's state.
    pub(super) fn socket(limits: &ServerLimits, shutdown: &CancellationToken) -> ConnectionState {
        let mut state = ConnectionState::with_cap(
            StreamCap::PerConnection(limits.streams_per_connection),
            shutdown,
        );
        state.live_ids = Some(Mutex::new(HashSet::new()));
        state
    }

    /// The state of one HTTP bearer token (or of every request, with `--no-auth`). `stop` is
    /// the endpoint's own token (a child of the daemon's shutdown), so stopping the endpoint
    /// ends its streams.
    pub(crate) fn http_token(daemon: &Daemon, stop: &CancellationToken) -> Arc<ConnectionState> {
        let cap = StreamCap::PerToken(daemon.inner.limits.streams_per_token);
        Arc::new(ConnectionState::with_cap(cap, stop))
    }

    fn with_cap(cap: StreamCap, parent: &CancellationToken) -> ConnectionState {
        ConnectionState {
            streams: AtomicUsize::new(0),
            cap,
            closed: parent.child_token(),
            revoked: CancellationToken::new(),
            live_ids: None,
            last_active: AtomicU64::new(clock()),
        }
    }

    /// The client sent something: it is not idle.
    pub(crate) fn touch(&self) {
        self.last_active.store(clock(), Ordering::Relaxed);
    }

    /// Reserve `id` for a stream about to reach rmcp; false when a live stream holds it.
    /// Always true over HTTP, where ids never meet.
    pub(crate) fn reserve_stream_id(&self, id: &RequestId) -> bool {
        self.live_ids
            .as_ref()
            .is_none_or(|ids| lock(ids).insert(id.clone()))
    }

    /// The request `id` was answered or cancelled: a stream under it is over (or never
    /// opened), so the id is free again.
    pub(crate) fn release_stream_id(&self, id: &RequestId) {
        if let Some(ids) = &self.live_ids {
            lock(ids).remove(id);
        }
    }

    /// Whether a live stream holds `id` (a plain request under it would take over the
    /// stream's cancellation in rmcp). Always false over HTTP.
    pub(crate) fn is_stream_id(&self, id: &RequestId) -> bool {
        self.live_ids
            .as_ref()
            .is_some_and(|ids| lock(ids).contains(id))
    }

    /// Whether any stream id is reserved (the framer only reads answers' ids then).
    pub(crate) fn has_stream_ids(&self) -> bool {
        self.live_ids
            .as_ref()
            .is_some_and(|ids| !lock(ids).is_empty())
    }

    /// Keep stream `id` reserved (by the framer) until the returned hold is dropped: the
    /// handler holds it for as long as it runs, so a stream refused before it took a slot, or
    /// cancelled, frees its id only once its handler is done.
    pub(crate) fn hold_stream_id(self: &Arc<Self>, id: &RequestId) -> StreamIdHold {
        StreamIdHold {
            conn: self.clone(),
            id: self.live_ids.is_some().then(|| id.clone()),
        }
    }

    /// Take a place for stream `id` under this principal's cap and the process-wide one. (On
    /// a socket connection the framer reserved the id; the slot frees it first when dropped.)
    pub(super) fn acquire(
        self: &Arc<Self>,
        daemon: &Arc<Inner>,
        id: &RequestId,
    ) -> Result<StreamSlot, rmcp::ErrorData> {
        if self.revoked.is_cancelled() {
            return Err(token_rotated());
        }
        let per = match self.cap {
            StreamCap::PerConnection(n) | StreamCap::PerToken(n) | StreamCap::Total(n) => n,
        };
        let total = daemon.limits.streams_total;
        let take = |counter: &AtomicUsize, max: usize| {
            counter
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < max).then_some(n + 1)
                })
                .is_ok()
        };
        if !take(&self.streams, per) {
            return Err(streams_exhausted(self.cap));
        }
        if !take(&daemon.streams, total) {
            self.streams.fetch_sub(1, Ordering::AcqRel);
            return Err(streams_exhausted(StreamCap::Total(total)));
        }
        Ok(StreamSlot {
            daemon: daemon.clone(),
            id: self.hold_stream_id(id),
            conn: self.clone(),
        })
    }

    /// Open streams of this principal.
    pub(crate) fn open_streams(&self) -> usize {
        self.streams.load(Ordering::Acquire)
    }
}

/// A stream id kept reserved; freed on drop.
pub(crate) struct StreamIdHold {
    conn: Arc<ConnectionState>,
    id: Option<RequestId>,
}

impl Drop for StreamIdHold {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.conn.release_stream_id(&id);
        }
    }
}

/// One open stream's place under the caps and its id; released on drop, however the stream
/// ends (the id before the counts, so a client that sees the count fall can reuse the id).
pub(crate) struct StreamSlot {
    daemon: Arc<Inner>,
    conn: Arc<ConnectionState>,
    id: StreamIdHold,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Some(id) = self.id.id.take() {
            self.conn.release_stream_id(&id);
        }
        self.conn.streams.fetch_sub(1, Ordering::AcqRel);
        self.daemon.streams.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The socket connections being served, for the cap.
#[derive(Default)]
pub(super) struct SocketConnections {
    open: Mutex<Vec<(u64, Arc<ConnectionState>)>>,
    next: AtomicU64,
    /// Whether reaching the cap was logged (once per process: it means a client leaks
    /// connections, and one line says so).
    logged: std::sync::atomic::AtomicBool,
}

impl SocketConnections {
    /// Make room for `conn` under `cap`: when full, the connection idle longest among those
    /// holding no stream is closed (its `closed` token cancelled). None when every one holds
    /// a stream: `conn` is then turned away.
    fn admit(&self, conn: &Arc<ConnectionState>, cap: usize) -> Option<u64> {
        let mut open = lock(&self.open);
        if open.len() >= cap {
            let idle = open
                .iter()
                .enumerate()
                .filter(|(_, (_, c))| c.open_streams() == 0)
                .min_by_key(|(_, (_, c))| c.last_active.load(Ordering::Relaxed))
                .map(|(i, _)| i);
            if !self.logged.swap(true, Ordering::AcqRel) {
                tracing::warn!(
                    max = cap,
                    "the socket's connection cap is reached; closing the longest-idle \
                     connections that hold no stream to make room (logged once)"
                );
            }
            let (_, evicted) = open.swap_remove(idle?);
            evicted.closed.cancel();
        }
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        open.push((key, conn.clone()));
        Some(key)
    }

    fn remove(&self, key: u64) {
        lock(&self.open).retain(|(k, _)| *k != key);
    }
}

/// A socket connection's place: keeps `connections` and the cap's list true however
/// `serve_connection` returns.
pub(super) struct ConnectionCount {
    inner: Arc<Inner>,
    key: u64,
}

impl ConnectionCount {
    /// Count `conn` in, making room under the socket cap; None when it is turned away.
    pub(super) fn admit(inner: &Arc<Inner>, conn: &Arc<ConnectionState>) -> Option<Self> {
        let cap = inner.limits.max_socket_connections;
        let key = inner.socket_connections.admit(conn, cap)?;
        inner.connections.fetch_add(1, Ordering::AcqRel);
        Some(ConnectionCount {
            inner: inner.clone(),
            key,
        })
    }
}

impl Drop for ConnectionCount {
    fn drop(&mut self) {
        self.inner.socket_connections.remove(self.key);
        self.inner.connections.fetch_sub(1, Ordering::AcqRel);
    }
}
