//! The daemon side of a channel: one `events/stream` per chosen type, each with the cursor
//! of the last thing it delivered, so a reconnect resumes exactly there; and a window of
//! recent event ids as a belt against repeats across the reconnect.

use std::collections::{HashSet, VecDeque};

use serde_json::{Value, json};
use tidings_protocol::meta;

/// How many recent event ids the dedupe window keeps.
const SEEN_WINDOW: usize = 4096;

/// One subscription the user chose.
#[derive(Debug)]
pub struct Stream {
    /// The event type.
    pub name: String,
    /// Its `arguments` (the sender filters).
    pub arguments: Value,
    /// Named by `--type` or a preset's `types`, rather than the default of both.
    pub explicit: bool,
    /// Where to resume: from the last `active`, event or heartbeat. `None` until the first
    /// stream opened ("from now").
    pub cursor: Option<String>,
    /// The request id of the open stream on the current connection.
    pub request: Option<u64>,
    /// The daemon confirmed the stream (`notifications/events/active`) at least once.
    pub confirmed: bool,
    /// Refused or terminated: not reopened.
    pub ended: bool,
}

impl Stream {
    /// A stream of `name` filtered by `from` and `domains` (left out when empty, so the
    /// daemon's allowlist alone may bound it).
    pub fn new(name: &str, from: &[String], domains: &[String], explicit: bool) -> Stream {
        let mut arguments = serde_json::Map::new();
        if !from.is_empty() {
            arguments.insert("from".into(), json!(from));
        }
        if !domains.is_empty() {
            arguments.insert("domains".into(), json!(domains));
        }
        Stream {
            name: name.to_owned(),
            arguments: Value::Object(arguments),
            explicit,
            cursor: None,
            request: None,
            confirmed: false,
            ended: false,
        }
    }

    /// The `events/stream` params that (re)open it from its cursor, marked as a channel's
    /// (`dev.tidings/channel`) so the app lists it as `channel`, not `push`.
    pub fn open_params(&self) -> Value {
        json!({"name": self.name, "arguments": self.arguments, "cursor": self.cursor,
               meta::KEY: {meta::CHANNEL: true}})
    }
}

/// The last [`SEEN_WINDOW`] event ids, per type.
#[derive(Debug, Default)]
pub struct Seen {
    set: HashSet<(String, String)>,
    order: VecDeque<(String, String)>,
}

impl Seen {
    /// Records `(name, id)`; `false` when it was already seen.
    pub fn first_time(&mut self, name: &str, id: &str) -> bool {
        let key = (name.to_owned(), id.to_owned());
        if self.set.contains(&key) {
            return false;
        }
        if self.order.len() == SEEN_WINDOW
            && let Some(old) = self.order.pop_front()
        {
            self.set.remove(&old);
        }
        self.order.push_back(key.clone());
        self.set.insert(key);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_leave_out_empty_filters() {
        let s = Stream::new("mail.received", &[], &["acme.com".into()], true);
        assert_eq!(s.arguments, json!({"domains": ["acme.com"]}));
        assert_eq!(s.open_params()["cursor"], Value::Null);
        assert_eq!(s.open_params()["_meta"]["dev.tidings/channel"], true);
    }

    #[test]
    fn seen_ids_are_refused_until_they_leave_the_window() {
        let mut seen = Seen::default();
        assert!(seen.first_time("mail.received", "a"));
        assert!(!seen.first_time("mail.received", "a"));
        assert!(seen.first_time("messages.received", "a"));
        for i in 0..SEEN_WINDOW {
            seen.first_time("mail.received", &i.to_string());
        }
        assert!(seen.first_time("mail.received", "a"));
    }
}
