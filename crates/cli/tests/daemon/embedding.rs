//! The embedding API, driven directly as the menu-bar app drives it: start on demo stores in
//! a temp dir, watch a client connect over the socket and subscribe (the State shows it, the
//! activity log gets its delivery), change settings, revoke the client (its stream ends with
//! `terminated` Forbidden and its next request is refused), then shut down and join (the
//! socket file is gone).

use std::future::Future;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use crate::common::{Client, WAIT, Writer, is_event, is_note, is_response};
use serde_json::{Value, json};
use tidings_fixtures::MacHome;
use tidings_server::engine::{Config, DemoConfig, HttpConfig, RevokeError};
use tidings_server::http::auth::AuthMode;
use tidings_server::state::{Mode, State, Transport};
use tidings_server::{Handle, Tidings};

/// Forbidden (SEP-3415).
const FORBIDDEN: i64 = -32024;

/// Wait (bounded) until the State satisfies `pred`; returns that State.
fn wait_state(
    rt: &tokio::runtime::Runtime,
    handle: &Handle,
    what: &str,
    pred: impl Fn(&State) -> bool,
) -> State {
    let mut rx = handle.state();
    let found = bounded(rt, what, async move {
        rx.wait_for(|s| pred(s)).await.map(|s| s.clone())
    });
    found.unwrap_or_else(|_| panic!("the engine stopped while waiting for {what}"))
}

fn bounded<T>(rt: &tokio::runtime::Runtime, what: &str, f: impl Future<Output = T>) -> T {
    rt.block_on(async { tokio::time::timeout(WAIT, f).await })
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// The engine on fresh demo stores in `tmp`, with no keychain (HTTP stays off).
fn start(rt: &tokio::runtime::Runtime, tmp: &std::path::Path) -> Handle {
    let mut config = Config::demo(DemoConfig {
        data_dir: Some(tmp.join("demo")),
        simulate: None,
        conformance_controls: false,
    });
    config.http = HttpConfig {
        forced: None,
        auth: Arc::new(|| Ok(AuthMode::NoAuth)),
    };
    let _in_runtime = rt.enter();
    Tidings::start(config).expect("the engine starts on demo stores")
}

#[test]
fn the_app_starts_watches_changes_revokes_and_stops_the_engine() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .unwrap();
    let handle = start(&rt, tmp.path());
    let socket = handle.socket_path().to_owned();
    assert!(socket.starts_with(tmp.path()), "{}", socket.display());
    assert!(
        handle.first_run(),
        "a fresh demo dir has no settings file yet"
    );
    let first = handle.state().borrow().clone();
    assert_eq!(first.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(first.types.len(), 2);
    assert_eq!(first.types[0].allowlist.domains, 3, "{first:?}");
    assert!(first.clients.is_empty(), "{first:?}");

    let mut client = Client::connect(&socket);
    let me = subscribe_and_receive(&rt, &handle, &mut client, &tmp.path().join("demo"));
    change_settings(&rt, &handle, &mut client);
    hand_edit_is_seen(&rt, &handle);
    revoke(&rt, &handle, &mut client, me);

    // A new connection is a new client, served again.
    let mut again = Client::connect(&socket);
    let list: Value = again.result(1, "events/list", json!({}));
    assert!(list["events"].is_array(), "{list}");

    // Shutdown and join: the socket file is gone once join returns.
    handle.shutdown();
    bounded(&rt, "join", handle.join()).expect("a clean stop");
    assert!(!socket.exists(), "the socket file is removed");
    drop(client);
    drop(again);
}

/// A hand edit of the file that swaps one allowlist entry for another leaves the State's
/// counts as they were; the app hears of it through `settings_changes`.
fn hand_edit_is_seen(rt: &tokio::runtime::Runtime, handle: &Handle) {
    let mut changes = handle.settings_changes();
    changes.borrow_and_update();
    let text = std::fs::read_to_string(handle.settings_path()).unwrap();
    assert!(text.contains("\"example.net\""), "{text}");
    std::fs::write(
        handle.settings_path(),
        text.replacen("\"example.net\"", "\"example.info\"", 1),
    )
    .unwrap();
    let seen = bounded(rt, "the hand edit in settings_changes", async move {
        changes
            .wait_for(|s| s.mail.allow.iter().any(|e| e.to_string() == "example.info"))
            .await
            .is_ok()
    });
    assert!(seen, "the engine stopped first");
    assert_eq!(
        handle.state().borrow().types[0].allowlist.domains,
        3,
        "counts unchanged"
    );
}

/// The client opens a push stream (the State shows it) and gets one event (counted in the
/// State, named with its sender only in the activity log). Returns the client's id.
fn subscribe_and_receive(
    rt: &tokio::runtime::Runtime,
    handle: &Handle,
    client: &mut Client,
    data_dir: &std::path::Path,
) -> u64 {
    let sub = json!(1);
    let mark = client.mark();
    client.request(
        1,
        "events/stream",
        json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}}),
    );
    client.wait_for("active", mark, |f| {
        is_note(f, "notifications/events/active", &sub)
    });
    let state = wait_state(rt, handle, "the client and its stream", |s| {
        s.clients.iter().any(|c| {
            c.name.as_deref() == Some("tidings-tests")
                && c.subscriptions.iter().any(|sub| sub.mode == Mode::Push)
        })
    });
    let me = state
        .clients
        .iter()
        .find(|c| c.name.as_deref() == Some("tidings-tests"))
        .unwrap()
        .clone();
    assert_eq!(me.transport, Transport::Socket);
    assert!(me.pid.is_some(), "the shim's pid is known: {me:?}");
    let stream = &me.subscriptions[0];
    assert_eq!(stream.event_type, "mail.received");
    assert_eq!(stream.filter.get("domains"), Some(&1), "counts, not values");
    assert_eq!(stream.delivered, 0);

    let writer = Writer::new(MacHome::new(data_dir));
    let mut activity = handle.activity().subscribe();
    let event_id = writer.mail("alice@example.com");
    client.wait_for("the event", mark, |f| is_event(f, &sub, &event_id));
    let state = wait_state(rt, handle, "the delivery count", |s| {
        s.clients
            .iter()
            .flat_map(|c| &c.subscriptions)
            .any(|sub| sub.delivered == 1 && sub.last_delivery_ms.is_some())
    });
    let shown = serde_json::to_string(&state).unwrap();
    assert!(!shown.contains("alice"), "no sender in the State: {shown}");
    bounded(rt, "the activity log", async {
        activity
            .wait_for(|_| !handle.activity().snapshot().is_empty())
            .await
            .map(|_| ())
    })
    .unwrap();
    let log = handle.activity().snapshot();
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0].sender, "alice@example.com");
    assert_eq!(log[0].event_type, "mail.received");
    assert_eq!(log[0].client_id, me.id);
    assert_eq!(log[0].client_name.as_deref(), Some("tidings-tests"));
    handle.activity().clear();
    assert!(handle.activity().snapshot().is_empty());
    me.id
}

