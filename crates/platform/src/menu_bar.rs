//! Whether the app's menu-bar icon is shown: [`MenuBarPresence`] answers Shown, Hidden or Unknown.
//!
//! The app asks a short moment after it makes its icon, and opens its window with a notice when
//! the icon is hidden (docs/decisions/app.md, "A hidden menu-bar icon").
//!
//! - **Linux** (`TrayHosts`, the development twin). The tray-icon crate shows the icon through
//!   libayatana-appindicator. When the session bus has an `org.kde.StatusNotifierWatcher`, the
//!   indicator registers with it and stays there: it is drawn only if a `StatusNotifier` host
//!   (a panel's tray) registered with that watcher (`IsStatusNotifierHostRegistered`). With no
//!   watcher it falls back to a `GtkStatusIcon`, which only an `XEmbed` system tray draws: the one
//!   that owns the X selection `_NET_SYSTEM_TRAY_S<screen>` (trayer, in `make app-e2e`, is one;
//!   it registers nothing on the bus). So: a watcher with a host is Shown and one without is
//!   Hidden; with no watcher, an owned selection is Shown and none is Hidden; a bus or a display
//!   that cannot be asked is Unknown.
//! - **macOS** (`StatusItemPlacement`, feature `menu-bar`, which the app turns on). macOS 26
//!   hides a menu-bar app's status item until the user allows it (System Settings › Menu Bar ›
//!   Allow in the Menu Bar). `AppKit` still makes the item, its button and the button's window,
//!   and `isVisible` (the app's own flag) stays true; the system just never places the window
//!   in a menu bar, so it keeps the frame it was made with (as other menu-bar apps' developers
//!   report; not run here). The item is Shown when its window is visible and sits at the top
//!   edge of a screen ([`placement`]), Hidden otherwise. Placement is asynchronous: right after
//!   creation even an allowed item is not placed yet, so the app looks more than once before it
//!   calls the item hidden. The occlusion state is not used: a full-screen app or a menu bar
//!   that hides itself occludes an item the user did allow.
//!
//! Unlike the crate's other pairs, each answer compiles on its own OS only: zbus and Xlib are
//! Linux's, `AppKit` is macOS's, and both sides sit behind the feature `menu-bar`, which only
//! the app turns on, so the CLI and the shim carry neither.
//! [`placement`], the macOS decision, is plain arithmetic, tested on every OS.

/// The answer: is the icon on screen (in the menu bar, or a tray)?
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    /// The icon is where the user can click it.
    Shown,
    /// The icon was made but nothing shows it.
    Hidden,
    /// The question could not be asked; the app then does nothing special.
    Unknown(PresenceError),
}

/// Why [`Presence`] is [`Unknown`](Presence::Unknown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PresenceError {
    /// The session bus did not answer whether a `StatusNotifier` host is there.
    #[error("cannot ask the session bus about a StatusNotifier host: {0}")]
    Bus(String),
    /// The X display did not answer whether an `XEmbed` system tray is there.
    #[error("cannot ask the X display about an XEmbed system tray: {0}")]
    Display(String),
    /// The status item has no button in a window to look at.
    #[error("the status item has no button window")]
    NoWindow,
    /// `AppKit` answers on the main thread only.
    #[error("asked off the main thread")]
    NotMainThread,
}

/// Is the app's menu-bar icon shown? One look; the caller decides how often and how long.
pub trait MenuBarPresence {
    /// Whether the icon is shown now. Blocking but short: a local D-Bus round trip and an X
    /// request on Linux, a few `AppKit` properties on macOS (main thread).
    fn presence(&self) -> Presence;

    /// Where the user makes a hidden icon appear, in one sentence.
    fn where_to_allow(&self) -> &'static str;
}

/// Where a hidden icon is allowed on macOS 26 (`StatusItemPlacement::where_to_allow`).
pub const MACOS_WHERE_TO_ALLOW: &str = "macOS shows it only once you allow it: in System \
     Settings › Menu Bar, turn on Tidings under Allow in the Menu Bar.";

/// What a hidden icon needs on Linux (`TrayHosts::where_to_allow`).
pub const LINUX_WHERE_TO_ALLOW: &str = "No tray is running to show it: start one, such as your \
     desktop's tray extension (a StatusNotifier host) or an XEmbed system tray.";

#[cfg(all(target_os = "linux", feature = "menu-bar"))]
pub use linux::TrayHosts;

