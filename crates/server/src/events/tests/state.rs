//! The `State` the handler feeds: a client's announced name, its polls counted under one
//! `poll` subscription, its push stream listed while open, and revoke.

use serde_json::json;

use super::support::{Harness, both_on};
use crate::state::Mode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polls_are_counted_under_one_poll_subscription_per_filter() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let args = json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}});
    let first = c.ok("events/poll", args.clone()).await;
    h.append_mail("ana@example.com");
    h.append_mail("bo@example.com");
    let mut next = args.clone();
    next["cursor"] = first["cursor"].clone();
    let second = c.ok("events/poll", next).await;
    assert_eq!(second["events"].as_array().unwrap().len(), 2, "{second}");
    let state = h.daemon.state();
    let client = &state.clients[0];
    assert_eq!(client.name.as_deref(), Some("tidings-tests"));
    assert_eq!(client.subscriptions.len(), 1, "{client:?}");
    let sub = &client.subscriptions[0];
    assert_eq!((sub.mode, sub.delivered), (Mode::Poll, 2), "{sub:?}");
    assert_eq!(sub.filter.get("domains"), Some(&1));
    let senders: Vec<String> = h
        .daemon
        .activity()
        .snapshot()
        .into_iter()
        .map(|d| d.sender)
        .collect();
    assert_eq!(senders, ["ana@example.com", "bo@example.com"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_client_is_refused_until_it_reconnects() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c
        .request(
            "events/stream",
            json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}}),
        )
        .await;
    c.note_of(id, "notifications/events/active").await;
    h.until("the stream listed", |s| {
        s.clients
            .iter()
            .any(|c| c.subscriptions.iter().any(|s| s.mode == Mode::Push))
    })
    .await;
    let client = h.daemon.state().clients[0].id;
    assert!(h.daemon.revoke(client));
    let ended = c.note_of(id, "notifications/events/terminated").await;
    assert_eq!(ended["params"]["error"]["code"], -32024, "{ended}");
    assert_eq!(ended["params"]["error"]["data"]["reason"], "revoked");
    let refused = c.err("events/list", json!({})).await;
    assert_eq!(refused["code"], -32024, "{refused}");
    let refused = c
        .err("events/stream", json!({"name": "mail.received"}))
        .await;
    assert_eq!(refused["code"], -32024, "{refused}");
    let mut fresh = h.connect();
    let list = fresh.ok("events/list", json!({})).await;
    assert!(list["events"].is_array());
    assert!(!h.daemon.revoke(u64::MAX), "an unknown id is no client");
}
