//! The bridge commands' views and checks, tested without the app.

use super::snippet::snippet_for;
use std::path::Path;

use super::*;

#[test]
fn the_snippet_names_a_socket_the_host_would_not_find() {
    let parse = |text: String| serde_json::from_str::<serde_json::Value>(&text).unwrap();
    let demo = Path::new("/home/ana/demo/tidings.sock");
    let env = |name: &str| (name == "HOME").then(|| "/home/ana".into());
    assert_eq!(
        parse(snippet_for(Path::new("/A/tidings-mcp"), demo, &env)),
        serde_json::json!({"mcpServers": {"tidings": {
            "command": "/A/tidings-mcp",
            "args": ["--socket", "/home/ana/demo/tidings.sock"]
        }}})
    );
    // The default the shim finds in the narrowest environment: no arguments.
    let default = tidings_platform::paths::socket_path_in(&env).unwrap();
    assert_eq!(
        parse(snippet_for(Path::new("/A/tidings-mcp"), &default, &env)),
        serde_json::json!({"mcpServers": {"tidings": {"command": "/A/tidings-mcp", "args": []}}})
    );
}

fn sample_view() -> SettingsView {
    SettingsView {
        types: vec![TypeView {
            name: "mail.received".into(),
            enabled: true,
            allow: vec!["acme.com".into()],
            backfill_days: 7,
            reach: "r".into(),
            summary: "s".into(),
            entries: vec![AllowEntryView {
                entry: "acme.com".into(),
                kind: tidings_core::allowlist::AllowKind::Domain,
                label: "acme.com".into(),
                state: tidings_core::allowlist::EntryState::Ok,
            }],
            names: false,
            categories: vec![],
            offered_categories: vec!["primary".into()],
        }],
        http: HttpView {
            enabled: false,
            port: 3917,
            token: None,
        },
        notifications: true,
        notification_kinds: vec![NotificationSwitch {
            kind: NotificationKind::StoreRebuilt,
            enabled: false,
        }],
        paused_until_ms: None,
        first_run: false,
        connect_snippet: "{}".into(),
        start_at_login: LoginView {
            state: "disabled",
            text: "t".into(),
        },
        contacts: ContactsView {
            readable: true,
            problem: None,
        },
        asks: vec![AskView {
            id: "claude-1a2b3c".into(),
            agent: "claude".into(),
            wants: "new mail".into(),
            event_type: "mail.received".into(),
            since_ms: 1,
        }],
        new_agents: tidings_core::settings::NewAgents::Ask,
        agent_grants: vec![AgentGrantView {
            id: "claude-1a2b3c".into(),
            types: vec![AgentTypeView {
                event_type: "mail.received".into(),
                grant: TypeGrantView::Senders(vec!["acme.com".into()]),
            }],
        }],
        agent_tokens: vec![crate::app::AgentTokenView {
            name: "my-script".into(),
            created_ms: 2,
        }],
        updates: UpdatesView {
            check: true,
            current: "0.1.0".into(),
            last: Some("Tidings 0.1.0 is up to date.".into()),
            checked_at_ms: Some(3),
        },
    }
}

#[test]
fn the_view_carries_the_asks_and_grants_for_the_window() {
    let v = serde_json::to_value(sample_view()).unwrap();
    assert_eq!(
        v["asks"][0],
        serde_json::json!({"id": "claude-1a2b3c", "agent": "claude", "wants": "new mail",
            "eventType": "mail.received", "sinceMs": 1})
    );
    assert_eq!(v["newAgents"], "ask");
    // Names and dates only: the token itself is never in the view.
    assert_eq!(
        v["agentTokens"][0],
        serde_json::json!({"name": "my-script", "createdMs": 2})
    );
    assert_eq!(
        v["agentGrants"][0]["types"][0],
        serde_json::json!({"eventType": "mail.received", "grant": {"senders": ["acme.com"]}})
    );
}

#[test]
fn the_view_has_exactly_the_contract_keys() {
    let v = serde_json::to_value(sample_view()).unwrap();
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&v),
        [
            "agentGrants",
            "agentTokens",
            "asks",
            "connectSnippet",
            "contacts",
            "firstRun",
            "http",
            "newAgents",
            "notificationKinds",
            "notifications",
            "pausedUntilMs",
            "startAtLogin",
            "types",
            "updates"
        ]
    );
    assert_eq!(
        v["updates"],
        serde_json::json!({"check": true, "current": "0.1.0",
            "last": "Tidings 0.1.0 is up to date.", "checkedAtMs": 3})
    );
    assert_eq!(keys(&v["startAtLogin"]), ["state", "text"]);
    assert_eq!(
        v["notificationKinds"],
        serde_json::json!([{"kind": "store_rebuilt", "enabled": false}])
    );
    assert_eq!(
        keys(&v["types"][0]),
        [
            "allow",
            "backfillDays",
            "categories",
            "enabled",
            "entries",
            "name",
            "names",
            "offeredCategories",
            "reach",
            "summary"
        ]
    );
    assert_eq!(keys(&v["http"]), ["enabled", "port", "token"]);
    assert!(v["pausedUntilMs"].is_null() && v["http"]["token"].is_null());
}

#[test]
fn an_entry_check_answers_in_the_contract_shape() {
    let ok = serde_json::to_value(check_allow_entry("mail.received", "acme.com")).unwrap();
    assert_eq!(
        ok,
        serde_json::json!({"ok": true, "kind": "domain", "reason": null})
    );
    let bad = check_allow_entry("messages.received", "+1202*x");
    assert!(!bad.ok && bad.kind.is_none());
    let unknown = check_allow_entry("mail", "acme.com");
    assert!(
        unknown
            .reason
            .unwrap()
            .contains("unknown event type `mail`")
    );
}
