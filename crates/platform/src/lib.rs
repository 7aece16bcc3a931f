//! OS glue for Tidings, behind small traits, so the rest of the workspace never asks the OS
//! directly and the macOS side type-checks (and mostly runs) from Linux.
//!
//! Module map:
//!
//! - [`paths`]: the one place that decides where things live: the Unix socket, the config,
//!   data and log directories, and the private-directory checks the socket directory must pass.
//! - [`command`]: [`CommandRunner`], the only way `launchctl` (and later `systemctl`) is
//!   run, with [`SystemRunner`] for real use and [`RecordingRunner`] as a test double.
//! - [`launcher`]: [`Launcher`], what the `tidings-mcp` shim calls when the daemon is not
//!   running: [`Launchd`] on macOS, [`NoLauncher`] on Linux, picked by [`default_launcher`].
//! - [`login`]: [`LoginItem`], start at login with crash restart: `SMAppService` for the
//!   bundled agent (macOS 13+), else a `LaunchAgent` plist and `launchctl`, and the systemd
//!   user unit on Linux; `install`, `uninstall`, `status`, `restart`, with a dry run. The
//!   `tidings install` CLI and the app's "Start at Login" share it.
//! - [`keychain`]: [`Keychain`], one secret per account in the OS keychain (macOS Keychain,
//!   Linux Secret Service) through keyring-core, with an in-memory mock for tests.
//! - [`version`]: the version string `--version` prints: the workspace version and the git
//!   commit (stamped by `build.rs`, "unknown" outside git).
//! - [`files`]: [`files::write_atomic`], the one way a file is replaced whole.
//! - [`hosts`]: the MCP hosts Tidings connects ([`Host`], [`Mode`]): config paths, entries,
//!   snippets, and where the shim is.
//! - [`processes`]: [`Processes`], whether a host is running: `/proc` on Linux, `pgrep` on
//!   macOS.
//! - [`identity`]: [`AgentIdentity`], who an agent is: the walk from a socket peer's pid past
//!   the shim, shells and launchers to its program (an interpreter by its script), read from
//!   `/proc` on Linux and through libc on macOS, where a program signed with a team is known
//!   by its signature (`codesign` through the [`CommandRunner`]); [`default_identifier`] picks.
//!   A signature's label, `TEAMID:identifier` ([`Signing::label`]), and whether two come from
//!   the same developer ([`Signing::same_developer`]) decide whether an update keeps Full Disk
//!   Access.
//! - [`notifier`]: [`Notifier`], desktop notifications: `DesktopNotifier` (notify-rust, feature
//!   `desktop-notifications`, which the daemon turns on) and [`RecordingNotifier`] for tests.
//! - [`install`]: how this copy was installed ([`InstallSource`]: a Homebrew cask updates
//!   through `brew upgrade`) and the `.app` it runs from, whose signature an update must share.
//! - [`panes`]: opening System Settings at the Full Disk Access or Login Items pane through the
//!   [`CommandRunner`] (`open` on macOS, `xdg-open` as the Linux twin).
//! - [`locale`]: the user's locale (`en_US`), from macOS's `AppleLocale` or the Linux locale
//!   variables, whose region reads national numbers on Contacts cards.
//! - [`menu_bar`]: [`MenuBarPresence`], whether the app's menu-bar icon is shown: the status
//!   item's window on macOS (feature `menu-bar`), the tray hosts (a `StatusNotifier` host on the
//!   session bus, an `XEmbed` system tray) on Linux. Each side compiles on its own OS only.
//! - [`error`]: the crate's error enums, [`PathError`], [`CommandError`], [`LauncherError`], [`LoginError`].
//!
//! macOS and Linux implementations sit side by side and both compile on both OSes; only the
//! `default_*` pickers, [`paths::Os::CURRENT`], the menu-bar checks and the libc calls that
//! read a macOS process (`identity::DarwinTable`) are chosen by `cfg`.
//!
//! ```no_run
//! use tidings_platform::{default_launcher, paths, StartRequest};
//!
//! let socket = paths::socket_path()?;
//! if std::os::unix::net::UnixStream::connect(&socket).is_err() {
//!     match default_launcher().request_start() {
//!         Ok(StartRequest::Requested) => { /* retry the connect for a few seconds */ }
//!         Ok(StartRequest::NotAvailable) | Err(_) => { /* tell the user how to start it */ }
//!     }
//! }
//! # Ok::<(), tidings_platform::PathError>(())
//! ```

#![deny(missing_docs)]

pub mod command;
pub mod error;
pub mod files;
pub mod hosts;
pub mod identity;
pub mod install;
pub mod keychain;
pub mod launcher;
pub mod locale;
pub mod login;
pub mod menu_bar;
pub mod notifier;
pub mod panes;
pub mod paths;
pub mod processes;
pub mod version;

pub use command::{
    CommandOutput, CommandRunner, RecordedCall, RecordingRunner, SystemRunner, command_line,
};
pub use error::{CommandError, LauncherError, LoginError, PathError};
pub use hosts::{Format, Host, Launch, Mode, ServerEnv};
pub use identity::{AgentIdentity, Identifier, LabelError, Signing, agent_id, default_identifier};
pub use install::{InstallSource, install_source};
pub use keychain::{Keychain, KeychainError, KeyringKeychain};
pub use launcher::{Launchd, Launcher, NoLauncher, StartRequest, default_launcher};
pub use login::{LoginItem, LoginState, LoginStatus, Mechanism, Plan};
pub use menu_bar::{MenuBarPresence, Presence, PresenceError};
#[cfg(feature = "desktop-notifications")]
pub use notifier::DesktopNotifier;
pub use notifier::{Notifier, NotifyError, RecordingNotifier, desktop_notifier};
pub use processes::{Pgrep, ProcFs, Processes, default_processes};
