//! The columns the queries read are the columns the schema probe requires: a store with
//! exactly those is read in full, a store missing one is a `store_schema` error naming it, and
//! a scan that fails while the cheap stamp works is remembered for status (issue 7.3).

use crate::common::*;
use rusqlite::Connection;
use serde_json::json;
use tidings_core::{Cursor, EventType, RequestError, StoreError};
use tidings_fixtures::MacHome;

/// The smallest chat.db Tidings reads: every column the probe requires, nothing else.
const MINIMAL_CHAT_DB: &str = "
    CREATE TABLE message (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, handle_id INTEGER,
        service TEXT, date INTEGER, is_from_me INTEGER);
    CREATE TABLE handle (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT);
    CREATE TABLE chat (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, style INTEGER,
        chat_identifier TEXT, display_name TEXT, service_name TEXT);
    CREATE TABLE chat_message_join (chat_id INTEGER, message_id INTEGER);
    INSERT INTO handle (id) VALUES ('+12025550101');
    INSERT INTO chat (guid, style, chat_identifier, display_name, service_name)
        VALUES ('any;-;+12025550101', 45, '+12025550101', NULL, 'iMessage');
    INSERT INTO message (guid, handle_id, service, date, is_from_me)
        VALUES ('G-1', 1, NULL, 738936000000000000, 0);
    INSERT INTO chat_message_join VALUES (1, 1);
";

/// The smallest Envelope Index Tidings reads.
const MINIMAL_ENVELOPE_INDEX: &str = "
    CREATE TABLE messages (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, global_message_id INTEGER,
        sender INTEGER, subject_prefix TEXT, subject INTEGER, date_sent INTEGER,
        date_received INTEGER, mailbox INTEGER, read INTEGER, flagged INTEGER, deleted INTEGER);
    CREATE TABLE addresses (ROWID INTEGER PRIMARY KEY, address TEXT, comment TEXT);
    CREATE TABLE subjects (ROWID INTEGER PRIMARY KEY, subject TEXT);
    CREATE TABLE mailboxes (ROWID INTEGER PRIMARY KEY, url TEXT);
    CREATE TABLE recipients (ROWID INTEGER PRIMARY KEY, message INTEGER, address INTEGER,
        type INTEGER, position INTEGER);
    INSERT INTO addresses VALUES (1, 'ana@example.com', 'Ana'), (2, 'me@example.com', NULL);
    INSERT INTO subjects VALUES (1, 'Hello');
    INSERT INTO mailboxes VALUES (1, 'imap://5D8F0A52-0B5B-4C1B-9C51-2D3A1B6C7E8F/INBOX');
    INSERT INTO messages (global_message_id, sender, subject_prefix, subject, date_sent,
        date_received, mailbox, read, flagged, deleted)
        VALUES (7, 1, '', 1, 1717243200, 1717243200, 1, 0, 0, 0);
    INSERT INTO recipients VALUES (1, 1, 2, 0, 0);
";

fn home_with(chat_db: Option<&str>, envelope_index: Option<&str>) -> (tempfile::TempDir, MacHome) {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    if let Some(sql) = chat_db {
        std::fs::create_dir_all(home.messages_dir()).unwrap();
        Connection::open(home.chat_db())
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }
    if let Some(sql) = envelope_index {
        std::fs::create_dir_all(home.mail_data_dir()).unwrap();
        Connection::open(home.envelope_index())
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }
    (dir, home)
}

#[allow(clippy::needless_pass_by_value)] // tests pass `json!` literals
fn poll(
    engine: &tidings_core::Engine,
    ty: EventType,
    args: serde_json::Value,
) -> Result<tidings_core::PollOutcome, RequestError> {
    let s = settings(&["example.com"], &["+1202555*"]);
    let identity = engine.stamp(ty).unwrap().identity;
    let cursor = Cursor { identity, rowid: 0 }.to_string();
    let (sub, p) = subscribe(
        &s,
        json!({"name": ty.name(), "arguments": args, "cursor": cursor}),
    );
    engine.poll(&sub, &p)
}

