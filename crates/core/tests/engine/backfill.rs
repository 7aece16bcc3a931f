//! Backfill is not news, on real fixture stores: old-dated rows appearing among new ones are
//! skipped and counted once; rows delayed by a sleeping laptop are delivered; window 0 turns
//! the guard off. Poll and push share `Engine::next`, so both see the same.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use serde_json::json;
use tidings_core::{Clock, Cursor, Engine, EventType, StorePaths};
use tidings_fixtures::{
    AccountKind, Addr, BulkSpec, MacHome, MailFixture, MailProfile, MessagesFixture,
    MessagesProfile, NewChat, NewMail, NewMessage, Service, apple_ns_from_unix, bulk_mail,
};
use time::OffsetDateTime;

const DAY: i64 = 86_400;
const WEEK: Duration = Duration::from_secs(7 * DAY as u64);
const DAY_DURATION: Duration = Duration::from_secs(DAY as u64);

/// A clock the test moves, as a laptop's wakes.
struct MovingClock(Mutex<OffsetDateTime>);

impl Clock for MovingClock {
    fn now(&self) -> OffsetDateTime {
        *self.0.lock().unwrap()
    }
}

struct Phone {
    dir: tempfile::TempDir,
    db: MessagesFixture,
    handle: i64,
    chat: i64,
    clock: Arc<MovingClock>,
    engine: Engine,
}

impl Phone {
    fn new(window: Option<Duration>) -> Phone {
        let dir = tempfile::tempdir().unwrap();
        let home = MacHome::new(dir.path());
        let mut db = MessagesFixture::create(&home, MessagesProfile::Tahoe).unwrap();
        let handle = db.add_handle("+12025550143", Service::IMessage).unwrap();
        let chat = db
            .add_chat(&NewChat {
                identifier: "+12025550143".into(),
                display_name: None,
                group: false,
                service: Service::IMessage,
                participants: vec![handle],
            })
            .unwrap();
        let clock = Arc::new(MovingClock(Mutex::new(now())));
        let engine =
            Engine::new(&StorePaths::for_home(&home.root), limits()).with_clock(clock.clone());
        engine.set_backfill_window(EventType::MessagesReceived, window);
        let mut phone = Phone {
            dir,
            db,
            handle,
            chat,
            clock,
            engine,
        };
        // History from before the daemon started, up to an hour ago.
        for i in 0..5 {
            phone.text(NOW_UNIX - 3_600 - 600 * i);
        }
        phone
    }

    /// A message dated `unix`.
    fn text(&mut self, unix: i64) -> i64 {
        self.db
            .append(&NewMessage::new(
                self.handle,
                self.chat,
                "hi",
                Some(apple_ns_from_unix(unix)),
            ))
            .unwrap()
    }

    fn set_now(&self, unix: i64) {
        *self.clock.0.lock().unwrap() = OffsetDateTime::from_unix_timestamp(unix).unwrap();
    }

    /// What the hub does when the store's directory changes.
    fn hub_looks(&self) -> Cursor {
        let stamp = self.engine.stamp(EventType::MessagesReceived).unwrap();
        Cursor {
            identity: stamp.identity,
            rowid: stamp.head,
        }
    }

    /// Every event after `from`, in batches of `max`, as a stream would read them.
    fn drain(&self, from: Cursor, max: u32) -> Vec<i64> {
        let sub = everything(EventType::MessagesReceived);
        let mut cursor = from;
        let mut rows = Vec::new();
        for _ in 0..10_000 {
            let batch = self.engine.next(&sub, cursor, max).unwrap();
            assert!(!batch.truncated, "backfill is never a gap");
            rows.extend(batch.events.iter().map(rowid_of));
            cursor = batch.cursor;
            if !batch.has_more {
                return rows;
            }
        }
        panic!("no progress");
    }
}

/// A burst of `n` rows dated a year and more ago: an iCloud sync.
fn sync_old_history(phone: &mut Phone, n: i64) -> Vec<i64> {
    (0..n)
        .map(|i| phone.text(NOW_UNIX - 400 * DAY + 3_600 * i))
        .collect()
}

