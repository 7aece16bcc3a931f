//! The hub: one `notify` watcher per store directory, a cheap change check per store, and
//! wake-ups for the streams on that store only (design.md, "How an event travels").
//!
//! Each store has a task that sleeps until a file event for its db, `-wal` or `-shm` name (or
//! the slow safety tick), then asks the engine for the store's [`Stamp`] (file identity,
//! `data_version`, head ROWID). Only when the stamp differs does it bump the store's
//! generation, a `tokio::sync::watch` that every stream on the store waits on.
//!
//! A writer that holds its connection (Mail, Messages) raises its file events when it writes
//! the `-wal` frames, before the flush; the commit becomes visible later, through the
//! memory-mapped `-shm`, with no event of its own. So after an event the hub follows the store:
//! it re-checks on a backing-off schedule until the stamp has been still, with no new event,
//! for [`FOLLOW_FOR`] (docs/architecture.md, "The check schedule"). While a stream is live it
//! also checks every `live_check`; with no stream and no event, only the safety tick runs.
//!
//! With no stream on a store, nobody waits for its changes: checks are [`IDLE_SPACING`] apart
//! and the watcher's thread pauses as long after each event, so a writer committing a
//! thousand times a second costs the daemon a few wake-ups a second, not several per commit.
//!
//! The `tidings::latency` target (debug) traces each change: file event, stamp changed (with
//! the time since the event), and, in the stream, rows read and frames written.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tidings_core::{Engine, EventType, FileIdentity, Stamp, StorePaths};
use tokio::sync::{Notify, broadcast, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::sync::lock;

/// The `tracing` target of the latency trace: one line per step of a change, no personal data.
pub const LATENCY: &str = "tidings::latency";

/// While a stream waits on the store, the first check after a file event re-stamps on its
/// blocking thread every [`FAST_FOLLOW_PAUSE`] for up to [`FAST_FOLLOW_FOR`] until the stamp
/// differs (tokio's timers round a sleep up to the next whole millisecond). The event comes
/// when the writer writes its `-wal` frames, before the sync and before the commit is
/// published in the `-shm`; a `synchronous=FULL` writer (`SQLite`'s default, and how the bench
/// writes) publishes about 1 ms later here. Even steps find the commit within about 0.1 ms of
/// it becoming visible wherever in the window it lands; the growing steps used before (0.1 to
/// 0.6 ms) left a commit visible at 1.1 ms waiting up to 0.5 ms. The cost is a stamp (two
/// `stat`s and a cached query, about 15 µs) per step, only while streams wait and only until
/// the commit shows.
const FAST_FOLLOW_PAUSE: Duration = Duration::from_micros(50);
/// How long the first check after a file event re-stamps every [`FAST_FOLLOW_PAUSE`].
const FAST_FOLLOW_FOR: Duration = Duration::from_millis(2);
/// After [`FAST_FOLLOW_FOR`], the first check keeps re-stamping, every [`SLOW_FOLLOW_PAUSE`],
/// until this long after it began. A sync slower than 2 ms is common on a busy disk, and such a
/// commit used to fall to the follow schedule's millisecond timers: a flush made 5 or 10 ms
/// slower was found 2.2 to 4.2 ms after it became visible, now 0.6 ms (docs/benchmarks.md,
/// "Slow flush"). A check that finds nothing costs about 70 stamps, some 1 ms of CPU.
const SLOW_FOLLOW_UNTIL: Duration = Duration::from_millis(20);
/// The pause between re-stamps from [`FAST_FOLLOW_FOR`] to [`SLOW_FOLLOW_UNTIL`].
const SLOW_FOLLOW_PAUSE: Duration = Duration::from_micros(250);
/// With no stream waiting, checks (after file events or on the follow schedule) are at least
/// this far apart: nobody waits for them (the state's last change, the backfill guard's first
/// sighting and a rebuild notice can be this late), and a writer committing 1,000 times a
/// second then costs 20 stamps a second, not one per commit. While the hub waits out the
/// spacing, file events only leave the store's one stored permit: no thread is woken for
/// them. A stream subscribing ends the wait at once.
const IDLE_SPACING: Duration = Duration::from_millis(50);
/// The first re-check after an event or a change; each following gap doubles up to
/// [`FOLLOW_GAP_MAX`]. The early checks find a fast commit within milliseconds.
const FOLLOW_GAP_MIN: Duration = Duration::from_millis(1);
/// The longest gap between re-checks while following: a commit that becomes visible during the
/// window is found at most this late. A check is a stat and two tiny queries (microseconds).
const FOLLOW_GAP_MAX: Duration = Duration::from_millis(20);
/// How long the stamp must stay unchanged, with no new file event, before following stops. It
/// covers flushes well past a second; a slower commit falls to the live check or the tick.
pub const FOLLOW_FOR: Duration = Duration::from_secs(3);

/// What the last check of a store found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Health {
    Unchecked,
    Ok(Stamp),
    /// The store error's `reason()` and its message.
    Failed(&'static str, String),
}

struct Store {
    path: PathBuf,
    /// Bumped when the store changed (or failed differently); streams wait on it. Shared with
    /// the watcher callback, which asks whether any stream waits.
    wake: Arc<watch::Sender<u64>>,
    /// Set by the watcher callback (or a poke), with the time of the event.
    kick: Arc<Kick>,
    /// Set when a stream subscribes, so the task starts its live checks.
    subscribed: Notify,
    health: Mutex<Health>,
    /// When the stamp last changed from one good reading to another (ms since the epoch).
    last_change_ms: Mutex<Option<u64>>,
    /// The file identity of the last good reading, failures in between or not: a new one
    /// is a rebuild.
    last_identity: Mutex<Option<FileIdentity>>,
}

/// When a store's last file event came (set by the watcher callback, or by a poke) and when
/// the stamp read that found its last change began. A writer raises its file events as it
/// writes a commit's `-wal` frames, before the commit shows, so an event older than the read
/// that found a change was a write of that commit (or, rarely, of one right behind it, which
/// the follow schedule finds within its first steps): the check it leads to has nothing to
/// wait for. Without this, the events a commit raises after the first one each led to a
/// fresh check that re-stamped for the whole [`SLOW_FOLLOW_UNTIL`] in vain (docs/benchmarks.md).
#[derive(Default)]
struct Marks {
    event: Option<std::time::Instant>,
    change: Option<std::time::Instant>,
}

impl Marks {
    /// Whether a file event came that the last change found may not include.
    fn event_since_change(&self) -> bool {
        match (self.event, self.change) {
            (Some(event), Some(change)) => event > change,
            _ => true,
        }
    }
}

/// A store's file events: one stored permit coalesces a burst, and the marks keep when the
/// last one came.
#[derive(Default)]
struct Kick {
    notify: Notify,
    marks: Mutex<Marks>,
}

impl Kick {
    /// A file event came now: mark it, then wake the store's task.
    fn file_event(&self) {
        lock(&self.marks).event = Some(std::time::Instant::now());
        self.notify.notify_one();
    }
}

/// A directory's watcher and the (device, inode) of the directory it was installed on, so a
/// replaced directory is noticed and watched again.
type DirWatch = (RecommendedWatcher, Option<(u64, u64)>);

struct HubInner {
    engine: Arc<Engine>,
    stores: Vec<Store>,
    /// Installed watchers by directory, with the identity of the directory they watch.
    watchers: Mutex<HashMap<PathBuf, DirWatch>>,
    safety_tick: Duration,
    live_check: Duration,
    shutdown: CancellationToken,
    /// Bumped on every change of any store's health or stamp, for the `State` builder.
    changes: watch::Sender<u64>,
    /// A store was rebuilt: read good under one file, then under another.
    rebuilds: broadcast::Sender<EventType>,
    /// Bumped (and signalled) on every subscription, to end a watcher's idle pause at once.
    subscriptions: Arc<Subscriptions>,
    read_ahead: Option<ReadAhead>,
}

/// Called on the check's blocking thread when a store's stamp changed while streams wait on
/// it, with the generation the hub is about to wake them with: the fan-out reads the new rows
/// there ([`crate::fanout::Fanout::read_ahead`]).
pub type ReadAhead = Arc<dyn Fn(EventType, u64) + Send + Sync>;

/// A count of subscriptions and its condition variable: the watcher threads' idle pause waits
/// on it, so a stream that subscribes during a pause is not kept waiting for it.
#[derive(Default)]
struct Subscriptions {
    count: Mutex<u64>,
    signal: Condvar,
}

impl Subscriptions {
    fn bump(&self) {
        *lock(&self.count) += 1;
        self.signal.notify_all();
    }

    fn current(&self) -> u64 {
        *lock(&self.count)
    }

    /// Block the calling (watcher) thread for `pause`, or until a subscription after `seen`
    /// (a [`current`](Subscriptions::current) count) comes.
    fn pause(&self, seen: u64, pause: Duration) {
        let count = lock(&self.count);
        let _ = self
            .signal
            .wait_timeout_while(count, pause, |now| *now == seen);
    }
}

/// The store watchers and change checks; cheap to clone.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<HubInner>,
}

