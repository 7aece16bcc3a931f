//! Fan-out: one read per change for every stream at the head of a store (decisions/fanout.md).
//!
//! A stream that has caught up asks [`Fanout::next`] instead of reading on its own. The hub
//! reads the store's new rows once per change, unfiltered, before it wakes the streams
//! ([`Fanout::read_ahead`]); failing that, the first stream to ask reads them
//! ([`Engine::read_shared`], on the blocking pool) while the others wait for that read (one
//! async lock per store, so reads do not pile up). A stream whose read is already kept finds
//! it under a plain lock held for the lookup alone, so a thousand streams woken by one commit
//! do not pass one by one through the async lock (each hand-over a task wake-up), and the
//! streams of one connection queue their frames close enough together to share a write.
//! Each takes its own events from it in memory ([`Shared::picks_for`]), each event encoded
//! to JSON once for all of them ([`SharedRead::encoded`]). The last [`KEPT_READS`] reads are
//! kept, so a stream a few reads behind (a slow writer) still takes from memory; one further
//! behind gets `None` and drains on its own with `Engine::next` until it is back at the head.
//! The streams of one socket connection parked at the head are served together by that
//! connection's task (`crate::heads`), so a slow connection holds back only itself.
//!
//! Core calls of streams go through [`read_permit`]: at most [`READERS`] blocking threads read
//! for streams at once, whatever the number of streams (each store has one lock anyway).

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock, PoisonError};

use tidings_core::{
    Cursor, Engine, EventType, Occurrence, Picks, Shared, StoreError, Subscription,
};
use tokio::sync::{Mutex, Semaphore, SemaphorePermit, watch};

/// Reads kept per store for streams a little behind.
pub const KEPT_READS: usize = 16;

/// Blocking threads reading for streams at once (shared reads and catch-up drains together).
pub const READERS: usize = 4;

static READ_PERMITS: Semaphore = Semaphore::const_new(READERS);

/// A place among the [`READERS`]: hold it across one core call of a stream.
pub async fn read_permit() -> SemaphorePermit<'static> {
    READ_PERMITS
        .acquire()
        .await
        .expect("the read semaphore is never closed")
}

/// The shared reads of both stores.
pub struct Fanout {
    engine: Arc<Engine>,
    stores: [Store; EventType::COUNT],
}

/// One store's reads kept, and the lock a new read is made under.
#[derive(Default)]
struct Store {
    /// Held only to look up or keep a read, never across an await.
    kept: std::sync::Mutex<Reads>,
    /// Held across a new read, so one stream reads while the others wait for it.
    reading: Mutex<()>,
}

impl Store {
    fn kept(&self) -> std::sync::MutexGuard<'_, Reads> {
        // A panic while the list was held leaves it whole (a push or a pop), so read on.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One store's recent reads, newest last, each with the hub generation it began at.
#[derive(Default)]
struct Reads {
    kept: VecDeque<(u64, Arc<SharedRead>)>,
}

impl Reads {
    fn keep(&mut self, generation: u64, read: Arc<SharedRead>) {
        if self.kept.len() == KEPT_READS {
            self.kept.pop_front();
        }
        self.kept.push_back((generation, read));
    }
}

/// One shared read and the JSON of its events, each encoded by the first stream that writes
/// it and reused by every other.
pub struct SharedRead {
    shared: Shared,
    /// `None`: the event could not be encoded (each stream then reports it as ever).
    encoded: Vec<OnceLock<Option<Arc<[u8]>>>>,
}

impl SharedRead {
    fn new(shared: Shared) -> SharedRead {
        let encoded = shared.events().iter().map(|_| OnceLock::new()).collect();
        SharedRead { shared, encoded }
    }

    /// Event `index` of the read.
    pub fn event(&self, index: usize) -> &Occurrence {
        &self.shared.events()[index]
    }

    /// `sub`'s events after `at` in this read (`None`: the read does not cover `at`).
    pub fn picks_for(&self, sub: &Subscription, at: Cursor) -> Option<Picks> {
        self.shared.picks_for(sub, at)
    }