/// A settings change through the handle: written to the file, applied live, shown in the
/// State and in `tidings/status` (which is the State).
fn change_settings(rt: &tokio::runtime::Runtime, handle: &Handle, client: &mut Client) {
    handle
        .update_settings(|s| s.messages.enabled = false)
        .expect("a valid change saves");
    assert!(!handle.settings().messages.enabled);
    let on_disk = tidings_core::Settings::load(handle.settings_path()).expect("saved valid");
    assert!(
        !on_disk.messages.enabled && on_disk.mail.enabled,
        "written to the file: {on_disk:?}"
    );
    wait_state(rt, handle, "messages off in the State", |s| {
        !s.types[1].enabled && s.types[0].enabled
    });
    let mut status = client.result(2, "tidings/status", json!({}));
    assert_eq!(status["types"][1]["enabled"], false, "{status}");
    if let Value::Object(m) = &mut status {
        m.remove("resultType");
        m.remove("_meta");
    }
    let status: State = serde_json::from_value(status).expect("tidings/status is the State");
    assert_eq!(status.clients.len(), 1);
}

/// Revoke: the stream ends with terminated Forbidden, the next request is refused.
fn revoke(rt: &tokio::runtime::Runtime, handle: &Handle, client: &mut Client, id: u64) {
    let sub = json!(1);
    assert_eq!(
        handle.revoke(u64::MAX),
        Err(RevokeError::UnknownClient { id: u64::MAX })
    );
    // A `tidings_wait` in flight (it holds a stream place, so the State shows two) must end
    // at the revoke too, not at its timeout.
    client.request(
        7,
        "tools/call",
        json!({"name": "tidings_wait", "arguments": {"events": ["mail.received"], "timeout_s": 40}}),
    );
    wait_state(rt, handle, "the wait holding a place", |s| s.streams == 2);
    let mark = client.mark();
    handle.revoke(id).expect("the client is connected");
    let ended = client.wait_for("terminated", mark, |f| {
        is_note(f, "notifications/events/terminated", &sub)
    });
    let waited = client.wait_for("the wait's answer", mark, |f| is_response(f, &json!(7)));
    assert_eq!(waited["result"]["isError"], true, "{waited}");
    assert!(
        waited["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("revoked")),
        "{waited}"
    );
    assert_eq!(ended["params"]["error"]["code"], FORBIDDEN, "{ended}");
    assert_eq!(
        ended["params"]["error"]["data"]["reason"], "revoked",
        "{ended}"
    );
    client.wait_for("the stream's final result", mark, |f| is_response(f, &sub));
    let refused = client.error(3, "events/list", json!({}));
    assert_eq!(refused["code"], FORBIDDEN, "{refused}");
    wait_state(
        rt,
        handle,
        "the client shown revoked, its stream gone",
        |s| {
            s.clients
                .iter()
                .any(|c| c.id == id && c.revoked && c.subscriptions.is_empty())
        },
    );
}
