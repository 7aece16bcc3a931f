//! systemd through `systemctl --user`, on the recording runner: install and uninstall, no
//! user manager, `keep_running`.

use super::*;
use crate::command::CommandOutput;

#[test]
fn systemd_install_and_uninstall_in_an_xdg_home() {
    let home = tempfile::tempdir().unwrap();
    let xdg = home.path().join("xdg-config");
    let mut p = plan(Os::Linux, home.path(), "/opt/tidings/tidings-app");
    p.xdg_config_home = Some(xdg.clone());
    let unit = xdg.join("systemd/user/tidings.service");

    let runner = RecordingRunner::new();
    let item = LoginItem::new(p.clone(), &runner, &NoAppService).with_options(fast());
    assert_eq!(item.mechanism(), Mechanism::Systemd);
    item.install().unwrap();
    assert_eq!(std::fs::read_to_string(&unit).unwrap(), systemd::unit(&p));
    assert_eq!(
        lines(&runner),
        [
            "systemctl --user daemon-reload",
            "systemctl --user enable --now tidings.service",
        ]
    );

    let runner = RecordingRunner::new();
    runner.push_output(CommandOutput {
        code: Some(0),
        stdout: b"enabled\n".to_vec(),
        stderr: Vec::new(),
    });
    let item = LoginItem::new(p.clone(), &runner, &NoAppService).with_options(fast());
    assert_eq!(item.status().state, LoginState::Enabled);
    item.uninstall().unwrap();
    assert!(!unit.exists());
    assert_eq!(
        lines(&runner),
        [
            "systemctl --user is-enabled tidings.service",
            "systemctl --user disable --now tidings.service",
            "systemctl --user daemon-reload",
        ]
    );
    assert_eq!(item.status().state, LoginState::Disabled);
}

#[test]
fn systemd_without_a_user_manager_fails_naming_the_command() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    runner.push_output(CommandOutput::failure(
        1,
        "Failed to connect to bus: No medium found\n",
    ));
    let item = LoginItem::new(
        plan(Os::Linux, home.path(), "/x/tidings-app"),
        &runner,
        &NoAppService,
    );
    let err = item.install().unwrap_err().to_string();
    assert!(
        err.contains("`systemctl --user daemon-reload` failed (exit code 1)"),
        "{err}"
    );
    assert!(err.contains("Failed to connect to bus"), "{err}");
    // The unit stays written: the next `tidings install` (or a login) picks it up.
    assert!(item.plan().unit_path().is_file());
    // Status says what it could not confirm.
    let runner = RecordingRunner::new();
    runner.push_output(CommandOutput::failure(1, "Failed to connect to bus"));
    let status = LoginItem::new(item.plan().clone(), &runner, &NoAppService).status();
    assert_eq!(status.state, LoginState::Disabled);
    assert!(
        status.text.contains("could not be asked"),
        "{}",
        status.text
    );
}

#[test]
fn systemd_keep_running_enables_without_starting() {
    let home = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::new();
    let options = Options {
        keep_running: true,
        ..fast()
    };
    let item = LoginItem::new(
        plan(Os::Linux, home.path(), "/x/tidings-app"),
        &runner,
        &NoAppService,
    )
    .with_options(options);
    item.install().unwrap();
    item.uninstall().unwrap();
    assert_eq!(
        lines(&runner),
        [
            "systemctl --user daemon-reload",
            "systemctl --user enable tidings.service",
            "systemctl --user disable tidings.service",
            "systemctl --user daemon-reload",
        ]
    );
}
