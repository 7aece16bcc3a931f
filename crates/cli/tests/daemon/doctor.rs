//! `tidings doctor` as a person runs it: on a healthy demo every check passes (exit 0); with
//! the daemon stopped and a store broken it fails that store with its fix (exit 3); and
//! `--report` over the fixture stores holds none of their addresses, subjects or handles.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{Daemon, WAIT, tidings_bin};

/// `tidings doctor --demo-dir <dir> <extra>`, with a home of its own (inside `dir`) so the
/// login item and client checks never read this machine's real files.
fn doctor(dir: &Path, extra: &[&str]) -> Output {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    Command::new(tidings_bin())
        .arg("doctor")
        .arg("--demo-dir")
        .arg(dir)
        .args(extra)
        .env_remove("TIDINGS_SOCKET")
        .env_remove("XDG_CONFIG_HOME")
        .env("HOME", &home)
        .output()
        .expect("run tidings doctor")
}

/// Waits until the daemon has checked both stores once: before that, doctor rightly warns
/// "not checked yet".
fn wait_for_store_checks(daemon: &Daemon) {
    let deadline = Instant::now() + WAIT;
    loop {
        let status = daemon
            .socket_call("tidings/status")
            .expect("tidings/status answers");
        let types = status["result"]["types"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !types.is_empty() && types.iter().all(|t| t["store"]["access"] != "not_checked") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "stores still unchecked: {status}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_healthy_demo_passes_every_check() {
    let daemon = Daemon::start();
    wait_for_store_checks(&daemon);
    let out = doctor(&daemon.dir, &[]);
    let stdout = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{:?}", out.stderr);
    for line in [
        "[ok]   daemon",
        "[ok]   socket directory",
        "[ok]   mail store",
        "[ok]   messages store",
        "[ok]   full disk access",
        "[ok]   settings file",
        "[skip] http endpoint",
        "All checks passed.",
    ] {
        assert!(stdout.contains(line), "{line:?} in\n{stdout}");
    }
}

#[test]
fn a_broken_store_without_a_daemon_fails_with_its_fix() {
    let mut daemon = Daemon::start();
    daemon.terminate();
    let chat = daemon.home().chat_db();
    std::fs::write(&chat, b"this is not a database, and not empty either").unwrap();
    let out = doctor(&daemon.dir, &[]);
    let stdout = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("[FAIL] daemon"), "{stdout}");
    assert!(stdout.contains("[FAIL] messages store"), "{stdout}");
    assert!(stdout.contains("corrupt or not a database"), "{stdout}");
    assert!(
        stdout.contains("(checked by this process, not by Tidings)"),
        "{stdout}"
    );
    assert!(stdout.contains("[ok]   mail store"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("checks failed"), "{stderr}");

    // The same as JSON: one object, healthy false, every check named.
    let out = doctor(&daemon.dir, &["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["healthy"], false, "{v}");
    let failed: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outcome"] == "fail")
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["daemon", "messages store"], "{v}");
}

/// Every text value a fixture store holds that names a person or says what they wrote.
pub fn personal_strings(dir: &Path) -> Vec<String> {
    let home = tidings_fixtures::MacHome::new(dir);
    let mut found = Vec::new();
    for (db, queries) in [
        (
            home.envelope_index(),
            &[
                "SELECT address FROM addresses",
                "SELECT comment FROM addresses",
                "SELECT subject FROM subjects",
            ][..],
        ),
        (
            home.chat_db(),
            &[
                "SELECT id FROM handle",
                "SELECT chat_identifier FROM chat",
                "SELECT display_name FROM chat",
            ][..],
        ),
        (
            tidings_fixtures::contacts::root_store(&home),
            &[
                "SELECT ZFIRSTNAME || ' ' || ZLASTNAME FROM ZABCDRECORD",
                "SELECT ZORGANIZATION FROM ZABCDRECORD",
                "SELECT ZNAME FROM ZABCDRECORD",
                "SELECT ZFULLNUMBER FROM ZABCDPHONENUMBER",
                "SELECT ZADDRESS FROM ZABCDEMAILADDRESS",
            ][..],
        ),
    ] {
        let conn = rusqlite::Connection::open(&db).unwrap();
        for sql in queries {
            let mut stmt = conn.prepare(sql).unwrap();
            let rows = stmt
                .query_map([], |r| r.get::<_, Option<String>>(0))
                .unwrap();
            found.extend(rows.flatten().flatten().filter(|s| s.chars().count() >= 5));
        }
    }
    found
}

#[test]
fn the_report_holds_no_personal_data_from_the_stores() {
    let daemon = Daemon::start();
    let out = doctor(&daemon.dir, &["--report"]);
    let stdout = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("\"userVersion\""), "{stdout}");
    assert!(stdout.contains("\"rowsAbout\""), "{stdout}");
    assert!(stdout.contains("\"allowEntries\": 5"), "counts: {stdout}");
    let personal = personal_strings(&daemon.dir);
    assert!(personal.len() > 10, "the fixtures hold data: {personal:?}");
    for value in &personal {
        assert!(
            !stdout.contains(value.as_str()),
            "{value:?} in the report:\n{stdout}"
        );
    }
    // The demo's allowlist values are not in it either.
    assert!(!stdout.contains("example.com"), "{stdout}");
}
