//! The heads' tests: one write per change for every parked stream, hand-backs, and the task's end.

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
