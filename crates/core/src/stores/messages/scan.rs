//! The chat.db scan: the skip rules and the filter pushed into SQL, rows turned into envelopes.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, Row, params_from_iter};

use super::schema::{
    CHAT_DISPLAY_NAME, CHAT_IDENTIFIER, CHAT_SERVICE_NAME, CHAT_STYLE, HANDLE_ID, JOIN_CHAT_ID,
    JOIN_MESSAGE_ID, MESSAGE_DATE, MESSAGE_GUID, MESSAGE_HANDLE_ID, MESSAGE_SERVICE, MessagesCaps,
};
use crate::dates::{from_apple, iso8601};
use crate::event::{Category, object};
use crate::filter::MessagesFilter;
use crate::stores::read::{self, Read};
use crate::stores::sql::{in_list, json_list, memberships, sender_condition};
use crate::stores::{Found, Window};
use crate::text::{MAX_NAME_CHARS, sanitize};

/// `chat.style` of a group chat (45 is one-to-one).
const GROUP_STYLE: i64 = 43;

/// The matching rows of `window`, in ROWID order, each read or marked unreadable.
pub(crate) fn rows(
    conn: &Connection,
    caps: MessagesCaps,
    filter: &MessagesFilter,
    window: Window,
    per_row: bool,
) -> rusqlite::Result<Vec<Read>> {
    let (sql, params) = query(caps, filter, window, per_row);
    // Cached: the text is the same for every call of one subscription (only the values bound
    // change), so it is compiled once per connection.
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params_from_iter(params))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let rowid: i64 = r.get(at::ROWID)?;
        out.push(Read::of(rowid, envelope(r, rowid))?);
    }
    Ok(out)
}

