//! Webhook subscriptions over the HTTP endpoint: a token's agent subscribes, the receiver on
//! 127.0.0.1 answers the challenge and gets signed events naming the subscription; the
//! `--no-auth` endpoint, which has no principal, offers no webhook and refuses to subscribe.

use std::net::SocketAddr;

use serde_json::{Value, json};
use tidings_server::http::auth::AuthMode;
use tidings_server::http::{HttpEndpoint, HttpOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::common::WAIT;
use tidings_server::http::agent_tokens;

use crate::http_common::{Server, demo_daemon, request, socket_call};

/// One POST as the receiver saw it: its lower-cased headers and its JSON body.
struct Posted {
    headers: Vec<(String, String)>,
    body: Value,
}

impl Posted {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A receiver on 127.0.0.1 that echoes the verification challenge and answers 200 to every
/// other POST, sending each one to the channel.
async fn receiver() -> (SocketAddr, mpsc::UnboundedReceiver<Posted>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head_end, length) = loop {
                    let n = conn.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                        let length = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        break (end + 4, length);
                    }
                };
                while buf.len() < head_end + length {
                    let n = conn.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                let headers = head
                    .lines()
                    .skip(1)
                    .filter_map(|l| l.split_once(':'))
                    .map(|(n, v)| (n.trim().to_lowercase(), v.trim().to_owned()))
                    .collect();
                let body: Value = serde_json::from_slice(&buf[head_end..head_end + length])
                    .unwrap_or(Value::Null);
                let answer = if body["type"] == "verification" {
                    json!({"challenge": body["challenge"]}).to_string()
                } else {
                    "{}".to_owned()
                };
                let _ = tx.send(Posted { headers, body });
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{answer}",
                    answer.len()
                );
                let _ = conn.write_all(reply.as_bytes()).await;
            });
        }
    });
    (addr, rx)
}

fn subscribe_params(receiver: SocketAddr) -> Value {
    json!({"name": "mail.received", "arguments": {"domains": ["example.com"]},
           "delivery": {"mode": "webhook", "url": format!("http://{receiver}/hooks"),
                        "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
}

async fn next(rx: &mut mpsc::UnboundedReceiver<Posted>) -> Posted {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("the receiver got a POST in time")
        .expect("the receiver runs")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tokens_agent_subscribes_and_its_receiver_gets_signed_events() {
    let s = Server::start(|_| {}).await;
    let (addr, mut posts) = receiver().await;
    s.daemon
        .update_settings(|st| {
            st.webhooks.allow = vec![format!("http://{addr}")];
        })
        .unwrap();
    let body = s
        .request(7, "events/subscribe", subscribe_params(addr))
        .send()
        .await
        .json()
        .await;
    let id = body["result"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{body}"))
        .to_owned();
    assert!(id.starts_with("sub_"), "{body}");
    assert_eq!(body["result"]["deliveryStatus"]["active"], true, "{body}");

    let challenge = next(&mut posts).await;
    assert_eq!(challenge.body["type"], "verification", "{}", challenge.body);
    // The demo's simulator writes mail every 150 ms: the next POST is an event.
    let event = next(&mut posts).await;
    assert_eq!(event.body["name"], "mail.received", "{}", event.body);
    assert_eq!(event.header("x-mcp-subscription-id"), Some(id.as_str()));
    assert!(
        event
            .header("webhook-signature")
            .is_some_and(|s| s.starts_with("v1,")),
        "{:?}",
        event.headers
    );
    // The status shows it, by origin only and with no secret.
    let state = s.daemon.state();
    let shown = serde_json::to_string(&state.webhooks).unwrap();
    assert!(shown.contains(&id) && !shown.contains("whsec_"), "{shown}");
    assert!(!shown.contains("/hooks"), "no path in the state: {shown}");

    // Unsubscribed, then unknown.
    let params = json!({"name": "mail.received", "arguments": {"domains": ["example.com"]},
                        "delivery": {"url": format!("http://{addr}/hooks")}});
    let body = s
        .request(8, "events/unsubscribe", params.clone())
        .send()
        .await
        .json()
        .await;
    assert_eq!(body["result"]["resultType"], "complete", "{body}");
    let body = s
        .request(9, "events/unsubscribe", params)
        .send()
        .await
        .json()
        .await;
    assert_eq!(body["error"]["code"], -32023, "{body}");
    assert_eq!(body["error"]["data"]["kind"], "subscription", "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_no_auth_endpoint_offers_no_webhook_and_refuses_to_subscribe() {
    let (daemon, _demo, _home) = demo_daemon(|_| {});
    let (addr, mut posts) = receiver().await;
    daemon
        .update_settings(|st| st.webhooks.allow = vec![format!("http://{addr}")])
        .unwrap();
    let endpoint = HttpEndpoint::bind(
        &daemon,
        HttpOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            auth: AuthMode::NoAuth,
        },
    )
    .await
    .unwrap();
    let at = endpoint.local_addr();
    let _served = tokio::spawn(endpoint.serve());

    let list = request(at, "unused", 1, "events/list", json!({}))
        .send()
        .await
        .json()
        .await;
    for e in list["result"]["events"].as_array().unwrap() {
        assert_eq!(e["delivery"], json!(["poll", "push"]), "{e}");
    }
    let body = request(at, "unused", 2, "events/subscribe", subscribe_params(addr))
        .send()
        .await
        .json()
        .await;
    assert_eq!(body["error"]["code"], -32024, "{body}");
    assert_eq!(body["error"]["data"]["reason"], "unauthenticated", "{body}");
    assert!(posts.try_recv().is_err(), "nothing was posted");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_or_rotated_token_takes_its_webhooks_with_it() {
    let s = Server::start(|_| {}).await;
    let (addr, mut posts) = receiver().await;
    s.daemon
        .update_settings(|st| st.webhooks.allow = vec![format!("http://{addr}")])
        .unwrap();
    let file = agent_tokens::path_beside(s.daemon.settings_path());
    let alpha = agent_tokens::create(&file, "alpha").unwrap();
    for (id, token) in [(1, alpha.expose().to_owned()), (2, s.token())] {
        let body = request(
            s.addr,
            &token,
            id,
            "events/subscribe",
            subscribe_params(addr),
        )
        .send()
        .await
        .json()
        .await;
        assert!(body["result"]["id"].is_string(), "{body}");
    }
    assert_eq!(s.daemon.webhooks().all().len(), 2, "one per agent");

    // Revoking alpha's token ends alpha's subscription, signed, with its reason.
    agent_tokens::revoke(&file, "alpha").unwrap();
    socket_call(&s.daemon, "tidings/token/rotate", json!({})).await;
    let ended = loop {
        let post = next(&mut posts).await;
        if post.body["type"] == "terminated" {
            break post;
        }
    };
    assert_eq!(
        ended.body["error"]["data"]["reason"], "token_revoked",
        "{}",
        ended.body
    );
    let left: Vec<String> = s
        .daemon
        .webhooks()
        .all()
        .iter()
        .map(|h| h.owner.key.clone())
        .collect();
    assert_eq!(left, ["token:http"], "only the endpoint token's is left");

    // Rotating the endpoint's token ends its own.
    s.rotate().await;
    let ended = loop {
        let post = next(&mut posts).await;
        if post.body["type"] == "terminated" {
            break post;
        }
    };
    assert_eq!(
        ended.body["error"]["data"]["reason"], "token_rotated",
        "{}",
        ended.body
    );
    assert!(s.daemon.webhooks().all().is_empty());
}
