//! Requests the daemon refuses, each with the SEP-3415 code and `data` naming what is wrong.

use std::time::{Duration, Instant};

use crate::common::{Daemon, WAIT};
use serde_json::json;

#[test]
fn an_unknown_event_type_is_not_found() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    for (id, method) in [(1, "events/poll"), (2, "events/stream")] {
        let error = client.error(
            id,
            method,
            json!({"name": "calendar.changed", "arguments": {}}),
        );
        assert_eq!(error["code"], -32023, "{method}: {error}");
    }
}

#[test]
fn a_wrongly_typed_argument_is_invalid_params_naming_it() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    let error = client.error(
        1,
        "events/poll",
        json!({"name": "mail.received", "arguments": {"domains": "example.com"}}),
    );
    assert_eq!(error["code"], -32602, "{error}");
    let field = error["data"]["field"].as_str().unwrap_or_default();
    assert!(
        field.contains("domains"),
        "data.field should name the argument: {error}"
    );
}

#[test]
fn a_wrongly_typed_service_or_account_is_invalid_params_naming_it() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    for (id, name, arguments, field) in [
        (
            1,
            "messages.received",
            json!({"service": 3}),
            "arguments.service",
        ),
        (
            2,
            "messages.received",
            json!({"service": "Fax"}),
            "arguments.service",
        ),
        (
            3,
            "mail.received",
            json!({"account": ["me@example.com"]}),
            "arguments.account",
        ),
    ] {
        let error = client.error(
            id,
            "events/poll",
            json!({"name": name, "arguments": arguments}),
        );
        assert_eq!(error["code"], -32602, "{error}");
        assert_eq!(error["data"]["field"], field, "{error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("must be"),
            "a known argument with a wrong value: {error}"
        );
    }
}

#[test]
fn a_garbage_cursor_is_invalid_params_naming_the_cursor() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    for (id, method) in [(1, "events/poll"), (2, "events/stream")] {
        let error = client.error(
            id,
            method,
            json!({"name": "mail.received", "arguments": {}, "cursor": "not-a-cursor"}),
        );
        assert_eq!(error["code"], -32602, "{method}: {error}");
        assert_eq!(error["data"]["field"], "cursor", "{method}: {error}");
    }
}

#[test]
fn webhook_subscribe_to_an_origin_not_on_the_list_is_forbidden() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    let error = client.error(
        1,
        "events/subscribe",
        json!({"name": "mail.received", "arguments": {},
               "delivery": {"mode": "webhook", "url": "https://example.com/hook",
                            "secret": "whsec_MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0"}}),
    );
    assert_eq!(error["code"], -32024, "{error}");
    assert_eq!(
        error["data"]["reason"], "destination_not_allowed",
        "{error}"
    );
    assert_eq!(error["data"]["origin"], "https://example.com", "{error}");
}

#[test]
fn no_sender_and_no_allowlist_is_refused() {
    let daemon = Daemon::start();
    let mut client = daemon.client();
    // With the demo allowlist, an unfiltered poll is fine.
    client.result(
        1,
        "events/poll",
        json!({"name": "mail.received", "arguments": {}}),
    );

    daemon.write_settings(
        "[mail]\nenabled = true\nallow = []\n\n[messages]\nenabled = true\nallow = []\n",
    );
    // The daemon applies the edit when its watcher sees it: poll until it does.
    let deadline = Instant::now() + WAIT;
    let mut id = 1;
    let error = loop {
        id += 1;
        let response = client.call(
            id,
            "events/poll",
            json!({"name": "mail.received", "arguments": {}}),
        );
        if let Some(error) = response.get("error") {
            break error.clone();
        }
        assert!(
            Instant::now() < deadline,
            "the cleared allowlist never applied"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("sender"),
        "{error}"
    );

    // Naming a sender is still allowed.
    let ok = client.result(
        100,
        "events/poll",
        json!({"name": "mail.received", "arguments": {"from": ["alice@example.com"]}}),
    );
    assert!(ok["cursor"].is_string(), "{ok}");
}
