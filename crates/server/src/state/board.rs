//! The [`Board`]: where the HTTP endpoint's and the settings file's state are reported.
//!
//! These are the parts of [`State`](super::State) that nothing else holds; every change to
//! the model is signalled here.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::sync::lock;

/// The loopback HTTP endpoint, as its supervisor reports it.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum HttpEndpointState {
    /// Not serving: off in settings, not supervised, or shut down.
    Off,
    /// The first start has not settled yet (the keychain may be slow).
    Starting,
    /// Serving at `url`.
    Serving {
        /// `http://127.0.0.1:PORT/mcp`.
        url: String,
        /// Whether requests need no token (`--demo --no-auth`).
        no_auth: bool,
    },
    /// Asked for, but could not start; the next settings change retries.
    Failed {
        /// The address asked for.
        listen: String,
        /// Why (names no secret).
        error: String,
    },
}

impl HttpEndpointState {
    /// One line for `tidings status`.
    pub fn describe(&self) -> String {
        match self {
            HttpEndpointState::Off => "off".to_owned(),
            HttpEndpointState::Starting => "starting".to_owned(),
            HttpEndpointState::Serving { url, no_auth } => format!(
                "serving at {url}{}",
                if *no_auth {
                    " (no token: --no-auth)"
                } else {
                    ""
                }
            ),
            HttpEndpointState::Failed { listen, error } => {
                format!("not serving on {listen}: {error}")
            }
        }
    }
}

/// Whether the settings in force are the file's.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum SettingsFileState {
    /// The file's content is in force (or there is no file: the defaults).
    Ok,
    /// The file's current content was refused; the last good settings stay in force.
    Rejected {
        /// The line at fault, when known.
        line: Option<usize>,
        /// Why, naming the line and the limit, never a value from the file.
        reason: String,
    },
}

impl SettingsFileState {
    /// `ok`, or why the file is refused and what is used instead.
    pub fn describe(&self) -> String {
        match self {
            SettingsFileState::Ok => "ok".to_owned(),
            SettingsFileState::Rejected { reason, .. } => {
                format!("{reason}; using the last good settings")
            }
        }
    }
}

/// Where the parts of [`State`](super::State) that nothing else holds are reported, and where
/// every change is signalled (the engine rebuilds its `State` on each signal, coalesced).
pub(crate) struct Board {
    changes: watch::Sender<u64>,
    http: Mutex<HttpEndpointState>,
    settings_file: Mutex<SettingsFileState>,
}

impl Default for Board {
    fn default() -> Board {
        Board {
            changes: watch::Sender::new(0),
            http: Mutex::new(HttpEndpointState::Off),
            settings_file: Mutex::new(SettingsFileState::Ok),
        }
    }
}

impl Board {
    /// Something the state shows changed.
    pub(crate) fn changed(&self) {
        self.changes.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// A receiver that changes with every [`changed`](Board::changed).
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The HTTP supervisor reports the endpoint's state.
    pub(crate) fn set_http(&self, state: HttpEndpointState) {
        *lock(&self.http) = state;
        self.changed();
    }

    pub(crate) fn http(&self) -> HttpEndpointState {
        lock(&self.http).clone()
    }

    /// The settings watcher (or a save) reports the file's state.
    pub(crate) fn set_settings_file(&self, state: SettingsFileState) {
        *lock(&self.settings_file) = state;
        self.changed();
    }

    pub(crate) fn settings_file(&self) -> SettingsFileState {
        lock(&self.settings_file).clone()
    }
}
