//! A legacy (2025-11-25) client of the HTTP endpoint gets the pull tools too: `initialize`
//! with instructions and tools, `tools/list`, and `tidings_check` / `tidings_wait` on later
//! requests that carry only the `MCP-Protocol-Version` header, as such clients send them.

use crate::http_common::{Call, Server};
use serde_json::{Value, json};

/// A request as a 2025-11-25 client sends it: no `_meta`, the version in the header.
fn legacy(server: &Server, id: u64, method: &str, params: &Value) -> Call {
    let mut call = server
        .request(id, method, json!({}))
        .header("mcp-protocol-version", Some("2025-11-25"))
        .header("mcp-method", None)
        .header("mcp-name", None);
    call.body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes();
    call
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_http_client_gets_the_pull_tools() {
    let server = Server::start(|_| {}).await;
    let init = legacy(
        &server,
        1,
        "initialize",
        &json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "zed", "version": "1"}}),
    )
    .header("mcp-protocol-version", None)
    .send()
    .await
    .json()
    .await;
    assert_eq!(
        init["result"]["capabilities"]["tools"]["listChanged"], true,
        "{init}"
    );
    assert!(init["result"]["instructions"].as_str().is_some(), "{init}");

    let list = legacy(&server, 2, "tools/list", &json!({}))
        .send()
        .await
        .json()
        .await;
    assert_eq!(
        list["result"]["tools"][0]["name"], "tidings_check",
        "{list}"
    );

    let check = legacy(
        &server,
        3,
        "tools/call",
        &json!({"name": "tidings_check", "arguments": {"cursor": null}}),
    )
    .send()
    .await
    .json()
    .await;
    let cursor = check["result"]["structuredContent"]["cursor"].clone();
    assert!(
        cursor.as_str().is_some_and(|c| c.starts_with("t1.")),
        "{check}"
    );

    // The demo's simulator writes every 150 ms: the wait returns what came after the cursor.
    let waited = legacy(
        &server,
        4,
        "tools/call",
        &json!({"name": "tidings_wait", "arguments": {"cursor": cursor, "timeout_s": 15}}),
    )
    .send()
    .await
    .json()
    .await;
    let events = waited["result"]["structuredContent"]["events"]
        .as_array()
        .unwrap();
    assert!(!events.is_empty(), "{waited}");
    let text = waited["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        !text.contains("remembers nothing"),
        "a cursor was passed: {text}"
    );

    // Over HTTP an omitted cursor means "from now" every time: the model is told to pass it.
    let forgot = legacy(
        &server,
        5,
        "tools/call",
        &json!({"name": "tidings_check", "arguments": {}}),
    )
    .send()
    .await
    .json()
    .await;
    let text = forgot["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("remembers nothing between calls"), "{forgot}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_events_request_with_no_version_at_all_is_told_so() {
    let server = Server::start(|_| {}).await;
    let reply = legacy(&server, 1, "events/list", &json!({}))
        .header("mcp-protocol-version", None)
        .send()
        .await
        .json()
        .await;
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    assert_eq!(
        reply["error"]["message"],
        "events/list is served on protocol 2026-07-28 only (this request declared no protocol \
         version)",
        "{reply}"
    );
}
