//! The dates the backfill guard reads for a window of rows that were already in the store:
//! the newest date before each found row, read by chunks of the window where a chunk's newest
//! date settles every verdict in it, and gap by gap where it does not.
//!
//! Each read of a ROWID range is a statement of its own (a seek, a bind, a reset), and one
//! range per found row adds up over a filtered catch-up (docs/benchmarks.md, "The guard by
//! chunks"). A verdict only asks whether the newest earlier date is more than the window
//! after the row's own, and that answer grows with the date (`Backfill::same_verdict`), so a
//! bound of the newest earlier date from below and one from above that agree give the exact
//! verdict without the exact date.

use time::OffsetDateTime;

use super::{Backfill, SEED_ROWS};

/// A found row: its ROWID and its own date, as the scan read them.
pub(crate) type Dated = (i64, Option<OffsetDateTime>);

/// What [`read`] found for the guard: the arguments of [`Backfill::judge`].
pub(crate) struct GuardDates {
    /// The newest date of the rows just below the window.
    pub seed: Option<OffsetDateTime>,
    /// Each found row, its own date, and the newest date before it in the window (or a
    /// bound of that date that gives the row the same verdict).
    pub judged: Vec<(i64, Option<OffsetDateTime>, Option<OffsetDateTime>)>,
    /// The newest date of the whole window `(after, last]`.
    pub newest: Option<OffsetDateTime>,
}

/// Chunks are sized to cover about this fraction of the guard's window in time, so that in a
/// store whose dates rise with its ROWIDs a chunk's newest date cannot make a row in it look
/// old.
const CHUNK_SHARE_OF_WINDOW: i64 = 4;

/// Chunks must hold at least this many found rows' gaps on average, or reading by gaps costs
/// no more statements.
const MIN_GAPS_PER_CHUNK: i64 = 4;

/// A window of at least this many ROWIDs has its chunks read beside its scan
/// (`Source::scan_beside`): a narrower one's dates take less time to read than a thread to
/// start.
pub(crate) const AHEAD_MIN_ROWS: i64 = 4_096;

/// How many chunks a window read beside its scan is cut into. Its matches are not known yet,
/// so the chunks cannot be sized from their dates. A chunk settles its rows when it spans
/// less time than the guard's window (a week by default); a thirty-second of a catch-up's
/// 20,000 ROWIDs (625) is a few days of a store that takes a few hundred rows a day, and a
/// chunk that does not settle is read again by gaps, as without this.
const AHEAD_CHUNKS: i64 = 32;

/// What was read beside a scan: [`ahead`]'s ranges and the newest date of a prefix of them.
pub(crate) struct Ahead {
    pub ranges: Vec<(i64, i64)>,
    pub dates: Vec<Option<OffsetDateTime>>,
}

/// The ranges to read beside a scan of `(after, upto]`: the seed, then the window in
/// [`AHEAD_CHUNKS`] chunks.
pub(crate) fn ahead(after: i64, upto: i64) -> Vec<(i64, i64)> {
    let chunk = ((upto - after) / AHEAD_CHUNKS).max(1);
    let mut ranges = vec![seed_range(after)];
    ranges.extend(chunks(after, upto, chunk));
    ranges
}

/// `(from, to]` cut into ranges of `chunk` ROWIDs (`chunk` at least 1), the last one shorter.
fn chunks(from: i64, to: i64, chunk: i64) -> impl Iterator<Item = (i64, i64)> {
    let mut end = from;
    std::iter::from_fn(move || {
        (end < to).then(|| {
            let start = end;
            end = end.saturating_add(chunk).min(to);
            (start, end)
        })
    })
}

/// The rows just below the window whose newest date seeds it.
fn seed_range(after: i64) -> (i64, i64) {
    (after.saturating_sub(SEED_ROWS), after)
}

