//! The two event types and the occurrence they produce.

use serde::Serialize;

/// An event type Tidings serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    /// `mail.received`: a new message in Apple Mail's Envelope Index.
    MailReceived,
    /// `messages.received`: a new incoming message in Messages' chat.db.
    MessagesReceived,
}

impl EventType {
    /// Every type, in `events/list` order.
    pub const ALL: [EventType; EventType::COUNT] =
        [EventType::MailReceived, EventType::MessagesReceived];

    /// How many types there are: the length of a per-type array indexed by
    /// [`EventType::index`].
    pub const COUNT: usize = 2;

    /// Its position in [`EventType::ALL`], for per-type arrays: total, so no caller can fall
    /// back to another type's slot.
    pub const fn index(self) -> usize {
        match self {
            EventType::MailReceived => 0,
            EventType::MessagesReceived => 1,
        }
    }

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            EventType::MailReceived => "mail.received",
            EventType::MessagesReceived => "messages.received",
        }
    }

    /// The Apple app its store belongs to, as people name it: "Mail", "Messages".
    pub fn app_name(self) -> &'static str {
        match self {
            EventType::MailReceived => "Mail",
            EventType::MessagesReceived => "Messages",
        }
    }

    /// Its section in `settings.toml` (`[mail]`, `[messages]`).
    pub fn settings_section(self) -> &'static str {
        match self {
            EventType::MailReceived => "mail",
            EventType::MessagesReceived => "messages",
        }
    }

    /// The type with this wire name.
    pub fn from_name(name: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One event, as it goes on the wire (`EventOccurrence`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Occurrence {
    /// Stable id: the Message-ID header or the Messages guid.
    pub event_id: String,
    /// The event type's name.
    pub name: &'static str,
    /// When it happened (RFC 3339 UTC); the scan time for rows with no date.
    pub timestamp: String,
    /// The envelope: never a body.
    pub data: serde_json::Value,
    /// The position after this event.
    pub cursor: String,
}

/// A JSON object of values moved in: `json!` and `to_value` copy what they are given, which
/// for an envelope's people and lists, and a poll's events, would be a deep copy each.
pub(crate) fn object<const N: usize>(fields: [(&str, serde_json::Value); N]) -> serde_json::Value {
    serde_json::Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

impl From<Occurrence> for serde_json::Value {
    /// The wire form `Serialize` writes, with the envelope moved in rather than copied:
    /// `serde_json::to_value` would rebuild every event's `data` for each poll's answer, and
    /// then drop the original.
    fn from(o: Occurrence) -> Self {
        object([
            ("eventId", o.event_id.into()),
            ("name", o.name.into()),
            ("timestamp", o.timestamp.into()),
            ("data", o.data),
            ("cursor", o.cursor.into()),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_the_position_in_all() {
        for (i, ty) in EventType::ALL.into_iter().enumerate() {
            assert_eq!(ty.index(), i);
            assert_eq!(EventType::from_name(ty.name()), Some(ty));
        }
    }
}
