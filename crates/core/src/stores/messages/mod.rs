//! Messages' chat.db: `messages.received`.
//!
//! Rows are `message`; a row becomes an event when someone else sent it and it is a message:
//! not `is_from_me`, not a tapback or other associated message, not a group event
//! (`item_type` ≠ 0), not unsent, not in Recently Deleted. Edits and unsends update existing
//! rows, so a ROWID cursor never mistakes them for new messages.

mod scan;
mod schema;

use std::path::PathBuf;
use std::time::Duration;

use time::OffsetDateTime;

use super::{Scan, Source, Stamp, StoreHandle, Window};
use crate::cursor::FileIdentity;
use crate::dates::to_apple_nanos;
use crate::error::StoreError;
use crate::filter::MessagesFilter;

use schema::MessagesCaps;

/// A warm, read-only handle on chat.db.
pub struct MessagesStore {
    handle: StoreHandle,
    caps: MessagesCaps,
}

impl MessagesStore {
    /// A handle on the database at `chat_db`. Nothing is opened until first use.
    pub fn new(chat_db: PathBuf, busy_timeout: Duration) -> MessagesStore {
        MessagesStore {
            handle: StoreHandle::new("Messages", chat_db, busy_timeout),
            caps: MessagesCaps::default(),
        }
    }

    fn ready(&mut self) -> Result<FileIdentity, StoreError> {
        let (conn, identity, fresh) = self.handle.current()?;
        if fresh {
            match schema::probe(conn) {
                Ok(caps) => self.caps = caps,
                Err(Ok(detail)) => {
                    let err = StoreError::Schema {
                        store: self.handle.label(),
                        path: self.handle.path().to_owned(),
                        detail,
                    };
                    self.handle.reset();
                    return Err(err);
                }
                Err(Err(e)) => return Err(self.fail(e)),
            }
        }
        Ok(identity)
    }

    fn fail(&mut self, e: rusqlite::Error) -> StoreError {
        let err = self.handle.sqlite_error(e);
        self.handle.reset();
        err
    }
}

impl Source for MessagesStore {
    type Filter = MessagesFilter;

    fn stamp(&mut self) -> Result<Stamp, StoreError> {
        let identity = self.ready()?;
        let (conn, _, _) = self.handle.current()?;
        let r = conn.query_row(
            "SELECT (SELECT data_version FROM pragma_data_version), \
             max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'message'), 0), \
                 coalesce((SELECT max(ROWID) FROM message), 0))",
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
        // `message_idx_date` serves this as a range scan.
        let r = conn.query_row(
            "SELECT min(ROWID) FROM message WHERE date >= ?1",
            [to_apple_nanos(floor)],
            |r| r.get::<_, Option<i64>>(0),
        );
        r.map_err(|e| self.fail(e))
    }

    fn scan(&mut self, filter: &MessagesFilter, window: Window) -> Result<Scan, StoreError> {
        let identity = self.ready()?;
        let caps = self.caps;
        let (conn, _, _) = self.handle.current()?;
        let result = (|| {
            let tx = conn.unchecked_transaction()?;
            let found = scan::rows(&tx, caps, filter, window)?;
            tx.finish()?;
            Ok(found)
        })();
        let found = result.map_err(|e| self.fail(e))?;
        Ok(Scan { identity, found })
    }
}
