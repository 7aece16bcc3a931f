//! The settings window's Tauri commands, the bridge `ui/` calls (names in
//! `src-tauri/commands.json`). Each is one call into `tidings_server` (`app::*` or the
//! `Handle`); a failure rejects with `{ "message": ... }`.

// Tauri hands managed state to a command by value (`State<'_, T>` is a cheap reference).
#![allow(clippy::needless_pass_by_value)]

use serde::Serialize;
use tauri::State as Managed;
use tidings_server::app::{self, AllowCheck, SettingsView};
use tidings_server::clients::Delivery;
use tidings_server::connect::{
    self,
    app::{HostView, Outcome},
};
use tidings_server::{Handle, State};

/// What a failed command rejects with.
#[derive(Debug, Serialize)]
pub struct CommandError {
    message: String,
}

impl<E: std::fmt::Display> From<E> for CommandError {
    fn from(error: E) -> CommandError {
        CommandError {
            message: error.to_string(),
        }
    }
}

type Reply<T> = Result<T, CommandError>;

/// Declares the commands once: the handler Tauri registers and [`COMMANDS`], the names the
/// test below checks against `commands.json`.
macro_rules! commands {
    ($($name:ident),* $(,)?) => {
        /// Every command's name, as registered (checked against `commands.json`).
        #[cfg(test)]
        pub const COMMANDS: &[&str] = &[$(stringify!($name)),*];

        /// The invoke handler with every command. Each call is logged by name at info level (`-v`)
        /// (never its arguments: allowlist entries are personal).
        pub fn handler() -> impl Fn(tauri::ipc::Invoke) -> bool + Send + Sync + 'static {
            let inner: fn(tauri::ipc::Invoke) -> bool = tauri::generate_handler![$($name),*];
            move |invoke: tauri::ipc::Invoke| {
                tracing::info!(command = invoke.message.command(), "command");
                inner(invoke)
            }
        }
    };
}

commands![
    get_state,
    get_settings,
    set_type_enabled,
    set_allowlist,
    check_allow_entry,
    set_backfill_days,
    get_activity,
    clear_activity,
    revoke_client,
    set_http,
    rotate_http_token,
    set_notifications,
    set_notification_kind,
    pause_all,
    resume_all,
    finish_first_run,
    set_start_at_login,
    list_hosts,
    connect_host,
    disconnect_host,
    open_full_disk_access,
    open_login_items,
    restart_app,
];

#[tauri::command]
fn get_state(handle: Managed<'_, Handle>) -> State {
    handle.state().borrow().clone()
}

#[tauri::command]
async fn get_settings(handle: Managed<'_, Handle>) -> Reply<SettingsView> {
    Ok(app::settings_view(&handle).await)
}

#[tauri::command]
async fn set_type_enabled(
    handle: Managed<'_, Handle>,
    event_type: String,
    enabled: bool,
) -> Reply<SettingsView> {
    Ok(app::set_type_enabled(&handle, &event_type, enabled).await?)
}

#[tauri::command]
async fn set_allowlist(
    handle: Managed<'_, Handle>,
    event_type: String,
    entries: Vec<String>,
) -> Reply<SettingsView> {
    Ok(app::set_allowlist(&handle, &event_type, &entries).await?)
}

#[tauri::command]
fn check_allow_entry(event_type: &str, entry: &str) -> AllowCheck {
    app::check_allow_entry(event_type, entry)
}

#[tauri::command]
async fn set_backfill_days(
    handle: Managed<'_, Handle>,
    event_type: String,
    days: u32,
) -> Reply<SettingsView> {
    Ok(app::set_backfill_days(&handle, &event_type, days).await?)
}

#[tauri::command]
fn get_activity(handle: Managed<'_, Handle>) -> Vec<Delivery> {
    newest_first(&handle)
}

#[tauri::command]
fn clear_activity(handle: Managed<'_, Handle>) {
    handle.activity().clear();
}

#[tauri::command]
fn revoke_client(handle: Managed<'_, Handle>, id: u64) -> Reply<()> {
    Ok(handle.revoke(id)?)
}

