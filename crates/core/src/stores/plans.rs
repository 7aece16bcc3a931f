//! Plans and compiled statements, proved on real fixture stores: each scan shape is compiled
//! once per connection, the stamp reads the head only after a commit, and the `maxAgeMs` seek
//! goes through Apple's date index on a store without `sqlite_stat1`.

use std::time::Duration;

use rusqlite::Connection;
use tidings_fixtures::{Addr, MacHome, MailFixture, MailProfile, MessagesProfile, NewMail};
use time::OffsetDateTime;

use super::mail::MailStore;
use super::messages::MessagesStore;
use super::{Source, StorePaths, Window};
use crate::filter::{MailFilter, MessagesFilter, SenderPattern};

const POLLS: i32 = 100;

/// A fake home with the fixture variety in both stores (also the `newest` tests').
pub(super) fn world() -> (tempfile::TempDir, MacHome, StorePaths) {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    tidings_fixtures::seed_variety(&home, MailProfile::V10Macos26, MessagesProfile::Tahoe, 7)
        .unwrap();
    let paths = StorePaths::for_home(&home.root);
    (dir, home, paths)
}

/// Commit one more mail to the Envelope Index under `home`; its ROWID.
pub(super) fn append_late_mail(home: &MacHome) -> i64 {
    let mut mail = MailFixture::open(home).unwrap();
    let mailbox: i64 = mail
        .connection()
        .query_row("SELECT min(ROWID) FROM mailboxes", [], |r| r.get(0))
        .unwrap();
    let from = Addr::new("late@example.com", "Late");
    mail.append(&NewMail::new(from, "late", mailbox, Some(1_700_000_000)))
        .unwrap()
}

/// The Envelope Index of `paths`, as the engine opens it.
pub(super) fn mail_store(paths: &StorePaths) -> MailStore {
    MailStore::new(
        paths.envelope_index.clone(),
        paths.accounts_map.clone(),
        Duration::from_millis(250),
    )
}

/// The chat.db of `paths`, as the engine opens it.
pub(super) fn messages_store(paths: &StorePaths) -> MessagesStore {
    MessagesStore::new(paths.chat_db.clone(), Duration::from_millis(250))
}

fn window(head: i64) -> Window {
    Window {
        after: 0,
        upto: head,
        limit: 101,
    }
}

/// Every kind of sender pattern, so the scan binds `LIKE` patterns in every position (a
/// prefix `LIKE` sits in an AND, where the planner could read its bound value).
fn patterns(prefix: &str) -> Vec<SenderPattern> {
    vec![
        SenderPattern::Exact("nobody@example.net".into()),
        SenderPattern::Domain("example.com".into()),
        SenderPattern::Prefix(prefix.into()),
    ]
}

#[test]
fn a_mail_scan_is_compiled_once_across_a_hundred_polls() {
    let (_dir, _home, paths) = world();
    let mut store = mail_store(&paths);
    let filter = MailFilter {
        senders: patterns("news"),
        allow: patterns("+1202"),
        ..MailFilter::default()
    };
    let head = store.stamp().unwrap().head;
    for _ in 0..POLLS {
        store.scan(&filter, window(head)).unwrap();
    }
    let sql = store.scan_sql(&filter, window(head));
    let (runs, reprepares) = store.statement_counters(&sql).expect("open");
    // One statement object served every poll (a fresh compile starts its run count at 0), and
    // SQLite never had to compile it again.
    assert!(
        runs >= POLLS,
        "runs {runs}: the statement was compiled again"
    );
    assert_eq!(
        reprepares, 0,
        "the cached statement expired and was recompiled"
    );
}

#[test]
fn a_messages_scan_is_compiled_once_across_a_hundred_polls() {
    let (_dir, _home, paths) = world();
    let mut store = messages_store(&paths);
    let filter = MessagesFilter {
        senders: patterns("+1202"),
        allow: patterns("ana"),
        ..MessagesFilter::default()
    };
    let head = store.stamp().unwrap().head;
    for _ in 0..POLLS {
        store.scan(&filter, window(head)).unwrap();
    }
    let sql = store.scan_sql(&filter, window(head));
    let (runs, reprepares) = store.statement_counters(&sql).expect("open");
    assert!(
        runs >= POLLS,
        "runs {runs}: the statement was compiled again"
    );
    assert_eq!(
        reprepares, 0,
        "the cached statement expired and was recompiled"
    );
}

