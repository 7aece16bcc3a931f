//! launchd through `launchctl`, on the recording runner: install, reinstall, uninstall, the
//! failures, `keep_running` and a dry run.

use super::*;
use crate::command::CommandOutput;

#[test]
fn launchd_install_writes_the_plist_and_bootstraps_it() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .with_options(fast());
    let report = item.install().unwrap();
    assert_eq!(report.mechanism, Mechanism::LaunchAgent);
    let path = home
        .path()
        .join("Library/LaunchAgents/dev.tidings.Tidings.plist");
    assert_eq!(
        lines(&runner),
        [format!("launchctl bootstrap gui/501 {}", path.display())]
    );
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert_eq!(on_disk, launchd::agent_plist(&[APP.to_owned()]));
    assert_eq!(item.status().state, LoginState::Enabled);
    // No temporary file left beside it.
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1
    );
}

#[test]
fn launchd_reinstall_boots_out_waits_until_gone_and_bootstraps_again() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    runner
        .push_output(CommandOutput::failure(
            5,
            "Bootstrap failed: 5: Input/output error\n",
        ))
        .push_output(CommandOutput::success()) // bootout
        .push_output(CommandOutput::success()) // print: still there
        .push_output(CommandOutput::failure(113, "Could not find service")) // print: gone
        .push_output(CommandOutput::success()); // bootstrap
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .with_options(fast());
    item.install().unwrap();
    let path = home
        .path()
        .join("Library/LaunchAgents/dev.tidings.Tidings.plist");
    let bootstrap = format!("launchctl bootstrap gui/501 {}", path.display());
    assert_eq!(
        lines(&runner),
        [
            bootstrap.as_str(),
            "launchctl bootout gui/501/dev.tidings.Tidings",
            "launchctl print gui/501/dev.tidings.Tidings",
            "launchctl print gui/501/dev.tidings.Tidings",
            bootstrap.as_str(),
        ]
    );
}

#[test]
fn launchd_uninstall_boots_out_and_removes_the_plist() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .with_options(fast());
    item.install().unwrap();
    let path = item.plan().agent_plist_path();
    assert!(path.is_file());
    let runner = RecordingRunner::new();
    runner
        .push_output(CommandOutput::success()) // bootout
        .push_output(CommandOutput::failure(113, "Could not find service")); // print: gone
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .with_options(fast());
    let report = item.uninstall().unwrap();
    assert_eq!(
        lines(&runner),
        [
            "launchctl bootout gui/501/dev.tidings.Tidings",
            "launchctl print gui/501/dev.tidings.Tidings",
        ]
    );
    assert!(!path.exists());
    assert_eq!(report.steps.last(), Some(&Step::Remove { path }));
    assert_eq!(item.status().state, LoginState::Disabled);
}

#[test]
fn launchd_uninstall_of_nothing_is_fine() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    runner.push_output(CommandOutput::failure(
        3,
        "Boot-out failed: 3: No such process",
    ));
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .with_options(fast());
    let report = item.uninstall().unwrap();
    assert_eq!(
        lines(&runner),
        ["launchctl bootout gui/501/dev.tidings.Tidings"]
    );
    assert_eq!(report.steps.len(), 1);
}

#[test]
fn a_bootout_still_in_progress_is_an_error_after_the_bound() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    runner.push_output(CommandOutput::failure(
        37,
        "Bootstrap failed: 37: Operation already in progress",
    ));
    // Every later call (bootout, each print) succeeds: the job never goes away.
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .with_options(fast());
    let err = item.install().unwrap_err();
    assert!(matches!(err, LoginError::StillLoaded { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("gui/501/dev.tidings.Tidings"), "{text}");
    let calls = lines(&runner);
    assert_eq!(calls.len(), 2 + 3, "{calls:?}");
    assert!(calls[2..].iter().all(|c| c.starts_with("launchctl print")));
}

#[test]
fn a_launchctl_failure_names_the_command_and_its_stderr_and_keeps_the_file() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    runner.push_output(CommandOutput::failure(
        125,
        "Bootstrap failed: 125: Domain does not support specified action\n",
    ));
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .with_options(fast());
    let err = item.install().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("`launchctl bootstrap gui/501 "), "{text}");
    assert!(text.contains("exit code 125"), "{text}");
    assert!(
        text.contains("Domain does not support specified action"),
        "{text}"
    );
    assert!(item.plan().agent_plist_path().is_file());
}

#[test]
fn a_missing_launchctl_is_a_spawn_error() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    runner.push_error(std::io::ErrorKind::NotFound);
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService);
    let err = item.restart().unwrap_err();
    assert!(
        matches!(err, LoginError::Command(CommandError::Spawn { ref program, .. }) if program == "launchctl")
    );
}
#[test]
fn keep_running_writes_the_plist_and_touches_no_running_job() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    let options = Options {
        keep_running: true,
        ..fast()
    };
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .with_options(options);
    item.install().unwrap();
    assert!(item.plan().agent_plist_path().is_file());
    item.uninstall().unwrap();
    assert!(!item.plan().agent_plist_path().exists());
    assert!(lines(&runner).is_empty(), "{:?}", lines(&runner));
}
#[test]
fn dry_run_writes_and_runs_nothing_and_shows_every_step() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    let options = Options {
        dry_run: true,
        ..fast()
    };
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .with_options(options);
    let install = item.install().unwrap();
    let uninstall = item.uninstall().unwrap();
    assert!(runner.calls().is_empty());
    assert!(!item.plan().agent_plist_path().exists());
    let path = item.plan().agent_plist_path();
    assert_eq!(
        install.steps,
        [
            Step::Write {
                path: path.clone(),
                text: launchd::agent_plist(&[APP.to_owned()]),
            },
            Step::Run {
                command: format!("launchctl bootstrap gui/501 {}", path.display()),
            },
        ]
    );
    assert_eq!(
        uninstall.steps,
        [
            Step::Run {
                command: "launchctl bootout gui/501/dev.tidings.Tidings".into()
            },
            Step::Run {
                command: "launchctl print gui/501/dev.tidings.Tidings".into()
            },
            Step::Remove { path },
        ]
    );
}