#[test]
fn a_burst_of_old_rows_inside_new_ones_is_skipped_and_counted_once() {
    let mut phone = Phone::new(Some(WEEK));
    let start = phone.hub_looks();
    let first = phone.text(NOW_UNIX - 10);
    let old = sync_old_history(&mut phone, 300);
    // Eight days old: outside the week.
    let stale = phone.text(NOW_UNIX - 8 * DAY);
    let last = phone.text(NOW_UNIX - 5);
    phone.hub_looks();
    assert_eq!(phone.drain(start, 100), [first, last]);
    assert_eq!(
        phone.engine.backfill_skipped(EventType::MessagesReceived),
        old.len() as u64 + 1
    );
    // Another stream over the same rows, and a poll: the same events, no double count.
    assert_eq!(phone.drain(start, 7), [first, last]);
    let (sub, p) = subscribe(
        &settings(&[], &[]),
        json!({"name": "messages.received", "cursor": start.to_string(),
               "maxEvents": 1000, "arguments": {"from": ["+12025550143"]}}),
    );
    let out = phone.engine.poll(&sub, &p).unwrap();
    assert_eq!(
        out.events.iter().map(rowid_of).collect::<Vec<_>>(),
        [first, last]
    );
    assert!(!out.truncated);
    assert_eq!(
        phone.engine.backfill_skipped(EventType::MessagesReceived),
        301
    );
    assert!(stale > first);
}

#[test]
fn a_burst_is_caught_by_the_dates_around_it_when_the_daemon_did_not_see_it_arrive() {
    // The daemon starts after the sync: no first-seen time, only the store's own dates.
    let mut phone = Phone::new(Some(WEEK));
    let before = phone.hub_looks();
    let first = phone.text(NOW_UNIX - 10);
    sync_old_history(&mut phone, 50);
    let last = phone.text(NOW_UNIX - 5);
    let fresh = Engine::new(&StorePaths::for_home(phone.dir.path()), limits())
        .with_clock(phone.clock.clone());
    fresh.set_backfill_window(EventType::MessagesReceived, Some(WEEK));
    fresh.stamp(EventType::MessagesReceived).unwrap();
    let sub = everything(EventType::MessagesReceived);
    let batch = fresh.next(&sub, before, 1000).unwrap();
    assert_eq!(
        batch.events.iter().map(rowid_of).collect::<Vec<_>>(),
        [first, last]
    );
    assert_eq!(fresh.backfill_skipped(EventType::MessagesReceived), 50);
}

#[test]
fn rows_two_days_old_after_a_sleep_are_delivered() {
    let mut phone = Phone::new(Some(WEEK));
    let start = phone.hub_looks();
    // The laptop sleeps two days; on wake Messages fetches what was sent meanwhile.
    phone.set_now(NOW_UNIX + 2 * DAY);
    let delayed: Vec<i64> = (0..5).map(|i| phone.text(NOW_UNIX + 600 * i)).collect();
    phone.hub_looks();
    assert_eq!(phone.drain(start, 100), delayed);
    // A client that reads ten days later still gets them: they arrived as news.
    phone.set_now(NOW_UNIX + 12 * DAY);
    assert_eq!(phone.drain(start, 2), delayed);
    assert_eq!(
        phone.engine.backfill_skipped(EventType::MessagesReceived),
        0
    );
}

#[test]
fn window_zero_delivers_everything() {
    let mut phone = Phone::new(None);
    let start = phone.hub_looks();
    let first = phone.text(NOW_UNIX - 10);
    let old = sync_old_history(&mut phone, 20);
    phone.hub_looks();
    let mut expected = vec![first];
    expected.extend(old);
    assert_eq!(phone.drain(start, 100), expected);
    assert_eq!(
        phone.engine.backfill_skipped(EventType::MessagesReceived),
        0
    );
}

