//! Delivery at the head, per socket connection: one task serves every stream of a connection
//! that has caught up on a store (decisions/fanout.md, "Served per connection at the head").
//!
//! A stream at the head of a store on a socket connection parks here ([`Head::park`]) and
//! sleeps until something only it can do: a heartbeat, a settings change, a revocation,
//! cancellation, or a hand-back. On each change of the store the connection's one task takes
//! each parked stream's events from the fan-out's shared read, joins the frames of all of
//! them and queues them on the connection's writer as one item (one `send`), then moves each
//! stream's cursor past what went out. A commit fanned out to a thousand streams on a hundred
//! connections so wakes a hundred tasks, not a thousand, and makes a hundred writes.
//!
//! Whatever the task cannot finish alone it hands back untouched, and the stream then does
//! what it always did: a read behind every read kept or failed, one that has more or found
//! the store replaced, an event that does not encode, a write that failed (the stream ends).
//! A stream takes itself back ([`Ticket::take_back`]) under the lock the task holds across a
//! write, so what the stream sends next (a heartbeat with its cursor, `terminated`) comes
//! after every event the task queued for it and never before one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tidings_core::{Cursor, EventType, Occurrence, Pick, Settings, Subscription};
use tidings_protocol::event::event_frame;
use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::fanout::{Fanout, SharedRead};
use crate::hub::LATENCY;
use crate::sync::lock;

/// A connection's heads, one per store, each made when its first stream parks.
#[derive(Default)]
pub struct Heads {
    stores: [OnceLock<Arc<Head>>; EventType::COUNT],
}

impl Heads {
    /// The head of `ty`'s store, made with `make` the first time.
    pub fn get(&self, ty: EventType, make: impl FnOnce() -> Head) -> Arc<Head> {
        Arc::clone(self.stores[ty.index()].get_or_init(|| Arc::new(make())))
    }
}

/// Counts one event written for a parked stream (the app's delivery counts and activity),
/// telling no one yet.
pub type Delivered = Box<dyn Fn(&Occurrence) + Send + Sync>;

/// Tells the app's model of the deliveries a write counted, once per write.
pub type Signal = Box<dyn Fn() + Send + Sync>;

/// One connection's streams at the head of one store, and the task that serves them.
pub struct Head {
    ty: EventType,
    fanout: Arc<Fanout>,
    /// The connection's revocation: nothing more is written once it is cancelled.
    revoked: CancellationToken,
    /// The connection's writer queue (weak: it must not keep the writer alive).
    queue: mpsc::WeakSender<Vec<u8>>,
    /// How long one write may wait for the queue.
    deadline: Duration,
    signal: Signal,
    parking: Mutex<Parking>,
    /// Held across a write, and by a stream taking itself back.
    order: tokio::sync::Mutex<()>,
    /// Run a pass now: a stream parked behind the store's generation, or the last one left.
    kick: Notify,
}

#[derive(Default)]
struct Parking {
    streams: Vec<Arc<Parked>>,
    /// Whether the task runs; it ends when no stream is parked, so that it holds no wake
    /// receiver (the hub follows a store more closely while any is held).
    running: bool,
}

/// What a stream leaves here while parked.
pub struct Stream {
    /// The subscription, as revalidated last.
    pub sub: Subscription,
    /// Everything up to here was delivered: moved by each write.
    pub cursor: Cursor,
    /// The stream's request id as JSON, for each frame's `_meta`.
    pub id_json: String,
    /// Called for each event written.
    pub delivered: Delivered,
    /// The stream's view of the settings: a change it has not seen yet hands it back, so it
    /// revalidates before anything more is written under the old subscription.
    pub settings: watch::Receiver<Arc<Settings>>,
}

/// Why the task handed a stream back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Back {
    /// Read and write on its own from its cursor: the task could not finish this step.
    Drain,
    /// A write failed (the client is gone or read nothing for the deadline): end.
    Closed,
}

struct Parked {
    stream: Mutex<Stream>,
    /// Set by the stream as it starts to take itself back: a pass not yet at it skips it.
    leaving: AtomicBool,
    /// Set once, with `back` signalled, when the task hands the stream back.
    returned: Mutex<Option<Back>>,
    back: Notify,
}

