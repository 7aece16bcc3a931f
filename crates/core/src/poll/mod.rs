//! The poll engine: where a subscription starts, and the next bounded batch after a cursor.
//!
//! `events/poll` is [`Engine::poll`]; a push stream is [`Engine::start`] followed by
//! [`Engine::next`] each time its store changes. The rules:
//! - no cursor: bootstrap, no events and the head cursor;
//! - a cursor for another file (a rebuild, a store recreated on a reused inode, or the other
//!   store) or past the head: a gap, `truncated` and the head cursor;
//! - `maxAgeMs`: seek through the date index to the floor instead of walking the backlog, and
//!   set `truncated` when that skips rows;
//! - each call examines at most `Limits::scan_rows` ROWIDs and returns at most `maxEvents`
//!   events, with `hasMore` when there is more to read;
//! - a row dated long before it appeared is backfill, not news, and is skipped (see
//!   [`crate::backfill`]; the window is the caller's, off until set);
//! - a delivered row's sender on a Contacts card is named (`from.contact`) only when the caller
//!   gave the type Contacts to name from ([`Engine::set_names`]; none until set).
//!
//! The [`Engine`] holds the stores and takes their locks; the rules on one store are in
//! `poll/step.rs`, and the result's wire form in `poll/outcome.rs`.

use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use time::OffsetDateTime;

use crate::backfill::Backfill;
use crate::contacts::Contacts;
use crate::cursor::Cursor;
use crate::error::{RequestError, StoreError};
use crate::event::{EventType, Occurrence};
use crate::request::{Filter, Subscription, SubscriptionParams};
use crate::stores::mail::MailStore;
use crate::stores::messages::MessagesStore;
use crate::stores::{Source, Stamp, StorePaths};
use crate::text::MAX_QUOTE_CHARS;

mod outcome;
mod step;

pub use outcome::PollOutcome;
use step::{Step, in_step, next_on, start_on};

/// Events per call when the client does not say: a poll without `maxEvents`, and each step
/// of a push stream.
pub const DEFAULT_MAX_EVENTS: u32 = 100;
/// The most ROWIDs one call examines: a filter that matches little still answers quickly,
/// with `hasMore`.
pub const SCAN_ROWS: i64 = 20_000;

/// Bounds on the work of one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most ROWIDs one call examines.
    pub scan_rows: i64,
    /// Events per poll when the client does not say.
    pub default_max_events: u32,
    /// How long to wait on a store locked by its owner.
    pub busy_timeout: Duration,
    /// The `nextPollMs` we recommend.
    pub next_poll_ms: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            scan_rows: SCAN_ROWS,
            default_max_events: DEFAULT_MAX_EVENTS,
            busy_timeout: Duration::from_millis(250),
            next_poll_ms: 5_000,
        }
    }
}

/// Where time comes from: the real clock, or a fixed one in tests.
pub trait Clock: Send + Sync {
    /// Now, in UTC.
    fn now(&self) -> OffsetDateTime;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

/// Where a subscription begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    /// The position to deliver after.
    pub cursor: Cursor,
    /// Delivery starts later than the client's cursor (a gap or the `maxAgeMs` floor).
    pub truncated: bool,
    /// No cursor was given: nothing is replayed.
    pub bootstrap: bool,
}

/// One bounded step of delivery.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// The events, in store order, each with the cursor after it.
    pub events: Vec<Occurrence>,
    /// The position after this batch (safe to persist).
    pub cursor: Cursor,
    /// There is more to read now.
    pub has_more: bool,
    /// The store was replaced since the cursor: delivery restarts at its head.
    pub truncated: bool,
}

/// The stores, kept warm, and the rules for reading them.
pub struct Engine {
    mail: Mutex<MailStore>,
    messages: Mutex<MessagesStore>,
    /// The backfill guard of each type, in `EventType::ALL` order.
    backfill: [Mutex<Backfill>; EventType::COUNT],
    limits: Limits,
    clock: Arc<dyn Clock>,
    /// Per type (in `EventType::ALL` order), why the last scan failed; `None` when it worked
    /// or none ran. A cheap stamp can work while every scan fails, so status needs both.
    last_scan_error: [Mutex<Option<String>>; EventType::COUNT],
    accounts_map: std::path::PathBuf,
    /// Per type (in `EventType::ALL` order), the Contacts its senders are named from
    /// (`from.contact`); `None`, as until [`Engine::set_names`] is called, names no one.
    names: [RwLock<Option<Arc<Contacts>>>; EventType::COUNT],
}

impl Engine {
    /// An engine over the stores at `paths`. Nothing is opened until first use, so a missing
    /// store is an error of the call that needs it, not of start-up.
    pub fn new(paths: &StorePaths, limits: Limits) -> Engine {
        Engine {
            mail: Mutex::new(MailStore::new(
                paths.envelope_index.clone(),
                paths.accounts_map.clone(),
                limits.busy_timeout,
            )),
            messages: Mutex::new(MessagesStore::new(
                paths.chat_db.clone(),
                limits.busy_timeout,
            )),
            backfill: Default::default(),
            limits,
            clock: Arc::new(SystemClock),
            last_scan_error: Default::default(),
            accounts_map: paths.accounts_map.clone(),
            names: Default::default(),
        }
    }

