//! Reading rows strangers wrote: text decoded lossily, numbers coerced, and a row that still
//! cannot be read skipped, counted and logged once, so one bad value never stalls a type.
//!
//! `SQLite` columns are dynamically typed: Messages or a sync bug can leave invalid UTF-8 in a
//! TEXT column, a BLOB where text belongs, or a date stored as text or as `1e300`. A typed
//! `row.get::<String>` fails on each of these, and before this module one such row failed every
//! scan that reached it, forever.

use std::borrow::Cow;
use std::collections::BTreeSet;

use rusqlite::Row;
use rusqlite::types::ValueRef;

use super::sql::is_short;
use super::{Found, Window};
use crate::cursor::FileIdentity;

/// Text: TEXT or BLOB bytes decoded as UTF-8 with U+FFFD for invalid sequences, a number
/// written out; `None` for NULL.
pub(crate) fn text(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<String>> {
    Ok(text_ref(row, idx)?.map(Cow::into_owned))
}

/// [`text`], borrowed from the row where it is valid UTF-8 already (no allocation).
pub(crate) fn text_ref<'r>(row: &'r Row<'_>, idx: usize) -> rusqlite::Result<Option<Cow<'r, str>>> {
    Ok(match row.get_ref(idx)? {
        ValueRef::Null => None,
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b)),
        ValueRef::Integer(i) => Some(Cow::Owned(i.to_string())),
        ValueRef::Real(f) => Some(Cow::Owned(f.to_string())),
    })
}

/// An integer: INTEGER as is, a REAL or a decimal TEXT that fits in an `i64` (truncated
/// toward zero); `None` for NULL, a BLOB, other text, or a value out of range (`1e300`, NaN).
pub(crate) fn int(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<i64>> {
    Ok(match row.get_ref(idx)? {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(f) => real_to_int(f),
        ValueRef::Text(b) => std::str::from_utf8(b).ok().and_then(|s| {
            let s = s.trim();
            s.parse::<i64>()
                .ok()
                .or_else(|| s.parse::<f64>().ok().and_then(real_to_int))
        }),
        ValueRef::Null | ValueRef::Blob(_) => None,
    })
}

fn real_to_int(f: f64) -> Option<i64> {
    // 2^63 is exactly representable; every finite f64 below it (and at or above -2^63) fits.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    #[allow(clippy::cast_possible_truncation)] // in range by the check; the fraction goes
    (f.is_finite() && (-LIMIT..LIMIT).contains(&f)).then_some(f as i64)
}

/// One row a scan met: an event-to-be, or a row that could not be read.
#[derive(Debug)]
pub(crate) enum Read {
    /// A readable, matching row.
    Found(Found),
    /// A row that could not be turned into an event; `why` names the failure, not the data.
    Unreadable {
        /// Its ROWID.
        rowid: i64,
        /// The conversion error, without any value.
        why: String,
    },
}

impl Read {
    fn rowid(&self) -> i64 {
        match self {
            Read::Found(f) => f.rowid,
            Read::Unreadable { rowid, .. } => *rowid,
        }
    }

    /// `Found`, or `Unreadable` when `result` failed on the data itself (a type conversion).
    /// Any other failure (busy, I/O, corruption) is the store's and is returned, so the scan
    /// fails and is retried rather than losing the row.
    pub(crate) fn of(rowid: i64, result: rusqlite::Result<Found>) -> rusqlite::Result<Read> {
        match result {
            Ok(found) => Ok(Read::Found(found)),
            Err(e @ rusqlite::Error::SqliteFailure(..)) => Err(e),
            Err(e) => Ok(Read::Unreadable {
                rowid,
                why: conversion_kind(&e),
            }),
        }
    }
}

/// What failed, without the value (a subject or name must not reach the log).
fn conversion_kind(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::InvalidColumnType(i, name, ty) => {
            format!("column {i} (`{name}`) holds {ty}")
        }
        rusqlite::Error::FromSqlConversionFailure(i, ty, _) => {
            format!("column {i} holds an unreadable {ty}")
        }
        rusqlite::Error::IntegralValueOutOfRange(i, _) => format!("column {i} is out of range"),
        rusqlite::Error::Utf8Error(..) => "text is not UTF-8".to_owned(),
        _ => "the row could not be read".to_owned(),
    }
}

