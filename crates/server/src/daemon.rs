//! The running daemon: a cheap-Clone [`Daemon`] handle on the engine, the settings, the hub
//! and the limits, and one rmcp service per connection ([`Daemon::serve_connection`]).
//!
//! Key types: [`DaemonConfig`] (what to start), [`Daemon`] (the handle), [`Status`] (what
//! `tidings status` shows), [`DemoControl`] (demo mode's conformance levers). Settings live in a
//! `watch` channel: every stream and listener sees a change at once (see `settings_watch`).

mod connection;
mod settings_watch;

use connection::{ConnectionCount, SocketConnections};
pub(crate) use connection::{ConnectionState, StreamSlot};

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceExt;
use serde::Serialize;
use tidings_core::descriptor::enabled_descriptors;
use tidings_core::settings::SettingsError;
use tidings_core::{Engine, EventType, Limits, Settings, StorePaths};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::events::EventsHandler;
use crate::home::{home_relative, without_home};
use crate::http::auth::HttpAuth;
use crate::http::supervisor::HttpState;
use crate::hub::Hub;
use crate::limits::ServerLimits;
use crate::sync::lock;

/// Everything the daemon needs to start.
pub struct DaemonConfig {
    /// Where the Mail and Messages stores live.
    pub store_paths: StorePaths,
    /// `settings.toml`; watched, and edits apply live.
    pub settings_path: PathBuf,
    /// Bounds on the engine's work per call.
    pub engine_limits: Limits,
    /// Stream caps, frame limit, heartbeat and safety tick.
    pub limits: ServerLimits,
    /// Some in demo mode with `--conformance-controls`: the three conformance tools are
    /// offered.
    pub demo: Option<Arc<dyn DemoControl>>,
}

pub use crate::demo::DemoControl;

/// Why the daemon could not start or save settings.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DaemonError {
    /// The settings file could not be read, parsed or written.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The settings directory could not be created or watched.
    #[error("cannot watch the settings directory {path}: {message}")]
    SettingsWatch {
        /// The directory.
        path: PathBuf,
        /// What the OS or the watcher said.
        message: String,
    },
    /// `Daemon::start` was called outside a tokio runtime.
    #[error("the daemon must be started inside a tokio runtime")]
    NoRuntime,
}

/// A handle on the running daemon; clones share it.
#[derive(Clone)]
pub struct Daemon {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Arc<Engine>,
    hub: Hub,
    settings_path: PathBuf,
    /// The settings in force; streams and listeners watch it.
    settings: watch::Sender<Arc<Settings>>,
    /// Bumped when the set of enabled types or a descriptor changes (`list_changed`).
    list_generation: watch::Sender<u64>,
    /// Serialises read-modify-save in `update_settings` and every apply.
    settings_lock: Mutex<()>,
    limits: ServerLimits,
    demo: Option<Arc<dyn DemoControl>>,
    connections: AtomicUsize,
    /// The socket connections served now, for `max_socket_connections`.
    socket_connections: SocketConnections,
    streams: AtomicUsize,
    /// Settings file edits refused as malformed since start (tests wait on it).
    rejected_edits: AtomicUsize,
    /// Why the file's current content is refused, for `tidings status`; `None` when the
    /// settings in force are the file's.
    settings_rejection: Mutex<Option<String>>,
    /// Watcher passes, and distinct file contents judged (tests count reloads with them).
    settings_passes: AtomicUsize,
    settings_reads: AtomicUsize,
    shutdown: CancellationToken,
    settings_watcher: Mutex<Option<notify::RecommendedWatcher>>,
    /// The token state of the HTTP endpoint serving now, if any; `tidings/token/rotate`
    /// reloads it. Set and cleared as the endpoint starts and stops (`http::supervisor`).
    http_auth: Mutex<Option<Arc<HttpAuth>>>,
    /// What the HTTP endpoint's supervisor reports, for `tidings status`; `None` when no
    /// supervisor runs (the endpoint is then off).
    http_state: Mutex<Option<watch::Receiver<HttpState>>>,
}

