//! The check schedule: how closely a store is followed after a file event, and how far apart
//! its checks are while no stream waits on it.

use std::sync::Mutex;
use std::time::Duration;

use tidings_core::EventType;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::{Health, Hub, LATENCY};
use crate::sync::lock;

/// While a stream waits on the store, the first check after a file event re-stamps on its
/// blocking thread every [`FAST_FOLLOW_PAUSE`] for up to [`FAST_FOLLOW_FOR`] until the stamp
/// differs (tokio's timers round a sleep up to the next whole millisecond). The event comes
/// when the writer writes its `-wal` frames, before the sync and before the commit is
/// published in the `-shm`; a `synchronous=FULL` writer (`SQLite`'s default, and how the bench
/// writes) publishes it after its sync. Even steps find the commit one short step after it
/// becomes visible wherever in the window it lands, where growing steps would leave a late
/// one waiting a long step. The cost is a stamp (two `stat`s and a cached query) per step,
/// only while streams wait and only until the commit shows (docs/benchmarks.md, "History").
const FAST_FOLLOW_PAUSE: Duration = Duration::from_micros(50);
/// How long the first check after a file event re-stamps every [`FAST_FOLLOW_PAUSE`].
const FAST_FOLLOW_FOR: Duration = Duration::from_millis(2);
/// After [`FAST_FOLLOW_FOR`], the first check keeps re-stamping, every [`SLOW_FOLLOW_PAUSE`],
/// until this long after it began. A sync slower than 2 ms is common on a busy disk, and the
/// follow schedule's timers, rounded up to whole milliseconds, would find such a commit
/// milliseconds after it shows (docs/benchmarks.md, "Slow flush"). A check that finds nothing
/// pays for the re-stamps of the whole span.
pub(super) const SLOW_FOLLOW_UNTIL: Duration = Duration::from_millis(20);
/// The pause between re-stamps from [`FAST_FOLLOW_FOR`] to [`SLOW_FOLLOW_UNTIL`].
const SLOW_FOLLOW_PAUSE: Duration = Duration::from_micros(250);
/// With no stream waiting, checks (after file events or on the follow schedule) are at least
/// this far apart: nobody waits for them (the state's last change, the backfill guard's first
/// sighting and a rebuild notice can be this late), and a writer committing 1,000 times a
/// second then costs 20 stamps a second, not one per commit. While the hub waits out the
/// spacing, file events only leave the store's one stored permit: no thread is woken for
/// them. A stream subscribing ends the wait at once.
pub(super) const IDLE_SPACING: Duration = Duration::from_millis(50);
/// The first re-check after an event or a change; each following gap doubles up to
/// [`FOLLOW_GAP_MAX`]. The early checks find a fast commit within milliseconds.
const FOLLOW_GAP_MIN: Duration = Duration::from_millis(1);
/// The longest gap between re-checks while following: a commit that becomes visible during the
/// window is found at most this late. A check is a stat and two tiny queries (microseconds).
const FOLLOW_GAP_MAX: Duration = Duration::from_millis(20);
/// How long the stamp must stay unchanged, with no new file event, before following stops. It
/// covers flushes well past a second; a slower commit falls to the live check or the tick.
pub const FOLLOW_FOR: Duration = Duration::from_secs(3);

/// When a store's last file event came (set by the watcher callback, or by a poke) and when
/// the stamp read that found its last change began. A writer raises its file events as it
/// writes a commit's `-wal` frames, before the commit shows, so an event older than the read
/// that found a change was a write of that commit (or, rarely, of one right behind it, which
/// the follow schedule finds within its first steps): the check it leads to has nothing to
/// wait for. Without this, the events a commit raises after the first one each led to a
/// fresh check that re-stamped for the whole [`SLOW_FOLLOW_UNTIL`] in vain (docs/benchmarks.md).
#[derive(Default)]
pub(super) struct Marks {
    pub(super) event: Option<std::time::Instant>,
    pub(super) change: Option<std::time::Instant>,
}

