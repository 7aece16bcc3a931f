//! Who is connected and what they hold: each principal's state ([`ConnectionState`]: a socket
//! connection, or one HTTP bearer token), its stream slots under the caps, its live stream ids
//! (kept by the framer), its subscriptions and delivery counts, the registry the `State`
//! reads, and the in-memory activity log. A leaf below the handler, the framer and the HTTP
//! endpoint, so none of them needs the daemon to count.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use rmcp::model::RequestId;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::limits::ServerLimits;
use crate::state::{Board, ClientState, Mode, SubscriptionState, Transport, now_ms};
use crate::sync::lock;

/// Deliveries kept in the activity log.
pub const ACTIVITY_LEN: usize = 200;

/// The longest client name or version shown (a client's own text, echoed).
const MAX_CLIENT_TEXT: usize = 64;

/// Which stream cap was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamCap {
    /// Streams on one socket connection.
    PerConnection(usize),
    /// Streams opened with one HTTP bearer token.
    PerToken(usize),
    /// Streams across the daemon.
    Total(usize),
}

/// Why a principal's credential no longer counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Revocation {
    /// The HTTP token it was opened with was rotated.
    TokenRotated,
    /// The user revoked the client (the app's Revoke).
    ByUser,
}

/// Why a stream could not take a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A cap is reached.
    Exhausted(StreamCap),
    /// The principal was revoked.
    Revoked(Revocation),
}

/// The token state of one HTTP request, put in its extensions by the guard for the handler.
#[derive(Clone)]
pub(crate) struct Principal(pub(crate) Arc<ConnectionState>);

/// Every principal, the process-wide counts, the socket's cap list and the activity log.
pub(crate) struct Clients {
    limits: ServerLimits,
    board: Arc<Board>,
    /// Open socket connections.
    connections: AtomicUsize,
    /// Open streams and listens across all principals.
    streams: AtomicUsize,
    socket: SocketConnections,
    registry: Mutex<BTreeMap<u64, Weak<ConnectionState>>>,
    next_id: AtomicU64,
    activity: Activity,
}

impl Clients {
    pub(crate) fn new(limits: ServerLimits, board: Arc<Board>) -> Arc<Clients> {
        Arc::new(Clients {
            limits,
            board,
            connections: AtomicUsize::new(0),
            streams: AtomicUsize::new(0),
            socket: SocketConnections::default(),
            registry: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(1),
            activity: Activity::default(),
        })
    }

    /// Open socket connections.
    pub(crate) fn connections(&self) -> usize {
        self.connections.load(Ordering::Acquire)
    }

    /// Open streams across all principals.
    pub(crate) fn streams(&self) -> usize {
        self.streams.load(Ordering::Acquire)
    }

    /// Tell the activity log's and the State's listeners that deliveries were counted.
    pub(crate) fn signal_deliveries(&self) {
        self.activity.bump();
        self.board.changed();
    }

    /// The activity log.
    pub(crate) fn activity(&self) -> &Activity {
        &self.activity
    }

    /// The clients to show: socket connections, and HTTP tokens that made a request.
    pub(crate) fn snapshot(&self) -> Vec<ClientState> {
        let live: Vec<Arc<ConnectionState>> = lock(&self.registry)
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        live.iter()
            .filter(|c| c.transport == Transport::Socket || c.seen.load(Ordering::Acquire))
            .map(|c| c.describe())
            .collect()
    }

    /// Revoke client `id`: its streams end with `terminated` (Forbidden) and its requests are
    /// refused until it reconnects. False when no such client is connected.
    pub(crate) fn revoke(&self, id: u64) -> bool {
        let Some(conn) = lock(&self.registry).get(&id).and_then(Weak::upgrade) else {
            return false;
        };
        conn.revoke(Revocation::ByUser);
        true
    }

