//! Webhook delivery, the third delivery mode beside poll and push: `events/subscribe` makes
//! (or refreshes) a subscription whose events the daemon POSTs, signed, to a callback URL on
//! the user's list of destinations (docs/decisions/webhooks.md).
//!
//! This module is the registry and what needs no daemon: `hook` (one subscription, its state
//! and its id), `params` (the two methods' params, checked), `send` (one signed POST, and the
//! verification challenge), `store` (`webhooks.json`, so nothing is lost across a restart),
//! `errors` (the refusals only webhooks give). This file is [`Webhooks`]: every subscription
//! by id, the endpoints verified, the destinations the window asks the user about. The
//! handlers, each subscription's delivery task and the conformance controls are the events
//! layer's (`events/webhook/`), above the daemon that holds this registry.
//!
//! What leaves the Mac is decided by the user twice over: the destination's origin must be on
//! `[webhooks] allow`, and every delivery goes through the agent's grant, the type's switch
//! and the allowlist as a stream's events do. The posting itself (addresses checked at every
//! delivery, no redirects, signing) is `tidings_webhook`'s.

pub(crate) mod errors;
mod hook;
pub(crate) mod params;
pub(crate) mod send;
mod store;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tidings_webhook::{PostLimits, Poster};

pub use errors::{LIMIT, MAX_PER_AGENT};
pub use hook::{Hook, HookState, Owner, subscription_id};

use crate::clients::filter_summary;
use crate::state::{DestinationAskState, WebhookState, WebhooksState, now_ms};
use crate::sync::lock;

/// The error a subscription the user ended in the window is terminated with.
pub(crate) fn ended_by_user(hook: &Hook) -> rmcp::ErrorData {
    errors::destination_removed(hook.url.origin())
}

/// How long the saver waits after a change before writing, so a burst is one write.
pub const SAVE_COALESCE: std::time::Duration = std::time::Duration::from_millis(50);

/// The most destination questions open at once in the window.
pub const MAX_ASKS: usize = 16;

/// A question for the user: may an agent post events to this origin?
#[derive(Clone, Debug)]
pub struct DestinationAsk {
    /// The origin, as the list would hold it.
    pub origin: String,
    /// Who asks.
    pub agent: String,
    /// When it first asked (ms since the epoch).
    pub since_ms: u64,
}

/// Every webhook subscription, and what delivering to them needs.
pub struct Webhooks {
    path: PathBuf,
    poster: Poster,
    hooks: Mutex<BTreeMap<String, Arc<Hook>>>,
    verified: Mutex<BTreeSet<(String, String)>>,
    asks: Mutex<BTreeMap<String, DestinationAsk>>,
    /// Serialises writes of the file.
    save_lock: Mutex<()>,
    /// Deliveries changed what the file should hold: the saver writes it soon.
    dirty: tokio::sync::Notify,
}