/// A rectangle in `AppKit`'s screen coordinates (origin bottom left, y up), in points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Bottom edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// Where a status item's window is, as [`Presence`]: Shown when it has a size and its centre
/// lies over a screen, within `thickness` (the menu bar's, or the window's own height if more)
/// of that screen's top edge: placed in its menu bar, or just above it while a menu bar that
/// hides itself is hidden. An item macOS has not placed keeps the frame it was made with: no
/// height at first, then at the bottom of the main screen. macOS only in use; plain numbers,
/// so it is tested everywhere.
pub fn placement(window: Rect, screens: &[Rect], thickness: f64) -> Presence {
    if window.width <= 0.0 || window.height <= 0.0 {
        return Presence::Hidden;
    }
    let (mid_x, mid_y) = (
        window.x + window.width / 2.0,
        window.y + window.height / 2.0,
    );
    let band = thickness.max(window.height);
    let placed = screens.iter().any(|screen| {
        let top = screen.y + screen.height;
        (screen.x..screen.x + screen.width).contains(&mid_x) && (mid_y - top).abs() <= band
    });
    if placed {
        Presence::Shown
    } else {
        Presence::Hidden
    }
}

#[cfg(all(target_os = "linux", feature = "menu-bar"))]
mod linux {
    use std::ffi::CString;
    use std::time::Duration;

    use super::{MenuBarPresence, Presence, PresenceError};

    /// The session bus name of the `StatusNotifier` watcher libayatana-appindicator registers with.
    pub(super) const WATCHER: &str = "org.kde.StatusNotifierWatcher";
    pub(super) const WATCHER_PATH: &str = "/StatusNotifierWatcher";
    /// The watcher's property saying a host (something that draws the items) registered.
    const HOST_REGISTERED: &str = "IsStatusNotifierHostRegistered";
    /// Bounds each D-Bus call: a bus that hangs leaves the answer Unknown, not the menu stuck.
    const BUS_TIMEOUT: Duration = Duration::from_secs(2);

    /// The Linux answer: asks the session bus for a `StatusNotifier` host, and the X display for an
    /// `XEmbed` system tray (see the module's notes for why both).
    #[derive(Debug, Clone, Default)]
    pub struct TrayHosts {
        /// `None`: the session bus (`DBUS_SESSION_BUS_ADDRESS`).
        bus: Option<String>,
        /// `None`: `$DISPLAY`.
        display: Option<String>,
    }

    impl TrayHosts {
        /// This session's bus and display, where the app's own icon lives.
        pub fn of_this_session() -> TrayHosts {
            TrayHosts::default()
        }

        /// The bus at `bus_address` and the X display `display` (":1"); for tests.
        pub fn at(bus_address: &str, display: &str) -> TrayHosts {
            TrayHosts {
                bus: Some(bus_address.to_owned()),
                display: Some(display.to_owned()),
            }
        }

        /// Whether the bus has a `StatusNotifier` watcher (`None`: no) and, if so, whether a host
        /// registered with it.
        pub fn status_notifier_host(&self) -> Result<Option<bool>, PresenceError> {
            use zbus::blocking::connection::Builder;
            let bus = |e: zbus::Error| PresenceError::Bus(e.to_string());
            let builder = match &self.bus {
                Some(address) => Builder::address(address.as_str()),
                None => Builder::session(),
            }
            .map_err(bus)?;
            let connection = builder.method_timeout(BUS_TIMEOUT).build().map_err(bus)?;
            // NameHasOwner does not start an activatable watcher: the indicator does not either
            // (it checks the name's owner, then falls back).
            let owned: bool = connection
                .call_method(
                    Some("org.freedesktop.DBus"),
                    "/org/freedesktop/DBus",
                    Some("org.freedesktop.DBus"),
                    "NameHasOwner",
                    &WATCHER,
                )
                .map_err(bus)?
                .body()
                .deserialize()
                .map_err(bus)?;
            if !owned {
                return Ok(None);
            }
            let value: zbus::zvariant::OwnedValue = connection
                .call_method(
                    Some(WATCHER),
                    WATCHER_PATH,
                    Some("org.freedesktop.DBus.Properties"),
                    "Get",
                    &(WATCHER, HOST_REGISTERED),
                )
                .map_err(bus)?
                .body()
                .deserialize()
                .map_err(bus)?;
            let registered = bool::try_from(value).map_err(|e| {
                PresenceError::Bus(format!("{HOST_REGISTERED} is not a boolean: {e}"))
            })?;
            Ok(Some(registered))
        }

