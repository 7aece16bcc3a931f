//! The running daemon: [`Daemon`], the cheap-Clone handle, with its config, start and shutdown.
//!
//! The handle is on the engine, the settings, the hub, the limits and the client registry, and
//! builds the [`State`] model.
//!
//! Key types: [`DaemonConfig`] (what to start), [`Daemon`] (the handle), [`DemoControl`] (demo
//! mode's conformance levers). Settings live in a `watch` channel: every stream and listener
//! sees a change at once (see `settings_watch`). The daemon knows nothing of the socket, the
//! framer, the handler or HTTP: those sit above it and call in (docs/architecture.md).
//!
//! The files, by what they serve (each but `settings_watch` an `impl Daemon` block):
//! - this file: the handle itself, [`Daemon::start`] and [`Daemon::shutdown`];
//! - `settings`: the settings as configured and in force, saving and applying them;
//! - `settings_watch`: `settings.toml` watched, and each good edit applied live;
//! - `pause`: every type off until a deadline, and back on;
//! - `status`: the [`State`] built, rebuilt on each change and watched;
//! - `access`: the record of the last build that could read a store (a stale grant);
//! - `notices`: the user's notices and what raises them;
//! - `people`: the Contacts, read at start and again when their files change;
//! - `agent_gate`: what an agent's data request waits for (a grant, or the user's answer);
//! - `grants`: the settings an agent sees, and the user's decisions about agents;
//! - `agent_list`: the agents as `State` lists them;
//! - `destinations`: the webhook destinations the user allows, and their questions;
//! - `layers`: what the socket, the handler, HTTP and the watchers reach through the handle.

mod access;
mod agent_gate;
mod agent_list;
mod destinations;
mod grants;
mod layers;
mod notices;
mod pause;
mod people;
mod settings;
mod settings_watch;
mod status;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tidings_core::settings::SettingsError;
use tidings_core::{Engine, EventType, Limits, Settings, StorePaths};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::clients::Clients;
use crate::fanout::Fanout;
use crate::hub::{Hub, ReadAhead};
use crate::limits::ServerLimits;
use crate::notices::{NOTICE_BACKLOG, Notice};
use crate::state::{Board, State};
use crate::sync::lock;

pub use access::build_id;
pub use agent_list::agents_in_file;
pub use destinations::WebhookError;
pub use grants::AgentError;
pub(crate) use layers::TokenReload;
pub use people::ContactsSource;

/// Everything the daemon needs to start.
pub struct DaemonConfig {
    /// Where the Mail and Messages stores live.
    pub store_paths: StorePaths,
    /// `settings.toml`; watched, and edits apply live.
    pub settings_path: PathBuf,
    /// Where the Contacts stores live, and the region their numbers are read in.
    pub contacts: ContactsSource,
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
    /// Where the Contacts are read from.
    contacts_source: ContactsSource,
    /// The Contacts as last read; the settings in force carry them.
    contacts: Mutex<Arc<tidings_core::contacts::Contacts>>,
    /// Every webhook subscription, and what posts their deliveries.
    webhooks: Arc<crate::webhooks::Webhooks>,
    /// What the settings watcher did, for tests that count reloads.
    #[cfg(test)]
    watch_counts: settings_watch::Counts,
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
        let contacts = people::initial(&config.contacts);
        let in_force = Settings {
            contacts: tidings_core::settings::ContactsInForce(Some(contacts.clone())),
            ..settings.clone()
        };
        settings::engine_follows(&engine, &in_force);
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
        let webhooks = Arc::new(crate::webhooks::Webhooks::load(&config.settings_path));
        let daemon = Daemon {
            inner: Arc::new(Inner {
                webhooks,
                fanout,
                engine,
                hub,
                settings_path: config.settings_path,
                configured: Mutex::new(Arc::new(settings.clone())),
                paused_until: Mutex::new(None),
                runtime,
                settings: watch::Sender::new(Arc::new(in_force)),
                list_generation: watch::Sender::new(0),
                settings_lock: Mutex::new(()),
                limits: config.limits,
                demo: config.demo,
                clients,
                board,
                state: watch::Sender::new(status::placeholder_state()),
                socket: Mutex::new(None),
                shutdown,
                settings_watcher: Mutex::new(None),
                token_reload: Mutex::new(None),
                notices: broadcast::Sender::new(NOTICE_BACKLOG),
                announced: Mutex::new(HashSet::new()),
                access_record: Mutex::new(None),
                contacts_source: config.contacts,
                contacts: Mutex::new(contacts),
                #[cfg(test)]
                watch_counts: settings_watch::Counts::default(),
            }),
        };
        daemon.inner.state.send_replace(daemon.state());
        status::spawn_state_builder(&daemon);
        people::spawn_watch(&daemon);
        notices::spawn_rebuild_notices(&daemon);
        let watcher = settings_watch::start(&daemon, seen)?;
        *lock(&daemon.inner.settings_watcher) = Some(watcher);
        daemon
            .inner
            .webhooks
            .start_saver(daemon.inner.shutdown.clone());
        daemon.inner.webhooks.start(&daemon);
        tracing::info!(settings = %daemon.inner.settings_path.display(), "daemon started");
        Ok(daemon)
    }

    /// End streams and watchers. Connections see their streams end; the listener is the
    /// caller's to close.
    pub fn shutdown(&self) {
        self.inner.webhooks.stop();
        self.inner.shutdown.cancel();
        lock(&self.inner.settings_watcher).take();
    }
}
