//! Engine changes to the menu and the window: on every change of `Handle::state()` the main
//! thread updates the tray and an open window gets `state-changed`, plus `settings-changed` when
//! the settings, the pause or the first-run flag differ from the last ones sent (a hand edit
//! of settings.toml included); it also wakes on every change of the settings in force, since
//! a hand edit can keep the State's counts as they were. On every change of the activity
//! log, `activity-changed`.

use std::sync::Arc;

use serde::Serialize;
use tidings_core::Settings;
use tidings_server::app;

use crate::AppEvent;
use crate::commands::{Context, newest_first};
use crate::window::Window;
use crate::wire::ToWindow;

/// Starts the two watchers on the app's runtime; they end when the engine stops.
pub fn spawn(runtime: &tokio::runtime::Handle, cx: &Arc<Context>, window: &Window) {
    let (cx_state, window_state) = (cx.clone(), window.clone());
    runtime.spawn(async move {
        let (engine, main) = (&cx_state.handle, &cx_state.main);
        let mut state = engine.state();
        // A hand edit that swaps one allowlist entry for another leaves the State's counts
        // as they were: the settings in force wake this watcher too.
        let mut settings = engine.settings_changes();
        let mut sent: Option<(Settings, Option<u64>, bool, Vec<String>)> = None;
        loop {
            settings.borrow_and_update();
            // Built only for an open window: with it closed (most of the time) a change costs
            // the menu's update alone, and a window that opens asks for everything itself.
            let changed = {
                let now = state.borrow_and_update();
                window_state
                    .is_open()
                    .then(|| event("state-changed", &cx_state.window_state(&now)))
            };
            main.send(AppEvent::Refresh);
            if let Some(changed) = changed {
                window_state.send(changed);
                // The questions open are in the view, not the settings: a new one (or one
                // answered) sends the view too.
                let asks: Vec<String> = engine
                    .agents()
                    .asks()
                    .into_iter()
                    .map(|a| a.agent.id.clone())
                    .collect();
                let key = (
                    engine.settings(),
                    engine.paused_until_ms(),
                    engine.first_run(),
                    asks,
                );
                if sent.as_ref() != Some(&key) {
                    let view = app::settings_view(engine).await;
                    window_state.send(event("settings-changed", &view));
                    sent = Some(key);
                }
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
    let (cx, window) = (cx.clone(), window.clone());
    runtime.spawn(async move {
        let mut changes = cx.handle.activity().subscribe();
        while changes.changed().await.is_ok() {
            if window.is_open() {
                window.send(event("activity-changed", &newest_first(&cx.handle)));
            }
        }
    });
}

/// `settings-changed` to an open window, on the runtime (an update check ended: the view
/// carries its line, and the engine does not watch the updates folder).
pub fn send_settings(runtime: &tokio::runtime::Handle, cx: &Arc<Context>, window: &Window) {
    if !window.is_open() {
        return;
    }
    let (cx, window) = (cx.clone(), window.clone());
    runtime.spawn(async move {
        let view = app::settings_view(&cx.handle).await;
        window.send(event("settings-changed", &view));
    });
}

/// `state-changed` with the engine's State now (the menu-bar icon's view changed).
pub fn state_changed(cx: &Context) -> ToWindow {
    event(
        "state-changed",
        &cx.window_state(&cx.handle.state().borrow()),
    )
}

fn event(name: &str, payload: &impl Serialize) -> ToWindow {
    ToWindow::Event {
        name: name.to_owned(),
        payload: serde_json::to_value(payload).expect("the engine's views serialize"),
    }
}
