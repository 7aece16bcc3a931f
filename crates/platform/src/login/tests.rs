//! The login item's files parsed back, and its command sequences through the recording
//! runner, on real files in a temporary home.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::command::{CommandOutput, RecordingRunner};

fn plan(os: Os, home: &Path, exe: &str) -> Plan {
    Plan {
        os,
        exe: PathBuf::from(exe),
        home: home.to_path_buf(),
        uid: 501,
        xdg_config_home: None,
    }
}

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

fn parse_plist(text: &str) -> plist::Dictionary {
    plist::Value::from_reader_xml(text.as_bytes())
        .expect("valid XML plist")
        .into_dictionary()
        .expect("a dictionary at the top")
}

const APP: &str = "/Applications/Tidings.app/Contents/MacOS/tidings-app";

#[test]
fn the_agent_plist_has_every_key_launchd_needs() {
    let dict = parse_plist(&launchd::agent_plist(&[APP.to_owned()]));
    assert_eq!(dict["Label"].as_string(), Some("dev.tidings.Tidings"));
    let args: Vec<_> = dict["ProgramArguments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_string().unwrap())
        .collect();
    assert_eq!(args, [APP]);
    assert_eq!(dict["RunAtLoad"].as_boolean(), Some(true));
    let keep_alive = dict["KeepAlive"].as_dictionary().unwrap();
    assert_eq!(keep_alive["SuccessfulExit"].as_boolean(), Some(false));
    assert_eq!(keep_alive.len(), 1);
    assert_eq!(dict["ThrottleInterval"].as_unsigned_integer(), Some(10));
    assert_eq!(dict["ProcessType"].as_string(), Some("Interactive"));
    assert_eq!(dict["LimitLoadToSessionType"].as_string(), Some("Aqua"));
    let ids = dict["AssociatedBundleIdentifiers"].as_array().unwrap();
    assert_eq!(ids, &[plist::Value::from("dev.tidings.Tidings")]);
    assert!(!dict.contains_key("BundleProgram"));
}

#[test]
fn the_bundled_plist_uses_bundle_program_and_matches_the_committed_file() {
    let text = launchd::bundled_plist();
    let dict = parse_plist(&text);
    assert_eq!(
        dict["BundleProgram"].as_string(),
        Some("Contents/MacOS/tidings-app")
    );
    assert!(!dict.contains_key("ProgramArguments"));
    assert_eq!(
        dict["KeepAlive"].as_dictionary().unwrap()["SuccessfulExit"].as_boolean(),
        Some(false)
    );
    let committed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../src-tauri/macos/LaunchAgents")
        .join(PLIST_NAME);
    if std::env::var_os("TIDINGS_BLESS").is_some() {
        std::fs::create_dir_all(committed.parent().unwrap()).unwrap();
        std::fs::write(&committed, &text).unwrap();
    }
    let on_disk = std::fs::read_to_string(&committed).unwrap_or_default();
    assert_eq!(
        on_disk,
        text,
        "{} differs from the generator; run `TIDINGS_BLESS=1 cargo test -p tidings-platform \
         bundled_plist` and commit it",
        committed.display()
    );
}

#[test]
fn the_plist_name_is_the_label() {
    assert_eq!(PLIST_NAME, format!("{LABEL}.plist"));
}

/// `[section]` → key → values (a key may repeat), ignoring comments and blank lines.
fn parse_ini(text: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
            continue;
        }
        let (key, value) = line.split_once('=').expect("key=value");
        out.push((section.clone(), key.to_owned(), value.to_owned()));
    }
    out
}

fn ini_get<'a>(ini: &'a [(String, String, String)], section: &str, key: &str) -> Vec<&'a str> {
    ini.iter()
        .filter(|(s, k, _)| s == section && k == key)
        .map(|(_, _, v)| v.as_str())
        .collect()
}

#[test]
fn the_unit_restarts_on_failure_and_runs_the_app_in_the_graphical_session() {
    let home = tempfile::tempdir().unwrap();
    let ini = parse_ini(&systemd::unit(&plan(
        Os::Linux,
        home.path(),
        "/opt/tidings/tidings-app",
    )));
    assert_eq!(
        ini_get(&ini, "Service", "ExecStart"),
        ["\"/opt/tidings/tidings-app\""]
    );
    assert_eq!(ini_get(&ini, "Service", "Restart"), ["on-failure"]);
    assert_eq!(ini_get(&ini, "Service", "RestartSec"), ["10"]);
    assert_eq!(ini_get(&ini, "Unit", "After"), ["graphical-session.target"]);
    assert_eq!(
        ini_get(&ini, "Install", "WantedBy"),
        ["graphical-session.target"]
    );
    assert_eq!(ini_get(&ini, "Unit", "Description").len(), 1);
}

#[test]
fn the_unit_for_the_cli_serves_headless_and_quotes_odd_paths() {
    let home = tempfile::tempdir().unwrap();
    let ini = parse_ini(&systemd::unit(&plan(
        Os::Linux,
        home.path(),
        "/my dir/100%/$x/tidings",
    )));
    assert_eq!(
        ini_get(&ini, "Service", "ExecStart"),
        ["\"/my dir/100%%/$$x/tidings\" \"serve\""]
    );
    assert_eq!(ini_get(&ini, "Install", "WantedBy"), ["default.target"]);
    assert!(ini_get(&ini, "Unit", "After").is_empty());
}

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

#[test]
fn command_lines_quote_what_a_shell_would_split() {
    assert_eq!(
        command_line("launchctl", &["bootstrap", "gui/501", "/Users/a b/x.plist"]),
        "launchctl bootstrap gui/501 '/Users/a b/x.plist'"
    );
    assert_eq!(command_line("echo", &["it's"]), r"echo 'it'\''s'");
}
