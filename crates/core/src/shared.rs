//! Shared reads: a store's new rows read once, unfiltered, then matched in memory against each
//! subscription, so a commit costs one query however many streams listen (decisions/fanout.md).
//!
//! [`Engine::read_shared`] is [`Engine::next`] without a filter (the skip rules, the one event
//! per message rule, unreadable rows and the backfill guard apply as always), plus each row's
//! *facts*: what the SQL filters test, read from the same warm store under the same lock (the
//! raw sender handle, the mailboxes of the message's live copies and labels, the chats it is
//! in, its service; its category is the event's own). [`Shared::batch_for`] then answers what `next` would have answered for
//! one subscription, from memory. The tests in `tests/engine/shared.rs` run the same rows and
//! filters through both paths and compare.

use std::collections::HashMap;

use rusqlite::Connection;

use crate::cursor::{Cursor, FileIdentity};
use crate::error::StoreError;
use crate::event::{Category, EventType, Occurrence};
use crate::filter::{MailFilter, MailboxRef, MessagesFilter, SenderPattern};
use crate::poll::{Batch, Engine};
use crate::request::{Filter, Subscription};
use crate::stores::mail::{MailStore, MailboxLookup};
use crate::stores::messages::MessagesStore;
use crate::stores::read;
use crate::text::{MAX_NAME_CHARS, sanitize};

/// Events one shared read returns at most (the rows it examines are bounded by
/// `Limits::scan_rows`, as every read is).
pub const SHARED_MAX_EVENTS: u32 = 1000;

/// One unfiltered read of a store after a position, ready to be matched per subscription.
#[derive(Clone, Debug)]
pub struct Shared {
    event_type: EventType,
    /// The position read after.
    after: Cursor,
    /// Every event in `(after, batch.cursor]`, unfiltered.
    batch: Batch,
    facts: Facts,
}

/// What the filters test about each event of a batch, in the batch's order.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// The file the facts were read from (a replaced file makes them unusable).
    identity: Option<FileIdentity>,
    rows: Vec<RowFacts>,
    /// The mailboxes the rows name, as the lookup knew them.
    mailboxes: HashMap<i64, MailboxFacts>,
}

#[derive(Clone, Debug)]
enum RowFacts {
    Mail {
        rowid: i64,
        /// `addresses.address` of the sender, as stored.
        sender: Option<String>,
        /// The row's own mailbox, then its live copies', then their labels', in the order
        /// the envelope's mailbox is picked from.
        candidates: Vec<i64>,
        /// The mailboxes of the live copies (an account filter looks at these only).
        copies: Vec<i64>,
        /// The label mailboxes of the live copies.
        labels: Vec<i64>,
    },
    Messages {
        rowid: i64,
        /// `handle.id` of the sender, as stored.
        handle: Option<String>,
        /// `coalesce(message.service, chat.service_name)`, what `from.service` reports.
        service: Option<String>,
        /// `(chat_identifier, guid)` of every chat the message is in.
        chats: Vec<(Option<String>, Option<String>)>,
    },
}

#[derive(Clone, Debug)]
struct MailboxFacts {
    account_id: String,
    path: String,
    account_name: Option<String>,
}

impl Engine {
    /// Read the events of `ty`'s store after `after`, unfiltered, with what each subscription
    /// needs to pick its own from them ([`Shared::batch_for`]). Bounded as [`Engine::next`]
    /// is: at most `Limits::scan_rows` ROWIDs examined and [`SHARED_MAX_EVENTS`] events.
    pub fn read_shared(&self, ty: EventType, after: Cursor) -> Result<Shared, StoreError> {
        let (batch, facts) =
            self.next_unfiltered(ty, after, SHARED_MAX_EVENTS, mail_facts, messages_facts)?;
        Ok(Shared {
            event_type: ty,
            after,
            batch,
            facts,
        })
    }
}

impl Shared {
    /// The type whose store was read.
    pub fn event_type(&self) -> EventType {
        self.event_type
    }

    /// The position the read started after.
    pub fn after(&self) -> Cursor {
        self.after
    }

    /// The position after the read (the cursor of every batch it answers).
    pub fn cursor(&self) -> Cursor {
        self.batch.cursor
    }

    /// The store had more than this read returned.
    pub fn has_more(&self) -> bool {
        self.batch.has_more
    }

    /// The read found the store replaced (a gap): every stream at `after` restarts at the head.
    pub fn truncated(&self) -> bool {
        self.batch.truncated
    }