    /// Event `index` as JSON (the `Occurrence` object), encoded once for every stream.
    pub fn encoded(&self, index: usize) -> Result<Arc<[u8]>, serde_json::Error> {
        let cached = self.encoded[index]
            .get_or_init(|| serde_json::to_vec(self.event(index)).ok().map(Arc::from));
        match cached {
            Some(json) => Ok(Arc::clone(json)),
            // Encode again for the error itself (it cannot be kept: not `Clone`).
            None => serde_json::to_vec(self.event(index)).map(Arc::from),
        }
    }
}

impl Fanout {
    /// Shared reads over `engine`'s stores.
    pub fn new(engine: Arc<Engine>) -> Fanout {
        Fanout {
            engine,
            stores: Default::default(),
        }
    }

    /// Read ahead, on the hub's blocking thread, the moment it finds that `ty`'s store changed
    /// and before it wakes the streams with `generation`: the new rows after the newest read
    /// kept, where the streams at the head wait. They then find the read done when they wake,
    /// instead of one of them going to the blocking pool for it (two thread hops and a colder
    /// cache, on a single stream's latency). Nothing is read when no read is kept (no stream
    /// has reached the head) or the newest one left rows for a next read.
    pub fn read_ahead(&self, ty: EventType, generation: u64) {
        let store = &self.stores[ty.index()];
        let _reading = store.reading.blocking_lock();
        let at = {
            let reads = store.kept();
            let Some((_, newest)) = reads.kept.back() else {
                return;
            };
            if newest.shared.has_more() || newest.shared.truncated() {
                return;
            }
            newest.shared.cursor()
        };
        let began = std::time::Instant::now();
        match self.engine.read_shared(ty, at) {
            Ok(read) => {
                tracing::debug!(
                    target: crate::hub::LATENCY,
                    event_type = %ty,
                    generation,
                    rows = read.events().len(),
                    read_us = u64::try_from(began.elapsed().as_micros()).unwrap_or(u64::MAX),
                    "latency: read ahead"
                );
                store
                    .kept()
                    .keep(generation, Arc::new(SharedRead::new(read)));
            }
            // The streams read again when they wake, and report the failure as they do.
            Err(e) => tracing::debug!(event_type = %ty, reason = e.reason(), "read-ahead failed"),
        }
    }

    /// The newest read kept of `ty`'s store that covers `at` and began at or after the hub's
    /// generation `seen`, if one is (looked up under the plain lock alone).
    pub fn kept(&self, ty: EventType, at: Cursor, seen: u64) -> Option<Arc<SharedRead>> {
        self.stores[ty.index()]
            .kept()
            .kept
            .iter()
            .rev()
            .find(|(generation, r)| *generation >= seen && r.shared.covers(at))
            .map(|(_, r)| Arc::clone(r))
    }

