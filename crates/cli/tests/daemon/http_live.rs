//! `[http] enabled` and `listen` apply live, over real HTTP on 127.0.0.1: enabling starts the
//! endpoint (making the token on first enable), disabling ends its streams and releases the
//! port, a new `listen` moves it, a bad setting leaves the daemon and socket serving and is
//! retried on the next change, `--http` holds the endpoint on whatever settings say, and a
//! keychain that hangs delays neither the socket nor shutdown.

use crate::http_common;
use crate::http_common::live::{Live, free_addr, refused};
use crate::http_common::{sub, wait_streams, within};
use axum::http::StatusCode;
use serde_json::json;
use tidings_server::http::supervisor::HttpState;

#[tokio::test(flavor = "multi_thread")]
async fn enabling_live_starts_the_endpoint_and_disabling_ends_its_streams_and_frees_the_port() {
    let live = Live::start().await;
    assert_eq!(live.http.state(), HttpState::Off);
    assert_eq!(
        live.token(),
        None,
        "no token before the endpoint is first enabled"
    );
    let addr = free_addr();
    assert!(refused(addr).await);

    assert_eq!(live.daemon.state().http.describe(), "off");
    live.set_http(true, addr);
    live.wait_serving(addr).await;
    assert_eq!(
        live.daemon.state().http.describe(),
        format!("serving at http://{addr}/mcp")
    );
    let token = live.token().expect("the first enable makes the token");
    let list = live.request(addr, 1, "events/list", json!({})).send().await;
    assert_eq!(list.status(), StatusCode::OK);

    let mut stream = live
        .request(addr, 2, "events/stream", sub("mail.received"))
        .send()
        .await;
    stream.next_method("notifications/events/active").await;
    wait_streams(&live.daemon, 1).await;

    live.set_http(false, addr);
    // The open stream's response ends (`next_event` is `None` at the end of the body)…
    within(async { while stream.next_event().await.is_some() {} }).await;
    wait_streams(&live.daemon, 0).await;
    live.wait_state(|s| *s == HttpState::Off).await;
    assert_eq!(live.daemon.state().http.describe(), "off");
    // …and the port is released: refused, and free to bind again.
    assert!(refused(addr).await);
    drop(std::net::TcpListener::bind(addr).expect("the port was not released"));
    // The socket never stopped.
    let answer = live.socket_call("events/list", json!({})).await;
    assert!(answer["result"]["events"].is_array(), "{answer}");

    // Enabling again reuses the token in the keychain.
    live.set_http(true, addr);
    live.wait_serving(addr).await;
    assert_eq!(live.token().as_deref(), Some(token.as_str()));
    let poll = live
        .request(addr, 3, "events/poll", sub("mail.received"))
        .send()
        .await;
    assert_eq!(poll.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn changing_listen_moves_the_endpoint_and_ends_the_old_streams() {
    let live = Live::start().await;
    let (old, new) = (free_addr(), free_addr());
    assert_ne!(old, new);
    live.set_http(true, old);
    live.wait_serving(old).await;
    let mut stream = live
        .request(old, 1, "events/stream", sub("messages.received"))
        .send()
        .await;
    stream.next_method("notifications/events/active").await;

    live.set_http(true, new);
    live.wait_serving(new).await;
    within(async { while stream.next_event().await.is_some() {} }).await;
    wait_streams(&live.daemon, 0).await;
    assert!(refused(old).await);
    let list = live.request(new, 2, "events/list", json!({})).send().await;
    assert_eq!(list.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_live_setting_keeps_the_daemon_serving_and_the_next_change_retries() {
    let live = Live::start().await;

    // Not loopback: refused before the keychain is asked, and the socket still answers.
    let wide = "0.0.0.0:0".parse().unwrap();
    live.set_http(true, wide);
    let state = live
        .wait_state(|s| matches!(s, HttpState::Failed { .. }))
        .await;
    let HttpState::Failed { listen, error } = state else {
        unreachable!()
    };
    assert_eq!(listen, wide);
    assert!(error.contains("only a loopback address"), "{error}");
    assert!(
        live.daemon
            .state()
            .http
            .describe()
            .starts_with("not serving on 0.0.0.0:0: ")
    );
    assert_eq!(live.token(), None);
    let answer = live.socket_call("events/list", json!({})).await;
    assert!(answer["result"]["events"].is_array(), "{answer}");

    // A port someone else holds: the bind fails and names the address…
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    live.set_http(true, addr);
    let state = live
        .wait_state(|s| matches!(s, HttpState::Failed { listen, .. } if *listen == addr))
        .await;
    let HttpState::Failed { error, .. } = state else {
        unreachable!()
    };
    assert!(
        error.contains(&format!("cannot listen on {addr}")),
        "{error}"
    );
    let answer = live.socket_call("events/list", json!({})).await;
    assert!(answer["result"]["events"].is_array(), "{answer}");

    // …and once it is free, the next settings change (even an unrelated one) retries.
    drop(taken);
    live.daemon
        .update_settings(|s| s.http.allowed_origins = vec!["http://localhost:5173".into()])
        .unwrap();
    live.wait_serving(addr).await;
    let list = live.request(addr, 1, "events/list", json!({})).send().await;
    assert_eq!(list.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_http_forced_settings_cannot_turn_it_off_or_move_it() {
    let live = Live::start_forced(Some("127.0.0.1:0".parse().unwrap())).await;
    let HttpState::Serving { addr, no_auth } = live.http.state() else {
        panic!(
            "a forced endpoint serves once started: {:?}",
            live.http.state()
        )
    };
    assert!(!no_auth);
    live.set_http(false, free_addr());
    live.set_http(true, free_addr());
    // The supervisor does not follow settings under --http, so there is nothing to wait for.
    assert_eq!(live.http.state(), HttpState::Serving { addr, no_auth });
    let list = live.request(addr, 1, "events/list", json!({})).send().await;
    assert_eq!(list.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forced_endpoint_that_cannot_start_is_an_error() {
    let (daemon, _demo, _home) = http_common::demo_daemon(|_| {});
    let auth: tidings_server::http::supervisor::AuthSource =
        std::sync::Arc::new(|| Ok(tidings_server::http::auth::AuthMode::NoAuth));
    let err = tidings_server::http::supervisor::HttpSupervisor::start(
        &daemon,
        Some("0.0.0.0:3917".parse().unwrap()),
        auth,
    )
    .await
    .err()
    .expect("a non-loopback --http must fail");
    assert!(err.to_string().contains("only a loopback address"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_keychain_that_hangs_blocks_neither_the_socket_nor_shutdown() {
    // The keychain call blocks until the test releases it (dropping the sender).
    let (release, hang) = std::sync::mpsc::channel::<()>();
    let hang = std::sync::Mutex::new(hang);
    let auth: tidings_server::http::supervisor::AuthSource = std::sync::Arc::new(move || {
        let _ = hang.lock().unwrap().recv();
        Err(tidings_server::http::HttpError::AlreadyServing)
    });
    let live = Live::spawn_with(free_addr(), auth);
    assert_eq!(live.http.state(), HttpState::Starting);
    let answer = live.socket_call("events/list", json!({})).await;
    assert!(answer["result"]["events"].is_array(), "{answer}");

    live.daemon.shutdown();
    let state = live.wait_state(|s| *s == HttpState::Off).await;
    assert_eq!(state, HttpState::Off);
    within(live.http.stopped()).await;
    drop(release);
}
