//! The conformance levers as the daemon sees them: the [`DemoControl`] trait demo mode
//! implements, and [`ControlError`], why a lever could not act (which lever, which store, what
//! to do). Here, not in `daemon`, so `demo` depends on nothing else in the crate.

use std::path::PathBuf;
use std::time::Duration;

use std::sync::Arc;

use tidings_core::settings::SettingsError;
use tidings_core::{EventType, Settings};
use tidings_protocol::tools;

/// The conformance suite's levers, implemented by demo mode; each acts through the real
/// mechanism, so the daemon sees what it would see on a Mac.
pub trait DemoControl: Send + Sync {
    /// Make the store of `ty` unreadable for a moment.
    fn yield_error(&self, ty: EventType) -> Result<(), ControlError>;
    /// Rebuild the store file of `ty` (a gap).
    fn yield_gap(&self, ty: EventType) -> Result<(), ControlError>;
    /// Turn `ty` off in settings through `settings` (and back on after a moment).
    fn terminate(
        &self,
        ty: EventType,
        settings: Arc<dyn SettingsEditor>,
    ) -> Result<(), ControlError>;
}

/// How a lever changes the settings: the daemon's own path, which saves the file and applies
/// the change at once. Not a plain file write: the settings watcher applies a hand edit only
/// once the file has been still for a while, longer than the lever leaves a type off, so the
/// "off" would never be seen.
pub trait SettingsEditor: Send + Sync {
    /// Apply `change` to the settings in force, save them, and apply them now.
    fn edit(&self, change: &mut dyn FnMut(&mut Settings)) -> Result<(), SettingsError>;
}

/// One of the three levers, named as its tool is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lever {
    /// `events_conformance_yield_error`.
    YieldError,
    /// `events_conformance_yield_gap`.
    YieldGap,
    /// `events_conformance_terminate`.
    Terminate,
}

impl Lever {
    /// The tool's name.
    pub fn tool(self) -> &'static str {
        match self {
            Lever::YieldError => tools::CONFORMANCE_YIELD_ERROR,
            Lever::YieldGap => tools::CONFORMANCE_YIELD_GAP,
            Lever::Terminate => tools::CONFORMANCE_TERMINATE,
        }
    }
}

impl std::fmt::Display for Lever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.tool())
    }
}

/// Why a lever could not act. Each message names the lever, the event type and what to do;
/// the tool result carries it as text (`isError: true`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ControlError {
    /// The same lever is still acting on that type (the store is away, or the type is off).
    #[error(
        "{lever} for {ty} is still in progress; call it again in {} s, once it has finished",
        .wait.as_secs_f32()
    )]
    Busy {
        /// The lever.
        lever: Lever,
        /// The event type.
        ty: EventType,
        /// At most how long until it is free again.
        wait: Duration,
    },
    /// The store file could not be renamed away.
    #[error(
        "{lever} for {ty}: cannot move the store {} aside: {source}; check that the demo \
         directory is writable",
        .path.display()
    )]
    Move {
        /// The lever.
        lever: Lever,
        /// The event type.
        ty: EventType,
        /// The store file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The store could not be rebuilt, or the simulator not restarted on the new file.
    #[error(
        "{lever} for {ty}: cannot rebuild the store under {}: {source}; restart the demo with \
         a fresh --data-dir",
        .home.display()
    )]
    Rebuild {
        /// The lever.
        lever: Lever,
        /// The event type.
        ty: EventType,
        /// The fake home.
        home: PathBuf,
        /// What the fixtures said.
        #[source]
        source: tidings_fixtures::Error,
    },
    /// The settings file could not be read or written to turn the type off.
    #[error(
        "{lever} for {ty}: {source}; fix the file, or remove it and restart the demo to get \
         fresh demo settings"
    )]
    Settings {
        /// The lever.
        lever: Lever,
        /// The event type.
        ty: EventType,
        /// What loading or saving said (it names the file).
        #[source]
        source: SettingsError,
    },
}
