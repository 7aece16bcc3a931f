//! The window's agent commands over a demo engine: a question answered, a grant edited,
//! denied, forgotten, and what new programs get; each refusal names the fix.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use super::*;
use crate::engine::{Config, DemoConfig};
use crate::{Handle, Tidings};

const WAIT: Duration = Duration::from_secs(20);

fn demo(dir: &std::path::Path) -> Handle {
    let handle = Tidings::start(Config::demo(DemoConfig {
        data_dir: Some(dir.join("d")),
        simulate: None,
        conformance_controls: false,
    }))
    .expect("the engine starts on demo stores");
    handle.agents().set_prompts(true);
    handle
}

/// A raw client on the socket that asks for a stream of `ty` and reads its frames.
async fn stream(handle: &Handle, ty: &str) -> tokio::io::Lines<BufReader<UnixStream>> {
    let mut sock = UnixStream::connect(handle.socket_path()).await.unwrap();
    let params = json!({"name": ty, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "Claude Code", "version": "1"},
    }});
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": "events/stream", "params": params});
    sock.write_all(format!("{line}\n").as_bytes())
        .await
        .unwrap();
    BufReader::new(sock).lines()
}

/// The next frame that is a response or the stream's `active` notice.
async fn answer(lines: &mut tokio::io::Lines<BufReader<UnixStream>>) -> Value {
    let read = async {
        loop {
            let line = lines.next_line().await.unwrap().expect("open");
            let frame: Value = serde_json::from_str(&line).unwrap();
            if frame.get("id").is_some() || frame["method"] == "notifications/events/active" {
                return frame;
            }
        }
    };
    tokio::time::timeout(WAIT, read).await.expect("an answer")
}

