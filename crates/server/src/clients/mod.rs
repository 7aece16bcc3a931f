//! Who is connected: each principal's state ([`ConnectionState`]: a socket connection, or one
//! HTTP bearer token) and the registry the `State` reads ([`Clients`]: the connections, their
//! snapshot, revoke, ids). A leaf below the handler, the framer and the HTTP endpoint, so none
//! of them needs the daemon to count.
//!
//! Its parts: `admission` (stream slots under the caps, the live stream ids the framer keeps,
//! the socket's connection cap) and `activity` (subscriptions, delivery counts, the in-memory
//! activity log).

mod activity;
mod admission;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use rmcp::model::RequestId;
use tokio_util::sync::CancellationToken;

use crate::agents::{Agent, Agents};
use crate::limits::ServerLimits;
use crate::state::{Board, ClientState, SubscriptionState, Transport, now_ms};
use crate::sync::lock;
use admission::SocketConnections;

pub use activity::{ACTIVITY_LEN, Activity, Delivery};
pub(crate) use activity::{Subscribed, filter_summary, sender_of};
pub(crate) use admission::ConnectionCount;
pub use admission::{Refusal, StreamCap};

/// The longest client name or version shown (a client's own text, echoed).
const MAX_CLIENT_TEXT: usize = 64;

/// Why a principal's credential no longer counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Revocation {
    /// The HTTP token it was opened with was rotated.
    TokenRotated,
    /// The user revoked the client (the app's Revoke).
    ByUser,
    /// The agent's own HTTP token was revoked (`tidings token revoke NAME`).
    TokenRevoked,
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
    agents: Agents,
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
            agents: Agents::default(),
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

    /// The agents seen and the questions open.
    pub(crate) fn agents(&self) -> &Agents {
        &self.agents
    }

    /// The live connections of every agent, by agent key: (connections, open streams,
    /// events delivered).
    pub(crate) fn by_agent(&self) -> BTreeMap<String, (usize, usize, u64)> {
        // Upgraded under the lock, counted after it: the last `Arc` of a connection that
        // closed meanwhile may drop here, and its `Drop` takes the registry's lock.
        let live: Vec<Arc<ConnectionState>> = lock(&self.registry)
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        let mut out: BTreeMap<String, (usize, usize, u64)> = BTreeMap::new();
        for conn in live {
            if conn.transport == Transport::Http && !conn.seen.load(Ordering::Acquire) {
                continue;
            }
            let e = out.entry(conn.agent.key().to_owned()).or_default();
            e.0 += 1;
            e.1 += conn.open_streams();
            e.2 += conn.delivered_total();
        }
        out
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
    /// The program behind it (or the HTTP token's agent): whose grant applies.
    agent: Arc<Agent>,
    announced: Mutex<Announced>,
    /// Whether an HTTP token's principal served a request (only then is it shown).
    seen: AtomicBool,
    /// No credential stands behind it: the HTTP endpoint serves without a token
    /// (`--no-auth`). Webhook calls need a principal and are refused.
    unauthenticated: AtomicBool,
    subscriptions: Mutex<BTreeMap<u64, SubscriptionState>>,
    /// Events delivered through all its subscriptions, ended ones included (its agent's
    /// count).
    delivered_count: AtomicU64,
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
    /// ([`StreamIdHold`](admission::StreamIdHold)) or when rmcp answers the request without
    /// the handler, never on a cancel (see `frames/mod.rs`). `None` over HTTP, which is
    /// stateless per request: each POST is its own JSON-RPC exchange with its own rmcp service
    /// and response stream (a stream is cancelled by dropping it), so two POSTs with the same
    /// id under one token never meet.
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
        agent: Arc<Agent>,
    ) -> Arc<ConnectionState> {
        let cap = StreamCap::PerConnection(clients.limits.streams_per_connection);
        let mut state = ConnectionState::with_cap(clients, cap, shutdown, Transport::Socket, agent);
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
        agent: Arc<Agent>,
    ) -> Arc<ConnectionState> {
        let cap = StreamCap::PerToken(clients.limits.streams_per_token);
        clients.register(ConnectionState::with_cap(
            clients,
            cap,
            stop,
            Transport::Http,
            agent,
        ))
    }

    fn with_cap(
        clients: &Arc<Clients>,
        cap: StreamCap,
        parent: &CancellationToken,
        transport: Transport,
        agent: Arc<Agent>,
    ) -> ConnectionState {
        ConnectionState {
            clients: clients.clone(),
            id: clients.next_id(),
            transport,
            since_ms: now_ms(),
            pid: None,
            agent,
            announced: Mutex::new(Announced::default()),
            seen: AtomicBool::new(false),
            unauthenticated: AtomicBool::new(false),
            subscriptions: Mutex::new(BTreeMap::new()),
            delivered_count: AtomicU64::new(0),
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

    /// Whether a credential stands behind it: a socket peer (the kernel names its uid and
    /// pid) or an HTTP token; not the HTTP endpoint's `--no-auth` principal.
    pub(crate) fn authenticated(&self) -> bool {
        !self.unauthenticated.load(Ordering::Relaxed)
    }

    /// Mark the `--no-auth` endpoint's principal.
    pub(crate) fn mark_unauthenticated(&self) {
        self.unauthenticated.store(true, Ordering::Relaxed);
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

    /// The program behind it, whose grant applies.
    pub(crate) fn agent(&self) -> &Arc<Agent> {
        &self.agent
    }

    /// Events delivered through its subscriptions, ended ones included.
    fn delivered_total(&self) -> u64 {
        self.delivered_count.load(Ordering::Relaxed)
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

    fn describe(&self) -> ClientState {
        let announced = lock(&self.announced).clone();
        ClientState {
            id: self.id,
            name: announced.name,
            version: announced.version,
            transport: self.transport,
            connected_since_ms: self.since_ms,
            pid: self.pid,
            agent: self.agent.id.clone(),
            revoked: self.revocation().is_some(),
            subscriptions: lock(&self.subscriptions).values().cloned().collect(),
        }
    }
}

impl Drop for ConnectionState {
    fn drop(&mut self) {
        self.clients
            .agents
            .closed(&self.agent, self.delivered_total());
        lock(&self.clients.registry).remove(&self.id);
        self.clients.board.changed();
    }
}

#[cfg(test)]
mod tests;
