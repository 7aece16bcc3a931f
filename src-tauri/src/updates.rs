//! Updates as the tray sees them: the check and the install run in `tidings-settings
//! --updater` (Tauri's updater plugin needs a Tauri program; this process links none), a
//! child whose one JSON line says what came of it. Here: starting it (the menu, the window's
//! Check Now, once a day when `[updates] check` is on), what the menu says, and Install and
//! Restart. Nothing here blocks the menu: a check that hangs holds only its child, which is
//! killed past [`CHILD_TIMEOUT`]. Decisions: docs/decisions/updates.md.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde::de::DeserializeOwned;
use tidings_platform::install::BREW_UPGRADE;
use tidings_server::app::updates::{
    LastCheck, Outcome, read_last_check, updates_dir, write_last_check,
};
use tidings_server::{Handle, app};
use tokio::io::AsyncReadExt;

use crate::{AppEvent, Proxy};

/// The longest a check or an install may take, the download included, before its child is
/// killed (the child's own bounds are shorter).
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// A day between background checks.
pub const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// A failed check is tried again sooner (a laptop offline at the hour of the check).
pub const RETRY_MS: u64 = 4 * 60 * 60 * 1000;

/// The first background check waits this long after start (login is busy enough).
pub const FIRST_CHECK_DELAY_MS: u64 = 60 * 1000;

/// The longest the daily timer sleeps before it looks again (the switch, a Mac that slept).
const LOOK_AGAIN: Duration = Duration::from_secs(10 * 60);

/// The longest line of text in the menu (GTK and macOS cut wider ones at the menu's edge).
const MENU_CHARS: usize = 44;

/// What is running now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Busy {
    Checking,
    Installing,
}

#[derive(Debug, Default)]
struct Inner {
    last: Option<LastCheck>,
    busy: Option<Busy>,
    /// An install that failed, said until the next check.
    install_error: Option<String>,
}

/// The app's updates: the last check, what runs, where the updater keeps things.
pub struct Updates {
    dir: PathBuf,
    current: String,
    homebrew: bool,
    /// `--feed URL --pubkey KEY`, passed through from the app's command line (a fork's feed,
    /// the end-to-end test's).
    updater_args: Vec<OsString>,
    main: Proxy,
    inner: Mutex<Inner>,
}

/// The menu's update items: two lines of text (what, then its detail), and whether Install
/// and Restart can be chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuView {
    pub headline: String,
    pub detail: String,
    pub install: bool,
}