/// Wait until the settings view satisfies `cond`.
async fn view_until(handle: &Handle, cond: impl Fn(&SettingsView) -> bool) -> SettingsView {
    let wait = async {
        loop {
            let view = settings_view(handle).await;
            if cond(&view) {
                return view;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(WAIT, wait).await.expect("the view")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asking_agent_is_allowed_from_the_window_and_its_grant_edited() {
    let dir = tempfile::tempdir().unwrap();
    let handle = demo(dir.path());
    let view = set_new_agents(&handle, "ask").await.unwrap();
    assert_eq!(view.new_agents, tidings_core::settings::NewAgents::Ask);
    assert!(view.asks.is_empty() && view.agent_grants.is_empty());

    let mut lines = stream(&handle, "mail.received").await;
    let view = view_until(&handle, |v| !v.asks.is_empty()).await;
    let ask = &view.asks[0];
    assert_eq!(ask.event_type, "mail.received");
    assert_eq!(ask.wants, "all new mail");
    // What the OS says it is, never the name it announced.
    assert!(!ask.agent.contains("Claude Code"), "{}", ask.agent);
    let id = ask.id.clone();

    let view = answer_agent(&handle, &id, true).await.unwrap();
    assert!(view.asks.is_empty());
    assert_eq!(view.agent_grants.len(), 1);
    assert_eq!(view.agent_grants[0].id, id);
    assert_eq!(view.agent_grants[0].types[0].grant, TypeGrantView::Every);
    let active = answer(&mut lines).await;
    assert_eq!(active["method"], "notifications/events/active", "{active}");

    // Only some senders: entries of the allowlist, as the file holds them.
    let some = TypeGrantView::Senders(vec!["example.com".into()]);
    let view = set_agent_type(&handle, &id, "messages.received", some.clone())
        .await
        .unwrap();
    assert_eq!(view.agent_grants[0].types[1].grant, some);
    let off = set_agent_type(&handle, &id, "mail.received", TypeGrantView::None)
        .await
        .unwrap();
    assert_eq!(off.agent_grants[0].types[0].grant, TypeGrantView::None);

    let not_on = TypeGrantView::Senders(vec!["example.com".into(), "acme.com".into()]);
    let err = set_agent_type(&handle, &id, "mail.received", not_on)
        .await
        .unwrap_err();
    assert!(matches!(err, AppError::NotOnAllowlist { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("`acme.com` is not on the mail.received allowlist")
    );
    let err = set_agent_type(
        &handle,
        &id,
        "mail.received",
        TypeGrantView::Senders(vec![]),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("or grant none"), "{err}");
    let err = set_agent_type(&handle, &id, "mail", TypeGrantView::Every)
        .await
        .unwrap_err();
    assert!(matches!(err, AppError::UnknownType { .. }), "{err}");
    // The refused edits left the grant as it was.
    let view = settings_view(&handle).await;
    assert_eq!(view.agent_grants[0].types[0].grant, TypeGrantView::None);

    let view = set_agent_access(&handle, &id, false).await.unwrap();
    assert_eq!(view.agent_grants.len(), 1);
    assert_eq!(
        handle.daemon().settings_arc().agents.known[&id].access,
        tidings_core::settings::Access::Deny
    );
    let view = forget_agent(&handle, &id).await.unwrap();
    assert!(view.agent_grants.is_empty());
    let err = forget_agent(&handle, &id).await.unwrap_err();
    assert!(err.to_string().contains("tidings agents"), "{err}");
    handle.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_question_denies_and_bad_choices_name_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let handle = demo(dir.path());
    let err = set_new_agents(&handle, "maybe").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "new programs get `ask`, `allow` or `deny`, not `maybe`"
    );
    let err = answer_agent(&handle, "nobody-000000", true)
        .await
        .unwrap_err();
    assert!(matches!(err, AppError::Agent(_)), "{err}");

    set_new_agents(&handle, "ask").await.unwrap();
    let mut lines = stream(&handle, "messages.received").await;
    let view = view_until(&handle, |v| !v.asks.is_empty()).await;
    let id = view.asks[0].id.clone();
    let view = answer_agent(&handle, &id, false).await.unwrap();
    assert!(view.asks.is_empty());
    let refused = answer(&mut lines).await;
    assert_eq!(refused["error"]["data"]["agent"], json!(id), "{refused}");
    assert_eq!(
        handle.daemon().settings_arc().agents.known[&id].access,
        tidings_core::settings::Access::Deny
    );
    let view = set_new_agents(&handle, "deny").await.unwrap();
    assert_eq!(view.new_agents, tidings_core::settings::NewAgents::Deny);
    handle.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_token_is_shown_once_listed_by_name_and_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let handle = demo(dir.path());
    let made = create_agent_token(&handle, "my-script").await.unwrap();
    assert_eq!(made.name, "my-script");
    assert_eq!(made.token.len(), crate::http::token::TOKEN_CHARS);
    let listed: Vec<&str> = made
        .settings
        .agent_tokens
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(listed, ["my-script"]);
    // Only the hash is kept, and the view never carries the token.
    let file = std::fs::read_to_string(crate::http::agent_tokens::path_beside(
        handle.settings_path(),
    ))
    .unwrap();
    assert!(!file.contains(&made.token), "{file}");
    let view = serde_json::to_string(&settings_view(&handle).await).unwrap();
    assert!(!view.contains(&made.token));
    // A second one of the name, a bad name, and revoking one that is not there: each says why.
    let again = create_agent_token(&handle, "my-script").await.unwrap_err();
    assert!(again.to_string().contains("already has a token"), "{again}");
    let bad = create_agent_token(&handle, "http").await.unwrap_err();
    assert!(bad.to_string().contains("endpoint's own token"), "{bad}");
    let view = revoke_agent_token(&handle, "my-script").await.unwrap();
    assert!(view.agent_tokens.is_empty());
    let gone = revoke_agent_token(&handle, "my-script").await.unwrap_err();
    assert!(gone.to_string().contains("has no token"), "{gone}");
    handle.shutdown();
}
