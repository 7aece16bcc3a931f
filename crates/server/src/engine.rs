//! The embedding API: [`Tidings::start`] runs the whole engine (the single-instance socket
//! and its accept loop, the daemon, the HTTP endpoint's supervisor, and in demo mode the
//! fixture stores and the simulator) and returns a [`Handle`]. `tidings serve` and the
//! menu-bar app are both thin callers of it.
//!
//! The handle is the app's whole view and control: [`Handle::state`] (one serialisable model,
//! the same `tidings/status` answers), [`Handle::activity`], [`Handle::settings`] and
//! [`Handle::update_settings`] (the file watcher's own apply path), [`Handle::revoke`],
//! [`Handle::shutdown`] and [`Handle::join`]. Decisions: docs/decisions/engine-api.md.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tidings_core::{Limits, Settings, StorePaths};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::clients::Activity;
use crate::daemon::{AgentError, ContactsSource, Daemon, DaemonConfig, DaemonError, FLUSH_GRACE};
use crate::demo::{Demo, DemoError, DemoHome, Layout};
use crate::http::HttpError;
use crate::http::auth::AuthMode;
use crate::http::supervisor::{AuthSource, HttpSupervisor};
use crate::limits::ServerLimits;
use crate::socket::{SocketError, SocketListener};
use crate::state::{HttpEndpointState, State};
use crate::sync::lock;

/// The file in the data directory that holds the last build that could read a store.
pub const ACCESS_RECORD: &str = "access-granted";

/// How long `join` waits, past the flush grace, for connections to close after a shutdown.
const CLOSE_BACKSTOP: Duration = Duration::from_secs(2);

/// What to start.
pub struct Config {
    /// The Unix socket. `None`: `<data-dir>/tidings.sock` in demo mode, else the per-OS
    /// default (`tidings_platform::paths::socket_path`, which honours `TIDINGS_SOCKET`).
    pub socket: Option<PathBuf>,
    /// Real stores or demo ones.
    pub stores: Stores,
    /// The HTTP endpoint: forced on, or as `[http]` in settings says (live).
    pub http: HttpConfig,
    /// Stream caps, frame limit, heartbeat and checks.
    pub limits: ServerLimits,
    /// Bounds on the engine's work per call.
    pub engine_limits: Limits,
}

/// Which stores to serve.
pub enum Stores {
    /// The user's Mail and Messages stores under `home`, with `settings` (written with
    /// everything off when missing, so a first run has a commented file to edit).
    Real {
        /// The home directory the stores are found under.
        home: PathBuf,
        /// `settings.toml`.
        settings: PathBuf,
    },
    /// Fixture stores in a demo directory, with the simulator.
    Demo(DemoConfig),
}

/// Demo mode (`--demo`).
#[derive(Clone, Debug, Default)]
pub struct DemoConfig {
    /// The demo directory; `None`: a temporary one removed at shutdown.
    pub data_dir: Option<PathBuf>,
    /// A new mail and message this often; `None`: the simulator is off.
    pub simulate: Option<Duration>,
    /// Offer the conformance tools (they rebuild the demo stores).
    pub conformance_controls: bool,
}

/// The HTTP endpoint's start-up.
pub struct HttpConfig {
    /// Serve at this address for the whole run, whatever settings say (`--http`); a failure
    /// to start then stops the engine ([`Handle::join`] returns it).
    pub forced: Option<SocketAddr>,
    /// The bearer token's source, asked at each start.
    pub auth: AuthSource,
}

impl HttpConfig {
    /// As settings say, with the token in the system keychain.
    pub fn from_settings() -> HttpConfig {
        HttpConfig {
            forced: None,
            auth: system_keychain(),
        }
    }
}

/// The system keychain (looked up at each start, so one that appears later is used).
pub fn system_keychain() -> AuthSource {
    Arc::new(|| {
        let keychain =
            tidings_platform::KeyringKeychain::system(tidings_platform::keychain::SERVICE)
                .map_err(|e| HttpError::Token { source: e.into() })?;
        Ok(AuthMode::Token(Arc::new(keychain)))
    })
}

