//! The `tidings` command line at its edges: a relative `TIDINGS_SOCKET`, a garbage cursor,
//! `--max-age` without a cursor, no keychain, no daemon, the banner, the conformance flag
//! (a non-loopback `--http` is in `http_cli.rs`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::common::{Daemon, NOT_RUNNING, REFUSED, WAIT, Writer, signal, tidings_bin};

#[test]
fn a_relative_tidings_socket_resolves_against_the_working_directory() {
    let daemon = Daemon::start();
    // The daemon's socket is `<tmp>/demo/tidings.sock`; name it relative to `<tmp>`.
    let cwd = daemon.socket.parent().unwrap().parent().unwrap();
    let out = Command::new(tidings_bin())
        .arg("status")
        .env("TIDINGS_SOCKET", "demo/tidings.sock")
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("is serving on"));
}

#[test]
fn a_garbage_cursor_is_refused_and_never_offered_back() {
    let daemon = Daemon::start();
    let out = Command::new(tidings_bin())
        .args(["tail", "mail.received", "--cursor", "garbage", "--socket"])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(REFUSED), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cursor"), "{stderr}");
    assert!(!stderr.contains("resume with"), "{stderr}");
}

#[test]
fn max_age_without_a_cursor_replays_that_stretch() {
    let daemon = Daemon::start();
    // Written before tail starts: a plain fresh start would never show it.
    let id = Writer::new(daemon.home()).mail("maxage@example.com");
    let mut tail = Command::new(tidings_bin())
        .args([
            "tail",
            "mail.received",
            "--from",
            "maxage@example.com",
            "--max-age",
            "1h",
            "--socket",
        ])
        .arg(&daemon.socket)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = tail.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx.recv_timeout(WAIT);
    signal(tail.id(), libc::SIGINT);
    let out = tail.wait_with_output().unwrap();
    let line = line.expect("tail printed the mail written before it started");
    let event: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(event["eventId"], id.as_str(), "{event}");
    // The floor it asked for is not a gap.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("gap in"), "{stderr}");
}

#[test]
fn status_and_tail_survive_a_stdout_that_fails() {
    let daemon = Daemon::start();
    let dev_full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let out = Command::new(tidings_bin())
        .args(["status", "--socket"])
        .arg(&daemon.socket)
        .stdout(dev_full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // A reader that goes away (`| head -1`) and a stderr that fails: no panic (exit 101).
    Writer::new(daemon.home()).mail("pipe@example.com");
    let mut tail = Command::new(tidings_bin())
        .args(["tail", "mail.received", "--max-age", "1h", "--socket"])
        .arg(&daemon.socket)
        .stdout(Stdio::piped())
        .stderr(dev_full())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(tail.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("eventId"), "{first}");
    // stdout is now closed: the next event (or the interrupt) must end tail cleanly.
    Writer::new(daemon.home()).mail("pipe@example.com");
    std::thread::sleep(std::time::Duration::from_millis(300));
    signal(tail.id(), libc::SIGINT);
    let status = tail.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn token_show_without_a_keychain_says_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(tidings_bin())
        .args(["token", "show"])
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unix:path={}", tmp.path().join("no-bus").display()),
        )
        .env("XDG_RUNTIME_DIR", tmp.path())
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unlock it") && stderr.contains("--demo --http 127.0.0.1:3917 --no-auth"),
        "{stderr}"
    );
}

#[test]
fn status_without_a_daemon_names_this_platforms_start_command() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(tidings_bin())
        .args(["status", "--socket"])
        .arg(tmp.path().join("none.sock"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(NOT_RUNNING), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Linux has no Tidings app to start.
    assert!(
        stderr.contains("`tidings serve`") && !stderr.contains("Tidings app"),
        "{stderr}"
    );
}

#[test]
fn the_banner_commands_name_this_binary_by_its_absolute_path() {
    let mut serve = Daemon::start();
    serve.wait_stdout("Stop with Ctrl-C");
    let commands: Vec<String> = serve
        .stdout()
        .lines()
        .filter(|line| {
            line.trim_start()
                .starts_with(tidings_bin().to_str().unwrap())
        })
        .map(|line| line.trim().to_owned())
        .collect();
    assert!(commands.len() >= 3, "{commands:?}");
    assert!(commands.iter().any(|c| c.contains(" status --socket /")));
}

#[test]
fn the_conformance_tools_are_offered_only_when_asked_for() {
    // A plain demo serves the pull tools only.
    let plain = Daemon::start();
    let tools = |daemon: &Daemon| {
        let list = daemon
            .client()
            .result(1, "tools/list", serde_json::json!({}));
        list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(tools(&plain), ["tidings_check", "tidings_wait"]);
    let with = tools(&Daemon::start_with(&["--conformance-controls"]));
    assert_eq!(
        with[..5],
        [
            "tidings_check",
            "tidings_wait",
            "events_conformance_yield_error",
            "events_conformance_yield_gap",
            "events_conformance_terminate"
        ]
    );
    // And the webhook controls.
    assert!(
        with.iter().any(|t| t == "events_conformance_subscribe_as")
            && with.iter().any(|t| t == "events_conformance_restart"),
        "{with:?}"
    );
}