    /// The next batch for `sub` after `at`, from a read that began at or after the hub's
    /// generation `seen` (so it sees the change the stream woke for). `wake` is the stream's
    /// own receiver, sampled for the generation a new read begins at.
    ///
    /// `None`: `at` is behind every read kept, or the read could not run (a panic in core,
    /// logged); the stream reads on its own. `Some(Err)`: the store failed.
    pub async fn next(
        &self,
        sub: &Subscription,
        at: Cursor,
        seen: u64,
        wake: &watch::Receiver<u64>,
    ) -> Option<Result<(Arc<SharedRead>, Picks), StoreError>> {
        let ty = sub.event_type();
        let store = &self.stores[ty.index()];
        let covering = || self.kept(ty, at, seen);
        // Matched outside any lock: a thousand streams match one read side by side.
        let matched = |read: Arc<SharedRead>| {
            let picks = read.picks_for(sub, at)?;
            Some(Ok((read, picks)))
        };
        if let Some(read) = covering() {
            return matched(read);
        }
        let reading = store.reading.lock().await;
        // Another stream may have made the read while this one waited for the lock.
        if let Some(read) = covering() {
            drop(reading);
            return matched(read);
        }
        // Behind every read kept: drain on its own, rather than read old rows for everyone.
        let behind = store.kept().kept.front().is_some_and(|(_, oldest)| {
            oldest.shared.cursor().is_in(at.identity) && at.rowid < oldest.shared.after().rowid
        });
        if behind {
            return None;
        }
        let generation = *wake.borrow();
        let engine = Arc::clone(&self.engine);
        let permit = read_permit().await;
        let read = tokio::task::spawn_blocking(move || engine.read_shared(ty, at)).await;
        drop(permit);
        let read = match read {
            Ok(Ok(read)) => Arc::new(SharedRead::new(read)),
            Ok(Err(e)) => return Some(Err(e)),
            Err(e) => {
                tracing::warn!(error = %e, "shared read failed");
                return None;
            }
        };
        store.kept().keep(generation, Arc::clone(&read));
        drop(reading);
        matched(read)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use tidings_core::{Limits, StorePaths};
    use tidings_fixtures::{Addr, MacHome, MailFixture, MailProfile, NewMail};

    /// A mail store with an INBOX and an engine on it (the heads' tests use it too).
    pub(crate) struct World {
        _dir: tempfile::TempDir,
        mail: MailFixture,
        inbox: i64,
        pub(crate) engine: Arc<Engine>,
    }

    impl World {
        pub(crate) fn new() -> World {
            let dir = tempfile::tempdir().unwrap();
            let home = MacHome::new(dir.path());
            let (mail, inbox) =
                MailFixture::create_with_inbox(&home, MailProfile::V10Macos26).unwrap();
            let engine = Engine::new(&StorePaths::for_home(dir.path()), Limits::default());
            World {
                _dir: dir,
                mail,
                inbox,
                engine: Arc::new(engine),
            }
        }

        /// Appends one mail from ana@example.com; its ROWID.
        pub(crate) fn send(&mut self, subject: &str) -> i64 {
            self.mail
                .append(&NewMail::new(
                    Addr::new("ana@example.com", "Ana"),
                    subject,
                    self.inbox,
                    Some(1_700_000_000),
                ))
                .unwrap()
        }
    }

    #[test]
    fn a_read_ahead_reads_on_from_the_newest_read_and_only_once_one_is_kept() {
        let mut world = World::new();
        world.send("before");
        let engine = Arc::clone(&world.engine);
        let ty = EventType::MailReceived;
        let fanout = Fanout::new(Arc::clone(&engine));
        // No stream has reached the head yet: nothing to read on from.
        fanout.read_ahead(ty, 1);
        assert!(fanout.stores[ty.index()].kept().kept.is_empty());

        let stamp = engine.stamp(ty).unwrap();
        let head = Cursor {
            identity: stamp.identity,
            rowid: stamp.head,
        };
        let first = SharedRead::new(engine.read_shared(ty, head).unwrap());
        fanout.stores[ty.index()].kept().keep(1, Arc::new(first));
        let new = world.send("after");
        fanout.read_ahead(ty, 2);
        let reads = fanout.stores[ty.index()].kept();
        let (generation, newest) = reads.kept.back().unwrap();
        assert_eq!(reads.kept.len(), 2);
        assert_eq!(
            *generation, 2,
            "tagged with the generation the streams wake with"
        );
        assert_eq!(newest.shared.after(), head);
        assert!(newest.shared.covers(head));
        assert_eq!(
            newest.event(0).cursor,
            Cursor {
                identity: head.identity,
                rowid: new
            }
            .to_string()
        );
    }

    #[test]
    fn each_event_of_a_read_is_encoded_once_for_every_stream() {
        let mut world = World::new();
        world.send("hello");
        let engine = &world.engine;
        let ty = EventType::MailReceived;
        let from = Cursor {
            identity: engine.stamp(ty).unwrap().identity,
            rowid: 0,
        };
        let read = SharedRead::new(engine.read_shared(ty, from).unwrap());
        let first = read.encoded(0).unwrap();
        // A second stream gets the very bytes the first one encoded, not an encoding of its own.
        assert!(Arc::ptr_eq(&first, &read.encoded(0).unwrap()));
        let event: serde_json::Value = serde_json::from_slice(&first).unwrap();
        assert_eq!(event, serde_json::to_value(read.event(0)).unwrap());
    }
}