    /// Whether a stream at `at` can take its next batch from this read: `at` lies in the span
    /// read, `[after, cursor)`, in the same file.
    pub fn covers(&self, at: Cursor) -> bool {
        if self.batch.truncated {
            return at == self.after;
        }
        // Its own start always (a read that found nothing answers "nothing" for it), else a
        // position inside the span read.
        at.is_in(self.batch.cursor.identity)
            && self.after.rowid <= at.rowid
            && (at.rowid == self.after.rowid || at.rowid < self.batch.cursor.rowid)
            && self.facts.identity == Some(self.batch.cursor.identity)
            && self.facts.rows.len() == self.batch.events.len()
    }

    /// Every event the read found, unfiltered, in order: what [`Pick::Same`] indexes.
    pub fn events(&self) -> &[Occurrence] {
        &self.batch.events
    }

    /// What [`Engine::next`] would answer for `sub` at `at`, up to this read's cursor: its
    /// events after `at`, filtered in memory exactly as the SQL would. `None` when this read
    /// does not cover `at` ([`Shared::covers`]) or is of another type; the stream then reads
    /// on its own.
    pub fn batch_for(&self, sub: &Subscription, at: Cursor) -> Option<Batch> {
        let picks = self.picks_for(sub, at)?;
        Some(Batch {
            events: picks
                .picks
                .into_iter()
                .map(|pick| match pick {
                    Pick::Same(index) => self.batch.events[index].clone(),
                    Pick::Own(event) => event,
                })
                .collect(),
            cursor: picks.cursor,
            has_more: picks.has_more,
            truncated: picks.truncated,
        })
    }

    /// [`Shared::batch_for`] without copying: each event `sub` gets is named by its index in
    /// [`Shared::events`] when it goes out as read (so a caller can encode it once for every
    /// stream), and given whole only when this subscription sees it otherwise (a mailbox
    /// filter names the mailbox it asked for).
    pub fn picks_for(&self, sub: &Subscription, at: Cursor) -> Option<Picks> {
        if sub.event_type() != self.event_type || !self.covers(at) {
            return None;
        }
        let mut picks = Vec::new();
        if self.batch.truncated {
            picks.extend((0..self.batch.events.len()).map(Pick::Same));
        } else {
            for (index, (event, facts)) in
                self.batch.events.iter().zip(&self.facts.rows).enumerate()
            {
                if facts.rowid() <= at.rowid {
                    continue;
                }
                if let Some(pick) = self.deliver(sub.filter(), index, event, facts) {
                    picks.push(pick);
                }
            }
        }
        Some(Picks {
            picks,
            cursor: self.batch.cursor,
            has_more: self.batch.has_more,
            truncated: self.batch.truncated,
        })
    }

    /// Event `index` as `filter` would have it, or `None` when the filter keeps it out.
    fn deliver(
        &self,
        filter: &Filter,
        index: usize,
        event: &Occurrence,
        facts: &RowFacts,
    ) -> Option<Pick> {
        match (filter, facts) {
            (Filter::Mail(f), RowFacts::Mail { sender, .. }) => {
                if !senders_pass(&f.senders, sender.as_deref())
                    || !senders_pass(&f.allow, sender.as_deref())
                    || !categories_pass(&f.categories, event)
                {
                    return None;
                }
                self.mail_places(f, index, event, facts)
            }
            (Filter::Messages(f), RowFacts::Messages { handle, .. }) => {
                let pass = senders_pass(&f.senders, handle.as_deref())
                    && senders_pass(&f.allow, handle.as_deref())
                    && categories_pass(&f.categories, event)
                    && messages_places(f, facts);
                pass.then_some(Pick::Same(index))
            }
            _ => None,
        }
    }

    /// The mailbox and account tests of a mail filter; a mailbox filter also reports the
    /// first of the message's mailboxes it asked for, as the SQL path's envelope does.
    fn mail_places(
        &self,
        f: &MailFilter,
        index: usize,
        event: &Occurrence,
        facts: &RowFacts,
    ) -> Option<Pick> {
        let RowFacts::Mail {
            candidates,
            copies,
            labels,
            ..
        } = facts
        else {
            return None;
        };
        let mailbox = |id: &i64| self.facts.mailboxes.get(id);
        if let Some(account) = &f.account
            && !copies
                .iter()
                .any(|id| mailbox(id).is_some_and(|mb| in_account(account, mb)))
        {
            return None;
        }
        if f.mailboxes.is_empty() {
            return Some(Pick::Same(index));
        }
        let wanted =
            |id: &i64| mailbox(id).is_some_and(|mb| f.mailboxes.iter().any(|r| names(r, mb)));
        if !copies.iter().chain(labels).any(wanted) {
            return None;
        }
        let mut event = event.clone();
        if let Some(mb) = candidates.iter().find(|id| wanted(id)).and_then(mailbox) {
            event.data["mailbox"] = sanitize(&mb.path, MAX_NAME_CHARS).into();
            event.data["account"] = mb.account_name.clone().into();
        }
        Some(Pick::Own(event))
    }
}

