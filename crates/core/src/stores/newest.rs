//! The newest date of a ROWID range, for the backfill guard ([`Source::newest`]): SQL
//! aggregates over the range rather than every row stepped into Rust (a filtered catch-up
//! judges a few found rows, which must not cost a walk of every row in the window);
//! and the same read on a second connection beside a catch-up's scan
//! ([`Source::scan_beside`]).

use std::sync::atomic::{AtomicI64, Ordering};

use rusqlite::Connection;
use rusqlite::types::Value;
use time::OffsetDateTime;

#[cfg(doc)]
use super::Source;
use super::open::StoreHandle;
use super::{Dates, Scan, Stamp, Window, read};
use crate::cursor::FileIdentity;
use crate::error::StoreError;

/// How one store's dates are read in aggregate.
pub(super) struct NewestSql {
    /// `SELECT max(<date>), min(<date>)` over `ROWID > ?1 AND ROWID <= ?2`. Plain aggregates:
    /// a `CASE` per row to sort values by type doubled the cost of each row.
    pub(super) sql: &'static str,
    /// `SELECT ROWID, <date>` over the same range, walked when the aggregates cannot answer.
    pub(super) walk: &'static str,
    /// Raw values convert in order only above this (Messages: nanoseconds above
    /// `dates::APPLE_NANOS_THRESHOLD`, legacy seconds at or below it); a range whose least
    /// value is not above it is walked. `None`: every value converts in order (Mail).
    pub(super) ordered_above: Option<i64>,
    /// The store's conversion of a date as `read::int` reads it.
    pub(super) convert: fn(Option<i64>) -> Option<OffsetDateTime>,
}

/// The newest date of each range `(after, upto]`, in order, in one read transaction (one
/// snapshot and one look at the file for the whole batch of gaps).
pub(super) fn newest_of<C: Copy>(
    handle: &mut StoreHandle<C>,
    sql: &NewestSql,
    ranges: &[(i64, i64)],
) -> Result<Vec<Option<OffsetDateTime>>, StoreError> {
    handle.in_read(|conn| {
        ranges
            .iter()
            .map(|&(after, upto)| newest_in(conn, sql, after, upto))
            .collect()
    })
}

/// The second connection of [`Source::scan_beside`], with the last stamp of the store's own
/// connection.
///
/// It is looked at only while it reads, and an open connection that is not looked at is in
/// the owner's way once the store is wiped in place: it trusts the old `-shm`, and the owner's
/// next write fails as locked (decisions/stores.md). So any change the store's own stamp sees
/// (a commit, a wipe, a rebuild, a failure; the hub stamps on every file event) closes it, and
/// the next catch-up opens it again. A drain's calls, with no change between them, share it:
/// closing it after every call cost a drain of the bench store a fifth of its time.
pub(super) struct Beside<C> {
    handle: StoreHandle<C>,
    stamped: Option<Stamp>,
}

impl<C: Copy> Beside<C> {
    /// The second connection of the store `handle` reads, not open yet.
    pub(super) fn of(handle: &StoreHandle<C>) -> Self {
        Beside {
            handle: handle.twin(),
            stamped: None,
        }
    }

    /// Close the connection when `stamp` (the store's own, just taken) is not the last one.
    pub(super) fn after_stamp(&mut self, stamp: &Result<Stamp, StoreError>) {
        let now = stamp.as_ref().ok().copied();
        if now.is_none() || now != self.stamped {
            self.handle.close();
        }
        self.stamped = now;
    }

    /// Whether the connection is open (for tests).
    #[cfg(test)]
    pub(super) fn is_open(&self) -> bool {
        self.handle.is_open()
    }
}

