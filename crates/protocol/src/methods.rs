//! Request method names: MCP's own, the events extension's, and Tidings' socket-only ones.

/// The `initialize` handshake of the legacy era (a Claude Code channel, the tools entries).
pub const INITIALIZE: &str = "initialize";
/// `ping`.
pub const PING: &str = "ping";
/// The tool list.
pub const TOOLS_LIST: &str = "tools/list";
/// A tool call.
pub const TOOLS_CALL: &str = "tools/call";
/// The 2026-07-28 replacement for `initialize`: capabilities and supported versions.
pub const DISCOVER: &str = "server/discover";
/// A long-lived request for list-changed notifications (`eventsListChanged`,
/// `toolsListChanged`).
pub const LISTEN: &str = "subscriptions/listen";

/// What every events extension method begins with.
pub const EVENTS_PREFIX: &str = "events/";
/// The descriptors of the enabled event types.
pub const EVENTS_LIST: &str = "events/list";
/// One poll of an event type from a cursor.
pub const EVENTS_POLL: &str = "events/poll";
/// A push stream of an event type.
pub const EVENTS_STREAM: &str = "events/stream";
/// Webhook delivery: create or refresh a subscription (an idempotent upsert on its key).
pub const EVENTS_SUBSCRIBE: &str = "events/subscribe";
/// Webhook delivery's end, by the subscription's key.
pub const EVENTS_UNSUBSCRIBE: &str = "events/unsubscribe";

/// The daemon's `State`, on the socket only.
pub const STATUS: &str = "tidings/status";
/// Re-read the HTTP token after `tidings token rotate` wrote a new one, on the socket only.
pub const TOKEN_ROTATE: &str = "tidings/token/rotate";

/// Whether `method` is one of the events extension's (`events/…`).
pub fn is_events(method: &str) -> bool {
    method.starts_with(EVENTS_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_events_methods_share_the_prefix() {
        for m in [
            EVENTS_LIST,
            EVENTS_POLL,
            EVENTS_STREAM,
            EVENTS_SUBSCRIBE,
            EVENTS_UNSUBSCRIBE,
        ] {
            assert!(is_events(m), "{m}");
        }
        assert!(!is_events(LISTEN));
    }
}
