//! What this chat.db has: probed once per opened file. Releases add columns (`date_retracted`
//! with Ventura, `associated_message_emoji` later), so queries put a constant where a column is
//! missing. The columns the scan reads are named here once, and the probe requires each.

use rusqlite::Connection;

use crate::stores::columns::{Col, leading_index, optional_table, require};
use crate::stores::sql::columns;

pub(crate) const MESSAGE_GUID: Col = Col::new("message", "guid");
pub(crate) const MESSAGE_HANDLE_ID: Col = Col::new("message", "handle_id");
pub(crate) const MESSAGE_SERVICE: Col = Col::new("message", "service");
pub(crate) const MESSAGE_DATE: Col = Col::new("message", "date");
pub(crate) const MESSAGE_IS_FROM_ME: Col = Col::new("message", "is_from_me");
pub(crate) const HANDLE_ID: Col = Col::new("handle", "id");
pub(crate) const CHAT_GUID: Col = Col::new("chat", "guid");
pub(crate) const CHAT_STYLE: Col = Col::new("chat", "style");
pub(crate) const CHAT_IDENTIFIER: Col = Col::new("chat", "chat_identifier");
pub(crate) const CHAT_DISPLAY_NAME: Col = Col::new("chat", "display_name");
pub(crate) const CHAT_SERVICE_NAME: Col = Col::new("chat", "service_name");
pub(crate) const JOIN_CHAT_ID: Col = Col::new("chat_message_join", "chat_id");
pub(crate) const JOIN_MESSAGE_ID: Col = Col::new("chat_message_join", "message_id");
const ATTACHMENT_JOIN_MESSAGE_ID: Col = Col::new("message_attachment_join", "message_id");
const RECOVERABLE_MESSAGE_ID: Col = Col::new("chat_recoverable_message_join", "message_id");

/// Every column the scan reads in every supported chat.db, by table.
pub(crate) const REQUIRED: &[Col] = &[
    MESSAGE_GUID,
    MESSAGE_HANDLE_ID,
    MESSAGE_SERVICE,
    MESSAGE_DATE,
    MESSAGE_IS_FROM_ME,
    HANDLE_ID,
    CHAT_GUID,
    CHAT_STYLE,
    CHAT_IDENTIFIER,
    CHAT_DISPLAY_NAME,
    CHAT_SERVICE_NAME,
    JOIN_CHAT_ID,
    JOIN_MESSAGE_ID,
];

/// Optional features, each switching on part of a query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools)] // one flag per optional part of the schema, as probed
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
    /// Apple's date index ([`DATE_INDEX`]) exists and leads with `date`: the `maxAgeMs` seek
    /// names it rather than leaving the plan to the planner.
    pub date_index: bool,
    /// `chat.is_blackholed`: a chat the user blocked or silenced.
    pub blackholed: bool,
    /// `chat.is_filtered`: 2 is Junk.
    pub filtered: bool,
    /// `message.filter_action` (macOS 27): 2 junk, 3 promotion, 4 transaction.
    pub filter_action: bool,
}

/// Apple's index on `message(date)` (stores.md).
pub(crate) const DATE_INDEX: &str = "message_idx_date";

/// Check the required schema and probe the optional parts. `Err(Ok(detail))` is a schema we
/// cannot read; `Err(Err(e))` a `SQLite` failure.
pub(crate) fn probe(conn: &Connection) -> Result<MessagesCaps, Result<String, rusqlite::Error>> {
    require(conn, REQUIRED)?;
    let message = columns(conn, "message").map_err(Err)?;
    let has = |c: &str| message.iter().any(|m| m == c);
    let chat = columns(conn, "chat").map_err(Err)?;
    let chat_has = |c: &str| chat.iter().any(|m| m == c);
    Ok(MessagesCaps {
        blackholed: chat_has("is_blackholed"),
        filtered: chat_has("is_filtered"),
        filter_action: has("filter_action"),
        associated: has("associated_message_type"),
        item_type: has("item_type"),
        retracted: has("date_retracted"),
        thread: has("thread_originator_guid"),
        recoverable: optional_table(
            conn,
            RECOVERABLE_MESSAGE_ID.table,
            &[RECOVERABLE_MESSAGE_ID],
        )?,
        attachments: optional_table(
            conn,
            ATTACHMENT_JOIN_MESSAGE_ID.table,
            &[ATTACHMENT_JOIN_MESSAGE_ID],
        )?,
        date_index: leading_index(conn, "message", DATE_INDEX, MESSAGE_DATE.name).map_err(Err)?,
    })
}