        /// Whether an `XEmbed` system tray owns `_NET_SYSTEM_TRAY_S<screen>` on the display. Xlib
        /// is loaded at run time (x11-dl, as tao does), so nothing links it.
        #[allow(unsafe_code)]
        pub fn xembed_tray(&self) -> Result<bool, PresenceError> {
            let xlib =
                x11_dl::xlib::Xlib::open().map_err(|e| PresenceError::Display(e.to_string()))?;
            let name = self
                .display
                .as_ref()
                .map(|name| {
                    CString::new(name.as_str())
                        .map_err(|_| PresenceError::Display(format!("{name:?} is not a display")))
                })
                .transpose()?;
            let name = name.as_ref().map_or(std::ptr::null(), |name| name.as_ptr());
            // SAFETY: `name` is null ($DISPLAY) or a NUL-terminated string alive for the call.
            let display = unsafe { (xlib.XOpenDisplay)(name) };
            if display.is_null() {
                let which = self
                    .display
                    .clone()
                    .unwrap_or_else(|| std::env::var("DISPLAY").unwrap_or_default());
                return Err(PresenceError::Display(if which.is_empty() {
                    "no X display ($DISPLAY is not set)".to_owned()
                } else {
                    format!("cannot open X display {which}")
                }));
            }
            // SAFETY: `display` is open until the XCloseDisplay below; the selection name is a
            // NUL-terminated string. Only existing atoms are asked about (only_if_exists = True),
            // so no request can fail with an X error (whose default handler exits the process).
            let owner = unsafe {
                let screen = (xlib.XDefaultScreen)(display);
                let selection = CString::new(format!("_NET_SYSTEM_TRAY_S{screen}"))
                    .expect("an atom name without NUL");
                let atom = (xlib.XInternAtom)(display, selection.as_ptr(), x11_dl::xlib::True);
                let owner = if atom == 0 {
                    0
                } else {
                    (xlib.XGetSelectionOwner)(display, atom)
                };
                (xlib.XCloseDisplay)(display);
                owner
            };
            Ok(owner != 0)
        }
    }

    impl MenuBarPresence for TrayHosts {
        fn presence(&self) -> Presence {
            let xembed = || match self.xembed_tray() {
                Ok(true) => Presence::Shown,
                Ok(false) => Presence::Hidden,
                Err(error) => Presence::Unknown(error),
            };
            match self.status_notifier_host() {
                Ok(Some(true)) => Presence::Shown,
                // The indicator registered with this watcher and will not fall back.
                Ok(Some(false)) => Presence::Hidden,
                Ok(None) => xembed(),
                // Without an answer from the bus an XEmbed tray still tells Shown; its absence
                // tells nothing, as a StatusNotifier host may be drawing the icon.
                Err(error) => match xembed() {
                    Presence::Shown => Presence::Shown,
                    _ => Presence::Unknown(error),
                },
            }
        }

        fn where_to_allow(&self) -> &'static str {
            super::LINUX_WHERE_TO_ALLOW
        }
    }
}

#[cfg(all(target_os = "macos", feature = "menu-bar"))]
pub use macos::StatusItemPlacement;

#[cfg(all(target_os = "macos", feature = "menu-bar"))]
mod macos {
    use objc2::MainThreadMarker;
    use objc2::rc::Retained;
    use objc2_app_kit::{NSScreen, NSStatusBar, NSStatusItem};

    use super::{MenuBarPresence, Presence, PresenceError, Rect, placement};

    /// The macOS answer, from the app's status item (tray-icon's `ns_status_item`).
    #[derive(Debug)]
    pub struct StatusItemPlacement {
        item: Option<Retained<NSStatusItem>>,
    }

    impl StatusItemPlacement {
        /// Looks at `item`; `None` (the icon was removed) is Hidden.
        pub fn new(item: Option<Retained<NSStatusItem>>) -> StatusItemPlacement {
            StatusItemPlacement { item }
        }
    }

    fn rect(r: objc2_foundation::NSRect) -> Rect {
        Rect {
            x: r.origin.x,
            y: r.origin.y,
            width: r.size.width,
            height: r.size.height,
        }
    }

