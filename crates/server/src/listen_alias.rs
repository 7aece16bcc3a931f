//! The one `subscriptions/listen` rewrite, shared by the socket's framer and the HTTP guard.
//!
//! rmcp 3.11 parses listen's filter into its typed `SubscriptionFilter`, which drops the
//! events extension's `eventsListChanged` field, and acknowledges from that typed filter. So
//! both transports rename the method to [`LISTEN_ALIAS`], a custom method whose params reach
//! the handler (`events/listen.rs`) as raw JSON. A leaf, so neither transport depends on the
//! other or on the handler for it.

use serde_json::{Map, Value};
use tidings_protocol::methods::LISTEN;

/// The internal method name `subscriptions/listen` is served under: never on the wire.
pub const LISTEN_ALIAS: &str = "tidings/internal/subscriptions/listen";

/// Rename a `subscriptions/listen` message to the alias; true when it was one.
pub fn rename_listen(message: &mut Map<String, Value>) -> bool {
    if message.get("method").and_then(Value::as_str) != Some(LISTEN) {
        return false;
    }
    message.insert("method".into(), Value::String(LISTEN_ALIAS.into()));
    true
}

/// The name a person knows a method by: the alias shows as `subscriptions/listen`.
pub fn shown(method: &str) -> &str {
    if method == LISTEN_ALIAS {
        LISTEN
    } else {
        method
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_listen_is_renamed() {
        let mut m = json!({"method": "subscriptions/listen"})
            .as_object()
            .cloned()
            .unwrap();
        assert!(rename_listen(&mut m));
        assert_eq!(m["method"], LISTEN_ALIAS);
        let mut other = json!({"method": "events/list"})
            .as_object()
            .cloned()
            .unwrap();
        assert!(!rename_listen(&mut other));
        assert_eq!(shown(LISTEN_ALIAS), LISTEN);
    }
}
