//! The connection around the handler: the frame limit, parse errors, clients that vanish,
//! `subscriptions/listen` with `list_changed`, and settings files that go bad.

use serde_json::json;
use tidings_core::{Limits, StorePaths};

use super::support::{Harness, both_on, test_limits};
use crate::daemon::{Daemon, DaemonConfig, DaemonError};
use crate::limits::ServerLimits;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_frame_is_answered_and_the_connection_stays_up() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let max = ServerLimits::default().max_frame_bytes;
    let mut line = r#"{"jsonrpc":"2.0","id":99,"method":"events/list","params":{"pad":""#
        .as_bytes()
        .to_vec();
    line.resize(max + 1 - 2, b'x');
    line.extend_from_slice(b"\"}");
    assert_eq!(line.len(), max + 1);
    line.push(b'\n');
    c.send_raw(&line).await;
    // The id is found in the head of the discarded line and echoed.
    let e = c.take(|f| f["id"] == 99).await;
    assert_eq!(e["error"]["code"], -32600);
    assert_eq!(
        e["error"]["message"],
        "frame of 1048577 bytes exceeds the 1 MiB limit (1048576 bytes)"
    );
    let list = c.ok("events/list", json!({})).await;
    assert_eq!(list["events"].as_array().unwrap().len(), 2);
    // A string id after a nested `id` that is not the request's, and a line with no id.
    let mut line = br#"{"params":{"id":1},"id":"big","pad":""#.to_vec();
    line.resize(max + 10, b'x');
    line.extend_from_slice(b"\"}\n");
    c.send_raw(&line).await;
    let e = c.take(|f| f["id"] == "big").await;
    assert_eq!(e["error"]["code"], -32600);
    let mut line = br#"{"jsonrpc":"2.0","pad":""#.to_vec();
    line.resize(max + 10, b'x');
    line.extend_from_slice(b"\"}\n");
    c.send_raw(&line).await;
    let e = c.take(|f| f["id"].is_null()).await;
    assert_eq!(e["error"]["code"], -32600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn params_that_are_not_an_object_are_refused_with_the_request_id() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    for (id, params) in [
        (json!(7), json!("mail.received")),
        (json!("arr"), json!([1, 2])),
    ] {
        c.send(json!({"jsonrpc": "2.0", "id": id, "method": "events/poll", "params": params}))
            .await;
        let e = c.take(|f| f["id"] == id).await;
        assert_eq!(e["error"]["code"], -32602, "{e}");
        assert_eq!(e["error"]["data"], json!({"field": "params"}), "{e}");
    }
    c.ok("events/list", json!({})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_is_not_json_gets_a_parse_error() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    c.send_raw(b"{this is not json\n").await;
    let e = c.take(|f| f["id"].is_null()).await;
    assert_eq!(e["error"]["code"], -32700);
    c.ok("events/list", json!({})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_mid_stream_releases_its_streams() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let args = json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}});
    let a = c.request("events/stream", args.clone()).await;
    let b = c.request("events/stream", args).await;
    c.note_of(a, "notifications/events/active").await;
    c.note_of(b, "notifications/events/active").await;
    assert_eq!(h.daemon.state().streams, 2);
    c.close();
    h.until("streams to be released", |s| {
        s.streams == 0 && s.connections == 0
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_that_opted_in_hears_list_changed() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c
        .request(
            "subscriptions/listen",
            json!({"notifications": {"eventsListChanged": true, "toolsListChanged": true}}),
        )
        .await;
    let ack = c.note(id).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"eventsListChanged": true, "toolsListChanged": true}),
        "both list changes are honoured"
    );
    let quiet = c
        .request("subscriptions/listen", json!({"notifications": {}}))
        .await;
    let ack = c.note(quiet).await;
    assert_eq!(ack["params"]["notifications"], json!({}));
    // An allowlist changes mail's input schema: a descriptor change.
    h.daemon
        .update_settings(|s| super::support::allow(s, "example.com"))
        .unwrap();
    let n = c.note(id).await;
    assert_eq!(n["method"], "notifications/events/list_changed");
    let n = c.note(id).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    h.daemon
        .update_settings(|s| s.messages.enabled = false)
        .unwrap();
    let n = c.note(id).await;
    assert_eq!(n["method"], "notifications/events/list_changed");
    let n = c.note(id).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    c.ok("events/list", json!({})).await;
    assert!(
        c.buffered_for(quiet).is_empty(),
        "no list_changed without opting in"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_settings_edit_keeps_the_last_good_settings() {
    let h = Harness::new(both_on).await;
    std::fs::write(&h.settings_path, "[mail]\nenabled = maybe\n").unwrap();
    h.until_daemon("the bad edit to be read", |d| {
        d.watch_counts()
            .rejected
            .load(std::sync::atomic::Ordering::Acquire)
            >= 1
    })
    .await;
    assert!(
        h.daemon.settings().mail.enabled,
        "a bad edit changes nothing"
    );
    assert!(h.daemon.settings().messages.enabled);
    // A good edit after it still applies.
    let mut good = h.daemon.settings();
    good.messages.enabled = false;
    crate::settings_file::save(&good, &h.settings_path).unwrap();
    h.until_daemon("the good edit to apply", |d| !d.settings().messages.enabled)
        .await;
    assert!(h.daemon.settings().mail.enabled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_refuses_malformed_settings_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.toml");
    std::fs::write(&path, "[mail]\nenabled = true\nallow = [\"example.com\"\n").unwrap();
    let err = Daemon::start(DaemonConfig {
        store_paths: StorePaths::for_home(dir.path()),
        contacts: crate::daemon::ContactsSource::for_home(
            dir.path(),
            tidings_core::contacts::Region::parse("US").unwrap(),
        ),
        settings_path: path,
        engine_limits: Limits::default(),
        limits: test_limits(),
        demo: None,
    })
    .err()
    .expect("malformed settings refuse to start");
    assert!(matches!(err, DaemonError::Settings(_)));
    assert!(err.to_string().contains("line"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_requests_count_under_the_stream_caps() {
    let h = Harness::new(both_on).await;
    let mut c = h.connect();
    let mut ids = Vec::new();
    for _ in 0..10 {
        ids.push(
            c.request(
                "subscriptions/listen",
                json!({"notifications": {"eventsListChanged": true}}),
            )
            .await,
        );
    }
    for id in &ids {
        c.note_of(*id, "notifications/subscriptions/acknowledged")
            .await;
    }
    assert_eq!(h.daemon.state().streams, 10);
    // Listens and push streams share the ten places of a connection.
    let e = c
        .err(
            "subscriptions/listen",
            json!({"notifications": {"eventsListChanged": true}}),
        )
        .await;
    assert_eq!(e["code"], -32025);
    assert_eq!(e["data"], json!({"limit": "streams", "max": 10}));
    let e = c
        .err(
            "events/stream",
            json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}}),
        )
        .await;
    assert_eq!(e["code"], -32025);
}

/// A line-oriented client on a real Unix socket.
struct SocketClient {
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::net::unix::OwnedReadHalf>>,
    write: tokio::net::unix::OwnedWriteHalf,
}

impl SocketClient {
    async fn connect(path: &std::path::Path) -> SocketClient {
        use tokio::io::AsyncBufReadExt;
        let (read, write) = tokio::net::UnixStream::connect(path)
            .await
            .unwrap()
            .into_split();
        SocketClient {
            lines: tokio::io::BufReader::new(read).lines(),
            write,
        }
    }

    async fn send(&mut self, id: i64, method: &str, mut params: serde_json::Value) {
        use tokio::io::AsyncWriteExt;
        params["_meta"] = super::support::meta();
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    /// The next line, None at EOF; capped.
    async fn next(&mut self) -> Option<serde_json::Value> {
        let line = tokio::time::timeout(std::time::Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("timed out waiting on the socket")
            .ok()
            .flatten()?;
        Some(serde_json::from_str(&line).unwrap())
    }

    /// Read until a frame matches `pred`.
    async fn until(&mut self, pred: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        loop {
            let frame = self.next().await.expect("connection closed");
            if pred(&frame) {
                return frame;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_socket_evicts_the_longest_idle_connection_without_a_stream() {
    use std::os::unix::fs::PermissionsExt;
    let limits = ServerLimits {
        max_socket_connections: 4,
        ..test_limits()
    };
    let h = Harness::with_demo(both_on, limits, None).await;
    let dir = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .unwrap();
    let path = dir.path().join("tidings.sock");
    let listener = crate::socket::SocketListener::bind(&path).unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let serving = {
        let daemon = h.daemon.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            listener.serve(&daemon, stop.cancelled_owned()).await;
        })
    };
    // One connection holds a stream; it is never the one closed.
    let mut holder = SocketClient::connect(&path).await;
    holder
        .send(
            1,
            "events/stream",
            json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}}),
        )
        .await;
    holder
        .until(|f| f["method"] == "notifications/events/active")
        .await;
    // Idle ones, each answered once so they are served in this order.
    let mut idle = Vec::new();
    for i in 0..5 {
        let mut c = SocketClient::connect(&path).await;
        c.send(i, "server/discover", json!({})).await;
        c.until(|f| f["id"] == i).await;
        idle.push(c);
    }
    // An honest client still gets in and is answered.
    let mut honest = SocketClient::connect(&path).await;
    honest.send(7, "events/list", json!({})).await;
    let list = honest.until(|f| f["id"] == 7).await;
    assert!(list["result"]["events"].is_array(), "{list}");
    // The three idle longest were closed, oldest first; the stream holder was not.
    for (i, c) in idle.iter_mut().enumerate().take(3) {
        assert!(
            c.next().await.is_none(),
            "idle connection {i} was not closed"
        );
    }
    holder
        .until(|f| f["method"] == "notifications/events/heartbeat")
        .await;
    assert!(h.daemon.state().connections <= 4, "{:?}", h.daemon.state());
    stop.cancel();
    let _ = serving.await;
}
