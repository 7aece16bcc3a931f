//! The daemon killed and restarted on the same data dir: a client resuming from its last
//! cursor gets every event written meanwhile, and none twice.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{Client, Daemon, WAIT, Writer};
use serde_json::json;

/// Polls from `cursor` until `want` events have come (following `hasMore`); returns their
/// ids in order and the last cursor.
fn drain(
    client: &mut Client,
    name: &str,
    cursor: &str,
    want: usize,
    next_id: &mut u64,
) -> (Vec<String>, String) {
    let deadline = Instant::now() + WAIT;
    let mut cursor = cursor.to_owned();
    let mut ids = Vec::new();
    loop {
        *next_id += 1;
        let r = client.result(
            *next_id,
            "events/poll",
            json!({"name": name, "arguments": {}, "cursor": cursor}),
        );
        assert_eq!(
            r["truncated"], false,
            "a resume from a valid cursor is no gap: {r}"
        );
        ids.extend(
            r["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["eventId"].as_str().unwrap().to_owned()),
        );
        r["cursor"].as_str().unwrap().clone_into(&mut cursor);
        if ids.len() >= want && r["hasMore"] != true {
            return (ids, cursor);
        }
        assert!(
            Instant::now() < deadline,
            "{name}: only {} of {want} events: {ids:?}",
            ids.len()
        );
        if r["hasMore"] != true {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn a_client_resumes_after_a_restart_without_loss_or_duplicates() {
    let tmp = Arc::new(tempfile::tempdir().unwrap());
    let mut daemon = Daemon::start_in(Arc::clone(&tmp));
    let writer = Writer::new(daemon.home());
    let mut id = 0;

    let mut client = daemon.client();
    let mut cursors = Vec::new();
    for name in ["mail.received", "messages.received"] {
        id += 1;
        let boot = client.result(id, "events/poll", json!({"name": name, "arguments": {}}));
        cursors.push(boot["cursor"].as_str().unwrap().to_owned());
    }
    // Something delivered before the crash, so the cursor is mid-store.
    let early_mail = writer.mail("alice@example.com");
    let early_message = writer.message("+12025550111");
    let (got, mail_cursor) = drain(&mut client, "mail.received", &cursors[0], 1, &mut id);
    assert_eq!(got, [early_mail]);
    let (got, message_cursor) = drain(&mut client, "messages.received", &cursors[1], 1, &mut id);
    assert_eq!(got, [early_message]);
    drop(client);

    daemon.kill();
    assert!(
        daemon.socket.exists(),
        "a killed daemon leaves its socket behind"
    );
    let mails: Vec<String> = (0..3).map(|_| writer.mail("dave@example.net")).collect();
    let messages: Vec<String> = (0..3).map(|_| writer.message("+12025550199")).collect();

    // Same data dir: the stores are reused, the stale socket replaced.
    let daemon = Daemon::start_in(Arc::clone(&tmp));
    let mut client = daemon.client();
    let (got, _) = drain(
        &mut client,
        "mail.received",
        &mail_cursor,
        mails.len(),
        &mut id,
    );
    assert_eq!(got, mails, "every mail written while down, in order, once");
    let (got, _) = drain(
        &mut client,
        "messages.received",
        &message_cursor,
        messages.len(),
        &mut id,
    );
    assert_eq!(
        got, messages,
        "every message written while down, in order, once"
    );
    let unique: BTreeSet<&String> = got.iter().collect();
    assert_eq!(unique.len(), got.len());

    // A stream resuming from the same cursor replays the same three, then goes live.
    let stream = json!(500);
    client.request(
        500,
        "events/stream",
        json!({"name": "mail.received", "arguments": {}, "cursor": mail_cursor}),
    );
    for mail in &mails {
        client.wait_for("a replayed event", 0, |f| {
            common::is_event(f, &stream, mail)
        });
    }
    let replayed = client
        .frames
        .iter()
        .filter(|f| common::is_note(f, "notifications/events/event", &stream))
        .count();
    assert_eq!(replayed, mails.len(), "no duplicates on the stream");
}