impl Marks {
    /// Whether a file event came that the last change found may not include.
    pub(super) fn event_since_change(&self) -> bool {
        match (self.event, self.change) {
            (Some(event), Some(change)) => event > change,
            _ => true,
        }
    }
}

/// A store's file events: one stored permit coalesces a burst, and the marks keep when the
/// last one came.
#[derive(Default)]
pub(super) struct Kick {
    pub(super) notify: Notify,
    pub(super) marks: Mutex<Marks>,
}

impl Kick {
    /// A file event came now: mark it, then wake the store's task.
    pub(super) fn file_event(&self) {
        lock(&self.marks).event = Some(std::time::Instant::now());
        self.notify.notify_one();
    }
}

impl Hub {
    /// Check now, then re-check on a backing-off schedule until the stamp has been unchanged,
    /// with no new file event, for [`FOLLOW_FOR`]. A file event or a change starts the
    /// schedule over: a newer commit may still be becoming visible. `event` is when the last
    /// file event came, for the latency trace.
    ///
    /// A file event is checked at once (the leading edge), with no gathering window: the
    /// events that come while that check runs leave one stored permit, so a burst costs one
    /// more check, not one per event. A file event while the schedule is waiting is checked at
    /// once too; it never waits for the schedule's next step.
    pub(super) async fn follow(&self, ty: EventType, mut event: Option<Instant>) {
        let store = self.store(ty);
        let mut gap = FOLLOW_GAP_MIN;
        let mut still_since = Instant::now();
        // The first check after a file event follows the commit closely (see `check`).
        let mut fresh = event.is_some();
        loop {
            let checked_at = Instant::now();
            // Only a readable change restarts the schedule: a failure whose message changes
            // on every check must not keep the hub checking at full rate.
            if self.check(ty, event, std::mem::take(&mut fresh)).await
                && matches!(&*lock(&store.health), Health::Ok(_))
            {
                gap = FOLLOW_GAP_MIN;
                still_since = Instant::now();
            }
            let until = still_since + FOLLOW_FOR;
            let now = Instant::now();
            if now >= until {
                return;
            }
            tokio::select! {
                () = self.inner.shutdown.cancelled() => return,
                () = store.kick.notify.notified() => {
                    event = Some(file_event(ty));
                    fresh = true;
                    gap = FOLLOW_GAP_MIN;
                    still_since = Instant::now();
                    self.idle_pause(ty, checked_at).await;
                }
                () = tokio::time::sleep(gap.min(until - now).max(self.idle_gap(ty))) => {
                    gap = (gap * 2).min(FOLLOW_GAP_MAX);
                }
            }
        }
    }

    /// The least gap between two checks of the schedule: [`IDLE_SPACING`] while no stream
    /// waits on the store, else none.
    fn idle_gap(&self, ty: EventType) -> Duration {
        if self.store(ty).wake.receiver_count() == 0 {
            IDLE_SPACING
        } else {
            Duration::ZERO
        }
    }

    /// While no stream waits on the store, wait until [`IDLE_SPACING`] after the last check
    /// (`checked_at`), or until a stream subscribes, whichever comes first.
    async fn idle_pause(&self, ty: EventType, checked_at: Instant) {
        let store = self.store(ty);
        if store.wake.receiver_count() > 0 {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep_until(checked_at + IDLE_SPACING) => {}
            () = store.subscribed.notified() => {}
            () = self.inner.shutdown.cancelled() => {}
        }
    }
}

/// The pause before the next re-stamp of a check that follows a file event, `elapsed` after
/// the check began; `None` once it has followed for [`SLOW_FOLLOW_UNTIL`].
pub(super) fn follow_pause(elapsed: Duration) -> Option<Duration> {
    if elapsed < FAST_FOLLOW_FOR {
        Some(FAST_FOLLOW_PAUSE)
    } else if elapsed < SLOW_FOLLOW_UNTIL {
        Some(SLOW_FOLLOW_PAUSE)
    } else {
        None
    }
}

/// A file event arrived: trace it and return when it came, for the latency trace.
pub(super) fn file_event(ty: EventType) -> Instant {
    tracing::debug!(target: LATENCY, event_type = %ty, "latency: file event");
    Instant::now()
}
