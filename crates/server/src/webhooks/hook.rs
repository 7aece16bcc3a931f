//! One webhook subscription ([`Hook`]): its key, the secrets that sign its deliveries, where
//! delivery stands (the cursor, active or suspended) and how the last attempts went.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tidings_core::{Cursor, EventType};
use tidings_platform::identity::AgentIdentity;
use tidings_webhook::{CallbackUrl, Category, Secret};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::agents::Agent;
use crate::state::now_ms;

/// How long a replaced secret keeps signing beside the new one, so a receiver that is still
/// being switched over verifies either.
pub const ROTATION_GRACE_MS: u64 = 10 * 60 * 1000;

/// Who a subscription belongs to: the agent whose grant applies (its identity key is the
/// principal of the subscription's key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The agent's identity key (`exe:…`, `token:NAME`, `signed:TEAM:ID`).
    pub key: String,
    /// Its id, as `tidings agents` lists it.
    pub id: String,
    /// How the user is shown it.
    pub name: String,
}

impl Owner {
    /// The agent it is, for the grant and the gate (looked up by its identity key).
    pub fn agent(&self) -> Agent {
        Agent {
            identity: AgentIdentity {
                key: self.key.clone(),
                name: self.name.clone(),
                signer: None,
                program: None,
            },
            id: self.id.clone(),
        }
    }
}

/// A webhook subscription. The key parts never change; a refresh replaces the secret and the
/// TTL and reactivates delivery.
pub struct Hook {
    /// `sub_` and 16 hex digits of the key's hash.
    pub id: String,
    pub owner: Owner,
    pub event_type: EventType,
    pub arguments: Map<String, Value>,
    pub url: CallbackUrl,
    state: Mutex<HookState>,
    /// Wakes the delivery task: a refresh, or the user ended the subscription.
    pub(crate) nudge: Notify,
    /// Cancelled when the subscription ends (unsubscribed, expired, terminated, shutdown).
    pub(crate) ended: CancellationToken,
}

/// What changes as a subscription lives.
#[derive(Clone, Debug)]
pub struct HookState {
    pub secret: Secret,
    /// The secret a refresh replaced, and until when (ms since the epoch) it still signs.
    pub previous: Option<(Secret, u64)>,
    /// When the subscription lapses unless refreshed (ms since the epoch); `None`: never.
    pub refresh_before_ms: Option<u64>,
    /// Everything up to here was delivered or given up on; `None` until the start is resolved
    /// (the store could not be read when the subscription was made).
    pub cursor: Option<Cursor>,
    /// The client's cursor and `maxAgeMs`, to resolve the start from once the store is back.
    pub requested: (Option<Cursor>, Option<u64>),
    /// Deliveries go out; false once the retries of an event ran out (suspended) until a
    /// refresh, or the periodic retry, gets through.
    pub active: bool,
    pub last_delivery_ms: Option<u64>,
    pub last_error: Option<Category>,
    /// Since when deliveries fail (ms since the epoch); `None` while they succeed.
    pub failed_since_ms: Option<u64>,
    /// Events delivered (2xx), over the subscription's life.
    pub delivered: u64,
    /// A gap to tell the receiver about (`{"type":"gap"}`) before the next event.
    pub gap: bool,
}

impl Hook {
    /// A subscription in `state`.
    pub fn new(
        id: String,
        owner: Owner,
        event_type: EventType,
        arguments: Map<String, Value>,
        url: CallbackUrl,
        state: HookState,
    ) -> Arc<Hook> {
        Arc::new(Hook {
            id,
            owner,
            event_type,
            arguments,
            url,
            state: Mutex::new(state),
            nudge: Notify::new(),
            ended: CancellationToken::new(),
        })
    }

    /// Its state, to read or change.
    pub fn state(&self) -> MutexGuard<'_, HookState> {
        crate::sync::lock(&self.state)
    }

    /// The secrets that sign a delivery now: the current one, and the replaced one while its
    /// grace lasts.
    pub fn signing_secrets(&self) -> Vec<Secret> {
        let state = self.state();
        let mut secrets = vec![state.secret.clone()];
        if let Some((old, until)) = &state.previous
            && now_ms() < *until
        {
            secrets.push(old.clone());
        }
        secrets
    }

    /// Whether its TTL ran out at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        self.state().refresh_before_ms.is_some_and(|t| now_ms >= t)
    }
}

impl HookState {
    /// A new subscription's state.
    pub fn new(
        secret: Secret,
        refresh_before_ms: Option<u64>,
        cursor: Option<Cursor>,
        requested: (Option<Cursor>, Option<u64>),
    ) -> HookState {
        HookState {
            secret,
            previous: None,
            refresh_before_ms,
            cursor,
            requested,
            active: true,
            last_delivery_ms: None,
            last_error: None,
            failed_since_ms: None,
            delivered: 0,
            gap: false,
        }
    }

    /// A refresh: the new secret (the old one signs beside it for [`ROTATION_GRACE_MS`] if it
    /// differs), the new TTL, and delivery active again.
    pub fn refresh(&mut self, secret: Secret, refresh_before_ms: Option<u64>) {
        if secret.to_text() != self.secret.to_text() {
            let old = std::mem::replace(&mut self.secret, secret);
            self.previous = Some((old, now_ms() + ROTATION_GRACE_MS));
        }
        self.refresh_before_ms = refresh_before_ms;
        self.active = true;
    }

    /// What the file and the status show of where delivery stands, to tell whether a step
    /// changed anything.
    pub fn mark(&self) -> (Option<Cursor>, bool, Option<Category>, u64, bool) {
        (
            self.cursor,
            self.active,
            self.last_error,
            self.delivered,
            self.gap,
        )
    }

    /// An event (or envelope) was accepted.
    pub fn delivered(&mut self) {
        self.last_delivery_ms = Some(now_ms());
        self.last_error = None;
        self.failed_since_ms = None;
        self.delivered += 1;
    }

    /// An attempt failed with `category`.
    pub fn failed(&mut self, category: Category) {
        self.last_error = Some(category);
        self.failed_since_ms.get_or_insert_with(now_ms);
    }
}

/// `sub_` and 16 hex digits of SHA-256 over the key: the principal, the URL, the type and the
/// arguments as canonical JSON (object keys sorted, which `serde_json`'s map keeps). Stable
/// across refreshes and restarts; a routing handle, never accepted as input.
pub fn subscription_id(
    principal: &str,
    url: &CallbackUrl,
    ty: EventType,
    arguments: &serde_json::Map<String, Value>,
) -> String {
    let key = json!([principal, url.as_str(), ty.name(), arguments]).to_string();
    let digest = Sha256::digest(key.as_bytes());
    let mut id = String::from("sub_");
    for b in &digest[..8] {
        let _ = write!(id, "{b:02x}");
    }
    id
}
