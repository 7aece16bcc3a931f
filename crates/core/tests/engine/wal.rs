//! The newest rows live in the `-wal` file until a checkpoint: a `mode=ro` reader must see
//! them (an `immutable=1` reader would not).

use crate::common::*;
use rusqlite::{Connection, OpenFlags};
use tidings_core::EventType;
use tidings_fixtures::{
    Addr, MailProfile, MessagesProfile, NewMail, NewMessage, apple_ns_from_unix, sqlite_uri,
};

fn immutable_count(path: &std::path::Path, table: &str) -> i64 {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(sqlite_uri(path, "immutable=1"), flags).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_mail_that_exists_only_in_the_wal_is_seen() {
    let (w, mut v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let head = w.engine.stamp(EventType::MailReceived).unwrap();
    let inbox: i64 = v
        .mail
        .connection()
        .query_row("SELECT min(ROWID) FROM mailboxes", [], |r| r.get(0))
        .unwrap();
    let before = immutable_count(&w.home.envelope_index(), "messages");
    let rowid = v
        .mail
        .append(&NewMail::new(
            Addr::bare("wal@example.com"),
            "in the wal",
            inbox,
            Some(NOW_UNIX),
        ))
        .unwrap();
    assert_eq!(
        immutable_count(&w.home.envelope_index(), "messages"),
        before,
        "the row is only in -wal"
    );
    let batch = w
        .engine
        .next(&everything(EventType::MailReceived), head_cursor(&head), 10)
        .unwrap();
    assert_eq!(
        batch.events.iter().map(rowid_of).collect::<Vec<_>>(),
        vec![rowid]
    );
    assert_ne!(
        w.engine
            .stamp(EventType::MailReceived)
            .unwrap()
            .data_version,
        head.data_version
    );
}

#[test]
fn a_message_that_exists_only_in_the_wal_is_seen() {
    let (w, mut v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let head = w.engine.stamp(EventType::MessagesReceived).unwrap();
    let (chat, handle): (i64, i64) = v
        .messages
        .connection()
        .query_row(
            "SELECT chat_id, handle_id FROM chat_handle_join LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let before = immutable_count(&w.home.chat_db(), "message");
    let rowid = v
        .messages
        .append(&NewMessage::new(
            handle,
            chat,
            "wal",
            Some(apple_ns_from_unix(NOW_UNIX)),
        ))
        .unwrap();
    assert_eq!(immutable_count(&w.home.chat_db(), "message"), before);
    let batch = w
        .engine
        .next(
            &everything(EventType::MessagesReceived),
            head_cursor(&head),
            10,
        )
        .unwrap();
    assert_eq!(
        batch.events.iter().map(rowid_of).collect::<Vec<_>>(),
        vec![rowid]
    );
}

fn head_cursor(s: &tidings_core::Stamp) -> tidings_core::Cursor {
    tidings_core::Cursor {
        identity: s.identity,
        rowid: s.head,
    }
}
