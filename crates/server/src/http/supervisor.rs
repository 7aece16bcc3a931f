//! Keeps the HTTP endpoint in step with `[http] enabled` and `listen`: one task owns the
//! endpoint serving now and, on each settings change, starts it, stops it or moves it, as a
//! user flipping "HTTP endpoint" in the menu expects.
//!
//! - The supervisor starts in the background ([`HttpSupervisor::spawn`]): the socket serves
//!   while the keychain is asked, and every keychain call and bind is raced against the
//!   daemon's shutdown, so a keychain that hangs neither delays start nor blocks shutdown.
//! - `--http ADDR` forces the endpoint on at ADDR for the whole run: settings are not watched,
//!   and a failure to start is reported by [`HttpSupervisor::settled`] to `serve`, which stops
//!   (the user asked for it).
//! - Otherwise the settings decide, at start and live. A start that fails (a non-loopback
//!   address, no keychain, a taken port) is logged on one line and retried on the next
//!   settings change; the daemon and its socket keep serving.
//! - Stopping cancels the endpoint's own stop token: the port closes at once, every stream it
//!   serves ends with its final result, and after `http_stop_grace` the endpoint drops any
//!   connection still open. A new `listen` is bound only once the old endpoint is gone.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tidings_core::Settings;
use tidings_core::settings::HttpSettings;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::auth::AuthMode;
use super::token::TokenError;
use super::{HttpEndpoint, HttpError, HttpOptions, PATH};
use crate::daemon::Daemon;
use crate::state::HttpEndpointState;

/// How long past its own stop grace an endpoint's task may take before it is aborted: a
/// backstop only, as the endpoint drops its connections itself.
const STOP_BACKSTOP: Duration = Duration::from_secs(5);

/// Makes the auth for each start. Asked anew every time, so a keychain that was missing at
/// one attempt is found at the next. May block (the system keychain talks to D-Bus).
pub type AuthSource = Arc<dyn Fn() -> Result<AuthMode, HttpError> + Send + Sync>;

/// What the endpoint is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpState {
    /// The supervisor has not finished its first start yet (the keychain may be slow).
    Starting,
    /// Not serving: off in settings, or the daemon has shut down.
    Off,
    /// Serving on `addr` (the bound address, so a port 0 in settings is resolved).
    Serving {
        /// The bound address.
        addr: SocketAddr,
        /// Whether requests need no token (`--demo --no-auth`).
        no_auth: bool,
    },
    /// Settings ask for the endpoint on `listen`, but it could not start; the next settings
    /// change retries.
    Failed {
        /// The address asked for.
        listen: SocketAddr,
        /// Why, as logged (it names no secret).
        error: String,
    },
}

impl From<&HttpState> for HttpEndpointState {
    fn from(state: &HttpState) -> HttpEndpointState {
        match state {
            HttpState::Starting => HttpEndpointState::Starting,
            HttpState::Off => HttpEndpointState::Off,
            HttpState::Serving { addr, no_auth } => HttpEndpointState::Serving {
                url: format!("http://{addr}{PATH}"),
                no_auth: *no_auth,
            },
            HttpState::Failed { listen, error } => HttpEndpointState::Failed {
                listen: listen.to_string(),
                error: error.clone(),
            },
        }
    }
}

/// The handle on the supervising task.
pub struct HttpSupervisor {
    state: watch::Receiver<HttpState>,
    task: JoinHandle<()>,
    /// A forced (`--http`) endpoint's failure to start.
    fatal: oneshot::Receiver<HttpError>,
}

