//! The doctor's update checks, pure functions of the [`Findings`]: `version` (this copy, and
//! the daemon's when it differs), `updates` (the app's last check, `updates/last-check.json`)
//! and `grant` (whether Full Disk Access carries over to the update waiting: same developer).

use tidings_platform::Signing;
use tidings_platform::install::BREW_UPGRADE;
use tidings_platform::version;
use tidings_server::app::updates::{FailReason, LastCheck, Outcome as CheckOutcome, Staged};

use super::{Check, Findings, Outcome};

/// Who signed this copy, as the doctor found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnSigning {
    /// Not macOS: nothing is code-signed, and Full Disk Access is macOS's.
    NotHere,
    /// macOS, but no signature to compare (a development build outside Tidings.app, or an
    /// unsigned bundle): why, in words.
    Unknown(String),
    /// The running Tidings.app's signature.
    Signed(Signing),
}

/// The three checks, in the order they print.
pub fn update_checks(f: &Findings) -> Vec<Check> {
    vec![version_check(f), updates_check(f), grant_check(f)]
}

/// This copy's version and commit; a warning when the daemon answering runs another.
fn version_check(f: &Findings) -> Check {
    let name = "version";
    let this = format!("Tidings {}", version::LONG);
    match &f.daemon {
        Ok(state) if state.version != version::VERSION => Check::new(
            name,
            Outcome::Warn,
            format!("this copy is {this}; the daemon runs {}", state.version),
        )
        .fix("Quit Tidings from the menu and open it again, so the daemon runs this version"),
        _ => Check::new(name, Outcome::Pass, this),
    }
}

/// The last check the app made, when this copy made it.
fn this_copys_check(f: &Findings) -> Option<&LastCheck> {
    match &f.last_check {
        Ok(Some(check)) if check.current == version::VERSION => Some(check),
        _ => None,
    }
}

/// The update downloaded and waiting, if this copy's last check left one.
fn waiting(f: &Findings) -> Option<&Staged> {
    match &this_copys_check(f)?.outcome {
        CheckOutcome::Ready(staged) => Some(staged),
        _ => None,
    }
}

fn updates_check(f: &Findings) -> Check {
    let name = "updates";
    let check_now = "Choose Check for Updates… in the Tidings menu";
    let check = match &f.last_check {
        Err(e) => {
            return Check::new(
                name,
                Outcome::Warn,
                format!("cannot read the last check: {e}"),
            )
            .fix("Remove that file; the next check writes it again");
        }
        Ok(None) if matches!(&f.settings, Ok(s) if !s.updates.check) => {
            return Check::new(
                name,
                Outcome::Skip,
                "no check for updates has run, and the daily check is off ([updates] check = false)",
            )
            .fix(check_now);
        }
        Ok(None) => {
            return Check::new(name, Outcome::Skip, "no check for updates has run yet")
                .fix(check_now);
        }
        Ok(Some(check)) if check.current != version::VERSION => {
            return Check::new(
                name,
                Outcome::Skip,
                format!(
                    "the last check was made by Tidings {}; this copy ({}) has not checked yet",
                    check.current,
                    version::VERSION
                ),
            )
            .fix(check_now);
        }
        Ok(Some(check)) => check,
    };
    let when = format!("checked {}", ago(f.now_ms, check.checked_at_ms));
    match &check.outcome {
        CheckOutcome::UpToDate { newest } => {
            let newest = newest
                .as_deref()
                .map_or_else(String::new, |n| format!(", the feed's newest is {n}"));
            Check::new(name, Outcome::Pass, format!("up to date{newest} ({when})"))
        }
        CheckOutcome::Ready(staged) => {
            let fix = if f.install.is_homebrew() {
                format!("Homebrew installed this copy: run `{BREW_UPGRADE}`")
            } else {
                "Choose Install and Restart in the Tidings menu".to_owned()
            };
            Check::new(
                name,
                Outcome::Warn,
                format!("Tidings {} is ready ({when})", staged.version),
            )
            .fix(fix)
        }
        CheckOutcome::Older { offered } => Check::new(
            name,
            Outcome::Warn,
            format!(
                "the feed offers {offered}, older than this {}: nothing installed ({when})",
                version::VERSION
            ),
        )
        .fix("Nothing to do for a copy you built; otherwise the feed is behind: report it"),
        CheckOutcome::Failed { reason, message } => Check::new(
            name,
            Outcome::Warn,
            format!("the last check failed: {message} ({when})"),
        )
        .fix(failure_fix(*reason)),
    }
}

