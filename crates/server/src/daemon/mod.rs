//! The running daemon: a cheap-Clone [`Daemon`] handle on the engine, the settings, the hub,
//! the limits and the client registry, and the builder of the [`State`] model.
//!
//! Key types: [`DaemonConfig`] (what to start), [`Daemon`] (the handle), [`DemoControl`] (demo
//! mode's conformance levers). Settings live in a `watch` channel: every stream and listener
//! sees a change at once (see `settings_watch`). The daemon knows nothing of the socket, the
//! framer, the handler or HTTP: those sit above it and call in (docs/architecture.md).

mod settings_watch;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tidings_core::allowlist::AllowKind;
use tidings_core::descriptor::enabled_descriptors;
use tidings_core::filter::SenderPattern;
use tidings_core::settings::SettingsError;
use tidings_core::{Engine, EventType, Limits, Settings, StorePaths};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::clients::{Activity, Clients, ConnectionState};
use crate::fanout::Fanout;
use crate::home::{home_relative, without_home};
use crate::hub::{Hub, ReadAhead};
use crate::limits::ServerLimits;
use crate::notices::{NOTICE_BACKLOG, Notice};
use crate::state::{
    AllowlistSummary, Board, FullDiskAccess, HttpEndpointState, SettingsFileState, State,
    StoreAccess, StoreState, TypeState,
};
use crate::sync::lock;

/// How long the state builder gathers changes before it rebuilds `State` (a burst of
/// deliveries is one rebuild, not one per event).
const STATE_COALESCE: Duration = Duration::from_millis(20);

/// How often a pause's timer compares the wall clock with its deadline (a sleeping Mac
/// stops the monotonic clock its sleep is measured on).
const PAUSE_RECHECK: Duration = Duration::from_secs(30);

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

/// The HTTP endpoint's token reload (`tidings/token/rotate`), registered while an endpoint
/// serves. A trait so the daemon holds it without depending on `http`, which sits above it.
pub(crate) trait TokenReload: Send + Sync {
    /// Re-read the token; the result's body, or why not. Blocks on the keychain.
    fn reload_blocking(&self) -> Result<Value, String>;
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
    /// One read per change for the streams at the head of a store.
    fanout: Arc<Fanout>,
    hub: Hub,
    settings_path: PathBuf,
    /// The settings in force (the file's, with every type off while paused); streams and
    /// listeners watch it.
    settings: watch::Sender<Arc<Settings>>,
    /// The settings as configured (the file's), whatever a pause hides.
    configured: Mutex<Arc<Settings>>,
    /// Until when every type is paused (ms since the Unix epoch); `None`: not paused.
    paused_until: Mutex<Option<u64>>,
    /// The runtime the daemon started in: the pause's timer runs there, whichever thread
    /// (the app's main thread, for a tray menu) asked for the pause.
    runtime: tokio::runtime::Handle,
    /// Bumped when the set of enabled types or a descriptor changes (`list_changed`).
    list_generation: watch::Sender<u64>,
    /// Serialises read-modify-save in `update_settings` and every apply.
    settings_lock: Mutex<()>,
    limits: ServerLimits,
    demo: Option<Arc<dyn DemoControl>>,
    /// Every client, the stream counts and the activity log.
    clients: Arc<Clients>,
    /// The HTTP endpoint's and the settings file's state, and the change signal.
    board: Arc<Board>,
    /// The `State` as last built; rebuilt on every change (coalesced).
    state: watch::Sender<State>,
    /// The socket served, home-relative, for `State` (set by whoever binds it).
    socket: Mutex<Option<String>>,
    shutdown: CancellationToken,
    settings_watcher: Mutex<Option<notify::RecommendedWatcher>>,
    /// The token reload of the HTTP endpoint serving now, if any.
    token_reload: Mutex<Option<Arc<dyn TokenReload>>>,
    /// What the user is told (first subscriptions, Full Disk Access, rebuilds, rejected
    /// edits); the engine's host shows them.
    notices: broadcast::Sender<Notice>,
    /// (client, type) pairs already announced as a first subscription this run.
    announced: Mutex<HashSet<(String, EventType)>>,
    /// Where the last version that could read a store is remembered, and that version
    /// (docs/decisions/doctor.md, "A stale grant").
    access_record: Mutex<Option<(PathBuf, Option<String>)>>,
    /// What the settings watcher did, for tests that count reloads.
    #[cfg(test)]
    watch_counts: settings_watch::Counts,
}

