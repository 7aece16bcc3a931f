//! The window's part of the update check: the daily check's switch, this copy's version and
//! the last check as the updater recorded it (`updates/last-check.json`), and the command that
//! turns the daily check on or off. The check itself is the app's (docs/decisions/updates.md).

use serde::Serialize;

use super::updates::{read_last_check, updates_dir};
use super::{AppError, SettingsView, settings_view};
use crate::engine::Handle;

/// This copy's version: the server's is the workspace's, the one the app is built with.
pub const CURRENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The update check, as the Advanced section shows it.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdatesView {
    /// Whether the app checks once a day (`[updates] check`).
    pub check: bool,
    /// This copy's version.
    pub current: String,
    /// The last check in one line ("Tidings 0.2.0 is ready to install."); `None` before the
    /// first.
    pub last: Option<String>,
    /// When the last check ended (ms since the Unix epoch).
    pub checked_at_ms: Option<u64>,
}

/// The view for a handle whose settings say `check`. A record that cannot be read is shown
/// as such (without its path): the next check replaces it.
pub(super) fn updates_view(handle: &Handle, check: bool) -> UpdatesView {
    let (last, checked_at_ms) = match read_last_check(&updates_dir(handle.settings_path())) {
        Ok(Some(last)) => (Some(last.describe()), Some(last.checked_at_ms)),
        Ok(None) => (None, None),
        Err(_) => (
            Some("The last check's record could not be read; the next check replaces it.".into()),
            None,
        ),
    };
    UpdatesView {
        check,
        current: CURRENT_VERSION.to_owned(),
        last,
        checked_at_ms,
    }
}

/// Turn the daily update check on or off (saved in `[updates]`, the file's comments kept).
/// Not a widening edit: the check sends nothing about the user (one GET of the feed).
pub async fn set_update_check(handle: &Handle, on: bool) -> Result<SettingsView, AppError> {
    handle.update_settings(|s| s.updates.check = on)?;
    Ok(settings_view(handle).await)
}

#[cfg(test)]
mod tests {
    use super::super::updates::{LastCheck, Outcome, Staged, write_last_check};
    use super::*;
    use crate::Tidings;
    use crate::engine::{Config, DemoConfig};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_switch_is_saved_with_the_comments_and_the_last_check_shown() {
        let dir = tempfile::tempdir().unwrap();
        let handle = Tidings::start(Config::demo(DemoConfig {
            data_dir: Some(dir.path().join("d")),
            simulate: None,
            conformance_controls: false,
        }))
        .expect("the engine starts on demo stores");
        let view = settings_view(&handle).await;
        // The demo never calls out; no check has run.
        assert_eq!(
            view.updates,
            UpdatesView {
                check: false,
                current: CURRENT_VERSION.into(),
                last: None,
                checked_at_ms: None,
            }
        );

        let view = set_update_check(&handle, true).await.unwrap();
        assert!(view.updates.check);
        assert!(handle.daemon().settings().updates.check);
        let saved = std::fs::read_to_string(handle.settings_path()).unwrap();
        assert!(saved.contains("[updates]\ncheck = true"), "{saved}");
        assert!(saved.contains("# The demo never calls out"), "{saved}");
        assert!(saved.contains("# Tidings demo settings."), "{saved}");

        let updates = updates_dir(handle.settings_path());
        let check = LastCheck {
            checked_at_ms: 1_796_049_387_711,
            current: CURRENT_VERSION.into(),
            outcome: Outcome::Ready(Staged {
                version: "99.0.0".into(),
                notes: None,
                signed_by: None,
            }),
        };
        write_last_check(&updates, &check).unwrap();
        let view = set_update_check(&handle, false).await.unwrap();
        assert!(!view.updates.check);
        assert_eq!(
            view.updates.last.as_deref(),
            Some("Tidings 99.0.0 is ready to install.")
        );
        assert_eq!(view.updates.checked_at_ms, Some(1_796_049_387_711));
        let saved = std::fs::read_to_string(handle.settings_path()).unwrap();
        assert!(saved.contains("[updates]\ncheck = false"), "{saved}");

        // A damaged record says so, without its path.
        std::fs::write(updates.join(super::super::updates::LAST_CHECK_FILE), "{").unwrap();
        let last = settings_view(&handle).await.updates.last.unwrap();
        assert!(
            last.contains("could not be read") && !last.contains('/'),
            "{last}"
        );
        handle.shutdown();
    }
}