    fn register(self: &Arc<Self>, state: ConnectionState) -> Arc<ConnectionState> {
        let conn = Arc::new(state);
        lock(&self.registry).insert(conn.id, Arc::downgrade(&conn));
        self.board.changed();
        conn
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// What a client announced about itself.
#[derive(Clone, Debug, Default)]
struct Announced {
    name: Option<String>,
    version: Option<String>,
}

/// The state one principal's handlers share: a socket connection, or one HTTP bearer token
/// (all the POSTs made with it).
pub(crate) struct ConnectionState {
    clients: Arc<Clients>,
    id: u64,
    transport: Transport,
    since_ms: u64,
    pid: Option<i32>,
    announced: Mutex<Announced>,
    /// Whether an HTTP token's principal served a request (only then is it shown).
    seen: AtomicBool,
    subscriptions: Mutex<BTreeMap<u64, SubscriptionState>>,
    next_sub: AtomicU64,
    streams: AtomicUsize,
    /// The cap on `streams`, as the error names it.
    cap: StreamCap,
    /// Cancelled when the client is gone (a write failed), its HTTP endpoint stops, or the
    /// daemon shuts down.
    pub(crate) closed: CancellationToken,
    /// Cancelled when the credential is revoked (the HTTP token was rotated, or the user
    /// revoked the client): its streams end with `terminated` Forbidden.
    pub(crate) revoked: CancellationToken,
    /// Why `revoked` was cancelled.
    revocation: OnceLock<Revocation>,
    /// The request ids of a socket connection's open streams. A stream's id is its
    /// `subscriptionId` and the key of `notifications/cancelled`, and rmcp keeps one
    /// cancellation entry per id, so a second stream under a live id would share the first's
    /// notifications and leave one of the two uncancellable: it is refused. The framer owns
    /// the set: it reserves an id as it forwards the request, in order, before rmcp sees the
    /// next line; the id is freed when the stream's handler is done with it
    /// ([`StreamIdHold`]) or when rmcp answers the request without the handler, never on a
    /// cancel (see `frames/mod.rs`). `None` over HTTP, which is stateless per request: each POST
    /// is its own JSON-RPC exchange with its own rmcp service and response stream (a stream
    /// is cancelled by dropping it), so two POSTs with the same id under one token never meet.
    live_ids: Option<Mutex<HashSet<RequestId>>>,
    /// When the client last sent a line (ms on [`clock`]); the socket's cap evicts the
    /// connection idle longest first.
    last_active: AtomicU64,
    /// A socket connection's queue of whole frames to the client (weak: it must not keep the
    /// writer alive), which its streams write their notifications to themselves, each frame
    /// encoded once per event for every stream (`events/stream/wire.rs`). Unset over HTTP.
    direct: OnceLock<tokio::sync::mpsc::WeakSender<Vec<u8>>>,
    /// A socket connection's streams at the head of each store, served by one task each.
    pub(crate) heads: crate::heads::Heads,
}

/// Milliseconds since the first call: a cheap monotonic clock for `last_active`.
fn clock() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = START.get_or_init(Instant::now);
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl ConnectionState {
    /// A socket connection's state, registered. `pid` is the peer's, where the OS tells.
    pub(crate) fn socket(
        clients: &Arc<Clients>,
        shutdown: &CancellationToken,
        pid: Option<i32>,
    ) -> Arc<ConnectionState> {
        let cap = StreamCap::PerConnection(clients.limits.streams_per_connection);
        let mut state = ConnectionState::with_cap(clients, cap, shutdown, Transport::Socket);
        state.pid = pid;
        state.live_ids = Some(Mutex::new(HashSet::new()));
        clients.register(state)
    }

    /// The state of one HTTP bearer token (or of every request, with `--no-auth`). `stop` is
    /// the endpoint's own token (a child of the daemon's shutdown), so stopping the endpoint
    /// ends its streams.
    pub(crate) fn http_token(
        clients: &Arc<Clients>,
        stop: &CancellationToken,
    ) -> Arc<ConnectionState> {
        let cap = StreamCap::PerToken(clients.limits.streams_per_token);
        clients.register(ConnectionState::with_cap(
            clients,
            cap,
            stop,
            Transport::Http,
        ))
    }

    fn with_cap(
        clients: &Arc<Clients>,
        cap: StreamCap,
        parent: &CancellationToken,
        transport: Transport,
    ) -> ConnectionState {
        ConnectionState {
            clients: clients.clone(),
            id: clients.next_id(),
            transport,
            since_ms: now_ms(),
            pid: None,
            announced: Mutex::new(Announced::default()),
            seen: AtomicBool::new(false),
            subscriptions: Mutex::new(BTreeMap::new()),
            next_sub: AtomicU64::new(0),
            streams: AtomicUsize::new(0),
            cap,
            closed: parent.child_token(),
            revoked: CancellationToken::new(),
            revocation: OnceLock::new(),
            live_ids: None,
            last_active: AtomicU64::new(clock()),
            direct: OnceLock::new(),
            heads: crate::heads::Heads::default(),
        }
    }

    /// Give the connection's streams the writer's queue (the socket framer does, once).
    pub(crate) fn set_direct(&self, frames: &tokio::sync::mpsc::Sender<Vec<u8>>) {
        let _ = self.direct.set(frames.downgrade());
    }

    /// What tells the app's model of deliveries counted with [`Subscribed::record`] (it holds
    /// the registry, not this connection, so a connection's head can keep it).
    pub(crate) fn delivery_signal(&self) -> impl Fn() + Send + Sync + 'static {
        let clients = Arc::clone(&self.clients);
        move || clients.signal_deliveries()
    }

    /// The writer's queue, when this is a socket connection.
    pub(crate) fn direct(&self) -> Option<tokio::sync::mpsc::WeakSender<Vec<u8>>> {
        self.direct.get().cloned()
    }

    /// The engine's id for this client (as `State.clients` lists it).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The name it announced (`clientInfo.name`), if any.
    pub(crate) fn name(&self) -> Option<String> {
        lock(&self.announced).name.clone()
    }

    /// The client sent something: it is not idle.
    pub(crate) fn touch(&self) {
        self.last_active.store(clock(), Ordering::Relaxed);
    }

    /// A request reached the handler; `name` and `version` are what it announced
    /// (`initialize`'s or `_meta`'s `clientInfo`), if anything. Changes are signalled.
    pub(crate) fn announce(&self, name: Option<&str>, version: Option<&str>) {
        let first = !self.seen.swap(true, Ordering::AcqRel);
        let clean = |s: &str| tidings_core::text::sanitize(s, MAX_CLIENT_TEXT);
        let mut changed = first;
        {
            let mut a = lock(&self.announced);
            if let Some(name) = name.map(clean)
                && a.name.as_ref() != Some(&name)
            {
                a.name = Some(name);
                changed = true;
            }
            if let Some(version) = version.map(clean)
                && a.version.as_ref() != Some(&version)
            {
                a.version = Some(version);
                changed = true;
            }
        }
        if changed {
            self.clients.board.changed();
        }
    }

    /// Why the credential was revoked, if it was.
    pub(crate) fn revocation(&self) -> Option<Revocation> {
        self.revocation.get().copied()
    }

    /// End this principal's streams with Forbidden and refuse its later requests.
    pub(crate) fn revoke(&self, why: Revocation) {
        let _ = self.revocation.set(why);
        self.revoked.cancel();
        self.clients.board.changed();
    }

    /// Reserve `id` for a stream about to reach rmcp; false when a live stream holds it.
    /// Always true over HTTP, where ids never meet.
    pub(crate) fn reserve_stream_id(&self, id: &RequestId) -> bool {
        self.live_ids
            .as_ref()
            .is_none_or(|ids| lock(ids).insert(id.clone()))
    }

    /// The request `id` was answered or cancelled: a stream under it is over (or never
    /// opened), so the id is free again.
    pub(crate) fn release_stream_id(&self, id: &RequestId) {
        if let Some(ids) = &self.live_ids {
            lock(ids).remove(id);
        }
    }

    /// Whether a live stream holds `id` (a plain request under it would take over the
    /// stream's cancellation in rmcp). Always false over HTTP.
    pub(crate) fn is_stream_id(&self, id: &RequestId) -> bool {
        self.live_ids
            .as_ref()
            .is_some_and(|ids| lock(ids).contains(id))
    }

    /// Whether any stream id is reserved (the framer only reads answers' ids then).
    pub(crate) fn has_stream_ids(&self) -> bool {
        self.live_ids
            .as_ref()
            .is_some_and(|ids| !lock(ids).is_empty())
    }

    /// Keep stream `id` reserved (by the framer) until the returned hold is dropped: the
    /// handler holds it for as long as it runs, so a stream refused before it took a slot, or
    /// cancelled, frees its id only once its handler is done.
    pub(crate) fn hold_stream_id(self: &Arc<Self>, id: &RequestId) -> StreamIdHold {
        StreamIdHold {
            conn: self.clone(),
            id: self.live_ids.is_some().then(|| id.clone()),
        }
    }

    /// Take a place for stream `id` under this principal's cap and the process-wide one. (On
    /// a socket connection the framer reserved the id; the slot frees it first when dropped.)
    pub(crate) fn acquire(self: &Arc<Self>, id: &RequestId) -> Result<StreamSlot, Refusal> {
        if let Some(why) = self.revocation() {
            return Err(Refusal::Revoked(why));
        }
        let per = match self.cap {
            StreamCap::PerConnection(n) | StreamCap::PerToken(n) | StreamCap::Total(n) => n,
        };
        let total = self.clients.limits.streams_total;
        let take = |counter: &AtomicUsize, max: usize| {
            counter
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < max).then_some(n + 1)
                })
                .is_ok()
        };
        if !take(&self.streams, per) {
            return Err(Refusal::Exhausted(self.cap));
        }
        if !take(&self.clients.streams, total) {
            self.streams.fetch_sub(1, Ordering::AcqRel);
            return Err(Refusal::Exhausted(StreamCap::Total(total)));
        }
        self.clients.board.changed();
        Ok(StreamSlot {
            id: self.hold_stream_id(id),
            conn: self.clone(),
        })
    }

    /// Open streams of this principal.
    pub(crate) fn open_streams(&self) -> usize {
        self.streams.load(Ordering::Acquire)
    }

    /// Record a subscription in `mode` (an open stream); it is forgotten when the returned
    /// handle drops.
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        event_type: &str,
        filter: BTreeMap<String, usize>,
        mode: Mode,
    ) -> Subscribed {
        let key = self.next_sub.fetch_add(1, Ordering::Relaxed);
        lock(&self.subscriptions).insert(key, subscription(event_type, filter, mode));
        self.clients.board.changed();
        Subscribed {
            conn: self.clone(),
            key,
        }
    }

    /// A poll (or a pull tool call) returned `senders.len()` events: counted under the
    /// client's one subscription of that type and mode, made on first use and kept while
    /// the client is connected. One per type and mode, showing the latest call's filter: a
    /// client that varies its filter on every call must not grow the State without bound.
    pub(crate) fn polled(
        &self,
        event_type: &str,
        filter: BTreeMap<String, usize>,
        mode: Mode,
        senders: &[String],
    ) {
        let key = {
            let mut subs = lock(&self.subscriptions);
            let found = subs
                .iter_mut()
                .find(|(_, s)| s.mode == mode && s.event_type == event_type)
                .map(|(k, s)| {
                    s.filter = filter.clone();
                    *k
                });
            found.unwrap_or_else(|| {
                let key = self.next_sub.fetch_add(1, Ordering::Relaxed);
                subs.insert(key, subscription(event_type, filter, mode));
                key
            })
        };
        for sender in senders {
            self.delivered(key, event_type, sender);
        }
        self.clients.board.changed();
    }

    /// One event went out under subscription `key`.
    fn delivered(&self, key: u64, event_type: &str, sender: &str) {
        let at = now_ms();
        if let Some(sub) = lock(&self.subscriptions).get_mut(&key) {
            sub.delivered += 1;
            sub.last_delivery_ms = Some(at);
        }
        let name = lock(&self.announced).name.clone();
        self.clients.activity.push_quietly(Delivery {
            at_ms: at,
            event_type: event_type.to_owned(),
            client_id: self.id,
            client_name: name,
            sender: sender.to_owned(),
        });
    }

    fn describe(&self) -> ClientState {
        let announced = lock(&self.announced).clone();
        ClientState {
            id: self.id,
            name: announced.name,
            version: announced.version,
            transport: self.transport,
            connected_since_ms: self.since_ms,
            pid: self.pid,
            revoked: self.revocation().is_some(),
            subscriptions: lock(&self.subscriptions).values().cloned().collect(),
        }
    }
}

