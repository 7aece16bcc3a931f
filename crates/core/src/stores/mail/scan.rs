//! The Envelope Index scan: the filter pushed into SQL, rows turned into envelopes.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use serde_json::Value;

use super::mailboxes::MailboxLookup;
use super::schema::{
    ADDRESSES_ADDRESS, ADDRESSES_COMMENT, GLOBAL_HIGH_IMPACT, GLOBAL_MESSAGE_ID_HEADER,
    GLOBAL_MODEL_CATEGORY, GLOBAL_URGENT, MESSAGES_DATE_RECEIVED, MESSAGES_DATE_SENT,
    MESSAGES_FLAGGED, MESSAGES_GLOBAL_ID, MESSAGES_IS_URGENT, MESSAGES_MAILBOX, MESSAGES_READ,
    MESSAGES_SENDER, MESSAGES_SUBJECT, MESSAGES_SUBJECT_PREFIX, MailCaps, SUBJECTS_SUBJECT,
};
use crate::dates::{from_unix_secs, iso8601};
use crate::descriptor::MAX_RECIPIENTS;
use crate::event::{Category, object};
use crate::filter::MailFilter;
use crate::stores::columns::Col;
use crate::stores::read::{self, Read};
use crate::stores::sql::{in_list, memberships, sender_condition};
use crate::stores::{Found, Window};
use crate::text::{MAX_MESSAGE_ID_CHARS, MAX_NAME_CHARS, MAX_SUBJECT_CHARS, sanitize};

/// The matching rows of `window`, in ROWID order, each read or marked unreadable.
pub(crate) fn rows(
    conn: &Connection,
    caps: MailCaps,
    lookup: &MailboxLookup,
    filter: &MailFilter,
    window: Window,
    per_row: bool,
) -> rusqlite::Result<Vec<Read>> {
    let Query {
        sql,
        params,
        wanted_mailboxes,
    } = query(caps, lookup, filter, window, per_row);
    // Cached: the text is the same for every call of one subscription (only the values bound
    // change), so it is compiled once per connection.
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params_from_iter(params))?;
    // Each envelope is built as its row is stepped (its own lookups run beside the scan's
    // statement): gathering a window's wide rows first cost a `realloc` chain per call that
    // was a tenth of a catch-up's scan (docs/benchmarks.md).
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        // Every value is read leniently (see `stores::read`): a stranger's row must not stop
        // delivery.
        let m = RawMail {
            rowid: r.get(at::ROWID)?,
            global_id: read::int(r, at::GLOBAL_ID)?,
            subject_prefix: read::text(r, at::SUBJECT_PREFIX)?,
            subject: read::text(r, at::SUBJECT)?,
            date_sent: read::int(r, at::DATE_SENT)?,
            date_received: read::int(r, at::DATE_RECEIVED)?,
            mailbox: read::int(r, at::MAILBOX)?,
            read: read::int(r, at::READ)?.unwrap_or(0) != 0,
            flagged: read::int(r, at::FLAGGED)?.unwrap_or(0) != 0,
            message_id: read::text(r, at::MESSAGE_ID)?,
            address: read::text(r, at::ADDRESS)?,
            name: read::text(r, at::NAME)?,
            attachment_count: read::int(r, at::ATTACHMENTS)?.unwrap_or(0),
            category: read::int(r, at::CATEGORY)?.and_then(Category::from_code),
            priority: read::int(r, at::PRIORITY)?,
        };
        let rowid = m.rowid;
        out.push(Read::of(
            rowid,
            envelope(conn, caps, lookup, &wanted_mailboxes, m),
        )?);
    }
    Ok(out)
}

/// A scan's SQL and the values it binds. The text depends only on the filter's shape (how
/// many patterns of each kind, mailboxes and the store's features) and on whether senders are
/// tested per row (`memberships`), never on its bounds or the patterns' values, so one
/// subscription's polls share two compiled statements at most.
pub(crate) struct Query {
    pub sql: String,
    pub params: Vec<SqlValue>,
    /// The mailbox ROWIDs the filter names (empty when it names none).
    pub wanted_mailboxes: Vec<i64>,
}