/// The events of a [`Shared`] read one subscription gets, as [`Shared::picks_for`] names them.
#[derive(Debug)]
pub struct Picks {
    /// In order.
    pub picks: Vec<Pick>,
    /// As [`Batch::cursor`].
    pub cursor: Cursor,
    /// As [`Batch::has_more`].
    pub has_more: bool,
    /// As [`Batch::truncated`].
    pub truncated: bool,
}

/// One event of [`Picks`].
#[derive(Debug)]
pub enum Pick {
    /// [`Shared::events`]`[i]`, exactly as read.
    Same(usize),
    /// An event as this subscription alone sees it.
    Own(Occurrence),
}

impl Facts {
    /// The facts of a batch with no events (or a gap): nothing to know.
    fn empty(batch: &Batch) -> Facts {
        Facts {
            identity: Some(batch.cursor.identity),
            ..Facts::default()
        }
    }
}

impl RowFacts {
    fn rowid(&self) -> i64 {
        match self {
            RowFacts::Mail { rowid, .. } | RowFacts::Messages { rowid, .. } => *rowid,
        }
    }
}

/// An empty list is no bound; else the handle must match one pattern (a row without one
/// matches none, as SQL's `IN` over a NULL does).
fn senders_pass(patterns: &[SenderPattern], handle: Option<&str>) -> bool {
    patterns.is_empty() || handle.is_some_and(|h| patterns.iter().any(|p| p.matches(h)))
}

/// The category test, on the category the event reports: the scan computed it with the SQL
/// the filtered path tests, so both agree; absent counts as Primary.
fn categories_pass(wanted: &[Category], event: &Occurrence) -> bool {
    let category = event
        .data
        .get("category")
        .and_then(serde_json::Value::as_str)
        .and_then(Category::parse);
    Category::passes(wanted, category)
}

/// The chat and service tests of a Messages filter; `NOCASE` folds ASCII only, as here.
fn messages_places(f: &MessagesFilter, facts: &RowFacts) -> bool {
    let RowFacts::Messages { service, chats, .. } = facts else {
        return false;
    };
    let named = |value: &Option<String>| {
        value
            .as_deref()
            .is_some_and(|v| f.chats.iter().any(|c| c.eq_ignore_ascii_case(v)))
    };
    (f.chats.is_empty() || chats.iter().any(|(id, guid)| named(id) || named(guid)))
        && f.service.is_none_or(|s| {
            service
                .as_deref()
                .is_some_and(|v| v.eq_ignore_ascii_case(s.as_str()))
        })
}

/// `MailboxLookup`'s own test of a reference against a mailbox.
fn names(r: &MailboxRef, mb: &MailboxFacts) -> bool {
    r.path.to_lowercase() == mb.path.to_lowercase()
        && r.account.as_deref().is_none_or(|a| in_account(a, mb))
}

/// `MailboxLookup`'s own test of an account (UUID, or name from the account map).
fn in_account(a: &str, mb: &MailboxFacts) -> bool {
    a.eq_ignore_ascii_case(&mb.account_id)
        || mb
            .account_name
            .as_ref()
            .is_some_and(|n| n.to_lowercase() == a.to_lowercase())
}

/// The ROWIDs of a batch's events, from their cursors (core wrote them).
fn rowids(batch: &Batch) -> Vec<i64> {
    batch
        .events
        .iter()
        .filter_map(|e| e.cursor.parse::<Cursor>().ok().map(|c| c.rowid))
        .collect()
}