impl Drop for ConnectionState {
    fn drop(&mut self) {
        lock(&self.clients.registry).remove(&self.id);
        self.clients.board.changed();
    }
}

fn subscription(
    event_type: &str,
    filter: BTreeMap<String, usize>,
    mode: Mode,
) -> SubscriptionState {
    SubscriptionState {
        event_type: event_type.to_owned(),
        filter,
        mode,
        delivered: 0,
        last_delivery_ms: None,
    }
}

/// An open subscription's place in its client's list; removed on drop.
pub(crate) struct Subscribed {
    conn: Arc<ConnectionState>,
    key: u64,
}

impl Subscribed {
    /// One event of `event_type` from `sender` was written to the client.
    pub(crate) fn delivered(&self, event_type: &str, sender: &str) {
        self.record(event_type, sender);
        self.conn.clients.signal_deliveries();
    }

    /// Count one delivery as [`delivered`](Subscribed::delivered) does but tell no one yet:
    /// a connection's head counts a whole write's, then calls [`Clients::signal_deliveries`]
    /// once.
    pub(crate) fn record(&self, event_type: &str, sender: &str) {
        self.conn.delivered(self.key, event_type, sender);
    }
}

impl Drop for Subscribed {
    fn drop(&mut self) {
        lock(&self.conn.subscriptions).remove(&self.key);
        self.conn.clients.board.changed();
    }
}

