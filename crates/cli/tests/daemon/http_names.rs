//! Over HTTP, the name a request lacks and what a legacy `initialize` client meets: the same
//! errors the socket gives (issue 7 item 9).

use crate::http_common::{Server, socket_call};
use axum::http::StatusCode;
use serde_json::{Value, json};

const NAME_METHODS: [&str; 4] = [
    "events/poll",
    "events/stream",
    "events/subscribe",
    "events/unsubscribe",
];

#[tokio::test(flavor = "multi_thread")]
async fn a_request_without_a_name_is_invalid_params_naming_it() {
    let s = Server::start(|_| {}).await;
    for (i, method) in NAME_METHODS.into_iter().enumerate() {
        for (j, params) in [
            json!({"arguments": {}}),
            json!({"name": 3, "arguments": {}}),
        ]
        .into_iter()
        .enumerate()
        {
            let id = (i * 10 + j) as u64;
            // With no header (there is nothing to mirror) and with one (it mirrors nothing).
            for header in [None, Some("mail.received")] {
                let reply = s
                    .request(id, method, params.clone())
                    .header("mcp-name", header)
                    .send()
                    .await;
                let status = reply.status();
                let body = reply.json().await;
                assert_eq!(body["id"], id, "{method} {params}: {body}");
                assert_eq!(body["error"]["code"], -32602, "{method} {params}: {body}");
                assert_eq!(body["error"]["data"]["field"], "name", "{method}: {body}");
                assert_ne!(status, StatusCode::NOT_FOUND, "{method}");
            }
        }
        // The socket says the same.
        let socket = socket_call(&s.daemon, method, json!({"arguments": {}})).await;
        assert_eq!(socket["error"]["code"], -32602, "{method}: {socket}");
        assert_eq!(
            socket["error"]["data"]["field"], "name",
            "{method}: {socket}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_client_gets_the_socket_s_answer() {
    let s = Server::start(|_| {}).await;
    let init = s
        .request(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"}
            }),
        )
        .header("mcp-protocol-version", Some("2025-11-25"))
        .send()
        .await;
    assert_eq!(init.status(), StatusCode::OK);
    let body = init.json().await;
    assert_eq!(body["result"]["protocolVersion"], "2025-11-25", "{body}");
    // Its later events calls declare the old version in the header, with no `_meta`.
    for (id, method) in [(2, "events/list"), (3, "events/poll")] {
        let mut call = s
            .request(id, method, json!({"name": "mail.received"}))
            .header("mcp-protocol-version", Some("2025-11-25"));
        call.body = json!({"jsonrpc": "2.0", "id": id, "method": method,
                           "params": {"name": "mail.received", "arguments": {}}})
        .to_string()
        .into_bytes();
        let reply = call.send().await;
        assert_eq!(reply.status(), StatusCode::NOT_FOUND, "{method}");
        let body: Value = reply.json().await;
        assert_eq!(body["id"], id, "{body}");
        assert_eq!(body["error"]["code"], -32601, "{body}");
        assert_eq!(
            body["error"]["message"],
            format!(
                "{method} is served on protocol 2026-07-28 only (this request declared protocol \
                 2025-11-25)"
            ),
            "{body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn what_rmcp_cannot_read_gets_json_with_the_id_or_nothing() {
    let s = Server::start(|_| {}).await;
    for (method, body, id, code, field) in [
        (
            "events/list",
            json!({"jsonrpc": "2.0", "id": 8}),
            json!(8),
            -32600,
            "method",
        ),
        (
            "ping",
            json!({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"_meta": 5}}),
            json!(7),
            -32602,
            "params",
        ),
        (
            "events/list",
            json!({"jsonrpc": "2.0", "id": [1], "method": "events/list"}),
            Value::Null,
            -32600,
            "id",
        ),
    ] {
        let mut call = s.request(1, method, json!({}));
        call.body = body.to_string().into_bytes();
        let reply = call.send().await;
        assert_eq!(reply.status(), StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(
            reply.header("content-type").as_deref(),
            Some("application/json"),
            "{body}"
        );
        let answer = reply.json().await;
        assert_eq!(answer["id"], id, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
        assert_eq!(answer["error"]["data"]["field"], field, "{body}: {answer}");
    }
    // A notification that does not fit is accepted with nothing to say.
    let mut call = s.request(1, "notifications/progress", json!({}));
    call.body = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": 5})
        .to_string()
        .into_bytes();
    let reply = call.send().await;
    assert_eq!(reply.status(), StatusCode::ACCEPTED);
}
