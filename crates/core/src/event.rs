//! The two event types, the categories their stores file messages under, and the occurrence
//! they produce.

use serde::{Deserialize, Serialize};

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

/// Where a message is filed: Mail's categories (macOS 15 and later), and the two of them
/// Messages' SMS filter uses (docs/decisions/people.md, "Categories, priority, junk and
/// blocked chats"). A message with no category counts as [`Category::Primary`] for filtering,
/// though its event does not claim one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Mail's Primary: people, and anything the model calls high impact.
    Primary,
    /// Receipts, orders, deliveries, codes.
    Transactions,
    /// News, social, notifications (Mail only).
    Updates,
    /// Marketing.
    Promotions,
}

impl Category {
    /// Every category, in Mail's order (`model_category` 0 to 3).
    pub const ALL: [Category; 4] = [
        Category::Primary,
        Category::Transactions,
        Category::Updates,
        Category::Promotions,
    ];

    /// The wire name, as the `categories` argument, the setting and the event spell it.
    pub fn name(self) -> &'static str {
        match self {
            Category::Primary => "primary",
            Category::Transactions => "transactions",
            Category::Updates => "updates",
            Category::Promotions => "promotions",
        }
    }

    /// The category called `name` (ASCII case ignored).
    pub fn parse(name: &str) -> Option<Category> {
        Category::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Mail's `model_category` value, the code the scans compute in SQL.
    pub(crate) fn code(self) -> i64 {
        match self {
            Category::Primary => 0,
            Category::Transactions => 1,
            Category::Updates => 2,
            Category::Promotions => 3,
        }
    }

    /// The category of a code the scans computed; `None` for anything else.
    pub(crate) fn from_code(code: i64) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The categories `ty`'s store files messages under: Mail's four; Messages has no
    /// Updates.
    pub fn offered(ty: EventType) -> &'static [Category] {
        match ty {
            EventType::MailReceived => &Category::ALL,
            EventType::MessagesReceived => &[
                Category::Primary,
                Category::Transactions,
                Category::Promotions,
            ],
        }
    }

    /// Whether a message filed under `category` (`None`: unknown, counted as Primary) passes
    /// `wanted` (empty: every category).
    pub fn passes(wanted: &[Category], category: Option<Category>) -> bool {
        wanted.is_empty() || wanted.contains(&category.unwrap_or(Category::Primary))
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
    fn categories_read_back_by_name_and_code_and_unknown_counts_as_primary() {
        for c in Category::ALL {
            assert_eq!(Category::parse(c.name()), Some(c));
            assert_eq!(Category::parse(&c.name().to_uppercase()), Some(c));
            assert_eq!(Category::from_code(c.code()), Some(c));
        }
        assert_eq!(Category::parse("social"), None);
        assert_eq!(Category::from_code(4), None);
        assert!(!Category::offered(EventType::MessagesReceived).contains(&Category::Updates));
        assert!(Category::passes(&[], Some(Category::Promotions)));
        assert!(Category::passes(&[Category::Primary], None));
        assert!(!Category::passes(&[Category::Promotions], None));
        assert!(!Category::passes(
            &[Category::Primary],
            Some(Category::Updates)
        ));
    }

    #[test]
    fn index_is_the_position_in_all() {
        for (i, ty) in EventType::ALL.into_iter().enumerate() {
            assert_eq!(ty.index(), i);
            assert_eq!(EventType::from_name(ty.name()), Some(ty));
        }
    }
}
