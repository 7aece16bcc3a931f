//! `SMAppService` (a fake of it) and its fallback to the plist: register, approval, refusal,
//! an older plist replaced, and when a bundle counts as one.

use super::*;
use crate::command::CommandOutput;

#[test]
fn app_service_registers_the_bundled_agent_and_no_plist() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    let service = FakeAppService::new(ServiceState::NotRegistered);
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &service);
    assert_eq!(item.mechanism(), Mechanism::AppService);
    assert_eq!(item.status().state, LoginState::Disabled);
    let report = item.install().unwrap();
    assert_eq!(report.mechanism, Mechanism::AppService);
    assert!(report.notes.is_empty());
    assert_eq!(service.calls(), ["register"]);
    assert!(runner.calls().is_empty());
    assert!(!item.plan().agent_plist_path().exists());
    assert_eq!(item.status().state, LoginState::Enabled);

    runner.push_output(CommandOutput::failure(3, "No such process"));
    item.uninstall().unwrap();
    assert_eq!(service.calls(), ["register", "unregister"]);
    assert_eq!(item.status().state, LoginState::Disabled);
}

#[test]
fn app_service_waiting_for_approval_says_so_and_opens_login_items() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    let service = FakeAppService::new(ServiceState::NotRegistered)
        .after_register(ServiceState::RequiresApproval);
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &service);
    let report = item.install().unwrap();
    assert_eq!(report.notes, [REQUIRES_APPROVAL]);
    let status = item.status();
    assert_eq!(status.state, LoginState::RequiresApproval);
    assert!(status.text.contains("Login Items"), "{}", status.text);
    item.open_login_items().unwrap();
    assert_eq!(
        lines(&runner),
        ["open x-apple.systempreferences:com.apple.LoginItems-Settings.extension"]
    );
}

#[test]
fn app_service_refused_falls_back_to_the_plist() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    let service = FakeAppService::new(ServiceState::NotRegistered).refuse("Invalid signature");
    let item =
        LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &service).with_options(fast());
    let report = item.install().unwrap();
    assert_eq!(report.mechanism, Mechanism::LaunchAgent);
    assert!(
        report.notes[0].contains("Invalid signature"),
        "{:?}",
        report.notes
    );
    assert!(item.plan().agent_plist_path().is_file());
    assert_eq!(lines(&runner).len(), 1, "{:?}", lines(&runner)); // bootstrap
    let status = item.status();
    assert_eq!(
        (status.state, status.mechanism),
        (LoginState::Enabled, Mechanism::LaunchAgent)
    );
}

#[test]
fn app_service_replaces_an_older_fallback_plist() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    // An earlier install from a bare binary.
    LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &NoAppService)
        .install()
        .unwrap();
    let runner = RecordingRunner::new();
    runner
        .push_output(CommandOutput::success()) // bootout
        .push_output(CommandOutput::failure(113, "Could not find service")); // print
    let service = FakeAppService::new(ServiceState::NotRegistered);
    let item =
        LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &service).with_options(fast());
    let report = item.install().unwrap();
    assert!(!item.plan().agent_plist_path().exists());
    assert_eq!(
        lines(&runner),
        [
            "launchctl bootout gui/501/dev.tidings.Tidings",
            "launchctl print gui/501/dev.tidings.Tidings",
        ]
    );
    assert!(
        matches!(report.steps.last(), Some(Step::Run { command }) if command.contains("register()"))
    );
}

#[test]
fn app_service_not_found_means_the_plist() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    let service = FakeAppService::new(ServiceState::NotFound);
    let item = LoginItem::new(plan(Os::MacOs, home.path(), APP), &runner, &service);
    assert_eq!(item.mechanism(), Mechanism::LaunchAgent);
    assert_eq!(
        LoginItem::new(plan(Os::Linux, home.path(), APP), &runner, &service).mechanism(),
        Mechanism::Systemd
    );
}

#[test]
fn a_bundle_is_found_only_with_its_agent_inside() {
    let root = tempfile::tempdir().unwrap();
    let contents = root.path().join("Tidings.app/Contents");
    std::fs::create_dir_all(contents.join("MacOS")).unwrap();
    let exe = contents.join("MacOS/tidings-app");
    let p = Plan {
        exe: exe.clone(),
        ..plan(Os::MacOs, root.path(), "/")
    };
    assert_eq!(p.bundle(), None);
    std::fs::create_dir_all(contents.join("Library/LaunchAgents")).unwrap();
    std::fs::write(
        contents.join(launchd::BUNDLED_PLIST_PATH),
        launchd::bundled_plist(),
    )
    .unwrap();
    assert_eq!(p.bundle(), Some(root.path().join("Tidings.app")));
    let bare = Plan {
        exe: root.path().join("tidings-app"),
        ..p
    };
    assert_eq!(bare.bundle(), None);
}
