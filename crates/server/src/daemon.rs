//! The running daemon: a cheap-Clone [`Daemon`] handle on the engine, the settings, the hub
//! and the limits, and one rmcp service per connection ([`Daemon::serve_connection`]).
//!
//! Key types: [`DaemonConfig`] (what to start), [`Daemon`] (the handle), [`Status`] (what
//! `tidings status` shows), [`DemoControl`] (demo mode's conformance levers). Settings live in a
//! `watch` channel: every stream and listener sees a change at once (see `settings_watch`).

mod settings_watch;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use rmcp::ServiceExt;
use serde::Serialize;
use tidings_core::descriptor::enabled_descriptors;
use tidings_core::settings::SettingsError;
use tidings_core::{Engine, EventType, Limits, Settings, StorePaths};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::events::EventsHandler;
use crate::events::errors::{StreamCap, streams_exhausted, token_rotated};
use crate::http::auth::HttpAuth;
use crate::hub::Hub;
use crate::limits::ServerLimits;

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
    /// Some in demo mode: the three conformance tools are offered.
    pub demo: Option<Arc<dyn DemoControl>>,
}

/// The conformance suite's levers, implemented by demo mode; each acts through the real
/// mechanism, so the daemon sees what it would see on a Mac.
pub trait DemoControl: Send + Sync {
    /// Make the store of `ty` unreadable for a moment.
    fn yield_error(&self, ty: EventType) -> Result<(), String>;
    /// Rebuild the store file of `ty` (a gap).
    fn yield_gap(&self, ty: EventType) -> Result<(), String>;
    /// Turn `ty` off in settings (and back on after a moment).
    fn terminate(&self, ty: EventType) -> Result<(), String>;
}

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
    streams: AtomicUsize,
    /// Settings file edits refused as malformed since start (tests wait on it).
    rejected_edits: AtomicUsize,
    shutdown: CancellationToken,
    settings_watcher: Mutex<Option<notify::RecommendedWatcher>>,
    /// The HTTP endpoint's token state, once it serves; `tidings/token/rotate` reloads it.
    http_auth: OnceLock<Arc<HttpAuth>>,
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
    /// `ok`, or the store error's message.
    pub state: String,
    /// How many allowlist entries are set.
    pub allowlist: usize,
}

/// The state one principal's handlers share: a socket connection, or one HTTP bearer token
/// (all the POSTs made with it).
pub(crate) struct ConnectionState {
    streams: AtomicUsize,
    /// The cap on `streams`, as the error names it.
    cap: StreamCap,
    /// Cancelled when the client is gone (a write failed) or the daemon shuts down.
    pub(crate) closed: CancellationToken,
    /// Cancelled when the credential is revoked (the HTTP token was rotated): its streams end
    /// with `terminated` Forbidden. Never cancelled for a socket connection.
    pub(crate) revoked: CancellationToken,
}

impl ConnectionState {
    /// A socket connection's state.
    fn socket(limits: &ServerLimits, shutdown: &CancellationToken) -> ConnectionState {
        ConnectionState::with_cap(
            StreamCap::PerConnection(limits.streams_per_connection),
            shutdown,
        )
    }

    /// The state of one HTTP bearer token (or of every request, with `--no-auth`).
    pub(crate) fn http_token(daemon: &Daemon) -> Arc<ConnectionState> {
        let cap = StreamCap::PerToken(daemon.inner.limits.streams_per_token);
        Arc::new(ConnectionState::with_cap(cap, &daemon.inner.shutdown))
    }