/// The scan of `window` for `filter`, as SQL and parameters.
pub(crate) fn query(
    caps: MailCaps,
    lookup: &MailboxLookup,
    filter: &MailFilter,
    window: Window,
    per_row: bool,
) -> Query {
    let mut params: Vec<SqlValue> = vec![
        SqlValue::Integer(window.after),
        SqlValue::Integer(window.upto),
    ];
    let mut conditions = vec![
        "m.ROWID > ?".to_owned(),
        "m.ROWID <= ?".to_owned(),
        // Unary `+`: not through `(deleted)`/`(deleted, ROWID)`, which walks every row of
        // the window in the index and then seeks each in the table (about twice a table
        // scan). Left to choose between the table in ROWID order and the sender index, the
        // planner takes the sender index for a selective allowlist or filter: a catch-up
        // then reads only the rows of the senders it wants (docs/benchmarks.md).
        "+m.deleted = 0".to_owned(),
    ];
    // The filter's senders pick the rows (listed, so a sender index can drive the scan);
    // the allowlist is then tested on those rows' senders only; a short window, or a dense
    // match, tests both per row (see `memberships`).
    let [senders, allow] = memberships(&filter.senders, per_row);
    for (patterns, membership) in [(&filter.senders, senders), (&filter.allow, allow)] {
        if !patterns.is_empty() {
            let cond = sender_condition(
                "m.sender",
                "addresses",
                "address",
                patterns,
                membership,
                &mut params,
            );
            conditions.push(cond);
        }
    }
    // One event per message: a later copy of a message already seen (same global id) is not
    // new mail, even when the earlier copy is now deleted: that is what a move or a delete to
    // Trash looks like (a new row elsewhere, the old one marked deleted). The unary `+` keeps
    // SQLite from answering this through `(deleted, ROWID)`, which walks every earlier row
    // (quadratic over a drain), instead of the message's copies.
    conditions.push(
        "NOT EXISTS (SELECT 1 FROM messages d WHERE d.global_message_id = m.global_message_id \
         AND +d.ROWID < m.ROWID)"
            .to_owned(),
    );
    let mut wanted_mailboxes = Vec::new();
    if !filter.mailboxes.is_empty() {
        wanted_mailboxes = lookup.resolve(&filter.mailboxes).0;
        // Any live copy of the message, or any of its labels, may put it in a wanted mailbox.
        let ids = in_list(&wanted_mailboxes, &mut params);
        let labels = if caps.labels {
            let ids2 = in_list(&wanted_mailboxes, &mut params);
            format!(
                " OR EXISTS (SELECT 1 FROM labels l WHERE l.message_id = c.ROWID AND l.mailbox_id IN ({ids2}))"
            )
        } else {
            String::new()
        };
        conditions.push(format!(
            "EXISTS (SELECT 1 FROM messages c WHERE c.global_message_id = m.global_message_id \
             AND +c.deleted = 0 AND (c.mailbox IN ({ids}){labels}))"
        ));
    }
    if let Some(account) = &filter.account {
        // Any live copy of the message in one of the account's mailboxes.
        let ids = in_list(&lookup.account_mailboxes(account), &mut params);
        conditions.push(format!(
            "EXISTS (SELECT 1 FROM messages c WHERE c.global_message_id = m.global_message_id \
             AND +c.deleted = 0 AND c.mailbox IN ({ids}))"
        ));
    }
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
        "SELECT {} FROM messages m \
         LEFT JOIN subjects s ON s.ROWID = m.{subject} \
         LEFT JOIN addresses a ON a.ROWID = m.{sender} \
         {} \
         WHERE {} ORDER BY m.ROWID LIMIT ?",
        select_list(caps),
        joins(caps),
        conditions.join(" AND "),
        subject = MESSAGES_SUBJECT.name,
        sender = MESSAGES_SENDER.name,
    );
    Query {
        sql,
        params,
        wanted_mailboxes,
    }
}