/// What `tidings status` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The daemon's version.
    pub version: String,
    /// Open client connections.
    pub connections: usize,
    /// Open push streams across all connections.
    pub streams: usize,
    /// One entry per event type.
    pub types: Vec<TypeStatus>,
    /// The loopback HTTP endpoint: `off`, `serving at <url>`, or why it could not start.
    pub http: String,
    /// `ok`, or why the settings file's current content is refused ("settings.toml line
    /// 12: …; using the last good settings"), until the file is fixed.
    pub settings: String,
}

/// The state of one event type.
#[derive(Debug, Clone, Serialize)]
pub struct TypeStatus {
    /// The wire name.
    pub name: String,
    /// Whether clients may see it.
    pub enabled: bool,
    /// The store file's path.
    pub store: String,
    /// `ok`, or the store error's message: the last check's, else the last scan's.
    pub state: String,
    /// Rows skipped because they could not be read, since start-up.
    pub unreadable_rows: u64,
    /// How many allowlist entries are set.
    pub allowlist: usize,
    /// Distinct rows skipped as backfill (dated long before they appeared) since start.
    pub backfilled: u64,
}

/// How long a closing connection may take to flush what rmcp already wrote.
const FLUSH_GRACE: Duration = Duration::from_secs(5);

impl Daemon {
    /// Load settings (a malformed file is an error naming the line) and start the settings
    /// watcher and the hub. Call inside a tokio runtime.
    pub fn start(config: DaemonConfig) -> Result<Daemon, DaemonError> {
        tokio::runtime::Handle::try_current().map_err(|_| DaemonError::NoRuntime)?;
        let (seen, settings) = settings_watch::Snapshot::load(&config.settings_path)?;
        let engine = Arc::new(Engine::new(&config.store_paths, config.engine_limits));
        set_backfill_windows(&engine, &settings);
        let shutdown = CancellationToken::new();
        let hub = Hub::start(
            engine.clone(),
            &config.store_paths,
            config.limits.safety_tick,
            config.limits.live_check,
            shutdown.clone(),
        );
        let daemon = Daemon {
            inner: Arc::new(Inner {
                engine,
                hub,
                settings_path: config.settings_path,
                settings: watch::Sender::new(Arc::new(settings)),
                list_generation: watch::Sender::new(0),
                settings_lock: Mutex::new(()),
                limits: config.limits,
                demo: config.demo,
                connections: AtomicUsize::new(0),
                socket_connections: SocketConnections::default(),
                streams: AtomicUsize::new(0),
                rejected_edits: AtomicUsize::new(0),
                settings_rejection: Mutex::new(None),
                settings_passes: AtomicUsize::new(0),
                settings_reads: AtomicUsize::new(0),
                shutdown,
                settings_watcher: Mutex::new(None),
                http_auth: Mutex::new(None),
                http_state: Mutex::new(None),
            }),
        };
        let watcher = settings_watch::start(&daemon, seen)?;
        *lock(&daemon.inner.settings_watcher) = Some(watcher);
        tracing::info!(settings = %daemon.inner.settings_path.display(), "daemon started");
        Ok(daemon)
    }

