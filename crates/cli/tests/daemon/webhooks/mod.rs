//! Webhook delivery end to end: the real demo daemon POSTs to real receivers on 127.0.0.1
//! (plain and TLS), and the tests check what arrives with the Standard Webhooks reference
//! crate. `receiver` is the receiver; `delivery` what a healthy subscription delivers and how
//! failures are retried; `refusals` what `events/subscribe` refuses; `lifecycle` restarts,
//! the user removing a destination, and a stuck receiver beside healthy ones; `controls` the
//! conformance suite's webhook controls.

mod controls;
mod delivery;
mod lifecycle;
mod receiver;
mod refusals;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Daemon, Raw, WAIT};

/// Demo settings (mail and messages on, the reserved example senders allowed, every agent
/// allowed) with `[webhooks] allow` set to `origins`.
pub fn settings(origins: &[String]) -> String {
    let list = origins
        .iter()
        .map(|o| format!("\"{o}\""))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "[mail]\nenabled = true\nallow = [\"example.com\", \"example.org\", \"example.net\"]\n\n\
         [messages]\nenabled = true\nallow = [\"+120255501*\"]\n\n\
         [agents]\nnew = \"allow\"\n\n[webhooks]\nallow = [{list}]\n"
    )
}

/// A demo daemon whose list of destinations is `origins`.
pub fn daemon_allowing(origins: &[String]) -> Daemon {
    Daemon::builder().settings(&settings(origins)).start()
}

/// An agent on the daemon's socket (a bare connection, one principal: this test binary).
pub struct Agent {
    raw: Raw,
    next: u64,
}

impl Agent {
    pub fn connect(daemon: &Daemon) -> Agent {
        Agent {
            raw: Raw::connect(&daemon.socket, "webhook-tests"),
            next: 0,
        }
    }

    /// A request and its response frame.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        self.raw.call(self.next, method, params)
    }

    /// `events/subscribe` for mail to `url`; the response frame.
    pub fn subscribe(&mut self, url: &str, secret: &str, arguments: &Value) -> Value {
        self.call(
            "events/subscribe",
            json!({"name": "mail.received", "arguments": arguments,
                   "delivery": {"mode": "webhook", "url": url, "secret": secret}}),
        )
    }

    /// The same, which must succeed: its result.
    pub fn subscribed(&mut self, url: &str, secret: &str) -> Value {
        let response = self.subscribe(url, secret, &json!({}));
        assert!(
            response.get("error").is_none(),
            "subscribe failed: {response}"
        );
        response["result"].clone()
    }

    /// `events/unsubscribe` for mail to `url`; the response frame.
    pub fn unsubscribe(&mut self, url: &str) -> Value {
        self.call(
            "events/unsubscribe",
            json!({"name": "mail.received", "arguments": {}, "delivery": {"url": url}}),
        )
    }

    /// `events/poll` for mail from `cursor`; its result.
    pub fn poll(&mut self, cursor: &str) -> Value {
        let response = self.call(
            "events/poll",
            json!({"name": "mail.received", "arguments": {}, "cursor": cursor}),
        );
        assert!(response.get("error").is_none(), "poll failed: {response}");
        response["result"].clone()
    }

    /// `State.webhooks`, from `tidings/status`.
    pub fn webhooks(&mut self) -> Value {
        let response = self.call("tidings/status", json!({}));
        assert!(response.get("error").is_none(), "status failed: {response}");
        response["result"]["webhooks"].clone()
    }

    /// Asks `tidings/status` until `done` holds of `State.webhooks` (within [`WAIT`]).
    pub fn wait_webhooks(&mut self, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let state = self.webhooks();
            if done(&state) {
                return state;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; State.webhooks: {state}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Opens a push stream for mail on this connection and waits for its `active`.
    pub fn stream(&mut self) -> u64 {
        self.next += 1;
        self.raw.stream(self.next, "mail.received", json!({}));
        self.next
    }

    /// Waits for the event `event_id` on stream `stream`.
    pub fn wait_stream_event(&mut self, stream: u64, event_id: &str) {
        self.raw
            .wait_for(&format!("event {event_id} on the stream"), |f| {
                f["method"] == "notifications/events/event"
                    && f["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
                        == json!(stream)
                    && f["params"]["eventId"] == event_id
            });
    }
}

/// The error of a response frame, which must be one.
pub fn error_of(response: &Value) -> &Value {
    assert!(
        response.get("result").is_none(),
        "should have failed: {response}"
    );
    &response["error"]
}

/// The row id a cursor ends with (`v2.<file>.<rowid>`).
pub fn rowid(cursor: &str) -> u64 {
    cursor
        .rsplit('.')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a cursor: {cursor}"))
}
