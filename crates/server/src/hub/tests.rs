//! The hub's tests: the schedule's marks, the watched names, and a hub on fixture stores.

use std::ffi::OsString;

use tidings_core::Limits;
use tidings_fixtures::{Addr, MacHome, MailFixture, MailProfile, NewMail};

use super::schedule::Marks;
use super::watcher::store_names;
use super::*;

/// `ok`, the last check's error message, or `not checked yet`.
fn described(hub: &Hub, ty: EventType) -> String {
    match hub.health(ty) {
        Some(Ok(())) => "ok".to_owned(),
        Some(Err((_, message))) => message,
        None => "not checked yet".to_owned(),
    }
}
/// A hub on `paths` with an hour-long safety tick (so only file events and the live check
/// can wake a store within a test) and the given live check.
fn start_hub(paths: &StorePaths, live_check: Duration) -> (Hub, CancellationToken) {
    let engine = Arc::new(Engine::new(paths, Limits::default()));
    let shutdown = CancellationToken::new();
    let hub = Hub::start(
        engine,
        paths,
        Duration::from_secs(3600),
        live_check,
        shutdown.clone(),
        None,
    );
    (hub, shutdown)
}

#[test]
fn only_an_event_newer_than_the_read_that_found_the_last_change_is_followed_closely() {
    let t0 = std::time::Instant::now();
    let later = t0 + Duration::from_millis(1);
    let marks = |event, change| Marks { event, change };
    assert!(
        marks(Some(t0), None).event_since_change(),
        "no change found yet"
    );
    assert!(
        marks(None, None).event_since_change(),
        "a check asked for with no event"
    );
    assert!(
        !marks(Some(t0), Some(later)).event_since_change(),
        "a write of the commit already found"
    );
    assert!(
        marks(Some(later), Some(t0)).event_since_change(),
        "a new write"
    );
}

#[test]
fn only_the_db_wal_and_shm_names_count() {
    let names = store_names(Path::new("/x/Envelope Index")).unwrap();
    assert_eq!(
        names,
        vec![
            OsString::from("Envelope Index"),
            OsString::from("Envelope Index-wal"),
            OsString::from("Envelope Index-shm"),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_wakes_the_store_and_a_rebuild_too() {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    let (mut mail, inbox) = MailFixture::create_with_inbox(&home, MailProfile::V10Macos26).unwrap();
    let paths = StorePaths::for_home(dir.path());
    // A long tick: only file events can wake the store within the test's timeout.
    let (hub, shutdown) = start_hub(&paths, Duration::from_secs(3600));
    let mut rx = hub.wake_receiver(EventType::MailReceived);
    // The first tick takes the first stamp.
    tokio::time::timeout(Duration::from_secs(5), rx.changed())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(described(&hub, EventType::MailReceived), "ok");
    mail.append(&NewMail::new(
        Addr::new("ana@example.com", "Ana"),
        "hello",
        inbox,
        Some(1_700_000_000),
    ))
    .unwrap();
    tokio::time::timeout(Duration::from_secs(5), rx.changed())
        .await
        .expect("an append wakes the store")
        .unwrap();
    let _mail = mail.rebuild(&home).unwrap();
    tokio::time::timeout(Duration::from_secs(5), rx.changed())
        .await
        .expect("a rebuild wakes the store")
        .unwrap();
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_burst_is_seen_to_its_end_and_a_stream_after_it_is_woken() {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    let (mut mail, inbox) = MailFixture::create_with_inbox(&home, MailProfile::V10Macos26).unwrap();
    let paths = StorePaths::for_home(dir.path());
    let (hub, shutdown) = start_hub(&paths, Duration::from_secs(3600));
    let ty = EventType::MailReceived;
    let append = |mail: &mut MailFixture, n: usize| {
        mail.append(&NewMail::new(
            Addr::new("ana@example.com", "Ana"),
            &format!("hello {n}"),
            inbox,
            Some(1_700_000_000),
        ))
        .unwrap();
    };
    // No stream: the hub paces its checks and its watcher, and still sees the last commit
    // of a burst (a paced check must not drop the change that came during its pause).
    let mut changes = hub.changes();
    while hub.last_change_ms(ty).is_none() && hub.health(ty).is_none() {
        changes.changed().await.unwrap();
    }
    let before = hub.last_change_ms(ty);
    for n in 0..50 {
        append(&mut mail, n);
    }
    let head: i64 = mail
        .connection()
        .query_row("SELECT max(ROWID) FROM messages", [], |r| r.get(0))
        .unwrap();
    let engine_head = || match &*lock(&hub.store(ty).health) {
        Health::Ok(stamp) => stamp.head,
        _ => 0,
    };
    let seen = async {
        while engine_head() != head {
            changes.changed().await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(10), seen)
        .await
        .expect("the burst's last commit is seen with no stream");
    assert_ne!(hub.last_change_ms(ty), before);
    // A stream subscribing now is woken by the next commit, pause or not.
    let mut rx = hub.wake_receiver(ty);
    rx.borrow_and_update();
    append(&mut mail, 50);
    tokio::time::timeout(Duration::from_secs(5), rx.changed())
        .await
        .expect("a commit after subscribing wakes the stream")
        .unwrap();
    shutdown.cancel();
}

#[tokio::test]
async fn a_missing_store_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let paths = StorePaths::for_home(dir.path());
    let (hub, shutdown) = start_hub(&paths, Duration::from_secs(3600));
    let mut rx = hub.wake_receiver(EventType::MessagesReceived);
    tokio::time::timeout(Duration::from_secs(5), rx.changed())
        .await
        .unwrap()
        .unwrap();
    assert!(described(&hub, EventType::MessagesReceived).contains("not found"));
    assert!(matches!(
        hub.health(EventType::MessagesReceived),
        Some(Err((StoreErrorKind::Missing, _)))
    ));
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_stream_finds_a_change_that_raised_no_file_event() {
    // The store's directory does not exist when the hub starts, so no watcher is installed
    // until the next safety tick (an hour away): only the live check can find the store.
    let dir = tempfile::tempdir().unwrap();
    let paths = StorePaths::for_home(dir.path());
    let (hub, shutdown) = start_hub(&paths, Duration::from_millis(50));
    let mut rx = hub.wake_receiver(EventType::MailReceived);
    tokio::time::timeout(Duration::from_secs(5), rx.changed())
        .await
        .unwrap()
        .unwrap();
    assert!(described(&hub, EventType::MailReceived).contains("not found"));
    let home = MacHome::new(dir.path());
    let _mail = MailFixture::create(&home, MailProfile::V10Macos26).unwrap();
    // A check can land while the store is half built; the next one finds it whole.
    let found = async {
        while described(&hub, EventType::MailReceived) != "ok" {
            rx.changed().await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(10), found)
        .await
        .expect("the live check finds the new store");
    shutdown.cancel();
}
