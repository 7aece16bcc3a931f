//! Server-side limits: stream caps (per socket connection, per HTTP token, per process), the
//! frame and HTTP body size limits, the socket and HTTP connection caps, HTTP read deadlines, and the
//! heartbeat and safety-tick periods of push streams, and the pull tools' progress period.

use std::time::Duration;

/// How long a request of an agent with no grant waits for the user's answer by default:
/// below the tool-call timeouts of the hosts (a minute and more), long enough to read a
/// notification and click.
pub const ASK_WAIT: Duration = Duration::from_secs(20);

/// The limits one daemon enforces. Every default lives in [`Default`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerLimits {
    /// Open `events/stream`s one connection may hold; the next gets `ResourceExhausted`.
    pub streams_per_connection: usize,
    /// Open `events/stream`s one HTTP bearer token may hold (each stream is its own POST, so
    /// the token is the only thing that ties them to one client).
    pub streams_per_token: usize,
    /// Open `events/stream`s across the whole process, socket and HTTP together. Set from
    /// measurement (docs/decisions/fanout.md): with shared reads a commit costs one read
    /// however many streams listen, and 1,000 streams cost a few MB and no thread each, so
    /// the cap is 1,024; the work per commit that remains grows with the frames written.
    pub streams_total: usize,
    /// The longest frame (one JSON-RPC line, without its newline) a client may send.
    pub max_frame_bytes: usize,
    /// The largest HTTP request body (one JSON-RPC message) the endpoint reads; more is 413.
    pub max_http_body_bytes: usize,
    /// HTTP connections the endpoint serves at once; one more is closed as soon as it is
    /// accepted, so idle connects cannot use up the process's descriptors (and with them the
    /// Unix socket's accept loop).
    pub max_http_connections: usize,
    /// Unix socket connections served at once. When one more arrives, the connection idle
    /// longest among those holding no stream is closed to make room; if every one holds a
    /// stream, the newcomer is closed. With macOS's default of 256 descriptors, this, the
    /// HTTP cap and the stores leave room to spare.
    pub max_socket_connections: usize,
    /// How long an HTTP client may take to send a request's headers (also an idle
    /// keep-alive connection's limit); then the connection is closed.
    pub http_header_timeout: Duration,
    /// How long an HTTP client may take to send a request's body once its headers are in;
    /// then 408 with a JSON-RPC error naming the limit.
    pub http_body_timeout: Duration,
    /// How long a stopping endpoint waits for its connections to finish (each stream sends
    /// its final result first) before it drops the ones still open.
    pub http_stop_grace: Duration,
    /// The period of `notifications/events/heartbeat` on every stream. Conformance wants at
    /// least one every 30 s, so the default keeps a margin.
    pub heartbeat: Duration,
    /// How often the hub re-checks each store even without a file event, to cover coalesced
    /// or missed events and to retry a watch on a directory that did not exist yet.
    pub safety_tick: Duration,
    /// How long a request of an agent with no grant waits for the user's answer (below the
    /// hosts' tool timeouts) before it is refused.
    pub ask_wait: Duration,
    /// How often the hub re-checks a store while a stream waits on it, to cover a commit that
    /// becomes visible after the hub stopped following its file event (docs/architecture.md).
    pub live_check: Duration,
    /// How long one frame of a stream may wait to be written (the client reads nothing, so
    /// the connection's queue stays full) before the stream ends with one log line and frees
    /// its slot. Longer than a heartbeat period, so a client that is merely slow keeps up.
    pub write_deadline: Duration,
    /// Streams at the head of a store share one read per change (`fanout`); off, each stream
    /// reads on its own, as before shared reads (the fan-out bench's baseline).
    pub shared_reads: bool,
    /// The period of `notifications/progress` while `tidings_wait` blocks, for a request
    /// that carried a progress token (hosts reset their idle timers on it).
    pub tool_progress: Duration,
}

/// The default [`ServerLimits::write_deadline`]: 30 s.
pub const WRITE_DEADLINE: Duration = Duration::from_secs(30);

/// 1 MiB, the frame limit docs/protocol.md promises clients.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 1024 * 1024;

impl Default for ServerLimits {
    fn default() -> ServerLimits {
        ServerLimits {
            streams_per_connection: 10,
            streams_per_token: 32,
            streams_total: 1024,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            max_http_body_bytes: DEFAULT_MAX_FRAME_BYTES,
            max_http_connections: 64,
            max_socket_connections: 128,
            http_header_timeout: Duration::from_secs(10),
            http_body_timeout: Duration::from_secs(10),
            http_stop_grace: Duration::from_secs(5),
            heartbeat: Duration::from_secs(25),
            safety_tick: Duration::from_secs(30),
            ask_wait: ASK_WAIT,
            live_check: Duration::from_secs(10),
            tool_progress: Duration::from_secs(30),
            write_deadline: WRITE_DEADLINE,
            shared_reads: true,
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
        assert_eq!(l.streams_total, 1024);
        assert_eq!(l.write_deadline, Duration::from_secs(30));
        assert!(l.write_deadline > l.heartbeat);
        assert!(l.shared_reads);
        assert_eq!(l.streams_per_token, 32);
        assert_eq!(l.max_frame_bytes, 1_048_576);
        assert_eq!(l.max_http_body_bytes, 1_048_576);
        assert_eq!(l.max_http_connections, 64);
        assert_eq!(l.max_socket_connections, 128);
        assert_eq!(l.http_header_timeout, Duration::from_secs(10));
        assert_eq!(l.http_body_timeout, Duration::from_secs(10));
        assert!(l.heartbeat < Duration::from_secs(30));
        assert_eq!(l.tool_progress, Duration::from_secs(30));
    }
}
