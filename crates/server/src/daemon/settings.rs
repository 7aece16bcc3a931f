//! The settings from the handle: as configured and in force, saved and applied by one path.
//!
//! Configured is the file's; in force is what clients see (every type off while paused). The
//! engine's backfill guard is kept in step.

use std::path::Path;
use std::sync::Arc;

use tidings_core::descriptor::enabled_descriptors;
use tidings_core::settings::SettingsError;
use tidings_core::{Engine, EventType, Settings};
use tokio::sync::watch;

use super::{Daemon, DaemonError};
use crate::state::SettingsFileState;
use crate::sync::lock;

impl Daemon {
    /// The settings as configured (the file's). While paused, clients see every type off
    /// ([`pause_until`](Daemon::pause_until)); this still says what is configured.
    pub fn settings(&self) -> Settings {
        (*self.configured()).clone()
    }

    pub(super) fn configured(&self) -> Arc<Settings> {
        lock(&self.inner.configured).clone()
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

    /// The settings file the daemon reads and watches.
    pub fn settings_path(&self) -> &Path {
        &self.inner.settings_path
    }

    /// The settings in force (every type off while paused).
    pub(crate) fn settings_arc(&self) -> Arc<Settings> {
        self.inner.settings.borrow().clone()
    }

    /// A receiver of the settings in force; streams and listeners follow it.
    pub(crate) fn settings_receiver(&self) -> watch::Receiver<Arc<Settings>> {
        self.inner.settings.subscribe()
    }

    /// Bumped when the set of enabled types or a descriptor changes (`list_changed`).
    pub(crate) fn list_receiver(&self) -> watch::Receiver<u64> {
        self.inner.list_generation.subscribe()
    }

    /// A settings file edit was malformed (or unreadable) and ignored; `reason` names the
    /// line and never a value from the file.
    pub(crate) fn note_rejected_edit(&self, line: Option<usize>, reason: String) {
        self.inner
            .board
            .set_settings_file(SettingsFileState::Rejected { line, reason });
    }

    #[cfg(test)]
    pub(crate) fn watch_counts(&self) -> &super::settings_watch::Counts {
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

    /// The one effective-settings path: the configured settings, with the Contacts as last
    /// read and every type off while paused, become the settings in force; clients see the difference (streams, lists,
    /// `list_changed`). Called with `settings_lock` held.
    pub(super) fn publish_locked(&self) {
        let mut next = self.settings_with_contacts();
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
        engine_follows(&self.inner.engine, &next);
        self.settle_asks(&next);
        self.inner.settings.send_replace(Arc::new(next));
        // A destination added by hand (or by the CLI) answers the window's question about it.
        self.close_destination_asks();
        if list_changed {
            self.inner
                .list_generation
                .send_modify(|g| *g = g.wrapping_add(1));
        }
        tracing::info!(list_changed, "settings applied");
    }
}

/// The engine follows the settings in force: each type's backfill guard its `backfill_days`,
/// and its senders are named from the Contacts in force only while its `contact_names` is on
/// (off, events carry no `from.contact` on any path).
pub(super) fn engine_follows(engine: &Engine, settings: &Settings) {
    for ty in EventType::ALL {
        let of = settings.for_type(ty);
        engine.set_backfill_window(ty, of.backfill_window());
        let names = of
            .contact_names
            .then(|| settings.contacts.0.clone())
            .flatten();
        engine.set_names(ty, names);
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
