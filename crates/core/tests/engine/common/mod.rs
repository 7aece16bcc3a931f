//! Shared test helpers: a fake Mac home with fixture stores, an engine on it, and drains.

use std::sync::Arc;

use serde_json::Value;
use tidings_core::filter::SenderPattern;
use tidings_core::settings::AllowEntry;
use tidings_core::{
    Clock, Cursor, Engine, EventType, Limits, Occurrence, Settings, StorePaths, Subscription,
    SubscriptionParams,
};
use tidings_fixtures::{MacHome, MailProfile, MessagesProfile, Variety, seed_variety};
use time::OffsetDateTime;

/// 2030-01-01T00:00:00Z: "now" for every test engine, so undated rows have a known stamp.
pub const NOW_UNIX: i64 = 1_893_456_000;

pub struct FixedClock(pub OffsetDateTime);

impl Clock for FixedClock {
    fn now(&self) -> OffsetDateTime {
        self.0
    }
}

pub fn now() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(NOW_UNIX).unwrap()
}

pub struct World {
    pub dir: tempfile::TempDir,
    pub home: MacHome,
    pub engine: Engine,
}

impl World {
    /// Fixture stores with the variety, and an engine with `limits` over them.
    pub fn variety(
        mail: MailProfile,
        messages: MessagesProfile,
        limits: Limits,
    ) -> (World, Variety) {
        let dir = tempfile::tempdir().unwrap();
        let home = MacHome::new(dir.path());
        let variety = seed_variety(&home, mail, messages, 7).unwrap();
        let engine = engine_for(&home, limits);
        (World { dir, home, engine }, variety)
    }

    pub fn cursor_at(&self, ty: EventType, rowid: i64) -> Cursor {
        Cursor {
            identity: self.engine.stamp(ty).unwrap().identity,
            rowid,
        }
    }

    /// Every event after `from`, following `hasMore` until the store is drained.
    pub fn drain(
        &self,
        sub: &Subscription,
        from: Cursor,
        max_events: u32,
    ) -> (Vec<Occurrence>, Cursor, usize) {
        let mut cursor = from;
        let mut events = Vec::new();
        let mut calls = 0;
        loop {
            let batch = self.engine.next(sub, cursor, max_events).unwrap();
            calls += 1;
            assert!(!batch.truncated, "unexpected gap while draining");
            events.extend(batch.events);
            cursor = batch.cursor;
            if !batch.has_more {
                return (events, cursor, calls);
            }
            assert!(calls < 100_000, "drain does not make progress");
        }
    }
}

pub fn engine_for(home: &MacHome, limits: Limits) -> Engine {
    Engine::new(&StorePaths::for_home(&home.root), limits).with_clock(Arc::new(FixedClock(now())))
}

/// Every sender the fixtures and these tests write rows from: their domains (with subdomains)
/// and North American phone numbers.
pub const EVERY_FIXTURE_SENDER: &[&str] = &[
    "example.com",
    "example.org",
    "example.net",
    "acme.test",
    "deals.test",
    "evil.test",
    "nowhere.test",
    "other.test",
    "+1*",
];

/// A subscription that lets every fixture sender through, so only the skip rules decide. A
/// subscription must be bounded by sender, so "everyone" is the user's allowlist naming every
/// sender the fixtures use, checked like any other.
pub fn everything(ty: EventType) -> Subscription {
    let settings = settings(EVERY_FIXTURE_SENDER, EVERY_FIXTURE_SENDER);
    Subscription::new(ty.name(), &serde_json::Map::new(), &settings).unwrap()
}

/// Settings with both types on and the given allowlists.
pub fn settings(mail_allow: &[&str], messages_allow: &[&str]) -> Settings {
    let entries = |list: &[&str]| {
        list.iter()
            .map(|a| AllowEntry::Sender(SenderPattern::parse_allow(a).unwrap()))
            .collect()
    };
    let mut s = Settings::default();
    s.mail.enabled = true;
    s.messages.enabled = true;
    s.mail.allow = entries(mail_allow);
    s.messages.allow = entries(messages_allow);
    s
}

/// A checked subscription from wire-shaped params.
#[allow(clippy::needless_pass_by_value)] // tests pass `json!` literals
pub fn subscribe(settings: &Settings, params: Value) -> (Subscription, SubscriptionParams) {
    let p = SubscriptionParams::parse(&params).unwrap();
    let sub = Subscription::new(&p.name, &p.arguments, settings).unwrap();
    (sub, p)
}

pub fn rowid_of(o: &Occurrence) -> i64 {
    o.cursor.parse::<Cursor>().unwrap().rowid
}

pub fn limits() -> Limits {
    Limits::default()
}
