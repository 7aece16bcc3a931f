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
//!
//! One pass of the task, the frames it joins and the write, is `pass`.

mod pass;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tidings_core::{Cursor, EventType, Occurrence, Settings, Subscription};
use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::fanout::Fanout;
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
}

#[cfg(test)]
mod tests;
