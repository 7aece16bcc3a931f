//! A type turned off in settings.toml under a live stream: `terminated` with `NotFound`, and
//! the type leaves `events/list`; the demo's `events_conformance_terminate` does the same.

use std::time::{Duration, Instant};

use crate::common;
use crate::common::{Daemon, WAIT, is_note};
use serde_json::json;

#[test]
fn turning_a_type_off_terminates_its_streams() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    let (messages, mail) = (json!(1), json!(2));
    client.request(
        1,
        "events/stream",
        json!({"name": "messages.received", "arguments": {}}),
    );
    client.request(
        2,
        "events/stream",
        json!({"name": "mail.received", "arguments": {}}),
    );
    client.wait_for("active on messages", 0, |f| {
        is_note(f, "notifications/events/active", &messages)
    });
    client.wait_for("active on mail", 0, |f| {
        is_note(f, "notifications/events/active", &mail)
    });

    let settings = std::fs::read_to_string(daemon.settings_path()).unwrap();
    let off = settings.replacen(
        "[messages]\nenabled = true",
        "[messages]\nenabled = false",
        1,
    );
    assert_ne!(off, settings, "the demo settings changed shape");
    let mark = client.mark();
    daemon.write_settings(&off);

    let terminated = client.wait_for("terminated on messages", mark, |f| {
        is_note(f, "notifications/events/terminated", &messages)
    });
    assert_eq!(
        terminated["params"]["error"]["code"], -32023,
        "{terminated}"
    );
    assert_eq!(
        terminated["params"]["error"]["data"]["kind"], "event",
        "{terminated}"
    );

    // The mail stream lives on: its next heartbeat comes after the termination.
    let m = client.mark();
    client.wait_for("a mail heartbeat", m, |f| {
        is_note(f, "notifications/events/heartbeat", &mail)
    });
    assert!(
        !client
            .frames
            .iter()
            .any(|f| is_note(f, "notifications/events/terminated", &mail))
    );

    // And the list no longer offers it.
    let deadline = Instant::now() + WAIT;
    let mut id = 10;
    loop {
        id += 1;
        let list = client.result(id, "events/list", json!({}));
        let names: Vec<&str> = list["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["name"].as_str())
            .collect();
        if !names.contains(&"messages.received") {
            assert!(names.contains(&"mail.received"), "{list}");
            break;
        }
        assert!(Instant::now() < deadline, "messages.received still listed");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A poll on the type now says it is off, not unknown, and how to turn it on.
    let error = client.error(
        99,
        "events/poll",
        json!({"name": "messages.received", "arguments": {}}),
    );
    assert_eq!(error["code"], -32023, "{error}");
    assert_eq!(error["data"]["reason"], "disabled", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with("`messages.received` is turned off in Tidings; turn it on")
            && message.contains("`[messages] enabled = true`")
            && message.contains("settings.toml"),
        "{message}"
    );

    // `tidings tail` passes the same words on.
    let out = std::process::Command::new(common::tidings_bin())
        .args([
            "tail",
            "messages.received",
            "--from",
            "+12025550101",
            "--socket",
        ])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is turned off in Tidings") && !stderr.contains("unknown event type"),
        "{stderr}"
    );
}

/// The conformance suite's `stream-terminated-ends-subscription`: the lever turns the type off
/// for a second, which a file write left to the settings watcher (it waits for the file to be
/// still for a second) would never apply. The stream must end with `terminated` all the same.
#[test]
fn the_terminate_control_ends_the_types_streams() {
    let daemon = Daemon::start_with(&["--conformance-controls"]);
    let mut client = daemon.client();
    let mail = json!(1);
    client.request(
        1,
        "events/stream",
        json!({"name": "mail.received", "arguments": {}}),
    );
    client.wait_for("active on mail", 0, |f| {
        is_note(f, "notifications/events/active", &mail)
    });
    let mark = client.mark();
    let lever = client.result(
        2,
        "tools/call",
        json!({"name": "events_conformance_terminate", "arguments": {"name": "mail.received"}}),
    );
    assert_eq!(lever["isError"], false, "{lever}");
    let terminated = client.wait_for("terminated on mail", mark, |f| {
        is_note(f, "notifications/events/terminated", &mail)
    });
    assert_eq!(
        terminated["params"]["error"]["code"], -32023,
        "{terminated}"
    );
    // And the type comes back on: a new stream on it is served again.
    let deadline = Instant::now() + WAIT;
    let mut id = 10;
    loop {
        id += 1;
        let list = client.result(id, "events/list", json!({}));
        if list.to_string().contains("mail.received") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "mail.received never came back: {list}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
