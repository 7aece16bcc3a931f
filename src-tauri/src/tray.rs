//! The tray icon and its menu (the tray-icon and muda crates, on the main thread). The menu's
//! shape is fixed (one check item per event type), so changes update the items in place
//! (text, tick) and never rebuild the menu: an update while the menu is open changes what it
//! shows without dismissing it (GTK has no menu-opened event to rebuild between openings;
//! docs/decisions/app.md).

use tidings_core::EventType;
use tidings_core::allowlist::allow_summary;
use tidings_platform::MenuBarPresence;
use tidings_server::{Handle, State, app};
use tray_icon::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tray_icon::{Icon, TrayIcon, TrayIconBuilder};

pub const QUIT: &str = "quit";
pub const SETTINGS: &str = "settings";
pub const PAUSE: &str = "pause";
pub const LOGIN: &str = "login";
pub const CHECK_UPDATES: &str = "check-updates";
pub const INSTALL_UPDATE: &str = "install-update";

/// The tray icon, monochrome (macOS tints a template image for light and dark menu bars).
const ICON: &[u8] = include_bytes!("../icons/tray.png");

/// The icon and the items that change, kept to update in place. Main thread only (the
/// menu's items are not `Send`).
pub struct Tray {
    status: MenuItem,
    types: Vec<(EventType, CheckMenuItem, MenuItem)>,
    pause: MenuItem,
    login: CheckMenuItem,
    /// The update lines: what (this version, a check running, an update ready, a refusal),
    /// then its detail (the notes' first lines, why).
    update_line: MenuItem,
    update_detail: MenuItem,
    install: MenuItem,
    // Dropping it removes the icon. Read on macOS only (its status item, `presence`).
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    icon: TrayIcon,
}

/// A menu item's id for an event type's check item.
pub fn type_id(ty: EventType) -> String {
    format!("type:{}", ty.name())
}

impl Tray {
    /// Builds the tray icon and its menu, filled from the engine's current state.
    pub fn build(handle: &Handle) -> Result<Tray, Box<dyn std::error::Error>> {
        let status = MenuItem::with_id("status", "Starting…", false, None);
        let mut types = Vec::new();
        for ty in EventType::ALL {
            let check = CheckMenuItem::with_id(type_id(ty), ty.app_name(), true, false, None);
            let summary = MenuItem::with_id(format!("summary:{}", ty.name()), "", false, None);
            types.push((ty, check, summary));
        }
        let pause = MenuItem::with_id(PAUSE, "Pause all for 1 hour", true, None);
        let settings = MenuItem::with_id(SETTINGS, "Settings…", true, None);
        let login = CheckMenuItem::with_id(LOGIN, "Start at Login", true, false, None);
        let update_line = MenuItem::with_id("updates", "", false, None);
        let update_detail = MenuItem::with_id("updates:detail", "", false, None);
        let check_updates = MenuItem::with_id(CHECK_UPDATES, "Check for Updates…", true, None);
        let install = MenuItem::with_id(INSTALL_UPDATE, "Install and Restart", false, None);
        let quit = MenuItem::with_id(QUIT, "Quit Tidings", true, None);
        let menu = Menu::new();
        menu.append(&status)?;
        menu.append(&PredefinedMenuItem::separator())?;
        for (_, check, summary) in &types {
            menu.append(check)?;
            menu.append(summary)?;
        }
        menu.append(&PredefinedMenuItem::separator())?;
        menu.append(&pause)?;
        menu.append(&settings)?;
        menu.append(&login)?;
        menu.append(&PredefinedMenuItem::separator())?;
        menu.append(&update_line)?;
        menu.append(&update_detail)?;
        menu.append(&check_updates)?;
        menu.append(&install)?;
        menu.append(&PredefinedMenuItem::separator())?;
        menu.append(&quit)?;
        let icon = TrayIconBuilder::new()
            .with_id("tidings")
            .with_icon(icon()?)
            .with_icon_as_template(true)
            .with_tooltip("Tidings")
            .with_menu(Box::new(menu))
            .with_menu_on_left_click(true)
            .build()?;
        let tray = Tray {
            status,
            types,
            pause,
            login,
            update_line,
            update_detail,
            install,
            icon,
        };
        tray.update(handle, &handle.state().borrow());
        // Not in `update`: that runs on every state change, and asking (systemctl on Linux)
        // is a process; the login item changes only through this menu, the window or a
        // terminal (`tidings install`, seen at the next start).
        tray.update_login(&app::login_view());
        Ok(tray)
    }

    /// What answers whether this icon is shown: its status item's window on macOS, the
    /// session's tray hosts on Linux (`src/menu_bar.rs` looks).
    #[cfg_attr(
        not(target_os = "macos"),
        allow(clippy::unused_self, reason = "Linux asks the session, not the icon")
    )]
    pub fn presence(&self) -> Box<dyn MenuBarPresence> {
        #[cfg(target_os = "macos")]
        let presence =
            tidings_platform::menu_bar::StatusItemPlacement::new(self.icon.ns_status_item());
        #[cfg(not(target_os = "macos"))]
        let presence = tidings_platform::menu_bar::TrayHosts::of_this_session();
        Box::new(presence)
    }

    /// Sets every item from the engine's state and settings (no keychain read: the menu
    /// needs no token).
    pub fn update(&self, handle: &Handle, state: &State) {
        let settings = handle.settings();
        self.status.set_text(state.headline());
        for (ty, check, summary) in &self.types {
            let t = settings.for_type(*ty);
            check.set_checked(t.enabled);
            summary.set_text(format!("    {}", allow_summary(t)));
        }
        let pause = if handle.paused_until_ms().is_some() {
            "Resume all"
        } else {
            "Pause all for 1 hour"
        };
        self.pause.set_text(pause);
    }

    /// The update lines and whether Install and Restart can be chosen. The detail is indented
    /// as the types' summaries are.
    pub fn update_updates(&self, view: &crate::updates::MenuView) {
        self.update_line.set_text(&view.headline);
        self.update_detail.set_text(format!("    {}", view.detail));
        self.install.set_enabled(view.install);
    }

    /// Ticks "Start at Login" when it is on; when macOS waits for approval, says so (a click
    /// then opens the Login Items pane).
    pub fn update_login(&self, view: &app::LoginView) {
        self.login.set_checked(view.state == "enabled");
        let text = if view.state == "requiresApproval" {
            "Start at Login (needs approval)…"
        } else {
            "Start at Login"
        };
        self.login.set_text(text);
    }
}

/// The icon's pixels, decoded from the PNG built in.
fn icon() -> Result<Icon, Box<dyn std::error::Error>> {
    let mut reader = png::Decoder::new(ICON).read_info()?;
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels)?;
    if (frame.color_type, frame.bit_depth) != (png::ColorType::Rgba, png::BitDepth::Eight) {
        return Err("icons/tray.png must be 8-bit RGBA".into());
    }
    pixels.truncate(frame.buffer_size());
    Ok(Icon::from_rgba(pixels, frame.width, frame.height)?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_built_in_icon_decodes() {
        super::icon().expect("icons/tray.png decodes");
    }
}
