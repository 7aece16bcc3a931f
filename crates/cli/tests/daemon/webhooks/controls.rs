//! The conformance suite's webhook controls (`--conformance-controls`, demo only), driven as
//! the suite drives them, through `tools/call`: each acts through the registry a real
//! subscription uses.

use serde_json::{Value, json};

use super::receiver::{Receiver, accepting};
use super::{Agent, settings};
use crate::common::Daemon;

/// Call control `name` with `arguments`; its text, or a panic naming a tool error.
fn control(agent: &mut Agent, name: &str, arguments: &Value) -> String {
    let frame = agent.call("tools/call", json!({"name": name, "arguments": arguments}));
    let result = &frame["result"];
    assert_ne!(result["isError"], true, "{name}: {frame}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{name}: {frame}"))
        .to_owned()
}

#[test]
fn the_webhook_controls_act_on_real_subscriptions() {
    let receiver = Receiver::plain(accepting());
    let daemon = Daemon::builder()
        .settings(&settings(&[]))
        .args(&["--conformance-controls"])
        .start();
    let mut agent = Agent::connect(&daemon);

    // Another tenant cannot be registered to an origin the user did not list...
    let frame = agent.call(
        "tools/call",
        json!({"name": "events_conformance_subscribe_as",
               "arguments": {"principal": "tenant-b", "url": receiver.url(), "name": "mail.received",
                             "arguments": {"domains": ["example.com"]}}}),
    );
    assert_eq!(frame["result"]["isError"], true, "{frame}");
    // ...until the control adds it to the list, as the user would.
    control(
        &mut agent,
        "events_conformance_allow_callback_origin",
        &json!({"origin": receiver.origin()}),
    );
    let id = control(
        &mut agent,
        "events_conformance_subscribe_as",
        &json!({"principal": "tenant-b", "url": receiver.url(), "name": "mail.received",
               "arguments": {"domains": ["example.com"]}}),
    );
    assert!(id.starts_with("sub_"), "{id}");
    let exists = |agent: &mut Agent, args: Value| {
        control(agent, "events_conformance_subscription_exists", &args)
    };
    assert_eq!(exists(&mut agent, json!({"id": id})), "true");
    assert_eq!(
        exists(
            &mut agent,
            json!({"principal": "tenant-b", "url": receiver.url(), "name": "mail.received",
                   "arguments": {"domains": ["example.com"]}})
        ),
        "true",
        "found by its key too"
    );
    assert_eq!(
        exists(
            &mut agent,
            json!({"principal": "tenant-c", "url": receiver.url(), "name": "mail.received",
                   "arguments": {"domains": ["example.com"]}})
        ),
        "false",
        "the principal is part of the key"
    );
    assert_eq!(
        control(
            &mut agent,
            "events_conformance_subscription_state",
            &json!({"id": id})
        ),
        "active"
    );

    // A gap, then a restart over the same file, then a termination: each reaches the receiver.
    control(
        &mut agent,
        "events_conformance_webhook_gap",
        &json!({"id": id}),
    );
    receiver.wait_control("gap");
    let before = control(&mut agent, "events_conformance_generation", &json!({}));
    let after = control(&mut agent, "events_conformance_restart", &json!({}));
    assert_eq!(
        after.parse::<u64>().unwrap(),
        before.parse::<u64>().unwrap() + 1
    );
    assert_eq!(
        exists(&mut agent, json!({"id": id})),
        "true",
        "kept across the restart"
    );
    control(
        &mut agent,
        "events_conformance_webhook_terminate",
        &json!({"id": id}),
    );
    let ended = receiver.wait_control("terminated");
    assert_eq!(ended.header("x-mcp-subscription-id"), id);
    assert_eq!(
        control(
            &mut agent,
            "events_conformance_subscription_state",
            &json!({"id": id})
        ),
        "absent"
    );
    let quota: Value =
        serde_json::from_str(&control(&mut agent, "events_conformance_quota", &json!({}))).unwrap();
    assert_eq!(quota["max"], 1000, "{quota}");
}