impl Webhooks {
    /// The registry of the subscriptions saved beside `settings_path` (none when there is no
    /// file; a file that cannot be read is logged and left as it is).
    pub fn load(settings_path: &std::path::Path) -> Webhooks {
        let path = store::path_beside(settings_path);
        let poster = Poster::new(PostLimits::default()).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "no TLS roots for webhook delivery; https destinations will fail");
            Poster::without_roots(PostLimits::default())
        });
        let (hooks, verified) = Webhooks::load_file(&path);
        Webhooks {
            path,
            poster,
            hooks: Mutex::new(hooks),
            verified: Mutex::new(verified),
            asks: Mutex::default(),
            save_lock: Mutex::default(),
            dirty: tokio::sync::Notify::new(),
        }
    }

    /// The subscriptions and verified endpoints `path` holds.
    #[allow(clippy::type_complexity)] // the registry's two maps, as they are kept
    fn load_file(
        path: &std::path::Path,
    ) -> (BTreeMap<String, Arc<Hook>>, BTreeSet<(String, String)>) {
        let file = store::read(path).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "webhook subscriptions not loaded");
            store::File::default()
        });
        let mut hooks = BTreeMap::new();
        for record in file.subscriptions {
            if let Some(hook) = record.hook() {
                hooks.insert(hook.id.clone(), hook);
            } else {
                tracing::warn!(
                    "a webhook subscription in webhooks.json could not be read; dropped"
                );
            }
        }
        (hooks, file.verified.into_iter().collect())
    }

    /// What posts the deliveries.
    pub fn poster(&self) -> &Poster {
        &self.poster
    }

    /// Start the saver, which writes the file once per burst of deliveries, and the delivery
    /// task of every subscription loaded.
    pub(crate) fn start_saver(self: &Arc<Self>, shutdown: tokio_util::sync::CancellationToken) {
        let me = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = me.dirty.notified() => {}
                }
                // Coalesce: a burst of deliveries is one write.
                tokio::time::sleep(SAVE_COALESCE).await;
                let saver = Arc::clone(&me);
                let _ = tokio::task::spawn_blocking(move || saver.save()).await;
            }
        });
    }

    /// Deliveries moved a cursor or a status: the file is written within [`SAVE_COALESCE`].
    /// A crash inside that window repeats what was delivered in it (at least once); a clean
    /// stop writes at once ([`Webhooks::stop`]).
    pub fn changed(&self) {
        self.dirty.notify_one();
    }

    /// Every subscription, by id.
    pub fn all(&self) -> Vec<Arc<Hook>> {
        lock(&self.hooks).values().cloned().collect()
    }

    /// The subscription `id`.
    pub fn get(&self, id: &str) -> Option<Arc<Hook>> {
        lock(&self.hooks).get(id).cloned()
    }

    /// How many subscriptions the agent with identity `key` holds.
    pub fn count_for(&self, key: &str) -> usize {
        lock(&self.hooks)
            .values()
            .filter(|h| h.owner.key == key)
            .count()
    }

    /// Add `hook` (saved at once), unless a subscription with its id is there already (two
    /// subscribes of one key at once): that one is returned and `hook` is not added.
    pub(crate) fn insert(&self, hook: Arc<Hook>) -> Option<Arc<Hook>> {
        {
            let mut hooks = lock(&self.hooks);
            if let Some(there) = hooks.get(&hook.id) {
                return Some(Arc::clone(there));
            }
            hooks.insert(hook.id.clone(), hook);
        }
        self.save();
        None
    }

    /// Forget subscription `id` and stop its delivery (saved at once).
    pub fn remove(&self, id: &str) -> Option<Arc<Hook>> {
        let hook = lock(&self.hooks).remove(id);
        if let Some(hook) = &hook {
            hook.ended.cancel();
            self.save();
        }
        hook
    }

    /// Whether the endpoint at `url` answered the challenge for `principal`.
    pub fn is_verified(&self, principal: &str, url: &str) -> bool {
        lock(&self.verified).contains(&(principal.to_owned(), url.to_owned()))
    }

    /// Remember that the endpoint at `url` answered the challenge for `principal`.
    pub fn verified(&self, principal: &str, url: &str) {
        lock(&self.verified).insert((principal.to_owned(), url.to_owned()));
        self.save();
    }

    /// Ask the user about `origin` for `agent`; whether a question is (now) open.
    pub fn ask(&self, origin: &str, agent: &str) -> bool {
        let mut asks = lock(&self.asks);
        if asks.contains_key(origin) {
            return true;
        }
        if asks.len() >= MAX_ASKS {
            return false;
        }
        asks.insert(
            origin.to_owned(),
            DestinationAsk {
                origin: origin.to_owned(),
                agent: agent.to_owned(),
                since_ms: now_ms(),
            },
        );
        true
    }

    /// The open questions, oldest first.
    pub fn asks(&self) -> Vec<DestinationAsk> {
        let mut asks: Vec<_> = lock(&self.asks).values().cloned().collect();
        asks.sort_by_key(|a| a.since_ms);
        asks
    }

    /// Close the question about `origin`.
    pub fn answered(&self, origin: &str) {
        lock(&self.asks).remove(origin);
    }

    /// Write every subscription and verified endpoint to `webhooks.json`. A failed write is
    /// logged: delivery goes on, and the next save tries again.
    pub fn save(&self) {
        let _guard = lock(&self.save_lock);
        let file = store::File {
            version: 1,
            subscriptions: self.all().iter().map(|h| store::Record::of(h)).collect(),
            verified: lock(&self.verified).iter().cloned().collect(),
        };
        if let Err(e) = store::write(&self.path, &file) {
            tracing::warn!(error = %e, "cannot save webhook subscriptions");
        }
    }

    /// What `State` shows: `destinations` (the list in force), each subscription, the
    /// questions open.
    pub fn state(&self, destinations: &[String]) -> WebhooksState {
        let subscriptions = self
            .all()
            .iter()
            .map(|h| {
                let s = h.state();
                WebhookState {
                    id: h.id.clone(),
                    event_type: h.event_type.name().to_owned(),
                    destination: h.url.origin().to_string(),
                    agent: h.owner.id.clone(),
                    agent_name: h.owner.name.clone(),
                    filter: filter_summary(&h.arguments),
                    active: s.active,
                    refresh_before_ms: s.refresh_before_ms,
                    last_delivery_ms: s.last_delivery_ms,
                    last_error: s.last_error.map(|c| c.as_str().to_owned()),
                    failed_since_ms: s.failed_since_ms,
                    delivered: s.delivered,
                }
            })
            .collect();
        WebhooksState {
            destinations: destinations.to_vec(),
            subscriptions,
            asks: self
                .asks()
                .into_iter()
                .map(|a| DestinationAskState {
                    origin: a.origin,
                    agent: a.agent,
                    since_ms: a.since_ms,
                })
                .collect(),
        }
    }

    /// Stop every delivery task and load the registry again from its file, as a restart of
    /// the daemon would (the conformance suite's restart control); the caller starts the
    /// delivery tasks again.
    pub fn reload(&self) {
        self.stop();
        let (hooks, verified) = Webhooks::load_file(&self.path);
        *lock(&self.hooks) = hooks;
        *lock(&self.verified) = verified;
    }

    /// End `hook` with a `terminated` envelope carrying `error` (one attempt: the
    /// subscription is gone whatever the receiver answers) and forget it.
    pub async fn terminate(&self, hook: &Hook, error: &rmcp::ErrorData) {
        tracing::debug!(event_type = %hook.event_type, code = error.code.0, "webhook subscription terminated");
        self.remove(&hook.id);
        let body = serde_json::json!({"type": "terminated", "error": error}).to_string();
        let secrets = hook.signing_secrets();
        let _ = send::post(
            &self.poster,
            &hook.url,
            &hook.id,
            &secrets,
            &send::control_id("terminated"),
            body.as_bytes(),
        )
        .await;
    }

    /// End every subscription (the daemon shuts down): their tasks stop, the file keeps them.
    pub fn stop(&self) {
        // Stopped first, then written: no delivery moves a cursor after the write.
        for hook in self.all() {
            hook.ended.cancel();
        }
        self.save();
    }
}