#[test]
fn the_stamp_reads_the_head_only_after_a_commit() {
    let (_dir, home, paths) = world();
    let mut store = mail_store(&paths);
    let first = store.stamp().unwrap();
    for _ in 0..POLLS {
        assert_eq!(store.stamp().unwrap(), first);
    }
    assert_eq!(
        store.head_reads(),
        Some(1),
        "an unchanged store is not read again"
    );
    let rowid = append_late_mail(&home);
    let after = store.stamp().unwrap();
    assert_eq!(after.head, rowid, "a commit is seen at once");
    assert_ne!(after.data_version, first.data_version);
    assert_eq!(store.head_reads(), Some(2));
}

/// The plan `SQLite` chose for `sql`, one detail line per step.
fn plan(conn: &Connection, sql: &str, value: i64) -> String {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let rows = stmt
        .query_map([value], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    rows.join("\n")
}

fn no_statistics(path: &std::path::Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    let stat1: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stat1, 0, "the fixture store must have no statistics");
    conn
}

#[test]
fn the_mail_seek_uses_the_date_index_without_statistics() {
    let (_dir, home, paths) = world();
    let conn = no_statistics(&home.envelope_index());
    let mut store = mail_store(&paths);
    let sql = store.seek_statement().unwrap().expect("Apple's date index");
    let detail = plan(&conn, sql, 0);
    assert!(
        detail.contains("INDEX messages_date_received_index (date_received>?)"),
        "{detail}"
    );
    // The seek answers what the plain query answers.
    let floor = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
    let want: Option<i64> = conn
        .query_row(
            "SELECT min(ROWID) FROM messages NOT INDEXED WHERE date_received >= ?1",
            [floor.unix_timestamp()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(store.seek(floor).unwrap(), want);

    // Without the index (another schema era), the planner decides and the seek still works.
    conn.execute_batch("DROP INDEX messages_date_received_index")
        .unwrap();
    let mut store = mail_store(&paths);
    assert_eq!(store.seek_statement().unwrap(), None);
    assert_eq!(store.seek(floor).unwrap(), want);
}

#[test]
fn the_messages_seek_uses_the_date_index_without_statistics() {
    let (_dir, home, paths) = world();
    let conn = no_statistics(&home.chat_db());
    let mut store = messages_store(&paths);
    let sql = store.seek_statement().unwrap().expect("Apple's date index");
    let detail = plan(&conn, sql, 0);
    assert!(
        detail.contains("INDEX message_idx_date (date>?)"),
        "{detail}"
    );
    let floor = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
    let want: Option<i64> = conn
        .query_row(
            "SELECT min(ROWID) FROM message NOT INDEXED WHERE date >= ?1",
            [crate::dates::to_apple_nanos(floor)],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(store.seek(floor).unwrap(), want);
    conn.execute_batch("DROP INDEX message_idx_date").unwrap();
    let mut store = messages_store(&paths);
    assert_eq!(store.seek_statement().unwrap(), None);
    assert_eq!(store.seek(floor).unwrap(), want);
}

#[test]
fn the_seek_in_small_turns_finds_what_a_plain_query_finds() {
    let (_dir, home, paths) = world();
    let conn = no_statistics(&home.envelope_index());
    let mut dates: Vec<i64> = conn
        .prepare(
            "SELECT DISTINCT date_received FROM messages WHERE typeof(date_received) = 'integer'",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    dates.sort_unstable();
    let mut store = mail_store(&paths);
    // Every floor from before the first row to after the last, with turns small enough that
    // either way can finish first.
    let floors = dates
        .iter()
        .flat_map(|d| [d - 1, *d, d + 1])
        .chain([i64::MIN, i64::MAX]);
    for floor in floors {
        let want: Option<i64> = conn
            .query_row(
                "SELECT min(ROWID) FROM messages NOT INDEXED WHERE date_received >= ?1",
                [floor],
                |r| r.get(0),
            )
            .unwrap();
        for chunk in [1, 2, 3, 7, 4096] {
            assert_eq!(
                store.seek_in_chunks(floor, chunk).unwrap(),
                want,
                "floor {floor}, turns of {chunk}"
            );
        }
    }
}