impl Parked {
    fn hand_back(&self, why: Back) {
        lock(&self.returned).get_or_insert(why);
        self.back.notify_one();
    }
}

/// A parked stream's claim: wait on it, then take the stream back. Dropped without that, it
/// still leaves the head.
pub struct Ticket {
    head: Arc<Head>,
    parked: Arc<Parked>,
}

impl Ticket {
    /// Resolves when the task hands the stream back.
    pub async fn handed_back(&self) {
        self.parked.back.notified().await;
    }

    /// Leave the head, after any write in progress: the stream's cursor, and why it was
    /// handed back if it was.
    pub async fn take_back(self) -> (Cursor, Option<Back>) {
        self.parked.leaving.store(true, Ordering::Release);
        let _order = self.head.order.lock().await;
        self.head.leave(&self.parked);
        let cursor = lock(&self.parked.stream).cursor;
        (cursor, *lock(&self.parked.returned))
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.head.leave(&self.parked);
    }
}

impl Head {
    /// The head of `ty`'s store on a connection, writing to its `queue` within `deadline`,
    /// from `fanout`'s reads, until the connection is `revoked`; `signal` after each write
    /// that delivered something.
    pub fn new(
        ty: EventType,
        fanout: Arc<Fanout>,
        revoked: CancellationToken,
        queue: mpsc::WeakSender<Vec<u8>>,
        deadline: Duration,
        signal: Signal,
    ) -> Head {
        Head {
            ty,
            fanout,
            revoked,
            queue,
            deadline,
            signal,
            parking: Mutex::default(),
            order: tokio::sync::Mutex::new(()),
            kick: Notify::new(),
        }
    }

    /// Park `stream`, whose last read began at the store's generation `seen` (`wake` is its
    /// receiver of the store's wake-ups). Must be called inside a tokio runtime.
    pub fn park(
        self: &Arc<Self>,
        stream: Stream,
        wake: &watch::Receiver<u64>,
        seen: u64,
    ) -> Ticket {
        let parked = Arc::new(Parked {
            stream: Mutex::new(stream),
            leaving: AtomicBool::new(false),
            returned: Mutex::new(None),
            back: Notify::new(),
        });
        let start = {
            let mut parking = lock(&self.parking);
            parking.streams.push(Arc::clone(&parked));
            !std::mem::replace(&mut parking.running, true)
        };
        if start {
            tokio::spawn(Arc::clone(self).run(wake.clone()));
        }
        // A change after the stream's last read: serve it now (after the push, so a pass
        // that begins from here on sees the stream).
        if *wake.borrow() != seen {
            self.kick.notify_one();
        }
        Ticket {
            head: Arc::clone(self),
            parked,
        }
    }

    fn leave(&self, parked: &Arc<Parked>) {
        let mut parking = lock(&self.parking);
        let before = parking.streams.len();
        parking.streams.retain(|p| !Arc::ptr_eq(p, parked));
        if before != parking.streams.len() && parking.streams.is_empty() {
            // Let the task see it is idle and end.
            self.kick.notify_one();
        }
    }

    /// Serve the parked streams on each change of the store, until none is parked.
    async fn run(self: Arc<Self>, mut wake: watch::Receiver<u64>) {
        loop {
            {
                let mut parking = lock(&self.parking);
                if parking.streams.is_empty() {
                    parking.running = false;
                    return;
                }
            }
            tokio::select! {
                biased;
                changed = wake.changed() => {
                    if changed.is_err() {
                        // The hub is gone (shutdown): the streams end, as they did when they
                        // waited on it themselves.
                        self.hand_back_all(Back::Closed);
                        continue;
                    }
                }
                () = self.kick.notified() => {}
            }
            self.pass(&mut wake).await;
        }
    }

    fn hand_back_all(&self, why: Back) {
        let streams = std::mem::take(&mut lock(&self.parking).streams);
        for parked in streams {
            parked.hand_back(why);
        }
    }

