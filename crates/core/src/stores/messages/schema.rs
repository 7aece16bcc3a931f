//! What this chat.db has: probed once per opened file. Releases add columns (`date_retracted`
//! with Ventura, `associated_message_emoji` later), so queries put a constant where a column is
//! missing.

use rusqlite::Connection;

use crate::stores::sql::columns;

/// The chat.db tables and columns a reader relies on.
const REQUIRED: &[(&str, &[&str])] = &[
    (
        "message",
        &["guid", "handle_id", "service", "date", "is_from_me"],
    ),
    ("handle", &["id"]),
    (
        "chat",
        &["guid", "style", "chat_identifier", "display_name"],
    ),
    ("chat_message_join", &["chat_id", "message_id"]),
];

/// Optional features, each switching on part of a query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MessagesCaps {
    /// `message.associated_message_type` (tapbacks; High Sierra+).
    pub associated: bool,
    /// `message.item_type` (group events).
    pub item_type: bool,
    /// `message.date_retracted` (unsend; Ventura+).
    pub retracted: bool,
    /// `message.thread_originator_guid` (inline replies).
    pub thread: bool,
    /// `chat_recoverable_message_join` (Recently Deleted; Ventura+).
    pub recoverable: bool,
    /// `message_attachment_join`.
    pub attachments: bool,
}

/// Check the required schema and probe the optional parts. `Err(Ok(detail))` is a schema we
/// cannot read; `Err(Err(e))` a SQLite failure.
pub(crate) fn probe(conn: &Connection) -> Result<MessagesCaps, Result<String, rusqlite::Error>> {
    for (table, cols) in REQUIRED {
        let have = columns(conn, table).map_err(Err)?;
        if have.is_empty() {
            return Err(Ok(format!("no `{table}` table")));
        }
        for col in *cols {
            if !have.iter().any(|h| h.eq_ignore_ascii_case(col)) {
                return Err(Ok(format!("no `{table}.{col}` column")));
            }
        }
    }
    let message = columns(conn, "message").map_err(Err)?;
    let has = |c: &str| message.iter().any(|m| m == c);
    Ok(MessagesCaps {
        associated: has("associated_message_type"),
        item_type: has("item_type"),
        retracted: has("date_retracted"),
        thread: has("thread_originator_guid"),
        recoverable: !columns(conn, "chat_recoverable_message_join")
            .map_err(Err)?
            .is_empty(),
        attachments: !columns(conn, "message_attachment_join")
            .map_err(Err)?
            .is_empty(),
    })
}
