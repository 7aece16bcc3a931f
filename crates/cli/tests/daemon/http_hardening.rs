//! The endpoint against clients that misbehave, over real HTTP on 127.0.0.1 (issue #4's
//! security review): the connection cap and read deadlines, a stop that still delivers each
//! stream's final result and drops what stalls, requests whose token or endpoint went away
//! while their body was read, bodies forwarded as sent, and refusals that are always JSON.

use std::time::Duration;

use crate::http_common;
use crate::http_common::raw::Raw;
use crate::http_common::{Server, sub, within};
use serde_json::{Value, json};

/// An `events/list` request on `s`'s endpoint, its head and body as bytes.
fn list(s: &Server, id: u64) -> (Vec<u8>, Vec<u8>) {
    let call = s.request(id, "events/list", json!({}));
    (call.head(call.body.len(), &[]), call.body.clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn over_the_cap_with_every_place_serving_a_request_the_newcomer_is_closed() {
    let s = Server::start(|l| l.max_http_connections = 2).await;
    // Two streams take both places, each serving its request…
    let streams = [open_stream(&s).await, open_stream(&s).await];
    // …so a third is closed without an answer.
    let mut third = Raw::connect(s.addr).await;
    let (head, body) = list(&s, 1);
    // The server may close it before or after these go.
    let _ = third.try_send(&head).await && third.try_send(&body).await;
    assert!(third.response().await.is_none(), "served over the cap");
    // Once they go, requests are served again (the server notices the close when it reads).
    drop(streams);
    within(async {
        loop {
            let mut conn = Raw::connect(s.addr).await;
            if !(conn.try_send(&head).await && conn.try_send(&body).await) {
                continue;
            }
            if let Some(r) = conn.response().await {
                assert_eq!(r.status, 200, "{}", r.head);
                break;
            }
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn trickled_heads_cannot_keep_an_honest_client_out() {
    // The default header timeout (10 s) outlasts the test: only eviction can make room.
    let s = Server::start(|l| l.max_http_connections = 8).await;
    // A stream holds one place; it is serving a request, so it is never the one closed.
    let mut stream = open_stream(&s).await;
    // Slowloris: more connections than places, each sending a head that never ends.
    let mut trickles = Vec::new();
    for _ in 0..10 {
        let mut conn = Raw::connect(s.addr).await;
        let _ = conn
            .try_send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
            .await;
        trickles.push(conn);
    }
    for conn in &mut trickles {
        let _ = conn.try_send(b"a").await;
    }
    // An honest request is served, more than once.
    for id in 1..=3 {
        let (head, body) = list(&s, id);
        let mut honest = Raw::connect(s.addr).await;
        honest.send(&head).await;
        honest.send(&body).await;
        let r = honest
            .response()
            .await
            .expect("the honest request was refused");
        assert_eq!(r.status, 200, "{}", r.head);
    }
    // The oldest trickling connections were the ones closed.
    for conn in trickles.iter_mut().take(3) {
        conn.closed().await;
    }
    // And the stream lives on.
    stream.next_method("notifications/events/heartbeat").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_absolute_form_target_naming_another_host_is_403() {
    let s = Server::start(|_| {}).await;
    let port = s.addr.port();
    let (head, body) = list(&s, 1);
    let head = String::from_utf8(head).unwrap();
    for target in [
        format!("http://evil.example:{port}/mcp"),
        format!("http://127.0.0.1:{}/mcp", port.wrapping_add(1)),
        format!("http://user@127.0.0.1:{port}/mcp"),
        format!("https://127.0.0.1:{port}/mcp"),
    ] {
        let mut conn = Raw::connect(s.addr).await;
        conn.send(head.replacen("/mcp", &target, 1).as_bytes())
            .await;
        conn.send(&body).await;
        let r = conn.response().await.expect("an answer");
        assert_eq!(r.status, 403, "{target}: {}", r.head);
        assert_eq!(r.json()["error"]["code"], -32600, "{target}");
    }
    // Naming this endpoint is fine.
    let mut conn = Raw::connect(s.addr).await;
    let target = format!("http://127.0.0.1:{port}/mcp");
    conn.send(head.replacen("/mcp", &target, 1).as_bytes())
        .await;
    conn.send(&body).await;
    let r = conn.response().await.expect("an answer");
    assert_eq!(r.status, 200, "{}", r.head);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_finishes_its_headers_is_closed_after_the_header_timeout() {
    let s = Server::start(|l| l.http_header_timeout = Duration::from_millis(200)).await;
    let mut conn = Raw::connect(s.addr).await;
    conn.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await;
    // Closed by the server (any answer it sends first is discarded), within the test's cap.
    conn.closed().await;
    // An idle connection that never sends a byte is closed too.
    let mut idle = Raw::connect(s.addr).await;
    idle.closed().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_stalls_is_408_naming_the_limit() {
    let s = Server::start(|l| l.http_body_timeout = Duration::from_millis(200)).await;
    let (_, body) = list(&s, 1);
    let call = s.request(1, "events/list", json!({}));
    let mut conn = Raw::connect(s.addr).await;
    conn.send(&call.head(body.len() + 100, &[])).await;
    conn.send(&body[..10]).await;
    let r = conn.response().await.expect("an answer");
    assert_eq!(r.status, 408, "{}", r.head);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
    let answer = r.json();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(
        answer["error"]["data"],
        json!({"limit": "request_body_timeout_ms", "max": 200})
    );
}

/// Open a stream with id 7 and see it active.
async fn open_stream(s: &Server) -> http_common::Reply {
    let mut stream = s
        .request(7, "events/stream", sub("mail.received"))
        .send()
        .await;
    stream.next_method("notifications/events/active").await;
    stream
}

/// Every remaining SSE data frame until the body ends; the last one.
async fn last_frame(stream: &mut http_common::Reply) -> Value {
    let mut last = None;
    within(async {
        while let Some(event) = stream.next_event().await {
            last = Some(event);
        }
    })
    .await;
    last.expect("no frame before the end")
}

fn assert_final_result(last: &Value) {
    assert_eq!(last["id"], 7, "{last}");
    assert_eq!(last["result"]["resultType"], "complete", "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn stopping_the_endpoint_still_delivers_each_streams_final_result() {
    let s = Server::start(|_| {}).await;
    let mut stream = open_stream(&s).await;
    s.stop.cancel();
    assert_final_result(&last_frame(&mut stream).await);
    within(s.served).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_daemon_shutdown_still_delivers_each_streams_final_result() {
    let s = Server::start(|_| {}).await;
    let mut stream = open_stream(&s).await;
    s.daemon.shutdown();
    assert_final_result(&last_frame(&mut stream).await);
}

/// Send `s`'s list request's head with `Expect: 100-continue` and wait for the `100
/// Continue`: the guard has admitted the headers and is reading the body.
async fn admitted(s: &Server) -> (Raw, Vec<u8>) {
    let call = s.request(1, "events/list", json!({}));
    let mut conn = Raw::connect(s.addr).await;
    conn.send(&call.head(call.body.len(), &["expect: 100-continue"]))
        .await;
    let interim = conn.response().await.expect("a 100 Continue");
    assert_eq!(interim.status, 100, "{}", interim.head);
    (conn, call.body)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_connection_is_dropped_after_the_stop_grace() {
    let s = Server::start(|l| {
        l.http_stop_grace = Duration::from_millis(200);
        // Longer than the test's cap: only the grace can end this connection.
        l.http_body_timeout = Duration::from_secs(600);
    })
    .await;
    let (mut conn, _body) = admitted(&s).await;
    s.stop.cancel();
    within(s.served).await.unwrap();
    conn.closed().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_finished_after_a_rotation_is_401() {
    let s = Server::start(|_| {}).await;
    let (mut conn, body) = admitted(&s).await;
    let answer = s.rotate().await;
    assert_eq!(answer["result"]["rotated"], true, "{answer}");
    conn.send(&body).await;
    let r = conn.response().await.expect("an answer");
    assert_eq!(r.status, 401, "{}", r.head);
    assert!(r.header("www-authenticate").is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_finished_after_the_endpoint_began_stopping_is_503() {
    let s = Server::start(|_| {}).await;
    let (mut conn, body) = admitted(&s).await;
    s.stop.cancel();
    conn.send(&body).await;
    let r = conn.response().await.expect("an answer");
    assert_eq!(r.status, 503, "{}", r.head);
    assert_eq!(r.json()["error"]["data"]["reason"], "endpoint_stopping");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_in_limit_body_goes_to_rmcp_as_sent() {
    // `1e5` is 3 bytes sent and 8 re-serialised (`100000.0`): a body exactly at the limit
    // would be pushed over it if the guard re-wrote it.
    let pad = vec![json!(1); 100];
    let probe = Server::start(|_| {}).await;
    let mut call = probe.request(1, "events/list", json!({"pad": pad}));
    call.body = String::from_utf8(call.body)
        .unwrap()
        .replace("[1,1", "[1e5,1")
        .replace(",1,", ",1e5,")
        .replace(",1]", ",1e5]")
        .into_bytes();
    let limit = call.body.len();
    drop(probe);
    let s = Server::start(|l| l.max_http_body_bytes = limit).await;
    let mut sent = s.request(1, "events/list", json!({}));
    sent.body = call.body;
    let r = sent.send().await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
    assert!(r.json().await["result"]["events"].is_array());
}

#[tokio::test(flavor = "multi_thread")]
async fn bodies_that_are_not_one_json_object_get_json_rpc_errors() {
    let s = Server::start(|_| {}).await;
    let deep = format!("{{\"a\":{}{}}}", "[".repeat(300), "]".repeat(300));
    let batch = format!("[{}]", String::from_utf8(list(&s, 1).1).unwrap());
    for (body, code) in [
        ("not json".to_owned(), -32700),
        (deep, -32700),
        (batch, -32600),
        ("\"a string\"".to_owned(), -32600),
    ] {
        let mut call = s.request(1, "events/list", json!({}));
        call.body = body.clone().into_bytes();
        let r = call.send().await;
        assert_eq!(r.status(), 400, "{body:.40}");
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("application/json"),
            "{body:.40}"
        );
        assert_eq!(r.json().await["error"]["code"], code, "{body:.40}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn more_than_one_host_header_is_400() {
    let s = Server::start(|_| {}).await;
    let (head, body) = list(&s, 1);
    let host = format!("host: 127.0.0.1:{}", s.addr.port());
    let call = s.request(1, "events/list", json!({}));
    let mut conn = Raw::connect(s.addr).await;
    conn.send(&call.head(body.len(), &[&host])).await;
    conn.send(&body).await;
    let r = conn.response().await.expect("an answer");
    assert_eq!(r.status, 400, "{}", r.head);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("more than one Host")
    );
    // One Host is fine.
    let mut conn = Raw::connect(s.addr).await;
    conn.send(&head).await;
    conn.send(&body).await;
    assert_eq!(conn.response().await.expect("an answer").status, 200);
}
