//! The endpoint's own accept loop, in place of `axum::serve`, which has no connection cap, no
//! header-read timeout and no way to drop its connections:
//!
//! - at most [`ServerLimits::max_http_connections`] connections are served at once, so idle
//!   connects cannot use up the process's file descriptors (the Unix socket's accept loop
//!   needs them too). When one more arrives, the connection that has been without a request
//!   in flight the longest (still sending its head, or an idle keep-alive) is closed to make
//!   room: trickling header bytes on many connections (slowloris) cannot keep an honest
//!   client out. Only when every connection is serving a request (a stream, say) is the
//!   newcomer closed unanswered;
//! - each connection is hyper's HTTP/1 with a header-read timeout
//!   ([`ServerLimits::http_header_timeout`]): the whole head must arrive within it, counted
//!   from the first read, however the bytes trickle; it also bounds an idle keep-alive;
//! - on stop, the port closes at once and each connection is shut down gracefully (the
//!   request in flight, a stream's final result included, is finished); after
//!   [`ServerLimits::http_stop_grace`] those still open are aborted, which closes them.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::limits::ServerLimits;
use crate::sync::lock;

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
    let open = Arc::new(Open::new());
    let mut logged = false;
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.http_header_timeout);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            () = stop.cancelled() => break,
            // Reap finished connections so the set does not grow with the run.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let (tcp, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        tracing::warn!(%error, "HTTP accept failed; retrying");
                        tokio::select! {
                            () = stop.cancelled() => break,
                            () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                        }
                    }
                };
                if open.len() >= max {
                    if !open.evict_idlest() {
                        tracing::debug!(%peer, max, "HTTP connection closed: every place serves a request");
                        drop(tcp);
                        continue;
                    }
                    if !logged {
                        logged = true;
                        tracing::warn!(
                            max,
                            "the HTTP connection cap is reached; closing the connections \
                             longest without a request to make room (logged once)"
                        );
                    }
                }
                let conn = open.add();
                let service = tracked(app.clone(), conn.clone());
                let served = builder.serve_connection(TokioIo::new(tcp), service);
                let stop = stop.clone();
                let open = open.clone();
                connections.spawn(async move {
                    let _place = Place { open, conn: conn.clone() };
                    tokio::pin!(served);
                    tokio::select! {
                        _ = served.as_mut() => return,
                        // Evicted: dropped at once, mid-head.
                        () = conn.evict.cancelled() => return,
                        () = stop.cancelled() => served.as_mut().graceful_shutdown(),
                    }
                    let _ = served.await;
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

/// The connections being served, for the cap.
struct Open {
    conns: Mutex<Vec<Arc<Conn>>>,
    next: AtomicU64,
    /// What every connection's `idle_since` counts from.
    epoch: Instant,
}

/// One connection: how many requests it has in flight, and since when it has had none.
struct Conn {
    key: u64,
    epoch: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds after `epoch` when `in_flight` last fell to 0 (or the connection opened).
    idle_since: AtomicU64,
    evict: CancellationToken,
}

impl Conn {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

impl Open {
    fn new() -> Open {
        Open {
            conns: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    fn len(&self) -> usize {
        lock(&self.conns).len()
    }

    fn add(&self) -> Arc<Conn> {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            key,
            epoch: self.epoch,
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            evict: CancellationToken::new(),
        });
        conn.idle_since.store(conn.now(), Ordering::Relaxed);
        lock(&self.conns).push(conn.clone());
        conn
    }

    /// Close the connection longest without a request in flight; false if every one has one.
    fn evict_idlest(&self) -> bool {
        let mut conns = lock(&self.conns);
        let idlest = conns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.in_flight.load(Ordering::Acquire) == 0)
            .min_by_key(|(_, c)| (c.idle_since.load(Ordering::Relaxed), c.key))
            .map(|(i, _)| i);
        let Some(i) = idlest else {
            return false;
        };
        let conn = conns.swap_remove(i);
        conn.evict.cancel();
        true
    }

    fn remove(&self, key: u64) {
        lock(&self.conns).retain(|c| c.key != key);
    }
}

/// A connection's place in [`Open`], given up however its task ends.
struct Place {
    open: Arc<Open>,
    conn: Arc<Conn>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.open.remove(self.conn.key);
    }
}

/// A request in flight on `conn`, from its complete head until its response body is done
/// (or dropped).
struct InFlight(Arc<Conn>);

impl InFlight {
    fn new(conn: Arc<Conn>) -> InFlight {
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(conn)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle_since.store(self.0.now(), Ordering::Relaxed);
        }
    }
}

/// `app` for one connection, counting each request in flight on `conn` until its response
/// body ends.
fn tracked(
    app: axum::Router,
    conn: Arc<Conn>,
) -> impl hyper::service::Service<
    hyper::Request<hyper::body::Incoming>,
    Response = hyper::Response<Body>,
    Error = Infallible,
    Future = impl Future<Output = Result<hyper::Response<Body>, Infallible>> + Send,
> + Clone {
    let app = TowerToHyperService::new(app);
    hyper::service::service_fn(move |request| {
        let in_flight = InFlight::new(conn.clone());
        let response = hyper::service::Service::call(&app, request);
        async move {
            let response = response.await?;
            Ok(response.map(|body| {
                Body::new(Tracked {
                    body,
                    _in_flight: in_flight,
                })
            }))
        }
    })
}

/// A response body that keeps its request counted in flight until it ends or is dropped.
struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl HttpBody for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
