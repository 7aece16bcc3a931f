//! The loopback Streamable HTTP endpoint: `POST /mcp` served by rmcp's `StreamableHttpService`
//! in the stateless 2026-07-28 mode, behind our [`guard`] layer. Every request gets an
//! [`EventsHandler`] pointing at the one shared [`Daemon`] (engine, hub, settings, limits):
//! nothing is opened per request.
//!
//! rmcp is configured for this profile (docs/http.md): no sessions; SSE comment keep-alives
//! and `retry:` priming off (heartbeats are `notifications/events/heartbeat` data frames);
//! a terminal first message as plain `application/json` (so a refused `events/stream` is a
//! JSON error that opens no stream) and anything that notifies as `text/event-stream`
//! with `X-Accel-Buffering: no`; `MCP-Protocol-Version` required; its own Host check and body
//! limit a backstop above ours. A client that drops the response cancels the request
//! (rmcp's `CancelOnDisconnect`), which ends its stream and frees its place under the caps.
//!
//! Each endpoint has its own stop token, a child of the daemon's shutdown: cancelling it closes
//! the port and ends the endpoint's streams without touching the socket.
//!
//! Files: `accept` (our accept loop: connection cap, header-read timeout, stop grace),
//! [`guard`] (the checks before rmcp), [`auth`] (the token in force, per-token state,
//! rotation), [`agent_tokens`] (one token per agent, kept as hashes beside settings.toml),
//! [`token`] (generation and the keychain), [`supervisor`] (starts, stops and moves
//! the endpoint as `[http]` settings change). Decisions: docs/http.md.

mod accept;
pub mod agent_tokens;
pub mod auth;
pub mod guard;
mod refusal;
pub mod supervisor;
pub mod token;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub(crate) use crate::clients::Principal;
use crate::daemon::{Daemon, TokenReload};
use crate::events::EventsHandler;
use auth::{AuthMode, HttpAuth};
use guard::Guard;
use token::TokenError;

/// The path the endpoint serves.
pub const PATH: &str = "/mcp";

/// rmcp's own body limit, as a multiple of ours: the guard enforces the real limit on the
/// bytes the client sent, and rmcp's is only a backstop with headroom, so it never answers in
/// plain text for an in-limit body.
const RMCP_BODY_HEADROOM: usize = 2;

/// What to serve.
pub struct HttpOptions {
    /// A loopback address and port (port 0: any free port).
    pub listen: SocketAddr,
    /// The bearer token's keychain, or no auth (`--demo --no-auth` only).
    pub auth: AuthMode,
}

/// Why the endpoint could not start. Messages name the address or the missing piece.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The address is not a loopback one.
    #[error(
        "refusing to serve HTTP on {addr}: only a loopback address (127.0.0.1 or [::1]) is \
         allowed, so nothing off this machine can reach the endpoint"
    )]
    NotLoopback {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The token could not be read or made.
    #[error(
        "cannot start the HTTP endpoint without its bearer token: {source}. On Linux the token \
         lives in a Secret Service (gnome-keyring-daemon or KeePassXC) on the session D-Bus; \
         on macOS in the login keychain"
    )]
    Token {
        /// What the keychain said.
        #[source]
        source: TokenError,
    },
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
    /// The daemon already has an endpoint.
    #[error("this daemon already serves an HTTP endpoint")]
    AlreadyServing,
}

/// A bound endpoint, ready to [`serve`](HttpEndpoint::serve).
pub struct HttpEndpoint {
    listener: TcpListener,
    addr: SocketAddr,
    auth: Arc<HttpAuth>,
    daemon: Daemon,
    /// Stops this endpoint only; a child of the daemon's shutdown.
    stop: CancellationToken,
    /// Unregisters the token state from the daemon when the endpoint goes away.
    _registered: Registered,
}

/// The endpoint's token state as registered with the daemon; dropping it (when `serve` ends,
/// or an endpoint is dropped unserved) clears the registration so a successor may start.
struct Registered {
    daemon: Daemon,
    reload: Arc<dyn TokenReload>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.daemon.clear_token_reload(&self.reload);
    }
}

