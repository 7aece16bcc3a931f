//! `tidings` exits with the code of the first error in the chain that has one, and prints the
//! chain once: a settings file it cannot read or parse, or no HOME, is a configuration problem
//! (78), whichever error carries it.

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

use crate::common::{CONFIG, tidings_bin};

/// `tidings serve` on real stores under a temp HOME, with `settings` as settings.toml (`None`:
/// a directory there instead).
fn serve_with_settings(settings: Option<&str>, home: bool) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config");
    std::fs::create_dir(&config).unwrap();
    match settings {
        Some(text) => std::fs::write(config.join("settings.toml"), text).unwrap(),
        None => std::fs::create_dir(config.join("settings.toml")).unwrap(),
    }
    // The socket's directory must be private, or that is the error.
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut command = Command::new(tidings_bin());
    command
        .arg("serve")
        .arg("--socket")
        .arg(run.join("t.sock"))
        .env("TIDINGS_CONFIG_DIR", &config)
        .env_remove("TIDINGS_SOCKET")
        .env("HOME", tmp.path());
    if !home {
        command.env_remove("HOME");
    }
    command.output().unwrap()
}

/// The `tidings: …` lines on stderr.
fn error_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("tidings: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_settings_file_that_does_not_parse_is_a_configuration_error() {
    let out = serve_with_settings(Some("[mail\nenabled = true\n"), true);
    assert_eq!(out.status.code(), Some(CONFIG), "{out:?}");
    let lines = error_lines(&out);
    assert_eq!(lines.len(), 1, "the chain is printed once: {lines:?}");
    assert!(
        lines[0].contains("settings.toml") && lines[0].contains("invalid"),
        "{lines:?}"
    );
}

#[test]
fn a_settings_path_that_is_not_a_file_is_a_configuration_error() {
    // Refused by core's settings reader itself, with no daemon error around it.
    let out = serve_with_settings(None, true);
    assert_eq!(out.status.code(), Some(CONFIG), "{out:?}");
    let lines = error_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("is a directory"), "{lines:?}");
}

#[test]
fn no_home_is_a_configuration_error() {
    let out = serve_with_settings(Some(""), false);
    assert_eq!(out.status.code(), Some(CONFIG), "{out:?}");
    let lines = error_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("HOME is not set"), "{lines:?}");
}
