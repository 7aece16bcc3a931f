//! Admission: stream slots under the caps, live stream ids, and the socket's connection cap.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::RequestId;

use super::{Clients, ConnectionState, Revocation};
use crate::sync::lock;

/// Which stream cap was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamCap {
    /// Streams on one socket connection.
    PerConnection(usize),
    /// Streams opened with one HTTP bearer token.
    PerToken(usize),
    /// Streams across the daemon.
    Total(usize),
}

/// Why a stream could not take a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A cap is reached.
    Exhausted(StreamCap),
    /// The principal was revoked.
    Revoked(Revocation),
}

impl ConnectionState {
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
    pub(crate) fn acquire(self: &Arc<Self>, id: &RequestId) -> Result<StreamSlot, Refusal> {
        if let Some(why) = self.revocation() {
            return Err(Refusal::Revoked(why));
        }
        let per = match self.cap {
            StreamCap::PerConnection(n) | StreamCap::PerToken(n) | StreamCap::Total(n) => n,
        };
        let total = self.clients.limits.streams_total;
        let take = |counter: &AtomicUsize, max: usize| {
            counter
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < max).then_some(n + 1)
                })
                .is_ok()
        };
        if !take(&self.streams, per) {
            return Err(Refusal::Exhausted(self.cap));
        }
        if !take(&self.clients.streams, total) {
            self.streams.fetch_sub(1, Ordering::AcqRel);
            return Err(Refusal::Exhausted(StreamCap::Total(total)));
        }
        self.clients.board.changed();
        Ok(StreamSlot {
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
    conn: Arc<ConnectionState>,
    id: StreamIdHold,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Some(id) = self.id.id.take() {
            self.conn.release_stream_id(&id);
        }
        self.conn.streams.fetch_sub(1, Ordering::AcqRel);
        self.conn.clients.streams.fetch_sub(1, Ordering::AcqRel);
        self.conn.clients.board.changed();
    }
}

/// The socket connections being served, for the cap.
#[derive(Default)]
pub(super) struct SocketConnections {
    open: Mutex<Vec<(u64, Arc<ConnectionState>)>>,
    next: AtomicU64,
    /// Whether reaching the cap was logged (once per process: it means a client leaks
    /// connections, and one line says so).
    logged: AtomicBool,
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

/// A socket connection's place: keeps the count and the cap's list true however the
/// connection's task returns.
pub(crate) struct ConnectionCount {
    clients: Arc<Clients>,
    key: u64,
}

impl ConnectionCount {
    /// Count `conn` in, making room under the socket cap; None when it is turned away.
    pub(crate) fn admit(clients: &Arc<Clients>, conn: &Arc<ConnectionState>) -> Option<Self> {
        let key = clients
            .socket
            .admit(conn, clients.limits.max_socket_connections)?;
        clients.connections.fetch_add(1, Ordering::AcqRel);
        clients.board.changed();
        Some(ConnectionCount {
            clients: clients.clone(),
            key,
        })
    }
}

impl Drop for ConnectionCount {
    fn drop(&mut self) {
        self.clients.socket.remove(self.key);
        self.clients.connections.fetch_sub(1, Ordering::AcqRel);
        self.clients.board.changed();
    }
}