/// Read the dates `backfill` needs to judge `found` (in ROWID order, all in `(after, last]`)
/// with `newest_of`, which answers the newest date of each range `(lo, hi]` it is given, in
/// one read. At most two calls: the chunks, then the gaps of any chunk whose verdicts its
/// bounds did not settle. With `ahead` (the chunks read beside the scan, for this `after`),
/// the first call reads only what of the window they did not reach, if anything.
pub(crate) fn read<E>(
    backfill: &Backfill,
    found: &[Dated],
    after: i64,
    last: i64,
    now: OffsetDateTime,
    ahead: Option<Ahead>,
    mut newest_of: impl FnMut(&[(i64, i64)]) -> Result<Vec<Option<OffsetDateTime>>, E>,
) -> Result<GuardDates, E> {
    let seed_range = seed_range(after);
    // The chunks index rows by where they fall in the window; a row outside it (never, from
    // `next_on`) is read by gaps, which take any order of ranges.
    let inside =
        found.first().is_none_or(|f| f.0 > after) && found.last().is_none_or(|f| f.0 <= last);
    // `bounds[k]` ends chunk `k` (`bounds[0]` is `after`); `dates` holds the seed's newest
    // date, then each chunk's.
    let ahead = ahead.filter(|a| inside && a.ranges.first() == Some(&seed_range));
    let (bounds, dates) = if let Some(ahead) = &ahead {
        from_ahead(ahead, after, last, &mut newest_of)?
    } else {
        let chunk = chunk_rows(backfill, found, after, last).filter(|_| inside);
        let Some(chunk) = chunk else {
            return by_gaps(found, after, last, seed_range, &mut newest_of);
        };
        let mut ranges = vec![seed_range];
        ranges.extend(chunks(after, last, chunk));
        let bounds = std::iter::once(after)
            .chain(ranges[1..].iter().map(|r| r.1))
            .collect();
        (bounds, newest_of(&ranges)?)
    };
    let (seed, chunk_newest) = (dates[0], &dates[1..]);
    // The newest date of every chunk before chunk `k`: a bound from below for each of its
    // rows; with chunk `k`'s own newest date, one from above.
    let mut before_chunk = Vec::with_capacity(chunk_newest.len());
    let mut running = None;
    for &newest in chunk_newest {
        before_chunk.push(running);
        running = running.max(newest);
    }
    let newest = running;
    let chunk_of = |rowid: i64| bounds.partition_point(|&end| end < rowid) - 1;
    let floor = backfill.floor(seed, after);
    let mut judged = Vec::with_capacity(found.len());
    let mut unsettled: Vec<usize> = Vec::new();
    for &(rowid, date) in found {
        let k = chunk_of(rowid);
        let (low, high) = (before_chunk[k], before_chunk[k].max(chunk_newest[k]));
        if !backfill.same_verdict(rowid, date, floor, low, high, now)
            && unsettled.last() != Some(&k)
        {
            unsettled.push(k);
        }
        judged.push((rowid, date, low));
    }
    if !unsettled.is_empty() {
        // Each unsettled chunk gap by gap: every row's exact newest earlier date.
        let mut gaps = Vec::new();
        let rows: Vec<_> = unsettled
            .iter()
            .map(|&k| rows_in(found, bounds[k], bounds[k + 1]))
            .collect();
        for (&k, rows) in unsettled.iter().zip(&rows) {
            let mut walked = bounds[k];
            for &(rowid, _) in &found[rows.clone()] {
                gaps.push((walked, rowid - 1));
                walked = rowid - 1;
            }
        }
        let gap_dates = newest_of(&gaps)?;
        let mut next = gap_dates.into_iter();
        for (&k, rows) in unsettled.iter().zip(rows) {
            let mut newest_before = before_chunk[k];
            for row in &mut judged[rows] {
                newest_before = newest_before.max(next.next().flatten());
                row.2 = newest_before;
            }
        }
    }
    Ok(GuardDates {
        seed,
        judged,
        newest,
    })
}