    fn with_cap(cap: StreamCap, shutdown: &CancellationToken) -> ConnectionState {
        ConnectionState {
            streams: AtomicUsize::new(0),
            cap,
            closed: shutdown.child_token(),
            revoked: CancellationToken::new(),
        }
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
struct ConnectionCount(Arc<Inner>);

impl Drop for ConnectionCount {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How long a closing connection may take to flush what rmcp already wrote.
const FLUSH_GRACE: Duration = Duration::from_secs(5);

impl Daemon {
    /// Load settings (a malformed file is an error naming the line) and start the settings
    /// watcher and the hub. Call inside a tokio runtime.
    pub fn start(config: DaemonConfig) -> Result<Daemon, DaemonError> {
        tokio::runtime::Handle::try_current().map_err(|_| DaemonError::NoRuntime)?;
        let settings = Settings::load(&config.settings_path)?;
        let engine = Arc::new(Engine::new(&config.store_paths, config.engine_limits));
        let shutdown = CancellationToken::new();
        let hub = Hub::start(
            engine.clone(),
            &config.store_paths,
            config.limits.safety_tick,
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
                streams: AtomicUsize::new(0),
                rejected_edits: AtomicUsize::new(0),
                shutdown,
                settings_watcher: Mutex::new(None),
                http_auth: OnceLock::new(),
            }),
        };
        let watcher = settings_watch::start(&daemon)?;
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
        self.inner.connections.fetch_add(1, Ordering::AcqRel);
        let _count = ConnectionCount(self.inner.clone());
        let conn = Arc::new(ConnectionState::socket(
            &self.inner.limits,
            &self.inner.shutdown,
        ));
        let (rmcp_io, pump) =
            crate::frames::start(io, self.inner.limits.max_frame_bytes, conn.closed.clone());
        let handler = EventsHandler::new(self.clone(), conn.clone());
        match handler.serve_with_ct(rmcp_io, conn.closed.clone()).await {
            Ok(running) => {
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
                store: self.inner.hub.store_path(ty).display().to_string(),
                state: self.inner.hub.state(ty),
                allowlist: settings.for_type(ty).allow.len(),
            })
            .collect();
        Status {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            connections: self.inner.connections.load(Ordering::Acquire),
            streams: self.inner.streams.load(Ordering::Acquire),
            types,
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

    pub(crate) fn settings_path(&self) -> &std::path::Path {
        &self.inner.settings_path
    }

    /// Take a place for one more stream, or ResourceExhausted naming the cap. Checked before
    /// anything is provisioned for the stream.
    pub(crate) fn acquire_stream(
        &self,
        conn: &Arc<ConnectionState>,
    ) -> Result<StreamSlot, rmcp::ErrorData> {
        if conn.revoked.is_cancelled() {
            return Err(token_rotated());
        }
        let per = match conn.cap {
            StreamCap::PerConnection(n) | StreamCap::PerToken(n) | StreamCap::Total(n) => n,
        };
        let total = self.inner.limits.streams_total;
        let take = |counter: &AtomicUsize, max: usize| {
            counter
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < max).then_some(n + 1)
                })
                .is_ok()
        };
        if !take(&conn.streams, per) {
            return Err(streams_exhausted(conn.cap));
        }
        if !take(&self.inner.streams, total) {
            conn.streams.fetch_sub(1, Ordering::AcqRel);
            return Err(streams_exhausted(StreamCap::Total(total)));
        }
        Ok(StreamSlot {
            daemon: self.inner.clone(),
            conn: conn.clone(),
        })
    }

    /// The HTTP endpoint's token state, if an endpoint serves.
    pub(crate) fn http_auth(&self) -> Option<&Arc<HttpAuth>> {
        self.inner.http_auth.get()
    }

    /// Record the endpoint's token state; one endpoint per daemon (a second is refused).
    pub(crate) fn set_http_auth(&self, auth: Arc<HttpAuth>) -> bool {
        self.inner.http_auth.set(auth).is_ok()
    }

    /// A settings file edit was malformed and ignored.
    pub(crate) fn note_rejected_edit(&self) {
        self.inner.rejected_edits.fetch_add(1, Ordering::AcqRel);
    }

    #[cfg(test)]
    pub(crate) fn rejected_edits(&self) -> usize {
        self.inner.rejected_edits.load(Ordering::Acquire)
    }

    /// Apply settings read from the file: the same path as `update_settings`, minus the save.
    pub(crate) fn apply_settings(&self, next: Settings) {
        let _guard = lock(&self.inner.settings_lock);
        self.apply_locked(next);
    }

    fn apply_locked(&self, next: Settings) {
        let current = self.settings_arc();
        if *current == next {
            return;
        }
        let list_changed = enabled_descriptors(&current) != enabled_descriptors(&next);
        self.inner.settings.send_replace(Arc::new(next));
        if list_changed {
            self.inner
                .list_generation
                .send_modify(|g| *g = g.wrapping_add(1));
        }
        tracing::info!(list_changed, "settings applied");
    }
}

/// A poisoned lock only means a panic elsewhere; the guarded data is still sound.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
