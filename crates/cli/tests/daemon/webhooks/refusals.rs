//! What `events/subscribe` and `events/unsubscribe` refuse: an endpoint that fails the
//! challenge or cannot be reached, an origin the user never allowed, a name that resolves to
//! loopback, an unknown key, and the 1001st subscription of one agent.

use std::net::{TcpListener, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use super::receiver::{Receiver, Reply, SECRET_A, accepting};
use super::{Agent, daemon_allowing, error_of};

#[test]
fn a_receiver_that_does_not_echo_the_challenge_is_refused() {
    let receiver = Receiver::plain(Arc::new(|_: &_| Reply::Status(200, b"{}".to_vec())));
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);
    let response = agent.subscribe(&receiver.url(), SECRET_A, &json!({}));
    let error = error_of(&response);
    assert_eq!(error["code"], -32027, "{error}");
    assert_eq!(error["data"]["reason"], "challenge_failed", "{error}");
    assert!(
        !error.to_string().contains("MfKQ9r8"),
        "no secret in an error: {error}"
    );
    assert_eq!(
        agent.webhooks()["subscriptions"],
        json!([]),
        "nothing subscribed"
    );
}

#[test]
fn a_closed_port_is_connection_refused() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let origin = format!("http://127.0.0.1:{port}");
    let daemon = daemon_allowing(std::slice::from_ref(&origin));
    let mut agent = Agent::connect(&daemon);
    let response = agent.subscribe(&format!("{origin}/hook"), SECRET_A, &json!({}));
    let error = error_of(&response);
    assert_eq!(error["code"], -32027, "{error}");
    assert_eq!(error["data"]["reason"], "connection_refused", "{error}");
}

#[test]
fn an_origin_not_on_the_list_is_forbidden_naming_the_fix() {
    let allowed = Receiver::plain(accepting());
    let other = Receiver::plain(accepting());
    let daemon = daemon_allowing(&[allowed.origin()]);
    let mut agent = Agent::connect(&daemon);
    let response = agent.subscribe(&other.url(), SECRET_A, &json!({}));
    let error = error_of(&response);
    assert_eq!(error["code"], -32024, "{error}");
    assert_eq!(
        error["data"]["reason"], "destination_not_allowed",
        "{error}"
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("tidings webhooks allow {}", other.origin())),
        "{message}"
    );
    assert!(
        other.requests().is_empty(),
        "nothing was sent to an origin not on the list"
    );
}

#[test]
fn a_name_that_resolves_to_loopback_is_refused_before_connecting() {
    let Some(name) = std::process::Command::new("hostname")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| !name.is_empty() && name != "localhost" && !name.contains('.'))
    else {
        eprintln!("skipped: this machine's hostname is unknown or not a single label");
        return;
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let resolved: Vec<_> = match (name.as_str(), port).to_socket_addrs() {
        Ok(addresses) => addresses.collect(),
        Err(_) => Vec::new(),
    };
    if resolved.is_empty() || !resolved.iter().any(|a| a.ip().is_loopback()) {
        eprintln!("skipped: {name} does not resolve to a loopback address here ({resolved:?})");
        return;
    }
    // Count every connection the listener is offered.
    let accepted = Arc::new(AtomicUsize::new(0));
    listener.set_nonblocking(true).unwrap();
    let counter = Arc::clone(&accepted);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let watcher = std::thread::spawn(move || {
        while !stopped.load(Ordering::SeqCst) {
            if listener.accept().is_ok() {
                counter.fetch_add(1, Ordering::SeqCst);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // Anything still in the backlog counts too.
        while listener.accept().is_ok() {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });

    let origin = format!("https://{name}:{port}");
    let daemon = daemon_allowing(std::slice::from_ref(&origin));
    let mut agent = Agent::connect(&daemon);
    let response = agent.subscribe(&format!("{origin}/hook"), SECRET_A, &json!({}));
    stop.store(true, Ordering::SeqCst);
    watcher.join().unwrap();
    let error = error_of(&response);
    assert_eq!(error["code"], -32027, "{error}");
    assert_eq!(error["data"]["reason"], "connection_refused", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("loopback"),
        "the message names the address class: {error}"
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "the daemon connected to a refused address"
    );
}

#[test]
fn unsubscribe_ends_it_and_a_second_is_not_found() {
    let receiver = Receiver::plain(accepting());
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);
    agent.subscribed(&receiver.url(), SECRET_A);
    assert_eq!(
        agent.webhooks()["subscriptions"].as_array().unwrap().len(),
        1
    );

    let response = agent.unsubscribe(&receiver.url());
    assert!(response.get("error").is_none(), "{response}");
    let mut result = response["result"].as_object().unwrap().clone();
    result.remove("resultType");
    result.remove("_meta");
    assert!(result.is_empty(), "an empty result: {response}");
    assert_eq!(agent.webhooks()["subscriptions"], json!([]));

    let again = agent.unsubscribe(&receiver.url());
    let error = error_of(&again);
    assert_eq!(error["code"], -32023, "{error}");
    assert_eq!(error["data"]["kind"], "subscription", "{error}");
}

#[test]
fn the_thousand_and_first_subscription_of_an_agent_is_refused() {
    let receiver = Receiver::plain(accepting());
    let daemon = daemon_allowing(&[receiver.origin()]);
    let mut agent = Agent::connect(&daemon);
    // One URL, so one challenge; each subscription its own key by its arguments.
    for n in 0..1000 {
        let response = agent.subscribe(
            &receiver.url(),
            SECRET_A,
            &json!({"domains": [format!("d{n}.example.com")]}),
        );
        assert!(
            response.get("error").is_none(),
            "subscription {n} refused: {response}"
        );
    }
    let response = agent.subscribe(
        &receiver.url(),
        SECRET_A,
        &json!({"domains": ["d1000.example.com"]}),
    );
    let error = error_of(&response);
    assert_eq!(error["code"], -32025, "{error}");
    assert!(error["data"]["limit"].is_string(), "{error}");
    let challenges = receiver
        .requests()
        .iter()
        .filter(|s| s.control() == Some("verification"))
        .count();
    assert_eq!(challenges, 1, "verified once per (principal, url)");
    // A refresh of one held is still fine at the cap.
    let refresh = agent.subscribe(
        &receiver.url(),
        SECRET_A,
        &json!({"domains": ["d0.example.com"]}),
    );
    assert!(refresh.get("error").is_none(), "{refresh}");
}
