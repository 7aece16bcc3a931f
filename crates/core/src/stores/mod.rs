//! The two stores, read-only: Apple Mail's Envelope Index and Messages' chat.db.
//!
//! Both are opened `mode=ro` (never `immutable=1`, which ignores the `-wal` where the newest
//! rows live), with a short busy timeout, and read in short transactions so that we never hold
//! back the owner's checkpoints. A store is reopened when its file identity changes (a rebuild)
//! or when the file or its `-wal` shrinks (wiped or truncated in place); an empty file is an
//! error with nothing held open on it. A catch-up's wide window also opens a second connection
//! for the backfill guard's dates, closed again on any change the first one's stamp sees
//! (`newest::Beside`).
//!
//! Private to the crate: the engine is the only reader, so a caller cannot scan a store past
//! the subscription's filter or the poll engine's bounds. [`StorePaths`] and [`Stamp`] are
//! re-exported at the crate root.
//!
//! ```compile_fail
//! use tidings_core::stores::{Source, Window};
//! ```

mod columns;
pub(crate) mod mail;
pub(crate) mod messages;
mod newest;
mod open;
#[cfg(test)]
mod plans;
pub(crate) mod profile;
pub(crate) mod read;
pub(crate) mod recent;
mod sql;

use std::path::{Path, PathBuf};

use time::OffsetDateTime;

use crate::contacts::Contacts;
use crate::cursor::FileIdentity;
use crate::error::StoreError;
use crate::event::EventType;
use crate::text::{MAX_NAME_CHARS, sanitize};

pub(crate) use open::StoreHandle;

/// Rows each way of the `maxAgeMs` seek reads per turn (see `open::SeekSql`): a few
/// thousand, so a turn is well under a millisecond and the seek at most a turn past the cheaper
/// way's cost.
const SEEK_CHUNK: i64 = 4096;

/// Where the stores live, found from a home directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorePaths {
    /// `~/Library/Mail/V<n>/MailData/Envelope Index`.
    pub envelope_index: PathBuf,
    /// `~/Library/Mail/V<n>/MailData/Signatures/AccountsMap.plist`, where account names live.
    pub accounts_map: PathBuf,
    /// `~/Library/Messages/chat.db`.
    pub chat_db: PathBuf,
}

impl StorePaths {
    /// The stores under `home`. Mail's `V<n>` is a store-format version that changes across
    /// macOS releases, so take the highest one that holds an index (V10 when none does).
    pub fn for_home(home: &Path) -> StorePaths {
        let mail = home.join("Library/Mail");
        let version = std::fs::read_dir(&mail)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let n: u32 = name.strip_prefix('V')?.parse().ok()?;
                e.path()
                    .join("MailData/Envelope Index")
                    .exists()
                    .then_some(n)
            })
            .max()
            .unwrap_or(10);
        let data = mail.join(format!("V{version}/MailData"));
        StorePaths {
            envelope_index: data.join("Envelope Index"),
            accounts_map: data.join("Signatures/AccountsMap.plist"),
            chat_db: home.join("Library/Messages/chat.db"),
        }
    }

    /// The database `ty`'s events come from: the Envelope Index or chat.db.
    pub fn database(&self, ty: EventType) -> &Path {
        match ty {
            EventType::MailReceived => &self.envelope_index,
            EventType::MessagesReceived => &self.chat_db,
        }
    }
}

/// A cheap look at a store: enough to tell whether anything changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// The file's identity; a new one means the store was rebuilt.
    pub identity: FileIdentity,
    /// `SQLite`'s `PRAGMA data_version`: changes when another connection commits.
    pub data_version: i64,
    /// The highest ROWID ever allocated for the event table.
    pub head: i64,
}

/// Which rows a scan may look at: ROWIDs in `(after, upto]`, at most `limit` matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    /// Exclusive lower bound.
    pub after: i64,
    /// Inclusive upper bound.
    pub upto: i64,
    /// The most matches to return.
    pub limit: usize,
}