/// The scan of `window` for `filter`: its SQL and the values it binds. The text depends only
/// on the filter's shape, the store's features and whether senders are tested per row
/// (`memberships`), never on its bounds or the values, so one subscription's polls share two
/// compiled statements at most.
pub(crate) fn query(
    caps: MessagesCaps,
    filter: &MessagesFilter,
    window: Window,
    per_row: bool,
) -> (String, Vec<SqlValue>) {
    let mut params: Vec<SqlValue> = vec![
        SqlValue::Integer(window.after),
        SqlValue::Integer(window.upto),
    ];
    let mut conditions = vec!["m.ROWID > ?".to_owned(), "m.ROWID <= ?".to_owned()];
    // The filter's senders pick the rows (listed, so a sender index can drive the scan);
    // the allowlist is then tested on those rows' senders only; a short window, or a dense
    // match, tests both per row (see `memberships`).
    let [senders, allow] = memberships(&filter.senders, per_row);
    for (patterns, membership) in [(&filter.senders, senders), (&filter.allow, allow)] {
        if !patterns.is_empty() {
            let cond = sender_condition(
                "m.handle_id",
                "handle",
                "id",
                patterns,
                membership,
                &mut params,
            );
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
        conditions.push(format!(
            "coalesce(m.{}, c.{}) = ? COLLATE NOCASE",
            MESSAGE_SERVICE.name, CHAT_SERVICE_NAME.name
        ));
    }
    conditions.extend(skip_rules(caps));
    if !filter.categories.is_empty() {
        // Unknown (NULL) counts as Primary, as `Category::passes` says.
        let codes: Vec<i64> = filter.categories.iter().map(|c| c.code()).collect();
        let codes = in_list(&codes, &mut params);
        conditions.push(format!("coalesce({}, 0) IN ({codes})", category_sql(caps)));
    }
    params.push(SqlValue::Integer(
        i64::try_from(window.limit).unwrap_or(i64::MAX),
    ));
    let sql = format!(
        "SELECT {} FROM message m \
         LEFT JOIN handle h ON h.ROWID = m.{handle_id} \
         LEFT JOIN chat c ON c.ROWID = \
         (SELECT {chat_id} FROM chat_message_join WHERE {message_id} = m.ROWID LIMIT 1) \
         WHERE {} ORDER BY m.ROWID LIMIT ?",
        select_list(caps),
        conditions.join(" AND "),
        handle_id = MESSAGE_HANDLE_ID.name,
        chat_id = JOIN_CHAT_ID.name,
        message_id = JOIN_MESSAGE_ID.name,
    );
    (sql, params)
}

/// The skip rules, as conditions on the message `m`: only messages someone else sent count,
/// and nothing Messages keeps out of sight (a blocked or silenced chat, Junk, a message its
/// filter called junk) ever does.
pub(crate) fn skip_rules(caps: MessagesCaps) -> Vec<String> {
    let mut conditions = vec!["coalesce(m.is_from_me, 0) = 0".to_owned()];
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
    let mut hidden = Vec::new();
    if caps.blackholed {
        hidden.push("coalesce(x.is_blackholed, 0) = 1");
    }
    if caps.filtered {
        hidden.push("coalesce(x.is_filtered, 0) = 2");
    }
    if !hidden.is_empty() {
        // Any of the message's chats: the join's message_id index answers it per row.
        conditions.push(format!(
            "NOT EXISTS (SELECT 1 FROM chat_message_join y JOIN chat x ON x.ROWID = y.chat_id \
             WHERE y.message_id = m.ROWID AND ({}))",
            hidden.join(" OR ")
        ));
    }
    if caps.filter_action {
        conditions.push("coalesce(m.filter_action, 0) <> 2".to_owned());
    }
    conditions
}

/// The message's category as Mail's code (`Category::code`), NULL when Messages files it
/// nowhere special: the message's own filter action (3 promotion, 4 transaction) where the
/// store has it, else the SMS filter's chat identifier suffix, `(smsfp…` for promotions and
/// `(smsft…` for transactions (docs/decisions/people.md says which of these is a guess).
pub(crate) fn category_sql(caps: MessagesCaps) -> String {
    let promotions = Category::Promotions.code();
    let transactions = Category::Transactions.code();
    let mut arms = Vec::new();
    if caps.filter_action {
        arms.push(format!(
            "WHEN m.filter_action = 3 THEN {promotions} WHEN m.filter_action = 4 THEN {transactions}"
        ));
    }
    let id = format!("c.{}", CHAT_IDENTIFIER.name);
    arms.push(format!(
        "WHEN {id} LIKE '%(smsfp%' THEN {promotions} WHEN {id} LIKE '%(smsft%' THEN {transactions}"
    ));
    format!("(CASE {} END)", arms.join(" "))
}

/// The scan's result columns, by position: `select_list` puts each expression at its ordinal.
mod at {
    pub(super) const ROWID: usize = 0;
    pub(super) const GUID: usize = 1;
    pub(super) const DATE: usize = 2;
    pub(super) const SERVICE: usize = 3;
    pub(super) const HANDLE: usize = 4;
    pub(super) const ATTACHMENTS: usize = 5;
    pub(super) const THREAD: usize = 6;
    pub(super) const CHAT_IDENTIFIER: usize = 7;
    pub(super) const CHAT_NAME: usize = 8;
    pub(super) const CHAT_STYLE: usize = 9;
    pub(super) const CATEGORY: usize = 10;
    pub(super) const COUNT: usize = 11;
}

/// The SELECT list, written from the schema's column constants (the probe requires each).
fn select_list(caps: MessagesCaps) -> String {
    let mut cols: [String; at::COUNT] = Default::default();
    cols[at::ROWID] = "m.ROWID".into();
    cols[at::GUID] = format!("m.{}", MESSAGE_GUID.name);
    cols[at::DATE] = format!("m.{}", MESSAGE_DATE.name);
    cols[at::SERVICE] = format!(
        "coalesce(m.{}, c.{})",
        MESSAGE_SERVICE.name, CHAT_SERVICE_NAME.name
    );
    cols[at::HANDLE] = format!("h.{}", HANDLE_ID.name);
    cols[at::ATTACHMENTS] = if caps.attachments {
        "(SELECT count(*) FROM message_attachment_join x WHERE x.message_id = m.ROWID)".into()
    } else {
        "0".into()
    };
    cols[at::THREAD] = if caps.thread {
        "m.thread_originator_guid".into()
    } else {
        "NULL".into()
    };
    cols[at::CHAT_IDENTIFIER] = format!("c.{}", CHAT_IDENTIFIER.name);
    cols[at::CHAT_NAME] = format!("c.{}", CHAT_DISPLAY_NAME.name);
    cols[at::CHAT_STYLE] = format!("c.{}", CHAT_STYLE.name);
    cols[at::CATEGORY] = category_sql(caps);
    cols.join(", ")
}

/// One row as a [`Found`]. Every value is read leniently (see [`crate::stores::read`]): a row
/// written by a stranger must not stop delivery.
fn envelope(r: &Row<'_>, rowid: i64) -> rusqlite::Result<Found> {
    let guid = sanitize(
        &read::text(r, at::GUID)?.unwrap_or_default(),
        MAX_NAME_CHARS,
    );
    let date = from_apple(read::int(r, at::DATE)?);
    let clean = |i: usize| -> rusqlite::Result<Option<String>> {
        Ok(read::text(r, i)?
            .map(|s| sanitize(&s, MAX_NAME_CHARS))
            .filter(|s| !s.is_empty()))
    };
    let mut data = object([
        ("guid", guid.as_str().into()),
        (
            "from",
            object([
                ("handle", clean(at::HANDLE)?.into()),
                ("service", clean(at::SERVICE)?.into()),
            ]),
        ),
        (
            "chat",
            object([
                ("identifier", clean(at::CHAT_IDENTIFIER)?.into()),
                ("name", clean(at::CHAT_NAME)?.into()),
                (
                    "isGroup",
                    (read::int(r, at::CHAT_STYLE)? == Some(GROUP_STYLE)).into(),
                ),
            ]),
        ),
        ("date", date.map(iso8601).into()),
        (
            "attachmentCount",
            read::int(r, at::ATTACHMENTS)?.unwrap_or(0).into(),
        ),
        (
            "isReply",
            read::text(r, at::THREAD)?
                .is_some_and(|g| !g.is_empty())
                .into(),
        ),
    ]);
    // Absent, not null, when Messages files it nowhere special.
    if let (Some(c), serde_json::Value::Object(fields)) = (
        read::int(r, at::CATEGORY)?.and_then(Category::from_code),
        &mut data,
    ) {
        fields.insert("category".to_owned(), c.name().into());
    }
    // The guid is the stable id; a row without a usable one (never seen from Messages) still
    // gets a unique id.
    let event_id = if guid.is_empty() {
        format!("rowid-{rowid}")
    } else {
        guid.clone()
    };
    Ok(Found {
        rowid,
        event_id,
        date,
        data,
    })
}
