//! Opening a store read-only, noticing when its file is replaced, and naming what went wrong.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::cursor::FileIdentity;
use crate::error::StoreError;
use crate::stores::read::{Read, Unreadable};
use crate::stores::{Found, Scan, Stamp};
use crate::text::uri_escape;

/// The `-wal` beside a database: its path with `-wal` appended.
fn wal_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// The `maxAgeMs` seek's statements: the first ROWID dated at or after a floor is found two
/// ways at once, in turns of a few thousand rows, and the first to finish answers. Through the
/// date index (`by_date`, named with `INDEXED BY`) the cost grows with the rows dated after
/// the floor; walking in ROWID order (`by_rowid`) it grows with the rows before the answer.
/// Either alone is slow at one end (a floor before every row makes the index read all of it;
/// a recent floor makes the walk read almost all rows), and no plan is left to a planner that
/// may lack `sqlite_stat1`: the cost is at most twice the cheaper way's.
pub(crate) struct SeekSql {
    /// `SELECT max(ROWID)`: where the walk ends.
    pub last: &'static str,
    /// `?1` = floor: the ROWIDs dated at or after it, through the date index.
    pub by_date: &'static str,
    /// `?1` < ROWID <= `?2`, dated at or after `?3`: the first, in ROWID order, by no index.
    pub by_rowid: &'static str,
}

/// The SQL of a table's head: the highest ROWID ever allocated (`sqlite_sequence`), so deleting
/// the newest rows does not move it back. A literal per table, so it is compiled once.
macro_rules! head_sql {
    ($table:literal) => {
        concat!(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = '",
            $table,
            "'), 0), coalesce((SELECT max(ROWID) FROM ",
            $table,
            "), 0))"
        )
    };
}
pub(crate) use head_sql;

/// What a store learns about a freshly opened file: its optional features, or why its schema
/// cannot be read (`Err(Ok(detail))`), or a `SQLite` failure (`Err(Err(e))`).
pub(crate) type Probe<C> = fn(&Connection) -> Result<C, Result<String, rusqlite::Error>>;

/// A store file and, once opened, a warm read-only connection to it with its probed features.
pub(crate) struct StoreHandle<C> {
    label: &'static str,
    path: PathBuf,
    busy_timeout: Duration,
    probe: Probe<C>,
    open: Option<Open<C>>,
    unreadable: Unreadable,
    /// Inside one engine step ([`StoreHandle::begin_read`]), and whether it has looked at the
    /// file yet: its later calls use that look instead of two more `stat`s each.
    in_step: bool,
    looked: bool,
}

/// A warm connection and what we knew about the file when we last looked.
struct Open<C> {
    conn: Connection,
    identity: FileIdentity,
    caps: C,
    /// The sizes of the db and its `-wal` at the last look: a file that shrank was truncated
    /// or wiped under us (see [`StoreHandle::current`]).
    db_len: u64,
    wal_len: u64,
    /// The last stamp's `data_version` and head: the head cannot move without a commit, and
    /// every commit another connection makes changes `data_version`, so an unchanged version
    /// reuses the head instead of reading it again.
    last: Option<(i64, i64)>,
}

/// Statements kept compiled per connection: the scan shapes of every live subscription, the
/// stamp, the seek, the date reads and the per-row lookups. Each shape's SQL text is stable,
/// so a poll finds its statement here instead of compiling it again.
const STATEMENT_CACHE: usize = 64;

impl<C: Copy> StoreHandle<C> {
    pub(crate) fn new(
        label: &'static str,
        path: PathBuf,
        busy_timeout: Duration,
        probe: Probe<C>,
    ) -> Self {
        StoreHandle {
            label,
            path,
            busy_timeout,
            probe,
            open: None,
            unreadable: Unreadable::default(),
            in_step: false,
            looked: false,
        }
    }

    /// Another handle on the same file, with nothing open yet.
    pub(crate) fn twin(&self) -> Self {
        StoreHandle::new(self.label, self.path.clone(), self.busy_timeout, self.probe)
    }

    /// The connection to the file now at the path, its identity and features. A vanished file
    /// drops the connection; a replaced one (new identity) is reopened and probed again.
    ///
    /// A file that shrank (the db, or its `-wal`) is reopened too, and an empty db is an error
    /// with no connection kept: a store wiped in place keeps its inode, and a connection that
    /// goes on trusting the old `-shm` both reads rows that no longer exist and keeps the
    /// owner from rebuilding its WAL index ("database is locked") for as long as it is open.
    /// A `-wal` also shrinks when the owner checkpoints with TRUNCATE; reopening then costs a
    /// few milliseconds and loses nothing.
    ///
    /// Inside a step ([`StoreHandle::begin_read`]) the first look serves the step's later
    /// calls: a read of one new mail would otherwise look three times (the stamp, the scan,
    /// the shared read's facts).
    pub(crate) fn current(&mut self) -> Result<(&Connection, FileIdentity, C), StoreError> {
        if !(self.in_step && self.looked && self.open.is_some()) {
            return self.look();
        }
        let open = self.open.as_ref().expect("checked above");
        Ok((&open.conn, open.identity, open.caps))
    }

