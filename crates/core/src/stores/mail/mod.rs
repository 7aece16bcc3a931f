//! Apple Mail's Envelope Index: `mail.received`.
//!
//! Rows are `messages`; a row becomes an event unless it is deleted or a second copy of a
//! message already seen (same `global_message_id`). Gmail keeps every message in `All Mail` and
//! says INBOX through `labels`, so a mailbox filter checks labels too.

mod mailboxes;
mod scan;
pub(crate) mod schema;

use std::path::{Path, PathBuf};
use std::time::Duration;

use time::OffsetDateTime;

use super::newest::{Beside, NewestSql};
use super::open::SeekSql;
use super::{Dates, Scan, Source, Stamp, StoreHandle, Window, read};
use crate::error::StoreError;
use crate::filter::{MailFilter, MailboxRef};

pub(crate) use mailboxes::MailboxLookup;
pub(crate) use mailboxes::account_names;
use schema::MailCaps;

/// A warm, read-only handle on the Envelope Index.
pub(crate) struct MailStore {
    handle: StoreHandle<MailCaps>,
    /// A second connection to the same file, for the backfill guard's dates read beside a
    /// catch-up's scan (`Source::scan_beside`); closed on any change the stamp sees.
    beside: Beside<MailCaps>,
    accounts_map: PathBuf,
    lookup: MailboxLookup,
}

impl MailStore {
    /// A handle on the index at `envelope_index`, with account names from `accounts_map`.
    /// Nothing is opened until first use.
    pub fn new(
        envelope_index: PathBuf,
        accounts_map: PathBuf,
        busy_timeout: Duration,
    ) -> MailStore {
        let handle = StoreHandle::new("Mail", envelope_index, busy_timeout, schema::probe);
        MailStore {
            beside: Beside::of(&handle),
            handle,
            accounts_map,
            lookup: MailboxLookup::default(),
        }
    }

    /// Whether `account` (an address, name or UUID) owns no mailbox in the index, for a clear
    /// `InvalidParams`.
    pub fn unknown_account(&mut self, account: &str) -> Result<bool, StoreError> {
        let (conn, _, _) = self.handle.current()?;
        let result = self.lookup.refresh(conn, &self.accounts_map);
        result.map_err(|e| self.handle.fail(e))?;
        Ok(self.lookup.account_mailboxes(account).is_empty())
    }

    /// The mailbox references that name no mailbox in the index, for a clear `InvalidParams`.
    pub fn unknown_mailboxes(
        &mut self,
        refs: &[MailboxRef],
    ) -> Result<Vec<MailboxRef>, StoreError> {
        if refs.is_empty() {
            return Ok(Vec::new());
        }
        let (conn, _, _) = self.handle.current()?;
        let result = self.lookup.refresh(conn, &self.accounts_map);
        result.map_err(|e| self.handle.fail(e))?;
        Ok(self.lookup.resolve(refs).1.into_iter().cloned().collect())
    }
}

impl MailStore {
    /// The senders of mail received at or after `since` (Unix seconds), newest first, at most
    /// `limit` (`stores::recent::mail`).
    pub(crate) fn recent_senders(
        &mut self,
        since: i64,
        limit: usize,
    ) -> Result<Vec<super::recent::RecentRow>, StoreError> {
        let (conn, _, _) = self.handle.current()?;
        let result = self
            .lookup
            .refresh(conn, &self.accounts_map)
            .and_then(|()| {
                let outgoing = self.lookup.outgoing_mailboxes();
                let own = self.lookup.own_addresses();
                super::recent::mail(conn, since, &outgoing, &own, limit)
            });
        result.map_err(|e| self.handle.fail(e))
    }
}

/// What the tests in `stores::plans` look at: the SQL a call runs and its statement's counters.
#[cfg(test)]
impl MailStore {
    pub(crate) fn scan_sql(&mut self, filter: &MailFilter, window: Window) -> String {
        let (_, _, caps) = self.handle.current().unwrap();
        scan::query(
            caps,
            &self.lookup,
            filter,
            window,
            super::sql::is_short(window),
        )
        .sql
    }

    /// The statement the seek reads the date index with; `None` without the index.
    pub(crate) fn seek_statement(&mut self) -> Result<Option<&'static str>, StoreError> {
        Ok(self.handle.current()?.2.date_index.then_some(SEEK.by_date))
    }

    /// The seek in turns of `chunk` rows.
    pub(crate) fn seek_in_chunks(
        &mut self,
        floor: i64,
        chunk: i64,
    ) -> Result<Option<i64>, StoreError> {
        self.handle.seek(&SEEK, floor, chunk)
    }

    pub(crate) fn statement_counters(&mut self, sql: &str) -> Option<(i32, i32)> {
        self.handle.statement_counters(sql)
    }

    /// Whether the second connection (`Source::scan_beside`) is open.
    pub(crate) fn beside_open(&self) -> bool {
        self.beside.is_open()
    }

    /// How many times this connection read the head.
    pub(crate) fn head_reads(&mut self) -> Option<i32> {
        Some(self.handle.statement_counters(HEAD_SQL)?.0)
    }
}