/// Every found row's exact newest earlier date, one range per gap between found rows: the
/// rows just below the window (the seed), the gap before each found row, then the rest.
fn by_gaps<E>(
    found: &[Dated],
    after: i64,
    last: i64,
    seed_range: (i64, i64),
    newest_of: &mut impl FnMut(&[(i64, i64)]) -> Result<Vec<Option<OffsetDateTime>>, E>,
) -> Result<GuardDates, E> {
    let mut ranges = Vec::with_capacity(found.len() + 2);
    ranges.push(seed_range);
    let mut walked = after;
    for &(rowid, _) in found {
        ranges.push((walked, rowid - 1));
        walked = rowid - 1;
    }
    ranges.push((walked, last));
    let dates = newest_of(&ranges)?;
    let (seed, gaps, rest) = (dates[0], &dates[1..=found.len()], dates[found.len() + 1]);
    let mut newest = None;
    let judged = found
        .iter()
        .zip(gaps)
        .map(|(&(rowid, date), &gap)| {
            newest = newest.max(gap);
            (rowid, date, newest)
        })
        .collect();
    Ok(GuardDates {
        seed,
        judged,
        newest: newest.max(rest),
    })
}

/// The chunks and dates [`read`] starts from, given what was read beside the scan: the chunks
/// it read that end within `(after, last]`, then the rest of the window in chunks of the same
/// span, read with `newest_of` (a chunk that reaches past `last` holds rows that are not the
/// batch's, and the window's newest date becomes a mark, so it must be exact).
fn from_ahead<E>(
    ahead: &Ahead,
    after: i64,
    last: i64,
    newest_of: &mut impl FnMut(&[(i64, i64)]) -> Result<Vec<Option<OffsetDateTime>>, E>,
) -> Result<(Vec<i64>, Vec<Option<OffsetDateTime>>), E> {
    let chunk = ahead.ranges.get(1).map_or(1, |&(lo, hi)| (hi - lo).max(1));
    let mut bounds = vec![after];
    let mut dates = Vec::with_capacity(ahead.ranges.len());
    let mut rest = Vec::new();
    match ahead.dates.first() {
        Some(&seed) => dates.push(seed),
        None => rest.push(seed_range(after)),
    }
    for (&(_, hi), &newest) in ahead.ranges.iter().zip(&ahead.dates).skip(1) {
        if hi > last {
            break;
        }
        bounds.push(hi);
        dates.push(newest);
    }
    let end = *bounds.last().expect("starts with `after`");
    for range in chunks(end, last, chunk) {
        rest.push(range);
        bounds.push(range.1);
    }
    if !rest.is_empty() {
        dates.extend(newest_of(&rest)?);
    }
    Ok((bounds, dates))
}

/// Where the found rows in `(lo, hi]` are in `found` (and in the `judged` beside it).
fn rows_in(found: &[Dated], lo: i64, hi: i64) -> std::ops::Range<usize> {
    found.partition_point(|f| f.0 <= lo)..found.partition_point(|f| f.0 <= hi)
}

