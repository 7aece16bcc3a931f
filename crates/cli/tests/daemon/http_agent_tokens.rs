//! One HTTP bearer token per agent: each token's requests are its own agent (`token:NAME`),
//! a grant that denies one refuses only its requests, and a revoked token's stream ends with
//! `terminated` Forbidden `{reason: "token_revoked"}` and its next request gets 401.

use axum::http::StatusCode;
use serde_json::json;
use tidings_platform::identity::agent_id;
use tidings_server::http::agent_tokens;
use tidings_server::state::Transport;

use crate::http_common::{Server, request, socket_call, sub};

#[tokio::test(flavor = "multi_thread")]
async fn each_agent_token_is_its_own_agent_with_its_own_grant_until_revoked() {
    let s = Server::start(|_| {}).await;
    let file = agent_tokens::path_beside(s.daemon.settings_path());
    let alpha = agent_tokens::create(&file, "alpha").unwrap();
    let beta = agent_tokens::create(&file, "beta").unwrap();
    let (alpha_id, beta_id) = (
        agent_id("alpha", "token:alpha"),
        agent_id("beta", "token:beta"),
    );

    let mut stream = request(
        s.addr,
        alpha.expose(),
        3,
        "events/stream",
        sub("mail.received"),
    )
    .send()
    .await;
    stream.next_method("notifications/events/active").await;
    let r = request(s.addr, beta.expose(), 4, "events/list", json!({}))
        .send()
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.json().await["result"]["events"].is_array());

    let state = s.daemon.state();
    let http: Vec<&str> = state
        .clients
        .iter()
        .filter(|c| c.transport == Transport::Http)
        .map(|c| c.agent.as_str())
        .collect();
    assert!(
        http.contains(&alpha_id.as_str()) && http.contains(&beta_id.as_str()),
        "each token's client is its agent: {http:?} in {state:#?}"
    );
    for (id, identity) in [(&alpha_id, "token:alpha"), (&beta_id, "token:beta")] {
        let agent = state.agents.iter().find(|a| &a.id == id);
        let agent = agent.unwrap_or_else(|| panic!("{id} listed: {:#?}", state.agents));
        assert_eq!(agent.identity, identity);
        assert_eq!(agent.kind, tidings_server::state::AgentKind::Token);
    }

    // Denying beta refuses beta alone.
    s.daemon.set_agent_access(&beta_id, false).unwrap();
    let body = request(s.addr, beta.expose(), 5, "events/list", json!({}))
        .send()
        .await
        .json()
        .await;
    assert_eq!(body["error"]["data"]["reason"], "agent_denied", "{body}");
    let body = request(s.addr, alpha.expose(), 6, "events/list", json!({}))
        .send()
        .await
        .json()
        .await;
    assert!(body["result"]["events"].is_array(), "{body}");

    // Revoking alpha ends its stream and refuses its token; the endpoint's own still works.
    agent_tokens::revoke(&file, "alpha").unwrap();
    socket_call(&s.daemon, "tidings/token/rotate", json!({})).await;
    let ended = stream.next_method("notifications/events/terminated").await;
    assert_eq!(ended["params"]["error"]["code"], -32024, "{ended}");
    assert_eq!(
        ended["params"]["error"]["data"]["reason"], "token_revoked",
        "{ended}"
    );
    assert!(
        ended["params"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tidings token create"),
        "{ended}"
    );
    let r = request(s.addr, alpha.expose(), 7, "events/list", json!({}))
        .send()
        .await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = s.request(8, "events/list", json!({})).send().await;
    assert_eq!(r.status(), StatusCode::OK);
}
