//! The app's commands (`tidings_server::app`) on a real engine over demo stores: pause all
//! ends a live stream as a type turned off would and empties `events/list` until resume or
//! the pause's end; settings changes are validated, saved and shown, and every command keeps
//! every comment of a hand-kept settings file; the token rotates in the endpoint's keychain.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{Client, WAIT, Writer, is_event, is_note};
use serde_json::{Value, json};
use tidings_fixtures::MacHome;
use tidings_platform::KeyringKeychain;
use tidings_platform::keychain::SERVICE;
use tidings_server::engine::{Config, DemoConfig, HttpConfig};
use tidings_server::http::auth::AuthMode;
use tidings_server::state::now_ms;
use tidings_server::{Handle, Tidings, app};

/// `NotFound` (SEP-3415): what a stream of a type turned off ends with.
const NOT_FOUND: i64 = -32023;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .unwrap()
}

/// The engine on fresh demo stores, the HTTP token in an in-memory keychain.
fn start(rt: &tokio::runtime::Runtime, dir: &std::path::Path, keychain: KeyringKeychain) -> Handle {
    let mut config = Config::demo(DemoConfig {
        data_dir: Some(dir.join("demo")),
        simulate: None,
        conformance_controls: false,
    });
    let keychain = Arc::new(keychain);
    config.http = HttpConfig {
        forced: None,
        auth: Arc::new(move || Ok(AuthMode::Token(keychain.clone()))),
    };
    let _in_runtime = rt.enter();
    Tidings::start(config).expect("the engine starts on demo stores")
}

fn listed(client: &mut Client, id: &mut u64) -> Vec<String> {
    *id += 1;
    let list: Value = client.result(*id, "events/list", json!({}));
    list["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str().map(str::to_owned))
        .collect()
}

/// Ask `events/list` until `pred` holds (bounded).
fn wait_listed(client: &mut Client, id: &mut u64, what: &str, pred: impl Fn(&[String]) -> bool) {
    let deadline = Instant::now() + WAIT;
    loop {
        let names = listed(client, id);
        if pred(&names) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {names:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn open_stream(client: &mut Client, id: u64) {
    let mark = client.mark();
    client.request(
        id,
        "events/stream",
        json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}}),
    );
    client.wait_for("active", mark, |f| {
        is_note(f, "notifications/events/active", &json!(id))
    });
}

/// `subscriptions/listen` for both list changes, as request `id`.
fn listen_for_list_changes(client: &mut Client, id: u64) -> Value {
    let listen = json!(id);
    let mark = client.mark();
    client.request(
        id,
        "subscriptions/listen",
        json!({"notifications": {"eventsListChanged": true, "toolsListChanged": true}}),
    );
    client.wait_for("the listen acknowledged", mark, |f| {
        is_note(f, "notifications/subscriptions/acknowledged", &listen)
    });
    listen
}

/// A request on a paused type says it is paused and until when, not how to turn it on.
fn assert_a_poll_is_told_it_is_paused(client: &mut Client) {
    let error = client.error(
        60,
        "events/poll",
        json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}}),
    );
    assert_eq!(error["code"], NOT_FOUND, "{error}");
    assert_eq!(error["data"]["reason"], "paused", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with("`mail.received` is paused in Tidings until 20"),
        "{message}"
    );
    // The pull tools say the same, not "turn one on".
    let check = client.result(
        61,
        "tools/call",
        json!({"name": "tidings_check", "arguments": {}}),
    );
    assert_eq!(check["isError"], true, "{check}");
    let text = check["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("every event type is paused in Tidings until 20"),
        "{check}"
    );
}

