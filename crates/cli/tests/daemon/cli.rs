//! `tidings status` and `tidings tail` against a demo daemon, and without one.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{Daemon, NOT_RUNNING, REFUSED, WAIT, Writer, tidings_bin};

#[test]
fn status_without_a_daemon_fails_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let socket = tmp.path().join("none.sock");
    let out = Command::new(tidings_bin())
        .args(["status", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(NOT_RUNNING), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not running") && stderr.contains(socket.to_str().unwrap()),
        "{stderr}"
    );
}

#[test]
fn status_reports_stores_types_and_counts() {
    let daemon = Daemon::start();
    let out = Command::new(tidings_bin())
        .args(["status", "--socket"])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("is serving on"), "{text}");
    assert!(
        text.contains("mail.received") && text.contains("messages.received"),
        "{text}"
    );

    let out = Command::new(tidings_bin())
        .args(["status", "--json", "--socket"])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["types"].is_array(), "{json}");
}

#[test]
fn tail_prints_events_and_the_resume_cursor() {
    let daemon = Daemon::start();
    let mut tail = Command::new(tidings_bin())
        .args([
            "tail",
            "mail.received",
            "--domains",
            "example.com",
            "--socket",
        ])
        .arg(&daemon.socket)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(tail.stdout.take().unwrap()).lines();
    // Write until tail prints our mail: the stream may open after the first write.
    let writer = Writer::new(daemon.home());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.by_ref() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + WAIT;
    let line = 'found: loop {
        let id = writer.mail("alice@example.com");
        while let Ok(line) = rx.recv_timeout(Duration::from_millis(500)) {
            if line.contains(&id) {
                break 'found line;
            }
        }
        assert!(
            Instant::now() < deadline,
            "tail printed nothing for our mail"
        );
    };
    let event: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(event["name"], "mail.received");
    assert!(event.get("_meta").is_none(), "{event}");

    common::signal(tail.id(), libc::SIGINT);
    let out = tail.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("resume with --cursor v2."), "{stderr}");
}

#[test]
fn tail_of_an_unknown_type_prints_the_error() {
    let daemon = Daemon::start();
    let out = Command::new(tidings_bin())
        .args(["tail", "calendar.changed", "--socket"])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(REFUSED), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("-32023"), "{stderr}");
}