    /// Serve one connection until it closes: a newline framer with the frame limit in front of
    /// one rmcp service. Streams of this connection end when it does.
    pub async fn serve_connection<T>(&self, io: T)
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let conn = Arc::new(ConnectionState::socket(
            &self.inner.limits,
            &self.inner.shutdown,
        ));
        let Some(_count) = ConnectionCount::admit(&self.inner, &conn) else {
            tracing::debug!("turned a connection away: every one holds a stream");
            return;
        };
        let started = CancellationToken::new();
        let (rmcp_io, pump) = crate::frames::start(
            io,
            self.inner.limits.max_frame_bytes,
            conn.clone(),
            started.clone(),
        );
        let handler = EventsHandler::new(self.clone(), conn.clone());
        match handler.serve_with_ct(rmcp_io, conn.closed.clone()).await {
            Ok(running) => {
                // rmcp's lifecycle has begun: notifications the framer held may go in now.
                started.cancel();
                let reason = running.waiting().await;
                tracing::debug!(?reason, "connection closed");
            }
            Err(e) => tracing::debug!(error = %e, "connection ended before a lifecycle began"),
        }
        conn.closed.cancel();
        pump.finish(FLUSH_GRACE).await;
    }

    /// A snapshot for `tidings status`; never blocks on a store (the hub's last check is used).
    pub fn status(&self) -> Status {
        let settings = self.settings_arc();
        let types = EventType::ALL
            .into_iter()
            .map(|ty| TypeStatus {
                name: ty.name().to_owned(),
                enabled: settings.for_type(ty).enabled,
                // Any socket client (an agent too) may ask: paths are shown home-relative.
                store: home_relative(self.inner.hub.store_path(ty)),
                // A stamp can work while every scan fails: the scan's error then tells.
                state: without_home(&match (
                    self.inner.hub.state(ty),
                    self.inner.engine.last_scan_error(ty),
                ) {
                    (stamp, Some(scan)) if stamp == "ok" => scan,
                    (stamp, _) => stamp,
                }),
                unreadable_rows: self.inner.engine.unreadable_rows(ty),
                allowlist: settings.for_type(ty).allow.len(),
                backfilled: self.inner.engine.backfill_skipped(ty),
            })
            .collect();
        Status {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            connections: self.inner.connections.load(Ordering::Acquire),
            streams: self.inner.streams.load(Ordering::Acquire),
            types,
            http: lock(&self.inner.http_state)
                .as_ref()
                .map_or_else(|| "off".to_owned(), |rx| rx.borrow().describe()),
            settings: lock(&self.inner.settings_rejection).as_ref().map_or_else(
                || "ok".to_owned(),
                |why| format!("{why}; using the last good settings"),
            ),
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> Settings {
        (*self.settings_arc()).clone()
    }

    /// Change the settings: saved to the file and applied at once, by the same path a file
    /// edit takes (the watcher then sees an unchanged file and does nothing).
    pub fn update_settings(&self, f: impl FnOnce(&mut Settings)) -> Result<(), DaemonError> {
        let _guard = lock(&self.inner.settings_lock);
        let mut next = self.settings();
        f(&mut next);
        next.save(&self.inner.settings_path)?;
        // The file now holds good settings, whatever it held before.
        lock(&self.inner.settings_rejection).take();
        self.apply_locked(next);
        Ok(())
    }

    /// End streams and watchers. Connections see their streams end; the listener is the
    /// caller's to close.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
        lock(&self.inner.settings_watcher).take();
    }

    // ---- for the handler and the watchers ----

    pub(crate) fn settings_arc(&self) -> Arc<Settings> {
        self.inner.settings.borrow().clone()
    }

    pub(crate) fn settings_receiver(&self) -> watch::Receiver<Arc<Settings>> {
        self.inner.settings.subscribe()
    }

    pub(crate) fn list_receiver(&self) -> watch::Receiver<u64> {
        self.inner.list_generation.subscribe()
    }

    pub(crate) fn engine(&self) -> &Arc<Engine> {
        &self.inner.engine
    }

    pub(crate) fn hub(&self) -> &Hub {
        &self.inner.hub
    }

    pub(crate) fn limits(&self) -> &ServerLimits {
        &self.inner.limits
    }

    pub(crate) fn demo(&self) -> Option<&Arc<dyn DemoControl>> {
        self.inner.demo.as_ref()
    }

    pub(crate) fn shutdown_token(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    /// The settings file the daemon reads and watches.
    pub fn settings_path(&self) -> &std::path::Path {
        &self.inner.settings_path
    }

    /// Take a place for a stream of `conn`: `ResourceExhausted` naming the cap. Checked before
    /// anything is provisioned for the stream. (A duplicate id on a socket connection never
    /// gets here: the framer refuses it.)
    pub(crate) fn acquire_stream(
        &self,
        conn: &Arc<ConnectionState>,
        id: &rmcp::model::RequestId,
    ) -> Result<StreamSlot, rmcp::ErrorData> {
        conn.acquire(&self.inner, id)
    }

    /// Where `status` reads the HTTP endpoint's state from (set by its supervisor).
    pub(crate) fn set_http_state(&self, state: watch::Receiver<HttpState>) {
        *lock(&self.inner.http_state) = Some(state);
    }

    /// The HTTP endpoint's token state, if an endpoint serves.
    pub(crate) fn http_auth(&self) -> Option<Arc<HttpAuth>> {
        lock(&self.inner.http_auth).clone()
    }

    /// Record the endpoint's token state; one endpoint at a time (a second is refused).
    pub(crate) fn set_http_auth(&self, auth: Arc<HttpAuth>) -> bool {
        let mut slot = lock(&self.inner.http_auth);
        if slot.is_some() {
            return false;
        }
        *slot = Some(auth);
        true
    }

    /// Forget `auth` as the endpoint stops; a no-op if another endpoint has since taken its
    /// place, so a late drop cannot unregister its successor.
    pub(crate) fn clear_http_auth(&self, auth: &Arc<HttpAuth>) {
        let mut slot = lock(&self.inner.http_auth);
        if slot.as_ref().is_some_and(|a| Arc::ptr_eq(a, auth)) {
            *slot = None;
        }
    }

    /// A settings file edit was malformed (or unreadable) and ignored; `why` names the line
    /// and never a value from the file.
    pub(crate) fn note_rejected_edit(&self, why: String) {
        *lock(&self.inner.settings_rejection) = Some(why);
        self.inner.rejected_edits.fetch_add(1, Ordering::AcqRel);
    }

    /// The watcher ran a pass (it was woken by a content event or the safety tick).
    pub(crate) fn note_settings_pass(&self) {
        self.inner.settings_passes.fetch_add(1, Ordering::AcqRel);
    }

    /// The watcher judged new file content.
    pub(crate) fn note_settings_read(&self) {
        self.inner.settings_reads.fetch_add(1, Ordering::AcqRel);
    }

    #[cfg(test)]
    pub(crate) fn rejected_edits(&self) -> usize {
        self.inner.rejected_edits.load(Ordering::Acquire)
    }

    /// (watcher passes, distinct contents judged) since start.
    #[cfg(test)]
    pub(crate) fn settings_reloads(&self) -> (usize, usize) {
        (
            self.inner.settings_passes.load(Ordering::Acquire),
            self.inner.settings_reads.load(Ordering::Acquire),
        )
    }

    /// Apply settings read from the file: the same path as `update_settings`, minus the save.
    /// The file is good again, so a rejection shown by `status` ends.
    pub(crate) fn apply_settings_from_file(&self, next: Settings) {
        let _guard = lock(&self.inner.settings_lock);
        lock(&self.inner.settings_rejection).take();
        self.apply_locked(next);
    }

    fn apply_locked(&self, next: Settings) {
        let current = self.settings_arc();
        if *current == next {
            return;
        }
        let list_changed = enabled_descriptors(&current) != enabled_descriptors(&next);
        set_backfill_windows(&self.inner.engine, &next);
        self.inner.settings.send_replace(Arc::new(next));
        if list_changed {
            self.inner
                .list_generation
                .send_modify(|g| *g = g.wrapping_add(1));
        }
        tracing::info!(list_changed, "settings applied");
    }
}

/// The engine's backfill guard follows `backfill_days` of each type.
fn set_backfill_windows(engine: &Engine, settings: &Settings) {
    for ty in EventType::ALL {
        engine.set_backfill_window(ty, settings.for_type(ty).backfill_window());
    }
}