/// What to do after a failed check, by why it failed. Nothing was installed in any case.
fn failure_fix(reason: FailReason) -> &'static str {
    match reason {
        FailReason::Unreachable | FailReason::Timeout | FailReason::Http => {
            "Nothing was installed; check the connection, then Check for Updates… in the menu"
        }
        FailReason::Io => {
            "Nothing was installed; make sure the settings folder is yours and writable, then \
             Check for Updates… in the menu"
        }
        FailReason::Updater => {
            "Nothing was installed; quit and reopen Tidings, then Check for Updates… in the menu \
             (the app's log says why the updater stopped)"
        }
        FailReason::Malformed
        | FailReason::Unsigned
        | FailReason::Signature
        | FailReason::TooLarge
        | FailReason::Identity => {
            "Nothing was installed, and nothing will be from this feed until it is fixed: \
             report it at https://github.com/tidings-dev/tidings/issues"
        }
    }
}

/// Whether Full Disk Access carries over to the update waiting: it does when both are signed
/// by the same developer (team and identifier), since macOS grants it to that requirement.
fn grant_check(f: &Findings) -> Check {
    let name = "grant";
    let own = match &f.own_signing {
        OwnSigning::NotHere => {
            return Check::new(
                name,
                Outcome::Skip,
                "not code-signed here (Full Disk Access is macOS's)",
            );
        }
        OwnSigning::Unknown(why) => Err(why.as_str()),
        OwnSigning::Signed(signing) => Ok(signing),
    };
    let Some(staged) = waiting(f) else {
        let this = match own {
            Ok(signing) => signing.label().map_or_else(
                || "this copy is signed ad hoc".to_owned(),
                |label| format!("this copy is signed by {label}"),
            ),
            Err(why) => why.to_owned(),
        };
        return Check::new(name, Outcome::Skip, format!("no update is waiting; {this}"));
    };
    let v = &staged.version;
    let keep = "Do not install it; report it at https://github.com/tidings-dev/tidings/issues";
    let regrant = "After installing, turn Tidings on again in System Settings > Privacy & \
                   Security > Full Disk Access";
    let ours = match own {
        Err(why) => {
            return Check::new(
                name,
                Outcome::Warn,
                format!("{why}: cannot tell whether Full Disk Access carries over to {v}"),
            )
            .fix(regrant);
        }
        Ok(ours) => ours,
    };
    let Some(our_label) = ours.label() else {
        return Check::new(
            name,
            Outcome::Warn,
            format!(
                "this copy is signed ad hoc (no team): macOS ties Full Disk Access to this \
                 build, so {v} will need it again"
            ),
        )
        .fix(regrant);
    };
    let Some(label) = staged.signed_by.as_deref() else {
        return Check::new(
            name,
            Outcome::Fail,
            format!("Tidings {v} is not code-signed: installing it would lose Full Disk Access"),
        )
        .fix(keep);
    };
    match Signing::from_label(label) {
        Ok(theirs) if ours.same_developer(&theirs) => Check::new(
            name,
            Outcome::Pass,
            format!(
                "Tidings {v} is signed by the same developer ({label}): Full Disk Access carries over"
            ),
        ),
        Ok(_) => Check::new(
            name,
            Outcome::Fail,
            format!(
                "this copy is signed by {our_label}, Tidings {v} by {label}: installing it \
                 would lose Full Disk Access"
            ),
        )
        .fix(keep),
        Err(e) => Check::new(
            name,
            Outcome::Fail,
            format!("the signature recorded for Tidings {v} cannot be read: {e}"),
        )
        .fix(keep),
    }
}

/// How long ago `then_ms` was: "just now", "5 min ago", "3 h ago", "2 days ago".
pub(super) fn ago(now_ms: u64, then_ms: u64) -> String {
    let minutes = now_ms.saturating_sub(then_ms) / 60_000;
    match minutes {
        0 => "just now".to_owned(),
        1..60 => format!("{minutes} min ago"),
        60..2880 => format!("{} h ago", minutes / 60),
        _ => format!("{} days ago", minutes / 1440),
    }
}
