//! Wire faults over the real socket and shim: one-way messages at any point, errors that
//! carry their request's id, and two streams sent back to back under one id.

use crate::common;
use crate::common::{Daemon, is_note, is_response, meta};
use serde_json::{Value, json};

/// A notification, a client response and a cancel of nothing, each valid JSON-RPC.
fn one_way_messages(client: &mut common::Client) {
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    client.send(&json!({"jsonrpc": "2.0", "id": "s-1", "result": {}}));
    client.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 999, "reason": "nothing"}}),
    );
}

#[test]
fn notifications_and_responses_at_any_point_leave_the_connection_up() {
    let daemon = Daemon::start();
    // Right after discover, before any lifecycle.
    let mut client = daemon.client();
    client.result(1, "server/discover", json!({}));
    one_way_messages(&mut client);
    let list = client.result(2, "events/list", json!({}));
    assert!(list["events"].is_array(), "{list}");
    // And once requests have run.
    one_way_messages(&mut client);
    client.result(3, "events/list", json!({}));
    assert!(client.try_exit().is_none(), "the shim exited");

    // As the very first thing on a connection.
    let mut first = daemon.client();
    one_way_messages(&mut first);
    first.result(1, "server/discover", json!({}));
    first.result(2, "events/list", json!({}));
    assert!(first.try_exit().is_none(), "the shim exited");
}

#[test]
fn every_error_carries_the_id_and_a_bad_notification_gets_no_answer() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    client.result(1, "server/discover", json!({}));
    // A notification whose params do not fit: no answer at all.
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": 5}));
    client.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progress": "x"}}),
    );
    // A request rmcp cannot read: its id comes back, with what is wrong.
    let mark = client.mark();
    client.send(&json!({"jsonrpc": "2.0", "id": 8}));
    let e = client.wait_for("the answer to id 8", mark, |f| is_response(f, &json!(8)));
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert_eq!(e["error"]["data"]["field"], "method", "{e}");
    let mark = client.mark();
    client.send(&json!({"jsonrpc": "2.0", "id": "p", "method": "ping", "params": {"_meta": 5}}));
    let e = client.wait_for("the answer to id p", mark, |f| is_response(f, &json!("p")));
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert_eq!(e["error"]["data"]["field"], "params", "{e}");
    // An id that cannot be echoed is null, never missing.
    let mark = client.mark();
    client.send(&json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "events/list"}));
    let e = client.wait_for("the answer to an object id", mark, |f| {
        f.get("error").is_some()
    });
    assert_eq!(e["id"], Value::Null, "{e}");
    assert_eq!(e["error"]["data"]["field"], "id", "{e}");
    client.result(9, "events/list", json!({}));
    for frame in &client.frames {
        if frame.get("error").is_some() {
            assert!(frame.get("id").is_some(), "an error without id: {frame}");
        }
    }
    let unanswered = client
        .frames
        .iter()
        .filter(|f| f.get("error").is_some() && f["id"].is_null())
        .count();
    assert_eq!(
        unanswered, 1,
        "only the object id is answered with null: {:?}",
        client.frames
    );
}

#[test]
fn two_streams_sent_together_under_one_id_open_exactly_one() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    for round in 0..5 {
        let id = json!(format!("dup-{round}"));
        let open = json!({"jsonrpc": "2.0", "id": id, "method": "events/stream",
                          "params": {"name": "mail.received", "arguments": {}, "_meta": meta()}});
        let mark = client.mark();
        client.send_raw(&format!("{open}\n{open}\n"));
        let refused = client.wait_for("the refusal", mark, |f| is_response(f, &id));
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert_eq!(refused["error"]["data"]["field"], "id", "{refused}");
        client.wait_for("active", mark, |f| {
            is_note(f, "notifications/events/active", &id)
        });
        let status = client.result(format!("status-{round}"), "tidings/status", json!({}));
        assert_eq!(status["streams"], 1, "{status}");
        client.cancel(id.clone());
        let mut ended = false;
        for check in 0..200 {
            let status = client.result(format!("s-{round}-{check}"), "tidings/status", json!({}));
            if status["streams"] == 0 {
                ended = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        assert!(ended, "the cancel did not end the stream in round {round}");
    }
}

#[test]
fn a_plain_request_under_a_live_streams_id_is_refused_and_the_stream_still_cancels() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    let id = json!(7);
    client.request(
        7,
        "events/stream",
        json!({"name": "mail.received", "arguments": {}}),
    );
    client.wait_for("active", 0, |f| {
        is_note(f, "notifications/events/active", &id)
    });
    // The same id on a plain request while the stream lives: refused, naming the id.
    let refused = client.error(7, "events/list", json!({}));
    assert_eq!(refused["code"], -32602, "{refused}");
    assert_eq!(refused["data"]["field"], "id", "{refused}");
    // The stream's cancellation is intact: a cancel still ends it.
    client.cancel(id.clone());
    let mut ended = false;
    for check in 0..200 {
        let status = client.result(format!("s-{check}"), "tidings/status", json!({}));
        if status["streams"] == 0 {
            ended = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert!(ended, "the cancel did not end the stream");
}