impl Hub {
    /// Start one task per store. Must be called inside a tokio runtime; the tasks end when
    /// `shutdown` is cancelled. `safety_tick` checks every store always; `live_check` checks a
    /// store while a stream waits on it; `read_ahead` is called on each change streams wait for.
    pub fn start(
        engine: Arc<Engine>,
        paths: &StorePaths,
        safety_tick: Duration,
        live_check: Duration,
        shutdown: CancellationToken,
        read_ahead: Option<ReadAhead>,
    ) -> Hub {
        let stores = EventType::ALL
            .into_iter()
            .map(|ty| Store {
                path: paths.database(ty).to_owned(),
                wake: Arc::new(watch::Sender::new(0)),
                kick: Arc::default(),
                subscribed: Notify::new(),
                health: Mutex::new(Health::Unchecked),
                last_change_ms: Mutex::new(None),
                last_identity: Mutex::new(None),
            })
            .collect();
        let hub = Hub {
            inner: Arc::new(HubInner {
                engine,
                stores,
                watchers: Mutex::new(HashMap::new()),
                safety_tick,
                live_check,
                shutdown,
                changes: watch::Sender::new(0),
                rebuilds: broadcast::Sender::new(8),
                subscriptions: Arc::default(),
                read_ahead,
            }),
        };
        for ty in EventType::ALL {
            let hub = hub.clone();
            tokio::spawn(async move { hub.run(ty).await });
        }
        hub
    }

