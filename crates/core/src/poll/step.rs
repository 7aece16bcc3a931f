//! One step on one store, whatever its kind: where a subscription starts (bootstrap, gap,
//! `maxAgeMs` floor) and the next bounded batch after a cursor, with the backfill guard's
//! verdicts. The [`Engine`](super::Engine) takes the locks and calls these.

use time::OffsetDateTime;

use super::{Batch, Start};
use crate::backfill::Backfill;
use crate::backfill::dates::{self, Ahead};
use crate::contacts::Contacts;
use crate::cursor::Cursor;
use crate::dates::iso8601;
use crate::error::StoreError;
use crate::event::Occurrence;
use crate::stores::{Source, Stamp, Window, name_sender};

fn head(stamp: &Stamp) -> Cursor {
    Cursor {
        identity: stamp.identity,
        rowid: stamp.head,
    }
}

pub(super) fn start_on<S: Source>(
    s: &mut S,
    cursor: Option<Cursor>,
    max_age_ms: Option<u64>,
    now: OffsetDateTime,
) -> Result<Start, StoreError> {
    let stamp = s.stamp()?;
    let Some(c) = cursor else {
        return Ok(Start {
            cursor: head(&stamp),
            truncated: false,
            bootstrap: true,
        });
    };
    if !c.is_in(stamp.identity) || c.rowid > stamp.head {
        return Ok(Start {
            cursor: head(&stamp),
            truncated: true,
            bootstrap: false,
        });
    }
    // A floor before the representable past (a huge `maxAgeMs`) skips nothing.
    let floor = max_age_ms
        .and_then(|age| now.checked_sub(time::Duration::milliseconds(age.try_into().ok()?)));
    if let Some(floor) = floor {
        // Every row before the first one dated at or after the floor is skipped.
        let floor_pos = match s.seek(floor)? {
            Some(first) => first - 1,
            None => stamp.head,
        };
        if floor_pos > c.rowid {
            let cursor = Cursor {
                identity: stamp.identity,
                rowid: floor_pos,
            };
            return Ok(Start {
                cursor,
                truncated: true,
                bootstrap: false,
            });
        }
    }
    // The file's full identity from now on: a `v1` cursor (no birth time) comes back as `v2`.
    Ok(Start {
        cursor: Cursor {
            identity: stamp.identity,
            rowid: c.rowid,
        },
        truncated: false,
        bootstrap: false,
    })
}

/// What one step may do, and when it runs.
pub(super) struct Step<'c> {
    /// The event type's name, for the events and the guard's log.
    pub(super) name: &'static str,
    /// The most events returned.
    pub(super) max_events: usize,
    /// The most ROWIDs examined.
    pub(super) scan_rows: i64,
    /// Now, for the guard and for rows without a date.
    pub(super) now: OffsetDateTime,
    /// The Contacts senders are named from (`from.contact`), or `None` to name no one.
    pub(super) names: Option<&'c Contacts>,
}

/// The ROWIDs among `found` (the rows of `(after, last]` a scan picked, with their own dates)
/// that are backfill, in order. The store's other dates come from SQL aggregates over ROWID
/// ranges ([`Source::newest`]), not from a walk of every row into Rust (a filtered catch-up
/// picks a few rows in thousands), by chunks of the window where that settles the verdicts
/// ([`crate::backfill::dates`]).
fn judge_backfill<S: Source>(
    s: &mut S,
    backfill: &mut Backfill,
    found: &[(i64, Option<OffsetDateTime>)],
    after: i64,
    last: i64,
    step: &Step<'_>,
    ahead: Option<Ahead>,
) -> Result<Vec<i64>, StoreError> {
    let dates = dates::read(backfill, found, after, last, step.now, ahead, |ranges| {
        s.newest(ranges)
    })?;
    Ok(backfill.judge(
        &dates.judged,
        dates.seed,
        dates.newest,
        after,
        last,
        step.now,
        step.name,
    ))
}

/// `read` as one engine step on `s`: its calls after the stamp share the stamp's look at the
/// file (`StoreHandle::begin_read`).
pub(super) fn in_step<S: Source, R>(s: &mut S, read: impl FnOnce(&mut S) -> R) -> R {
    s.begin_read();
    let out = read(s);
    s.end_read();
    out
}

pub(super) fn next_on<S: Source>(
    s: &mut S,
    filter: &S::Filter,
    after: Cursor,
    step: &Step<'_>,
    backfill: &mut Backfill,
) -> Result<Batch, StoreError> {
    let mut stamp = s.stamp()?;
    backfill.observe(stamp.identity, stamp.head, step.now);
    let gap = |stamp: &Stamp| Batch {
        events: Vec::new(),
        cursor: head(stamp),
        has_more: false,
        truncated: true,
    };
    if !after.is_in(stamp.identity) || after.rowid > stamp.head {
        return Ok(gap(&stamp));
    }
    let upto = stamp.head.min(after.rowid.saturating_add(step.scan_rows));
    if upto <= after.rowid {
        return Ok(Batch {
            events: Vec::new(),
            cursor: Cursor {
                identity: stamp.identity,
                rowid: after.rowid,
            },
            has_more: false,
            truncated: false,
        });
    }
    // Ask for one more than we return, to know whether the window holds more matches.
    let window = Window {
        after: after.rowid,
        upto,
        limit: step.max_events + 1,
    };
    // A wide window of rows that were already there: the guard's chunks are read beside the
    // scan, on a second connection, rather than after it.
    let (scan, ahead) =
        if backfill.reads_store_dates(after.rowid) && upto - after.rowid >= dates::AHEAD_MIN_ROWS {
            let ranges = dates::ahead(after.rowid, upto);
            let (scan, dates) = s.scan_beside(filter, window, &ranges)?;
            (scan, dates.map(|dates| Ahead { ranges, dates }))
        } else {
            (s.scan(filter, window)?, None)
        };
    if scan.identity != stamp.identity {
        // Replaced between the stamp and the scan: what we read belongs to the new file.
        stamp = s.stamp()?;
        return Ok(gap(&stamp));
    }
    let mut found = scan.found;
    let (last, has_more) = if found.len() > step.max_events {
        found.truncate(step.max_events);
        (found.last().map_or(upto, |f| f.rowid), true)
    } else {
        (upto, upto < stamp.head)
    };
    // Backfilled rows are not events: skipped like tapbacks, never a gap (`truncated`).
    if backfill.is_on() {
        let dated: Vec<_> = found.iter().map(|f| (f.rowid, f.date)).collect();
        let skip = match backfill.judge_seen(&dated, after.rowid, last, step.now, step.name) {
            Some(skip) => skip,
            None => judge_backfill(s, backfill, &dated, after.rowid, last, step, ahead)?,
        };
        found.retain(|f| skip.binary_search(&f.rowid).is_err());
    }
    if let Some(contacts) = step.names {
        // Only the rows delivered: one map lookup each.
        for f in &mut found {
            name_sender(&mut f.data, S::SENDER_KEY, contacts);
        }
    }
    let events = found
        .into_iter()
        .map(|f| Occurrence {
            event_id: f.event_id,
            name: step.name,
            // A row with no date is stamped with the time we saw it; its payload date stays null.
            timestamp: iso8601(f.date.unwrap_or(step.now)),
            data: f.data,
            cursor: Cursor {
                identity: stamp.identity,
                rowid: f.rowid,
            }
            .to_string(),
        })
        .collect();
    Ok(Batch {
        events,
        cursor: Cursor {
            identity: stamp.identity,
            rowid: last,
        },
        has_more,
        truncated: false,
    })
}
