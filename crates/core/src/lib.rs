//! Tidings' engine: read Apple Mail's and Messages' stores, and answer event subscriptions.
//!
//! Synchronous and runtime-free: the server calls it from blocking tasks. Module map, from the
//! top down: each module imports only modules listed after it, so there are no cycles
//! (`shared` builds on `poll`'s engine, which knows nothing of it).
//! - [`shared`]: one unfiltered read per change, matched in memory per subscription (fan-out).
//! - [`recent`]: the senders heard from lately, for the app's allowlist picker (never MCP).
//! - [`poll`]: the [`Engine`]: bootstrap, gaps, `maxAgeMs`, bounded batches.
//! - [`request`]: `events/poll` / `events/stream` parameters and the checked [`Subscription`].
//! - `stores` (private): the Envelope Index and chat.db readers, read-only, with their skip
//!   rules; only [`StorePaths`], [`Stamp`] and the bug report's [`store_profile`] leave the
//!   crate.
//! - [`descriptor`]: the `events/list` descriptors (argument and payload schemas).
//! - [`allowlist`]: the allowlist in words for the app: entry kinds, checks, reach sentences.
//! - [`settings`]: what the user decides, saved as TOML: the model, its errors, the file's
//!   text (core writes no file; the caller writes the text it is given).
//! - [`contacts`]: the user's Contacts stores read-only: people, groups, their handles in the
//!   stores' form, and the person and group allowlist entries they resolve.
//! - [`backfill`]: the guard that keeps rows dated long before they appeared from becoming
//!   events.
//! - [`cursor`]: `v2.<dev>-<ino>-<birth>.<rowid>` and file identity.
//! - [`error`]: store errors and request errors.
//! - [`filter`]: sender patterns, mailbox references, per-type filters.
//! - [`event`]: the two event types, their categories and the occurrence they produce.
//! - [`dates`], [`text`]: store dates to ISO 8601; untrusted text made safe to pass on.
//!
//! ```no_run
//! use tidings_core::{Engine, Limits, Settings, StorePaths, Subscription, SubscriptionParams};
//! let engine = Engine::new(&StorePaths::for_home("/Users/ana".as_ref()), Limits::default());
//! let mut settings = Settings::default();
//! settings.mail.enabled = true;
//! let params = SubscriptionParams::parse(&serde_json::json!({
//!     "name": "mail.received", "arguments": {"domains": ["example.com"]}
//! })).unwrap();
//! let sub = Subscription::new(&params.name, &params.arguments, &settings).unwrap();
//! let first = engine.poll(&sub, &params).unwrap(); // bootstrap: no events, a cursor
//! println!("resume from {}", first.cursor);
//! ```

#![deny(missing_docs)]

pub mod allowlist;
pub mod backfill;
pub mod contacts;
pub mod cursor;
pub mod dates;
pub mod descriptor;
pub mod error;
pub mod event;
pub mod filter;
pub mod poll;
pub mod recent;
pub mod request;
pub mod settings;
pub mod shared;
mod stores;
pub mod text;

pub use cursor::{Cursor, FileIdentity};
pub use error::{RequestError, StoreError, StoreErrorKind};
pub use event::{EventType, Occurrence};
pub use poll::{Batch, Clock, Engine, Limits, PollOutcome, Start, SystemClock};
pub use recent::RecentSender;
pub use request::{Filter, Subscription, SubscriptionParams};
pub use settings::{HttpSettings, Settings};
pub use shared::{Pick, Picks, Shared};
pub use stores::profile::{
    SchemaProfile, TableProfile, profile as store_profile, round_two_digits,
};
pub use stores::{Stamp, StorePaths};
