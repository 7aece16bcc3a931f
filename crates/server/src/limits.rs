//! Server-side limits: stream caps (per socket connection, per HTTP token, per process), the
//! frame and HTTP body size limits, and the heartbeat and safety-tick periods of push streams.

use std::time::Duration;

/// The limits one daemon enforces. Every default lives in [`Default`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerLimits {
    /// Open `events/stream`s one connection may hold; the next gets ResourceExhausted.
    pub streams_per_connection: usize,
    /// Open `events/stream`s one HTTP bearer token may hold (each stream is its own POST, so
    /// the token is the only thing that ties them to one client).
    pub streams_per_token: usize,
    /// Open `events/stream`s across the whole process, socket and HTTP together.
    pub streams_total: usize,
    /// The longest frame (one JSON-RPC line, without its newline) a client may send.
    pub max_frame_bytes: usize,
    /// The largest HTTP request body (one JSON-RPC message) the endpoint reads; more is 413.
    pub max_http_body_bytes: usize,
    /// The period of `notifications/events/heartbeat` on every stream. Conformance wants at
    /// least one every 30 s, so the default keeps a margin.
    pub heartbeat: Duration,
    /// How often the hub re-checks each store even without a file event, to cover coalesced
    /// or missed events and to retry a watch on a directory that did not exist yet.
    pub safety_tick: Duration,
}

/// 1 MiB, the frame limit design.md fixes.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 1024 * 1024;

impl Default for ServerLimits {
    fn default() -> ServerLimits {
        ServerLimits {
            streams_per_connection: 10,
            streams_per_token: 32,
            streams_total: 256,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            max_http_body_bytes: DEFAULT_MAX_FRAME_BYTES,
            heartbeat: Duration::from_secs(25),
            safety_tick: Duration::from_secs(30),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_design() {
        let l = ServerLimits::default();
        assert_eq!(l.streams_per_connection, 10);
        assert_eq!(l.streams_total, 256);
        assert_eq!(l.streams_per_token, 32);
        assert_eq!(l.max_frame_bytes, 1_048_576);
        assert_eq!(l.max_http_body_bytes, 1_048_576);
        assert!(l.heartbeat < Duration::from_secs(30));
    }
}