    /// A receiver that changes whenever the store behind `ty` may hold something new.
    pub fn wake_receiver(&self, ty: EventType) -> watch::Receiver<u64> {
        let store = self.store(ty);
        let rx = store.wake.subscribe();
        store.subscribed.notify_one();
        self.inner.subscriptions.bump();
        rx
    }

    /// Check the store behind `ty` now, as if a file event had arrived.
    pub fn poke(&self, ty: EventType) {
        self.store(ty).kick.file_event();
    }

    /// The store file behind `ty`.
    pub fn store_path(&self, ty: EventType) -> &Path {
        &self.store(ty).path
    }

    /// The last check: `None` before the first, else Ok or the error's reason and message.
    pub fn health(&self, ty: EventType) -> Option<Result<(), (&'static str, String)>> {
        match &*lock(&self.store(ty).health) {
            Health::Ok(_) => Some(Ok(())),
            Health::Failed(reason, message) => Some(Err((reason, message.clone()))),
            Health::Unchecked => None,
        }
    }

    /// When the store last changed, as seen since start (ms since the Unix epoch).
    pub fn last_change_ms(&self, ty: EventType) -> Option<u64> {
        *lock(&self.store(ty).last_change_ms)
    }

    /// A receiver that changes whenever any store's health or stamp does (not a wake: it
    /// starts no live checks).
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// Told of each store rebuilt (a new file read good after an old one).
    pub fn rebuilds(&self) -> broadcast::Receiver<EventType> {
        self.inner.rebuilds.subscribe()
    }

    fn store(&self, ty: EventType) -> &Store {
        &self.inner.stores[ty.index()]
    }