#[tauri::command]
async fn set_http(handle: Managed<'_, Handle>, enabled: bool, port: u16) -> Reply<SettingsView> {
    Ok(app::set_http(&handle, enabled, port).await?)
}

#[tauri::command]
async fn rotate_http_token(handle: Managed<'_, Handle>) -> Reply<SettingsView> {
    Ok(app::rotate_http_token(&handle).await?)
}

#[tauri::command]
async fn set_notifications(handle: Managed<'_, Handle>, enabled: bool) -> Reply<SettingsView> {
    Ok(app::set_notifications(&handle, enabled).await?)
}

#[tauri::command]
async fn set_notification_kind(
    handle: Managed<'_, Handle>,
    kind: String,
    enabled: bool,
) -> Reply<SettingsView> {
    Ok(app::set_notification_kind(&handle, &kind, enabled).await?)
}

#[tauri::command]
async fn pause_all(handle: Managed<'_, Handle>, minutes: u32) -> Reply<SettingsView> {
    Ok(app::pause_all(&handle, minutes).await?)
}

#[tauri::command]
async fn resume_all(handle: Managed<'_, Handle>) -> Reply<SettingsView> {
    Ok(app::resume_all(&handle).await)
}

#[tauri::command]
fn finish_first_run(handle: Managed<'_, Handle>) {
    app::finish_first_run(&handle);
}

#[tauri::command]
fn list_hosts(handle: Managed<'_, Handle>) -> Vec<HostView> {
    connect::app::hosts_view(&handle)
}

#[tauri::command]
async fn connect_host(id: String, mode: String) -> Reply<Outcome> {
    Ok(connect::app::connect_host(&id, &mode).await?)
}

#[tauri::command]
fn disconnect_host(id: String) -> Reply<Outcome> {
    Ok(connect::app::disconnect_host(&id)?)
}

#[tauri::command]
async fn set_start_at_login(
    app_handle: tauri::AppHandle,
    handle: Managed<'_, Handle>,
    enabled: bool,
) -> Reply<SettingsView> {
    let view = app::set_start_at_login(&handle, enabled).await?;
    // The menu's tick follows the window's switch.
    if let Some(tray) = tauri::Manager::try_state::<crate::tray::Tray>(&app_handle) {
        tray.update_login(&view.start_at_login);
    }
    Ok(view)
}

/// System Settings at Full Disk Access. Async, so the opener runs off the main thread.
#[tauri::command]
async fn open_full_disk_access() -> Reply<()> {
    let opened =
        tokio::task::spawn_blocking(|| app::open_full_disk_access(&tidings_platform::SystemRunner))
            .await?;
    Ok(opened?)
}

/// System Settings at Login Items, where a login item waiting for approval is allowed.
#[tauri::command]
async fn open_login_items() -> Reply<()> {
    let opened =
        tokio::task::spawn_blocking(|| app::open_login_items(&tidings_platform::SystemRunner))
            .await?;
    Ok(opened?)
}

/// Quit and start again, as macOS applies a Full Disk Access grant only to a new process.
/// Started by the login item, the service manager restarts the job (and stops this process
/// with SIGTERM, a clean Quit); otherwise the engine stops in `RunEvent::Exit` (socket removed,
/// single-instance name released) and Tauri starts the same executable with the same
/// arguments.
#[tauri::command]
async fn restart_app(app_handle: tauri::AppHandle) -> Reply<()> {
    if !app::restart_through_login_item().await? {
        tracing::info!("restarting at the user's request");
        app_handle.request_restart();
    }
    Ok(())
}

/// The activity log as the window lists it: newest first (the engine keeps it oldest first).
pub fn newest_first(handle: &Handle) -> Vec<Delivery> {
    handle.activity().snapshot().into_iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::COMMANDS;

    /// The one list the window (`ui/`) and its fake bridge are checked against.
    const JSON: &str = include_str!("../commands.json");

    #[test]
    fn commands_json_lists_exactly_the_registered_commands() {
        let listed: Vec<String> =
            serde_json::from_str(JSON).expect("commands.json is a JSON array of names");
        assert_eq!(
            listed, COMMANDS,
            "src-tauri/commands.json and the registered commands differ"
        );
    }
}