#[test]
fn a_store_with_exactly_the_required_columns_is_read_with_every_filter() {
    let (_dir, home) = home_with(Some(MINIMAL_CHAT_DB), Some(MINIMAL_ENVELOPE_INDEX));
    let engine = engine_for(&home, limits());
    let ty = EventType::MessagesReceived;
    let out = poll(&engine, ty, json!({"from": ["+12025550101"]})).unwrap();
    assert_eq!(out.events.len(), 1);
    assert_eq!(out.events[0].data["from"]["service"], "iMessage");
    for args in [json!({}), json!({"chats": ["+12025550101"]})] {
        let r = poll(&engine, ty, args.clone());
        assert!(!matches!(r, Err(RequestError::Store(_))), "{args}: {r:?}");
    }
    let ty = EventType::MailReceived;
    let out = poll(&engine, ty, json!({"domains": ["example.com"]})).unwrap();
    assert_eq!(out.events.len(), 1);
    assert_eq!(out.events[0].data["subject"], "Hello");
    for args in [json!({}), json!({"mailboxes": ["INBOX"]})] {
        let r = poll(&engine, ty, args.clone());
        assert!(!matches!(r, Err(RequestError::Store(_))), "{args}: {r:?}");
    }
}

#[test]
fn a_chat_db_without_a_column_the_scan_reads_is_a_schema_error_naming_it() {
    let without = MINIMAL_CHAT_DB
        .replace(", service_name TEXT", "")
        .replace(", service_name)", ")")
        .replace(", 'iMessage');", ");");
    let (_dir, home) = home_with(Some(&without), None);
    let engine = engine_for(&home, limits());
    let err = engine.stamp(EventType::MessagesReceived).unwrap_err();
    assert!(matches!(err, StoreError::Schema { .. }), "{err:?}");
    assert_eq!(err.reason(), "store_schema");
    assert!(
        err.public_message().contains("`chat.service_name`"),
        "{}",
        err.public_message()
    );
}

#[test]
fn an_optional_table_without_a_column_we_read_is_a_schema_error_naming_it() {
    let with_labels = format!("{MINIMAL_ENVELOPE_INDEX} CREATE TABLE labels (message_id INTEGER);");
    let (_dir, home) = home_with(None, Some(&with_labels));
    let engine = engine_for(&home, limits());
    let err = engine.stamp(EventType::MailReceived).unwrap_err();
    assert!(
        err.public_message().contains("`labels.mailbox_id`"),
        "{}",
        err.public_message()
    );
}

#[test]
fn a_scan_that_fails_while_the_stamp_works_is_remembered_for_status() {
    // The join is a view that fails when read (integer overflow): the stamp never reads it.
    let failing = MINIMAL_CHAT_DB.replace(
        "CREATE TABLE chat_message_join (chat_id INTEGER, message_id INTEGER);",
        "CREATE TABLE cmj (chat_id INTEGER, message_id INTEGER); \
         CREATE VIEW chat_message_join AS SELECT chat_id, message_id FROM cmj \
         WHERE abs(-9223372036854775807 - 1) > 0;",
    );
    let failing = failing.replace(
        "INSERT INTO chat_message_join VALUES (1, 1);",
        "INSERT INTO cmj VALUES (1, 1);",
    );
    let (_dir, home) = home_with(Some(&failing), None);
    let engine = engine_for(&home, limits());
    let ty = EventType::MessagesReceived;
    assert_eq!(engine.last_scan_error(ty), None);
    let err = poll(&engine, ty, json!({})).unwrap_err();
    assert!(matches!(err, RequestError::Store(_)), "{err:?}");
    assert!(engine.stamp(ty).is_ok(), "the stamp still works");
    let state = engine
        .last_scan_error(ty)
        .expect("the failed scan is remembered");
    assert!(state.contains("Messages store"), "{state}");
    // Fixed by its owner: the next scan clears it.
    Connection::open(home.chat_db())
        .unwrap()
        .execute_batch(
            "DROP VIEW chat_message_join; \
             CREATE VIEW chat_message_join AS SELECT chat_id, message_id FROM cmj;",
        )
        .unwrap();
    poll(&engine, ty, json!({})).unwrap();
    assert_eq!(engine.last_scan_error(ty), None);
}