/// How many of `rows` are readable matches.
fn found_in(rows: &[Read]) -> usize {
    rows.iter().filter(|r| matches!(r, Read::Found(_))).count()
}

/// Run `page` over `window` until it has `window.limit` readable rows or the window is read:
/// a page whose SQL `LIMIT` was filled by rows that include unreadable ones ends before the
/// window does, so the next page starts after its last row. Without this, the engine would
/// take a short page for the end of the window and move its cursor past unread rows.
pub(crate) fn fill(
    window: Window,
    mut page: impl FnMut(Window) -> rusqlite::Result<Vec<Read>>,
) -> rusqlite::Result<Vec<Read>> {
    let mut out: Vec<Read> = Vec::new();
    let mut w = window;
    loop {
        let rows = page(w)?;
        let full = rows.len() >= w.limit;
        let last = rows.last().map(Read::rowid);
        if out.is_empty() {
            // The usual case, one page: kept as it is rather than copied.
            out = rows;
        } else {
            out.extend(rows);
        }
        let found = found_in(&out);
        match last {
            Some(last) if full && found < window.limit && last < window.upto => {
                w = Window {
                    after: last,
                    upto: window.upto,
                    limit: window.limit - found,
                };
            }
            _ => return Ok(out),
        }
    }
}

/// How many ROWIDs of a wide window are read first, per row, to see how densely its senders
/// match: enough to tell a sender in two rows from one in a hundred, few enough that a
/// filter matching one row in a hundred does not pay for them (the drain bench measures the
/// choice: docs/benchmarks.md, "History").
const PROBE_ROWS: i64 = 64;

/// A dense match is read per row for at most about this many more ROWIDs after the first
/// [`PROBE_ROWS`] (a few milliseconds of rows that do not match); a sparser one is read with
/// its senders listed.
const PER_ROW_WALK: i64 = 4_096;

/// [`fill`] for a scan whose `page` says whether it tests senders per row (see
/// `sql::memberships`). Listed, a sender condition tests every handle of the store and then
/// reads every match in the window, in sender order, to sort them, however few the batch
/// takes: under an allowlist of whole domains, a poll of 100 events reads and sorts every
/// match of a wide window to return the first 100. Per row, rows are read in ROWID order and
/// the read stops when the batch is full, but every row is tested, so a sender in one row of
/// a hundred walks the whole window (figures: docs/benchmarks.md, "History"). So when the
/// scan tests senders (`tests_senders`), a wide window's first [`PROBE_ROWS`] ROWIDs are read
/// per row, and the rate they matched at says how to read the rest: per row when at that rate
/// the batch fills within [`PER_ROW_WALK`] more ROWIDs, else listed. Only the cost depends on
/// the choice; both read the same rows.
pub(crate) fn fill_by_senders(
    window: Window,
    tests_senders: bool,
    mut page: impl FnMut(Window, bool) -> rusqlite::Result<Vec<Read>>,
) -> rusqlite::Result<Vec<Read>> {
    if !tests_senders || is_short(window) {
        return fill(window, |w| page(w, is_short(w)));
    }
    let probe = Window {
        upto: window.after.saturating_add(PROBE_ROWS),
        ..window
    };
    let mut out = fill(probe, |w| page(w, true))?;
    let found = found_in(&out);
    if found >= window.limit {
        return Ok(out);
    }
    let rest = Window {
        after: probe.upto,
        upto: window.upto,
        limit: window.limit - found,
    };
    // ROWIDs to fill the batch at the probe's rate: needed × probe width / matches.
    let needed = i64::try_from(rest.limit).unwrap_or(i64::MAX);
    let dense = found > 0
        && needed.saturating_mul(PROBE_ROWS) / i64::try_from(found).unwrap_or(1) <= PER_ROW_WALK;
    out.extend(fill(rest, |w| page(w, dense))?);
    Ok(out)
}

