//! Notices as the host shows them: the engine in-process on demo stores, a recording
//! notifier behind `notices::deliver`, clients on the real socket. A client's first
//! subscription to a type is notified once (not for its second stream of that type), each
//! type once, and a switch turned off silences its kind while the others still come.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tidings_platform::RecordingNotifier;
use tidings_server::engine::{Config, DemoConfig, HttpConfig};
use tidings_server::http::auth::AuthMode;
use tidings_server::{Handle, Tidings, notices};

use crate::common::{Raw, WAIT};

fn start(rt: &tokio::runtime::Runtime, tmp: &Path) -> Handle {
    let mut config = Config::demo(DemoConfig {
        data_dir: Some(tmp.join("demo")),
        simulate: None,
        conformance_controls: false,
    });
    config.http = HttpConfig {
        forced: None,
        auth: Arc::new(|| Ok(AuthMode::NoAuth)),
    };
    let _in_runtime = rt.enter();
    Tidings::start(config).expect("the engine starts on demo stores")
}

/// Wait (bounded) until the notifier has shown `n` notifications; returns them.
fn wait_shown(notifier: &RecordingNotifier, n: usize) -> Vec<(String, String)> {
    let deadline = Instant::now() + WAIT;
    loop {
        let shown = notifier.shown();
        if shown.len() >= n {
            return shown;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for notification {n}: {shown:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn a_first_subscription_is_notified_once_and_its_switch_silences_it() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .unwrap();
    let handle = start(&rt, tmp.path());
    let notifier = Arc::new(RecordingNotifier::new());
    {
        let _in_runtime = rt.enter();
        notices::deliver(handle.notices(), notifier.clone());
    }
    let socket = handle.socket_path().to_owned();

    let mut claude = Raw::connect(&socket, "Claude Code");
    claude.stream(1, "mail.received", json!({"domains": ["example.com"]}));
    let shown = wait_shown(&notifier, 1);
    assert_eq!(
        shown[0].1, "Claude Code is now notified of mail from example.com",
        "{shown:?}"
    );
    // A second stream of the same client and type, and then a new type: notices go out in
    // order, so when the messages one is there, a second mail one would be before it.
    claude.stream(2, "mail.received", json!({"domains": ["example.org"]}));
    claude.stream(3, "messages.received", json!({}));
    let shown = wait_shown(&notifier, 2);
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert_eq!(shown[1].1, "Claude Code is now notified of all messages");

    // The switch off: a new client's first subscription is not notified; a rejected
    // settings edit (its own switch, still on) is, and comes after where it would be.
    rt.block_on(tidings_server::app::set_notification_kind(
        &handle,
        "first_subscription",
        false,
    ))
    .unwrap();
    assert!(!handle.settings().notifications.first_subscription);
    let wrong = rt.block_on(tidings_server::app::set_notification_kind(
        &handle, "sound", true,
    ));
    assert!(
        wrong
            .unwrap_err()
            .to_string()
            .contains("unknown notification `sound`")
    );
    let mut cursor = Raw::connect(&socket, "Cursor");
    cursor.stream(1, "mail.received", json!({"domains": ["example.com"]}));
    std::fs::write(handle.settings_path(), "[mail]\nenabled = maybe\n").unwrap();
    let shown = wait_shown(&notifier, 3);
    assert_eq!(shown.len(), 3, "{shown:?}");
    assert_eq!(shown[2].0, "settings.toml rejected", "{shown:?}");
    assert!(
        !shown.iter().any(|(_, body)| body.starts_with("Cursor")),
        "{shown:?}"
    );

    handle.shutdown();
    rt.block_on(async { tokio::time::timeout(WAIT, handle.join()).await })
        .expect("join in time")
        .expect("a clean stop");
}

#[test]
fn a_notifier_that_fails_is_not_fatal() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .unwrap();
    let handle = start(&rt, tmp.path());
    let notifier = Arc::new(RecordingNotifier::new());
    notifier.set_failing(true);
    {
        let _in_runtime = rt.enter();
        notices::deliver(handle.notices(), notifier.clone());
    }
    let socket = handle.socket_path().to_owned();
    let mut a = Raw::connect(&socket, "A");
    a.stream(1, "mail.received", json!({"domains": ["example.com"]}));
    let mut b = Raw::connect(&socket, "B");
    b.stream(1, "mail.received", json!({"domains": ["example.com"]}));
    // Both were tried (the delivery goes on after a failure) and the engine still serves.
    wait_shown(&notifier, 2);
    let mut c = Raw::connect(&socket, "C");
    c.stream(1, "messages.received", json!({}));
    handle.shutdown();
    rt.block_on(async { tokio::time::timeout(WAIT, handle.join()).await })
        .expect("join in time")
        .expect("a clean stop");
}