    /// Start one engine step: a stamp and the reads that follow it under the store's lock,
    /// which share the step's first look at the file. Starting a step forgets any look
    /// before it, so a step that ended without [`StoreHandle::end_read`] (a panic) costs one
    /// look, never a stale one.
    pub(crate) fn begin_read(&mut self) {
        self.in_step = true;
        self.looked = false;
    }

    /// End the step: calls from now on look at the file again each.
    pub(crate) fn end_read(&mut self) {
        self.in_step = false;
        self.looked = false;
    }

    /// Close the connection, if one is open; the next call opens one again.
    pub(crate) fn close(&mut self) {
        self.open = None;
    }

    /// Whether a connection is open.
    #[cfg(test)]
    pub(crate) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// [`StoreHandle::current`] after a fresh look at the file.
    fn look(&mut self) -> Result<(&Connection, FileIdentity, C), StoreError> {
        let meta = match std::fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) => {
                self.open = None;
                return Err(self.io_error(e));
            }
        };
        let identity = FileIdentity::from_metadata(&meta);
        let db_len = meta.len();
        // No `-wal` is a length of 0 (a checkpoint may delete it); any other failure to look
        // at it is the OS's error, not "no -wal": we could no longer tell a wipe from a write.
        let wal = wal_path(&self.path);
        let wal_len = match std::fs::metadata(&wal) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => {
                self.open = None;
                return Err(self.io_error_at(wal, e));
            }
        };
        if db_len == 0 {
            self.open = None;
            return Err(StoreError::Empty {
                store: self.label,
                path: self.path.clone(),
            });
        }
        let keep = self
            .open
            .as_ref()
            .is_some_and(|o| o.identity == identity && db_len >= o.db_len && wal_len >= o.wal_len);
        if !keep {
            self.open = None;
            let conn = self.connect()?;
            let caps = match (self.probe)(&conn) {
                Ok(caps) => caps,
                Err(Ok(detail)) => {
                    return Err(StoreError::Schema {
                        store: self.label,
                        path: self.path.clone(),
                        detail,
                    });
                }
                Err(Err(e)) => return Err(self.sqlite_error(e)),
            };
            self.open = Some(Open {
                conn,
                identity,
                caps,
                db_len,
                wal_len,
                last: None,
            });
        }
        self.looked = self.in_step;
        let open = self.open.as_mut().expect("opened above");
        (open.db_len, open.wal_len) = (db_len, wal_len);
        Ok((&open.conn, open.identity, open.caps))
    }

    /// The readable rows of a scan of `file`; the others are counted and logged once.
    pub(crate) fn keep_readable(&mut self, file: FileIdentity, rows: Vec<Read>) -> Vec<Found> {
        self.unreadable.sort_out(self.label, file, rows)
    }

    /// Rows skipped as unreadable since start-up.
    pub(crate) fn unreadable_rows(&self) -> u64 {
        self.unreadable.total()
    }

    /// Classify `e` and forget the connection, so the next call reopens (an error may have left
    /// it in a bad state, or the file may be gone).
    pub(crate) fn fail(&mut self, e: rusqlite::Error) -> StoreError {
        let err = self.sqlite_error(e);
        self.open = None;
        err
    }

    /// Identity, data version and head of the event table, whose head `head_sql` reads (see
    /// `head_sql!`).
    ///
    /// The hub takes a stamp on every file event (a thousand a second under load), so this is
    /// two `stat`s and one cached `PRAGMA data_version`; the head is read only when the version
    /// moved.
    pub(crate) fn stamp(&mut self, head_sql: &'static str) -> Result<Stamp, StoreError> {
        // Always a fresh look: a stamp is how a change to the file is noticed.
        self.look()?;
        let open = self.open.as_mut().expect("current() keeps a connection");
        let (conn, identity, last) = (&open.conn, open.identity, open.last);
        let r = (|| {
            let version: i64 = conn
                .prepare_cached("PRAGMA data_version")?
                .query_row([], |r| r.get(0))?;
            if let Some((v, head)) = last
                && v == version
            {
                return Ok((version, head));
            }
            let head: i64 = conn.prepare_cached(head_sql)?.query_row([], |r| r.get(0))?;
            Ok((version, head))
        })();
        let (data_version, head) = r.map_err(|e| self.fail(e))?;
        if let Some(open) = self.open.as_mut() {
            open.last = Some((data_version, head));
        }
        Ok(Stamp {
            identity,
            data_version,
            head,
        })
    }

    /// The statement-cache counters of `sql` on the open connection: how many times the cached
    /// statement ran and how many times `SQLite` had to compile it again. `None` when no
    /// connection is open. For tests that prove a statement is compiled once.
    #[cfg(test)]
    pub(crate) fn statement_counters(&mut self, sql: &str) -> Option<(i32, i32)> {
        use rusqlite::StatementStatus;
        let open = self.open.as_ref()?;
        let stmt = open.conn.prepare_cached(sql).ok()?;
        Some((
            stmt.get_status(StatementStatus::Run),
            stmt.get_status(StatementStatus::RePrepare),
        ))
    }

    /// `read` on the open connection in one read transaction, after one look at the file
    /// (`current`): a run of queries (the `maxAgeMs` seek's steps; the backfill guard's, one
    /// per gap between found rows) sees one snapshot and pays for the look once, not once
    /// each (two `statx` and the WAL read lock's `fcntl`s per query add up over a guarded
    /// catch-up's many queries).
    pub(crate) fn in_read<T>(
        &mut self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let (conn, _, _) = self.current()?;
        let r = (|| {
            let tx = conn.unchecked_transaction()?;
            let out = read(&tx)?;
            tx.finish()?;
            Ok(out)
        })();
        r.map_err(|e| self.fail(e))
    }

    /// A scan: `read` on the open connection in one read transaction (its rows, and whatever it
    /// reads beside them, from one snapshot), with the file's features; the unreadable rows
    /// among what it returns are counted and left out.
    pub(crate) fn scan(
        &mut self,
        read: impl FnOnce(&Connection, C) -> rusqlite::Result<Vec<Read>>,
    ) -> Result<Scan, StoreError> {
        let (conn, identity, caps) = self.current()?;
        let result = (|| {
            let tx = conn.unchecked_transaction()?;
            let rows = read(&tx, caps)?;
            tx.finish()?;
            Ok(rows)
        })();
        let rows = result.map_err(|e| self.fail(e))?;
        let found = self.keep_readable(identity, rows);
        Ok(Scan { identity, found })
    }

    /// The single optional integer `sql` yields for `value` (a date-index seek).
    pub(crate) fn query_rowid(&mut self, sql: &str, value: i64) -> Result<Option<i64>, StoreError> {
        let (conn, _, _) = self.current()?;
        let r = conn
            .prepare_cached(sql)
            .and_then(|mut s| s.query_row([value], |r| r.get::<_, Option<i64>>(0)));
        r.map_err(|e| self.fail(e))
    }

    /// The first ROWID whose date is at or after `floor` (see [`SeekSql`]), in one read
    /// transaction, stepping the two ways to it in turns of `chunk` rows until one answers.
    pub(crate) fn seek(
        &mut self,
        sql: &SeekSql,
        floor: i64,
        chunk: i64,
    ) -> Result<Option<i64>, StoreError> {
        self.in_read(|tx| {
            let last: i64 = tx
                .prepare_cached(sql.last)?
                .query_row([], |r| r.get::<_, Option<i64>>(0))?
                .unwrap_or(0);
            let mut by_date = tx.prepare_cached(sql.by_date)?;
            let mut by_rowid = tx.prepare_cached(sql.by_rowid)?;
            let mut dated = by_date.query([floor])?;
            let (mut least, mut walked) = (None::<i64>, 0_i64);
            let found = loop {
                // Through the date index: every row dated at or after the floor, in date order;
                // the answer is the least ROWID once they are all read.
                let mut done = true;
                for _ in 0..chunk {
                    let Some(row) = dated.next()? else { break };
                    let rowid: i64 = row.get(0)?;
                    least = Some(least.map_or(rowid, |l| l.min(rowid)));
                    done = false;
                }
                if done {
                    break least;
                }
                // In ROWID order: the first row of the next chunk dated at or after the floor
                // is the answer.
                if walked >= last {
                    break None;
                }
                let upto = walked.saturating_add(chunk);
                let first = by_rowid
                    .query([walked, upto, floor])?
                    .next()?
                    .map(|r| r.get::<_, i64>(0))
                    .transpose()?;
                if first.is_some() {
                    break first;
                }
                walked = upto;
            };
            Ok(found)
        })
    }

    fn connect(&self) -> Result<Connection, StoreError> {
        // Read access is checked first so that "no permission" is told apart from SQLite's
        // generic "unable to open database file".
        if let Err(e) = std::fs::File::open(&self.path) {
            return Err(self.io_error(e));
        }
        let uri = format!("file:{}?mode=ro", uri_escape(&self.path));
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(uri, flags).map_err(|e| self.sqlite_error(e))?;
        conn.busy_timeout(self.busy_timeout)
            .map_err(|e| self.sqlite_error(e))?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // The query planner stability guarantee: plans never depend on bound values. Without
        // it, a statement whose plan looked at a bound `LIKE` pattern (the LIKE optimisation
        // reads it to see whether an index range applies) is marked expired whenever that
        // parameter is bound again, and the cached statement is recompiled on its next step:
        // every poll of a sender filter would pay a full compile. Our plans never need the
        // values: patterns that an index could serve are compared by `IN`, not `LIKE`.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .map_err(|e| self.sqlite_error(e))?;
        // Opening is lazy: touch the schema now so a corrupt or locked file fails here.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(|e| self.sqlite_error(e))?;
        Ok(conn)
    }

    fn io_error(&self, e: std::io::Error) -> StoreError {
        self.io_error_at(self.path.clone(), e)
    }

    /// Classify an OS failure on `path`, the store or a file beside it (its `-wal`).
    fn io_error_at(&self, path: PathBuf, e: std::io::Error) -> StoreError {
        let store = self.label;
        match e.kind() {
            std::io::ErrorKind::NotFound => StoreError::Missing { store, path },
            std::io::ErrorKind::PermissionDenied => StoreError::PermissionDenied { store, path },
            _ => StoreError::Io {
                store,
                path,
                source: e,
            },
        }
    }

    /// Classify a `SQLite` failure on this store.
    fn sqlite_error(&self, e: rusqlite::Error) -> StoreError {
        let (store, path) = (self.label, self.path.clone());
        let code = match &e {
            rusqlite::Error::SqliteFailure(f, _) => Some(f.code),
            _ => None,
        };
        match code {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Locked {
                store,
                path,
                waited_ms: u64::try_from(self.busy_timeout.as_millis()).unwrap_or(u64::MAX),
            },
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreError::Corrupt {
                store,
                path,
                detail: e.to_string(),
            },
            // macOS without Full Disk Access: "authorization denied" (extended code 23), often
            // at the first statement rather than at open.
            Some(ErrorCode::AuthorizationForStatementDenied | ErrorCode::PermissionDenied) => {
                StoreError::PermissionDenied { store, path }
            }
            Some(ErrorCode::CannotOpen) if !self.path.exists() => {
                StoreError::Missing { store, path }
            }
            _ => StoreError::Sqlite {
                store,
                path,
                source: e,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step's calls after its stamp use the stamp's look (the store moved away after the
    /// stamp is still read through the open connection); outside a step, and in a step begun
    /// after one that never ended, every call looks afresh and finds the store gone.
    #[test]
    fn a_step_shares_its_stamps_look_and_no_look_outlives_it() {
        use crate::filter::MailFilter;
        use crate::stores::plans::{mail_store, world};
        use crate::stores::{Source, Window};

        let (_dir, home, paths) = world();
        let db = home.envelope_index();
        let aside = db.with_extension("aside");
        let mut store = mail_store(&paths);
        let filter = MailFilter::default();
        let scan = |store: &mut super::super::mail::MailStore, head| {
            let window = Window {
                after: 0,
                upto: head,
                limit: 100,
            };
            store.scan(&filter, window)
        };

        store.begin_read();
        let stamp = store.stamp().unwrap();
        std::fs::rename(&db, &aside).unwrap();
        let inside = scan(&mut store, stamp.head).expect("the step's look");
        assert_eq!(inside.identity, stamp.identity);
        assert!(!inside.found.is_empty());
        store.end_read();
        let outside = scan(&mut store, stamp.head).expect_err("a fresh look");
        assert!(matches!(outside, StoreError::Missing { .. }), "{outside:?}");

        // A step that never ended (a panic) leaves no look for the next one.
        std::fs::rename(&aside, &db).unwrap();
        store.begin_read();
        let stamp = store.stamp().unwrap();
        std::fs::rename(&db, &aside).unwrap();
        store.begin_read();
        let next = scan(&mut store, stamp.head).expect_err("a fresh look");
        assert!(matches!(next, StoreError::Missing { .. }), "{next:?}");
    }
}