    async fn run(&self, ty: EventType) {
        let store = self.store(ty);
        let mut tick = tokio::time::interval(self.inner.safety_tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            // Live checks only while something waits on the store: idle means no polling.
            let live = store.wake.receiver_count() > 0;
            tokio::select! {
                () = self.inner.shutdown.cancelled() => break,
                () = store.kick.notify.notified() => {
                    let at = file_event(ty);
                    self.follow(ty, Some(at)).await;
                }
                // The first tick fires at once: it installs the watch and takes the first stamp.
                _ = tick.tick() => {
                    self.ensure_watch(ty);
                    let changed = self.check(ty, None, false).await;
                    // A failing store is retried on every tick: streams send an error only once
                    // per distinct failure, and resume when a retry succeeds.
                    if !changed && matches!(&*lock(&store.health), Health::Failed(..)) {
                        store.wake.send_modify(|g| *g = g.wrapping_add(1));
                    }
                }
                // A stream subscribed: loop to start the live checks.
                () = store.subscribed.notified() => {}
                () = tokio::time::sleep(self.inner.live_check), if live => {
                    if self.check(ty, None, false).await {
                        self.follow(ty, None).await;
                    }
                }
            }
        }
        lock(&self.inner.watchers).clear();
    }

    /// Check now, then re-check on a backing-off schedule until the stamp has been unchanged,
    /// with no new file event, for [`FOLLOW_FOR`]. A file event or a change starts the
    /// schedule over: a newer commit may still be becoming visible. `event` is when the last
    /// file event came, for the latency trace.
    ///
    /// A file event is checked at once (the leading edge), with no gathering window: the
    /// events that come while that check runs leave one stored permit, so a burst costs one
    /// more check, not one per event. A file event while the schedule is waiting is checked at
    /// once too; it never waits for the schedule's next step.
    async fn follow(&self, ty: EventType, mut event: Option<Instant>) {
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

    /// Take the stamp; on a difference, remember it and wake the store's streams. `event` is
    /// when the file event that led here came, if one did (for the latency trace).
    ///
    /// `fresh`: the first check after a file event. Then, while a stream waits, the check
    /// re-stamps on its blocking thread until the stamp differs from the last one, for up to
    /// [`SLOW_FOLLOW_UNTIL`] ([`follow_pause`]). A new good stamp while a stream waits
    /// is read ahead for the fan-out and woken from that thread (`read_ahead`).
    async fn check(&self, ty: EventType, event: Option<Instant>, fresh: bool) -> bool {
        let engine = self.inner.engine.clone();
        let store = self.store(ty);
        let previous = match &*lock(&store.health) {
            Health::Ok(stamp) => Some(*stamp),
            _ => None,
        };
        let waited = store.wake.receiver_count() > 0;
        let follow = fresh && waited && lock(&store.kick.marks).event_since_change();
        let kick = Arc::clone(&store.kick);
        let read_ahead = self.inner.read_ahead.clone().filter(|_| waited);
        let wake = Arc::clone(&store.wake);
        let stamp = move || {
            let began = std::time::Instant::now();
            let mut read_at = began;
            let mut now = engine.stamp(ty);
            if follow && let Some(last) = previous {
                while matches!(&now, Ok(s) if *s == last)
                    && let Some(pause) = follow_pause(began.elapsed())
                {
                    std::thread::sleep(pause);
                    read_at = std::time::Instant::now();
                    now = engine.stamp(ty);
                }
            }
            if matches!((&now, previous), (Ok(now), Some(last)) if *now != last) {
                lock(&kick.marks).change = Some(read_at);
            }
            // A new good stamp while streams wait: read the new rows here, on this warm
            // thread, and wake the streams from here with the generation that follows (only
            // this store's task bumps it, and it is waiting for this thread), rather than
            // after a hop back to the hub's task.
            let mut woke = false;
            if let (Some(read_ahead), Ok(now), Some(last)) = (&read_ahead, &now, previous)
                && *now != last
            {
                read_ahead(ty, wake.borrow().wrapping_add(1));
                wake.send_modify(|g| *g = g.wrapping_add(1));
                woke = true;
            }
            (now, woke)
        };
        let (health, woke) = match tokio::task::spawn_blocking(stamp).await {
            Ok((Ok(stamp), woke)) => (Health::Ok(stamp), woke),
            Ok((Err(e), woke)) => (Health::Failed(e.reason(), e.to_string()), woke),
            Err(e) => (
                Health::Failed("store_error", format!("store check failed: {e}")),
                false,
            ),
        };
        if let Health::Ok(stamp) = &health {
            let previous = lock(&store.last_identity).replace(stamp.identity);
            if previous.is_some_and(|p| p != stamp.identity) {
                tracing::info!(event_type = %ty, "store rebuilt");
                let _ = self.inner.rebuilds.send(ty);
            }
        }
        let changed = {
            let mut last = lock(&store.health);
            let changed = *last != health;
            if changed {
                match (&*last, &health) {
                    (Health::Ok(_) | Health::Unchecked, Health::Failed(_, e)) => {
                        tracing::warn!(event_type = %ty, error = %e, "store check failed");
                    }
                    (Health::Failed(..), Health::Ok(_)) => {
                        tracing::info!(event_type = %ty, "store readable again");
                    }
                    _ => {}
                }
            }
            if changed && matches!((&*last, &health), (Health::Ok(_), Health::Ok(_))) {
                *lock(&store.last_change_ms) = Some(crate::state::now_ms());
            }
            *last = health;
            changed
        };
        if changed {
            self.inner.changes.send_modify(|g| *g = g.wrapping_add(1));
            if !woke {
                store.wake.send_modify(|g| *g = g.wrapping_add(1));
            }
            tracing::debug!(
                target: LATENCY,
                event_type = %ty,
                generation = *store.wake.borrow(),
                since_event_us = event.map(|at| u64::try_from(at.elapsed().as_micros()).unwrap_or(u64::MAX)),
                "latency: stamp changed"
            );
        }
        changed
    }

    /// Watch the store's directory if it is not watched yet, or if it was replaced. A missing
    /// directory is left to the next tick.
    fn ensure_watch(&self, ty: EventType) {
        let Some(dir) = self.store(ty).path.parent().map(Path::to_owned) else {
            return;
        };
        let identity = dir_identity(&dir);
        let mut watchers = lock(&self.inner.watchers);
        if let Some((_, watched)) = watchers.get(&dir)
            && *watched == identity
            && identity.is_some()
        {
            return;
        }
        watchers.remove(&dir);
        if identity.is_none() {
            return;
        }
        let targets: Vec<Target> = self
            .inner
            .stores
            .iter()
            .filter(|s| s.path.parent() == Some(dir.as_path()))
            .filter_map(|s| {
                Some(Target {
                    names: store_names(&s.path)?,
                    kick: s.kick.clone(),
                    wake: s.wake.clone(),
                })
            })
            .collect();
        let subscriptions = self.inner.subscriptions.clone();
        let handler = move |res: notify::Result<notify::Event>| {
            let Ok(event) = res else { return };
            // Read before the receiver counts: a stream subscribing after them ends the pause.
            let seen = subscriptions.current();
            let mut kicked = false;
            for path in &event.paths {
                let Some(name) = path.file_name() else {
                    continue;
                };
                for target in &targets {
                    if target.names.iter().any(|n| n == name) {
                        target.kick.file_event();
                        kicked = true;
                    }
                }
            }
            // Nobody waits on these stores: hold this (the watcher's own) thread for the idle
            // spacing, so the events of a burst queue up in the kernel, where identical ones
            // merge, and are read in one wake-up, instead of waking a thread per write. The
            // hub checks an idle store no more often anyway (`IDLE_SPACING`).
            if kicked && targets.iter().all(|t| t.wake.receiver_count() == 0) {
                subscriptions.pause(seen, IDLE_SPACING);
            }
        };
        let watcher = notify::recommended_watcher(handler).and_then(|mut w| {
            w.watch(&dir, RecursiveMode::NonRecursive)?;
            Ok(w)
        });
        match watcher {
            Ok(w) => {
                tracing::debug!(dir = %dir.display(), "watching store directory");
                watchers.insert(dir, (w, identity));
            }
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot watch store directory; relying on the safety tick");
            }
        }
    }
}

