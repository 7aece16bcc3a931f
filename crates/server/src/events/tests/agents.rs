//! Agents on a running daemon: a question asked once and answered in the app, a question no
//! one answers, the headless refusal, a denied agent's stream ended, and a grant that narrows.
//! The harness's connections have no peer process, so each is the agent `unidentified`.

use std::time::Duration;

use serde_json::{Value, json};
use tidings_core::Settings;
use tidings_core::settings::{AgentGrant, AllowEntry, NewAgents, TypeGrant};

use super::support::{Harness, both_on, test_limits};
use crate::notices::Notice;
use crate::state::AgentAccess;

const UNIDENTIFIED: &str = "unidentified";

fn asking(s: &mut Settings) {
    both_on(s);
    s.agents.new = NewAgents::Ask;
}

fn stream_args() -> Value {
    json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}})
}

fn reason(error: &Value) -> &str {
    error["data"]["reason"].as_str().unwrap_or_default()
}

/// A harness whose questions wait `wait` for an answer.
async fn asking_harness(wait: Duration) -> Harness {
    let limits = crate::limits::ServerLimits {
        ask_wait: wait,
        ..test_limits()
    };
    Harness::with_demo(asking, limits, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_agent_is_asked_once_and_allow_delivers() {
    let mut h = asking_harness(Duration::from_secs(60)).await;
    h.daemon.agents().set_prompts(true);
    let mut notices = h.daemon.notices();
    let mut first = h.connect();
    let mut second = h.connect();
    let a = first.request("events/stream", stream_args()).await;
    let b = second.request("events/stream", stream_args()).await;
    h.until("the agent to ask", |s| {
        s.agents
            .iter()
            .any(|a| a.id == UNIDENTIFIED && a.access == AgentAccess::Asking)
    })
    .await;
    // Two connections of one agent: one question, one notice, no stream slot taken.
    assert_eq!(h.daemon.agents().asks().len(), 1);
    assert_eq!(h.daemon.state().streams, 0);
    let Notice::AgentAsks { agent, wants } = notices.recv().await.unwrap() else {
        panic!("the first notice is the question");
    };
    assert_eq!(agent, "Unidentified program");
    assert_eq!(wants, "new mail from example.com");

    h.daemon.answer_agent(UNIDENTIFIED, true).unwrap();
    assert_eq!(first.note(a).await["method"], "notifications/events/active");
    assert_eq!(
        second.note(b).await["method"],
        "notifications/events/active"
    );
    h.append_mail("ana@example.com");
    let event = first.note_of(a, "notifications/events/event").await;
    assert_eq!(
        event["params"]["data"]["from"]["address"],
        "ana@example.com"
    );
    // Remembered in the file: the question is closed, and no other notice was sent.
    let saved = Settings::load(&h.settings_path).unwrap();
    assert!(saved.agents.known.contains_key(UNIDENTIFIED), "{saved:?}");
    assert!(h.daemon.agents().asks().is_empty());
    while let Ok(notice) = notices.try_recv() {
        assert!(
            !matches!(notice, Notice::AgentAsks { .. }),
            "asked twice: {notice:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_or_unanswered_is_refused_naming_the_command() {
    let h = asking_harness(Duration::from_millis(300)).await;
    // Headless: refused at once.
    let mut c = h.connect();
    let e = c
        .err(
            "events/poll",
            json!({"name": "mail.received", "arguments": {}}),
        )
        .await;
    assert_eq!(e["code"], -32024);
    assert_eq!(reason(&e), "agent_not_allowed");
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("not running"), "{message}");
    assert!(
        message.contains("`tidings agents allow unidentified`"),
        "{message}"
    );
    // With the app, unanswered: refused after the wait, the question left open.
    h.daemon.agents().set_prompts(true);
    let e = c.err("events/stream", stream_args()).await;
    assert_eq!(reason(&e), "agent_not_allowed");
    assert!(
        e["message"].as_str().unwrap().contains("no one answered"),
        "{e}"
    );
    assert_eq!(h.daemon.agents().asks().len(), 1);
    assert_eq!(h.daemon.state().streams, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denying_ends_the_stream_and_refuses_every_later_request() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c.request("events/stream", stream_args()).await;
    assert_eq!(c.note(id).await["method"], "notifications/events/active");
    h.daemon.set_agent_access(UNIDENTIFIED, false).unwrap();
    let ended = c.note_of(id, "notifications/events/terminated").await;
    assert_eq!(ended["params"]["error"]["code"], -32024);
    assert_eq!(reason(&ended["params"]["error"]), "agent_denied");
    // A fresh connection of the same agent is turned away from its first request.
    let mut fresh = h.connect();
    let e = fresh.err("events/list", json!({})).await;
    assert_eq!(reason(&e), "agent_denied");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("tidings agents allow unidentified"),
        "{e}"
    );
    // Allowed again, it is served.
    h.daemon.set_agent_access(UNIDENTIFIED, true).unwrap();
    fresh.ok("events/list", json!({})).await;
    h.append_mail("late@example.com");
    let again = fresh.request("events/stream", stream_args()).await;
    assert_eq!(
        fresh.note(again).await["method"],
        "notifications/events/active"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_narrows_within_the_allowlist_on_poll_and_list() {
    let entry = |s: &str| AllowEntry::parse(s).unwrap();
    let mut h = Harness::new(move |s| {
        both_on(s);
        s.mail.allow = vec![entry("example.com"), entry("example.org")];
        let mut grant = AgentGrant::allowed(UNIDENTIFIED, "unidentified");
        grant.mail = TypeGrant::Senders(vec![entry("example.org"), entry("elsewhere.net")]);
        grant.messages = TypeGrant::Every(false);
        s.agents.known.insert(UNIDENTIFIED.into(), grant);
    })
    .await;
    let mut c = h.connect();
    // Messages are not granted: not listed, and a poll names it off.
    let list = c.ok("events/list", json!({})).await;
    let names: Vec<&str> = list["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mail.received"]);
    let e = c
        .err(
            "events/poll",
            json!({"name": "messages.received", "arguments": {}}),
        )
        .await;
    assert_eq!(e["code"], -32023);
    let head = c
        .ok(
            "events/poll",
            json!({"name": "mail.received", "arguments": {}}),
        )
        .await["cursor"]
        .clone();
    h.append_mail("ana@example.com");
    h.append_mail("ana@example.org");
    h.append_mail("ana@elsewhere.net");
    let got = c
        .ok(
            "events/poll",
            json!({"name": "mail.received", "arguments": {}, "cursor": head}),
        )
        .await;
    let from: Vec<&str> = got["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["data"]["from"]["address"].as_str().unwrap())
        .collect();
    // example.com is on the allowlist but not granted; elsewhere.net is granted but not on
    // the allowlist.
    assert_eq!(from, ["ana@example.org"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_deliveries_outlive_its_streams_and_connections() {
    let mut h = Harness::new(both_on).await;
    let mut c = h.connect();
    let id = c.request("events/stream", stream_args()).await;
    assert_eq!(c.note(id).await["method"], "notifications/events/active");
    h.append_mail("ana@example.com");
    c.note_of(id, "notifications/events/event").await;
    let delivered = |s: &crate::state::State| {
        s.agents
            .iter()
            .find(|a| a.id == UNIDENTIFIED)
            .map_or(0, |a| a.delivered)
    };
    h.until("one delivery counted", |s| delivered(s) == 1).await;
    // The stream ends: its subscription goes, its delivery stays the agent's.
    c.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id}}),
    )
    .await;
    h.until("the stream to end", |s| s.streams == 0).await;
    assert_eq!(delivered(&h.daemon.state()), 1);
    // So does the connection.
    c.close();
    h.until("the connection to close", |s| s.clients.is_empty())
        .await;
    assert_eq!(delivered(&h.daemon.state()), 1);
}
