//! The tray icon and its menu. The menu's shape is fixed (one check item per event type), so
//! changes update the items in place (text, tick) and never rebuild the menu: an update while
//! the menu is open changes what it shows without dismissing it (tauri 2 has no menu-opened
//! event on Linux to rebuild between openings; docs/decisions/app.md).

use tauri::menu::{CheckMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};
use tidings_core::EventType;
use tidings_core::allowlist::allow_summary;
use tidings_server::{Handle, State, app};

const QUIT: &str = "quit";
const SETTINGS: &str = "settings";
const PAUSE: &str = "pause";
const LOGIN: &str = "login";
/// How long "Pause all for 1 hour" pauses.
const PAUSE_MINUTES: u32 = 60;

/// The items that change, kept to update in place.
#[derive(Clone)]
pub struct Tray {
    status: MenuItem<Wry>,
    types: Vec<(EventType, CheckMenuItem<Wry>, MenuItem<Wry>)>,
    pause: MenuItem<Wry>,
    login: CheckMenuItem<Wry>,
}

fn type_id(ty: EventType) -> String {
    format!("type:{}", ty.name())
}

impl Tray {
    /// Builds the tray icon and its menu, filled from the engine's current state.
    pub fn build(app: &AppHandle) -> tauri::Result<Tray> {
        let status = MenuItem::with_id(app, "status", "Starting…", false, None::<&str>)?;
        let mut types = Vec::new();
        for ty in EventType::ALL {
            let check =
                CheckMenuItem::with_id(app, type_id(ty), ty.app_name(), true, false, None::<&str>)?;
            let id = format!("summary:{}", ty.name());
            let summary = MenuItem::with_id(app, id, "", false, None::<&str>)?;
            types.push((ty, check, summary));
        }
        let pause = MenuItem::with_id(app, PAUSE, "Pause all for 1 hour", true, None::<&str>)?;
        let settings = MenuItem::with_id(app, SETTINGS, "Settings…", true, None::<&str>)?;
        let login =
            CheckMenuItem::with_id(app, LOGIN, "Start at Login", true, false, None::<&str>)?;
        let quit = MenuItem::with_id(app, QUIT, "Quit Tidings", true, None::<&str>)?;
        let menu = Menu::new(app)?;
        menu.append(&status)?;
        menu.append(&PredefinedMenuItem::separator(app)?)?;
        for (_, check, summary) in &types {
            menu.append(check)?;
            menu.append(summary)?;
        }
        menu.append(&PredefinedMenuItem::separator(app)?)?;
        menu.append(&pause)?;
        menu.append(&settings)?;
        menu.append(&login)?;
        menu.append(&PredefinedMenuItem::separator(app)?)?;
        menu.append(&quit)?;
        let tray = Tray {
            status,
            types,
            pause,
            login,
        };
        let handle = app.state::<Handle>();
        tray.update(&handle, &handle.state().borrow());
        // Not in `update`: that runs on every state change, and asking (systemctl on Linux)
        // is a process; the login item changes only through this menu, the window or a
        // terminal (`tidings install`, seen at the next start).
        tray.update_login(&app::login_view());
        TrayIconBuilder::with_id("tidings")
            .icon(tauri::include_image!("icons/tray.png"))
            // Monochrome: macOS tints a template image for light and dark menu bars.
            .icon_as_template(true)
            .tooltip("Tidings")
            .menu(&menu)
            .show_menu_on_left_click(true)
            .on_menu_event(on_menu_event)
            .build(app)?;
        Ok(tray)
    }

    /// Sets every item from the engine's state and settings (no keychain read: the menu
    /// needs no token).
    pub fn update(&self, handle: &Handle, state: &State) {
        let settings = handle.settings();
        let _ = self.status.set_text(state.headline());
        for (ty, check, summary) in &self.types {
            let t = settings.for_type(*ty);
            let _ = check.set_checked(t.enabled);
            let _ = summary.set_text(format!("    {}", allow_summary(t)));
        }
        let pause = if handle.paused_until_ms().is_some() {
            "Resume all"
        } else {
            "Pause all for 1 hour"
        };
        let _ = self.pause.set_text(pause);
    }

    /// Ticks "Start at Login" when it is on; when macOS waits for approval, says so (a click
    /// then opens the Login Items pane).
    pub fn update_login(&self, view: &app::LoginView) {
        let _ = self.login.set_checked(view.state == "enabled");
        let text = if view.state == "requiresApproval" {
            "Start at Login (needs approval)…"
        } else {
            "Start at Login"
        };
        let _ = self.login.set_text(text);
    }
}

// The signature `TrayIconBuilder::on_menu_event` takes.
#[allow(clippy::needless_pass_by_value)]
fn on_menu_event(app: &AppHandle, event: MenuEvent) {
    let id = event.id().as_ref().to_owned();
    match id.as_str() {
        // `RunEvent::Exit` stops the engine and waits for it (main.rs).
        QUIT => app.exit(0),
        SETTINGS => crate::show_settings(app),
        _ => {
            let app = app.clone();
            tauri::async_runtime::spawn(async move { act(&app, &id).await });
        }
    }
}

/// The items that change settings, through the same functions as the window's commands.
async fn act(app: &AppHandle, id: &str) {
    let handle = app.state::<Handle>();
    if id == LOGIN {
        // Off when on; on (or, waiting for approval, the Login Items pane) otherwise.
        let on = app::login_view().state == "enabled";
        let result = app::set_start_at_login(&handle, !on).await;
        let view = match result {
            Ok(view) => view.start_at_login,
            Err(error) => {
                tracing::warn!(%error, "the menu action failed");
                app::login_view()
            }
        };
        if let Some(tray) = app.try_state::<Tray>() {
            tray.update_login(&view);
        }
        return;
    }
    let result = if id == PAUSE {
        if handle.paused_until_ms().is_some() {
            Ok(app::resume_all(&handle).await)
        } else {
            app::pause_all(&handle, PAUSE_MINUTES).await
        }
    } else if let Some(ty) = EventType::ALL.into_iter().find(|ty| type_id(*ty) == id) {
        let on = handle.settings().for_type(ty).enabled;
        app::set_type_enabled(&handle, ty.name(), !on).await
    } else {
        return;
    };
    if let Err(error) = result {
        tracing::warn!(item = id, %error, "the menu action failed");
    }
    // The tick muda flipped on the click follows the engine, not the click.
    if let Some(tray) = app.try_state::<Tray>() {
        tray.update(&handle, &handle.state().borrow());
    }
}
