//! The commands over a real demo engine (fixture stores in a temporary directory).

use serde_json::{Value, json};
use tidings_server::Tidings;
use tidings_server::engine::{Config, DemoConfig};

use super::{COMMANDS, Context, dispatch};
use crate::{AppEvent, Proxy};

/// The one list the window (`ui/`) and its fake bridge are checked against.
const JSON: &str = include_str!("../../commands.json");

#[test]
fn commands_json_lists_exactly_the_commands() {
    let listed: Vec<String> =
        serde_json::from_str(JSON).expect("commands.json is a JSON array of names");
    assert_eq!(
        listed, COMMANDS,
        "src-tauri/commands.json and the app's commands differ"
    );
}

/// A demo engine in `dir`; what the commands tell the main thread goes nowhere.
fn context(dir: &std::path::Path) -> Context {
    context_with(dir, Proxy::new(|_: AppEvent| {}))
}

fn context_with(dir: &std::path::Path, main: Proxy) -> Context {
    let handle = Tidings::start(Config::demo(DemoConfig {
        data_dir: Some(dir.join("demo")),
        simulate: None,
        conformance_controls: false,
    }))
    .expect("the demo engine starts");
    Context {
        handle,
        main,
        menu_bar: crate::menu_bar::MenuBarState::default(),
    }
}

/// [`context_with`] whose main-thread events the test reads from the receiver.
fn context_hearing(dir: &std::path::Path) -> (Context, std::sync::mpsc::Receiver<AppEvent>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let main = Proxy::new(move |event| {
        let _ = tx.send(event);
    });
    (context_with(dir, main), rx)
}

async fn stop(cx: Context) {
    cx.handle.shutdown();
    cx.handle.join().await.expect("the engine stops cleanly");
}

fn message(result: Result<Value, super::CommandError>) -> String {
    let error = result.expect_err("the command fails");
    serde_json::to_value(error).unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_switch_from_the_window_reaches_the_engine_and_its_settings() {
    let dir = tempfile::tempdir().unwrap();
    let cx = context(dir.path());
    let state = dispatch(&cx, "get_state", Value::Null).await.unwrap();
    assert!(state["types"].is_array(), "{state}");
    // The app's own field beside the engine's: the launch check has not answered here.
    assert_eq!(state["menuBar"], json!({ "state": "checking" }), "{state}");

    let on = cx.handle.settings().mail.enabled;
    let view = dispatch(
        &cx,
        "set_type_enabled",
        json!({ "eventType": "mail.received", "enabled": !on }),
    )
    .await
    .unwrap();
    assert_eq!(cx.handle.settings().mail.enabled, !on);
    let view = view.to_string();
    assert!(view.contains("mail.received"), "{view}");

    let check = dispatch(
        &cx,
        "check_allow_entry",
        json!({ "eventType": "mail.received", "entry": "@example.com" }),
    )
    .await
    .unwrap();
    assert!(check.is_object(), "{check}");
    stop(cx).await;
}

#[tokio::test]
async fn a_bad_call_is_refused_naming_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let cx = context(dir.path());
    let unknown = message(dispatch(&cx, "format_disk", json!({})).await);
    assert!(
        unknown.contains("unknown command `format_disk`"),
        "{unknown}"
    );

    let before = cx.handle.settings();
    let wrong = message(
        dispatch(
            &cx,
            "set_type_enabled",
            json!({ "eventType": "mail.received", "enabled": "yes" }),
        )
        .await,
    );
    assert!(
        wrong.contains("bad arguments to `set_type_enabled`"),
        "{wrong}"
    );
    assert_eq!(cx.handle.settings(), before, "nothing changed");

    let missing = message(dispatch(&cx, "pause_all", Value::Null).await);
    assert!(missing.contains("minutes"), "{missing}");
    stop(cx).await;
}

/// Not started by a login item (no launchd label, no `tidings.service` cgroup), Restart is
/// the main thread's: it stops the engine and starts the same program again.
#[tokio::test]
async fn restart_asks_the_main_thread_when_no_login_item_started_the_app() {
    let dir = tempfile::tempdir().unwrap();
    let (cx, rx) = context_hearing(dir.path());
    if tidings_platform::login::running_as_login_item(tidings_platform::paths::Os::CURRENT) {
        // Running under the login item's service: the service manager restarts instead.
        stop(cx).await;
        return;
    }
    assert_eq!(
        dispatch(&cx, "restart_app", Value::Null).await.unwrap(),
        Value::Null
    );
    assert!(matches!(rx.try_recv(), Ok(AppEvent::Restart)));
    stop(cx).await;
}