/// A stream id kept reserved; freed on drop.
pub(crate) struct StreamIdHold {
    conn: Arc<ConnectionState>,
    id: Option<RequestId>,
}

impl Drop for StreamIdHold {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.conn.release_stream_id(&id);
        }
    }
}

/// One open stream's place under the caps and its id; released on drop, however the stream
/// ends (the id before the counts, so a client that sees the count fall can reuse the id).
pub(crate) struct StreamSlot {
    conn: Arc<ConnectionState>,
    id: StreamIdHold,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Some(id) = self.id.id.take() {
            self.conn.release_stream_id(&id);
        }
        self.conn.streams.fetch_sub(1, Ordering::AcqRel);
        self.conn.clients.streams.fetch_sub(1, Ordering::AcqRel);
        self.conn.clients.board.changed();
    }
}

/// The socket connections being served, for the cap.
#[derive(Default)]
struct SocketConnections {
    open: Mutex<Vec<(u64, Arc<ConnectionState>)>>,
    next: AtomicU64,
    /// Whether reaching the cap was logged (once per process: it means a client leaks
    /// connections, and one line says so).
    logged: AtomicBool,
}

impl SocketConnections {
    /// Make room for `conn` under `cap`: when full, the connection idle longest among those
    /// holding no stream is closed (its `closed` token cancelled). None when every one holds
    /// a stream: `conn` is then turned away.
    fn admit(&self, conn: &Arc<ConnectionState>, cap: usize) -> Option<u64> {
        let mut open = lock(&self.open);
        if open.len() >= cap {
            let idle = open
                .iter()
                .enumerate()
                .filter(|(_, (_, c))| c.open_streams() == 0)
                .min_by_key(|(_, (_, c))| c.last_active.load(Ordering::Relaxed))
                .map(|(i, _)| i);
            if !self.logged.swap(true, Ordering::AcqRel) {
                tracing::warn!(
                    max = cap,
                    "the socket's connection cap is reached; closing the longest-idle \
                     connections that hold no stream to make room (logged once)"
                );
            }
            let (_, evicted) = open.swap_remove(idle?);
            evicted.closed.cancel();
        }
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        open.push((key, conn.clone()));
        Some(key)
    }

