//! What this Envelope Index has: probed once per opened file, since columns come and go
//! across macOS releases (`message_id_header` arrived late in V10; `labels` is Gmail's). The
//! columns the queries read are named here once, and the probe requires each.

use rusqlite::Connection;

use crate::stores::columns::{Col, leading_index, optional_table, require};
use crate::stores::sql::columns;

pub(crate) const MESSAGES_GLOBAL_ID: Col = Col::new("messages", "global_message_id");
pub(crate) const MESSAGES_SENDER: Col = Col::new("messages", "sender");
pub(crate) const MESSAGES_SUBJECT_PREFIX: Col = Col::new("messages", "subject_prefix");
pub(crate) const MESSAGES_SUBJECT: Col = Col::new("messages", "subject");
pub(crate) const MESSAGES_DATE_SENT: Col = Col::new("messages", "date_sent");
pub(crate) const MESSAGES_DATE_RECEIVED: Col = Col::new("messages", "date_received");
pub(crate) const MESSAGES_MAILBOX: Col = Col::new("messages", "mailbox");
pub(crate) const MESSAGES_READ: Col = Col::new("messages", "read");
pub(crate) const MESSAGES_FLAGGED: Col = Col::new("messages", "flagged");
pub(crate) const MESSAGES_DELETED: Col = Col::new("messages", "deleted");
pub(crate) const ADDRESSES_ADDRESS: Col = Col::new("addresses", "address");
pub(crate) const ADDRESSES_COMMENT: Col = Col::new("addresses", "comment");
pub(crate) const SUBJECTS_SUBJECT: Col = Col::new("subjects", "subject");
pub(crate) const MAILBOXES_URL: Col = Col::new("mailboxes", "url");
pub(crate) const RECIPIENTS_MESSAGE: Col = Col::new("recipients", "message");
pub(crate) const RECIPIENTS_ADDRESS: Col = Col::new("recipients", "address");
pub(crate) const RECIPIENTS_TYPE: Col = Col::new("recipients", "type");
pub(crate) const RECIPIENTS_POSITION: Col = Col::new("recipients", "position");
pub(crate) const GLOBAL_MESSAGE_ID_HEADER: Col =
    Col::new("message_global_data", "message_id_header");
pub(crate) const GLOBAL_MODEL_CATEGORY: Col = Col::new("message_global_data", "model_category");
pub(crate) const GLOBAL_HIGH_IMPACT: Col = Col::new("message_global_data", "model_high_impact");
pub(crate) const GLOBAL_URGENT: Col = Col::new("message_global_data", "urgent");
pub(crate) const MESSAGES_IS_URGENT: Col = Col::new("messages", "is_urgent");
/// The user's per-sender category: `address` is an `addresses` ROWID (`messages.sender`).
const SENDER_CATEGORY: &[Col] = &[
    Col::new("business_addresses", "address"),
    Col::new("business_addresses", "category"),
];
const LABELS: &[Col] = &[
    Col::new("labels", "message_id"),
    Col::new("labels", "mailbox_id"),
];
const ATTACHMENTS: &[Col] = &[Col::new("attachments", "message")];

/// Every column the queries read in every supported Envelope Index, by table.
pub(crate) const REQUIRED: &[Col] = &[
    MESSAGES_GLOBAL_ID,
    MESSAGES_SENDER,
    MESSAGES_SUBJECT_PREFIX,
    MESSAGES_SUBJECT,
    MESSAGES_DATE_SENT,
    MESSAGES_DATE_RECEIVED,
    MESSAGES_MAILBOX,
    MESSAGES_READ,
    MESSAGES_FLAGGED,
    MESSAGES_DELETED,
    ADDRESSES_ADDRESS,
    ADDRESSES_COMMENT,
    SUBJECTS_SUBJECT,
    MAILBOXES_URL,
    RECIPIENTS_MESSAGE,
    RECIPIENTS_ADDRESS,
    RECIPIENTS_TYPE,
    RECIPIENTS_POSITION,
];

/// Optional features, each switching on part of a query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools)] // one flag per optional part of the schema, as probed
pub(crate) struct MailCaps {
    /// `message_global_data.message_id_header` exists (macOS 15+ era V10): the event id.
    pub message_id_header: bool,
    /// The `labels` table exists: Gmail's INBOX membership lives there.
    pub labels: bool,
    /// The `attachments` table exists.
    pub attachments: bool,
    /// Apple's date index ([`DATE_INDEX`]) exists and leads with `date_received`: the
    /// `maxAgeMs` seek names it rather than leaving the plan to the planner.
    pub date_index: bool,
    /// `message_global_data.model_category` (macOS 15 and later): Mail's category.
    pub category: bool,
    /// `message_global_data.model_high_impact`: shown in Primary, priority `high`.
    pub high_impact: bool,
    /// `message_global_data.urgent`: priority `urgent`.
    pub urgent: bool,
    /// `messages.is_urgent` (macOS 26): priority `urgent`.
    pub is_urgent: bool,
    /// `business_addresses` with `address` and `category`: the user's per-sender category,
    /// which wins over the model's. A table of that name without them is not this one, and
    /// is left unread rather than refusing the store.
    pub sender_category: bool,
}

impl MailCaps {
    /// Whether a scan joins `message_global_data` (as `g`).
    pub(crate) fn global_data(self) -> bool {
        self.message_id_header || self.category || self.high_impact || self.urgent
    }
}

/// Apple's index on `messages(date_received)` (stores.md, 1.3).
pub(crate) const DATE_INDEX: &str = "messages_date_received_index";

/// Check the required schema and probe the optional parts. `Err(Ok(detail))` is a schema we
/// cannot read; `Err(Err(e))` a `SQLite` failure.
pub(crate) fn probe(conn: &Connection) -> Result<MailCaps, Result<String, rusqlite::Error>> {
    require(conn, REQUIRED)?;
    let global = columns(conn, GLOBAL_MESSAGE_ID_HEADER.table).map_err(Err)?;
    let messages = columns(conn, MESSAGES_IS_URGENT.table).map_err(Err)?;
    let has = |list: &[String], c: Col| list.iter().any(|n| n.eq_ignore_ascii_case(c.name));
    let sender_columns = columns(conn, SENDER_CATEGORY[0].table).map_err(Err)?;
    Ok(MailCaps {
        message_id_header: global.iter().any(|c| c == GLOBAL_MESSAGE_ID_HEADER.name),
        category: has(&global, GLOBAL_MODEL_CATEGORY),
        high_impact: has(&global, GLOBAL_HIGH_IMPACT),
        urgent: has(&global, GLOBAL_URGENT),
        is_urgent: has(&messages, MESSAGES_IS_URGENT),
        sender_category: SENDER_CATEGORY.iter().all(|c| has(&sender_columns, *c)),
        labels: optional_table(conn, "labels", LABELS)?,
        attachments: optional_table(conn, "attachments", ATTACHMENTS)?,
        date_index: leading_index(conn, "messages", DATE_INDEX, MESSAGES_DATE_RECEIVED.name)
            .map_err(Err)?,
    })
}
