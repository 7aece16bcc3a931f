//! The endpoint's own accept loop, in place of `axum::serve`, which has no connection cap, no
//! header-read timeout and no way to drop its connections:
//!
//! - at most [`ServerLimits::max_http_connections`] connections are served at once; one more
//!   is closed as soon as it is accepted, so idle connects cannot use up the process's file
//!   descriptors (the Unix socket's accept loop needs them too);
//! - each connection is hyper's HTTP/1 with a header-read timeout
//!   ([`ServerLimits::http_header_timeout`]), which also bounds an idle keep-alive;
//! - on stop, the port closes at once and each connection is shut down gracefully (the
//!   request in flight, a stream's final result included, is finished); after
//!   [`ServerLimits::http_stop_grace`] those still open are aborted, which closes them.

use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::limits::ServerLimits;

/// How long to wait after a failed `accept` (EMFILE and the like) before trying again, so a
/// full descriptor table is not a busy loop.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Serve `app` on `listener` until `stop`, then close every connection (see the module docs).
/// Returns once none is left.
pub(super) async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: &ServerLimits,
    stop: &CancellationToken,
) {
    let max = limits.max_http_connections;
    let permits = std::sync::Arc::new(Semaphore::new(max));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.http_header_timeout);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            // Reap finished connections so the set does not grow with the run.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let (tcp, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        tracing::warn!(%error, "HTTP accept failed; retrying");
                        tokio::select! {
                            _ = stop.cancelled() => break,
                            _ = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                        }
                    }
                };
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    tracing::debug!(%peer, max, "HTTP connection closed: at the connection cap");
                    drop(tcp);
                    continue;
                };
                let conn = builder.serve_connection(
                    TokioIo::new(tcp),
                    TowerToHyperService::new(app.clone()),
                );
                let stop = stop.clone();
                connections.spawn(async move {
                    let _permit = permit;
                    tokio::pin!(conn);
                    tokio::select! {
                        _ = conn.as_mut() => return,
                        _ = stop.cancelled() => conn.as_mut().graceful_shutdown(),
                    }
                    let _ = conn.await;
                });
            }
        }
    }
    // The port closes now; connections in flight get the grace.
    drop(listener);
    let drained = tokio::time::timeout(limits.http_stop_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            grace = ?limits.http_stop_grace,
            "HTTP connections still open after the stop grace; dropping them"
        );
        connections.shutdown().await;
    }
}