    /// Name the senders of `ty`'s events from `contacts` (`from.contact`, when a card holds
    /// the sender's handle), or from nothing (`None`, as until this is called). The caller
    /// sets this from the per-type switch (`contact_names`) and the Contacts in force.
    pub fn set_names(&self, ty: EventType, contacts: Option<Arc<Contacts>>) {
        *self.names[ty.index()]
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = contacts;
    }

    /// The Contacts `ty`'s senders are named from now (a cheap `Arc` copy, so a step never
    /// holds this lock while it reads a store).
    fn names_of(&self, ty: EventType) -> Option<Arc<Contacts>> {
        self.names[ty.index()]
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Set the backfill window of `ty` (`settings` `backfill_days`); `None` turns the guard
    /// off, as it is until this is called.
    pub fn set_backfill_window(&self, ty: EventType, window: Option<Duration>) {
        self.backfill_of(ty).set_window(window);
    }

    /// How many distinct rows of `ty` were skipped as backfill since the engine started.
    pub fn backfill_skipped(&self, ty: EventType) -> u64 {
        self.backfill_of(ty).skipped()
    }

    fn backfill_of(&self, ty: EventType) -> MutexGuard<'_, Backfill> {
        lock(&self.backfill[ty.index()])
    }

    /// Use `clock` instead of the system clock.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Engine {
        self.clock = clock;
        self
    }

    /// The Mail accounts the account map knows (their addresses), for the `account` argument's
    /// examples. Reads the small map file, never the index, and takes no store lock.
    pub fn mail_accounts(&self) -> Vec<String> {
        crate::stores::mail::account_names(&self.accounts_map)
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// A cheap look at the store behind `ty`: has anything changed?
    pub fn stamp(&self, ty: EventType) -> Result<Stamp, StoreError> {
        // The guard's lock first, then the store's (the order `next` takes them in), held
        // together: stamps are then observed in the order they were taken, so a head seen
        // going down is a store refilled in place, never an older stamp observed late.
        let mut backfill = self.backfill_of(ty);
        let stamp = match ty {
            EventType::MailReceived => lock(&self.mail).stamp(),
            EventType::MessagesReceived => lock(&self.messages).stamp(),
        }?;
        // The hub stamps on every change: this is when rows are first seen.
        backfill.observe(stamp.identity, stamp.head, self.clock.now());
        Ok(stamp)
    }

    /// Rows of `ty`'s store skipped because they could not be read (each counted once per
    /// file), since start-up.
    pub fn unreadable_rows(&self, ty: EventType) -> u64 {
        match ty {
            EventType::MailReceived => lock(&self.mail).unreadable_rows(),
            EventType::MessagesReceived => lock(&self.messages).unreadable_rows(),
        }
    }

    /// Resolve where `sub` starts from the client's `cursor` and `max_age_ms`.
    pub fn start(
        &self,
        sub: &Subscription,
        cursor: Option<Cursor>,
        max_age_ms: Option<u64>,
    ) -> Result<Start, RequestError> {
        let now = self.clock.now();
        match sub.filter() {
            Filter::Mail(f) => {
                let mut store = lock(&self.mail);
                if let Some(account) = &f.account
                    && store.unknown_account(account)?
                {
                    let name = crate::text::sanitize(account, MAX_QUOTE_CHARS);
                    return Err(RequestError::invalid(
                        "arguments.account",
                        format!("arguments.account: no account `{name}` in Mail's index"),
                    ));
                }
                let unknown = store.unknown_mailboxes(&f.mailboxes)?;
                if let Some(m) = unknown.first() {
                    let name = crate::text::sanitize(&m.path, MAX_QUOTE_CHARS);
                    return Err(RequestError::invalid(
                        "arguments.mailboxes",
                        format!("arguments.mailboxes: no mailbox `{name}` in Mail's index"),
                    ));
                }
                Ok(start_on(&mut *store, cursor, max_age_ms, now)?)
            }
            Filter::Messages(f) => {
                let mut store = lock(&self.messages);
                if let Some(name) = store.display_name_only(&f.chats)? {
                    let name = crate::text::sanitize(&name, MAX_QUOTE_CHARS);
                    return Err(RequestError::invalid(
                        "arguments.chats",
                        format!(
                            "arguments.chats: `{name}` is a chat's display name, which whoever \
                             made the group chose; name the chat by its identifier (the \
                             `chat.identifier` of its events, such as `chat123…` or `+1202…`)"
                        ),
                    ));
                }
                Ok(start_on(&mut *store, cursor, max_age_ms, now)?)
            }
        }
    }

    /// The next batch of at most `max_events` events after `after`.
    pub fn next(
        &self,
        sub: &Subscription,
        after: Cursor,
        max_events: u32,
    ) -> Result<Batch, StoreError> {
        let names = self.names_of(sub.event_type());
        let step = Step {
            name: sub.event_type().name(),
            max_events: max_events.max(1) as usize,
            scan_rows: self.limits.scan_rows.max(1),
            now: self.clock.now(),
            names: names.as_deref(),
        };
        let mut backfill = self.backfill_of(sub.event_type());
        let result = match sub.filter() {
            Filter::Mail(f) => in_step(&mut *lock(&self.mail), |s| {
                next_on(s, f, after, &step, &mut backfill)
            }),
            Filter::Messages(f) => in_step(&mut *lock(&self.messages), |s| {
                next_on(s, f, after, &step, &mut backfill)
            }),
        };
        *lock(self.scan_error_slot(sub.event_type())) =
            result.as_ref().err().map(std::string::ToString::to_string);
        result
    }

    /// Why the last scan of `ty`'s store failed (the error's full message, path included, for
    /// `tidings status`); `None` when the last scan worked or none ran yet.
    pub fn last_scan_error(&self, ty: EventType) -> Option<String> {
        lock(self.scan_error_slot(ty)).clone()
    }

    fn scan_error_slot(&self, ty: EventType) -> &Mutex<Option<String>> {
        &self.last_scan_error[ty.index()]
    }

    /// Answer `events/poll` for a checked subscription.
    pub fn poll(
        &self,
        sub: &Subscription,
        params: &SubscriptionParams,
    ) -> Result<PollOutcome, RequestError> {
        let start = self.start(sub, params.cursor, params.max_age_ms)?;
        let outcome = |events, cursor: Cursor, truncated, has_more| PollOutcome {
            events,
            cursor: cursor.to_string(),
            truncated,
            has_more,
            next_poll_ms: self.limits.next_poll_ms,
        };
        if start.bootstrap {
            return Ok(outcome(Vec::new(), start.cursor, false, false));
        }
        let max = params.max_events.unwrap_or(self.limits.default_max_events);
        let batch = self.next(sub, start.cursor, max)?;
        Ok(outcome(
            batch.events,
            batch.cursor,
            start.truncated || batch.truncated,
            batch.has_more,
        ))
    }
}

