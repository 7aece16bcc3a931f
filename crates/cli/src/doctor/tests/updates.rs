//! The update checks (version, updates, grant) over last checks written to and read back from
//! a temporary settings folder, as the app leaves them.

use tidings_platform::Signing;
use tidings_platform::version::VERSION;
use tidings_server::app::updates::{
    FailReason, LastCheck, Outcome as CheckOutcome, Staged, read_last_check, updates_dir,
    write_last_check,
};

use super::*;

const HOUR_MS: u64 = 3_600_000;

/// Findings whose last check is `outcome`, made by `current` an hour before now: written into
/// a temporary settings folder's `updates/` and read back as the doctor reads it.
fn with_check(current: &str, outcome: CheckOutcome) -> Findings {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.toml");
    let check = LastCheck {
        checked_at_ms: NOW_MS - HOUR_MS,
        current: current.into(),
        outcome,
    };
    write_last_check(&updates_dir(&settings), &check).unwrap();
    let mut f = findings(Err("not running".into()), vec![Ok(()), Ok(())]);
    f.settings_path = settings.clone();
    f.last_check = read_last_check(&updates_dir(&settings)).map_err(|e| e.to_string());
    assert_eq!(f.last_check.as_ref().unwrap().as_ref(), Some(&check));
    f
}

fn ready(signed_by: Option<&str>) -> CheckOutcome {
    CheckOutcome::Ready(Staged {
        version: "9.0.0".into(),
        notes: Some("Faster.".into()),
        signed_by: signed_by.map(str::to_owned),
    })
}

fn ours() -> OwnSigning {
    OwnSigning::Signed(Signing {
        identifier: "dev.tidings.Tidings".into(),
        team: Some("Q6L2SF6YDW".into()),
        signer: Some("Tidings Dev".into()),
    })
}

#[test]
fn the_version_is_this_copys_and_a_daemon_on_another_warns() {
    let f = findings(Ok(state(VERSION)), vec![Ok(()), Ok(())]);
    let c = named(&checks(&f), "version").clone();
    assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
    assert_eq!(
        c.detail,
        format!("Tidings {}", tidings_platform::version::LONG)
    );
    let f = findings(Ok(state("0.0.1")), vec![Ok(()), Ok(())]);
    let c = named(&checks(&f), "version").clone();
    assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
    assert!(c.detail.contains("the daemon runs 0.0.1"), "{c:?}");
    assert!(c.fix.unwrap().contains("open it again"));
}

#[test]
fn no_check_yet_skips_and_up_to_date_passes_with_the_feeds_newest() {
    let f = findings(Err("not running".into()), vec![Ok(()), Ok(())]);
    let c = named(&checks(&f), "updates").clone();
    assert_eq!(c.outcome, Outcome::Skip, "{c:?}");
    assert!(c.detail.contains("no check for updates has run"), "{c:?}");
    assert!(c.fix.unwrap().contains("Check for Updates"));

    let f = with_check(
        VERSION,
        CheckOutcome::UpToDate {
            newest: Some(VERSION.into()),
        },
    );
    let c = named(&checks(&f), "updates").clone();
    assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
    assert_eq!(
        c.detail,
        format!("up to date, the feed's newest is {VERSION} (checked 1 h ago)")
    );
}

#[test]
fn with_the_daily_check_off_the_doctor_says_so() {
    let mut f = findings(Err("not running".into()), vec![Ok(()), Ok(())]);
    let mut settings = Settings::default();
    settings.updates.check = false;
    f.settings = Ok(settings);
    let c = named(&checks(&f), "updates").clone();
    assert_eq!(c.outcome, Outcome::Skip, "{c:?}");
    assert!(
        c.detail
            .ends_with("the daily check is off ([updates] check = false)"),
        "{c:?}"
    );
}

#[test]
fn a_check_made_by_another_version_is_not_this_copys() {
    // The record an update leaves behind: 0.0.1 found this copy ready, then installed it.
    let f = with_check("0.0.1", ready(Some("Q6L2SF6YDW:dev.tidings.Tidings")));
    let checks = checks(&f);
    let c = named(&checks, "updates");
    assert_eq!(c.outcome, Outcome::Skip, "{c:?}");
    assert!(c.detail.contains("made by Tidings 0.0.1"), "{c:?}");
    assert_eq!(named(&checks, "grant").outcome, Outcome::Skip);
}

#[test]
fn an_update_ready_says_install_and_restart_or_brew_upgrade_for_a_homebrew_copy() {
    let mut f = with_check(VERSION, ready(Some("Q6L2SF6YDW:dev.tidings.Tidings")));
    let c = named(&checks(&f), "updates").clone();
    assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
    assert_eq!(c.detail, "Tidings 9.0.0 is ready (checked 1 h ago)");
    assert!(c.fix.unwrap().contains("Install and Restart"));

    f.install = tidings_platform::InstallSource::Homebrew {
        caskroom: PathBuf::from("/opt/homebrew/Caskroom/tidings"),
    };
    let c = named(&checks(&f), "updates").clone();
    assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
    assert!(
        c.fix
            .as_deref()
            .unwrap()
            .contains("`brew upgrade --cask tidings`"),
        "{c:?}"
    );
}