/// What a directory's watcher callback knows of one store in the directory.
struct Target {
    /// The db, `-wal` and `-shm` names.
    names: Vec<OsString>,
    kick: Arc<Kick>,
    /// Whether a stream waits on the store (its receiver count).
    wake: Arc<watch::Sender<u64>>,
}

/// The pause before the next re-stamp of a check that follows a file event, `elapsed` after
/// the check began; `None` once it has followed for [`SLOW_FOLLOW_UNTIL`].
fn follow_pause(elapsed: Duration) -> Option<Duration> {
    if elapsed < FAST_FOLLOW_FOR {
        Some(FAST_FOLLOW_PAUSE)
    } else if elapsed < SLOW_FOLLOW_UNTIL {
        Some(SLOW_FOLLOW_PAUSE)
    } else {
        None
    }
}

/// A file event arrived: trace it and return when it came, for the latency trace.
fn file_event(ty: EventType) -> Instant {
    tracing::debug!(target: LATENCY, event_type = %ty, "latency: file event");
    Instant::now()
}

/// The names whose events matter for the store at `db`: the db, its `-wal` and its `-shm`.
fn store_names(db: &Path) -> Option<Vec<OsString>> {
    let name = db.file_name()?;
    Some(
        ["", "-wal", "-shm"]
            .into_iter()
            .map(|suffix| {
                let mut n = name.to_owned();
                n.push(suffix);
                n
            })
            .collect(),
    )
}

