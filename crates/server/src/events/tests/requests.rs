//! Request/response methods: discover, list, poll, subscribe, unsubscribe, status, the error
//! codes, and the legacy era.

use serde_json::{Value, json};
use tidings_core::EventType;
use tidings_core::descriptor::payload_schema;

use std::sync::{Arc, Mutex};

use super::support::{Harness, allow, both_on, test_limits};
use crate::demo::{ControlError, DemoControl, Lever};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_declares_the_extension_and_list_has_the_enabled_types() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let d = c.ok("server/discover", json!({})).await;
    assert_eq!(d["resultType"], "complete");
    assert_eq!(
        d["capabilities"]["extensions"]["io.modelcontextprotocol/events"],
        json!({"listChanged": true})
    );
    assert_eq!(
        d["capabilities"]["tools"],
        json!({"listChanged": true}),
        "the pull tools, on every era"
    );
    assert!(
        d["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("untrusted text written by strangers")),
        "{d}"
    );
    let list = c.ok("events/list", json!({})).await;
    assert_eq!(list["resultType"], "complete");
    assert_eq!(
        list["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "tidings"
    );
    let names: Vec<&str> = list["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mail.received", "messages.received"]);
    for e in list["events"].as_array().unwrap() {
        assert_eq!(e["delivery"], json!(["poll", "push", "webhook"]));
        assert!(e["inputSchema"].is_object() && e["payloadSchema"].is_object());
        assert!(e["description"].is_string());
    }
    h.daemon
        .update_settings(|s| s.mail.enabled = false)
        .unwrap();
    let list = c.ok("events/list", json!({})).await;
    assert_eq!(list["events"].as_array().unwrap().len(), 1);
    assert_eq!(list["events"][0]["name"], "messages.received");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poll_bootstraps_then_returns_a_new_row_with_every_field() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let args = json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}});
    let first = c.ok("events/poll", args.clone()).await;
    assert_eq!(first["resultType"], "complete");
    assert_eq!(first["events"], json!([]));
    assert_eq!(first["truncated"], false);
    assert!(first["nextPollMs"].is_u64());
    let cursor = first["cursor"].as_str().unwrap().to_owned();
    h.append_mail("ana@example.com");
    h.append_mail("eve@elsewhere.test");
    let mut next = args.clone();
    next["cursor"] = json!(cursor);
    let second = c.ok("events/poll", next).await;
    let events = second["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "only the matching sender: {second}");
    let e = &events[0];
    assert!(!e["eventId"].as_str().unwrap().is_empty());
    assert_eq!(e["name"], "mail.received");
    assert!(e["timestamp"].as_str().unwrap().contains('T'));
    assert!(e["cursor"].is_string());
    assert_eq!(e["data"]["from"]["address"], "ana@example.com");
    for field in payload_schema(EventType::MailReceived)["required"]
        .as_array()
        .unwrap()
    {
        let field = field.as_str().unwrap();
        assert!(e["data"].get(field).is_some(), "data lacks {field}: {e}");
    }
    assert_eq!(second["hasMore"], false);
    assert_ne!(second["cursor"], json!(cursor));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_the_sep_codes_with_data() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let e = c.err("events/poll", json!({"name": "nope"})).await;
    assert_eq!(e["code"], -32023);
    assert_eq!(e["data"], json!({"kind": "event"}));
    let e = c.err("events/poll", json!({})).await;
    assert_eq!(
        (e["code"].clone(), e["data"]["field"].clone()),
        (json!(-32602), json!("name"))
    );
    let e = c
        .err(
            "events/poll",
            json!({"name": "mail.received", "arguments": {"from": "ana@example.com"}}),
        )
        .await;
    assert_eq!(e["code"], -32602);
    assert_eq!(e["data"]["field"], "arguments.from");
    let e = c
        .err(
            "events/poll",
            json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}, "cursor": "garbage"}),
        )
        .await;
    assert_eq!(e["code"], -32602);
    assert_eq!(e["data"]["field"], "cursor");
    // No allowlist and no sender named: refused.
    let e = c
        .err(
            "events/poll",
            json!({"name": "mail.received", "arguments": {}}),
        )
        .await;
    assert_eq!(e["code"], -32602);
    assert_eq!(e["data"]["field"], "arguments");
    assert!(e["message"].as_str().unwrap().contains("needs a sender"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowlist_lets_an_empty_filter_through() {
    let h = Harness::new(|s| {
        both_on(s);
        allow(s, "example.com");
    })
    .await;
    let mut c = h.connect();
    let r = c
        .ok(
            "events/poll",
            json!({"name": "mail.received", "arguments": {}}),
        )
        .await;
    assert!(r["cursor"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_refusals_come_before_anything_is_posted() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    // Not on the user's list of destinations: Forbidden, naming the fix.
    let hook = json!({"name": "mail.received", "arguments": {"domains": ["example.com"]},
        "delivery": {"mode": "webhook", "url": "https://hooks.example.com/x", "secret": secret}});
    let e = c.err("events/subscribe", hook).await;
    assert_eq!(e["code"], -32024, "{e}");
    assert_eq!(e["data"]["reason"], "destination_not_allowed", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("tidings webhooks allow https://hooks.example.com"),
        "{e}"
    );
    // A bad secret is InvalidParams naming the field, and never echoed.
    let bad = json!({"name": "mail.received", "arguments": {"domains": ["example.com"]},
        "delivery": {"url": "https://hooks.example.com/x", "secret": "whsec_x"}});
    let e = c.err("events/subscribe", bad).await;
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["field"], "delivery.secret", "{e}");
    // An unknown type is NotFound first.
    let e = c
        .err(
            "events/subscribe",
            json!({"name": "nope", "delivery": {"url": "https://hooks.example.com/x", "secret": secret}}),
        )
        .await;
    assert_eq!(e["code"], -32023);
    assert_eq!(e["data"]["kind"], "event");
    let e = c
        .err(
            "events/unsubscribe",
            json!({"name": "mail.received", "delivery": {"url": "https://hooks.example.com/x"}}),
        )
        .await;
    assert_eq!(e["code"], -32023);
    assert_eq!(e["data"], json!({"kind": "subscription"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_store_is_an_internal_error_with_a_reason() {
    let h = Harness::new(both_on).await;
    std::fs::remove_file(h.home.chat_db()).unwrap();
    let _ = std::fs::remove_file(h.home.chat_db().with_file_name("chat.db-wal"));
    let mut c = h.connect();
    let e = c
        .err(
            "events/poll",
            json!({"name": "messages.received", "arguments": {"from": ["+12025550143"]}}),
        )
        .await;
    assert_eq!(e["code"], -32603, "{e}");
    assert_eq!(e["data"]["reason"], "store_missing", "{e}");
    // The path names the user's account on a Mac; the wire message leaves it out, while
    // `tidings status` keeps the full message.
    let home = h.home.root.to_str().unwrap();
    assert!(!e["message"].as_str().unwrap().contains(home), "{e}");
    assert_eq!(e["message"], "Messages store not found", "{e}");
    h.until("the hub to see the store gone", |s| {
        !matches!(
            s.types[1].store.access,
            crate::state::StoreAccess::Ok | crate::state::StoreAccess::NotChecked
        )
    })
    .await;
    assert!(
        h.daemon.state().types[1]
            .store
            .problem
            .clone()
            .unwrap_or_default()
            .contains(home)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_answers_over_the_connection() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let s = c.ok("tidings/status", json!({})).await;
    assert_eq!(s["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(s["connections"], 1);
    assert_eq!(s["types"][0]["name"], "mail.received");
    assert_eq!(s["types"][0]["enabled"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_initialize_connection_gets_method_not_found_for_events() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    c.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}}),
    )
    .await;
    let init = c.response(1).await;
    assert!(init.get("result").is_some(), "{init}");
    // Decision 7: the extension is not defined before 2026-07-28, so it is not advertised.
    assert!(
        init["result"]["capabilities"]["extensions"]
            .get("io.modelcontextprotocol/events")
            .is_none(),
        "initialize advertised the events extension: {init}"
    );
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    for (id, method) in [(2, "events/list"), (3, "events/poll"), (4, "events/stream")] {
        c.send(json!({"jsonrpc": "2.0", "id": id, "method": method,
            "params": {"name": "mail.received", "arguments": {"domains": ["example.com"]}}}))
            .await;
        let r = c.response(id).await;
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("negotiated 2025-11-25 through initialize"),
            "{message}"
        );
    }
    let _: Value = c.ok("tidings/status", json!({})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_declaring_an_older_version_is_told_so_without_initialize() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let mut meta = super::support::meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "events/list",
        "params": {"_meta": meta}}))
        .await;
    let r = c.response(1).await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("declared protocol 2025-11-25"),
        "{message}"
    );
    assert!(
        !message.contains("initialize"),
        "no initialize happened: {message}"
    );
    // The same connection, on 2026-07-28, is served.
    c.ok("events/list", json!({})).await;
}

/// Records which lever was pulled for which type.
#[derive(Default)]
struct RecordingDemo(Mutex<Vec<String>>);

impl DemoControl for RecordingDemo {
    fn yield_error(&self, ty: EventType) -> Result<(), ControlError> {
        self.0.lock().unwrap().push(format!("error {ty}"));
        Ok(())
    }
    fn yield_gap(&self, ty: EventType) -> Result<(), ControlError> {
        self.0.lock().unwrap().push(format!("gap {ty}"));
        Ok(())
    }
    fn terminate(
        &self,
        ty: EventType,
        _settings: Arc<dyn crate::demo::SettingsEditor>,
    ) -> Result<(), ControlError> {
        Err(ControlError::Busy {
            lever: Lever::Terminate,
            ty,
            wait: std::time::Duration::from_secs(1),
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_mode_offers_the_conformance_tools() {
    let demo = Arc::new(RecordingDemo::default());
    let h = Harness::with_demo(both_on, test_limits(), Some(demo.clone())).await;
    let mut c = h.connect();
    let d = c.ok("server/discover", json!({})).await;
    assert!(d["capabilities"]["tools"].is_object(), "{d}");
    let tools = c.ok("tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "tidings_check",
            "tidings_wait",
            "events_conformance_yield_error",
            "events_conformance_yield_gap",
            "events_conformance_terminate",
            "events_conformance_subscribe_as",
            "events_conformance_allow_callback_origin",
            "events_conformance_subscription_exists",
            "events_conformance_subscription_state",
            "events_conformance_webhook_gap",
            "events_conformance_webhook_terminate",
            "events_conformance_restart",
            "events_conformance_generation",
            "events_conformance_quota"
        ]
    );
    let r = c
        .ok(
            "tools/call",
            json!({"name": "events_conformance_yield_gap", "arguments": {"name": "mail.received"}}),
        )
        .await;
    assert_ne!(r["isError"], true, "{r}");
    let r = c
        .ok(
            "tools/call",
            json!({"name": "events_conformance_terminate", "arguments": {"name": "mail.received"}}),
        )
        .await;
    assert_eq!(r["isError"], true, "{r}");
    // The lever's typed error, as text: which lever, which type, what to do.
    let text = r["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("events_conformance_terminate for mail.received is still in progress")
            && text.contains("call it again in 1 s"),
        "{r}"
    );
    let e = c
        .err(
            "tools/call",
            json!({"name": "events_conformance_yield_error", "arguments": {"name": "nope"}}),
        )
        .await;
    assert_eq!(e["code"], -32602);
    assert_eq!(*demo.0.lock().unwrap(), ["gap mail.received"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_demo_mode_there_are_only_the_pull_tools() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let tools = c.ok("tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tidings_check", "tidings_wait"]);
    let e = c
        .err(
            "tools/call",
            json!({"name": "events_conformance_terminate"}),
        )
        .await;
    assert_eq!(e["code"], -32602);
}
