//! Discover, list, a poll bootstrap, then a poll that returns a newly written matching mail
//! and message with every required field, all through the real `tidings-mcp` shim.

use std::time::{Duration, Instant};

use crate::common;
use crate::common::{Daemon, WAIT, Writer};
use serde_json::{Value, json};

/// Polls from `cursor` until an event with `event_id` shows up; returns it.
fn poll_until(client: &mut common::Client, name: &str, cursor: &str, event_id: &str) -> Value {
    let deadline = Instant::now() + WAIT;
    let mut id = 1000;
    loop {
        id += 1;
        let result = client.result(
            id,
            "events/poll",
            json!({"name": name, "arguments": {}, "cursor": cursor}),
        );
        assert_eq!(result["resultType"], "complete", "{result}");
        assert!(
            result["cursor"].is_string(),
            "every poll carries a cursor: {result}"
        );
        if let Some(event) = result["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["eventId"] == event_id)
        {
            return event.clone();
        }
        assert!(
            Instant::now() < deadline,
            "{name} never returned {event_id}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_occurrence(event: &Value, name: &str, event_id: &str) {
    assert_eq!(event["eventId"], event_id, "{event}");
    assert_eq!(event["name"], name, "{event}");
    let timestamp = event["timestamp"].as_str().expect("timestamp");
    assert!(timestamp.contains('T'), "ISO 8601 with a T: {timestamp}");
    assert!(event["data"].is_object(), "{event}");
    assert!(
        event
            .get("cursor")
            .is_none_or(|c| c.is_string() || c.is_null()),
        "{event}"
    );
}

#[test]
fn discover_list_bootstrap_then_poll_returns_new_mail_and_message() {
    let daemon = Daemon::start();
    let mut client = daemon.client();

    let discover = client.result(1, "server/discover", json!({}));
    assert_eq!(
        discover["capabilities"]["extensions"]["io.modelcontextprotocol/events"]["listChanged"],
        true,
        "{discover}"
    );
    // Clients of the extension's earlier draft look for the top-level key only.
    assert_eq!(
        discover["capabilities"]["events"],
        json!({"listChanged": true}),
        "{discover}"
    );

    let list = client.result(2, "events/list", json!({}));
    assert_eq!(list["resultType"], "complete", "{list}");
    let names: Vec<&str> = list["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"mail.received") && names.contains(&"messages.received"),
        "{list}"
    );
    for descriptor in list["events"].as_array().unwrap() {
        assert_eq!(
            descriptor["delivery"],
            json!(["poll", "push", "webhook"]),
            "{descriptor}"
        );
        assert!(descriptor["description"].is_string(), "{descriptor}");
        assert!(descriptor["inputSchema"].is_object(), "{descriptor}");
        assert!(descriptor["payloadSchema"].is_object(), "{descriptor}");
    }
    // The demo's Mail accounts are the examples of `account`.
    let mail = &list["events"].as_array().unwrap()[0];
    let accounts = &mail["inputSchema"]["properties"]["account"]["examples"];
    assert!(
        accounts
            .as_array()
            .is_some_and(|a| a.contains(&json!("me@example.com"))),
        "{mail}"
    );

    // Bootstrap: no events, a cursor to start from (the demo allowlist bounds the senders).
    let mut cursors = Vec::new();
    for (id, name) in [(3, "mail.received"), (4, "messages.received")] {
        let boot = client.result(
            id,
            "events/poll",
            json!({"name": name, "arguments": {}, "cursor": null}),
        );
        assert_eq!(boot["events"], json!([]), "{boot}");
        assert_eq!(boot["truncated"], false, "{boot}");
        assert!(boot["nextPollMs"].is_number(), "{boot}");
        cursors.push(
            boot["cursor"]
                .as_str()
                .expect("a bootstrap cursor")
                .to_owned(),
        );
    }

    let writer = Writer::new(daemon.home());
    let mail_id = writer.mail("alice@example.com");
    let message_id = writer.message("+12025550142");

    let mail = poll_until(&mut client, "mail.received", &cursors[0], &mail_id);
    assert_occurrence(&mail, "mail.received", &mail_id);
    assert_eq!(
        mail["data"]["from"]["address"], "alice@example.com",
        "{mail}"
    );
    assert_eq!(mail["data"]["subject"], "Test subject", "{mail}");
    assert_eq!(mail["data"]["mailbox"], "INBOX", "{mail}");
    assert!(
        mail["data"]["dateReceived"]
            .as_str()
            .is_some_and(|d| d.contains('T')),
        "{mail}"
    );
    assert_eq!(mail["data"]["messageId"], mail_id.as_str(), "{mail}");

    let message = poll_until(&mut client, "messages.received", &cursors[1], &message_id);
    assert_occurrence(&message, "messages.received", &message_id);
    assert_eq!(message["data"]["guid"], message_id.as_str(), "{message}");
    assert_eq!(
        message["data"]["from"]["handle"], "+12025550142",
        "{message}"
    );
    assert_eq!(message["data"]["from"]["service"], "iMessage", "{message}");
    assert!(
        message["data"]["date"]
            .as_str()
            .is_some_and(|d| d.contains('T')),
        "{message}"
    );
    // The body never leaves the store.
    assert!(
        !message.to_string().contains("hello from the tests"),
        "{message}"
    );
}

#[test]
fn a_sender_outside_the_allowlist_is_never_returned() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    let boot = client.result(
        1,
        "events/poll",
        json!({"name": "mail.received", "arguments": {}}),
    );
    let cursor = boot["cursor"].as_str().unwrap().to_owned();
    let writer = Writer::new(daemon.home());
    let outsider = writer.mail("promo@deals.test");
    let insider = writer.mail("bob@example.org");
    // Once the later, allowed mail is there, the earlier outsider has been passed over.
    let result = {
        let deadline = Instant::now() + WAIT;
        let mut id = 10;
        loop {
            id += 1;
            let r = client.result(
                id,
                "events/poll",
                json!({"name": "mail.received", "arguments": {}, "cursor": cursor}),
            );
            if r["events"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["eventId"] == insider.as_str())
            {
                break r;
            }
            assert!(Instant::now() < deadline, "the allowed mail never came");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    assert!(!result.to_string().contains(&outsider), "{result}");
}
