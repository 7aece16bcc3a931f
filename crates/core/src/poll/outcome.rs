//! The result of `events/poll` and its wire form, built without copying the events.

use serde::Serialize;

use crate::event::{Occurrence, object};

/// The result of `events/poll`, minus the protocol's `resultType`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PollOutcome {
    /// The events, possibly none.
    pub events: Vec<Occurrence>,
    /// The position after them.
    pub cursor: String,
    /// Events were skipped (gap or floor).
    pub truncated: bool,
    /// Poll again at once.
    pub has_more: bool,
    /// Recommended wait before the next poll.
    pub next_poll_ms: u64,
}

impl From<PollOutcome> for serde_json::Value {
    /// The wire form `Serialize` writes, its events moved in rather than copied (see
    /// `From<Occurrence>`).
    fn from(p: PollOutcome) -> Self {
        use serde_json::Value;
        let events: Vec<Value> = p.events.into_iter().map(Value::from).collect();
        object([
            ("events", events.into()),
            ("cursor", p.cursor.into()),
            ("truncated", p.truncated.into()),
            ("hasMore", p.has_more.into()),
            ("nextPollMs", p.next_poll_ms.into()),
        ])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The moved wire form is exactly what `Serialize` writes (a field added to either struct
    /// and not to its `From` fails here).
    #[test]
    fn a_poll_outcome_moved_into_json_is_what_serialize_writes() {
        let event = |id: &str, data: Value| Occurrence {
            event_id: id.into(),
            name: "mail.received",
            timestamp: "2026-12-01T14:00:00Z".into(),
            data,
            cursor: format!("v2.1-2-3.{id}"),
        };
        let outcome = PollOutcome {
            events: vec![
                event(
                    "7",
                    json!({"from": {"address": "ana@example.com", "name": null}}),
                ),
                event("9", json!({"subject": "\"quoted\" \u{1F600}", "to": []})),
            ],
            cursor: "v2.1-2-3.9".into(),
            truncated: true,
            has_more: false,
            next_poll_ms: 5000,
        };
        assert_eq!(
            Value::from(outcome.clone()),
            serde_json::to_value(&outcome).unwrap()
        );
        let empty = PollOutcome {
            events: Vec::new(),
            has_more: true,
            truncated: false,
            ..outcome
        };
        assert_eq!(
            Value::from(empty.clone()),
            serde_json::to_value(&empty).unwrap()
        );
    }
}