    impl MenuBarPresence for StatusItemPlacement {
        fn presence(&self) -> Presence {
            let Some(mtm) = MainThreadMarker::new() else {
                return Presence::Unknown(PresenceError::NotMainThread);
            };
            let Some(item) = &self.item else {
                return Presence::Hidden;
            };
            // The app's own flag: never cleared by Tidings, but it is the first thing to say.
            if !item.isVisible() {
                return Presence::Hidden;
            }
            let Some(window) = item.button(mtm).and_then(|button| button.window()) else {
                return Presence::Unknown(PresenceError::NoWindow);
            };
            if !window.isVisible() {
                return Presence::Hidden;
            }
            let screens: Vec<Rect> = NSScreen::screens(mtm)
                .iter()
                .map(|screen| rect(screen.frame()))
                .collect();
            let thickness = NSStatusBar::systemStatusBar().thickness();
            placement(rect(window.frame()), &screens, thickness)
        }

        fn where_to_allow(&self) -> &'static str {
            super::MACOS_WHERE_TO_ALLOW
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: Rect = Rect {
        x: 0.0,
        y: 0.0,
        width: 1470.0,
        height: 956.0,
    };
    /// A second display to the left and lower, as arranged in Displays settings.
    const LEFT: Rect = Rect {
        x: -1080.0,
        y: -389.0,
        width: 1080.0,
        height: 1920.0,
    };

    fn item(x: f64, y: f64, width: f64, height: f64) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn an_item_in_a_menu_bar_is_shown() {
        // In the main screen's menu bar (37 pt on a notched Mac), and in the left screen's.
        assert_eq!(
            placement(item(1200.0, 919.0, 36.0, 37.0), &[MAIN, LEFT], 24.0),
            Presence::Shown
        );
        assert_eq!(
            placement(item(-200.0, 1507.0, 36.0, 24.0), &[MAIN, LEFT], 24.0),
            Presence::Shown
        );
        // Just above the top edge: a menu bar that hides itself, hidden now.
        assert_eq!(
            placement(item(1200.0, 956.0, 36.0, 24.0), &[MAIN], 24.0),
            Presence::Shown
        );
    }

    #[test]
    fn an_item_never_placed_is_hidden() {
        // As made: no height yet.
        assert_eq!(
            placement(item(0.0, 0.0, 36.0, 0.0), &[MAIN], 24.0),
            Presence::Hidden
        );
        // Its birth frame at the bottom left of the main screen, where an item the user has
        // not allowed stays.
        assert_eq!(
            placement(item(-1.0, 9.0, 38.0, 24.0), &[MAIN, LEFT], 24.0),
            Presence::Hidden
        );
        // Off every screen.
        assert_eq!(
            placement(item(5000.0, 919.0, 36.0, 24.0), &[MAIN], 24.0),
            Presence::Hidden
        );
        // No screen at all (a closed lid, no display).
        assert_eq!(
            placement(item(1200.0, 919.0, 36.0, 24.0), &[], 24.0),
            Presence::Hidden
        );
    }

    #[cfg(all(target_os = "linux", feature = "menu-bar"))]
    mod linux {
        use std::ffi::CString;
        use std::io::{BufRead, BufReader};
        use std::process::{Child, Command, Stdio};

        use super::super::linux::{WATCHER, WATCHER_PATH};
        use super::super::*;

        /// A process killed when the test ends, however it ends.
        struct Killed(Child);

        impl Drop for Killed {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }

        /// A private session bus (`dbus-daemon --session`), and its address once it listens.
        fn private_bus() -> Option<(Killed, String)> {
            let child = Command::new("dbus-daemon")
                .args(["--session", "--nofork", "--print-address=1"])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn();
            let Ok(mut child) = child else {
                eprintln!("SKIP: dbus-daemon is not installed (scripts/install-deps.sh: apt dbus)");
                return None;
            };
            let mut address = String::new();
            BufReader::new(child.stdout.take().expect("stdout is piped"))
                .read_line(&mut address)
                .expect("dbus-daemon prints its address");
            Some((Killed(child), address.trim().to_owned()))
        }