/// This build as the stale-grant record and the bug report name it: the version and the git
/// commit, as `--version` prints them.
pub fn build_id() -> &'static str {
    tidings_platform::version::LONG
}

/// How long a closing connection may take to flush what rmcp already wrote.
pub(crate) const FLUSH_GRACE: Duration = Duration::from_secs(5);

impl Daemon {
    /// Load settings (a malformed file is an error naming the line) and start the settings
    /// watcher, the hub and the state builder. Call inside a tokio runtime.
    pub fn start(config: DaemonConfig) -> Result<Daemon, DaemonError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| DaemonError::NoRuntime)?;
        let (seen, settings) = settings_watch::Snapshot::load(&config.settings_path)?;
        let engine = Arc::new(Engine::new(&config.store_paths, config.engine_limits));
        set_backfill_windows(&engine, &settings);
        let shutdown = CancellationToken::new();
        let fanout = Arc::new(Fanout::new(engine.clone()));
        let read_ahead: Option<ReadAhead> = config.limits.shared_reads.then(|| {
            let fanout = Arc::clone(&fanout);
            Arc::new(move |ty, generation| fanout.read_ahead(ty, generation)) as ReadAhead
        });
        let hub = Hub::start(
            engine.clone(),
            &config.store_paths,
            config.limits.safety_tick,
            config.limits.live_check,
            shutdown.clone(),
            read_ahead,
        );
        let board = Arc::new(Board::default());
        let clients = Clients::new(config.limits.clone(), board.clone());
        let daemon = Daemon {
            inner: Arc::new(Inner {
                fanout,
                engine,
                hub,
                settings_path: config.settings_path,
                configured: Mutex::new(Arc::new(settings.clone())),
                paused_until: Mutex::new(None),
                runtime,
                settings: watch::Sender::new(Arc::new(settings)),
                list_generation: watch::Sender::new(0),
                settings_lock: Mutex::new(()),
                limits: config.limits,
                demo: config.demo,
                clients,
                board,
                state: watch::Sender::new(placeholder_state()),
                socket: Mutex::new(None),
                shutdown,
                settings_watcher: Mutex::new(None),
                token_reload: Mutex::new(None),
                notices: broadcast::Sender::new(NOTICE_BACKLOG),
                announced: Mutex::new(HashSet::new()),
                access_record: Mutex::new(None),
                #[cfg(test)]
                watch_counts: settings_watch::Counts::default(),
            }),
        };
        daemon.inner.state.send_replace(daemon.state());
        spawn_state_builder(&daemon);
        spawn_rebuild_notices(&daemon);
        let watcher = settings_watch::start(&daemon, seen)?;
        *lock(&daemon.inner.settings_watcher) = Some(watcher);
        tracing::info!(settings = %daemon.inner.settings_path.display(), "daemon started");
        Ok(daemon)
    }

    /// The state now, built fresh; never blocks on a store (the hub's last check is used).
    pub fn state(&self) -> State {
        let settings = self.configured();
        let types = EventType::ALL
            .into_iter()
            .map(|ty| self.type_state(ty, &settings))
            .collect();
        State {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            socket: lock(&self.inner.socket).clone(),
            connections: self.inner.clients.connections(),
            streams: self.inner.clients.streams(),
            types,
            http: self.inner.board.http(),
            settings: self.inner.board.settings_file(),
            clients: self.inner.clients.snapshot(),
            paused_until_ms: self.paused_until_ms(),
            full_disk_access: FullDiskAccess::Unknown,
        }
        .with_full_disk_access(self.last_access_version().as_deref(), build_id())
    }

    /// The version that last read a store, as remembered in the data directory.
    fn last_access_version(&self) -> Option<String> {
        lock(&self.inner.access_record)
            .as_ref()
            .and_then(|(_, v)| v.clone())
    }

    /// Remember the last version that could read a store in `path` (the data directory's
    /// `access-granted`), so a grant lost with an update is told from one never given.
    /// Read now; written whenever a store is readable under a build not yet recorded.
    pub fn set_access_record(&self, path: PathBuf) {
        let version = std::fs::read_to_string(&path)
            .ok()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty());
        *lock(&self.inner.access_record) = Some((path, version));
        self.inner.board.changed();
    }

    /// A store was readable: record this build, if it is not the one recorded. Atomic
    /// (temp file and rename); a failure is logged, never fatal.
    fn record_access(&self) {
        let build = build_id();
        let mut record = lock(&self.inner.access_record);
        let Some((path, version)) = record.as_mut() else {
            return;
        };
        if version.as_deref() == Some(build) {
            return;
        }
        match tidings_platform::files::write_atomic(path, format!("{build}\n").as_bytes(), 0o644) {
            Ok(()) => *version = Some(build.to_owned()),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot record Full Disk Access");
            }
        }
    }

    /// The user's notices (see `notices`): each kind is sent only while its switch is on.
    pub fn notices(&self) -> broadcast::Receiver<Notice> {
        self.inner.notices.subscribe()
    }

    /// Send `notice` if its switch (and the master switch) is on.
    pub(crate) fn notify(&self, notice: Notice) {
        if self.configured().notifications.allows(notice.kind()) {
            tracing::debug!(kind = ?notice.kind(), "notice");
            let _ = self.inner.notices.send(notice);
        }
    }

    /// A subscription to `ty` was accepted for `conn`: the first one of this client (by
    /// name, else by connection) to this type since start is a notice.
    pub(crate) fn subscribed(
        &self,
        conn: &ConnectionState,
        ty: EventType,
        arguments: &serde_json::Map<String, Value>,
    ) {
        let name = conn.name();
        let key = name
            .clone()
            .unwrap_or_else(|| format!("connection {}", conn.id()));
        if !lock(&self.inner.announced).insert((key, ty)) {
            return;
        }
        self.notify(Notice::FirstSubscription {
            client: crate::notices::client_label(name.as_deref()),
            scope: crate::notices::scope(ty, arguments),
        });
    }

    fn type_state(&self, ty: EventType, settings: &Settings) -> TypeState {
        let hub = &self.inner.hub;
        let scan_error = self.inner.engine.last_scan_error(ty);
        // A stamp can work while every scan fails: the scan's error then tells.
        let (access, problem) = match hub.health(ty) {
            Some(Ok(())) => match &scan_error {
                Some(e) => (StoreAccess::Unreadable, Some(e.clone())),
                None => (StoreAccess::Ok, None),
            },
            Some(Err((kind, message))) => (StoreAccess::from(kind), Some(message)),
            None => (StoreAccess::NotChecked, None),
        };
        let type_settings = settings.for_type(ty);
        TypeState {
            name: ty.name().to_owned(),
            enabled: type_settings.enabled,
            allowlist: allowlist_summary(type_settings.allow.iter().map(|e| &e.0)),
            backfill_days: type_settings.backfill_days,
            store: StoreState {
                // Any socket client (an agent too) may ask: paths are shown home-relative.
                path: home_relative(hub.store_path(ty)),
                access,
                problem: problem.map(|p| without_home(&p)),
                last_scan_error: scan_error.map(|e| without_home(&e)),
                last_change_ms: hub.last_change_ms(ty),
                backfilled: self.inner.engine.backfill_skipped(ty),
                unreadable_rows: self.inner.engine.unreadable_rows(ty),
            },
        }
    }

    /// The state, rebuilt on every change (coalesced): clients, subscriptions, deliveries,
    /// settings, the stores, the HTTP endpoint.
    pub fn watch_state(&self) -> watch::Receiver<State> {
        self.inner.state.subscribe()
    }

    /// The last deliveries (in memory only; they name senders, so never part of `State`).
    pub fn activity(&self) -> &Activity {
        self.inner.clients.activity()
    }

    /// Revoke client `id` (as `State.clients` lists it): its streams end with `terminated`
    /// (Forbidden) and its later requests are refused until it reconnects. False when no such
    /// client is connected.
    pub fn revoke(&self, id: u64) -> bool {
        self.inner.clients.revoke(id)
    }

    /// The settings as configured (the file's). While paused, clients see every type off
    /// ([`pause_until`](Daemon::pause_until)); this still says what is configured.
    pub fn settings(&self) -> Settings {
        (*self.configured()).clone()
    }

    fn configured(&self) -> Arc<Settings> {
        lock(&self.inner.configured).clone()
    }

    /// Until when every type is paused (ms since the Unix epoch), if paused.
    pub fn paused_until_ms(&self) -> Option<u64> {
        *lock(&self.inner.paused_until)
    }

    /// Pause every type until `until_ms` (ms since the Unix epoch): clients see every type
    /// off, exactly as if each were turned off (streams end `NotFound`, `events/list` empties,
    /// `list_changed`), while settings.toml keeps them configured. At `until_ms`, or at
    /// [`resume`](Daemon::resume), it is as if they were turned back on. Not saved: a
    /// restart resumes (docs/decisions/app.md).
    pub fn pause_until(&self, until_ms: u64) {
        {
            let _guard = lock(&self.inner.settings_lock);
            *lock(&self.inner.paused_until) = Some(until_ms);
            self.publish_locked();
        }
        self.inner.board.changed();
        tracing::info!("paused every event type");
        let weak = Arc::downgrade(&self.inner);
        let shutdown = self.inner.shutdown.clone();
        self.inner.runtime.spawn(async move {
            // The deadline is wall-clock time ("Paused until 15:30"), and the monotonic clock
            // stops while a Mac sleeps: wake at least every PAUSE_RECHECK to compare.
            loop {
                let left = until_ms.saturating_sub(crate::state::now_ms());
                if left == 0 {
                    break;
                }
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(Duration::from_millis(left).min(PAUSE_RECHECK)) => {}
                }
            }
            if let Some(inner) = weak.upgrade() {
                Daemon { inner }.resume_if(Some(until_ms));
            }
        });
    }

    /// End a pause now (a no-op when not paused).
    pub fn resume(&self) {
        let paused = self.paused_until_ms();
        self.resume_if(paused);
    }

    /// End the pause if it is still the one that ends at `until`: a later pause (a new
    /// deadline) is left alone by the earlier one's timer.
    fn resume_if(&self, until: Option<u64>) {
        {
            let _guard = lock(&self.inner.settings_lock);
            let mut paused = lock(&self.inner.paused_until);
            if until.is_none() || *paused != until {
                return;
            }
            *paused = None;
            drop(paused);
            self.publish_locked();
        }
        self.inner.board.changed();
        tracing::info!("resumed every event type");
    }

    /// Change the settings: saved to the file and applied at once, by the same path a file
    /// edit takes (the watcher then sees an unchanged file and does nothing).
    pub fn update_settings(&self, f: impl FnOnce(&mut Settings)) -> Result<(), DaemonError> {
        let _guard = lock(&self.inner.settings_lock);
        let mut next = self.settings();
        f(&mut next);
        crate::settings_file::save(&next, &self.inner.settings_path)?;
        // The file now holds good settings, whatever it held before.
        self.apply_locked(next);
        Ok(())
    }

    /// End streams and watchers. Connections see their streams end; the listener is the
    /// caller's to close.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
        lock(&self.inner.settings_watcher).take();
    }

    /// The settings file the daemon reads and watches.
    pub fn settings_path(&self) -> &Path {
        &self.inner.settings_path
    }

    // ---- for the layers above (socket, handler, HTTP) and the watchers ----

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

    pub(crate) fn fanout(&self) -> &Arc<Fanout> {
        &self.inner.fanout
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

    pub(crate) fn clients(&self) -> &Arc<Clients> {
        &self.inner.clients
    }

    /// Where the HTTP supervisor reports the endpoint's state.
    pub(crate) fn report_http(&self, state: HttpEndpointState) {
        self.inner.board.set_http(state);
    }

    /// The socket the engine serves, shown home-relative in `State`.
    pub(crate) fn set_socket_path(&self, path: &Path) {
        *lock(&self.inner.socket) = Some(home_relative(path));
        self.inner.board.changed();
    }

    /// The HTTP endpoint's token reload, if an endpoint serves.
    pub(crate) fn token_reload(&self) -> Option<Arc<dyn TokenReload>> {
        lock(&self.inner.token_reload).clone()
    }

    /// Record the endpoint's token reload; one endpoint at a time (a second is refused).
    pub(crate) fn set_token_reload(&self, reload: Arc<dyn TokenReload>) -> bool {
        let mut slot = lock(&self.inner.token_reload);
        if slot.is_some() {
            return false;
        }
        *slot = Some(reload);
        true
    }

    /// Forget `reload` as the endpoint stops; a no-op if another endpoint has since taken its
    /// place, so a late drop cannot unregister its successor.
    pub(crate) fn clear_token_reload(&self, reload: &Arc<dyn TokenReload>) {
        let mut slot = lock(&self.inner.token_reload);
        if slot
            .as_ref()
            .is_some_and(|r| std::ptr::addr_eq(Arc::as_ptr(r), Arc::as_ptr(reload)))
        {
            *slot = None;
        }
    }

    /// A settings file edit was malformed (or unreadable) and ignored; `reason` names the
    /// line and never a value from the file.
    pub(crate) fn note_rejected_edit(&self, line: Option<usize>, reason: String) {
        self.inner
            .board
            .set_settings_file(SettingsFileState::Rejected { line, reason });
    }

    #[cfg(test)]
    pub(crate) fn watch_counts(&self) -> &settings_watch::Counts {
        &self.inner.watch_counts
    }

    /// Apply settings read from the file: the same path as `update_settings`, minus the save.
    pub(crate) fn apply_settings_from_file(&self, next: Settings) {
        let _guard = lock(&self.inner.settings_lock);
        self.apply_locked(next);
    }

    /// The one apply: the file holds these settings now, so a rejection shown ends.
    fn apply_locked(&self, next: Settings) {
        self.inner.board.set_settings_file(SettingsFileState::Ok);
        *lock(&self.inner.configured) = Arc::new(next);
        self.publish_locked();
    }

    /// The one effective-settings path: the configured settings, with every type off while
    /// paused, become the settings in force; clients see the difference (streams, lists,
    /// `list_changed`). Called with `settings_lock` held.
    fn publish_locked(&self) {
        let mut next = (*self.configured()).clone();
        if self.paused_until_ms().is_some() {
            for ty in EventType::ALL {
                next.for_type_mut(ty).enabled = false;
            }
        }
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

/// Rebuild `State` whenever something it shows changes: the board (clients, streams,
/// deliveries, HTTP, settings file), the settings, or a store's check. A burst is gathered
/// for [`STATE_COALESCE`] into one rebuild; receivers are woken only when it differs.
fn spawn_state_builder(daemon: &Daemon) {
    let weak = Arc::downgrade(&daemon.inner);
    let mut board = daemon.inner.board.subscribe();
    let mut settings = daemon.settings_receiver();
    let mut stores = daemon.inner.hub.changes();
    // Ends when the daemon is dropped (its channels close); after a shutdown it still shows
    // the endpoints and connections going away.
    tokio::spawn(async move {
        loop {
            let open = tokio::select! {
                r = board.changed() => r.is_ok(),
                r = settings.changed() => r.is_ok(),
                r = stores.changed() => r.is_ok(),
            };
            if !open {
                return;
            }
            tokio::time::sleep(STATE_COALESCE).await;
            board.borrow_and_update();
            settings.borrow_and_update();
            stores.borrow_and_update();
            let Some(inner) = weak.upgrade() else { return };
            let daemon = Daemon { inner };
            let next = daemon.state();
            if next.types.iter().any(|t| t.store.access == StoreAccess::Ok) {
                daemon.record_access();
            }
            let notices = state_notices(&daemon.inner.state.borrow(), &next);
            for notice in notices {
                daemon.notify(notice);
            }
            daemon.inner.state.send_if_modified(|s| {
                let changed = *s != next;
                *s = next;
                changed
            });
        }
    });
}

/// What changed between two States that the user is told of: stores of enabled types newly
/// refused (Full Disk Access), a settings edit newly rejected.
fn state_notices(previous: &State, next: &State) -> Vec<Notice> {
    let denied = |s: &State, name: &str| {
        s.types
            .iter()
            .any(|t| t.name == name && t.enabled && t.store.access == StoreAccess::PermissionDenied)
    };
    let mut notices = Vec::new();
    let newly: Vec<&'static str> = EventType::ALL
        .into_iter()
        .filter(|ty| denied(next, ty.name()) && !denied(previous, ty.name()))
        .map(EventType::app_name)
        .collect();
    if !newly.is_empty() {
        notices.push(Notice::FullDiskAccessMissing {
            stores: newly,
            stale: matches!(next.full_disk_access, FullDiskAccess::Stale { .. }),
        });
    }
    if let SettingsFileState::Rejected { line, .. } = &next.settings
        && previous.settings != next.settings
    {
        notices.push(Notice::SettingsRejected { line: *line });
    }
    notices
}

/// A store rebuilt (the hub saw a new file between two good reads) is a notice.
fn spawn_rebuild_notices(daemon: &Daemon) {
    let weak = Arc::downgrade(&daemon.inner);
    let mut rebuilds = daemon.inner.hub.rebuilds();
    let shutdown = daemon.inner.shutdown.clone();
    tokio::spawn(async move {
        loop {
            let received = tokio::select! {
                () = shutdown.cancelled() => return,
                r = rebuilds.recv() => r,
            };
            let ty = match received {
                Ok(ty) => ty,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            let Some(inner) = weak.upgrade() else { return };
            Daemon { inner }.notify(Notice::StoreRebuilt {
                store: ty.app_name(),
            });
        }
    });
}

/// The State before the first build (replaced before `start` returns).
fn placeholder_state() -> State {
    State {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        socket: None,
        connections: 0,
        streams: 0,
        types: Vec::new(),
        http: HttpEndpointState::Off,
        settings: SettingsFileState::Ok,
        clients: Vec::new(),
        paused_until_ms: None,
        full_disk_access: FullDiskAccess::Unknown,
    }
}

/// Counts per kind, by core's one classification of an entry.
fn allowlist_summary<'a>(entries: impl Iterator<Item = &'a SenderPattern>) -> AllowlistSummary {
    let mut s = AllowlistSummary::default();
    for entry in entries {
        match AllowKind::of(entry) {
            AllowKind::Address => s.addresses += 1,
            AllowKind::Phone => s.handles += 1,
            AllowKind::Domain => s.domains += 1,
            AllowKind::PhonePrefix | AllowKind::AddressPrefix => s.prefixes += 1,
        }
    }
    s
}

/// The engine's backfill guard follows `backfill_days` of each type.
fn set_backfill_windows(engine: &Engine, settings: &Settings) {
    for ty in EventType::ALL {
        engine.set_backfill_window(ty, settings.for_type(ty).backfill_window());
    }
}

/// The demo's `terminate` lever changes settings the way the app does: saved and applied at
/// once, not left for the file watcher's quiet period.
impl crate::demo::SettingsEditor for Daemon {
    fn edit(&self, change: &mut dyn FnMut(&mut Settings)) -> Result<(), SettingsError> {
        self.update_settings(|s| change(s)).map_err(|e| match e {
            DaemonError::Settings(e) => e,
            // `update_settings` fails only by saving; keep any other cause readable.
            other => SettingsError::Io {
                path: self.settings_path().to_owned(),
                source: std::io::Error::other(other.to_string()),
            },
        })
    }
}