/// [`Source::scan_beside`]: `scan` on this thread while the second connection (`beside`, its
/// own warm handle on the same file) reads the newest date of each of `ranges` in order on
/// another. A filtered catch-up's guard reads every row's date in its window, about as long
/// as the scan of the window's few matches takes; side by side they take the longer of the
/// two, not the sum (issue 14). When the scan stops at `window.limit`, the reader stops after
/// the range that holds its last match: the rows beyond are not the batch's. The ranges it
/// read come back (a prefix of `ranges`), or `None` when it failed or read another file than
/// the scan: the caller then reads on the scan's connection, as it would without this.
pub(super) fn scan_beside<C: Copy + Send>(
    beside: &mut Beside<C>,
    sql: &NewestSql,
    window: Window,
    ranges: &[(i64, i64)],
    scan: impl FnOnce() -> Result<Scan, StoreError>,
) -> Result<(Scan, Option<Dates>), StoreError> {
    // Ranges starting at or past this are not read; `i64::MIN` stops at once.
    let stop = AtomicI64::new(i64::MAX);
    let handle = &mut beside.handle;
    let (scan, dates) = std::thread::scope(|threads| {
        // A thread the system will not start fails nothing: the dates are read after the scan.
        let reader = std::thread::Builder::new()
            .name("tidings-guard".into())
            .spawn_scoped(threads, || newest_until(handle, sql, ranges, &stop));
        let scan = scan();
        let Ok(reader) = reader else {
            return (scan, None);
        };
        let cover = match &scan {
            Ok(scan) if scan.found.len() >= window.limit => {
                scan.found.last().map_or(i64::MAX, |f| f.rowid)
            }
            Ok(_) => i64::MAX,
            Err(_) => i64::MIN,
        };
        stop.store(cover, Ordering::Relaxed);
        match reader.join() {
            Ok(dates) => (scan, dates.ok()),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    let scan = scan?;
    let dates = dates.and_then(|(identity, dates)| (identity == scan.identity).then_some(dates));
    Ok((scan, dates))
}

/// The newest date of each range in order, in one read transaction, until a range starts at or
/// past `stop`; and the file it read.
fn newest_until<C: Copy>(
    handle: &mut StoreHandle<C>,
    sql: &NewestSql,
    ranges: &[(i64, i64)],
    stop: &AtomicI64,
) -> Result<(FileIdentity, Vec<Option<OffsetDateTime>>), StoreError> {
    // One step: the look that gives the identity serves the read.
    handle.begin_read();
    let read = (|| {
        let (_, identity, _) = handle.current()?;
        let dates = handle.in_read(|conn| {
            let mut dates = Vec::with_capacity(ranges.len());
            for &(after, upto) in ranges {
                if after >= stop.load(Ordering::Relaxed) {
                    break;
                }
                dates.push(newest_in(conn, sql, after, upto)?);
            }
            Ok(dates)
        })?;
        Ok((identity, dates))
    })();
    handle.end_read();
    read
}

/// The newest date of `(after, upto]`, each date read as leniently as the scan reads it.
/// From the aggregates when the greatest value is an integer (`SQLite` orders every number
/// before any text or BLOB, so no text is in the range; a real below it truncates to no more
/// than it) that converts to a date, and the range holds one class of values; else walked row
/// by row (`walk`), where the order of raw values says nothing.
fn newest_in(
    conn: &Connection,
    sql: &NewestSql,
    after: i64,
    upto: i64,
) -> rusqlite::Result<Option<OffsetDateTime>> {
    if upto <= after {
        return Ok(None);
    }
    let (max, min): (Value, Value) = conn
        .prepare_cached(sql.sql)?
        .query_row([after, upto], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let one_class = sql.ordered_above.is_none_or(|floor| match min {
        Value::Integer(i) => i > floor,
        #[allow(clippy::cast_precision_loss)] // a bound, not arithmetic
        Value::Real(f) => f > floor as f64,
        _ => false,
    });
    match max {
        Value::Null => return Ok(None),
        // An out-of-range greatest value hides the greatest one in range: walk.
        Value::Integer(newest)
            if one_class && (newest <= 0 || (sql.convert)(Some(newest)).is_some()) =>
        {
            return Ok((sql.convert)(Some(newest)));
        }
        _ => {}
    }
    let mut walk = conn.prepare_cached(sql.walk)?;
    // Each value read as the scan reads it (`read::int`), so the guard judges a row by the
    // same date whether the aggregate answers or the walk does.
    let dates = walk.query_map([after, upto], |r| read::int(r, 1))?;
    let mut newest = None;
    for date in dates {
        newest = newest.max((sql.convert)(date?));
    }
    Ok(newest)
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;
    use time::OffsetDateTime;

    use crate::dates::{APPLE_NANOS_THRESHOLD, from_apple, from_unix_secs};
    use crate::filter::MailFilter;
    use crate::stores::plans::{append_late_mail, mail_store, messages_store, world};
    use crate::stores::{Source, Window, read};

    /// Odd dates a stranger's store may hold: a real with a fraction (the date columns' integer
    /// affinity turns numeric text and whole reals into integers), text, zero, a negative,
    /// NULL, a BLOB, out of range, and both Messages classes on each side of their split. The
    /// readable ones are later than every fixture date, so a range that holds one must find it.
    const ODD: &[&str] = &[
        "4000000000.5",
        "'soon'",
        "4.1e9",
        "0",
        "-5",
        "NULL",
        "1e300",
        "x'00ff'",
        "4200000000",
        "5000000000000000000",
        "999999999999",
        "1000000000000",
        "1000000000001",
        "300000000000",
    ];

    /// The rows the odd dates go to, two at a time: ranges over the store then hold none,
    /// one or both.
    const ODD_ROWS: [i64; 2] = [5, 11];

    /// The walk the aggregate replaces: every row's date read as the scan reads it, the newest.
    fn walked(
        conn: &Connection,
        table: &str,
        date: &str,
        convert: fn(Option<i64>) -> Option<OffsetDateTime>,
        after: i64,
        upto: i64,
    ) -> Option<OffsetDateTime> {
        let sql = format!("SELECT {date} FROM {table} WHERE ROWID > ?1 AND ROWID <= ?2");
        let mut stmt = conn.prepare(&sql).unwrap();
        let rows = stmt.query_map([after, upto], |r| read::int(r, 0)).unwrap();
        rows.filter_map(|d| convert(d.unwrap())).max()
    }

    /// `Source::newest` of one store: ranges in, the newest date of each out.
    type Newest<'a> = dyn FnMut(&[(i64, i64)]) -> Vec<Option<OffsetDateTime>> + 'a;

    /// Set the odd dates, then compare `newest`, asked for every range of the store at once,
    /// with the walk of each.
    fn agrees(
        db: &std::path::Path,
        table: &str,
        date: &str,
        convert: fn(Option<i64>) -> Option<OffsetDateTime>,
        newest: &mut Newest<'_>,
    ) {
        let conn = Connection::open(db).unwrap();
        let head: i64 = conn
            .query_row(&format!("SELECT max(ROWID) FROM {table}"), [], |r| r.get(0))
            .unwrap();
        assert!(head > ODD_ROWS[1], "the fixture is too small: {head} rows");
        for pair in ODD.chunks(2) {
            for (rowid, value) in ODD_ROWS.iter().zip(pair) {
                let sql = format!("UPDATE {table} SET {date} = {value} WHERE ROWID = ?1");
                assert_eq!(conn.execute(&sql, [rowid]).unwrap(), 1, "{sql}");
            }
            let ranges: Vec<(i64, i64)> = (0..head)
                .flat_map(|after| (after..=head).map(move |upto| (after, upto)))
                .collect();
            let found = newest(&ranges);
            assert_eq!(found.len(), ranges.len(), "one answer per range");
            for (&(after, upto), found) in ranges.iter().zip(found) {
                assert_eq!(
                    found,
                    walked(&conn, table, date, convert, after, upto),
                    "{table}: ({after}, {upto}] with {pair:?}"
                );
            }
        }
    }

    #[test]
    fn the_mail_aggregate_finds_the_date_the_walk_finds_over_every_range() {
        let (_dir, home, paths) = world();
        let mut store = mail_store(&paths);
        let mut newest = |ranges: &[(i64, i64)]| store.newest(ranges).unwrap();
        agrees(
            &home.envelope_index(),
            "messages",
            "date_received",
            from_unix_secs,
            &mut newest,
        );
    }

    #[test]
    fn the_messages_aggregate_finds_the_date_the_walk_finds_over_every_range() {
        let (_dir, home, paths) = world();
        let mut store = messages_store(&paths);
        let mut newest = |ranges: &[(i64, i64)]| store.newest(ranges).unwrap();
        agrees(&home.chat_db(), "message", "date", from_apple, &mut newest);
    }

    #[test]
    fn the_messages_classes_split_where_from_apple_does() {
        let split = super::super::messages::NEWEST.ordered_above;
        assert_eq!(split, Some(APPLE_NANOS_THRESHOLD));
    }

    #[test]
    fn dates_read_beside_a_scan_are_the_stores_and_a_change_closes_the_second_connection() {
        let (_dir, home, paths) = world();
        let mut store = mail_store(&paths);
        let head = store.stamp().unwrap().head;
        let ranges: Vec<(i64, i64)> = (0..head)
            .flat_map(|after| (after..=head).map(move |upto| (after, upto)))
            .collect();
        let window = Window {
            after: 0,
            upto: head,
            limit: 10_000,
        };
        let none = MailFilter::default();
        let (scan, dates) = store.scan_beside(&none, window, &ranges).unwrap();
        assert_eq!(scan, store.scan(&none, window).unwrap());
        assert_eq!(dates.unwrap(), store.newest(&ranges).unwrap());
        assert!(store.beside_open());
        store.stamp().unwrap();
        assert!(
            store.beside_open(),
            "nothing changed: a drain's next call shares it"
        );
        // A commit: the next stamp closes it, and the next read opens it again.
        append_late_mail(&home);
        store.stamp().unwrap();
        assert!(!store.beside_open(), "a change closes it");
        let (_, dates) = store.scan_beside(&none, window, &ranges).unwrap();
        assert_eq!(dates.unwrap(), store.newest(&ranges).unwrap());
        assert!(store.beside_open());
        // A store that cannot be stamped closes it too.
        std::fs::remove_file(home.envelope_index()).unwrap();
        assert!(store.stamp().is_err());
        assert!(!store.beside_open(), "a failed stamp closes it");
    }
}
