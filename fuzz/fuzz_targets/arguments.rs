//! Argument validation from arbitrary JSON bytes: `SubscriptionParams::parse`, then
//! `Subscription::new` with both types on and an allowlist on mail only. Never panics; every
//! refusal names a field and stays short whatever the input's size (what a client sent is
//! echoed only sanitised and capped).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tidings_core::{RequestError, Settings, Subscription, SubscriptionParams};

fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(|| {
        let text = "[mail]\nenabled = true\nallow = [\"example.com\", \"+120255501*\"]\n\
                    [messages]\nenabled = true\n";
        Settings::parse(text, "fuzz.toml".as_ref()).expect("the fuzz settings parse")
    })
}

/// The longest refusal we expect: a fixed sentence plus at most a few capped echoes.
const MAX_MESSAGE: usize = 600;

fn check(e: &RequestError) {
    let message = e.to_string();
    assert!(message.chars().count() <= MAX_MESSAGE, "{message}");
    assert!(!message.contains(['\n', '\r', '\u{1b}']), "{message:?}");
    if let RequestError::InvalidParams { field, .. } = e {
        assert!(!field.is_empty());
        assert!(field.chars().count() <= 100, "{field}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(params) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let parsed = match SubscriptionParams::parse(&params) {
        Ok(p) => p,
        Err(e) => return check(&e),
    };
    if let Some(n) = parsed.max_events {
        assert!((1..=tidings_core::request::MAX_EVENTS_CAP).contains(&n));
    }
    match Subscription::new(&parsed.name, &parsed.arguments, settings()) {
        Ok(sub) => {
            // Whatever the client asked, the user's mail allowlist is on top.
            if let tidings_core::Filter::Mail(f) = sub.filter() {
                assert_eq!(f.allow.len(), 2);
            }
        }
        Err(e) => check(&e),
    }
});