/// How many ROWIDs a chunk spans, or `None` to read by gaps. Estimated from the found rows'
/// own dates: the ROWIDs the store takes, on average, in a quarter of the guard's window. Only
/// the cost depends on it: a chunk whose bounds do not settle its rows is read again by gaps.
fn chunk_rows(backfill: &Backfill, found: &[Dated], after: i64, last: i64) -> Option<i64> {
    let window = backfill.window()?.whole_seconds();
    let mut dated = found
        .iter()
        .filter_map(|&(rowid, date)| Some((rowid, date?)));
    let (first_row, first_date) = dated.next()?;
    let (last_row, last_date) = dated.next_back()?;
    let seconds = (last_date - first_date).whole_seconds();
    if seconds <= 0 || last_row <= first_row {
        return None;
    }
    let per_window = i128::from(last_row - first_row) * i128::from(window) / i128::from(seconds);
    let chunk = i64::try_from(per_window / i128::from(CHUNK_SHARE_OF_WINDOW)).ok()?;
    let gap = (last - after) / i64::try_from(found.len()).ok()?.max(1);
    (chunk >= MIN_GAPS_PER_CHUNK * gap.max(1)).then_some(chunk.max(1))
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use super::*;
    use crate::cursor::FileIdentity;

    const DAY: i64 = 86_400;

    fn at(seconds: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_700_000_000 + seconds).unwrap()
    }

    /// A store's dates by ROWID (index 0 is ROWID 1), and how `newest_of` reads them.
    struct Store {
        dates: Vec<Option<OffsetDateTime>>,
        calls: usize,
        ranges: usize,
    }

    impl Store {
        fn new(dates: Vec<Option<OffsetDateTime>>) -> Store {
            Store {
                dates,
                calls: 0,
                ranges: 0,
            }
        }

        /// `n` rows dated `per_day` a day, in ROWID order.
        fn rising(n: i64, per_day: i64) -> Store {
            Store::new((0..n).map(|i| Some(at(i * DAY / per_day))).collect())
        }

        /// Every `k`th row, with its date, as a scan would find them.
        fn every(&self, k: i64) -> Vec<Dated> {
            let n = i64::try_from(self.dates.len()).unwrap();
            (1..=n)
                .filter(|r| r % k == 0)
                .map(|r| (r, self.dates[usize::try_from(r - 1).unwrap()]))
                .collect()
        }

        fn newest(&mut self, ranges: &[(i64, i64)]) -> Vec<Option<OffsetDateTime>> {
            self.calls += 1;
            self.ranges += ranges.len();
            let len = i64::try_from(self.dates.len()).unwrap();
            ranges
                .iter()
                .map(|&(lo, hi)| {
                    (lo.max(0)..hi.min(len))
                        .filter_map(|i| self.dates[usize::try_from(i).unwrap()])
                        .max()
                })
                .collect()
        }
    }

    /// A store of `n` rows whose dates rise about `per_day` a day from `start`, with bursts of
    /// old rows (an added account), undated rows and rows dated in the future.
    fn store(rng: &mut fastrand::Rng, n: usize, per_day: i64) -> Store {
        let mut t = 0;
        let mut dates = Vec::with_capacity(n);
        while dates.len() < n {
            match rng.u32(0..200) {
                0 => {
                    // A burst of archive rows, years old, in any order.
                    let old = t - rng.i64(30..2_000) * DAY;
                    for _ in 0..rng.usize(1..300) {
                        dates.push(Some(at(old + rng.i64(0..400) * DAY)));
                    }
                }
                1 => dates.push(None),
                2 => dates.push(Some(at(t + rng.i64(1..900) * DAY))),
                _ => {
                    t += rng.i64(0..=2 * DAY / per_day.max(1));
                    dates.push(Some(at(t)));
                }
            }
        }
        dates.truncate(n);
        Store::new(dates)
    }

    /// A guard with `window_days`, and first-seen times for the rows past `baseline`.
    fn guard(window_days: u64, baseline: i64, heads: &[(i64, OffsetDateTime)]) -> Backfill {
        let mut b = Backfill::default();
        b.set_window(Some(std::time::Duration::from_secs(window_days * 86_400)));
        let identity = FileIdentity::of(std::path::Path::new("/")).unwrap();
        b.observe(identity, baseline, at(0));
        for &(head, when) in heads {
            b.observe(identity, head, when);
        }
        b
    }

    /// What `judge` decides from `read`'s dates, and from every gap read exactly.
    fn both(
        store: &mut Store,
        make: &dyn Fn() -> Backfill,
        found: &[Dated],
        after: i64,
        last: i64,
        now: OffsetDateTime,
        ahead: Option<Ahead>,
    ) -> (Vec<i64>, Vec<i64>) {
        let mut chunked = make();
        let dates = read(&chunked, found, after, last, now, ahead, |r| {
            Ok::<_, Infallible>(store.newest(r))
        })
        .unwrap();
        let got = chunked.judge(
            &dates.judged,
            dates.seed,
            dates.newest,
            after,
            last,
            now,
            "t",
        );
        let mut exact = make();
        let gaps = by_gaps(
            found,
            after,
            last,
            (after.saturating_sub(SEED_ROWS), after),
            &mut |r| Ok::<_, Infallible>(store.newest(r)),
        )
        .unwrap();
        assert_eq!(dates.seed, gaps.seed);
        assert_eq!(dates.newest, gaps.newest, "the window's newest date");
        let want = exact.judge(&gaps.judged, gaps.seed, gaps.newest, after, last, now, "t");
        (got, want)
    }

    #[test]
    fn chunked_dates_give_every_row_the_verdict_the_exact_gaps_give() {
        let mut rng = fastrand::Rng::with_seed(14);
        let mut skipped = 0;
        for case in 0..400 {
            let n = rng.usize(20..4_000);
            let per_day = [1, 20, 200, 2_000][rng.usize(0..4)];
            let mut store = store(&mut rng, n, per_day);
            let n = i64::try_from(n).unwrap();
            let after = rng.i64(0..n);
            let last = rng.i64(after + 1..=n);
            let density = [2, 10, 100, 1_000][rng.usize(0..4)];
            let found: Vec<Dated> = (after + 1..=last)
                .filter(|_| rng.u32(0..1_000) < density)
                .map(|rowid| (rowid, store.dates[usize::try_from(rowid - 1).unwrap()]))
                .collect();
            let window_days = [1, 7, 30][rng.usize(0..3)];
            let baseline = rng.i64(0..=n);
            let seen = [(baseline + rng.i64(1..50), at(rng.i64(0..3_000) * DAY))];
            let heads: &[_] = if case % 2 == 0 { &seen } else { &[] };
            let make = || guard(window_days, baseline, heads);
            let now = at(rng.i64(0..3_000) * DAY);
            let (got, want) = both(&mut store, &make, &found, after, last, now, None);
            assert_eq!(
                got,
                want,
                "case {case}: n {n}, ({after}, {last}], {} found",
                found.len()
            );
            // The same with chunks read beside a scan of a window up to `upto`, of which the
            // reader reached any number before it was stopped.
            let upto = rng.i64(last..=n);
            let ranges = ahead(after, upto);
            let reached = rng.usize(0..=ranges.len());
            let dates = store.newest(&ranges[..reached]);
            let ahead = Some(Ahead { ranges, dates });
            let (beside, _) = both(&mut store, &make, &found, after, last, now, ahead);
            assert_eq!(
                beside, want,
                "case {case} read beside: ({after}, {last}] of ({after}, {upto}], {reached} read"
            );
            skipped += want.len();
        }
        // The cases reach both verdicts.
        assert!(
            skipped > 100,
            "only {skipped} rows judged backfill in all the cases"
        );
    }

    #[test]
    fn a_store_in_date_order_is_read_in_a_few_chunks() {
        // 100,000 rows, 1,000 a day, a 1% filter: a thousand gaps, read as a few chunks.
        let mut store = Store::rising(100_000, 1_000);
        let found = store.every(100);
        let make = || guard(7, 100_000, &[]);
        let (got, want) = both(&mut store, &make, &found, 0, 100_000, at(200 * DAY), None);
        assert_eq!(got, want);
        assert!(got.is_empty());
        // `both` read the exact gaps too: 1,002 ranges in one call.
        let chunked = store.ranges - 1_002;
        assert_eq!(store.calls, 2, "one call each: nothing left unsettled");
        assert!(chunked <= 100, "{chunked} ranges for the chunks");
    }

    #[test]
    fn a_chunk_its_bounds_do_not_settle_is_read_gap_by_gap() {
        // New rows, and a burst of year-old rows in the window's first chunk, where nothing
        // before the chunk bounds its rows from below: that chunk's gaps are read again, and
        // the old rows are backfill.
        let mut store = Store::rising(20_000, 1_000);
        for d in &mut store.dates[100..400] {
            *d = Some(at(-365 * DAY));
        }
        let found = store.every(50);
        let make = || guard(7, 20_000, &[]);
        let (got, want) = both(&mut store, &make, &found, 0, 20_000, at(30 * DAY), None);
        assert_eq!(got, want);
        assert_eq!(
            got,
            [150, 200, 250, 300, 350, 400],
            "the found rows among the old ones"
        );
        assert_eq!(
            store.calls, 3,
            "the chunks, the unsettled chunk's gaps, the exact gaps"
        );
    }
}
