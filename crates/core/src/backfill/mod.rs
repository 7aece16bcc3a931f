//! Backfill is not news: a row that appears now but is dated long before (Messages in iCloud
//! syncing onto a Mac, a mail account added) is not delivered; it is counted and logged once
//! per burst.
//!
//! A row is backfill when its own date is older than the window before its *reference*:
//! - when this daemon first saw the store's head pass it, if it did;
//! - else (rows already there when the daemon first looked) the newest date among the rows
//!   before it in the store, rolled forward in ROWID order through each batch, seeded from
//!   the rows just below the cursor and from what earlier batches saw, never later than now.
//!
//! Neither depends on when a client reads, so a client resuming after ten days still gets the
//! nine-day-old rows that arrived as news, and a stream and a late poll agree. A head that
//! goes down (a store wiped and refilled in place) starts over like a new file. See
//! docs/decisions/poll-engine.md, "Backfill".

use std::collections::{BTreeMap, VecDeque};

use time::OffsetDateTime;

use crate::cursor::FileIdentity;

pub(crate) mod dates;

/// How many rows below a cursor seed the newest date seen.
pub(crate) const SEED_ROWS: i64 = 64;

/// Head advances remembered; older ones fall back to the store dates alone.
const MAX_HEADS: usize = 4096;

/// Batch-end marks (the newest date up to a ROWID) remembered.
const MAX_MARKS: usize = 4096;

/// Counted ROWID ranges remembered (one per stream position, merged as they meet).
const MAX_COUNTED: usize = 256;

/// A quiet spell after which the next skipped row starts a new burst (and a new log line).
const BURST_GAP: time::Duration = time::Duration::minutes(1);

/// The backfill state of one store.
#[derive(Debug, Default)]
pub(crate) struct Backfill {
    /// `None`: the guard is off.
    window: Option<time::Duration>,
    identity: Option<FileIdentity>,
    /// Rows up to here were in the store when we first looked: no first-seen time.
    baseline: i64,
    /// Each head advance we saw, and when.
    heads: VecDeque<(i64, OffsetDateTime)>,
    /// The newest date among the rows up to a ROWID, at batch ends.
    marks: BTreeMap<i64, OffsetDateTime>,
    /// ROWID ranges `(after, upto]` whose backfilled rows are counted.
    counted: Vec<(i64, i64)>,
    /// Distinct rows skipped as backfill, since start.
    skipped: u64,
    /// When the last row was skipped (a burst ends after [`BURST_GAP`] without one).
    last_skip: Option<OffsetDateTime>,
}

impl Backfill {
    /// Set the window; `None` turns the guard off.
    pub(crate) fn set_window(&mut self, window: Option<std::time::Duration>) {
        self.window = window.map(|w| time::Duration::try_from(w).unwrap_or(time::Duration::MAX));
    }

    /// Distinct rows skipped since start.
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Record a look at the store: a new file starts over, an advanced head is first seen now.
    /// A head below the last one seen is a new file too: the store was wiped and refilled in
    /// place (same inode and birth time), and what we knew of the old rows says nothing of
    /// the new ones under the same ROWIDs.
    pub(crate) fn observe(&mut self, identity: FileIdentity, head: i64, now: OffsetDateTime) {
        let last = self.heads.back().map_or(self.baseline, |h| h.0);
        if self.identity != Some(identity) || head < last {
            *self = Backfill {
                window: self.window,
                identity: Some(identity),
                baseline: head,
                skipped: self.skipped,
                ..Backfill::default()
            };
            return;
        }
        if head > last {
            if self.heads.len() == MAX_HEADS {
                // Forget the oldest: its rows are then judged by store dates alone, which
                // can only deliver more, never less.
                if let Some((head, _)) = self.heads.pop_front() {
                    self.baseline = head;
                }
            }
            self.heads.push_back((head, now));
        }
    }

    /// When we first saw the head pass `rowid`, if we did.
    fn first_seen(&self, rowid: i64) -> Option<OffsetDateTime> {
        if rowid <= self.baseline {
            return None;
        }
        let i = self.heads.partition_point(|(head, _)| *head < rowid);
        self.heads.get(i).map(|(_, at)| *at)
    }

    /// Whether the guard is on.
    pub(crate) fn is_on(&self) -> bool {
        self.window.is_some()
    }