#[test]
fn pause_all_ends_streams_and_empties_the_list_until_resume() {
    let rt = runtime();
    let tmp = tempdir();
    let handle = start(&rt, tmp.path(), KeyringKeychain::mock(SERVICE));
    let mut client = Client::connect(handle.socket_path());
    let mut id = 100;
    assert_eq!(
        listed(&mut client, &mut id).len(),
        2,
        "the demo turns both on"
    );
    open_stream(&mut client, 1);
    let listen = listen_for_list_changes(&mut client, 50);

    let mark = client.mark();
    let view = rt.block_on(app::pause_all(&handle, 60)).unwrap();
    let until = view.paused_until_ms.expect("the view shows the pause");
    assert!(until > now_ms() + 59 * 60_000, "{until}");
    assert!(
        view.types.iter().all(|t| t.enabled),
        "types stay configured"
    );
    let settings = std::fs::read_to_string(handle.settings_path()).unwrap();
    assert!(settings.contains("[mail]\nenabled = true"), "{settings}");
    let terminated = client.wait_for("terminated", mark, |f| {
        is_note(f, "notifications/events/terminated", &json!(1))
    });
    assert_eq!(
        terminated["params"]["error"]["code"], NOT_FOUND,
        "{terminated}"
    );
    let data = &terminated["params"]["error"]["data"];
    assert_eq!(data["reason"], "paused", "{terminated}");
    assert_eq!(data["pausedUntilMs"], until, "{terminated}");
    assert_a_poll_is_told_it_is_paused(&mut client);
    for note in ["events", "tools"] {
        let method = format!("notifications/{note}/list_changed");
        client.wait_for(&method, mark, |f| is_note(f, &method, &listen));
    }
    wait_listed(&mut client, &mut id, "an empty list", <[String]>::is_empty);
    let mut rx = handle.state();
    let state = rt
        .block_on(async {
            tokio::time::timeout(WAIT, rx.wait_for(|s| s.paused_until_ms.is_some())).await
        })
        .expect("the State shows the pause in time")
        .unwrap()
        .clone();
    assert_eq!(state.paused_until_ms, Some(until));
    assert!(
        state.headline().starts_with("Paused until "),
        "{}",
        state.headline()
    );

    // A change made while paused is saved and takes effect when the pause ends.
    let view = rt
        .block_on(app::set_type_enabled(&handle, "messages.received", false))
        .unwrap();
    assert!(!view.types[1].enabled && view.paused_until_ms == Some(until));
    assert!(listed(&mut client, &mut id).is_empty(), "still paused");
    let mark = client.mark();
    let view = rt.block_on(app::resume_all(&handle));
    assert_eq!(view.paused_until_ms, None);
    client.wait_for("list_changed on resume", mark, |f| {
        is_note(f, "notifications/events/list_changed", &listen)
    });
    wait_listed(&mut client, &mut id, "mail back, messages off", |n| {
        n == ["mail.received"]
    });
    rt.block_on(app::set_type_enabled(&handle, "messages.received", true))
        .unwrap();
    wait_listed(&mut client, &mut id, "both types back", |n| n.len() == 2);
    open_stream(&mut client, 2);

    // A pause that runs out ends by itself, as if the types were turned back on.
    let mark = client.mark();
    handle.pause_until(now_ms() + 300);
    client.wait_for("terminated by the short pause", mark, |f| {
        is_note(f, "notifications/events/terminated", &json!(2))
    });
    wait_listed(
        &mut client,
        &mut id,
        "both types back after the pause",
        |n| n.len() == 2,
    );
    assert_eq!(handle.paused_until_ms(), None);

    handle.shutdown();
    rt.block_on(async { tokio::time::timeout(WAIT, handle.join()).await })
        .expect("join within the bound")
        .unwrap();
}