impl Updates {
    /// The updates of the app whose settings file is `handle`'s.
    pub fn new(handle: &Handle, main: Proxy, updater_args: Vec<OsString>) -> Arc<Updates> {
        let dir = updates_dir(handle.settings_path());
        let last = match read_last_check(&dir) {
            Ok(last) => last,
            Err(error) => {
                tracing::warn!(%error, "the last update check cannot be read; checking afresh");
                None
            }
        };
        Arc::new(Updates {
            dir,
            current: env!("CARGO_PKG_VERSION").to_owned(),
            homebrew: installed_by_homebrew(),
            updater_args,
            main,
            inner: Mutex::new(Inner {
                last,
                ..Inner::default()
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the menu shows now.
    pub fn menu(&self) -> MenuView {
        let inner = self.lock();
        menu_view(&self.current, &inner, self.homebrew)
    }

    /// Checks the feed (the menu, the window, the daily timer). Asked again while a check or
    /// an install runs, it starts nothing.
    pub async fn check(self: Arc<Self>) {
        if !self.start(Busy::Checking) {
            tracing::info!("an update check is already running");
            return;
        }
        let check = match self.run_updater::<LastCheck>("check").await {
            Ok(check) => {
                log_check(&check);
                check
            }
            Err(error) => {
                tracing::warn!(%error, "the update check did not finish");
                // Recorded as the updater records its own outcomes, so the window and the
                // doctor say what the menu says.
                let check = LastCheck {
                    checked_at_ms: tidings_server::state::now_ms(),
                    current: self.current.clone(),
                    outcome: Outcome::Failed {
                        reason: tidings_server::app::updates::FailReason::Updater,
                        message: error,
                    },
                };
                if let Err(error) = write_last_check(&self.dir, &check) {
                    tracing::warn!(%error, "the failed update check cannot be recorded");
                }
                check
            }
        };
        let mut inner = self.lock();
        inner.install_error = None;
        inner.last = Some(check);
        inner.busy = None;
        drop(inner);
        self.main.send(AppEvent::UpdatesChanged);
    }

    /// Install and Restart: installs the update a check kept, then restarts the app through
    /// the login item (or by itself, started otherwise). Clients reconnect and resume from
    /// their cursors, as after any restart. A Homebrew copy never replaces itself.
    pub async fn install(self: Arc<Self>) {
        if self.homebrew {
            tracing::info!("installed with Homebrew: not replacing itself; `{BREW_UPGRADE}`");
            self.lock().install_error = Some(format!("installed with Homebrew: {BREW_UPGRADE}"));
            self.main.send(AppEvent::UpdatesChanged);
            return;
        }
        if !self.start(Busy::Installing) {
            tracing::info!("a check or an install is already running");
            return;
        }
        let result = self.run_updater::<Installed>("install").await;
        let installed = match result {
            Ok(Installed {
                installed: Some(version),
                ..
            }) => Some(version),
            Ok(Installed { error, .. }) => {
                let error = error.unwrap_or_else(|| "nothing was installed".to_owned());
                tracing::warn!(%error, "the update was not installed");
                self.lock().install_error = Some(error);
                None
            }
            Err(error) => {
                tracing::warn!(%error, "the update was not installed");
                self.lock().install_error = Some(error);
                None
            }
        };
        self.lock().busy = None;
        self.main.send(AppEvent::UpdatesChanged);
        if let Some(version) = installed {
            tracing::info!(version, "update installed; restarting");
            match app::restart_through_login_item().await {
                Ok(true) => {}
                Ok(false) => self.main.send(AppEvent::Restart),
                Err(error) => {
                    tracing::warn!(%error, "cannot restart through the login item; restarting directly");
                    self.main.send(AppEvent::Restart);
                }
            }
        }
    }

    /// Marks `busy`; false when something already runs.
    fn start(&self, busy: Busy) -> bool {
        let mut inner = self.lock();
        if inner.busy.is_some() {
            return false;
        }
        inner.busy = Some(busy);
        drop(inner);
        self.main.send(AppEvent::UpdatesChanged);
        true
    }

    /// Runs `tidings-settings --updater ACTION` and reads its JSON line.
    async fn run_updater<T: DeserializeOwned>(&self, action: &str) -> Result<T, String> {
        let program = std::env::current_exe()
            .map_err(|e| format!("cannot find the updater: {e}"))?
            .with_file_name("tidings-settings");
        let mut child = tokio::process::Command::new(&program)
            .args(["--updater", action, "--dir"])
            .arg(&self.dir)
            .args(&self.updater_args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let mut out = String::new();
        let finished = tokio::time::timeout(CHILD_TIMEOUT, async {
            let read = stdout.read_to_string(&mut out).await;
            let status = child.wait().await;
            (read, status)
        })
        .await;
        let Ok((read, status)) = finished else {
            return Err(format!(
                "the updater took longer than {} minutes and was stopped",
                CHILD_TIMEOUT.as_secs() / 60
            ));
        };
        read.map_err(|e| format!("cannot read the updater's answer: {e}"))?;
        let status = status.map_err(|e| format!("the updater did not finish: {e}"))?;
        last_json_line(&out)
            .ok_or_else(|| format!("the updater ended ({status}) without an answer"))
    }
}

/// What `tidings-settings --updater install` answers.
#[derive(Debug, serde::Deserialize)]
struct Installed {
    installed: Option<String>,
    error: Option<String>,
}

/// The last line of `out` that is a `T` (a library may print before it).
fn last_json_line<T: DeserializeOwned>(out: &str) -> Option<T> {
    out.lines()
        .rev()
        .find_map(|line| serde_json::from_str(line).ok())
}

/// One log line per check, with versions and the reason only (no address of the user's).
fn log_check(check: &LastCheck) {
    if let Outcome::Failed { reason, .. } = &check.outcome {
        tracing::warn!(?reason, "update check: {}", check.describe());
    } else {
        tracing::info!("update check: {}", check.describe());
    }
}

/// The menu's update lines and whether Install and Restart is on.
fn menu_view(current: &str, inner: &Inner, homebrew: bool) -> MenuView {
    let view = |headline: &str, detail: &str, install: bool| MenuView {
        headline: short(headline, MENU_CHARS),
        detail: short(detail, MENU_CHARS),
        install,
    };
    match inner.busy {
        Some(Busy::Checking) => return view("Checking for updates…", "", false),
        Some(Busy::Installing) => return view("Installing the update…", "", false),
        None => {}
    }
    if let Some(error) = &inner.install_error {
        // Still ready (an administrator's password refused, say): Install can be tried again.
        let ready = !homebrew
            && matches!(&inner.last, Some(LastCheck { outcome: Outcome::Ready(s), .. }) if s.version != current);
        return view("The update was not installed", error, ready);
    }
    let Some(last) = &inner.last else {
        return view(
            &format!("Tidings {current}"),
            "Not checked for updates yet",
            false,
        );
    };
    match &last.outcome {
        // A check by an older copy that was since replaced: this copy is what runs now.
        Outcome::Ready(staged) if staged.version == current => {
            view(&format!("Tidings {current}"), "Updated", false)
        }
        Outcome::Ready(staged) => {
            let headline = format!("Tidings {} is ready", staged.version);
            let notes = staged.notes.as_deref().and_then(notes_preview);
            if homebrew {
                view(&headline, &format!("Update with {BREW_UPGRADE}"), false)
            } else {
                view(&headline, notes.as_deref().unwrap_or(""), true)
            }
        }
        Outcome::UpToDate { .. } => view(&format!("Tidings {current} is up to date"), "", false),
        Outcome::Older { offered } => view(
            &format!("Tidings {current}"),
            &format!("The feed offers an older {offered}"),
            false,
        ),
        Outcome::Failed { message, .. } => view("Could not check for updates", message, false),
    }
}

/// The first lines of release notes for one menu line: untrusted text, so control characters
/// go, Markdown's heading and list marks go, at most two lines.
pub fn notes_preview(notes: &str) -> Option<String> {
    let lines: Vec<String> = notes
        .lines()
        .map(|line| {
            line.chars()
                .filter(|c| !c.is_control())
                .collect::<String>()
                .trim()
                .trim_start_matches(['#', '-', '*', '+', ' '])
                .trim()
                .to_owned()
        })
        .filter(|line| !line.is_empty())
        .take(2)
        .collect();
    (!lines.is_empty()).then(|| lines.join(" "))
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

/// When the next background check is due: a day after the last (sooner after a failure), and
/// never before the first delay after start.
pub fn next_check_ms(last: Option<&LastCheck>, started_ms: u64) -> u64 {
    let earliest = started_ms + FIRST_CHECK_DELAY_MS;
    let due = last.map_or(earliest, |last| {
        let after = match last.outcome {
            Outcome::Failed { .. } => RETRY_MS,
            _ => DAY_MS,
        };
        last.checked_at_ms.saturating_add(after)
    });
    due.max(earliest)
}

/// Checks once a day while `[updates] check` is on, looking again every few minutes (the
/// switch may change; a Mac that slept wakes past the hour). Runs until the app quits.
pub async fn daily(updates: Arc<Updates>, handle: Handle) {
    let started_ms = tidings_server::state::now_ms();
    loop {
        let now_ms = tidings_server::state::now_ms();
        let last = updates.lock().last.clone();
        match next_step(checks_on(&handle), last.as_ref(), started_ms, now_ms) {
            Step::Check => updates.clone().check().await,
            Step::Sleep(wait) => tokio::time::sleep(wait).await,
        }
    }
}

/// What the daily timer does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Check,
    Sleep(Duration),
}

/// The daily timer's decision: check when the switch is on and a check is due, else sleep
/// until it is due (at most [`LOOK_AGAIN`], at least a second). With the switch off it never
/// checks, however long it has been.
pub fn next_step(on: bool, last: Option<&LastCheck>, started_ms: u64, now_ms: u64) -> Step {
    let due = next_check_ms(last, started_ms);
    if on && now_ms >= due {
        return Step::Check;
    }
    let wait = Duration::from_millis(due.saturating_sub(now_ms)).min(LOOK_AGAIN);
    Step::Sleep(wait.max(Duration::from_secs(1)))
}

/// Whether the daily check is on (`[updates] check`).
fn checks_on(handle: &Handle) -> bool {
    handle.settings().updates.check
}

/// Whether Homebrew installed this copy (it then updates with `brew upgrade`).
fn installed_by_homebrew() -> bool {
    tidings_platform::install_source().is_homebrew()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tidings_server::app::updates::{FailReason, Staged};

    fn ready(version: &str, notes: Option<&str>) -> LastCheck {
        LastCheck {
            checked_at_ms: 1_000,
            current: "0.1.0".into(),
            outcome: Outcome::Ready(Staged {
                version: version.into(),
                notes: notes.map(Into::into),
                signed_by: None,
            }),
        }
    }

    fn view(last: Option<LastCheck>, homebrew: bool) -> MenuView {
        let inner = Inner {
            last,
            ..Inner::default()
        };
        menu_view("0.1.0", &inner, homebrew)
    }

    fn lines(menu: &MenuView) -> (&str, &str, bool) {
        (&menu.headline, &menu.detail, menu.install)
    }

    #[test]
    fn a_ready_update_shows_its_version_and_first_lines_and_can_be_installed() {
        let menu = view(
            Some(ready(
                "0.2.0",
                Some("## Fixed\n\n- The Mail reader.\n- Start.\n- More"),
            )),
            false,
        );
        assert_eq!(
            lines(&menu),
            ("Tidings 0.2.0 is ready", "Fixed The Mail reader.", true)
        );
    }

    #[test]
    fn a_homebrew_copy_names_brew_and_offers_no_install() {
        let menu = view(Some(ready("0.2.0", Some("Fixes."))), true);
        assert_eq!(
            lines(&menu),
            (
                "Tidings 0.2.0 is ready",
                "Update with brew upgrade --cask tidings",
                false
            )
        );
    }

    #[test]
    fn once_installed_the_ready_version_is_this_copy() {
        let menu = view(Some(ready("0.1.0", None)), false);
        assert_eq!(lines(&menu), ("Tidings 0.1.0", "Updated", false));
    }

    #[test]
    fn failures_and_refusals_are_said_and_never_installable() {
        let failed = LastCheck {
            checked_at_ms: 1,
            current: "0.1.0".into(),
            outcome: Outcome::Failed {
                reason: FailReason::Signature,
                message: "the update's signature does not match".into(),
            },
        };
        let menu = view(Some(failed), false);
        assert_eq!(
            lines(&menu),
            (
                "Could not check for updates",
                "the update's signature does not match",
                false
            )
        );
        let older = LastCheck {
            outcome: Outcome::Older {
                offered: "0.0.9".into(),
            },
            ..ready("x", None)
        };
        assert_eq!(
            lines(&view(Some(older), false)),
            ("Tidings 0.1.0", "The feed offers an older 0.0.9", false)
        );
        assert_eq!(
            lines(&view(None, false)),
            ("Tidings 0.1.0", "Not checked for updates yet", false)
        );
    }

    #[test]
    fn a_failed_install_says_why_and_can_be_tried_again() {
        let inner = Inner {
            last: Some(ready("0.2.0", None)),
            busy: None,
            install_error: Some("installing 0.2.0 failed: cancelled".into()),
        };
        let menu = menu_view("0.1.0", &inner, false);
        assert_eq!(
            lines(&menu),
            (
                "The update was not installed",
                "installing 0.2.0 failed: cancelled",
                true
            )
        );
        assert!(!menu_view("0.1.0", &inner, true).install);
    }

    #[test]
    fn while_checking_the_menu_says_so() {
        let inner = Inner {
            last: Some(ready("0.2.0", None)),
            busy: Some(Busy::Checking),
            install_error: None,
        };
        let menu = menu_view("0.1.0", &inner, false);
        assert_eq!(lines(&menu), ("Checking for updates…", "", false));
    }

    #[test]
    fn notes_lose_control_characters_and_marks_and_long_lines_are_cut() {
        assert_eq!(
            notes_preview("# Big\u{7} news\n* one\u{1b}\n* two"),
            Some("Big news one".into())
        );
        assert_eq!(notes_preview("   \n\n"), None);
        let long = "x".repeat(200);
        let menu = view(Some(ready("0.2.0", Some(&long))), false);
        assert_eq!(menu.detail.chars().count(), MENU_CHARS);
        assert!(menu.detail.ends_with('…'));
    }

    /// The updater beside a test binary does not exist: the check that cannot start is
    /// recorded for the window and the doctor as it is shown in the menu.
    #[tokio::test]
    async fn an_updater_that_cannot_run_is_recorded_and_said() {
        use tidings_server::Tidings;
        use tidings_server::engine::{Config, DemoConfig};
        let dir = tempfile::tempdir().unwrap();
        let handle = Tidings::start(Config::demo(DemoConfig {
            data_dir: Some(dir.path().join("demo")),
            simulate: None,
            conformance_controls: false,
        }))
        .expect("the demo engine starts");
        let updates = Updates::new(&handle, Proxy::new(|_| {}), Vec::new());

        updates.clone().check().await;

        let recorded = read_last_check(&updates_dir(handle.settings_path()))
            .unwrap()
            .expect("the failed check is recorded");
        let Outcome::Failed { reason, message } = &recorded.outcome else {
            panic!("{recorded:?}")
        };
        assert_eq!(*reason, FailReason::Updater);
        assert!(message.starts_with("cannot start "), "{message}");
        assert_eq!(updates.menu().headline, "Could not check for updates");
        handle.shutdown();
        handle.join().await.unwrap();
    }

    #[test]
    fn with_the_switch_off_the_timer_never_checks() {
        let started = 10 * DAY_MS;
        let mut now = started;
        // A year of the timer's looks.
        while now < started + 365 * DAY_MS {
            let step = next_step(false, None, started, now);
            let Step::Sleep(wait) = step else {
                panic!("checked with the switch off at {now}")
            };
            assert!(wait <= LOOK_AGAIN);
            now += u64::try_from(wait.as_millis()).unwrap();
        }
        assert_eq!(
            next_step(true, None, started, started + FIRST_CHECK_DELAY_MS),
            Step::Check
        );
        assert_eq!(
            next_step(true, None, started, started),
            Step::Sleep(Duration::from_millis(FIRST_CHECK_DELAY_MS))
        );
    }

    #[test]
    fn the_next_check_is_a_day_after_the_last_sooner_after_a_failure_never_at_start() {
        let started = 10 * DAY_MS;
        assert_eq!(next_check_ms(None, started), started + FIRST_CHECK_DELAY_MS);
        let mut last = ready("0.2.0", None);
        last.checked_at_ms = started - 1_000;
        assert_eq!(
            next_check_ms(Some(&last), started),
            started - 1_000 + DAY_MS
        );
        last.outcome = Outcome::Failed {
            reason: FailReason::Timeout,
            message: String::new(),
        };
        assert_eq!(
            next_check_ms(Some(&last), started),
            started - 1_000 + RETRY_MS
        );
        last.checked_at_ms = 0;
        assert_eq!(
            next_check_ms(Some(&last), started),
            started + FIRST_CHECK_DELAY_MS
        );
    }
}