    /// Whether judging a window after `after` reads the store's dates: the guard is on and the
    /// window reaches rows that were there before this daemon first looked
    /// ([`Backfill::judge_seen`] answers the others alone).
    pub(crate) fn reads_store_dates(&self, after: i64) -> bool {
        self.window.is_some() && after < self.baseline
    }

    /// Judge the found rows of `(after, upto]` and return the ROWIDs that are backfill. Each
    /// row comes as `(rowid, own date, newest date among the window's rows before it)`, in
    /// ROWID order; `seed` is the newest date among the rows just below `after`, and `newest`
    /// the newest date in the whole window (kept as the mark at `upto`). The store's dates in
    /// between are read by SQL aggregates, not walked row by row (`Source::newest`). Counts
    /// each backfilled row once however many streams read it; rows a filter left out are
    /// not judged (nor counted).
    #[allow(clippy::too_many_arguments)] // the window, its dates and the reader's clock
    pub(crate) fn judge(
        &mut self,
        rows: &[(i64, Option<OffsetDateTime>, Option<OffsetDateTime>)],
        seed: Option<OffsetDateTime>,
        newest: Option<OffsetDateTime>,
        after: i64,
        upto: i64,
        now: OffsetDateTime,
        name: &str,
    ) -> Vec<i64> {
        let Some(window) = self.window else {
            return Vec::new();
        };
        let floor = self.floor(seed, after);
        let mut backfill = Vec::new();
        for &(rowid, date, before) in rows {
            if self.is_backfill(window, floor, rowid, date, before, now) {
                backfill.push(rowid);
            }
        }
        if let Some(newest) = floor.max(newest) {
            self.marks.insert(upto, newest);
            if self.marks.len() > MAX_MARKS {
                self.marks.pop_first();
            }
        }
        self.tally(&backfill, after, upto, now, name);
        backfill
    }

    /// The guard's window, `None` when it is off.
    pub(crate) fn window(&self) -> Option<time::Duration> {
        self.window
    }

    /// The newest date known below `after`: the rows just below it (`seed`) and what earlier
    /// batches saw (the marks).
    pub(crate) fn floor(&self, seed: Option<OffsetDateTime>, after: i64) -> Option<OffsetDateTime> {
        let mark = self.marks.range(..=after).next_back().map(|(_, d)| *d);
        seed.max(mark)
    }

    /// Whether row `rowid` gets the same verdict with any newest earlier date from `low` to
    /// `high`. A later date can only make a row look older, so the verdicts at the two ends
    /// agreeing settles every date between (`dates::read` reads no closer than that).
    pub(crate) fn same_verdict(
        &self,
        rowid: i64,
        date: Option<OffsetDateTime>,
        floor: Option<OffsetDateTime>,
        low: Option<OffsetDateTime>,
        high: Option<OffsetDateTime>,
        now: OffsetDateTime,
    ) -> bool {
        let Some(window) = self.window else {
            return true;
        };
        self.is_backfill(window, floor, rowid, date, low, now)
            == self.is_backfill(window, floor, rowid, date, high, now)
    }

    /// The verdict on one row: older than the window before its reference.
    fn is_backfill(
        &self,
        window: time::Duration,
        floor: Option<OffsetDateTime>,
        rowid: i64,
        date: Option<OffsetDateTime>,
        before: Option<OffsetDateTime>,
        now: OffsetDateTime,
    ) -> bool {
        // When we saw the row appear, if we did: fixed, so every reader judges it alike. Else
        // the newest earlier date, capped at now (a row dated in the future must not make its
        // neighbours look old).
        let reference = self
            .first_seen(rowid)
            .or_else(|| floor.max(before).map(|d| d.min(now)));
        matches!((date, reference), (Some(date), Some(reference)) if reference - date > window)
    }

    /// [`judge`](Backfill::judge) for a window whose every row this daemon saw arrive (all
    /// after the baseline): each row's reference is then when it was first seen, so the found
    /// rows (ROWID and own date, as the scan read them) are judged alone, with no walk of the
    /// window's other dates. The live path: a stream at the head reads only rows it saw
    /// arrive. `None` when the window reaches rows that were already there, which need the
    /// store's dates. Counts what it skips as `judge` does; other rows of the window that a
    /// filter left out are not looked at (nor counted).
    pub(crate) fn judge_seen(
        &mut self,
        found: &[(i64, Option<OffsetDateTime>)],
        after: i64,
        upto: i64,
        now: OffsetDateTime,
        name: &str,
    ) -> Option<Vec<i64>> {
        let window = self.window?;
        if after < self.baseline {
            return None;
        }
        let mut backfill = Vec::new();
        for &(rowid, date) in found {
            let reference = self.first_seen(rowid)?;
            if let Some(date) = date
                && reference - date > window
            {
                backfill.push(rowid);
            }
        }
        self.tally(&backfill, after, upto, now, name);
        Some(backfill)
    }