#[test]
fn settings_changes_are_checked_saved_and_shown() {
    let rt = runtime();
    let tmp = tempdir();
    let handle = start(&rt, tmp.path(), KeyringKeychain::mock(SERVICE));
    let view = rt.block_on(app::settings_view(&handle));
    assert!(view.first_run, "a fresh demo dir");
    assert_eq!(view.types[0].name, "mail.received");
    assert!(view.notifications);
    assert_eq!(view.http.token, None, "no token made yet");
    assert!(
        view.connect_snippet.contains("\"mcpServers\""),
        "{}",
        view.connect_snippet
    );
    // The demo's socket is no host's default: the snippet must name it, or the client it
    // configures would look for the daemon elsewhere.
    let snippet: serde_json::Value = serde_json::from_str(&view.connect_snippet).unwrap();
    assert_eq!(
        snippet["mcpServers"]["tidings"]["args"],
        serde_json::json!(["--socket", handle.socket_path().display().to_string()])
    );

    let entries = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let err = rt
        .block_on(app::set_allowlist(
            &handle,
            "mail.received",
            &entries(&["acme.com", "mom"]),
        ))
        .unwrap_err()
        .to_string();
    assert!(err.contains("entry 2: `mom` is not"), "{err}");
    let view = rt
        .block_on(app::set_allowlist(
            &handle,
            "mail.received",
            &entries(&["acme.com", "ana@example.org"]),
        ))
        .unwrap();
    assert_eq!(view.types[0].allow, ["acme.com", "ana@example.org"]);
    assert_eq!(
        view.types[0].reach,
        "Agents can receive mail from anyone at acme.com and from ana@example.org; nothing \
         else. Never the body."
    );
    assert_eq!(view.types[0].summary, "from acme.com and ana@example.org");

    let err = rt
        .block_on(app::set_backfill_days(&handle, "messages.received", 366))
        .unwrap_err();
    assert!(err.to_string().contains("0 (off) to 365, got 366"), "{err}");
    rt.block_on(app::set_backfill_days(&handle, "messages.received", 30))
        .unwrap();
    let err = rt.block_on(app::set_http(&handle, true, 0)).unwrap_err();
    assert!(err.to_string().contains("1 to 65535"), "{err}");
    rt.block_on(app::set_http(&handle, false, 4000)).unwrap();
    let view = rt.block_on(app::set_notifications(&handle, false)).unwrap();
    assert!(!view.notifications && view.http.port == 4000);
    let err = rt.block_on(app::pause_all(&handle, 0)).unwrap_err();
    assert!(err.to_string().contains("1 to 10080 minutes"), "{err}");
    let err = rt
        .block_on(app::set_type_enabled(&handle, "mail", false))
        .unwrap_err();
    assert!(
        err.to_string().contains("unknown event type `mail`"),
        "{err}"
    );
    let view = rt
        .block_on(app::set_type_enabled(&handle, "messages.received", false))
        .unwrap();
    assert_eq!(
        view.types[1].reach,
        "Messages is off: no agent receives any."
    );

    // All of it is in the file, as a restart would read it, and the file's comments are
    // all still there: each command edited only its own keys.
    let text = std::fs::read_to_string(handle.settings_path()).unwrap();
    for comment in tidings_server::demo::DEMO_SETTINGS
        .lines()
        .filter(|l| l.starts_with('#'))
    {
        assert!(text.contains(comment), "lost {comment:?}:\n{text}");
    }
    let saved = tidings_core::Settings::load(handle.settings_path()).unwrap();
    assert_eq!(saved.mail.allow.len(), 2);
    assert_eq!(saved.messages.backfill_days, 30);
    assert!(!saved.messages.enabled && !saved.notifications.enabled);
    assert_eq!(saved.http.listen.port(), 4000);

    app::finish_first_run(&handle);
    assert!(!rt.block_on(app::settings_view(&handle)).first_run);
    handle.shutdown();
    rt.block_on(async { tokio::time::timeout(WAIT, handle.join()).await })
        .expect("join within the bound")
        .unwrap();
}

