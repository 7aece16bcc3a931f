//! Apple Mail's Envelope Index: `mail.received`.
//!
//! Rows are `messages`; a row becomes an event unless it is deleted or a second copy of a
//! message already seen (same `global_message_id`). Gmail keeps every message in `All Mail` and
//! says INBOX through `labels`, so a mailbox filter checks labels too.

mod mailboxes;
mod scan;
mod schema;

use std::path::PathBuf;
use std::time::Duration;

use time::OffsetDateTime;

use super::{Scan, Source, Stamp, StoreHandle, Window};
use crate::cursor::FileIdentity;
use crate::error::StoreError;
use crate::filter::{MailFilter, MailboxRef};

use mailboxes::MailboxLookup;
use schema::MailCaps;

/// A warm, read-only handle on the Envelope Index.
pub struct MailStore {
    handle: StoreHandle,
    accounts_map: PathBuf,
    caps: MailCaps,
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
        MailStore {
            handle: StoreHandle::new("Mail", envelope_index, busy_timeout),
            accounts_map,
            caps: MailCaps::default(),
            lookup: MailboxLookup::default(),
        }
    }

    /// Open (or reopen after a rebuild) and probe the schema.
    fn ready(&mut self) -> Result<FileIdentity, StoreError> {
        let (conn, identity, fresh) = self.handle.current()?;
        if fresh {
            match schema::probe(conn) {
                Ok(caps) => self.caps = caps,
                Err(Ok(detail)) => {
                    let err = StoreError::Schema {
                        store: "Mail",
                        path: self.handle.path().to_owned(),
                        detail,
                    };
                    self.handle.reset();
                    return Err(err);
                }
                Err(Err(e)) => {
                    let err = self.handle.sqlite_error(e);
                    self.handle.reset();
                    return Err(err);
                }
            }
            self.lookup = MailboxLookup::default();
        }
        Ok(identity)
    }

    /// The mailbox references that name no mailbox in the index, for a clear InvalidParams.
    pub fn unknown_mailboxes(
        &mut self,
        refs: &[MailboxRef],
    ) -> Result<Vec<MailboxRef>, StoreError> {
        if refs.is_empty() {
            return Ok(Vec::new());
        }
        self.ready()?;
        let (conn, _, _) = self.handle.current()?;
        let result = self.lookup.refresh(conn, &self.accounts_map);
        result.map_err(|e| self.fail(e))?;
        Ok(self.lookup.resolve(refs).1.into_iter().cloned().collect())
    }

    fn fail(&mut self, e: rusqlite::Error) -> StoreError {
        let err = self.handle.sqlite_error(e);
        self.handle.reset();
        err
    }
}

impl Source for MailStore {
    type Filter = MailFilter;

    fn stamp(&mut self) -> Result<Stamp, StoreError> {
        let identity = self.ready()?;
        let (conn, _, _) = self.handle.current()?;
        let r = conn.query_row(
            "SELECT (SELECT data_version FROM pragma_data_version), \
             max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0), \
                 coalesce((SELECT max(ROWID) FROM messages), 0))",
            [],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
        );
        let (data_version, head) = r.map_err(|e| self.fail(e))?;
        Ok(Stamp {
            identity,
            data_version,
            head,
        })
    }

    fn seek(&mut self, floor: OffsetDateTime) -> Result<Option<i64>, StoreError> {
        self.ready()?;
        let (conn, _, _) = self.handle.current()?;
        // `messages_date_received_index` serves this as a range scan.
        let r = conn.query_row(
            "SELECT min(ROWID) FROM messages WHERE date_received >= ?1",
            [floor.unix_timestamp()],
            |r| r.get::<_, Option<i64>>(0),
        );
        r.map_err(|e| self.fail(e))
    }

    fn scan(&mut self, filter: &MailFilter, window: Window) -> Result<Scan, StoreError> {
        let identity = self.ready()?;
        let (conn, _, _) = self.handle.current()?;
        let caps = self.caps;
        let result = (|| {
            // One read transaction: the lookup and the rows come from the same snapshot.
            let tx = conn.unchecked_transaction()?;
            self.lookup.refresh(&tx, &self.accounts_map)?;
            let found = scan::rows(&tx, caps, &self.lookup, filter, window)?;
            tx.finish()?;
            Ok(found)
        })();
        let found = result.map_err(|e| self.fail(e))?;
        Ok(Scan { identity, found })
    }
}