fn dir_identity(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir).ok()?;
    meta.is_dir().then(|| (meta.dev(), meta.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ok`, the last check's error message, or `not checked yet`.
    fn described(hub: &Hub, ty: EventType) -> String {
        match hub.health(ty) {
            Some(Ok(())) => "ok".to_owned(),
            Some(Err((_, message))) => message,
            None => "not checked yet".to_owned(),
        }
    }
    use tidings_core::Limits;
    use tidings_fixtures::{Addr, MacHome, MailFixture, MailProfile, NewMail};

    /// A hub on `paths` with an hour-long safety tick (so only file events and the live check
    /// can wake a store within a test) and the given live check.
    fn start_hub(paths: &StorePaths, live_check: Duration) -> (Hub, CancellationToken) {
        let engine = Arc::new(Engine::new(paths, Limits::default()));
        let shutdown = CancellationToken::new();
        let hub = Hub::start(
            engine,
            paths,
            Duration::from_secs(3600),
            live_check,
            shutdown.clone(),
            None,
        );
        (hub, shutdown)
    }

    #[test]
    fn only_an_event_newer_than_the_read_that_found_the_last_change_is_followed_closely() {
        let t0 = std::time::Instant::now();
        let later = t0 + Duration::from_millis(1);
        let marks = |event, change| Marks { event, change };
        assert!(
            marks(Some(t0), None).event_since_change(),
            "no change found yet"
        );
        assert!(
            marks(None, None).event_since_change(),
            "a check asked for with no event"
        );
        assert!(
            !marks(Some(t0), Some(later)).event_since_change(),
            "a write of the commit already found"
        );
        assert!(
            marks(Some(later), Some(t0)).event_since_change(),
            "a new write"
        );
    }

    #[test]
    fn only_the_db_wal_and_shm_names_count() {
        let names = store_names(Path::new("/x/Envelope Index")).unwrap();
        assert_eq!(
            names,
            vec![
                OsString::from("Envelope Index"),
                OsString::from("Envelope Index-wal"),
                OsString::from("Envelope Index-shm"),
            ]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_append_wakes_the_store_and_a_rebuild_too() {
        let dir = tempfile::tempdir().unwrap();
        let home = MacHome::new(dir.path());
        let (mut mail, inbox) =
            MailFixture::create_with_inbox(&home, MailProfile::V10Macos26).unwrap();
        let paths = StorePaths::for_home(dir.path());
        // A long tick: only file events can wake the store within the test's timeout.
        let (hub, shutdown) = start_hub(&paths, Duration::from_secs(3600));
        let mut rx = hub.wake_receiver(EventType::MailReceived);
        // The first tick takes the first stamp.
        tokio::time::timeout(Duration::from_secs(5), rx.changed())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(described(&hub, EventType::MailReceived), "ok");
        mail.append(&NewMail::new(
            Addr::new("ana@example.com", "Ana"),
            "hello",
            inbox,
            Some(1_700_000_000),
        ))
        .unwrap();
        tokio::time::timeout(Duration::from_secs(5), rx.changed())
            .await
            .expect("an append wakes the store")
            .unwrap();
        let _mail = mail.rebuild(&home).unwrap();
        tokio::time::timeout(Duration::from_secs(5), rx.changed())
            .await
            .expect("a rebuild wakes the store")
            .unwrap();
        shutdown.cancel();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_idle_burst_is_seen_to_its_end_and_a_stream_after_it_is_woken() {
        let dir = tempfile::tempdir().unwrap();
        let home = MacHome::new(dir.path());
        let (mut mail, inbox) =
            MailFixture::create_with_inbox(&home, MailProfile::V10Macos26).unwrap();
        let paths = StorePaths::for_home(dir.path());
        let (hub, shutdown) = start_hub(&paths, Duration::from_secs(3600));
        let ty = EventType::MailReceived;
        let append = |mail: &mut MailFixture, n: usize| {
            mail.append(&NewMail::new(
                Addr::new("ana@example.com", "Ana"),
                &format!("hello {n}"),
                inbox,
                Some(1_700_000_000),
            ))
            .unwrap();
        };
        // No stream: the hub paces its checks and its watcher, and still sees the last commit
        // of a burst (a paced check must not drop the change that came during its pause).
        let mut changes = hub.changes();
        while hub.last_change_ms(ty).is_none() && hub.health(ty).is_none() {
            changes.changed().await.unwrap();
        }
        let before = hub.last_change_ms(ty);
        for n in 0..50 {
            append(&mut mail, n);
        }
        let head: i64 = mail
            .connection()
            .query_row("SELECT max(ROWID) FROM messages", [], |r| r.get(0))
            .unwrap();
        let engine_head = || match &*lock(&hub.store(ty).health) {
            Health::Ok(stamp) => stamp.head,
            _ => 0,
        };
        let seen = async {
            while engine_head() != head {
                changes.changed().await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(10), seen)
            .await
            .expect("the burst's last commit is seen with no stream");
        assert_ne!(hub.last_change_ms(ty), before);
        // A stream subscribing now is woken by the next commit, pause or not.
        let mut rx = hub.wake_receiver(ty);
        rx.borrow_and_update();
        append(&mut mail, 50);
        tokio::time::timeout(Duration::from_secs(5), rx.changed())
            .await
            .expect("a commit after subscribing wakes the stream")
            .unwrap();
        shutdown.cancel();
    }

    #[tokio::test]
    async fn a_missing_store_is_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let paths = StorePaths::for_home(dir.path());
        let (hub, shutdown) = start_hub(&paths, Duration::from_secs(3600));
        let mut rx = hub.wake_receiver(EventType::MessagesReceived);
        tokio::time::timeout(Duration::from_secs(5), rx.changed())
            .await
            .unwrap()
            .unwrap();
        assert!(described(&hub, EventType::MessagesReceived).contains("not found"));
        shutdown.cancel();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_live_stream_finds_a_change_that_raised_no_file_event() {
        // The store's directory does not exist when the hub starts, so no watcher is installed
        // until the next safety tick (an hour away): only the live check can find the store.
        let dir = tempfile::tempdir().unwrap();
        let paths = StorePaths::for_home(dir.path());
        let (hub, shutdown) = start_hub(&paths, Duration::from_millis(50));
        let mut rx = hub.wake_receiver(EventType::MailReceived);
        tokio::time::timeout(Duration::from_secs(5), rx.changed())
            .await
            .unwrap()
            .unwrap();
        assert!(described(&hub, EventType::MailReceived).contains("not found"));
        let home = MacHome::new(dir.path());
        let _mail = MailFixture::create(&home, MailProfile::V10Macos26).unwrap();
        // A check can land while the store is half built; the next one finds it whole.
        let found = async {
            while described(&hub, EventType::MailReceived) != "ok" {
                rx.changed().await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(10), found)
            .await
            .expect("the live check finds the new store");
        shutdown.cancel();
    }
}