impl HttpEndpoint {
    /// Refuse a non-loopback address, read (or make) the token, then bind. The keychain is
    /// asked before the port opens, so a missing keychain leaves nothing half started.
    pub async fn bind(daemon: &Daemon, options: HttpOptions) -> Result<HttpEndpoint, HttpError> {
        if !options.listen.ip().is_loopback() {
            return Err(HttpError::NotLoopback {
                addr: options.listen,
            });
        }
        let starter = daemon.clone();
        let stop = daemon.shutdown_token().child_token();
        let auth_stop = stop.clone();
        let auth =
            tokio::task::spawn_blocking(move || HttpAuth::start(&starter, options.auth, auth_stop))
                .await
                .map_err(|e| HttpError::Token {
                    source: TokenError::Random(format!("keychain task failed: {e}")),
                })?
                .map_err(|source| HttpError::Token { source })?;
        let auth = Arc::new(auth);
        let listener =
            TcpListener::bind(options.listen)
                .await
                .map_err(|source| HttpError::Bind {
                    addr: options.listen,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| HttpError::Bind {
            addr: options.listen,
            source,
        })?;
        let reload: Arc<dyn TokenReload> = auth.clone();
        if !daemon.set_token_reload(reload.clone()) {
            return Err(HttpError::AlreadyServing);
        }
        Ok(HttpEndpoint {
            listener,
            addr,
            auth: auth.clone(),
            daemon: daemon.clone(),
            stop,
            _registered: Registered {
                daemon: daemon.clone(),
                reload,
            },
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{PATH}", self.addr)
    }

    /// The token state (tests and status read the per-token stream count).
    pub fn auth(&self) -> &Arc<HttpAuth> {
        &self.auth
    }

    /// Cancelling this token stops this endpoint alone: the port closes and every stream it
    /// serves ends (each response is closed). The daemon's shutdown cancels it too.
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Serve until [`stop_token`](HttpEndpoint::stop_token) is cancelled or the daemon shuts
    /// down; returns once every connection has closed (those still open after
    /// `http_stop_grace` are dropped).
    pub async fn serve(self) {
        let port = self.addr.port();
        let mut hosts = vec![
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ];
        let bound = self.addr.to_string();
        if !hosts.contains(&bound) {
            hosts.push(bound);
        }
        let limits = self.daemon.limits().clone();
        let stop = self.stop.clone();
        // rmcp cuts every SSE body when its token is cancelled (`take_until`), so it gets a
        // token of its own, cancelled only once the connections are gone: stopping cancels
        // `stop`, the handlers see it (each principal's `closed` is its child) and return
        // their final result, and rmcp still delivers that last frame.
        let rmcp_stop = CancellationToken::new();
        let config = StreamableHttpServerConfig::default()
            .with_sse_keep_alive(None)
            .with_sse_retry(None)
            .with_legacy_session_mode(false)
            .with_json_response(true)
            // A 2025-11-25 client sends no `_meta` after `initialize`, only the version
            // header: its requests are served statelessly too, so it gets the pull tools
            // (events/* stay 2026-07-28 only: the guard refuses them under an older version).
            .with_stateless_protocol_metadata_required(false)
            .with_allowed_hosts(hosts.clone())
            .with_max_request_body_bytes(
                limits
                    .max_http_body_bytes
                    .saturating_mul(RMCP_BODY_HEADROOM),
            )
            .with_cancellation_token(rmcp_stop.clone());
        let daemon = self.daemon.clone();
        let service = StreamableHttpService::new(
            move || Ok(EventsHandler::for_http(daemon.clone())),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        let guard = Arc::new(Guard {
            daemon: self.daemon.clone(),
            auth: self.auth.clone(),
            hosts,
            max_body: limits.max_http_body_bytes,
            body_timeout: limits.http_body_timeout,
            stop: stop.clone(),
        });
        let app = axum::Router::new()
            .route_service(PATH, service)
            .layer(axum::middleware::from_fn_with_state(guard, guard::check));
        let url = self.url();
        tracing::info!(%url, no_auth = self.auth.is_no_auth(), "HTTP endpoint serving");
        accept::serve(self.listener, app, &limits, &stop).await;
        rmcp_stop.cancel();
        tracing::info!(%url, "HTTP endpoint stopped");
    }
}