/// A poisoned lock only means another thread panicked mid-read; the store handle itself is
/// still sound (it reopens on the next error), so carry on.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The app's reads beside the event path (`recent.rs`): `mail` or `messages` (whichever store
/// `ty` names) on the warm store under its lock.
impl Engine {
    /// The engine's clock's now.
    pub(crate) fn clock_now(&self) -> OffsetDateTime {
        self.clock.now()
    }

    pub(crate) fn on_store<R>(
        &self,
        ty: EventType,
        mail: impl FnOnce(&mut MailStore) -> R,
        messages: impl FnOnce(&mut MessagesStore) -> R,
    ) -> R {
        match ty {
            EventType::MailReceived => mail(&mut lock(&self.mail)),
            EventType::MessagesReceived => messages(&mut lock(&self.messages)),
        }
    }
}

/// The shared read's hook (`shared.rs` builds on it): [`Engine::next`] with no filter (the
/// skip rules and the backfill guard only), then `mail` or `messages` (whichever store `ty`
/// names) on the same warm store under the same locks, reading what the caller needs about the
/// batch's rows.
impl Engine {
    pub(crate) fn next_unfiltered<R>(
        &self,
        ty: EventType,
        after: Cursor,
        max_events: u32,
        mail: impl FnOnce(&mut MailStore, &Batch) -> Result<R, StoreError>,
        messages: impl FnOnce(&mut MessagesStore, &Batch) -> Result<R, StoreError>,
    ) -> Result<(Batch, R), StoreError> {
        let names = self.names_of(ty);
        let step = Step {
            name: ty.name(),
            max_events: max_events.max(1) as usize,
            scan_rows: self.limits.scan_rows.max(1),
            now: self.clock.now(),
            names: names.as_deref(),
        };
        let mut backfill = self.backfill_of(ty);
        let result = match ty {
            EventType::MailReceived => {
                let none = crate::filter::MailFilter::default();
                in_step(&mut *lock(&self.mail), |s| {
                    let batch = next_on(s, &none, after, &step, &mut backfill)?;
                    let read = mail(s, &batch)?;
                    Ok((batch, read))
                })
            }
            EventType::MessagesReceived => {
                let none = crate::filter::MessagesFilter::default();
                in_step(&mut *lock(&self.messages), |s| {
                    let batch = next_on(s, &none, after, &step, &mut backfill)?;
                    let read = messages(s, &batch)?;
                    Ok((batch, read))
                })
            }
        };
        *lock(self.scan_error_slot(ty)) = result.as_ref().err().map(ToString::to_string);
        result
    }
}