/// Unreadable rows of one store file: counted once each, logged once each.
#[derive(Debug, Default)]
pub(crate) struct Unreadable {
    identity: Option<FileIdentity>,
    /// The ROWIDs already counted in this file (bounded: see [`Unreadable::MAX_REMEMBERED`]).
    seen: BTreeSet<i64>,
    total: u64,
}

impl Unreadable {
    /// Past this many remembered rows the oldest are forgotten: a store full of bad rows must
    /// not grow our memory; a forgotten row met again is counted and logged again.
    const MAX_REMEMBERED: usize = 10_000;

    /// Rows of `file` skipped since the daemon started.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Keep the readable rows; count and log the others (once per row per file).
    pub(crate) fn sort_out(
        &mut self,
        store: &'static str,
        file: FileIdentity,
        rows: Vec<Read>,
    ) -> Vec<Found> {
        if self.identity != Some(file) {
            self.identity = Some(file);
            self.seen.clear();
        }
        let mut found = Vec::with_capacity(rows.len());
        for row in rows {
            match row {
                Read::Found(f) => found.push(f),
                Read::Unreadable { rowid, why } => {
                    if self.seen.insert(rowid) {
                        self.total += 1;
                        tracing::warn!(
                            store,
                            rowid,
                            why = %why,
                            "skipped a row that cannot be read; delivery goes on"
                        );
                        if self.seen.len() > Self::MAX_REMEMBERED {
                            self.seen.pop_first();
                        }
                    }
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    fn values(sql: &str) -> (Option<String>, Option<i64>) {
        let conn = Connection::open_in_memory().unwrap();
        conn.query_row(sql, [], |r| Ok((text(r, 0)?, int(r, 0)?)))
            .unwrap()
    }

    #[test]
    fn text_is_decoded_lossily_and_numbers_are_coerced() {
        assert_eq!(
            values("SELECT CAST(X'48FF49' AS TEXT)").0.as_deref(),
            Some("H\u{FFFD}I")
        );
        assert_eq!(values("SELECT X'4869'").0.as_deref(), Some("Hi"));
        assert_eq!(values("SELECT 42"), (Some("42".into()), Some(42)));
        assert_eq!(values("SELECT NULL"), (None, None));
        assert_eq!(values("SELECT 1e300").1, None);
        assert_eq!(values("SELECT -1e300").1, None);
        assert_eq!(values("SELECT 12.9").1, Some(12));
        assert_eq!(values("SELECT ' 738936000 '").1, Some(738_936_000));
        assert_eq!(values("SELECT 'yesterday'").1, None);
        assert_eq!(values("SELECT '1e300'").1, None);
        assert_eq!(values("SELECT X'00'").1, None);
    }

    fn found(rowid: i64) -> Read {
        Read::Found(Found {
            rowid,
            event_id: rowid.to_string(),
            date: None,
            data: serde_json::Value::Null,
        })
    }

    fn bad(rowid: i64) -> Read {
        Read::Unreadable {
            rowid,
            why: "test".into(),
        }
    }

    #[test]
    fn a_page_filled_with_unreadable_rows_reads_on_to_the_limit() {
        // Rows 1..=10; 2, 3 and 4 cannot be read.
        let page = |w: Window| -> rusqlite::Result<Vec<Read>> {
            Ok(((w.after + 1)..=w.upto.min(10))
                .map(|r| {
                    if (2..=4).contains(&r) {
                        bad(r)
                    } else {
                        found(r)
                    }
                })
                .take(w.limit)
                .collect())
        };
        let window = Window {
            after: 0,
            upto: 10,
            limit: 3,
        };
        let rows = fill(window, page).unwrap();
        let ids: Vec<i64> = rows.iter().map(Read::rowid).collect();
        assert_eq!(ids, vec![1, 2, 3, 4, 5, 6]);
        let mut u = Unreadable::default();
        let file = FileIdentity {
            dev: 1,
            ino: 2,
            birth: 3,
        };
        let kept = u.sort_out("Messages", file, rows);
        assert_eq!(kept.len(), 3);
        assert_eq!(u.total(), 3);
        // Met again (another stream over the same rows): not counted twice.
        u.sort_out("Messages", file, fill(window, page).unwrap());
        assert_eq!(u.total(), 3);
    }

    /// `fill_by_senders` over rows `1..=n` where every `k`th matches (`k = 0`: none) and
    /// every 7th match cannot be read: the ROWIDs it returns, and how its pages tested senders
    /// (per row or not, in turn).
    fn by_senders(n: i64, k: i64, window: Window, senders: bool) -> (Vec<i64>, Vec<bool>) {
        let mut pages = Vec::new();
        let rows = fill_by_senders(window, senders, |w, per_row| {
            pages.push(per_row);
            Ok(((w.after + 1)..=w.upto.min(n))
                .filter(|r| k > 0 && r % k == 0)
                .map(|r| if r % (7 * k) == 0 { bad(r) } else { found(r) })
                .take(w.limit)
                .collect())
        })
        .unwrap();
        pages.dedup();
        (rows.iter().map(Read::rowid).collect(), pages)
    }

    #[test]
    fn a_wide_window_reads_a_dense_match_per_row_and_a_sparse_one_listed() {
        let window = |limit| Window {
            after: 0,
            upto: 20_000,
            limit,
        };
        // Every row of the window that `fill` reads, whichever way the senders are tested:
        // the matches up to `limit` readable ones, and the unreadable ones among them.
        let want = |k: i64, limit: usize| -> Vec<i64> {
            let mut rows = Vec::new();
            let mut readable = 0;
            for r in (1..=20_000).filter(|r| k > 0 && r % k == 0) {
                if readable == limit {
                    break;
                }
                rows.push(r);
                readable += usize::from(r % (7 * k) != 0);
            }
            rows
        };
        // Half the rows match: read per row, for a batch of 100 or 1,000.
        assert_eq!(
            by_senders(20_000, 2, window(101), true),
            (want(2, 101), vec![true])
        );
        assert_eq!(
            by_senders(20_000, 2, window(1_001), true),
            (want(2, 1_001), vec![true])
        );
        // One row in a hundred: the first read finds none, and the rest is listed.
        let (rows, pages) = by_senders(20_000, 100, window(1_001), true);
        assert_eq!(rows, want(100, 1_001));
        assert_eq!(pages, [true, false]);
        // One in twenty: at the first read's rate 100 more fill within its walk, 1,000 not.
        assert_eq!(
            by_senders(20_000, 20, window(101), true),
            (want(20, 101), vec![true])
        );
        let (rows, pages) = by_senders(20_000, 20, window(1_001), true);
        assert_eq!(rows, want(20, 1_001));
        assert_eq!(pages, [true, false]);
        // A short window is one read, per row; a wide one with no sender condition is one read
        // (its senders neither listed nor tested).
        let short = Window {
            after: 0,
            upto: 256,
            limit: 101,
        };
        assert_eq!(by_senders(20_000, 100, short, true).1, [true]);
        assert_eq!(by_senders(20_000, 2, window(101), false).1, [false]);
    }

    #[test]
    fn a_store_failure_is_not_a_bad_row() {
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        assert!(Read::of(1, Err(busy)).is_err());
        let conversion =
            rusqlite::Error::InvalidColumnType(3, "date".into(), rusqlite::types::Type::Text);
        assert!(matches!(
            Read::of(1, Err(conversion)),
            Ok(Read::Unreadable { rowid: 1, .. })
        ));
    }
}
