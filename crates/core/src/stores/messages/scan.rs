//! The chat.db scan: the skip rules and the filter pushed into SQL, rows turned into envelopes.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use serde_json::json;

use super::schema::MessagesCaps;
use crate::dates::{from_apple, iso8601};
use crate::filter::MessagesFilter;
use crate::stores::sql::{json_list, sender_condition};
use crate::stores::{Found, Window};
use crate::text::{MAX_NAME_CHARS, sanitize};

/// `chat.style` of a group chat (45 is one-to-one).
const GROUP_STYLE: i64 = 43;

/// The matching rows of `window`, in ROWID order.
pub(crate) fn rows(
    conn: &Connection,
    caps: MessagesCaps,
    filter: &MessagesFilter,
    window: Window,
) -> rusqlite::Result<Vec<Found>> {
    let mut params: Vec<SqlValue> = vec![
        SqlValue::Integer(window.after),
        SqlValue::Integer(window.upto),
    ];
    let mut conditions = vec!["m.ROWID > ?".to_owned(), "m.ROWID <= ?".to_owned()];
    for patterns in [&filter.senders, &filter.allow] {
        if !patterns.is_empty() {
            let cond = sender_condition("m.handle_id", "handle", "id", patterns, &mut params);
            conditions.push(cond);
        }
    }
    if !filter.chats.is_empty() {
        // By identifier or guid only: a display name is chosen by whoever made the group.
        json_list(&filter.chats, &mut params);
        json_list(&filter.chats, &mut params);
        conditions.push(
            "EXISTS (SELECT 1 FROM chat_message_join j WHERE j.message_id = m.ROWID AND j.chat_id IN \
             (SELECT ROWID FROM chat WHERE chat_identifier COLLATE NOCASE IN (SELECT value FROM json_each(?)) \
             OR guid COLLATE NOCASE IN (SELECT value FROM json_each(?))))"
                .to_owned(),
        );
    }
    if let Some(service) = filter.service {
        // The service the event reports (`from.service`).
        params.push(SqlValue::Text(service.as_str().to_owned()));
        conditions.push("coalesce(m.service, c.service_name) = ? COLLATE NOCASE".to_owned());
    }
    // The skip rules: only messages someone else sent count.
    conditions.push("coalesce(m.is_from_me, 0) = 0".to_owned());
    if caps.associated {
        conditions.push("coalesce(m.associated_message_type, 0) = 0".to_owned());
    }
    if caps.item_type {
        conditions.push("coalesce(m.item_type, 0) = 0".to_owned());
    }
    if caps.retracted {
        conditions.push("coalesce(m.date_retracted, 0) = 0".to_owned());
    }
    if caps.recoverable {
        // Not a correlated NOT EXISTS: the join's key leads with chat_id, so that would scan
        // Recently Deleted once per row. `NOT IN` builds the set once per scan.
        conditions.push(
            "m.ROWID NOT IN (SELECT message_id FROM chat_recoverable_message_join)".to_owned(),
        );
    }
    params.push(SqlValue::Integer(window.limit as i64));
    let thread = if caps.thread {
        "m.thread_originator_guid"
    } else {
        "NULL"
    };
    let attachments = if caps.attachments {
        "(SELECT count(*) FROM message_attachment_join x WHERE x.message_id = m.ROWID)"
    } else {
        "0"
    };
    let sql = format!(
        "SELECT m.ROWID, m.guid, m.date, coalesce(m.service, c.service_name), h.id, {attachments}, \
         {thread}, c.chat_identifier, c.display_name, c.style \
         FROM message m \
         LEFT JOIN handle h ON h.ROWID = m.handle_id \
         LEFT JOIN chat c ON c.ROWID = (SELECT chat_id FROM chat_message_join WHERE message_id = m.ROWID LIMIT 1) \
         WHERE {} ORDER BY m.ROWID LIMIT ?",
        conditions.join(" AND ")
    );
    let mut stmt = conn.prepare(&sql)?;
    let found = stmt
        .query_map(params_from_iter(params), |r| {
            let rowid: i64 = r.get(0)?;
            let guid: String = r.get::<_, Option<String>>(1)?.unwrap_or_default();
            let date = from_apple(r.get(2)?);
            let clean = |v: Option<String>| {
                v.map(|s| sanitize(&s, MAX_NAME_CHARS))
                    .filter(|s| !s.is_empty())
            };
            let data = json!({
                "guid": sanitize(&guid, MAX_NAME_CHARS),
                "from": {"handle": clean(r.get(4)?), "service": clean(r.get(3)?)},
                "chat": {
                    "identifier": clean(r.get(7)?),
                    "name": clean(r.get(8)?),
                    "isGroup": r.get::<_, Option<i64>>(9)? == Some(GROUP_STYLE),
                },
                "date": date.map(iso8601),
                "attachmentCount": r.get::<_, i64>(5)?,
                "isReply": r.get::<_, Option<String>>(6)?.is_some_and(|g| !g.is_empty()),
            });
            // The guid is the stable id; a row without one (never seen) still gets a unique id.
            let event_id = if guid.is_empty() {
                format!("rowid-{rowid}")
            } else {
                sanitize(&guid, MAX_NAME_CHARS)
            };
            Ok(Found {
                rowid,
                event_id,
                date,
                data,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(found)
}
