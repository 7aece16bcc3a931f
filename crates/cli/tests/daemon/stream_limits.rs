//! Ten streams on one connection work; the eleventh gets `ResourceExhausted` (-32025) with
//! `data.limit: "streams"` and `data.max: 10`.

use crate::common::{Daemon, is_note, is_response};
use serde_json::json;

#[test]
fn the_eleventh_stream_on_a_connection_is_refused() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    for id in 1..=10 {
        client.request(
            id,
            "events/stream",
            json!({"name": "mail.received", "arguments": {}}),
        );
    }
    for id in 1..=10 {
        let id = json!(id);
        client.wait_for(&format!("active on stream {id}"), 0, |f| {
            is_note(f, "notifications/events/active", &id)
        });
    }
    let error = client.error(
        11,
        "events/stream",
        json!({"name": "messages.received", "arguments": {}}),
    );
    assert_eq!(error["code"], -32025, "{error}");
    assert_eq!(error["data"]["limit"], "streams", "{error}");
    assert_eq!(error["data"]["max"], 10, "{error}");

    // The ten are still open: none got a response (a response ends a stream).
    for id in 1..=10 {
        assert!(
            !client.frames.iter().any(|f| is_response(f, &json!(id))),
            "stream {id} ended"
        );
    }
    // Requests other than streams are not capped.
    let list = client.result(12, "events/list", json!({}));
    assert!(list["events"].is_array());
}