impl Config {
    /// The user's stores and settings (`$HOME`, the per-OS config directory), the socket's
    /// default path, HTTP as settings say, default limits.
    pub fn for_user() -> Result<Config, StartError> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or(StartError::NoHome)?;
        let settings = tidings_platform::paths::config_dir()?.join("settings.toml");
        Ok(Config::with_stores(Stores::Real { home, settings }))
    }

    /// Demo mode with `demo`, the socket in the demo directory, HTTP as settings say.
    pub fn demo(demo: DemoConfig) -> Config {
        Config::with_stores(Stores::Demo(demo))
    }

    fn with_stores(stores: Stores) -> Config {
        Config {
            socket: None,
            stores,
            http: HttpConfig::from_settings(),
            limits: ServerLimits::default(),
            engine_limits: Limits::default(),
        }
    }
}

/// Why the engine could not start. Each names what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// `Tidings::start` was called outside a tokio runtime.
    #[error("the engine must be started inside a tokio runtime")]
    NoRuntime,
    /// HOME is not set.
    #[error("HOME is not set, so the Mail and Messages stores cannot be found")]
    NoHome,
    /// The socket's or the settings' default path could not be worked out.
    #[error(transparent)]
    Path(#[from] tidings_platform::PathError),
    /// The socket could not be bound (another daemon serves, a bad directory, ...).
    #[error(transparent)]
    Socket(#[from] SocketError),
    /// The demo directory or stores could not be made.
    #[error(transparent)]
    Demo(#[from] DemoError),
    /// The settings file could not be written (first run) or read.
    #[error(transparent)]
    Settings(#[from] tidings_core::settings::SettingsError),
    /// The daemon could not start.
    #[error(transparent)]
    Daemon(#[from] DaemonError),
}

/// Why `revoke` did nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RevokeError {
    /// No client with this id is connected (it left, or the id is wrong).
    #[error("no client {id} is connected; it may have left (see State.clients for the ids)")]
    UnknownClient {
        /// The id asked for.
        id: u64,
    },
}

/// What demo mode set up, for the how-to the CLI prints.
#[derive(Clone, Debug)]
pub struct DemoInfo {
    /// The demo directory (the fake home).
    pub root: PathBuf,
    /// Its `settings.toml`.
    pub settings: PathBuf,
    /// Whether the stores were reused or seeded.
    pub layout: Layout,
    /// The simulator's period.
    pub simulate: Option<Duration>,
}

/// Where the last build that could read a store is remembered, to tell a stale grant: next to
/// the demo's stores in demo mode, so a demo never touches the user's record.
fn access_record(demo: Option<&DemoHome>) -> Option<PathBuf> {
    match demo {
        Some(home) => Some(home.root().join(ACCESS_RECORD)),
        None => tidings_platform::paths::data_dir()
            .ok()
            .map(|d| d.join(ACCESS_RECORD)),
    }
}

/// The engine.
pub struct Tidings;

impl Tidings {
    /// Start everything (see the module docs); call inside a tokio runtime. The socket is
    /// bound and locked first, so a second engine fails before doing any work.
    pub fn start(config: Config) -> Result<Handle, StartError> {
        tokio::runtime::Handle::try_current().map_err(|_| StartError::NoRuntime)?;
        let Config {
            socket,
            stores,
            http,
            limits,
            engine_limits,
        } = config;
        let (listener, daemon_config, demo, first_run) = match stores {
            Stores::Real { home, settings } => {
                let path = match socket {
                    Some(path) => path,
                    None => tidings_platform::paths::socket_path()?,
                };
                let listener = SocketListener::bind(&path)?;
                // A first run leaves a commented file to edit, with everything off.
                let created = crate::settings_file::create_if_missing(&settings)?;
                if created {
                    tracing::info!(settings = %settings.display(), "wrote the default settings");
                }
                let config = DaemonConfig {
                    store_paths: StorePaths::for_home(&home),
                    contacts: ContactsSource::for_user(&home),
                    settings_path: settings,
                    engine_limits,
                    limits,
                    demo: None,
                };
                (listener, config, None, created)
            }
            Stores::Demo(demo) => {
                let home = DemoHome::create(demo.data_dir.as_deref())?;
                let path = socket.unwrap_or_else(|| home.default_socket_path());
                let listener = SocketListener::bind(&path)?;
                let created = !home.settings_path().exists();
                let layout = home.lay_out()?;
                let running = Demo::start(&home, demo.simulate)?;
                let config = DaemonConfig {
                    store_paths: home.store_paths(),
                    contacts: ContactsSource::for_demo(&home),
                    settings_path: home.settings_path(),
                    engine_limits,
                    limits,
                    // The conformance levers rebuild the user's demo stores: only when asked.
                    demo: demo.conformance_controls.then(|| running.control()),
                };
                let info = DemoInfo {
                    root: home.root().to_owned(),
                    settings: home.settings_path(),
                    layout,
                    simulate: demo.simulate,
                };
                (listener, config, Some((running, home, info)), created)
            }
        };
        tracing::info!(settings = %daemon_config.settings_path.display(), "settings");
        let daemon = Daemon::start(daemon_config)?;
        // The webhook subscriptions kept from the last run resume delivering.
        crate::events::webhook::start(&daemon);
        daemon.set_socket_path(listener.path());
        if let Some(record) = access_record(demo.as_ref().map(|(_, home, _)| home)) {
            daemon.set_access_record(record);
        }
        let auth = http.auth.clone();
        let supervisor = HttpSupervisor::spawn(&daemon, http.forced, http.auth);
        let stop = CancellationToken::new();
        let (settled_tx, settled) = watch::channel(None);
        let (done_tx, done) = watch::channel(false);
        let socket_path = listener.path().to_owned();
        let demo_info = demo.as_ref().map(|(_, _, info)| info.clone());
        let shared = Arc::new(Shared {
            daemon: daemon.clone(),
            socket_path,
            stop: stop.clone(),
            settled,
            done,
            outcome: Mutex::new(None),
            demo: demo_info,
            first_run: AtomicBool::new(first_run),
            auth,
        });
        let runner = Runner {
            listener,
            daemon,
            supervisor,
            stop,
            settled: settled_tx,
            forced: http.forced,
            demo: demo.map(|(running, home, _)| (running, home)),
        };
        let weak = Arc::downgrade(&shared);
        tokio::spawn(async move {
            let outcome = runner.run().await;
            if let Some(shared) = weak.upgrade() {
                *lock(&shared.outcome) = Some(outcome);
            }
            done_tx.send_replace(true);
        });
        Ok(Handle { shared })
    }
}

/// A running engine; clones share it. Dropping every handle does not stop it: call
/// [`shutdown`](Handle::shutdown).
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

struct Shared {
    daemon: Daemon,
    socket_path: PathBuf,
    stop: CancellationToken,
    settled: watch::Receiver<Option<HttpEndpointState>>,
    done: watch::Receiver<bool>,
    /// The run's result, taken by the first `join`.
    outcome: Mutex<Option<Result<(), HttpError>>>,
    demo: Option<DemoInfo>,
    /// Whether the settings file did not exist before this start, until the app's
    /// walk-through is finished.
    first_run: AtomicBool,
    /// The HTTP token's source, as the endpoint uses it (for the app's show and rotate).
    auth: AuthSource,
}

impl Handle {
    /// The one model of what the engine knows, updated on every change (coalesced). It holds
    /// no personal data: any local client may read the same through `tidings/status`.
    pub fn state(&self) -> watch::Receiver<State> {
        self.shared.daemon.watch_state()
    }

    /// What to tell the user (first subscriptions, Full Disk Access, rebuilds, rejected
    /// edits), each kind only while its `[notifications]` switch is on. Show them with
    /// [`notices::deliver`](crate::notices::deliver) and a `Notifier`.
    pub fn notices(&self) -> tokio::sync::broadcast::Receiver<crate::notices::Notice> {
        self.shared.daemon.notices()
    }

    /// The last deliveries (time, type, client, sender), in memory only; subscribe to be told
    /// of changes, clear it with [`Activity::clear`].
    pub fn activity(&self) -> &Activity {
        self.shared.daemon.activity()
    }

    /// The settings as configured (the full allowlists, which `State` only counts); a pause
    /// hides every type from clients without changing them.
    pub fn settings(&self) -> Settings {
        self.shared.daemon.settings()
    }

    /// Told of every settings change in force: an edit through the handle, a hand edit of the
    /// file once applied, a pause or its end. `State` only counts allowlists, so a hand edit
    /// that swaps one entry for another changes the settings but not the `State`.
    pub fn settings_changes(&self) -> watch::Receiver<Arc<Settings>> {
        self.shared.daemon.settings_receiver()
    }

    /// Change the settings: `f` edits a copy, which is validated by the save, written
    /// atomically and applied live, by the same path a file edit takes.
    pub fn update_settings(&self, f: impl FnOnce(&mut Settings)) -> Result<(), DaemonError> {
        self.shared.daemon.update_settings(f)
    }

    /// Revoke client `id` (from `State.clients`): its streams end with `terminated`
    /// (Forbidden) and its later requests are refused until it reconnects; over HTTP, until
    /// the token is rotated (docs/decisions/engine-api.md).
    pub fn revoke(&self, id: u64) -> Result<(), RevokeError> {
        if self.shared.daemon.revoke(id) {
            Ok(())
        } else {
            Err(RevokeError::UnknownClient { id })
        }
    }

    /// The agents seen and the questions open about them. The app calls
    /// [`Agents::set_prompts`](crate::agents::Agents::set_prompts) so that agents with no
    /// grant wait for its answer under `[agents] new = "ask"` (headless, they are refused).
    pub fn agents(&self) -> &crate::agents::Agents {
        self.shared.daemon.agents()
    }

    /// The user's answer to agent `id`'s question (Allow, Don't Allow): saved as its grant.
    pub fn answer_agent(&self, id: &str, allow: bool) -> Result<(), AgentError> {
        self.shared.daemon.answer_agent(id, allow)
    }

    /// Allow or deny agent `id`; denied, its streams end with `terminated` at once and its
    /// later requests are refused until it is allowed again.
    pub fn set_agent_access(&self, id: &str, allow: bool) -> Result<(), AgentError> {
        self.shared.daemon.set_agent_access(id, allow)
    }

    /// Set agent `id`'s grant of `ty`: every sender, none, or some of the type's allowlist.
    pub fn set_agent_type(
        &self,
        id: &str,
        ty: tidings_core::EventType,
        grant: tidings_core::settings::TypeGrant,
    ) -> Result<(), AgentError> {
        self.shared.daemon.set_agent_type(id, ty, grant)
    }

    /// Forget agent `id`'s grant: `[agents] new` applies to it again.
    pub fn forget_agent(&self, id: &str) -> Result<(), AgentError> {
        self.shared.daemon.forget_agent(id)
    }

    /// The socket served.
    pub fn socket_path(&self) -> &Path {
        &self.shared.socket_path
    }

    /// The settings file read and watched.
    pub fn settings_path(&self) -> &Path {
        self.shared.daemon.settings_path()
    }

    /// Whether this start wrote the settings file (it did not exist): the app's first run,
    /// when it opens its walk-through.
    pub fn first_run(&self) -> bool {
        self.shared.first_run.load(Ordering::Acquire)
    }

    /// The app's walk-through is done: [`first_run`](Handle::first_run) is false from now on
    /// (the settings file exists, so the next start is no first run either).
    pub fn finish_first_run(&self) {
        self.shared.first_run.store(false, Ordering::Release);
    }

    /// Pause every event type until `until_ms` (ms since the Unix epoch): clients see every
    /// type off, as if turned off, while settings.toml keeps them configured; at `until_ms`
    /// or [`resume_all`](Handle::resume_all) they come back as if turned on. Shown as
    /// `State.pausedUntilMs`. Not saved: a restart resumes.
    pub fn pause_until(&self, until_ms: u64) {
        self.shared.daemon.pause_until(until_ms);
    }

    /// End a pause now (a no-op when not paused).
    pub fn resume_all(&self) {
        self.shared.daemon.resume();
    }

    /// Until when every type is paused, if paused (ms since the Unix epoch).
    pub fn paused_until_ms(&self) -> Option<u64> {
        self.shared.daemon.paused_until_ms()
    }

    /// The HTTP token's source, the one the endpoint uses.
    pub(crate) fn auth_source(&self) -> &AuthSource {
        &self.shared.auth
    }

    pub(crate) fn daemon(&self) -> &Daemon {
        &self.shared.daemon
    }

    /// What demo mode set up, in demo mode.
    pub fn demo(&self) -> Option<&DemoInfo> {
        self.shared.demo.as_ref()
    }

    /// The HTTP endpoint's state once its first start has settled (the keychain may be
    /// slow); `None` when the engine stopped first.
    pub async fn http_settled(&self) -> Option<HttpEndpointState> {
        let mut settled = self.shared.settled.clone();
        let mut done = self.shared.done.clone();
        tokio::select! {
            r = settled.wait_for(Option::is_some) => r.ok().and_then(|s| s.clone()),
            _ = done.wait_for(|d| *d) => None,
        }
    }

    /// Stop: the socket stops accepting, streams get their final frames, the HTTP endpoint
    /// stops. Returns at once; [`join`](Handle::join) waits for the end.
    pub fn shutdown(&self) {
        self.shared.stop.cancel();
    }

    /// Wait until the engine has stopped: connections closed, the socket file removed, demo
    /// files flushed. Err when a forced (`--http`) endpoint could not start, which stops the
    /// engine by itself (returned to the first caller only).
    pub async fn join(&self) -> Result<(), HttpError> {
        let mut done = self.shared.done.clone();
        let _ = done.wait_for(|d| *d).await;
        lock(&self.shared.outcome).take().unwrap_or(Ok(()))
    }
}

/// What the background task owns: dropped in order at the end.
struct Runner {
    listener: SocketListener,
    daemon: Daemon,
    supervisor: HttpSupervisor,
    stop: CancellationToken,
    settled: watch::Sender<Option<HttpEndpointState>>,
    /// `--http`'s address, named when it fails.
    forced: Option<SocketAddr>,
    demo: Option<(Demo, DemoHome)>,
}

impl Runner {
    /// Accept until stopped (or a forced endpoint fails), then shut down in order: the daemon
    /// (streams end), the HTTP endpoint, the connections, then the socket file and the demo.
    async fn run(mut self) -> Result<(), HttpError> {
        let result = self.accept().await;
        tracing::info!("shutting down");
        self.close().await;
        result
    }

    /// Accept until stopped; Err when a forced endpoint fails (the caller then shuts down).
    async fn accept(&mut self) -> Result<(), HttpError> {
        let serving = self
            .listener
            .serve(&self.daemon, self.stop.clone().cancelled_owned());
        tokio::pin!(serving);
        tokio::select! {
            () = &mut serving => {}
            settled = self.supervisor.settled() => match settled {
                Ok(state) => {
                    self.settled.send_replace(Some(HttpEndpointState::from(&state)));
                    serving.await;
                }
                Err(error) => {
                    let failed = HttpEndpointState::Failed {
                        listen: self.forced.map(|a| a.to_string()).unwrap_or_default(),
                        error: error.to_string(),
                    };
                    self.settled.send_replace(Some(failed));
                    return Err(error);
                }
            },
        }
        Ok(())
    }

    /// The rest of `run`, after the accept loop.
    async fn close(mut self) {
        self.daemon.shutdown();
        self.supervisor.stopped().await;
        let mut state = self.daemon.watch_state();
        let closed = state.wait_for(|s| s.connections == 0);
        if tokio::time::timeout(FLUSH_GRACE + CLOSE_BACKSTOP, closed)
            .await
            .is_err()
        {
            tracing::warn!("connections still open at shutdown; closing the socket anyway");
        }
        // The socket file goes with the listener; the simulator stops before its home goes.
        drop(self.listener);
        if let Some((demo, home)) = self.demo.take() {
            drop(demo);
            drop(home);
        }
    }
}
