//! A first run of the real daemon: `tidings serve` on a fresh home writes a commented
//! settings.toml with both types off and says so in one line.

use std::os::unix::fs::PermissionsExt;

use crate::common::Daemon;

#[test]
fn a_fresh_home_gets_commented_settings_and_one_line_saying_all_is_off() {
    let tmp = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let home = tmp.path().join("home");
    let config = tmp.path().join("config");
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut daemon = Daemon::builder()
        .tmp(tmp.clone())
        .without_demo()
        .socket(run.join("t.sock"))
        .env("HOME", &home)
        .env("TIDINGS_CONFIG_DIR", &config)
        .env("TIDINGS_DATA_DIR", tmp.path().join("data"))
        .spawn();
    let line = daemon.wait_stderr("both off");
    daemon.terminate();
    let settings_path = config.join("settings.toml");
    assert_eq!(
        line,
        format!(
            "tidings: mail.received and messages.received are both off; turn them on in the \
             menu bar or set `enabled = true` under [mail] and [messages] in {}",
            settings_path.display()
        )
    );
    let text = std::fs::read_to_string(&settings_path).expect("settings.toml written");
    assert!(text.starts_with("# Tidings settings."), "{text}");
    let settings = tidings_core::Settings::parse(&text, &settings_path).unwrap();
    assert_eq!(settings, tidings_core::Settings::default());
}