const HEAD_SQL: &str = super::open::head_sql!("messages");

/// The newest date of a range (`Source::newest`).
pub(super) const NEWEST: NewestSql = NewestSql {
    sql: "SELECT max(date_received), NULL FROM messages WHERE ROWID > ?1 AND ROWID <= ?2",
    walk: "SELECT ROWID, date_received FROM messages WHERE ROWID > ?1 AND ROWID <= ?2",
    ordered_above: None,
    convert: crate::dates::from_unix_secs,
};

/// The `maxAgeMs` seek (see `SeekSql`). Left to the planner, a store without `sqlite_stat1`
/// (Mail's may or may not have one) can answer `min(ROWID)` by a walk in ROWID order, which
/// grows with the rows; through the index it does not (docs/benchmarks.md, "History").
const SEEK: SeekSql = SeekSql {
    last: "SELECT max(ROWID) FROM messages",
    // The index is `schema::DATE_INDEX`, checked by `schema::probe`.
    by_date: "SELECT ROWID FROM messages INDEXED BY messages_date_received_index \
              WHERE date_received >= ?1",
    by_rowid: "SELECT ROWID FROM messages NOT INDEXED WHERE ROWID > ?1 AND ROWID <= ?2 \
               AND date_received >= ?3 ORDER BY ROWID LIMIT 1",
};

/// Without Apple's date index (another schema era) the planner decides.
const SEEK_UNINDEXED: &str = "SELECT min(ROWID) FROM messages WHERE date_received >= ?1";

impl MailStore {
    /// The shared read's hook (`crate::shared`): `f` on the warm connection with whether the
    /// `labels` table exists and the mailbox lookup as the last scan refreshed it.
    pub(crate) fn with_reader<R>(
        &mut self,
        f: impl FnOnce(&rusqlite::Connection, bool, &MailboxLookup) -> rusqlite::Result<R>,
    ) -> Result<(R, crate::cursor::FileIdentity), StoreError> {
        let (conn, identity, caps) = self.handle.current()?;
        let result = f(conn, caps.labels, &self.lookup);
        Ok((result.map_err(|e| self.handle.fail(e))?, identity))
    }
}

impl Source for MailStore {
    type Filter = MailFilter;
    const SENDER_KEY: &'static str = "address";

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
        let floor = floor.unix_timestamp();
        if caps.date_index {
            self.handle.seek(&SEEK, floor, super::SEEK_CHUNK)
        } else {
            self.handle.query_rowid(SEEK_UNINDEXED, floor)
        }
    }

    fn scan(&mut self, filter: &MailFilter, window: Window) -> Result<Scan, StoreError> {
        scan_on(
            &mut self.handle,
            &mut self.lookup,
            &self.accounts_map,
            filter,
            window,
        )
    }

    fn newest(&mut self, ranges: &[(i64, i64)]) -> Result<Vec<Option<OffsetDateTime>>, StoreError> {
        super::newest::newest_of(&mut self.handle, &NEWEST, ranges)
    }

    fn scan_beside(
        &mut self,
        filter: &MailFilter,
        window: Window,
        ranges: &[(i64, i64)],
    ) -> Result<(Scan, Option<Dates>), StoreError> {
        let MailStore {
            handle,
            beside,
            accounts_map,
            lookup,
        } = self;
        super::newest::scan_beside(beside, &NEWEST, window, ranges, || {
            scan_on(handle, lookup, accounts_map, filter, window)
        })
    }

    fn begin_read(&mut self) {
        self.handle.begin_read();
    }

    fn end_read(&mut self) {
        self.handle.end_read();
    }
}

/// [`Source::scan`] on `handle`, with the mailbox lookup it refreshes: free of the store, so
/// that [`Source::scan_beside`] can scan while its second connection reads.
fn scan_on(
    handle: &mut StoreHandle<MailCaps>,
    lookup: &mut MailboxLookup,
    accounts_map: &Path,
    filter: &MailFilter,
    window: Window,
) -> Result<Scan, StoreError> {
    handle.scan(|tx, caps| {
        // The lookup and the rows from the same snapshot. The lookup compares (ROWID, url)
        // pairs, so a rebuilt index is reparsed too.
        lookup.refresh(tx, accounts_map)?;
        let lookup = &*lookup;
        read::fill_by_senders(window, filter.tests_senders(), |w, per_row| {
            scan::rows(tx, caps, lookup, filter, w, per_row)
        })
    })
}