/// The scan's result columns, by position: `select_list` puts each expression at its ordinal.
mod at {
    pub(super) const ROWID: usize = 0;
    pub(super) const GLOBAL_ID: usize = 1;
    pub(super) const SUBJECT_PREFIX: usize = 2;
    pub(super) const SUBJECT: usize = 3;
    pub(super) const DATE_SENT: usize = 4;
    pub(super) const DATE_RECEIVED: usize = 5;
    pub(super) const MAILBOX: usize = 6;
    pub(super) const READ: usize = 7;
    pub(super) const FLAGGED: usize = 8;
    pub(super) const MESSAGE_ID: usize = 9;
    pub(super) const ADDRESS: usize = 10;
    pub(super) const NAME: usize = 11;
    pub(super) const ATTACHMENTS: usize = 12;
    pub(super) const CATEGORY: usize = 13;
    pub(super) const PRIORITY: usize = 14;
    pub(super) const COUNT: usize = 15;
}

/// The optional joins: the global data row (`g`) and the user's category for the sender (`b`,
/// one row per address at most: `UNIQUE(address)`).
pub(crate) fn joins(caps: MailCaps) -> String {
    let mut out = Vec::new();
    if caps.global_data() {
        out.push(format!(
            "LEFT JOIN {} g ON g.ROWID = m.{}",
            GLOBAL_MESSAGE_ID_HEADER.table, MESSAGES_GLOBAL_ID.name
        ));
    }
    if caps.sender_category {
        out.push(format!(
            "LEFT JOIN business_addresses b ON b.address = m.{}",
            MESSAGES_SENDER.name
        ));
    }
    out.join(" ")
}

/// The message's category as Mail's code (`Category::code`), NULL when unknown: the user's
/// choice for the sender, else Primary for high impact, else the model's category. Only the
/// four known codes count; any other value is unknown. `NULL` without the columns.
pub(crate) fn category_sql(caps: MailCaps) -> String {
    let mut arms = Vec::new();
    if caps.sender_category {
        arms.push("WHEN b.category IN (0, 1, 2, 3) THEN b.category".to_owned());
    }
    if caps.high_impact {
        arms.push(format!("WHEN g.{} = 1 THEN 0", GLOBAL_HIGH_IMPACT.name));
    }
    if caps.category {
        let c = GLOBAL_MODEL_CATEGORY.name;
        arms.push(format!("WHEN g.{c} IN (0, 1, 2, 3) THEN g.{c}"));
    }
    if arms.is_empty() {
        "NULL".to_owned()
    } else {
        format!("(CASE {} END)", arms.join(" "))
    }
}

/// The priority as a code: 2 urgent, 1 high (high impact), NULL none.
fn priority_sql(caps: MailCaps) -> String {
    let mut urgent = Vec::new();
    if caps.urgent {
        urgent.push(format!("g.{} = 1", GLOBAL_URGENT.name));
    }
    if caps.is_urgent {
        urgent.push(format!("m.{} = 1", MESSAGES_IS_URGENT.name));
    }
    let mut arms = Vec::new();
    if !urgent.is_empty() {
        arms.push(format!("WHEN {} THEN 2", urgent.join(" OR ")));
    }
    if caps.high_impact {
        arms.push(format!("WHEN g.{} = 1 THEN 1", GLOBAL_HIGH_IMPACT.name));
    }
    if arms.is_empty() {
        "NULL".to_owned()
    } else {
        format!("(CASE {} END)", arms.join(" "))
    }
}