    /// One change: each parked stream's events from the shared read, all frames in one write.
    async fn pass(&self, wake: &mut watch::Receiver<u64>) {
        let _order = self.order.lock().await;
        let generation = *wake.borrow_and_update();
        if self.revoked.is_cancelled() {
            // Each stream ends with `terminated`, on its own.
            self.hand_back_all(Back::Drain);
            return;
        }
        let streams = lock(&self.parking).streams.clone();
        let mut frames = Vec::new();
        let mut written: Vec<Written> = Vec::new();
        for parked in streams {
            if parked.leaving.load(Ordering::Acquire) || lock(&parked.returned).is_some() {
                continue;
            }
            let at = lock(&parked.stream).cursor;
            let start = frames.len();
            if let Some(w) = self.serve(&parked, at, generation, wake, &mut frames).await {
                written.push(w);
            } else {
                frames.truncate(start);
                parked.hand_back(Back::Drain);
            }
        }
        if !frames.is_empty() && !self.write(frames).await {
            for w in written {
                w.parked.hand_back(Back::Closed);
            }
            return;
        }
        let mut count = 0;
        for w in written {
            let mut stream = lock(&w.parked.stream);
            stream.cursor = w.cursor;
            for pick in &w.picks {
                count += 1;
                (stream.delivered)(pick_event(&w.read, pick));
            }
        }
        if count > 0 {
            (self.signal)();
            tracing::debug!(target: LATENCY, event_type = %self.ty, generation, frames = count, "latency: frames written");
        }
    }

    /// Append `parked`'s frames after `at` to `frames`; `None` when the stream must take this
    /// step itself (see the module's comment).
    async fn serve(
        &self,
        parked: &Arc<Parked>,
        at: Cursor,
        generation: u64,
        wake: &watch::Receiver<u64>,
        frames: &mut Vec<u8>,
    ) -> Option<Written> {
        let kept = {
            let stream = lock(&parked.stream);
            if stream.settings.has_changed().unwrap_or(true) {
                return None;
            }
            self.fanout
                .kept(self.ty, at, generation)
                .and_then(|read| Some((read.picks_for(&stream.sub, at)?, read)))
        };
        let (picks, read) = if let Some(kept) = kept {
            kept
        } else {
            // Not in memory: the fan-out reads it (or finds it behind every read kept).
            let sub = lock(&parked.stream).sub.clone();
            let (read, picks) = self.fanout.next(&sub, at, generation, wake).await?.ok()?;
            (picks, read)
        };
        if picks.has_more || picks.truncated {
            return None;
        }
        let stream = lock(&parked.stream);
        for pick in &picks.picks {
            let json = match pick {
                Pick::Same(index) => read.encoded(*index).ok()?,
                Pick::Own(event) => Arc::from(serde_json::to_vec(event).ok()?),
            };
            if !event_frame(&json, &stream.id_json, frames) {
                return None;
            }
        }
        Some(Written {
            parked: Arc::clone(parked),
            cursor: picks.cursor,
            read,
            picks: picks.picks,
        })
    }

    /// Queue `frames` within the deadline; false when the client is gone or read nothing.
    async fn write(&self, frames: Vec<u8>) -> bool {
        let Some(queue) = self.queue.upgrade() else {
            return false;
        };
        if let Ok(sent) = tokio::time::timeout(self.deadline, queue.send(frames)).await {
            sent.is_ok()
        } else {
            tracing::warn!(
                deadline_s = self.deadline.as_secs(),
                "streams ended: their client has read nothing for the write deadline"
            );
            false
        }
    }
}

/// One stream's part of a pass's write.
struct Written {
    parked: Arc<Parked>,
    cursor: Cursor,
    read: Arc<SharedRead>,
    picks: Vec<Pick>,
}

