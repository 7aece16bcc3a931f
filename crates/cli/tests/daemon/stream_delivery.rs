//! A push stream: `active` within 3 s (the conformance suite's bound), `event` frames for rows an outside writer
//! commits into the WAL, heartbeats, and nothing for the stream after `notifications/cancelled`.

use std::time::Duration;

use crate::common::{Daemon, Writer, is_event, is_note, is_response, on_stream};
use serde_json::{Value, json};

/// How soon `active` must arrive: the conformance suite waits 3 s for it (its stream tests,
/// `stream.ts`). A tighter bound would fail on a loaded CI machine without telling us
/// anything the suite would.
const ACTIVE_WITHIN: Duration = Duration::from_secs(3);

#[test]
fn stream_delivers_events_and_heartbeats_and_stops_after_cancel() {
    let daemon = Daemon::start();
    let writer = Writer::new(daemon.home());
    let mut client = daemon.client();
    let (s1, s2) = (json!(1), json!("control"));

    let mark = client.mark();
    client.request(
        1,
        "events/stream",
        json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}}),
    );
    let active = client.wait_for_within("active on stream 1", mark, ACTIVE_WITHIN, |f| {
        is_note(f, "notifications/events/active", &s1)
    });
    assert!(active["params"]["cursor"].is_string(), "{active}");
    assert_eq!(active["params"]["truncated"], false, "{active}");
    // A second stream (string id) to watch the connection after the first is cancelled.
    client.request(
        "control",
        "events/stream",
        json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}}),
    );
    client.wait_for("active on the control stream", mark, |f| {
        is_note(f, "notifications/events/active", &s2)
    });

    // Events: one per matching row, in order, each with its cursor; the subscription id keeps
    // the JSON type of the request id.
    let first = writer.mail("alice@example.com");
    let second = writer.mail("carol@eu.example.com");
    let e1 = client.wait_for("the first event", mark, |f| is_event(f, &s1, &first));
    let e2 = client.wait_for("the second event", mark, |f| is_event(f, &s1, &second));
    for e in [&e1, &e2] {
        let p = &e["params"];
        assert_eq!(p["name"], "mail.received", "{e}");
        assert!(p["timestamp"].as_str().unwrap().contains('T'), "{e}");
        assert!(p["data"].is_object(), "{e}");
        assert!(p["cursor"].is_string(), "{e}");
    }
    let pos = |id: &str| {
        client
            .frames
            .iter()
            .position(|f| is_event(f, &s1, id))
            .unwrap()
    };
    assert!(pos(&first) < pos(&second), "events arrive in commit order");

    // Heartbeats carry a cursor.
    let beat_mark = client.mark();
    for n in 0..2 {
        let from = if n == 0 { beat_mark } else { client.mark() };
        let beat = client.wait_for("a heartbeat", from, |f| {
            is_note(f, "notifications/events/heartbeat", &s1)
        });
        assert!(beat["params"]["cursor"].is_string(), "{beat}");
    }

    // Only notifications/events/* on the streams.
    for frame in client.frames.iter().filter(|f| on_stream(f, &s1)) {
        assert!(
            frame["method"]
                .as_str()
                .unwrap()
                .starts_with("notifications/events/"),
            "{frame}"
        );
    }

    // Cancel stream 1, then a request round trip: anything for stream 1 after that answer
    // would be a frame after the cancel (one already in flight may precede it).
    client.cancel(1);
    let list = client.call(50, "events/list", json!({}));
    let after = client
        .frames
        .iter()
        .position(|f| is_response(f, &json!(50)))
        .unwrap()
        + 1;
    assert!(list.get("result").is_some(), "{list}");

    // New matching rows reach the control stream; wait for them and two more heartbeats.
    let third = writer.mail("alice@example.com");
    client.wait_for("the control stream's event", after, |f| {
        is_event(f, &s2, &third)
    });
    let m = client.mark();
    client.wait_for("a control heartbeat", m, |f| {
        is_note(f, "notifications/events/heartbeat", &s2)
    });
    let m = client.mark();
    client.wait_for("another control heartbeat", m, |f| {
        is_note(f, "notifications/events/heartbeat", &s2)
    });

    let late: Vec<&Value> = client.frames[after..]
        .iter()
        .filter(|f| on_stream(f, &s1) || is_response(f, &s1))
        .collect();
    assert!(
        late.is_empty(),
        "frames for stream 1 after its cancel: {late:?}"
    );
}

#[test]
fn stream_for_messages_delivers_a_new_message() {
    let daemon = Daemon::start();
    let writer = Writer::new(daemon.home());
    let mut client = daemon.client();
    let id = json!(7);
    client.request(
        7,
        "events/stream",
        json!({"name": "messages.received", "arguments": {"from": ["+12025550177"]}}),
    );
    client.wait_for_within("active", 0, ACTIVE_WITHIN, |f| {
        is_note(f, "notifications/events/active", &id)
    });
    let other = writer.message("+12025550142");
    let guid = writer.message("+12025550177");
    let event = client.wait_for("the message event", 0, |f| is_event(f, &id, &guid));
    assert_eq!(
        event["params"]["data"]["from"]["handle"], "+12025550177",
        "{event}"
    );
    assert!(
        !client.frames.iter().any(|f| is_event(f, &id, &other)),
        "the filter was ignored"
    );
}