/// A sender handle as SQL compares it: its bytes, with each invalid UTF-8 sequence read as
/// NUL, a character no sender pattern may hold, so a pattern never matches where the raw
/// bytes would not (the envelope's lossy U+FFFD could be typed into a pattern).
fn handle_text(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<Option<String>> {
    use rusqlite::types::ValueRef;
    Ok(match row.get_ref(idx)? {
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(match std::str::from_utf8(b) {
            Ok(s) => s.to_owned(),
            Err(_) => String::from_utf8_lossy(b).replace('\u{FFFD}', "\0"),
        }),
        _ => read::text(row, idx)?,
    })
}

/// The facts of a mail batch's events.
fn mail_facts(store: &mut MailStore, batch: &Batch) -> Result<Facts, StoreError> {
    let ids = rowids(batch);
    if batch.truncated || ids.is_empty() {
        return Ok(Facts::empty(batch));
    }
    let ((rows, mailboxes), identity) = store.with_reader(|conn, labels, lookup| {
        let mut rows = Vec::with_capacity(ids.len());
        let mut mailboxes = HashMap::new();
        for &rowid in &ids {
            let row = mail_row(conn, labels, rowid)?;
            if let RowFacts::Mail { candidates, .. } = &row {
                for id in candidates {
                    if let Some(mb) = mailbox_facts(lookup, *id) {
                        mailboxes.entry(*id).or_insert(mb);
                    }
                }
            }
            rows.push(row);
        }
        Ok((rows, mailboxes))
    })?;
    Ok(Facts {
        identity: Some(identity),
        rows,
        mailboxes,
    })
}

fn mailbox_facts(lookup: &MailboxLookup, id: i64) -> Option<MailboxFacts> {
    let mb = lookup.get(id)?;
    Some(MailboxFacts {
        account_id: mb.account_id.clone(),
        path: mb.path.clone(),
        account_name: lookup.account_name(mb).map(str::to_owned),
    })
}

/// One mail row's facts, with the queries the scan's filter and envelope use.
fn mail_row(conn: &Connection, labels: bool, rowid: i64) -> rusqlite::Result<RowFacts> {
    let (own, global_id, sender) = conn
        .prepare_cached(
            "SELECT m.mailbox, m.global_message_id, a.address FROM messages m \
             LEFT JOIN addresses a ON a.ROWID = m.sender WHERE m.ROWID = ?1",
        )?
        .query_row([rowid], |r| {
            Ok((read::int(r, 0)?, read::int(r, 1)?, handle_text(r, 2)?))
        })?;
    let ints = |sql: &str| -> rusqlite::Result<Vec<i64>> {
        let mut stmt = conn.prepare_cached(sql)?;
        let mut rows = stmt.query([global_id])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.extend(read::int(r, 0)?);
        }
        Ok(out)
    };
    let copies =
        ints("SELECT c.mailbox FROM messages c WHERE c.global_message_id = ?1 AND +c.deleted = 0")?;
    let labels = if labels {
        ints(
            "SELECT l.mailbox_id FROM labels l JOIN messages c ON c.ROWID = l.message_id \
             WHERE c.global_message_id = ?1 AND +c.deleted = 0",
        )?
    } else {
        Vec::new()
    };
    let candidates = own
        .into_iter()
        .chain(copies.iter().copied())
        .chain(labels.iter().copied())
        .collect();
    Ok(RowFacts::Mail {
        rowid,
        sender,
        candidates,
        copies,
        labels,
    })
}

/// The facts of a Messages batch's events.
fn messages_facts(store: &mut MessagesStore, batch: &Batch) -> Result<Facts, StoreError> {
    let ids = rowids(batch);
    if batch.truncated || ids.is_empty() {
        return Ok(Facts::empty(batch));
    }
    let (rows, identity) = store.with_reader(|conn| {
        ids.iter()
            .map(|&rowid| messages_row(conn, rowid))
            .collect::<rusqlite::Result<Vec<_>>>()
    })?;
    Ok(Facts {
        identity: Some(identity),
        rows,
        mailboxes: HashMap::new(),
    })
}

/// One Messages row's facts, with the joins the scan uses.
fn messages_row(conn: &Connection, rowid: i64) -> rusqlite::Result<RowFacts> {
    let (handle, service) = conn
        .prepare_cached(
            "SELECT h.id, coalesce(m.service, c.service_name) FROM message m \
             LEFT JOIN handle h ON h.ROWID = m.handle_id \
             LEFT JOIN chat c ON c.ROWID = \
             (SELECT chat_id FROM chat_message_join WHERE message_id = m.ROWID LIMIT 1) \
             WHERE m.ROWID = ?1",
        )?
        .query_row([rowid], |r| Ok((handle_text(r, 0)?, read::text(r, 1)?)))?;
    let mut stmt = conn.prepare_cached(
        "SELECT c.chat_identifier, c.guid FROM chat_message_join j \
         JOIN chat c ON c.ROWID = j.chat_id WHERE j.message_id = ?1",
    )?;
    let mut rows = stmt.query([rowid])?;
    let mut chats = Vec::new();
    while let Some(r) = rows.next()? {
        chats.push((read::text(r, 0)?, read::text(r, 1)?));
    }
    Ok(RowFacts::Messages {
        rowid,
        handle,
        service,
        chats,
    })
}