#[test]
fn an_added_mail_account_does_not_replay_its_archive() {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    let mut mail = MailFixture::create(&home, MailProfile::V10Macos26).unwrap();
    let work = mail
        .add_account("me@example.net", AccountKind::Imap)
        .unwrap();
    let inbox = mail.add_mailbox(&work, "INBOX").unwrap();
    let send = |mail: &mut MailFixture, mailbox, subject: &str, unix| {
        mail.append(&NewMail::new(
            Addr::new("ana@example.com", "Ana"),
            subject,
            mailbox,
            Some(unix),
        ))
        .unwrap()
    };
    send(&mut mail, inbox, "yesterday", NOW_UNIX - DAY);
    let engine = engine_for(&home, limits());
    engine.set_backfill_window(EventType::MailReceived, Some(WEEK));
    let stamp = engine.stamp(EventType::MailReceived).unwrap();
    let start = Cursor {
        identity: stamp.identity,
        rowid: stamp.head,
    };
    let home_account = mail
        .add_account("me@example.org", AccountKind::Imap)
        .unwrap();
    let archive = mail.add_mailbox(&home_account, "INBOX").unwrap();
    for i in 0..40 {
        send(
            &mut mail,
            archive,
            &format!("archive {i}"),
            NOW_UNIX - 900 * DAY + i * DAY,
        );
    }
    let news = send(&mut mail, inbox, "news", NOW_UNIX - 60);
    engine.stamp(EventType::MailReceived).unwrap();
    let sub = everything(EventType::MailReceived);
    let batch = engine.next(&sub, start, 100).unwrap();
    assert_eq!(
        batch.events.iter().map(rowid_of).collect::<Vec<_>>(),
        [news]
    );
    assert_eq!(engine.backfill_skipped(EventType::MailReceived), 40);
}

#[test]
fn a_wide_catch_up_reads_its_dates_beside_the_scan_and_judges_alike() {
    // 12,000 mails dated over two years, one in twenty from the watched domain, and a burst of
    // 300 rows in the middle redated a year back (an account's archive): windows wider than the
    // guard reads after the scan (`dates::AHEAD_MIN_ROWS`), so their dates are read on a second
    // connection while the scan runs, to the window's end when a filter matches little, and
    // stopped early when the scan fills its batch.
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    let spec = BulkSpec {
        messages: 12_000,
        target_domain: "watched.example.com".into(),
        target_fraction: 0.05,
        seed: 14,
    };
    bulk_mail(&home, MailProfile::V10Macos26, &spec).unwrap();
    let burst = 6_000..=6_300;
    let store = rusqlite::Connection::open(home.envelope_index()).unwrap();
    store
        .execute(
            "UPDATE messages SET date_received = date_received - ?1 \
             WHERE ROWID BETWEEN ?2 AND ?3",
            [400 * DAY, *burst.start(), *burst.end()],
        )
        .unwrap();
    let watched: Vec<i64> = store
        .prepare(
            "SELECT m.ROWID FROM messages m JOIN addresses a ON a.ROWID = m.sender \
             WHERE a.address LIKE '%@watched.example.com' ORDER BY m.ROWID",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let (old, news): (Vec<i64>, Vec<i64>) = watched.iter().partition(|r| burst.contains(r));
    assert!(
        old.len() > 5 && news.len() > 400,
        "{} old, {}",
        old.len(),
        news.len()
    );

    let engine = engine_for(&home, limits());
    engine.set_backfill_window(EventType::MailReceived, Some(60 * DAY_DURATION));
    let stamp = engine.stamp(EventType::MailReceived).unwrap();
    let start = Cursor {
        identity: stamp.identity,
        rowid: 0,
    };
    let (sub, p) = subscribe(
        &settings(&[], &[]),
        json!({"name": "mail.received", "cursor": start.to_string(), "maxEvents": 1000,
               "arguments": {"domains": ["watched.example.com"]}}),
    );
    let mut got = Vec::new();
    let mut p = p;
    loop {
        let out = engine.poll(&sub, &p).unwrap();
        got.extend(out.events.iter().map(rowid_of));
        if !out.has_more {
            break;
        }
        p.cursor = Some(out.cursor.parse().unwrap());
    }
    assert_eq!(got, news);
    assert_eq!(
        engine.backfill_skipped(EventType::MailReceived),
        old.len() as u64
    );
    // Twenty at a time: each batch ends long before its window does, and the reader beside
    // the scan is stopped there.
    p.cursor = Some(start);
    p.max_events = Some(20);
    let mut twenties = Vec::new();
    loop {
        let out = engine.poll(&sub, &p).unwrap();
        assert!(out.events.len() <= 20);
        twenties.extend(out.events.iter().map(rowid_of));
        if !out.has_more {
            break;
        }
        p.cursor = Some(out.cursor.parse().unwrap());
    }
    assert_eq!(twenties, news);
}
