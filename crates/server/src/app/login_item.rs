//! The login item as the app sees it: whether Tidings starts at login, turning that on or off,
//! and restarting through it.

use tidings_platform::login::{self, LoginState, LoginStatus, Options};
use tidings_platform::paths::Os;
use tidings_platform::{LoginError, LoginItem, Plan, SystemRunner};

use super::{AppError, LoginView, SettingsView, settings_view};
use crate::engine::Handle;

/// The login item for this executable (the app), on this platform, for the real OS.
/// `keep_running`: the app may be the process the login item runs, so a toggle never stops
/// it (docs/decisions/install.md).
fn with_login_item<T>(f: impl FnOnce(&LoginItem<'_>) -> T) -> Result<T, LoginError> {
    let exe = std::env::current_exe().unwrap_or_default();
    let plan = Plan::current(Os::CURRENT, exe)?;
    let service = login::default_app_service(&plan);
    let item = LoginItem::new(plan, &SystemRunner, service.as_ref()).with_options(Options {
        keep_running: true,
        ..Options::default()
    });
    Ok(f(&item))
}

/// Whether the app starts at login, in the view's words.
pub fn login_view() -> LoginView {
    // A closure, not the method path: the item's lifetime is the call's (clippy's suggestion
    // does not type-check).
    #[allow(clippy::redundant_closure_for_method_calls)]
    let status = with_login_item(|item| item.status());
    match status {
        Ok(status) => view_of(&status),
        Err(e) => LoginView {
            state: "disabled",
            text: e.to_string(),
        },
    }
}

/// [`login_view`] on a blocking thread: it runs a command.
pub async fn login_view_blocking() -> LoginView {
    tokio::task::spawn_blocking(login_view)
        .await
        .unwrap_or_else(|e| LoginView {
            state: "disabled",
            text: format!("the login item task failed: {e}"),
        })
}

pub(super) fn view_of(status: &LoginStatus) -> LoginView {
    LoginView {
        state: match status.state {
            LoginState::Enabled => "enabled",
            LoginState::RequiresApproval => "requiresApproval",
            LoginState::Disabled => "disabled",
        },
        text: status.text.clone(),
    }
}

/// Turn start at login on or off, through the code `tidings install` runs. Turning it on
/// while macOS waits for approval opens the Login Items pane instead: the registration is
/// there, the user's yes is what is missing.
pub async fn set_start_at_login(handle: &Handle, enabled: bool) -> Result<SettingsView, AppError> {
    tokio::task::spawn_blocking(move || {
        with_login_item(|item| {
            let waiting = item.status().state == LoginState::RequiresApproval;
            if enabled && waiting {
                item.open_login_items()
            } else if enabled {
                item.install().map(drop)
            } else {
                item.uninstall().map(drop)
            }
        })?
    })
    .await
    .map_err(|e| AppError::Login(format!("the login item task failed: {e}")))?
    .map_err(|e| AppError::Login(e.to_string()))?;
    Ok(settings_view(handle).await)
}

/// Restart through the login item when this process is the login item's (`launchctl
/// kickstart -k`, `systemctl --user restart`): the service manager stops this process (a
/// SIGTERM, a clean Quit) and starts the job again. `Ok(false)` when this process was started
/// otherwise: the caller restarts it itself. The service manager would kill a child the job's
/// process spawned as the job ends, so that way is only for a process outside a job.
pub async fn restart_through_login_item() -> Result<bool, AppError> {
    if !login::running_as_login_item(Os::CURRENT) {
        return Ok(false);
    }
    tracing::info!("restarting through the login item");
    tokio::task::spawn_blocking(|| with_login_item(|item| item.restart().map(drop))?)
        .await
        .map_err(|e| AppError::Login(format!("the login item task failed: {e}")))?
        .map_err(|e| AppError::Login(e.to_string()))?;
    Ok(true)
}
