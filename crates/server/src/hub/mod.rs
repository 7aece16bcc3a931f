//! The hub: one `notify` watcher per store directory, a cheap change check per store, and
//! wake-ups for the streams on that store only (docs/architecture.md, "How an event travels").
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
//! With no stream on a store, nobody waits for its changes: checks are
//! [`IDLE_SPACING`](schedule::IDLE_SPACING) apart and the watcher's thread pauses as long after
//! each event, so a writer committing a thousand times a second costs the daemon a few wake-ups
//! a second, not several per commit.
//!
//! The parts: [`schedule`] (how closely a store is followed, how far apart idle checks are),
//! [`watcher`] (the `notify` watchers), and here the hub's API, the per-store task and the check.
//!
//! The `tidings::latency` target (debug) traces each change: file event, stamp changed (with
//! the time since the event), and, in the stream, rows read and frames written.

mod schedule;
mod watcher;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tidings_core::{Engine, EventType, FileIdentity, Stamp, StoreErrorKind, StorePaths};
use tokio::sync::{Notify, broadcast, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::sync::lock;
use schedule::{Kick, file_event, follow_pause};
use watcher::{DirWatch, Subscriptions};

pub use schedule::FOLLOW_FOR;

/// The `tracing` target of the latency trace: one line per step of a change, no personal data.
pub const LATENCY: &str = "tidings::latency";

/// What the last check of a store found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Health {
    Unchecked,
    Ok(Stamp),
    /// The store error's kind and its message.
    Failed(StoreErrorKind, String),
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

    /// The last check: `None` before the first, else Ok or the error's kind and message.
    pub fn health(&self, ty: EventType) -> Option<Result<(), (StoreErrorKind, String)>> {
        match &*lock(&self.store(ty).health) {
            Health::Ok(_) => Some(Ok(())),
            Health::Failed(kind, message) => Some(Err((*kind, message.clone()))),
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

    /// Take the stamp; on a difference, remember it and wake the store's streams. `event` is
    /// when the file event that led here came, if one did (for the latency trace).
    ///
    /// `fresh`: the first check after a file event. Then, while a stream waits, the check
    /// re-stamps on its blocking thread until the stamp differs from the last one, for up to
    /// [`SLOW_FOLLOW_UNTIL`](schedule::SLOW_FOLLOW_UNTIL) ([`follow_pause`]). A new good stamp
    /// while a stream waits is read ahead for the fan-out and woken from that thread
    /// (`read_ahead`).
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
            Ok((Err(e), woke)) => (Health::Failed(e.kind(), e.to_string()), woke),
            Err(e) => (
                Health::Failed(StoreErrorKind::Other, format!("store check failed: {e}")),
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
}

#[cfg(test)]
mod tests;