    /// Count the rows of `backfill` not counted before, mark `(after, upto]` counted, and log
    /// the first skip of a burst.
    fn tally(&mut self, backfill: &[i64], after: i64, upto: i64, now: OffsetDateTime, name: &str) {
        let Some(window) = self.window else {
            return;
        };
        let fresh = backfill
            .iter()
            .filter(|&&r| !self.counted.iter().any(|&(lo, hi)| lo < r && r <= hi))
            .count() as u64;
        self.count_range(after, upto);
        if fresh > 0 {
            let new_burst = self.last_skip.is_none_or(|t| now - t > BURST_GAP);
            self.skipped += fresh;
            self.last_skip = Some(now);
            if new_burst {
                tracing::info!(
                    event_type = name,
                    window_days = window.whole_days(),
                    "skipping backfilled rows (dated long before they appeared); \
                     `tidings status` counts them"
                );
            }
        }
    }

    /// Mark `(after, upto]` counted, merging with the ranges it meets.
    fn count_range(&mut self, after: i64, upto: i64) {
        let (mut lo, mut hi) = (after, upto);
        self.counted.retain(|&(a, b)| {
            let meets = a <= hi && lo <= b;
            if meets {
                lo = lo.min(a);
                hi = hi.max(b);
            }
            !meets
        });
        self.counted.push((lo, hi));
        if self.counted.len() > MAX_COUNTED {
            self.counted.sort_unstable();
            self.counted.remove(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(days: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_900_000_000).unwrap() + time::Duration::days(days)
    }

    /// Observe `head` at `when` on one fixed file.
    fn see(b: &mut Backfill, head: i64, when: OffsetDateTime) {
        let identity = FileIdentity::of(std::path::Path::new("/")).unwrap();
        b.observe(identity, head, when);
    }

    impl Backfill {
        /// `judge` over every row of a window, each row's earlier dates walked in order.
        fn judge_walked(
            &mut self,
            rows: &[(i64, Option<OffsetDateTime>)],
            seed: Option<OffsetDateTime>,
            after: i64,
            upto: i64,
            now: OffsetDateTime,
            name: &str,
        ) -> Vec<i64> {
            let mut newest = None;
            let mut judged = Vec::new();
            for &(rowid, date) in rows {
                judged.push((rowid, date, newest));
                newest = newest.max(date);
            }
            self.judge(&judged, seed, newest, after, upto, now, name)
        }
    }

    fn guard() -> Backfill {
        let mut b = Backfill::default();
        b.set_window(Some(std::time::Duration::from_secs(7 * 86_400)));
        b
    }

    #[test]
    fn old_rows_inside_new_ones_are_backfill_and_counted_once() {
        let mut b = guard();
        see(&mut b, 10, at(0));
        let rows = [
            (11, Some(at(0))),
            (12, Some(at(-400))),
            (13, Some(at(-30))),
            (14, Some(at(-1))),
        ];
        assert_eq!(b.judge_walked(&rows, None, 10, 14, at(0), "t"), [12, 13]);
        assert_eq!(b.skipped(), 2);
        // Another stream over the same rows counts nothing more.
        assert_eq!(b.judge_walked(&rows, None, 10, 14, at(0), "t"), [12, 13]);
        assert_eq!(b.skipped(), 2);
    }

    #[test]
    fn rows_seen_arriving_are_judged_alone_as_the_walk_judges_them() {
        let mut walked = guard();
        let mut alone = guard();
        for b in [&mut walked, &mut alone] {
            see(b, 10, at(0));
            see(b, 14, at(0));
            see(b, 16, at(3));
        }
        let rows = [
            (11, Some(at(0))),
            (12, Some(at(-400))),
            (13, Some(at(-30))),
            (14, Some(at(-1))),
            (15, None),
            (16, Some(at(1))),
        ];
        let expected = walked.judge_walked(&rows, None, 10, 16, at(3), "t");
        assert_eq!(expected, [12, 13]);
        assert_eq!(
            alone.judge_seen(&rows, 10, 16, at(3), "t").unwrap(),
            expected
        );
        assert_eq!(alone.skipped(), 2);
        // Counted once however many streams judge the same rows.
        assert_eq!(
            alone.judge_seen(&rows, 10, 16, at(3), "t").unwrap(),
            expected
        );
        assert_eq!(alone.skipped(), 2);
        // Rows already there at the first look (at or below ROWID 10) need the store's dates.
        assert_eq!(alone.judge_seen(&rows, 9, 16, at(3), "t"), None);
    }

    #[test]
    fn rows_that_appear_after_a_sleep_are_news() {
        let mut b = guard();
        see(&mut b, 10, at(0));
        // Asleep two days; on wake the head moves and rows dated two days ago appear.
        see(&mut b, 12, at(2));
        let rows = [(11, Some(at(0))), (12, Some(at(0)))];
        assert!(
            b.judge_walked(&rows, Some(at(0)), 10, 12, at(2), "t")
                .is_empty()
        );
    }

    #[test]
    fn a_late_reader_gets_what_arrived_as_news() {
        let mut b = guard();
        see(&mut b, 10, at(0));
        see(&mut b, 11, at(1));
        // Read ten days later: the row appeared one day after its date.
        assert!(
            b.judge_walked(&[(11, Some(at(0)))], Some(at(0)), 10, 11, at(10), "t")
                .is_empty()
        );
    }

    #[test]
    fn a_first_sync_into_an_empty_store_is_backfill_by_the_time_it_appeared() {
        let mut b = guard();
        see(&mut b, 0, at(0));
        see(&mut b, 3, at(0));
        let rows = [(1, Some(at(-900))), (2, Some(at(-800))), (3, Some(at(-10)))];
        assert_eq!(b.judge_walked(&rows, None, 0, 3, at(0), "t"), [1, 2, 3]);
    }

    #[test]
    fn the_window_off_or_undated_rows_are_never_backfill() {
        let mut b = Backfill::default();
        see(&mut b, 0, at(0));
        see(&mut b, 1, at(0));
        assert!(
            b.judge_walked(&[(1, Some(at(-900)))], None, 0, 1, at(0), "t")
                .is_empty()
        );
        let mut b = guard();
        see(&mut b, 0, at(0));
        see(&mut b, 1, at(0));
        assert!(
            b.judge_walked(&[(1, None)], None, 0, 1, at(0), "t")
                .is_empty()
        );
    }

    #[test]
    fn a_future_dated_row_does_not_make_later_news_look_old() {
        let mut b = guard();
        see(&mut b, 10, at(0));
        let rows = [(11, Some(at(400))), (12, Some(at(0)))];
        assert!(b.judge_walked(&rows, None, 10, 12, at(0), "t").is_empty());
    }

    #[test]
    fn a_store_wiped_and_refilled_in_place_starts_over() {
        let mut b = guard();
        see(&mut b, 30, at(0));
        see(&mut b, 51, at(0));
        let old: Vec<_> = (31..=51).map(|r| (r, Some(at(0)))).collect();
        assert!(b.judge_walked(&old, None, 30, 51, at(0), "t").is_empty());
        // Wiped in place (same file identity), then a resync of 40 rows dated two months
        // back: the head went down, so the rows under the old ROWIDs are new to us.
        see(&mut b, 0, at(1));
        see(&mut b, 40, at(1));
        let resync: Vec<_> = (1..=40)
            .map(|r| (r, Some(at(-60) + time::Duration::hours(r))))
            .collect();
        let skipped = b.judge_walked(&resync, None, 0, 40, at(1), "t");
        assert_eq!(skipped.len(), 40, "{skipped:?}");
        assert_eq!(b.skipped(), 40);
    }

    #[test]
    fn a_row_seen_arriving_is_judged_alike_by_every_reader() {
        let mut b = guard();
        see(&mut b, 10, at(0));
        see(&mut b, 13, at(0));
        // A row dated a year ahead, then one just inside the window, then one of now.
        let nearly_old = at(-7) + time::Duration::seconds(15);
        let rows = [
            (11, Some(at(365))),
            (12, Some(nearly_old)),
            (13, Some(at(0))),
        ];
        assert!(b.judge_walked(&rows, None, 10, 13, at(0), "t").is_empty());
        // A reader a minute later sees the same: the reference is when the rows appeared.
        let later = at(0) + time::Duration::minutes(1);
        assert!(b.judge_walked(&rows, None, 10, 13, later, "t").is_empty());
    }
}
