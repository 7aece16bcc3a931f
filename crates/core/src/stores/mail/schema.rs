//! What this Envelope Index has: probed once per opened file, since columns come and go
//! across macOS releases (`message_id_header` arrived late in V10; `labels` is Gmail's).

use rusqlite::Connection;

use crate::stores::sql::columns;

/// The Envelope Index tables and columns a reader relies on.
pub(crate) const REQUIRED: &[(&str, &[&str])] = &[
    (
        "messages",
        &[
            "ROWID",
            "global_message_id",
            "sender",
            "subject_prefix",
            "subject",
            "date_sent",
            "date_received",
            "mailbox",
            "read",
            "flagged",
            "deleted",
        ],
    ),
    ("addresses", &["ROWID", "address", "comment"]),
    ("subjects", &["ROWID", "subject"]),
    ("mailboxes", &["ROWID", "url"]),
    ("recipients", &["message", "address", "type", "position"]),
];

/// Optional features, each switching on part of a query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MailCaps {
    /// `message_global_data.message_id_header` exists (macOS 15+ era V10): the event id.
    pub message_id_header: bool,
    /// The `labels` table exists: Gmail's INBOX membership lives there.
    pub labels: bool,
    /// The `attachments` table exists.
    pub attachments: bool,
}

/// Check the required schema and probe the optional parts. `Err(Ok(detail))` is a schema we
/// cannot read; `Err(Err(e))` a SQLite failure.
pub(crate) fn probe(conn: &Connection) -> Result<MailCaps, Result<String, rusqlite::Error>> {
    for (table, cols) in REQUIRED {
        let have = columns(conn, table).map_err(Err)?;
        if have.is_empty() {
            return Err(Ok(format!("no `{table}` table")));
        }
        for col in *cols {
            if *col != "ROWID" && !have.iter().any(|h| h.eq_ignore_ascii_case(col)) {
                return Err(Ok(format!("no `{table}.{col}` column")));
            }
        }
    }
    let global = columns(conn, "message_global_data").map_err(Err)?;
    Ok(MailCaps {
        message_id_header: global.iter().any(|c| c == "message_id_header"),
        labels: !columns(conn, "labels").map_err(Err)?.is_empty(),
        attachments: !columns(conn, "attachments").map_err(Err)?.is_empty(),
    })
}