    fn remove(&self, key: u64) {
        lock(&self.open).retain(|(k, _)| *k != key);
    }
}

/// A socket connection's place: keeps the count and the cap's list true however the
/// connection's task returns.
pub(crate) struct ConnectionCount {
    clients: Arc<Clients>,
    key: u64,
}

impl ConnectionCount {
    /// Count `conn` in, making room under the socket cap; None when it is turned away.
    pub(crate) fn admit(clients: &Arc<Clients>, conn: &Arc<ConnectionState>) -> Option<Self> {
        let key = clients
            .socket
            .admit(conn, clients.limits.max_socket_connections)?;
        clients.connections.fetch_add(1, Ordering::AcqRel);
        clients.board.changed();
        Some(ConnectionCount {
            clients: clients.clone(),
            key,
        })
    }
}

impl Drop for ConnectionCount {
    fn drop(&mut self) {
        self.clients.socket.remove(self.key);
        self.clients.connections.fetch_sub(1, Ordering::AcqRel);
        self.clients.board.changed();
    }
}

/// One delivery, for the app's Activity list. It names the sender, so it is kept in memory
/// only and is never part of `State` (which any client may read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// When (ms since the Unix epoch).
    pub at_ms: u64,
    /// The event type's wire name.
    pub event_type: String,
    /// The client's id (as in `State.clients`).
    pub client_id: u64,
    /// The name the client announced.
    pub client_name: Option<String>,
    /// The sender's address or handle.
    pub sender: String,
}

/// The last [`ACTIVITY_LEN`] deliveries, newest last, with a change signal.
pub struct Activity {
    log: Mutex<VecDeque<Delivery>>,
    changes: watch::Sender<u64>,
}

impl Default for Activity {
    fn default() -> Activity {
        Activity {
            log: Mutex::new(VecDeque::with_capacity(ACTIVITY_LEN)),
            changes: watch::Sender::new(0),
        }
    }
}

impl Activity {
    /// Keep `delivery`; its change signal is [`bump`](Activity::bump), once for many.
    fn push_quietly(&self, delivery: Delivery) {
        let mut log = lock(&self.log);
        if log.len() == ACTIVITY_LEN {
            log.pop_front();
        }
        log.push_back(delivery);
    }

