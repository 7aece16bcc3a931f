//! Messages' chat.db: `messages.received`.
//!
//! Rows are `message`; a row becomes an event when someone else sent it and it is a message:
//! not `is_from_me`, not a tapback or other associated message, not a group event
//! (`item_type` ≠ 0), not unsent, not in Recently Deleted. Edits and unsends update existing
//! rows, so a ROWID cursor never mistakes them for new messages.

mod scan;
pub(crate) mod schema;

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::OptionalExtension;
use time::OffsetDateTime;

use super::newest::{Beside, NewestSql};
use super::open::SeekSql;
use super::{Dates, Scan, Source, Stamp, StoreHandle, Window, read};
use crate::dates::to_apple_nanos;
use crate::error::StoreError;
use crate::filter::MessagesFilter;

use schema::MessagesCaps;

/// A warm, read-only handle on chat.db.
pub(crate) struct MessagesStore {
    handle: StoreHandle<MessagesCaps>,
    /// A second connection to the same file, for the backfill guard's dates read beside a
    /// catch-up's scan (`Source::scan_beside`); closed on any change the stamp sees.
    beside: Beside<MessagesCaps>,
}

impl MessagesStore {
    /// A handle on the database at `chat_db`. Nothing is opened until first use.
    pub fn new(chat_db: PathBuf, busy_timeout: Duration) -> MessagesStore {
        let handle = StoreHandle::new("Messages", chat_db, busy_timeout, schema::probe);
        MessagesStore {
            beside: Beside::of(&handle),
            handle,
        }
    }
}

impl MessagesStore {
    /// The first of `chats` that names a chat by its display name only (no chat has it as
    /// identifier or guid), for a clear `InvalidParams`: a name is chosen by whoever made the
    /// group, so it never selects a chat. A value that names no chat at all is fine: a
    /// one-to-one chat appears with its first message.
    pub fn display_name_only(&mut self, chats: &[String]) -> Result<Option<String>, StoreError> {
        if chats.is_empty() {
            return Ok(None);
        }
        let (conn, _, _) = self.handle.current()?;
        let list = serde_json::to_string(chats).expect("a list of strings serialises");
        let result = conn
            .query_row(
                "SELECT j.value FROM json_each(?1) j WHERE \
                 EXISTS (SELECT 1 FROM chat c WHERE c.display_name = j.value COLLATE NOCASE) AND NOT EXISTS \
                 (SELECT 1 FROM chat c WHERE c.chat_identifier = j.value COLLATE NOCASE \
                 OR c.guid = j.value COLLATE NOCASE) LIMIT 1",
                [list],
                |r| r.get::<_, String>(0),
            )
            .optional();
        result.map_err(|e| self.handle.fail(e))
    }
}

impl MessagesStore {
    /// The senders of messages dated at or after `since` (Apple nanoseconds), newest first, at
    /// most `limit` (`stores::recent::messages`).
    pub(crate) fn recent_senders(
        &mut self,
        since: i64,
        limit: usize,
    ) -> Result<Vec<super::recent::RecentRow>, StoreError> {
        let (conn, _, caps) = self.handle.current()?;
        let skip = scan::skip_rules(caps).join(" AND ");
        let result = super::recent::messages(conn, &skip, since, limit);
        result.map_err(|e| self.handle.fail(e))
    }
}

/// What the tests in `stores::plans` look at: the SQL a call runs and its statement's counters.
#[cfg(test)]
impl MessagesStore {
    pub(crate) fn scan_sql(&mut self, filter: &MessagesFilter, window: Window) -> String {
        let (_, _, caps) = self.handle.current().unwrap();
        scan::query(caps, filter, window, super::sql::is_short(window)).0
    }

    /// The statement the seek reads the date index with; `None` without the index.
    pub(crate) fn seek_statement(&mut self) -> Result<Option<&'static str>, StoreError> {
        Ok(self.handle.current()?.2.date_index.then_some(SEEK.by_date))
    }

    pub(crate) fn statement_counters(&mut self, sql: &str) -> Option<(i32, i32)> {
        self.handle.statement_counters(sql)
    }
}