        /// A private X server (Xvfb), and its display once it accepts connections. `-noreset`:
        /// an X server resets when its last client leaves, refusing connections meanwhile, and
        /// each look opens and closes a connection of its own.
        fn private_display() -> Option<(Killed, String)> {
            let child = Command::new("Xvfb")
                .args([
                    "-displayfd",
                    "1",
                    "-noreset",
                    "-screen",
                    "0",
                    "320x240x24",
                    "-nolisten",
                    "tcp",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn();
            let Ok(mut child) = child else {
                eprintln!("SKIP: Xvfb is not installed (scripts/install-deps.sh: apt xvfb)");
                return None;
            };
            let mut number = String::new();
            BufReader::new(child.stdout.take().expect("stdout is piped"))
                .read_line(&mut number)
                .expect("Xvfb prints its display number");
            Some((Killed(child), format!(":{}", number.trim())))
        }

        /// What a panel's `StatusNotifier` watcher serves, reduced to the one property read.
        struct Watcher {
            host: bool,
        }

        #[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
        impl Watcher {
            #[zbus(property)]
            fn is_status_notifier_host_registered(&self) -> bool {
                self.host
            }
        }

        /// Serves a watcher on `address` under its well-known name; it is there when this
        /// returns (the name request is answered before `build` does).
        fn serve_watcher(address: &str, host: bool) -> zbus::blocking::Connection {
            zbus::blocking::connection::Builder::address(address)
                .unwrap()
                .name(WATCHER)
                .unwrap()
                .serve_at(WATCHER_PATH, Watcher { host })
                .unwrap()
                .build()
                .expect("the fake watcher takes its name")
        }

        /// A display nobody can open: the bus alone must decide.
        const NO_DISPLAY: &str = ":65000";

        #[test]
        fn a_watcher_with_a_host_shows_the_icon() {
            let Some((_bus, address)) = private_bus() else {
                return;
            };
            let _watcher = serve_watcher(&address, true);
            let hosts = TrayHosts::at(&address, NO_DISPLAY);
            assert_eq!(hosts.status_notifier_host(), Ok(Some(true)));
            assert_eq!(hosts.presence(), Presence::Shown);
        }

        #[test]
        fn a_watcher_without_a_host_hides_the_icon() {
            let Some((_bus, address)) = private_bus() else {
                return;
            };
            let _watcher = serve_watcher(&address, false);
            let hosts = TrayHosts::at(&address, NO_DISPLAY);
            assert_eq!(hosts.status_notifier_host(), Ok(Some(false)));
            assert_eq!(hosts.presence(), Presence::Hidden);
        }

        #[test]
        fn no_watcher_and_no_display_to_ask_is_unknown() {
            let Some((_bus, address)) = private_bus() else {
                return;
            };
            let hosts = TrayHosts::at(&address, NO_DISPLAY);
            assert_eq!(hosts.status_notifier_host(), Ok(None));
            assert!(
                matches!(
                    hosts.presence(),
                    Presence::Unknown(PresenceError::Display(_))
                ),
                "{:?}",
                hosts.presence()
            );
        }

        #[test]
        fn a_bus_that_is_not_there_is_unknown() {
            let dir = tempfile::tempdir().unwrap();
            let address = format!("unix:path={}", dir.path().join("no-bus").display());
            let hosts = TrayHosts::at(&address, NO_DISPLAY);
            assert!(
                matches!(hosts.presence(), Presence::Unknown(PresenceError::Bus(_))),
                "{:?}",
                hosts.presence()
            );
        }

        /// No watcher: the `XEmbed` tray decides, on a real X server. Hidden with none; Shown
        /// once a client owns `_NET_SYSTEM_TRAY_S0` as trayer does.
        #[test]
        #[allow(unsafe_code)]
        fn no_watcher_asks_the_xembed_tray() {
            let Some((_bus, address)) = private_bus() else {
                return;
            };
            let Some((_x, display)) = private_display() else {
                return;
            };
            let hosts = TrayHosts::at(&address, &display);
            assert_eq!(hosts.presence(), Presence::Hidden);

            let xlib = x11_dl::xlib::Xlib::open().expect("libX11 loads");
            let name = CString::new(display.as_str()).unwrap();
            // SAFETY: a display opened here and closed at the end; a window of ours owns the
            // selection, as a tray manager's does.
            let tray = unsafe {
                let d = (xlib.XOpenDisplay)(name.as_ptr());
                assert!(!d.is_null(), "Xvfb on {display} accepts a client");
                let root = (xlib.XDefaultRootWindow)(d);
                let window = (xlib.XCreateSimpleWindow)(d, root, 0, 0, 1, 1, 0, 0, 0);
                let selection = CString::new("_NET_SYSTEM_TRAY_S0").unwrap();
                let atom = (xlib.XInternAtom)(d, selection.as_ptr(), x11_dl::xlib::False);
                (xlib.XSetSelectionOwner)(d, atom, window, x11_dl::xlib::CurrentTime);
                // The server has the ownership once this round trip returns.
                (xlib.XSync)(d, x11_dl::xlib::False);
                d
            };
            assert_eq!(hosts.xembed_tray(), Ok(true));
            assert_eq!(hosts.presence(), Presence::Shown);
            // SAFETY: opened above, closed once.
            unsafe { (xlib.XCloseDisplay)(tray) };
        }
    }
}
