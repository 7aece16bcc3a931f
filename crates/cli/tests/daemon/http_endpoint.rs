//! The loopback Streamable HTTP endpoint over real HTTP on 127.0.0.1 (issue #4): routing
//! headers, who may connect, limits, a poll and a stream end to end, disconnects, rotation.

use crate::http_common;
use crate::http_common::{Server, sub, within};
use axum::http::StatusCode;
use serde_json::{Value, json};
use tidings_server::http::token;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const NAME_METHODS: [&str; 4] = [
    "events/poll",
    "events/stream",
    "events/subscribe",
    "events/unsubscribe",
];

fn error_code(body: &Value) -> i64 {
    body["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error in {body}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_or_different_mcp_name_is_400_32020_and_not_served() {
    let s = Server::start(|_| {}).await;
    for (i, method) in NAME_METHODS.into_iter().enumerate() {
        let id = i as u64;
        let missing = s
            .request(id, method, sub("mail.received"))
            .header("mcp-name", None)
            .send()
            .await;
        assert_eq!(missing.status(), StatusCode::BAD_REQUEST, "{method}");
        let body = missing.json().await;
        assert_eq!(error_code(&body), -32020, "{method}: {body}");
        assert_eq!(body["id"], id);
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("missing")
        );

        let different = s
            .request(id, method, sub("mail.received"))
            .header("mcp-name", Some("messages.received"))
            .send()
            .await;
        assert_eq!(different.status(), StatusCode::BAD_REQUEST, "{method}");
        assert_eq!(error_code(&different.json().await), -32020, "{method}");
    }
    // Not served: no stream was ever opened.
    assert_eq!(s.daemon.state().streams, 0);
    // The base64 form of the right name is accepted.
    let encoded = s
        .request(9, "events/poll", sub("mail.received"))
        .header("mcp-name", Some("=?base64?bWFpbC5yZWNlaXZlZA==?="))
        .send()
        .await;
    assert_eq!(encoded.status(), StatusCode::OK);
    assert!(encoded.json().await["result"]["cursor"].is_string());
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_checks_the_other_routing_headers_and_unknown_methods_are_404() {
    let s = Server::start(|_| {}).await;
    let wrong_method = s
        .request(1, "events/list", json!({}))
        .header("mcp-method", Some("events/poll"))
        .send()
        .await;
    assert_eq!(wrong_method.status(), StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&wrong_method.json().await), -32020);
    let no_method = s
        .request(2, "events/list", json!({}))
        .header("mcp-method", None)
        .send()
        .await;
    assert_eq!(no_method.status(), StatusCode::BAD_REQUEST);
    let no_version = s
        .request(3, "events/list", json!({}))
        .header("mcp-protocol-version", None)
        .send()
        .await;
    assert_eq!(no_version.status(), StatusCode::BAD_REQUEST);
    let unknown = s.request(4, "events/nope", json!({})).send().await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    assert_eq!(error_code(&unknown.json().await), -32601);
    let list = s.request(5, "events/list", json!({})).send().await;
    assert_eq!(list.status(), StatusCode::OK);
    assert_eq!(
        list.json().await["result"]["events"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_host_or_a_foreign_origin_is_403() {
    let s = Server::start(|_| {}).await;
    let port = s.addr.port();
    for host in [
        "evil.example".to_owned(),
        format!("evil.example:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
    ] {
        let r = s
            .request(1, "events/list", json!({}))
            .header("host", Some(&host))
            .send()
            .await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{host}");
    }
    for host in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let r = s
            .request(1, "events/list", json!({}))
            .header("host", Some(&host))
            .send()
            .await;
        assert_eq!(r.status(), StatusCode::OK, "{host}");
    }
    let origin = "http://localhost:5173";
    let r = s
        .request(2, "events/list", json!({}))
        .header("origin", Some(origin))
        .send()
        .await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(
        r.json().await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Origin")
    );
    // The allow list applies live.
    s.daemon
        .update_settings(|st| st.http.allowed_origins = vec![origin.to_owned()])
        .unwrap();
    let r = s
        .request(3, "events/list", json!({}))
        .header("origin", Some(origin))
        .send()
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let r = s
        .request(4, "events/list", json!({}))
        .header("origin", Some("https://evil.example"))
        .send()
        .await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_or_wrong_token_is_401_with_a_bearer_challenge() {
    let s = Server::start(|_| {}).await;
    for auth in [None, Some("Bearer not-the-token"), Some("Basic abc")] {
        let r = s
            .request(1, "events/list", json!({}))
            .header("authorization", auth)
            .send()
            .await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{auth:?}");
        assert!(
            r.header("www-authenticate").unwrap().starts_with("Bearer"),
            "{auth:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_over_1_mib_is_413_naming_the_limit() {
    let s = Server::start(|_| {}).await;
    let call = s.request(1, "events/list", json!({"pad": "x".repeat(1024 * 1024)}));
    assert!(call.body.len() > 1024 * 1024);
    let r = call.send().await;
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body = r.json().await;
    assert!(
        body["error"]["message"].as_str().unwrap().contains("1 MiB"),
        "{body}"
    );
    assert_eq!(body["error"]["data"]["max"], 1_048_576);
}

#[tokio::test(flavor = "multi_thread")]
async fn discover_declares_events_under_both_keys() {
    let s = Server::start(|_| {}).await;
    let reply = s.request(1, "server/discover", json!({})).send().await;
    assert_eq!(reply.status(), StatusCode::OK);
    let length: usize = reply.header("content-length").unwrap().parse().unwrap();
    let body = reply.json().await;
    assert_eq!(
        length,
        body.to_string().len(),
        "the length follows the patch"
    );
    let caps = &body["result"]["capabilities"];
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/events"],
        json!({"listChanged": true}),
        "{body}"
    );
    // Clients of the extension's earlier draft (`@ai-sdk/mcp`) look for this key only.
    assert_eq!(caps["events"], json!({"listChanged": true}), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_poll_and_a_stream_work_end_to_end_with_data_frame_heartbeats() {
    let s = Server::start(|_| {}).await;
    let poll = s
        .request(1, "events/poll", sub("mail.received"))
        .send()
        .await;
    assert_eq!(poll.status(), StatusCode::OK);
    let poll = poll.json().await;
    assert_eq!(poll["result"]["resultType"], "complete");
    assert!(poll["result"]["cursor"].is_string(), "{poll}");

    let mut stream = s
        .request(7, "events/stream", sub("mail.received"))
        .send()
        .await;
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(stream.header("content-type").unwrap(), "text/event-stream");
    assert_eq!(stream.header("x-accel-buffering").unwrap(), "no");
    let active = stream.next_event().await.unwrap();
    assert_eq!(active["method"], "notifications/events/active");
    assert_eq!(
        active["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    // The simulator adds a mail every 150 ms; heartbeats come every 200 ms. `next_event`
    // fails on any `:` comment line.
    let event = stream.next_method("notifications/events/event").await;
    assert_eq!(event["params"]["name"], "mail.received");
    let beat = stream.next_method("notifications/events/heartbeat").await;
    assert!(beat["params"]["cursor"].is_string());
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_connection_ends_the_stream_at_once() {
    let s = Server::start(|_| {}).await;
    let mut stream = s
        .request(1, "events/stream", sub("messages.received"))
        .send()
        .await;
    stream.next_method("notifications/events/active").await;
    s.wait_streams(1).await;
    drop(stream);
    s.wait_streams(0).await;
    assert_eq!(s.auth.open_streams(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_per_token_cap_answers_resource_exhausted() {
    let s = Server::start(|l| l.streams_per_token = 2).await;
    let mut open = Vec::new();
    for id in 0..2 {
        let mut stream = s
            .request(id, "events/stream", sub("mail.received"))
            .send()
            .await;
        stream.next_method("notifications/events/active").await;
        open.push(stream);
    }
    let refused = s
        .request(9, "events/stream", sub("mail.received"))
        .send()
        .await;
    assert_eq!(refused.status(), StatusCode::OK);
    assert_eq!(refused.header("content-type").unwrap(), "application/json");
    let body = refused.json().await;
    assert_eq!(error_code(&body), -32025, "{body}");
    assert_eq!(body["error"]["data"], json!({"limit": "streams", "max": 2}));
}

#[tokio::test(flavor = "multi_thread")]
async fn rotating_the_token_ends_old_streams_and_the_new_token_works() {
    let s = Server::start(|_| {}).await;
    let old = s.token();
    let mut stream = s
        .request(3, "events/stream", sub("mail.received"))
        .send()
        .await;
    stream.next_method("notifications/events/active").await;

    // What `tidings token rotate` does: a new token in the keychain, then the socket request.
    let new = token::rotate(&s.keychain).unwrap();
    let answer = http_common::socket_call(&s.daemon, "tidings/token/rotate", json!({})).await;
    assert_eq!(answer["result"]["rotated"], true, "{answer}");
    assert_eq!(answer["result"]["streamsEnded"], 1);

    let ended = stream.next_method("notifications/events/terminated").await;
    assert_eq!(ended["params"]["error"]["code"], -32024);
    assert_eq!(ended["params"]["error"]["data"]["reason"], "token_rotated");
    s.wait_streams(0).await;

    let r = s
        .request(4, "events/list", json!({}))
        .header("authorization", Some(&format!("Bearer {old}")))
        .send()
        .await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(s.token(), new.expose());
    let r = s
        .request(5, "events/poll", sub("mail.received"))
        .send()
        .await;
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_non_loopback_address_is_refused() {
    let s = Server::start(|_| {}).await;
    let err = tidings_server::http::HttpEndpoint::bind(
        &s.daemon,
        tidings_server::http::HttpOptions {
            listen: "0.0.0.0:0".parse().unwrap(),
            auth: tidings_server::http::auth::AuthMode::NoAuth,
        },
    )
    .await
    .err()
    .unwrap();
    assert!(err.to_string().contains("only a loopback address"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_process_wide_cap_is_shared_by_the_socket_and_http() {
    let s = Server::start(|l| l.streams_total = 2).await;
    // One stream on a socket connection…
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let daemon = s.daemon.clone();
    tokio::spawn(async move { daemon.serve_connection(theirs).await });
    let (read, mut write) = tokio::io::split(ours);
    let mut params = sub("mail.received");
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "events/stream", "params": params});
    write
        .write_all(format!("{request}\n").as_bytes())
        .await
        .unwrap();
    let mut lines = BufReader::new(read).lines();
    within(async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("notifications/events/active") {
                return;
            }
        }
        panic!("the socket stream closed before `active`");
    })
    .await;
    // …one over HTTP…
    let mut open = s
        .request(2, "events/stream", sub("messages.received"))
        .send()
        .await;
    open.next_method("notifications/events/active").await;
    // …and the next, on either side, meets the process-wide cap.
    let refused = s
        .request(3, "events/stream", sub("mail.received"))
        .send()
        .await;
    let body = refused.json().await;
    assert_eq!(error_code(&body), -32025, "{body}");
    assert_eq!(body["error"]["data"], json!({"limit": "streams", "max": 2}));
    assert_eq!(s.daemon.state().streams, 2);
}