/// The SELECT list, written from the schema's column constants (the probe requires each).
fn select_list(caps: MailCaps) -> String {
    let mut cols: [String; at::COUNT] = Default::default();
    let m = |c: Col| format!("m.{}", c.name);
    cols[at::ROWID] = "m.ROWID".into();
    cols[at::GLOBAL_ID] = m(MESSAGES_GLOBAL_ID);
    cols[at::SUBJECT_PREFIX] = m(MESSAGES_SUBJECT_PREFIX);
    cols[at::SUBJECT] = format!("s.{}", SUBJECTS_SUBJECT.name);
    cols[at::DATE_SENT] = m(MESSAGES_DATE_SENT);
    cols[at::DATE_RECEIVED] = m(MESSAGES_DATE_RECEIVED);
    cols[at::MAILBOX] = m(MESSAGES_MAILBOX);
    cols[at::READ] = m(MESSAGES_READ);
    cols[at::FLAGGED] = m(MESSAGES_FLAGGED);
    cols[at::MESSAGE_ID] = if caps.message_id_header {
        format!("g.{}", GLOBAL_MESSAGE_ID_HEADER.name)
    } else {
        "NULL".into()
    };
    cols[at::ADDRESS] = format!("a.{}", ADDRESSES_ADDRESS.name);
    cols[at::NAME] = format!("a.{}", ADDRESSES_COMMENT.name);
    // Counted in the scan, not by a statement of its own per row (issue 14).
    cols[at::ATTACHMENTS] = if caps.attachments {
        "(SELECT count(*) FROM attachments x WHERE x.message = m.ROWID)".into()
    } else {
        "0".into()
    };
    cols[at::CATEGORY] = category_sql(caps);
    cols[at::PRIORITY] = priority_sql(caps);
    cols.join(", ")
}

struct RawMail {
    rowid: i64,
    global_id: Option<i64>,
    subject_prefix: Option<String>,
    subject: Option<String>,
    date_sent: Option<i64>,
    date_received: Option<i64>,
    mailbox: Option<i64>,
    read: bool,
    flagged: bool,
    message_id: Option<String>,
    address: Option<String>,
    name: Option<String>,
    attachment_count: i64,
    category: Option<Category>,
    /// 2 urgent, 1 high ([`priority_sql`]).
    priority: Option<i64>,
}

fn person(address: Option<&str>, name: Option<&str>) -> Value {
    let name = name
        .map(|n| sanitize(n, MAX_NAME_CHARS))
        .filter(|n| !n.is_empty());
    object([
        (
            "address",
            sanitize(address.unwrap_or(""), MAX_NAME_CHARS).into(),
        ),
        ("name", name.into()),
    ])
}

