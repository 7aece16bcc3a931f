//! The login item's tests, on real files in a temporary home: its files parsed back
//! ([`files`]), its command sequences through the recording runner for launchd
//! ([`launchctl`]), systemd ([`systemctl`]) and `SMAppService` ([`app_service`]), and here what
//! they share.

mod app_service;
mod files;
mod launchctl;
mod systemctl;

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::command::RecordingRunner;

/// A plan for `os` running `exe` in `home`, as uid 501, with no `XDG_CONFIG_HOME`.
fn plan(os: Os, home: &Path, exe: &str) -> Plan {
    Plan {
        os,
        exe: PathBuf::from(exe),
        home: home.to_path_buf(),
        uid: 501,
        xdg_config_home: None,
    }
}

/// Options that poll without sleeping, three times.
fn fast() -> Options {
    Options {
        poll_interval: Duration::ZERO,
        poll_attempts: 3,
        ..Options::default()
    }
}

/// Each call as one line, `program arg arg`.
fn lines(runner: &RecordingRunner) -> Vec<String> {
    runner
        .calls()
        .iter()
        .map(|c| {
            std::iter::once(c.program.clone())
                .chain(c.args.clone())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The app's executable in its bundle, as the login item starts it.
const APP: &str = "/Applications/Tidings.app/Contents/MacOS/tidings-app";

#[test]
fn restart_kickstarts_or_restarts() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .restart()
        .unwrap();
    LoginItem::new(plan(Os::Linux, home.path(), APP), &runner, &NoAppService)
        .restart()
        .unwrap();
    assert_eq!(
        lines(&runner),
        [
            "launchctl kickstart -k gui/501/dev.tidings.Tidings",
            "systemctl --user restart tidings.service",
        ]
    );
}

#[test]
fn command_lines_quote_what_a_shell_would_split() {
    assert_eq!(
        command_line("launchctl", &["bootstrap", "gui/501", "/Users/a b/x.plist"]),
        "launchctl bootstrap gui/501 '/Users/a b/x.plist'"
    );
    assert_eq!(command_line("echo", &["it's"]), r"echo 'it'\''s'");
}

#[test]
fn the_login_items_own_process_is_told_from_the_job_name_or_the_cgroup() {
    assert!(is_login_item_process(Os::MacOs, "dev.tidings.Tidings"));
    assert!(!is_login_item_process(
        Os::MacOs,
        "application.dev.tidings.Tidings.1234.5678"
    ));
    assert!(!is_login_item_process(Os::MacOs, "0"));
    let unit = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/tidings.service\n";
    assert!(is_login_item_process(Os::Linux, unit));
    let terminal = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/vte-spawn-1.scope\n";
    assert!(!is_login_item_process(Os::Linux, terminal));
    assert!(!is_login_item_process(
        Os::Linux,
        "0::/my-tidings.service.d\n"
    ));
}
