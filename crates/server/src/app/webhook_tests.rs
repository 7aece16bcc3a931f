//! The window's webhook commands over a demo engine: a destination added (normalised) or
//! refused naming the rule, removed, a question answered either way, and an unknown
//! subscription ended; each refusal names what is wrong.

use super::*;
use crate::engine::{Config, DemoConfig};
use crate::{Handle, Tidings};

fn demo(dir: &std::path::Path) -> Handle {
    Tidings::start(Config::demo(DemoConfig {
        data_dir: Some(dir.join("d")),
        simulate: None,
        conformance_controls: false,
    }))
    .expect("the engine starts on demo stores")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destinations_are_added_normalised_refused_by_rule_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let handle = demo(dir.path());
    allow_destination(&handle, "HTTPS://Hooks.Example.com:443/")
        .await
        .unwrap();
    assert_eq!(
        handle.daemon().state().webhooks.destinations,
        ["https://hooks.example.com"]
    );
    let saved = std::fs::read_to_string(handle.daemon().settings_path()).unwrap();
    assert!(saved.contains("\"https://hooks.example.com\""), "{saved}");

    let e = allow_destination(&handle, "http://hooks.example.net")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("https://hooks.example.net"), "{e}");
    let e = remove_destination(&handle, "https://other.example")
        .await
        .unwrap_err();
    assert!(matches!(e, AppError::NotADestination { .. }), "{e}");

    remove_destination(&handle, "https://hooks.example.com")
        .await
        .unwrap();
    assert!(handle.daemon().state().webhooks.destinations.is_empty());
    let e = end_webhook(&handle, "sub_0000000000000000")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("sub_0000000000000000"), "{e}");
    handle.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_closed_by_either_answer_and_allow_lists_it() {
    let dir = tempfile::tempdir().unwrap();
    let handle = demo(dir.path());
    let webhooks = handle.daemon().webhooks();
    assert!(webhooks.ask("https://a.example", "claude"));
    assert!(webhooks.ask("https://b.example", "claude"));
    assert_eq!(handle.daemon().state().webhooks.asks.len(), 2);

    answer_destination(&handle, "https://a.example", false)
        .await
        .unwrap();
    let state = handle.daemon().state().webhooks;
    assert_eq!(state.asks.len(), 1, "{state:?}");
    assert!(state.destinations.is_empty(), "Don't Allow lists nothing");

    answer_destination(&handle, "https://b.example", true)
        .await
        .unwrap();
    let state = handle.daemon().state().webhooks;
    assert!(state.asks.is_empty(), "{state:?}");
    assert_eq!(state.destinations, ["https://b.example"]);
    handle.shutdown();
}