/// One matching row, ready to become an occurrence.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Found {
    /// Its ROWID (the cursor after it).
    pub rowid: i64,
    /// The stable event id.
    pub event_id: String,
    /// Its own date, if it has one.
    pub date: Option<OffsetDateTime>,
    /// The envelope.
    pub data: serde_json::Value,
}

/// What a scan saw: the file it read and the matches in ROWID order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Scan {
    /// The file actually read (a rebuild between stamp and scan shows up here).
    pub identity: FileIdentity,
    /// Matches, at most `Window::limit`.
    pub found: Vec<Found>,
}

/// The newest date of each of a list of ROWID ranges, in its order (`None`: no dated row).
pub(crate) type Dates = Vec<Option<OffsetDateTime>>;

/// Add `contact` to an envelope's `from` when `contacts` has a card for the sender: the
/// handle at `from.<key>` (as the scan wrote it) looked up in a map, never a query. The name
/// is the user's own label, but a card can be shared or synced from anywhere, so it is
/// cleaned and capped like every other name. Nothing is added when no card matches or its
/// name is empty.
pub(crate) fn name_sender(data: &mut serde_json::Value, key: &str, contacts: &Contacts) {
    let Some(serde_json::Value::Object(from)) = data.get_mut("from") else {
        return;
    };
    let Some(person) = from
        .get(key)
        .and_then(serde_json::Value::as_str)
        .and_then(|handle| contacts.person_for_handle(handle))
    else {
        return;
    };
    let name = sanitize(&person.name, MAX_NAME_CHARS);
    if !name.is_empty() {
        from.insert("contact".to_owned(), name.into());
    }
}

/// What the poll engine needs from a store.
pub(crate) trait Source {
    /// The per-type filter this store understands.
    type Filter;
    /// The field of an envelope's `from` that holds the sender's handle as the store keeps it
    /// (`address` for Mail, `handle` for Messages): what a Contacts card is looked up by.
    const SENDER_KEY: &'static str;
    /// Rows skipped because they could not be read, since start-up (each counted once).
    fn unreadable_rows(&self) -> u64;
    /// Identity, data version and head, opening or reopening as needed.
    fn stamp(&mut self) -> Result<Stamp, StoreError>;
    /// The first ROWID whose date is at or after `floor`, through the date index; `None` when
    /// every row is older.
    fn seek(&mut self, floor: OffsetDateTime) -> Result<Option<i64>, StoreError>;
    /// The rows in `window` that pass `filter` and the skip rules.
    fn scan(&mut self, filter: &Self::Filter, window: Window) -> Result<Scan, StoreError>;
    /// The newest date among the rows of each range `(after, upto]`, matching or not, each
    /// date read as the scan reads it, in order and from one snapshot; the backfill guard
    /// judges found rows against them.
    fn newest(&mut self, ranges: &[(i64, i64)]) -> Result<Vec<Option<OffsetDateTime>>, StoreError>;
    /// [`Source::scan`], with [`Source::newest`] of `ranges` read beside it on a second
    /// connection to the same file: every range when the scan reads its whole window, else up
    /// to the one holding its last match. The dates are a prefix of `ranges`, or `None` when
    /// that read failed or found another file (read them with `newest` then).
    fn scan_beside(
        &mut self,
        filter: &Self::Filter,
        window: Window,
        ranges: &[(i64, i64)],
    ) -> Result<(Scan, Option<Dates>), StoreError>;
    /// Start one engine step, whose calls share one look at the file (see
    /// `StoreHandle::begin_read`); [`Source::stamp`] always looks afresh.
    fn begin_read(&mut self);
    /// End the step begun by [`Source::begin_read`].
    fn end_read(&mut self);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_reads_its_own_database() {
        let paths = StorePaths::for_home(Path::new("/Users/ana"));
        assert_eq!(
            paths.database(EventType::MailReceived),
            paths.envelope_index
        );
        assert_eq!(paths.database(EventType::MessagesReceived), paths.chat_db);
    }
}