impl HttpSupervisor {
    /// Start supervising in the background, at once: the endpoint starts if `forced`
    /// (`--http`) or the settings ask for it, then follows the settings until the daemon
    /// shuts down. A forced endpoint that cannot start is reported by [`settled`].
    ///
    /// [`settled`]: HttpSupervisor::settled
    pub fn spawn(daemon: &Daemon, forced: Option<SocketAddr>, auth: AuthSource) -> HttpSupervisor {
        let (state, state_rx) = watch::channel(HttpState::Starting);
        daemon.report_http(HttpEndpointState::Starting);
        let (fatal_tx, fatal) = oneshot::channel();
        let supervisor = Supervisor {
            daemon: daemon.clone(),
            auth,
            state,
            running: None,
        };
        let task = tokio::spawn(supervisor.begin(forced, fatal_tx));
        HttpSupervisor {
            state: state_rx,
            task,
            fatal,
        }
    }

    /// [`spawn`](HttpSupervisor::spawn), then wait until the first start has settled. Errs
    /// only when a forced endpoint cannot start.
    pub async fn start(
        daemon: &Daemon,
        forced: Option<SocketAddr>,
        auth: AuthSource,
    ) -> Result<HttpSupervisor, HttpError> {
        let mut supervisor = HttpSupervisor::spawn(daemon, forced, auth);
        supervisor.settled().await?;
        Ok(supervisor)
    }

    /// Wait until the first start has settled (serving, off, or failed); the state then, or
    /// the error of a forced endpoint that could not start.
    pub async fn settled(&mut self) -> Result<HttpState, HttpError> {
        let mut rx = self.state.clone();
        let state = match rx.wait_for(|s| *s != HttpState::Starting).await {
            Ok(state) => state.clone(),
            // The task is gone: it settled (or failed) before it went.
            Err(_) => self.state.borrow().clone(),
        };
        // Sent before the Failed state, so it is here if the start failed.
        match self.fatal.try_recv() {
            Ok(error) => Err(error),
            Err(_) => Ok(state),
        }
    }

    /// What the endpoint is doing now.
    pub fn state(&self) -> HttpState {
        self.state.borrow().clone()
    }

    /// Watch the state (tests wait on it rather than sleeping).
    pub fn subscribe(&self) -> watch::Receiver<HttpState> {
        self.state.clone()
    }

    /// After `Daemon::shutdown`: wait until the endpoint has closed (its connections get
    /// `http_stop_grace`, then are dropped).
    pub async fn stopped(self) {
        if let Err(e) = self.task.await {
            tracing::warn!(error = %e, "the HTTP supervisor failed");
        }
    }
}

/// The endpoint serving now.
struct Running {
    /// The address settings asked for (not the bound one: port 0 stays 0), so an unrelated
    /// settings change does not move it.
    listen: SocketAddr,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

struct Supervisor {
    daemon: Daemon,
    auth: AuthSource,
    state: watch::Sender<HttpState>,
    running: Option<Running>,
}

impl Supervisor {
    /// The first start, raced against shutdown, then [`supervise`](Supervisor::supervise).
    async fn begin(mut self, forced: Option<SocketAddr>, fatal: oneshot::Sender<HttpError>) {
        let settings = if let Some(listen) = forced {
            let Some(bound) = self.bind_unless_shutdown(listen).await else {
                return;
            };
            match bound {
                Ok(endpoint) => self.run(listen, endpoint),
                Err(error) => {
                    let failed = HttpState::Failed {
                        listen,
                        error: error.to_string(),
                    };
                    let _ = fatal.send(error);
                    self.set_state(failed);
                    return;
                }
            }
            None
        } else {
            // Subscribed before the first look, so no change between the two is missed.
            let mut settings = self.daemon.settings_receiver();
            let http = settings.borrow_and_update().http.clone();
            self.reconcile(&http).await;
            Some(settings)
        };
        self.supervise(settings).await;
    }