const HEAD_SQL: &str = super::open::head_sql!("message");

/// The newest date of a range (`Source::newest`).
pub(super) const NEWEST: NewestSql = NewestSql {
    sql: "SELECT max(date), min(date) FROM message WHERE ROWID > ?1 AND ROWID <= ?2",
    walk: "SELECT ROWID, date FROM message WHERE ROWID > ?1 AND ROWID <= ?2",
    ordered_above: Some(crate::dates::APPLE_NANOS_THRESHOLD),
    convert: crate::dates::from_apple,
};

/// The `maxAgeMs` seek, as for Mail (see `SeekSql`): never a walk in ROWID order chosen by a
/// planner without statistics.
const SEEK: SeekSql = SeekSql {
    last: "SELECT max(ROWID) FROM message",
    // The index is `schema::DATE_INDEX`, checked by `schema::probe`.
    by_date: "SELECT ROWID FROM message INDEXED BY message_idx_date WHERE date >= ?1",
    by_rowid: "SELECT ROWID FROM message NOT INDEXED WHERE ROWID > ?1 AND ROWID <= ?2 \
               AND date >= ?3 ORDER BY ROWID LIMIT 1",
};

/// Without Apple's date index the planner decides.
const SEEK_UNINDEXED: &str = "SELECT min(ROWID) FROM message WHERE date >= ?1";

impl MessagesStore {
    /// The shared read's hook (`crate::shared`): `f` on the warm connection.
    pub(crate) fn with_reader<R>(
        &mut self,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<R>,
    ) -> Result<(R, crate::cursor::FileIdentity), StoreError> {
        let (conn, identity, _) = self.handle.current()?;
        let result = f(conn);
        Ok((result.map_err(|e| self.handle.fail(e))?, identity))
    }
}

impl Source for MessagesStore {
    type Filter = MessagesFilter;
    const SENDER_KEY: &'static str = "handle";

    fn stamp(&mut self) -> Result<Stamp, StoreError> {
        let stamp = self.handle.stamp(HEAD_SQL);
        self.beside.after_stamp(&stamp);
        stamp
    }

    fn unreadable_rows(&self) -> u64 {
        self.handle.unreadable_rows()
    }

    fn seek(&mut self, floor: OffsetDateTime) -> Result<Option<i64>, StoreError> {
        let (_, _, caps) = self.handle.current()?;
        let floor = to_apple_nanos(floor);
        if caps.date_index {
            self.handle.seek(&SEEK, floor, super::SEEK_CHUNK)
        } else {
            self.handle.query_rowid(SEEK_UNINDEXED, floor)
        }
    }

    fn scan(&mut self, filter: &MessagesFilter, window: Window) -> Result<Scan, StoreError> {
        scan_on(&mut self.handle, filter, window)
    }

    fn newest(&mut self, ranges: &[(i64, i64)]) -> Result<Vec<Option<OffsetDateTime>>, StoreError> {
        super::newest::newest_of(&mut self.handle, &NEWEST, ranges)
    }

    fn scan_beside(
        &mut self,
        filter: &MessagesFilter,
        window: Window,
        ranges: &[(i64, i64)],
    ) -> Result<(Scan, Option<Dates>), StoreError> {
        let MessagesStore { handle, beside } = self;
        super::newest::scan_beside(beside, &NEWEST, window, ranges, || {
            scan_on(handle, filter, window)
        })
    }

    fn begin_read(&mut self) {
        self.handle.begin_read();
    }

    fn end_read(&mut self) {
        self.handle.end_read();
    }
}

/// [`Source::scan`] on `handle`: free of the store, so that [`Source::scan_beside`] can scan
/// while its second connection reads.
fn scan_on(
    handle: &mut StoreHandle<MessagesCaps>,
    filter: &MessagesFilter,
    window: Window,
) -> Result<Scan, StoreError> {
    handle.scan(|tx, caps| {
        read::fill_by_senders(window, filter.tests_senders(), |w, per_row| {
            scan::rows(tx, caps, filter, w, per_row)
        })
    })
}
