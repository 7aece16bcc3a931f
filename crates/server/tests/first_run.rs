//! A first run of the real daemon: `tidings serve` on a fresh home writes a commented
//! settings.toml with both types off and says so in one line.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;

use common::{WAIT, signal, tidings_bin};

#[test]
fn a_fresh_home_gets_commented_settings_and_one_line_saying_all_is_off() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let config = tmp.path().join("config");
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut child = Command::new(tidings_bin())
        .arg("serve")
        .arg("--socket")
        .arg(run.join("t.sock"))
        .env("HOME", &home)
        .env("TIDINGS_CONFIG_DIR", &config)
        .env("TIDINGS_DATA_DIR", tmp.path().join("data"))
        .env_remove("TIDINGS_SOCKET")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut lines = Vec::new();
    let found = loop {
        match rx.recv_timeout(WAIT) {
            Ok(line) if line.contains("both off") => break Some(line),
            Ok(line) => lines.push(line),
            Err(_) => break None,
        }
    };
    signal(child.id(), libc::SIGTERM);
    let _ = child.wait();
    let settings_path = config.join("settings.toml");
    let line = found.unwrap_or_else(|| panic!("no all-off line; stderr: {lines:#?}"));
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