    /// Follow `settings` (none when forced) until the daemon shuts down, then stop.
    async fn supervise(mut self, mut settings: Option<watch::Receiver<Arc<Settings>>>) {
        let shutdown = self.daemon.shutdown_token().clone();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                http = next_http(&mut settings) => match http {
                    Some(http) => self.reconcile(&http).await,
                    None => break,
                },
            }
        }
        self.stop().await;
    }

    /// Make the endpoint match `http`: keep it, stop it, move it, or (re)try starting it.
    async fn reconcile(&mut self, http: &HttpSettings) {
        let wanted = http.enabled.then_some(http.listen);
        if let Some(running) = &self.running {
            if Some(running.listen) == wanted {
                return;
            }
            self.stop().await;
        }
        let Some(listen) = wanted else {
            self.set_state(HttpState::Off);
            return;
        };
        let Some(bound) = self.bind_unless_shutdown(listen).await else {
            return;
        };
        match bound {
            Ok(endpoint) => self.run(listen, endpoint),
            Err(error) => {
                tracing::warn!(
                    %error,
                    "the HTTP endpoint did not start; the socket still serves, and the next \
                     settings change retries"
                );
                self.set_state(HttpState::Failed {
                    listen,
                    error: error.to_string(),
                });
            }
        }
    }

    /// [`bind`](Supervisor::bind), raced against shutdown: the keychain may hang, and
    /// shutdown must not wait for it. None (the state then Off) when shutdown came first.
    async fn bind_unless_shutdown(
        &self,
        listen: SocketAddr,
    ) -> Option<Result<HttpEndpoint, HttpError>> {
        let shutdown = self.daemon.shutdown_token().clone();
        tokio::select! {
            () = shutdown.cancelled() => {
                self.set_state(HttpState::Off);
                None
            }
            bound = self.bind(listen) => Some(bound),
        }
    }

    /// The one place the endpoint's state changes: the supervisor's own channel (`settled`,
    /// tests) and the daemon's `State`, which only shows it.
    fn set_state(&self, state: HttpState) {
        self.daemon.report_http(HttpEndpointState::from(&state));
        self.state.send_replace(state);
    }

    /// Bind an endpoint on `listen`: the address is checked before the keychain is asked.
    async fn bind(&self, listen: SocketAddr) -> Result<HttpEndpoint, HttpError> {
        if !listen.ip().is_loopback() {
            return Err(HttpError::NotLoopback { addr: listen });
        }
        let source = self.auth.clone();
        let auth = tokio::task::spawn_blocking(move || source())
            .await
            .map_err(|e| HttpError::Token {
                source: TokenError::Random(format!("keychain task failed: {e}")),
            })??;
        HttpEndpoint::bind(&self.daemon, HttpOptions { listen, auth }).await
    }

    /// Serve `endpoint` in its own task and record it.
    fn run(&mut self, listen: SocketAddr, endpoint: HttpEndpoint) {
        let serving = HttpState::Serving {
            addr: endpoint.local_addr(),
            no_auth: endpoint.auth().is_no_auth(),
        };
        let stop = endpoint.stop_token();
        let task = tokio::spawn(endpoint.serve());
        self.running = Some(Running { listen, stop, task });
        self.set_state(serving);
    }

    /// Stop the running endpoint, if any, and wait until it is gone.
    async fn stop(&mut self) {
        let Some(mut running) = self.running.take() else {
            return;
        };
        running.stop.cancel();
        let backstop = self.daemon.limits().http_stop_grace + STOP_BACKSTOP;
        if tokio::time::timeout(backstop, &mut running.task)
            .await
            .is_err()
        {
            tracing::warn!("the HTTP endpoint did not stop in time; aborting it");
            running.task.abort();
            let _ = running.task.await;
        }
        self.set_state(HttpState::Off);
    }
}

/// The next `[http]` settings, or `None` when the channel is gone; never returns when there
/// is nothing to follow (`--http`).
async fn next_http(settings: &mut Option<watch::Receiver<Arc<Settings>>>) -> Option<HttpSettings> {
    let Some(rx) = settings else {
        return std::future::pending().await;
    };
    rx.changed().await.ok()?;
    let http = rx.borrow_and_update().http.clone();
    Some(http)
}