fn envelope(
    conn: &Connection,
    caps: MailCaps,
    lookup: &MailboxLookup,
    wanted: &[i64],
    m: RawMail,
) -> rusqlite::Result<Found> {
    let mut to = Vec::new();
    let mut cc = Vec::new();
    // By position, then type: each list is still in its positions' order, and Mail's
    // `(message, position, type, address)` index answers the query alone, where `(type,
    // position)` order took the unique index and a table seek per recipient.
    let mut stmt = conn.prepare_cached(
        "SELECT r.type, a.address, a.comment FROM recipients r JOIN addresses a ON a.ROWID = r.address \
         WHERE r.message = ?1 ORDER BY r.position, r.type",
    )?;
    let mut rows = stmt.query([m.rowid])?;
    while let Some(r) = rows.next()? {
        let list = match read::int(r, 0)? {
            Some(0) => &mut to,
            Some(1) => &mut cc,
            _ => continue, // Bcc (presumably 2) is not part of what the sender showed.
        };
        if list.len() < MAX_RECIPIENTS {
            // Columns of the recipients query above (not the scan's `at`): address, comment.
            list.push(person(
                read::text(r, 1)?.as_deref(),
                read::text(r, 2)?.as_deref(),
            ));
        }
    }
    let mailbox_id = primary_mailbox(conn, caps, lookup, wanted, &m)?;
    let mailbox = mailbox_id.and_then(|id| lookup.get(id));
    let subject = format!(
        "{}{}",
        m.subject_prefix.unwrap_or_default(),
        m.subject.unwrap_or_default()
    );
    let message_id = m
        .message_id
        .map(|s| sanitize(&s, MAX_MESSAGE_ID_CHARS))
        .filter(|s| !s.is_empty());
    let date = from_unix_secs(m.date_received);
    let event_id = match (&message_id, m.global_id) {
        (Some(id), _) => id.clone(),
        (None, Some(global)) => format!("gmid-{global}"),
        // No global id (never seen in a real index): the ROWID is still unique in this file.
        (None, None) => format!("rowid-{}", m.rowid),
    };
    let mut data = object([
        ("messageId", message_id.into()),
        ("from", person(m.address.as_deref(), m.name.as_deref())),
        ("to", to.into()),
        ("cc", cc.into()),
        ("subject", sanitize(&subject, MAX_SUBJECT_CHARS).into()),
        (
            "mailbox",
            mailbox.map(|mb| sanitize(&mb.path, MAX_NAME_CHARS)).into(),
        ),
        (
            "account",
            mailbox.and_then(|mb| lookup.account_name(mb)).into(),
        ),
        ("dateReceived", date.map(iso8601).into()),
        ("dateSent", from_unix_secs(m.date_sent).map(iso8601).into()),
        ("read", m.read.into()),
        ("flagged", m.flagged.into()),
        ("attachmentCount", m.attachment_count.into()),
    ]);
    // Absent, not null, when unknown: an event never claims a category Mail did not give.
    if let Value::Object(fields) = &mut data {
        if let Some(c) = m.category {
            fields.insert("category".to_owned(), c.name().into());
        }
        let priority = match m.priority {
            Some(2) => Some("urgent"),
            Some(1) => Some("high"),
            _ => None,
        };
        if let Some(p) = priority {
            fields.insert("priority".to_owned(), p.into());
        }
    }
    Ok(Found {
        rowid: m.rowid,
        event_id,
        date,
        data,
    })
}

/// The mailbox to report: one the client asked for, else INBOX when a label says so (Gmail),
/// else the row's own.
fn primary_mailbox(
    conn: &Connection,
    caps: MailCaps,
    lookup: &MailboxLookup,
    wanted: &[i64],
    m: &RawMail,
) -> rusqlite::Result<Option<i64>> {
    // The row's own mailbox, then every live copy's, then their labels: one look at the
    // message's copies (a statement per part would be a second seek per event).
    let mut candidates: Vec<i64> = m.mailbox.into_iter().collect();
    let mut labels = Vec::new();
    let sql = if caps.labels {
        "SELECT c.ROWID, c.mailbox, l.mailbox_id FROM messages c \
         LEFT JOIN labels l ON l.message_id = c.ROWID \
         WHERE c.global_message_id = ?1 AND +c.deleted = 0"
    } else {
        "SELECT c.ROWID, c.mailbox, NULL FROM messages c \
         WHERE c.global_message_id = ?1 AND +c.deleted = 0"
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query([m.global_id])?;
    let mut copy = None;
    while let Some(r) = rows.next()? {
        // A copy with several labels comes once per label: its mailbox counts once.
        let rowid: i64 = r.get(0)?;
        if copy != Some(rowid) {
            copy = Some(rowid);
            candidates.extend(read::int(r, 1)?);
        }
        labels.extend(read::int(r, 2)?);
    }
    candidates.append(&mut labels);
    if let Some(id) = candidates.iter().find(|id| wanted.contains(id)) {
        return Ok(Some(*id));
    }
    let inbox = candidates.iter().find(|id| {
        lookup
            .get(**id)
            .is_some_and(|mb| mb.path.eq_ignore_ascii_case("INBOX"))
    });
    Ok(inbox.or(candidates.first()).copied())
}
