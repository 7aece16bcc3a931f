//! A stranger's row with a value that is not what its column promises (invalid UTF-8, a date
//! of `1e300`) neither fails the poll nor stops later events, through the real daemon and shim
//! (issue 8.2).

use std::time::{Duration, Instant};

use crate::common::{Daemon, WAIT, Writer};
use serde_json::{Value, json};
use tidings_fixtures::MessagesFixture;

#[test]
fn a_bad_row_is_delivered_leniently_and_later_messages_still_arrive() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    let boot = client.result(
        1,
        "events/poll",
        json!({"name": "messages.received", "arguments": {}, "cursor": null}),
    );
    let cursor = boot["cursor"].as_str().unwrap().to_owned();

    let writer = Writer::new(daemon.home());
    let bad = writer.message("+12025550142");
    let db = MessagesFixture::open(&daemon.home()).unwrap();
    let changed = db
        .connection()
        .execute(
            "UPDATE message SET guid = CAST(X'4241440AFF' AS TEXT), date = 1e300 WHERE guid = ?1",
            [&bad],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);
    let good = writer.message("+12025550142");

    let deadline = Instant::now() + WAIT;
    let mut events: Vec<Value> = Vec::new();
    let mut cursor = cursor;
    let mut id = 10;
    while !events.iter().any(|e| e["eventId"] == good.as_str()) {
        assert!(
            Instant::now() < deadline,
            "never delivered {good}: {events:?}"
        );
        id += 1;
        let result = client.result(
            id,
            "events/poll",
            json!({"name": "messages.received", "arguments": {}, "cursor": cursor}),
        );
        events.extend(result["events"].as_array().unwrap().iter().cloned());
        cursor = result["cursor"].as_str().unwrap().to_owned();
        if events.is_empty() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let first = &events[0];
    assert_eq!(first["eventId"], "BAD \u{FFFD}", "{first}");
    assert_eq!(first["data"]["date"], Value::Null, "{first}");
    assert_eq!(events.len(), 2, "{events:?}");
}
