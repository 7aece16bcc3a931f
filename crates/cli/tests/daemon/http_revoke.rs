//! Revoking an HTTP client (issue #10): the token's streams end with `terminated` Forbidden
//! `{reason: "revoked"}` and its requests are refused until the token is rotated.

use crate::http_common::{Server, sub};
use axum::http::StatusCode;
use serde_json::json;
use tidings_server::state::Transport;

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_token_is_refused_until_it_is_rotated() {
    let s = Server::start(|_| {}).await;
    let mut stream = s
        .request(3, "events/stream", sub("mail.received"))
        .send()
        .await;
    stream.next_method("notifications/events/active").await;
    let state = s.daemon.state();
    let http = state
        .clients
        .iter()
        .find(|c| c.transport == Transport::Http)
        .unwrap_or_else(|| panic!("the token is listed once it made a request: {state:?}"));
    assert_eq!(http.pid, None);

    assert!(s.daemon.revoke(http.id));
    let ended = stream.next_method("notifications/events/terminated").await;
    assert_eq!(ended["params"]["error"]["code"], -32024, "{ended}");
    assert_eq!(ended["params"]["error"]["data"]["reason"], "revoked");
    s.wait_streams(0).await;
    let refused = s.request(4, "events/list", json!({})).send().await;
    let body = refused.json().await;
    assert_eq!(body["error"]["code"], -32024, "{body}");

    let answer = s.rotate().await;
    assert_eq!(answer["result"]["rotated"], true, "{answer}");
    let r = s.request(5, "events/list", json!({})).send().await;
    assert_eq!(r.status(), StatusCode::OK);
    let body = r.json().await;
    assert!(body["result"]["events"].is_array(), "{body}");
}
