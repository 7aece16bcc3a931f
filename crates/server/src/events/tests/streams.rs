//! `events/stream`: confirmation, delivery, heartbeats, cancellation, caps, gaps, store
//! failures, and settings that end a subscription.

use serde_json::json;

use super::support::{Harness, allow, both_on};

fn mail_args() -> serde_json::Value {
    json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}})
}

const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_confirms_delivers_and_beats() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c.request("events/stream", mail_args()).await;
    let active = c.note(id).await;
    assert_eq!(active["method"], "notifications/events/active");
    assert_eq!(active["params"]["truncated"], false);
    assert!(active["params"]["cursor"].is_string());
    assert_eq!(
        active["params"]["_meta"][SUB_ID],
        json!(id),
        "numeric id stays numeric"
    );
    h.append_mail("ana@example.com");
    let event = c.note_of(id, "notifications/events/event").await;
    assert_eq!(event["params"]["name"], "mail.received");
    assert_eq!(
        event["params"]["data"]["from"]["address"],
        "ana@example.com"
    );
    let event_cursor = event["params"]["cursor"].clone();
    assert!(event_cursor.is_string());
    let beat = c.note_of(id, "notifications/events/heartbeat").await;
    assert!(beat["params"]["cursor"].is_string());
    assert_eq!(h.daemon.state().streams, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_string_id_is_echoed_as_a_string() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let mut params = mail_args();
    params["_meta"] = super::support::meta();
    c.send(json!({"jsonrpc": "2.0", "id": "s1", "method": "events/stream", "params": params}))
        .await;
    let active = c
        .take(|f| f["params"]["_meta"][SUB_ID] == json!("s1"))
        .await;
    assert_eq!(active["method"], "notifications/events/active");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_stream_and_nothing_follows() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c.request("events/stream", mail_args()).await;
    // A control stream on the same store and connection: once it has the new event, the hub
    // has woken every stream on the store, so a live cancelled stream would have sent it too.
    let control = c.request("events/stream", mail_args()).await;
    c.note_of(id, "notifications/events/active").await;
    c.note_of(control, "notifications/events/active").await;
    c.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "done"}}),
    )
    .await;
    h.until("the stream to end", |s| s.streams == 1).await;
    h.append_mail("ana@example.com");
    let event = c.note_of(control, "notifications/events/event").await;
    assert_eq!(
        event["params"]["data"]["from"]["address"],
        "ana@example.com"
    );
    // And a heartbeat after it: the control stream's loop went round again.
    c.note_of(control, "notifications/events/heartbeat").await;
    let after: Vec<_> = c
        .buffered_for(id)
        .into_iter()
        .filter(|f| f["method"] != "notifications/events/heartbeat")
        .collect();
    assert!(after.is_empty(), "frames after cancel: {after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_stream_under_a_live_id_is_refused_and_one_cancel_ends_the_first() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let mut params = mail_args();
    params["_meta"] = super::support::meta();
    let open = json!({"jsonrpc": "2.0", "id": 5, "method": "events/stream", "params": params});
    c.send(open.clone()).await;
    c.note_of(5, "notifications/events/active").await;
    c.send(open.clone()).await;
    let refused = c.response(5).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"field": "id"}),
        "{refused}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("id 5"),
        "{refused}"
    );
    assert_eq!(h.daemon.state().streams, 1, "one stream under id 5");
    // The refusal left the first stream cancellable under its id.
    c.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 5, "reason": "done"}}),
    )
    .await;
    h.until("the stream to end", |s| s.streams == 0).await;
    // Once it has ended, its id is free again.
    c.send(open).await;
    let active = c.note_of(5, "notifications/events/active").await;
    assert_eq!(active["params"]["truncated"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_eleventh_stream_is_refused_with_the_limit() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let mut ids = Vec::new();
    for _ in 0..10 {
        ids.push(c.request("events/stream", mail_args()).await);
    }
    for id in &ids {
        c.note_of(*id, "notifications/events/active").await;
    }
    let e = c.err("events/stream", mail_args()).await;
    assert_eq!(e["code"], -32025);
    assert_eq!(e["data"], json!({"limit": "streams", "max": 10}));
    assert_eq!(h.daemon.state().streams, 10);
    // Another connection has its own ten.
    let mut other = h.connect();
    let id = other.request("events/stream", mail_args()).await;
    other.note_of(id, "notifications/events/active").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_come_before_any_stream_opens() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c.request("events/stream", json!({"name": "nope"})).await;
    let r = c.response(id).await;
    assert_eq!(r["error"]["code"], -32023);
    assert_eq!(r["error"]["data"]["kind"], "event");
    let e = c
        .err(
            "events/stream",
            json!({"name": "mail.received", "arguments": {}}),
        )
        .await;
    assert_eq!(e["data"]["field"], "arguments");
    assert!(c.buffered_for(id).is_empty());
    assert_eq!(h.daemon.state().streams, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebuild_resends_active_truncated_and_delivery_goes_on() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c.request("events/stream", mail_args()).await;
    let first = c.note_of(id, "notifications/events/active").await;
    let mut notices = h.daemon.notices();
    h.rebuild_mail();
    let again = c.note_of(id, "notifications/events/active").await;
    assert_eq!(again["params"]["truncated"], true);
    // The user is told too, once (the first subscription's notice came before this).
    let notice = tokio::time::timeout(std::time::Duration::from_secs(20), notices.recv())
        .await
        .expect("a notice in time")
        .expect("the notices channel is open");
    assert_eq!(
        notice,
        crate::notices::Notice::StoreRebuilt { store: "Mail" }
    );
    assert_ne!(again["params"]["cursor"], first["params"]["cursor"]);
    h.append_mail("ana@example.com");
    let event = c.note_of(id, "notifications/events/event").await;
    assert_eq!(
        event["params"]["data"]["from"]["address"],
        "ana@example.com"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_store_is_an_error_notification_and_the_stream_recovers() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c
        .request(
            "events/stream",
            json!({"name": "messages.received", "arguments": {"from": ["+12025550143"]}}),
        )
        .await;
    c.note_of(id, "notifications/events/active").await;
    let db = h.home.chat_db();
    let aside = db.with_file_name("chat.db.aside");
    std::fs::rename(&db, &aside).unwrap();
    let error = c.note_of(id, "notifications/events/error").await;
    assert_eq!(error["params"]["error"]["code"], -32603);
    assert!(error["params"]["error"]["data"]["reason"].is_string());
    std::fs::rename(&aside, &db).unwrap();
    h.append_message();
    let event = c.note_of(id, "notifications/events/event").await;
    assert_eq!(event["params"]["name"], "messages.received");
    assert_eq!(h.daemon.state().streams, 1, "the stream stayed open");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_opened_on_a_vanished_store_opens_reports_and_recovers() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let db = h.home.chat_db();
    let aside = db.with_file_name("chat.db.aside");
    std::fs::rename(&db, &aside).unwrap();
    let id = c
        .request(
            "events/stream",
            json!({"name": "messages.received", "arguments": {"from": ["+12025550143"]}}),
        )
        .await;
    // Not a refusal: the stream opens on the client's cursor (none here), then says why it
    // cannot deliver yet.
    let active = c.note(id).await;
    assert_eq!(active["method"], "notifications/events/active", "{active}");
    assert_eq!(active["params"]["cursor"], json!(null), "{active}");
    assert_eq!(active["params"]["truncated"], false, "{active}");
    let error = c.note(id).await;
    assert_eq!(error["method"], "notifications/events/error", "{error}");
    assert_eq!(error["params"]["error"]["code"], -32603, "{error}");
    assert_eq!(
        error["params"]["error"]["data"]["reason"], "store_missing",
        "{error}"
    );
    assert_eq!(h.daemon.state().streams, 1);
    std::fs::rename(&aside, &db).unwrap();
    // Once the start is resolved, heartbeats carry the real cursor; only then is a new row
    // after the start (a null cursor starts from the head at that moment).
    loop {
        let beat = c.note_of(id, "notifications/events/heartbeat").await;
        if beat["params"]["cursor"].is_string() {
            break;
        }
        assert_eq!(beat["params"]["cursor"], json!(null), "{beat}");
    }
    h.append_message();
    let event = c.note_of(id, "notifications/events/event").await;
    assert_eq!(event["params"]["name"], "messages.received");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_opened_on_a_vanished_store_keeps_the_clients_cursor_and_signals_a_gap() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let poll = c.ok("events/poll", mail_args()).await;
    let cursor = poll["cursor"].as_str().unwrap().to_owned();
    // The store is rebuilt (a new file identity: the cursor now points at a gap), then goes
    // away before the stream opens.
    h.rebuild_mail();
    let db = h.home.envelope_index();
    let aside = db.with_file_name("Envelope Index.aside");
    std::fs::rename(&db, &aside).unwrap();
    let mut args = mail_args();
    args["cursor"] = json!(cursor);
    let id = c.request("events/stream", args).await;
    let active = c.note(id).await;
    assert_eq!(active["method"], "notifications/events/active", "{active}");
    assert_eq!(active["params"]["cursor"], json!(cursor), "{active}");
    assert_eq!(active["params"]["truncated"], false, "{active}");
    let error = c.note(id).await;
    assert_eq!(error["method"], "notifications/events/error", "{error}");
    let beat = c.note_of(id, "notifications/events/heartbeat").await;
    assert_eq!(
        beat["params"]["cursor"],
        json!(cursor),
        "the client's cursor until resolved"
    );
    std::fs::rename(&aside, &db).unwrap();
    let again = c.note_of(id, "notifications/events/active").await;
    assert_eq!(again["params"]["truncated"], true, "{again}");
    let fresh = again["params"]["cursor"].clone();
    assert!(fresh.is_string() && fresh != json!(cursor), "{again}");
    h.append_mail("ana@example.com");
    let event = c.note_of(id, "notifications/events/event").await;
    assert_eq!(
        event["params"]["data"]["from"]["address"],
        "ana@example.com"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turning_a_type_off_terminates_its_streams_with_not_found() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c.request("events/stream", mail_args()).await;
    c.note_of(id, "notifications/events/active").await;
    h.daemon
        .update_settings(|s| s.mail.enabled = false)
        .unwrap();
    let t = c.note_of(id, "notifications/events/terminated").await;
    assert_eq!(t["params"]["error"]["code"], -32023);
    assert_eq!(t["params"]["error"]["data"], json!({"kind": "event"}));
    let end = c.response(id).await;
    assert_eq!(
        end["result"],
        json!({"resultType": "complete", "_meta": {SUB_ID: id}})
    );
    h.until("the slot to be released", |s| s.streams == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_the_allowlist_under_an_unbounded_stream_is_forbidden() {
    let h = Harness::new(|s| {
        both_on(s);
        allow(s, "example.com");
    })
    .await;
    let mut c = h.connect();
    let bounded = c.request("events/stream", mail_args()).await;
    let open = c
        .request(
            "events/stream",
            json!({"name": "mail.received", "arguments": {}}),
        )
        .await;
    c.note_of(bounded, "notifications/events/active").await;
    c.note_of(open, "notifications/events/active").await;
    h.daemon.update_settings(|s| s.mail.allow.clear()).unwrap();
    let t = c.note_of(open, "notifications/events/terminated").await;
    assert_eq!(t["params"]["error"]["code"], -32024);
    assert_eq!(t["params"]["error"]["data"], json!({"reason": "allowlist"}));
    c.response(open).await;
    // The stream that names its senders goes on.
    c.note_of(bounded, "notifications/events/heartbeat").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_edit_applies_live() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c.request("events/stream", mail_args()).await;
    c.note_of(id, "notifications/events/active").await;
    let mut s = h.daemon.settings();
    s.mail.enabled = false;
    crate::settings_file::save(&s, &h.settings_path).unwrap();
    let t = c.note_of(id, "notifications/events/terminated").await;
    assert_eq!(t["params"]["error"]["code"], -32023);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_is_delivered_whole_and_in_order() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c.request("events/stream", mail_args()).await;
    c.note_of(id, "notifications/events/active").await;
    for _ in 0..50 {
        h.append_mail("ana@example.com");
    }
    let mut subjects = Vec::new();
    for _ in 0..50 {
        let e = c.note_of(id, "notifications/events/event").await;
        subjects.push(e["params"]["data"]["subject"].as_str().unwrap().to_owned());
    }
    let expected: Vec<String> = (1..=50).map(|i| format!("note {i}")).collect();
    assert_eq!(subjects, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cancelled_as_the_first_thing_frees_its_id() {
    let h = Harness::new(both_on).await;
    for round in 0..3 {
        let mut c = h.connect();
        let mut params = mail_args();
        params["_meta"] = super::support::meta();
        let open = json!({"jsonrpc": "2.0", "id": 5, "method": "events/stream", "params": params});
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 5, "reason": "changed my mind"}});
        // The stream opens the lifecycle; its cancel arrives before rmcp has begun it.
        c.send_raw(format!("{open}\n{cancel}\n").as_bytes()).await;
        h.until("the cancelled stream to end", |s| s.streams == 0)
            .await;
        // The id is free again once the cancelled handler is done (until then a reuse is
        // refused, never silently cancelled); it must not stay taken.
        let mut opened = false;
        for _ in 0..200 {
            c.send(open.clone()).await;
            let answer = c
                .take(|f| {
                    (f["id"] == 5 && f.get("method").is_none())
                        || f["method"] == "notifications/events/active"
                })
                .await;
            if answer["method"] == "notifications/events/active" {
                opened = true;
                break;
            }
            assert_eq!(
                answer["error"]["data"]["field"], "id",
                "round {round}: {answer}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(opened, "round {round}: the id stayed taken");
        c.send(cancel).await;
        h.until("the reopened stream to end", |s| s.streams == 0)
            .await;
    }
}
