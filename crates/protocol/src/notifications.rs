//! Notification method names: the events extension's stream notifications, the list changes,
//! MCP's own, and the Claude Code channel's.

/// The literal of [`EVENT`], for frames built as one constant (`event.rs`).
macro_rules! event {
    () => {
        "notifications/events/event"
    };
}
pub(crate) use event;

/// What the events extension's notifications begin with: a stream's (each carries the
/// stream's id in `_meta`) and `list_changed`.
pub const EVENTS_PREFIX: &str = "notifications/events/";
/// A stream opened, or re-opened after a gap (`truncated`), at a cursor.
pub const ACTIVE: &str = "notifications/events/active";
/// One occurrence.
pub const EVENT: &str = event!();
/// Nothing new; the stream's cursor, to persist.
pub const HEARTBEAT: &str = "notifications/events/heartbeat";
/// A passing failure (an unreadable store); the stream stays open.
pub const ERROR: &str = "notifications/events/error";
/// The stream ended (a type turned off, a revocation); no final result follows it.
pub const TERMINATED: &str = "notifications/events/terminated";
/// The enabled event types changed (on a listen with `eventsListChanged`).
pub const EVENTS_LIST_CHANGED: &str = "notifications/events/list_changed";

/// The tool list changed (on a listen with `toolsListChanged`, or to a legacy connection).
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// A listen's acknowledgement: the filter fields it accepted.
pub const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// The end of the legacy `initialize` handshake.
pub const INITIALIZED: &str = "notifications/initialized";
/// A request's cancellation (`requestId`).
pub const CANCELLED: &str = "notifications/cancelled";
/// A long call's progress (`progressToken`).
pub const PROGRESS: &str = "notifications/progress";
/// One event for Claude Code's channel (`claude/channel` capability).
pub const CLAUDE_CHANNEL: &str = "notifications/claude/channel";

/// Whether `method` is one of the events extension's notifications (`notifications/events/…`).
pub fn is_events(method: &str) -> bool {
    method.starts_with(EVENTS_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_events_notifications_share_the_prefix() {
        for m in [
            ACTIVE,
            EVENT,
            HEARTBEAT,
            ERROR,
            TERMINATED,
            EVENTS_LIST_CHANGED,
        ] {
            assert!(is_events(m), "{m}");
        }
        assert!(!is_events(TOOLS_LIST_CHANGED));
    }
}