    /// The deliveries kept, oldest first.
    pub fn snapshot(&self) -> Vec<Delivery> {
        lock(&self.log).iter().cloned().collect()
    }

    /// Forget every delivery.
    pub fn clear(&self) {
        lock(&self.log).clear();
        self.bump();
    }

    /// A receiver that changes whenever the log does.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn bump(&self) {
        self.changes.send_modify(|g| *g = g.wrapping_add(1));
    }
}

/// The filter of a subscription as counts per argument: `{"from": ["a", "b"]}` is
/// `{"from": 2}`; a scalar counts 1. Never the values (`State` is readable by any client).
pub(crate) fn filter_summary(
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> BTreeMap<String, usize> {
    arguments
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.as_array().map_or(1, Vec::len)))
        .collect()
}

/// The sender of an occurrence's envelope: `from.address` (mail) or `from.handle` (messages).
pub(crate) fn sender_of(data: &serde_json::Value) -> String {
    tidings_protocol::event::sender(data).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn delivery(n: u64) -> Delivery {
        Delivery {
            at_ms: n,
            event_type: "mail.received".into(),
            client_id: 1,
            client_name: None,
            sender: format!("s{n}@example.com"),
        }
    }

    #[test]
    fn the_activity_log_keeps_the_last_deliveries_and_clears() {
        let log = Activity::default();
        let mut changes = log.subscribe();
        for n in 0..(ACTIVITY_LEN as u64 + 5) {
            log.push_quietly(delivery(n));
        }
        let kept = log.snapshot();
        assert_eq!(kept.len(), ACTIVITY_LEN);
        assert_eq!(kept[0].at_ms, 5, "the oldest went first");
        assert!(!changes.has_changed().unwrap(), "told only when bumped");
        log.bump();
        assert!(changes.has_changed().unwrap());
        changes.borrow_and_update();
        log.clear();
        assert!(log.snapshot().is_empty());
        assert!(changes.has_changed().unwrap(), "a clear is a change");
    }

    #[test]
    fn filters_are_counts_and_senders_come_from_the_envelope() {
        let args = json!({"from": ["a@x.com", "b@y.com"], "account": "Work", "chats": null});
        let summary = filter_summary(args.as_object().unwrap());
        assert_eq!(summary, [("account".into(), 1), ("from".into(), 2)].into());
        assert_eq!(
            sender_of(&json!({"from": {"address": "ana@example.com", "name": "Ana"}})),
            "ana@example.com"
        );
        assert_eq!(
            sender_of(&json!({"from": {"handle": "+12025550101", "service": "SMS"}})),
            "+12025550101"
        );
    }

    #[test]
    fn a_revoked_principal_takes_no_stream_and_leaves_the_registry_on_drop() {
        let board = Arc::new(Board::default());
        let clients = Clients::new(ServerLimits::default(), board);
        let conn = ConnectionState::socket(&clients, &CancellationToken::new(), Some(7));
        let id = clients.snapshot()[0].id;
        assert!(clients.revoke(id));
        assert!(conn.revoked.is_cancelled());
        let refused = conn.acquire(&RequestId::Number(1)).err();
        assert_eq!(refused, Some(Refusal::Revoked(Revocation::ByUser)));
        assert!(clients.snapshot()[0].revoked);
        drop(conn);
        assert!(clients.snapshot().is_empty());
        assert!(!clients.revoke(id), "gone");
    }

    #[test]
    fn polls_with_ever_new_filters_stay_one_subscription_per_type_and_mode() {
        let board = Arc::new(Board::default());
        let clients = Clients::new(ServerLimits::default(), board);
        let conn = ConnectionState::socket(&clients, &CancellationToken::new(), Some(7));
        for n in 1..=300 {
            let from: Vec<String> = (0..n).map(|i| format!("s{i}@x.com")).collect();
            let filter = filter_summary(json!({ "from": from }).as_object().unwrap());
            conn.polled("mail.received", filter, Mode::Poll, &["a@x.com".to_owned()]);
        }
        conn.polled("mail.received", BTreeMap::new(), Mode::Tools, &[]);
        let subs = &clients.snapshot()[0].subscriptions;
        assert_eq!(subs.len(), 2, "{subs:?}");
        let poll = subs.iter().find(|s| s.mode == Mode::Poll).unwrap();
        assert_eq!(poll.delivered, 300);
        assert_eq!(
            poll.filter.get("from"),
            Some(&300),
            "the latest call's filter"
        );
    }
}
