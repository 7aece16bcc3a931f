//! Engine changes to the window and the menu: on every change of `Handle::state()` the app
//! updates the tray and emits `state-changed`, plus `settings-changed` when the settings, the
//! pause or the first-run flag differ from the last ones sent (a hand edit of settings.toml
//! included); it also wakes on every change of the settings in force, since a hand edit can
//! keep the State's counts as they were. On every change of the activity log,
//! `activity-changed`.

use tauri::{AppHandle, Emitter, Manager};
use tidings_core::Settings;
use tidings_server::{Handle, app};

use crate::commands::newest_first;
use crate::tray::Tray;

/// Starts the two watchers; they end when the engine stops.
pub fn spawn(app: &AppHandle, tray: Tray) {
    let handle = app.state::<Handle>().inner().clone();
    app.manage(tray.clone());
    let (emit, engine) = (app.clone(), handle.clone());
    tauri::async_runtime::spawn(async move {
        let mut state = engine.state();
        // A hand edit that swaps one allowlist entry for another leaves the State's counts
        // as they were: the settings in force wake this watcher too.
        let mut settings = engine.settings_changes();
        let mut sent: Option<(Settings, Option<u64>, bool)> = None;
        loop {
            settings.borrow_and_update();
            let now = state.borrow_and_update().clone();
            tray.update(&engine, &now);
            let _ = emit.emit("state-changed", &now);
            let key = (
                engine.settings(),
                engine.paused_until_ms(),
                engine.first_run(),
            );
            if sent.as_ref() != Some(&key) {
                let _ = emit.emit("settings-changed", app::settings_view(&engine).await);
                sent = Some(key);
            }
            let alive = tokio::select! {
                changed = state.changed() => changed.is_ok(),
                changed = settings.changed() => changed.is_ok(),
            };
            if !alive {
                break;
            }
        }
    });
    let emit = app.clone();
    tauri::async_runtime::spawn(async move {
        let mut changes = handle.activity().subscribe();
        while changes.changed().await.is_ok() {
            let _ = emit.emit("activity-changed", newest_first(&handle));
        }
    });
}
