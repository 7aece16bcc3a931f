//! Activity: a client's subscriptions, the deliveries counted under them, and the activity log.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::ConnectionState;
use crate::state::{Mode, SubscriptionState, now_ms};
use crate::sync::lock;

/// Deliveries kept in the activity log.
pub const ACTIVITY_LEN: usize = 200;

impl ConnectionState {
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
        self.delivered_count
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
    /// a connection's head counts a whole write's, then calls
    /// [`Clients::signal_deliveries`](super::Clients::signal_deliveries) once.
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

/// One delivery, for the app's Activity list. It names the sender, so it is kept in memory
/// only and is never part of `State` (which any client may read).
#[cfg_attr(test, derive(ts_rs::TS))]
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
    pub(super) fn push_quietly(&self, delivery: Delivery) {
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

    pub(super) fn bump(&self) {
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