/// The window's Check Now asks the main thread (where the updater runs); the daily switch
/// is saved in `[updates]`.
#[tokio::test]
async fn check_now_asks_the_main_thread_and_the_switch_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let (cx, rx) = context_hearing(dir.path());
    assert_eq!(
        dispatch(&cx, "check_for_updates", Value::Null)
            .await
            .unwrap(),
        Value::Null
    );
    assert!(matches!(rx.try_recv(), Ok(AppEvent::CheckForUpdates)));

    assert!(
        !cx.handle.settings().updates.check,
        "the demo never calls out"
    );
    let view = dispatch(&cx, "set_update_check", json!({ "on": true }))
        .await
        .unwrap();
    assert_eq!(view["updates"]["check"], json!(true), "{view}");
    assert!(cx.handle.settings().updates.check);
    let wrong = message(dispatch(&cx, "set_update_check", json!({ "enabled": true })).await);
    assert!(
        wrong.contains("bad arguments to `set_update_check`"),
        "{wrong}"
    );
    stop(cx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_picker_finds_people_groups_and_recent_senders_and_adds_them() {
    let dir = tempfile::tempdir().unwrap();
    // The simulator writes mail dated now, which recent senders list.
    let handle = Tidings::start(Config::demo(DemoConfig {
        data_dir: Some(dir.path().join("demo")),
        simulate: Some(std::time::Duration::from_millis(50)),
        conformance_controls: false,
    }))
    .expect("the demo engine starts");
    let cx = Context {
        handle,
        main: Proxy::new(|_: AppEvent| {}),
        menu_bar: crate::menu_bar::MenuBarState::default(),
    };
    // The demo's Contacts: Ana's card writes her number nationally.
    let hits = dispatch(&cx, "search_people", json!({"query": "555 0101"}))
        .await
        .unwrap();
    assert_eq!(hits[0]["name"], "Ana Ruiz", "{hits}");
    assert_eq!(hits[0]["handles"], json!(["(202) 555-0101"]));
    let groups = dispatch(&cx, "list_groups", Value::Null).await.unwrap();
    let family = groups
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "Family")
        .expect("the demo's Family group")
        .clone();
    assert_eq!(family["members"], 2);
    // A person picked from the search goes into the allowlist as a person entry.
    let mut entries: Vec<Value> = vec![json!("example.com"), hits[0]["entry"].clone()];
    entries.push(family["entry"].clone());
    let view = dispatch(
        &cx,
        "set_allowlist",
        json!({"eventType": "messages.received", "entries": entries}),
    )
    .await
    .unwrap();
    let shown = &view["types"][1]["entries"];
    assert_eq!(shown[1]["kind"], "person", "{shown}");
    assert_eq!(shown[1]["label"], "Ana Ruiz");
    assert_eq!(shown[1]["state"], "ok");
    assert_eq!(shown[2]["kind"], "group");
    // Recent senders: the demo's seeded messages, newest first, allowed ones marked.
    let wait = async {
        loop {
            let recent = dispatch(&cx, "recent_senders", json!({"eventType": "mail.received"}))
                .await
                .unwrap();
            if recent.as_array().is_some_and(|r| !r.is_empty()) {
                return recent;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    let recent = tokio::time::timeout(std::time::Duration::from_secs(20), wait)
        .await
        .expect("the simulator's mail listed as recent senders");
    let recent = recent.as_array().unwrap();
    assert!(recent.iter().all(|r| r["count"].as_u64().unwrap() >= 1));
    assert!(recent.iter().any(|r| r["allowed"] == true), "{recent:?}");
    // Names and categories: switched and restricted from the window.
    let view = dispatch(
        &cx,
        "set_names",
        json!({"eventType": "mail.received", "on": false}),
    )
    .await
    .unwrap();
    assert_eq!(view["types"][0]["names"], false);
    let view = dispatch(
        &cx,
        "set_categories",
        json!({"eventType": "mail.received", "categories": ["promotions", "primary"]}),
    )
    .await
    .unwrap();
    assert_eq!(
        view["types"][0]["categories"],
        json!(["primary", "promotions"])
    );
    let bad = message(
        dispatch(
            &cx,
            "set_categories",
            json!({"eventType": "messages.received", "categories": ["updates"]}),
        )
        .await,
    );
    assert!(
        bad.contains("`updates` is not a category of messages.received"),
        "{bad}"
    );
    let long = message(dispatch(&cx, "search_people", json!({"query": "x".repeat(500)})).await);
    assert!(long.contains("at most 200 characters"), "{long}");
    stop(cx).await;
}

/// The agents' commands reach the engine with the window's argument shapes, and a bad one is
/// refused naming the fix.
#[tokio::test]
async fn the_agents_commands_take_the_windows_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let cx = context(dir.path());
    let view = dispatch(&cx, "set_new_agents", json!({ "new": "deny" }))
        .await
        .unwrap();
    assert_eq!(view["newAgents"], "deny", "{view}");
    assert_eq!(
        cx.handle.settings().agents.new,
        tidings_core::settings::NewAgents::Deny
    );
    let bad = message(dispatch(&cx, "set_new_agents", json!({ "new": "sometimes" })).await);
    assert!(bad.contains("`ask`, `allow` or `deny`"), "{bad}");

    let unknown = message(
        dispatch(
            &cx,
            "set_agent_type",
            json!({ "id": "nobody-000000", "eventType": "mail.received",
                    "grant": { "senders": ["example.com"] } }),
        )
        .await,
    );
    assert!(unknown.contains("no agent `nobody-000000`"), "{unknown}");
    let shape = message(
        dispatch(
            &cx,
            "set_agent_type",
            json!({ "id": "x", "eventType": "mail.received", "grant": "some" }),
        )
        .await,
    );
    assert!(
        shape.contains("bad arguments to `set_agent_type`"),
        "{shape}"
    );
    for command in ["answer_agent", "set_agent_access"] {
        let gone = message(
            dispatch(
                &cx,
                command,
                json!({ "id": "nobody-000000", "allow": true }),
            )
            .await,
        );
        assert!(gone.contains("no agent"), "{command}: {gone}");
    }
    let forget = message(dispatch(&cx, "forget_agent", json!({ "id": "nobody-000000" })).await);
    assert!(forget.contains("no agent"), "{forget}");
    stop(cx).await;
}