#[test]
fn a_failed_or_older_check_warns_with_its_message_and_never_fails() {
    let f = with_check(
        VERSION,
        CheckOutcome::Failed {
            reason: FailReason::Signature,
            message: "the archive's signature is not Tidings' key".into(),
        },
    );
    let c = named(&checks(&f), "updates").clone();
    assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
    assert!(
        c.detail
            .contains("the last check failed: the archive's signature is not Tidings' key"),
        "{c:?}"
    );
    assert!(c.fix.unwrap().contains("Nothing was installed"));
    let update_checks = super::super::updates::update_checks(&f);
    assert!(
        !update_checks.iter().any(|c| c.outcome == Outcome::Fail),
        "{update_checks:?}"
    );

    let f = with_check(
        VERSION,
        CheckOutcome::Older {
            offered: "0.0.1".into(),
        },
    );
    let c = named(&checks(&f), "updates").clone();
    assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
    assert!(c.detail.contains("offers 0.0.1, older than this"), "{c:?}");
}

#[test]
fn a_damaged_last_check_warns_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.toml");
    let updates = updates_dir(&settings);
    std::fs::create_dir_all(&updates).unwrap();
    std::fs::write(updates.join("last-check.json"), "{").unwrap();
    let mut f = findings(Err("not running".into()), vec![Ok(()), Ok(())]);
    f.last_check = read_last_check(&updates).map_err(|e| e.to_string());
    let c = named(&checks(&f), "updates").clone();
    assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
    assert!(c.detail.contains("last-check.json"), "{c:?}");
}

#[test]
fn the_grant_carries_over_only_to_the_same_developer() {
    let mut f = with_check(VERSION, ready(Some("Q6L2SF6YDW:dev.tidings.Tidings")));
    // Linux: nothing to compare.
    let c = named(&checks(&f), "grant").clone();
    assert_eq!(c.outcome, Outcome::Skip, "{c:?}");
    assert!(c.detail.contains("not code-signed here"), "{c:?}");

    f.own_signing = ours();
    let c = named(&checks(&f), "grant").clone();
    assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
    assert!(c.detail.contains("same developer"), "{c:?}");

    for other in [
        "ABCDE12345:dev.tidings.Tidings",
        "Q6L2SF6YDW:dev.someone.Tidings",
    ] {
        let mut f = with_check(VERSION, ready(Some(other)));
        f.own_signing = ours();
        let checks = checks(&f);
        let c = named(&checks, "grant");
        assert_eq!(c.outcome, Outcome::Fail, "{c:?}");
        assert!(
            c.detail.contains("would lose Full Disk Access") && c.detail.contains(other),
            "{c:?}"
        );
        assert!(render(&checks).contains("[FAIL] grant"));
    }

    let mut f = with_check(VERSION, ready(None));
    f.own_signing = ours();
    let c = named(&checks(&f), "grant").clone();
    assert_eq!(c.outcome, Outcome::Fail, "{c:?}");
    assert!(c.detail.contains("not code-signed"), "{c:?}");

    let mut f = with_check(VERSION, ready(Some("not a label")));
    f.own_signing = ours();
    let c = named(&checks(&f), "grant").clone();
    assert_eq!(c.outcome, Outcome::Fail, "{c:?}");
    assert!(c.detail.contains("TEAMID:identifier"), "{c:?}");
}

#[test]
fn an_unsigned_or_ad_hoc_copy_cannot_promise_the_grant() {
    let mut f = with_check(VERSION, ready(Some("Q6L2SF6YDW:dev.tidings.Tidings")));
    f.own_signing = OwnSigning::Unknown("this copy does not run from inside Tidings.app".into());
    let c = named(&checks(&f), "grant").clone();
    assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
    assert!(c.detail.contains("cannot tell"), "{c:?}");
    f.own_signing = OwnSigning::Signed(Signing {
        identifier: "dev.tidings.Tidings".into(),
        team: None,
        signer: None,
    });
    let c = named(&checks(&f), "grant").clone();
    assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
    assert!(c.detail.contains("ad hoc"), "{c:?}");
    assert!(c.fix.unwrap().contains("Full Disk Access"));

    // No update waiting: nothing to compare, this copy's signer named.
    let mut f = with_check(VERSION, CheckOutcome::UpToDate { newest: None });
    f.own_signing = ours();
    let c = named(&checks(&f), "grant").clone();
    assert_eq!(c.outcome, Outcome::Skip, "{c:?}");
    assert_eq!(
        c.detail,
        "no update is waiting; this copy is signed by Q6L2SF6YDW:dev.tidings.Tidings"
    );
}

#[test]
fn the_report_carries_the_reason_not_the_message() {
    let home = tempfile::tempdir().unwrap();
    let mut f = with_check(
        VERSION,
        CheckOutcome::Failed {
            reason: FailReason::Io,
            message: "cannot write /Users/someone/Library/x".into(),
        },
    );
    f.own_signing = ours();
    let report = report(home.path(), &f, &tidings_platform::RecordingRunner::new());
    let updates = &report["updates"];
    assert_eq!(updates["lastCheck"]["outcome"], "failed", "{updates}");
    assert_eq!(updates["lastCheck"]["reason"], "io", "{updates}");
    assert_eq!(updates["homebrew"], false, "{updates}");
    assert_eq!(updates["signedBy"], "Q6L2SF6YDW:dev.tidings.Tidings");
    assert!(!report.to_string().contains("someone"), "{report}");
}

#[test]
fn ages_read_in_minutes_hours_then_days() {
    use super::super::updates::ago;
    assert_eq!(ago(NOW_MS, NOW_MS + 5_000), "just now");
    assert_eq!(ago(NOW_MS, NOW_MS - 59_000), "just now");
    assert_eq!(ago(NOW_MS, NOW_MS - 5 * 60_000), "5 min ago");
    assert_eq!(ago(NOW_MS, NOW_MS - 3 * HOUR_MS), "3 h ago");
    assert_eq!(ago(NOW_MS, NOW_MS - 72 * HOUR_MS), "3 days ago");
}