#[test]
fn each_notification_switch_follows_its_own_command() {
    let rt = runtime();
    let tmp = tempdir();
    let handle = start(&rt, tmp.path(), KeyringKeychain::mock(SERVICE));
    // Each kind's switch, in the window's order, follows its own command.
    let switches = |v: &app::SettingsView| {
        let v = serde_json::to_value(&v.notification_kinds).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|k| {
                (
                    k["kind"].as_str().unwrap().to_owned(),
                    k["enabled"].as_bool().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let view = rt
        .block_on(app::set_notification_kind(&handle, "store_rebuilt", false))
        .unwrap();
    let on = |k: &str, b: bool| (k.to_owned(), b);
    assert_eq!(
        switches(&view),
        [
            on("first_subscription", true),
            on("full_disk_access", true),
            on("store_rebuilt", false),
            on("settings_rejected", true),
            on("agent_asks", true)
        ]
    );
    let saved = tidings_core::Settings::load(handle.settings_path()).unwrap();
    assert!(!saved.notifications.store_rebuilt && saved.notifications.first_subscription);
    handle.shutdown();
    rt.block_on(async { tokio::time::timeout(WAIT, handle.join()).await })
        .expect("join within the bound")
        .unwrap();
}

#[test]
fn rotating_the_token_writes_a_fresh_one_to_the_endpoint_keychain() {
    let rt = runtime();
    let tmp = tempdir();
    let keychain = KeyringKeychain::mock(SERVICE);
    let handle = start(&rt, tmp.path(), keychain.clone());
    let first = rt.block_on(app::rotate_http_token(&handle)).unwrap();
    let token = first.http.token.clone().expect("a token");
    assert_eq!(token.len(), 43);
    let stored = tidings_server::http::token::load(&keychain)
        .unwrap()
        .unwrap();
    assert_eq!(stored.expose(), token);
    let second = rt.block_on(app::rotate_http_token(&handle)).unwrap();
    assert_ne!(second.http.token, Some(token));
    assert_eq!(
        rt.block_on(app::settings_view(&handle)).http.token,
        second.http.token
    );
    handle.shutdown();
    rt.block_on(async { tokio::time::timeout(WAIT, handle.join()).await })
        .expect("join within the bound")
        .unwrap();
}

#[test]
fn activity_is_newest_first_and_revoking_a_gone_client_names_it() {
    let rt = runtime();
    let tmp = tempdir();
    let handle = start(&rt, tmp.path(), KeyringKeychain::mock(SERVICE));
    let mut client = Client::connect(handle.socket_path());
    open_stream(&mut client, 1);
    let writer = Writer::new(MacHome::new(tmp.path().join("demo")));
    for sender in ["alice@example.com", "bob@example.com"] {
        let event_id = writer.mail(sender);
        client.wait_for("the event", 0, |f| is_event(f, &json!(1), &event_id));
    }
    let deadline = Instant::now() + WAIT;
    while app::activity(&handle).len() < 2 {
        assert!(Instant::now() < deadline, "two deliveries recorded");
        std::thread::sleep(Duration::from_millis(20));
    }
    let senders: Vec<String> = app::activity(&handle)
        .into_iter()
        .map(|d| d.sender)
        .collect();
    assert_eq!(senders, ["bob@example.com", "alice@example.com"]);
    app::clear_activity(&handle);
    assert!(app::activity(&handle).is_empty());
    let err = app::revoke_client(&handle, 9_999).unwrap_err().to_string();
    assert!(err.contains("no client 9999 is connected"), "{err}");
    handle.shutdown();
    rt.block_on(async { tokio::time::timeout(WAIT, handle.join()).await })
        .expect("join within the bound")
        .unwrap();
}

/// A settings.toml as a user keeps it by hand: comments above, beside and below the keys of
/// every table the app edits, and at the end.
const HAND_KEPT: &str = "\
# My Tidings settings, kept by hand and changed from the menu too.

# Mail: work only.
[mail]
enabled = true   # on since March
# Acme and my accountant.
allow = [\"example.com\", \"ana@example.org\"]  # keep this short
backfill_days = 7  # the default, written out

[messages]
# Family only.
enabled = true
allow = [\"+120255501*\"]  # the family's phones

# The endpoint, for my scripts.
[http]
enabled = false  # off unless I need it
listen = \"127.0.0.1:3917\"  # the usual port

[notifications]
# Tell me when something needs me.
enabled = true
store_rebuilt = true  # Mail re-indexes now and then

# The end.
";

/// Every comment of [`HAND_KEPT`] is still in the file, and the file holds the settings in
/// force; `what` is the command that just ran.
fn assert_kept(handle: &Handle, what: &str) {
    let text = std::fs::read_to_string(handle.settings_path()).unwrap();
    let comments: Vec<&str> = HAND_KEPT
        .lines()
        .filter_map(|l| l.find('#').map(|at| &l[at..]))
        .collect();
    assert_eq!(comments.len(), 14);
    for comment in comments {
        assert!(text.contains(comment), "{what} lost {comment:?}:\n{text}");
    }
    assert_eq!(
        tidings_core::Settings::load(handle.settings_path()).unwrap(),
        handle.settings(),
        "{what}: the file holds the settings in force:\n{text}"
    );
}

#[test]
fn every_app_command_keeps_every_comment_of_a_hand_kept_file() {
    let rt = runtime();
    let tmp = tempdir();
    let demo = tmp.path().join("demo");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&demo)
        .unwrap();
    std::fs::write(demo.join("settings.toml"), HAND_KEPT).unwrap();
    let handle = start(&rt, tmp.path(), KeyringKeychain::mock(SERVICE));
    let kept = |what: &str| assert_kept(&handle, what);
    kept("the start");
    let (mail, messages) = ("mail.received", "messages.received");
    let entries = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    // A free port for the endpoint to move to (the command succeeds whether or not the
    // endpoint can bind it).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();

    for (ty, on) in [
        (mail, false),
        (messages, false),
        (mail, true),
        (messages, true),
    ] {
        rt.block_on(app::set_type_enabled(&handle, ty, on)).unwrap();
        kept(&format!("set_type_enabled {ty} {on}"));
    }
    let allow = [
        (
            mail,
            entries(&["example.com", "ana@example.org", "bob@example.net"]),
        ),
        (mail, entries(&["example.com"])),
        (messages, Vec::new()),
        (messages, entries(&["+120255501*", "+12025550143"])),
    ];
    for (ty, list) in allow {
        let view = rt.block_on(app::set_allowlist(&handle, ty, &list)).unwrap();
        let i = usize::from(ty == messages);
        assert_eq!(view.types[i].allow, list);
        kept(&format!("set_allowlist {ty} {list:?}"));
    }
    for (ty, days) in [(mail, 30), (messages, 0), (mail, 7)] {
        rt.block_on(app::set_backfill_days(&handle, ty, days))
            .unwrap();
        kept(&format!("set_backfill_days {ty} {days}"));
    }
    for (on, port) in [(true, port), (false, port), (false, 3917)] {
        rt.block_on(app::set_http(&handle, on, port)).unwrap();
        kept(&format!("set_http {on} {port}"));
    }
    for on in [false, true] {
        rt.block_on(app::set_notifications(&handle, on)).unwrap();
        kept(&format!("set_notifications {on}"));
    }
    for kind in [
        "first_subscription",
        "full_disk_access",
        "store_rebuilt",
        "settings_rejected",
    ] {
        for on in [false, true] {
            rt.block_on(app::set_notification_kind(&handle, kind, on))
                .unwrap();
            kept(&format!("set_notification_kind {kind} {on}"));
        }
    }
    rt.block_on(app::pause_all(&handle, 60)).unwrap();
    kept("pause_all");
    rt.block_on(app::resume_all(&handle));
    kept("resume_all");
    rt.block_on(app::rotate_http_token(&handle)).unwrap();
    kept("rotate_http_token");
    app::finish_first_run(&handle);
    kept("finish_first_run");

    // Every change is in the file, as a restart would read it.
    let saved = tidings_core::Settings::load(handle.settings_path()).unwrap();
    assert!(saved.mail.enabled && saved.messages.enabled);
    assert_eq!(saved.mail.allow.len(), 1);
    assert_eq!(saved.messages.allow.len(), 2);
    assert_eq!(
        (saved.mail.backfill_days, saved.messages.backfill_days),
        (7, 0)
    );
    assert!(!saved.http.enabled && saved.http.listen.port() == 3917);
    assert!(saved.notifications.enabled && saved.notifications.settings_rejected);
    handle.shutdown();
    rt.block_on(async { tokio::time::timeout(WAIT, handle.join()).await })
        .expect("join within the bound")
        .unwrap();
}
