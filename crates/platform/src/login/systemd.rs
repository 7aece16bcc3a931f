//! The Linux twin: a systemd user unit with `Restart=on-failure` (a crash restarts it, a
//! clean Quit does not, as launchd's `KeepAlive {SuccessfulExit: false}`), managed with
//! `systemctl --user`.

use super::{LoginState, LoginStatus, Mechanism, Plan, Session};
use crate::error::LoginError;

/// The unit's file name.
pub const UNIT: &str = "tidings.service";

/// The unit file. The app needs the graphical session (it is started with it and stopped
/// with it); `tidings serve` (headless) needs none and starts with the user's manager.
pub fn unit(plan: &Plan) -> String {
    let exec = plan
        .program_arguments()
        .iter()
        .map(|a| exec_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    let (after, wanted_by) = if plan.runs_cli() {
        ("", "default.target")
    } else {
        (
            "After=graphical-session.target\nPartOf=graphical-session.target\n",
            "graphical-session.target",
        )
    };
    format!(
        "# Written by `tidings install`; `tidings uninstall` removes it.\n\
         [Unit]\n\
         Description=Tidings: tells local AI clients when new mail or a new message arrives\n\
         {after}\n\
         [Service]\n\
         ExecStart={exec}\n\
         # A crash restarts it; a clean exit (Quit) does not.\n\
         Restart=on-failure\n\
         RestartSec={}\n\
         \n\
         [Install]\n\
         WantedBy={wanted_by}\n",
        super::launchd::THROTTLE_INTERVAL_SECS
    )
}

/// One `ExecStart` word: double-quoted, with `\` and `"` escaped and the specifier and
/// variable signs (`%`, `$`) doubled, so any path is taken literally.
fn exec_quote(word: &str) -> String {
    let escaped = word
        .replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('%', "%%")
        .replace('$', "$$");
    format!("\"{escaped}\"")
}

/// Writes the unit, reloads, enables it (and starts it, unless `keep_running`).
pub(super) fn install(session: &mut Session<'_>) -> Result<(), LoginError> {
    let plan = session.plan().clone();
    session.write(&plan.unit_path(), &unit(&plan))?;
    session.run_checked("systemctl", &["--user", "daemon-reload"])?;
    if session.options().keep_running {
        session.run_checked("systemctl", &["--user", "enable", UNIT])
    } else {
        session.run_checked("systemctl", &["--user", "enable", "--now", UNIT])
    }
}

/// Disables (and stops, unless `keep_running`) the unit, removes it, reloads. Nothing to do
/// when the unit file is not there.
pub(super) fn uninstall(session: &mut Session<'_>) -> Result<(), LoginError> {
    let path = session.plan().unit_path();
    if !session.exists(&path) {
        return Ok(());
    }
    if session.options().keep_running {
        session.run_checked("systemctl", &["--user", "disable", UNIT])?;
    } else {
        session.run_checked("systemctl", &["--user", "disable", "--now", UNIT])?;
    }
    session.remove(&path)?;
    session.run_checked("systemctl", &["--user", "daemon-reload"])
}

/// `systemctl --user restart`.
pub(super) fn restart(session: &mut Session<'_>) -> Result<(), LoginError> {
    session.run_checked("systemctl", &["--user", "restart", UNIT])
}

/// Off without the unit file; with it, what `systemctl --user is-enabled` says.
pub(super) fn status(session: &Session<'_>) -> LoginStatus {
    let path = session.plan().unit_path();
    let status = |state, text: String| LoginStatus {
        state,
        mechanism: Mechanism::Systemd,
        text,
    };
    if !path.is_file() {
        return status(
            LoginState::Disabled,
            "Tidings does not start at login.".to_owned(),
        );
    }
    match session.ask("systemctl", &["--user", "is-enabled", UNIT]) {
        Ok(out) if String::from_utf8_lossy(&out.stdout).trim() == "enabled" => status(
            LoginState::Enabled,
            "Tidings starts when you log in, and again if it stops unexpectedly.".to_owned(),
        ),
        Ok(out) if out.code.is_some_and(|c| c != 0) && out.stderr.is_empty() => status(
            LoginState::Disabled,
            format!(
                "{} is installed but not enabled; `tidings install` enables it.",
                path.display()
            ),
        ),
        Ok(out) => status(
            LoginState::Disabled,
            format!(
                "{} is installed, but systemd could not be asked: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ),
        Err(e) => status(
            LoginState::Disabled,
            format!(
                "{} is installed, but systemctl could not be run: {e}",
                path.display()
            ),
        ),
    }
}