fn pick_event<'a>(read: &'a SharedRead, pick: &'a Pick) -> &'a Occurrence {
    match pick {
        Pick::Same(index) => read.event(*index),
        Pick::Own(event) => event,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use serde_json::{Value, json};
    use tidings_protocol::meta::SUBSCRIPTION_ID;

    use super::*;

    const TY: EventType = EventType::MailReceived;

    /// A mail store whose streams have caught up (a read kept at its head), the store's
    /// wake-ups and settings as the hub and the daemon give them, and one connection's head
    /// writing to its writer queue.
    struct World {
        store: crate::fanout::tests::World,
        fanout: Arc<Fanout>,
        wake: watch::Sender<u64>,
        /// A stream's receiver of the wake-ups.
        rx: watch::Receiver<u64>,
        settings: watch::Sender<Arc<Settings>>,
        queue: Option<mpsc::Sender<Vec<u8>>>,
        written: mpsc::Receiver<Vec<u8>>,
        head: Arc<Head>,
        /// The store's head when the streams caught up.
        at: Cursor,
        /// The event ids counted as delivered, over all streams.
        counted: Arc<Mutex<Vec<String>>>,
        /// How often the head told the app's model of deliveries.
        signals: Arc<AtomicUsize>,
    }

    impl World {
        async fn new() -> World {
            let store = crate::fanout::tests::World::new();
            let fanout = Arc::new(Fanout::new(Arc::clone(&store.engine)));
            let mut settings = Settings::default();
            settings.mail.enabled = true;
            let (queue, written) = mpsc::channel(8);
            let signals = Arc::<AtomicUsize>::default();
            let signalled = Arc::clone(&signals);
            let head = Arc::new(Head::new(
                TY,
                Arc::clone(&fanout),
                CancellationToken::new(),
                queue.downgrade(),
                Duration::from_secs(5),
                Box::new(move || {
                    signalled.fetch_add(1, Ordering::Relaxed);
                }),
            ));
            let stamp = store.engine.stamp(TY).unwrap();
            let at = Cursor {
                identity: stamp.identity,
                rowid: stamp.head,
            };
            let wake = watch::Sender::new(0);
            let world = World {
                store,
                fanout,
                rx: wake.subscribe(),
                wake,
                settings: watch::Sender::new(Arc::new(settings)),
                queue: Some(queue),
                written,
                head,
                at,
                counted: Arc::default(),
                signals,
            };
            let kept = world.fanout.next(&world.sub(), at, 0, &world.rx).await;
            assert!(matches!(kept, Some(Ok(_))));
            world
        }

        fn sub(&self) -> Subscription {
            let args = json!({"domains": ["example.com"]});
            let args = args.as_object().unwrap();
            Subscription::new(TY.name(), args, &self.settings.borrow()).unwrap()
        }

        /// A stream at the head as request `id`, whose last read began at generation 0.
        fn stream(&self, id: u64) -> Stream {
            let counted = Arc::clone(&self.counted);
            Stream {
                sub: self.sub(),
                cursor: self.at,
                id_json: id.to_string(),
                delivered: Box::new(move |e| lock(&counted).push(e.event_id.clone())),
                settings: self.settings.subscribe(),
            }
        }

        fn park(&self, id: u64) -> Ticket {
            self.head.park(self.stream(id), &self.rx, 0)
        }

        /// A commit the hub has seen: the next generation. Its ROWID.
        fn commit(&mut self, subject: &str) -> i64 {
            let rowid = self.store.send(subject);
            self.wake.send_modify(|g| *g += 1);
            rowid
        }

        /// The next item queued on the writer, as JSON lines.
        async fn next_write(&mut self) -> Vec<Value> {
            let write = within("a write", self.written.recv()).await.unwrap();
            String::from_utf8(write)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        }
    }

    /// `f`, or a panic naming `what` if it has not come after 10 s (a hang guard, not a
    /// timing assert).
    async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(10), f)
            .await
            .unwrap_or_else(|_| panic!("{what} never came"))
    }

    #[tokio::test]
    async fn a_change_reaches_every_parked_stream_in_one_write_and_moves_their_cursors() {
        let mut world = World::new().await;
        let (first, second) = (world.park(7), world.park(8));
        let rowid = world.commit("hello");

        let frames = world.next_write().await;
        assert_eq!(frames.len(), 2, "both streams' frames in one write");
        for (frame, id) in frames.iter().zip([7, 8]) {
            assert_eq!(frame["method"], "notifications/events/event");
            assert_eq!(frame["params"]["_meta"][SUBSCRIPTION_ID], id);
            assert_eq!(frame["params"]["data"]["subject"], "hello");
        }
        let cursor = Cursor {
            identity: world.at.identity,
            rowid,
        };
        assert_eq!(frames[0]["params"]["cursor"], cursor.to_string());
        assert_eq!(first.take_back().await, (cursor, None));
        assert_eq!(second.take_back().await, (cursor, None));
        assert_eq!(lock(&world.counted).len(), 2, "each delivery counted");
        assert_eq!(
            world.signals.load(Ordering::Relaxed),
            1,
            "told once per write"
        );
    }

    #[tokio::test]
    async fn a_stream_with_a_settings_change_it_has_not_seen_is_handed_back_unwritten() {
        let mut world = World::new().await;
        let stale = world.park(1);
        world.settings.send_modify(|_| {});
        let fresh = world.park(2);
        world.commit("after the change");

        within("the hand-back", stale.handed_back()).await;
        let frames = world.next_write().await;
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0]["params"]["_meta"][SUBSCRIPTION_ID], 2);
        assert_eq!(
            stale.take_back().await,
            (world.at, Some(Back::Drain)),
            "its cursor untouched: it reads the change itself once it has revalidated"
        );
        assert_ne!(fresh.take_back().await.0, world.at);
    }

    #[tokio::test]
    async fn a_stream_taking_itself_back_is_skipped_by_a_pass_not_yet_at_it() {
        let mut world = World::new().await;
        let (leaving, staying) = (world.park(1), world.park(2));
        // As `take_back` does first, before it waits for a pass in progress.
        leaving.parked.leaving.store(true, Ordering::Release);
        world.commit("after the cancel");

        let frames = world.next_write().await;
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0]["params"]["_meta"][SUBSCRIPTION_ID], 2);
        assert_eq!(leaving.take_back().await, (world.at, None));
        assert_eq!(lock(&world.counted).len(), 1);
        drop(staying);
    }

    #[tokio::test]
    async fn a_write_to_a_connection_gone_ends_its_streams() {
        let mut world = World::new().await;
        let ticket = world.park(1);
        world.queue = None;
        world.commit("nobody reads");

        within("the hand-back", ticket.handed_back()).await;
        assert_eq!(ticket.take_back().await, (world.at, Some(Back::Closed)));
        assert!(lock(&world.counted).is_empty());
    }

    #[tokio::test]
    async fn a_stream_parked_after_a_change_it_did_not_read_is_served_at_once() {
        let mut world = World::new().await;
        let early = world.park(1);
        world.commit("in between");
        // The task has served generation 1 to the stream parked then...
        let frames = world.next_write().await;
        assert_eq!(frames[0]["params"]["_meta"][SUBSCRIPTION_ID], 1);
        // ...and a stream whose last read was before it (generation 0) parks only now.
        let late = world.park(2);

        let frames = world.next_write().await;
        assert_eq!(frames[0]["params"]["_meta"][SUBSCRIPTION_ID], 2);
        assert_eq!(frames[0]["params"]["data"]["subject"], "in between");
        assert_eq!(late.take_back().await.1, None);
        drop(early);
    }

    #[tokio::test]
    async fn a_stream_taken_back_during_a_write_gets_its_cursor_after_the_write() {
        let mut world = World::new().await;
        let ticket = world.park(1);
        // A client that reads nothing for now: the queue is full.
        let queue = world.queue.clone().unwrap();
        while queue.try_send(b"{}\n".to_vec()).is_ok() {}
        let rowid = world.commit("queued");
        within("the pass", async {
            while world.head.order.try_lock().is_ok() {
                tokio::task::yield_now().await;
            }
        })
        .await;
        // A heartbeat now would take the stream back: it waits for the write.
        let back = tokio::spawn(ticket.take_back());
        let mut got = Vec::new();
        while !got.iter().any(|w: &Vec<u8>| w.starts_with(b"{\"jsonrpc\"")) {
            got.push(within("the frames", world.written.recv()).await.unwrap());
        }
        let (cursor, why) = within("the take-back", back).await.unwrap();
        assert_eq!(
            (cursor.rowid, why),
            (rowid, None),
            "the cursor after the event"
        );
    }

    #[tokio::test]
    async fn the_task_ends_with_the_last_stream_and_lets_go_of_the_wake_ups() {
        let world = World::new().await;
        let ticket = world.park(1);
        assert_eq!(
            world.wake.receiver_count(),
            2,
            "the task holds one while it runs"
        );
        drop(ticket);
        within("the task's end", async {
            while world.wake.receiver_count() > 1 {
                tokio::task::yield_now().await;
            }
        })
        .await;
        assert!(!lock(&world.head.parking).running);
    }
}
