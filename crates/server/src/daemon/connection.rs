//! What one client's streams share: a socket connection's (or an HTTP token's) stream count
//! and cap, its cancellation tokens, and the RAII places that keep the counts true.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio_util::sync::CancellationToken;

use super::{Daemon, Inner};
use crate::events::errors::{StreamCap, streams_exhausted, token_rotated};
use crate::limits::ServerLimits;

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
}

impl ConnectionState {
    /// A socket connection's state.
    pub(super) fn socket(limits: &ServerLimits, shutdown: &CancellationToken) -> ConnectionState {
        ConnectionState::with_cap(
            StreamCap::PerConnection(limits.streams_per_connection),
            shutdown,
        )
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
        }
    }

    /// Take a place for one more stream under this principal's cap and the process-wide one.
    pub(super) fn acquire(
        self: &Arc<Self>,
        daemon: &Arc<Inner>,
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
            conn: self.clone(),
        })
    }

    /// Open streams of this principal.
    pub(crate) fn open_streams(&self) -> usize {
        self.streams.load(Ordering::Acquire)
    }
}

/// One open stream's place under the caps; released on drop, however the stream ends.
pub(crate) struct StreamSlot {
    daemon: Arc<Inner>,
    conn: Arc<ConnectionState>,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.conn.streams.fetch_sub(1, Ordering::AcqRel);
        self.daemon.streams.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Keeps `connections` true however `serve_connection` returns.
pub(super) struct ConnectionCount(pub(super) Arc<Inner>);

impl Drop for ConnectionCount {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
    }
}
