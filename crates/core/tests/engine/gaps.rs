//! Gaps: a cursor for another file (a rebuilt or recreated store, the other store) or past the head is
//! answered with `truncated` and a fresh head cursor, never an error.

use crate::common::*;
use serde_json::json;
use tidings_core::{Cursor, EventType, FileIdentity};
use tidings_fixtures::{
    Addr, MailProfile, MessagesFixture, MessagesProfile, NewChat, NewMail, NewMessage, Service,
};

#[test]
fn a_cursor_from_before_a_rebuild_is_a_gap_with_a_fresh_cursor() {
    let (w, v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let s = settings(&["example.com"], &[]);
    let (sub, p) = subscribe(&s, json!({"name": "mail.received"}));
    let before = w.engine.poll(&sub, &p).unwrap().cursor;
    let mut mail = v.mail.rebuild(&w.home).unwrap();
    let (_, p) = subscribe(&s, json!({"name": "mail.received", "cursor": before}));
    let out = w.engine.poll(&sub, &p).unwrap();
    assert!(out.truncated);
    assert!(out.events.is_empty());
    let fresh: Cursor = out.cursor.parse().unwrap();
    assert_ne!(
        fresh.identity,
        before.parse::<Cursor>().unwrap().identity,
        "the cursor names the new file"
    );
    // Delivery goes on from the fresh cursor in the new file.
    let inbox: i64 = mail
        .connection()
        .query_row("SELECT min(ROWID) FROM mailboxes", [], |r| r.get(0))
        .unwrap();
    let rowid = mail
        .append(&NewMail::new(
            Addr::bare("new@example.com"),
            "after rebuild",
            inbox,
            Some(NOW_UNIX),
        ))
        .unwrap();
    let (_, p) = subscribe(&s, json!({"name": "mail.received", "cursor": out.cursor}));
    let next = w.engine.poll(&sub, &p).unwrap();
    assert!(!next.truncated);
    assert_eq!(
        next.events.iter().map(rowid_of).collect::<Vec<_>>(),
        vec![rowid]
    );
}

#[test]
fn a_cursor_from_the_other_store_is_a_gap() {
    let (w, _v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let s = settings(&["example.com"], &["+120255501*"]);
    let (mail_sub, p) = subscribe(&s, json!({"name": "mail.received"}));
    let mail_cursor = w.engine.poll(&mail_sub, &p).unwrap().cursor;
    let (sub, p) = subscribe(
        &s,
        json!({"name": "messages.received", "cursor": mail_cursor}),
    );
    let out = w.engine.poll(&sub, &p).unwrap();
    assert!(out.truncated);
    assert!(out.events.is_empty());
    assert_eq!(
        out.cursor.parse::<Cursor>().unwrap().identity,
        w.engine
            .stamp(EventType::MessagesReceived)
            .unwrap()
            .identity
    );
}

#[test]
fn a_cursor_past_the_head_is_a_gap() {
    let (w, v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let s = settings(&["example.com"], &[]);
    let head = v.manifest.mail.last().unwrap().rowid;
    let ahead = w.cursor_at(EventType::MailReceived, head + 50);
    let (sub, p) = subscribe(
        &s,
        json!({"name": "mail.received", "cursor": ahead.to_string()}),
    );
    let out = w.engine.poll(&sub, &p).unwrap();
    assert!(out.truncated);
    assert_eq!(out.cursor.parse::<Cursor>().unwrap().rowid, head);
}

#[test]
fn a_stream_step_after_a_rebuild_reports_the_gap() {
    let (w, v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let sub = everything(EventType::MailReceived);
    let start = w.cursor_at(EventType::MailReceived, 0);
    let _mail = v.mail.rebuild(&w.home).unwrap();
    let batch = w.engine.next(&sub, start, 10).unwrap();
    assert!(batch.truncated && batch.events.is_empty());
    assert_ne!(batch.cursor.identity, start.identity);
}

/// Delete chat.db (and its `-wal`/`-shm`) while nothing holds it open and create a new one
/// holding `rows` fresh messages. Linux hands the just-freed inode straight back, which is the
/// case under test; other processes creating files at the same moment can take it first, so
/// up to 20 tries. Returns whether the inode was reused (when it never is, the test still
/// checks the gap, and `a_same_inode_with_another_birth_time_is_a_gap` covers the rule).
fn recreate_chat_db(w: &World, old: FileIdentity, rows: i64) -> (MessagesFixture, bool) {
    let mut reused = false;
    let mut db = MessagesFixture::create(&w.home, MessagesProfile::Tahoe).unwrap();
    for _ in 0..20 {
        let now = FileIdentity::of(&w.home.chat_db()).unwrap();
        reused = (now.dev, now.ino) == (old.dev, old.ino);
        if reused {
            break;
        }
        drop(db);
        db = MessagesFixture::create(&w.home, MessagesProfile::Tahoe).unwrap();
    }
    let h = db.add_handle("+12025550101", Service::IMessage).unwrap();
    let chat = db
        .add_chat(&NewChat {
            identifier: "+12025550101".into(),
            display_name: None,
            group: false,
            service: Service::IMessage,
            participants: vec![h],
        })
        .unwrap();
    for i in 0..rows {
        db.append(&NewMessage::new(h, chat, &format!("new {i}"), None))
            .unwrap();
    }
    (db, reused)
}

#[test]
fn a_store_recreated_on_the_same_inode_is_a_gap_live_and_after_a_restart() {
    let (w, v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let sub = everything(EventType::MessagesReceived);
    let before = w.engine.stamp(EventType::MessagesReceived).unwrap();
    // A cursor well inside the old file: the new one will hold ROWIDs past it.
    let old = Cursor {
        identity: before.identity,
        rowid: before.head / 2,
    };
    drop(v);
    std::fs::remove_file(w.home.chat_db()).unwrap();
    // The engine notices the vanished file and lets go of it, so the inode is free.
    assert!(w.engine.stamp(EventType::MessagesReceived).is_err());
    let (_db, reused) = recreate_chat_db(&w, before.identity, before.head + 5);
    eprintln!("inode reused: {reused}");
    let now = w.engine.stamp(EventType::MessagesReceived).unwrap();
    assert!(
        now.head > old.rowid,
        "the new file has ROWIDs past the cursor"
    );
    assert_ne!(now.identity, before.identity);

    // Live: the same engine, a stream step after the old cursor.
    let batch = w.engine.next(&sub, old, 10).unwrap();
    assert!(batch.truncated, "a recreated store is a gap");
    assert!(batch.events.is_empty());
    assert_eq!(batch.cursor.identity, now.identity);

    // After a restart: a fresh engine, a poll with the old cursor.
    let engine = engine_for(&w.home, limits());
    let s = settings(&[], &["+1202555*"]);
    let (sub, p) = subscribe(
        &s,
        json!({"name": "messages.received", "cursor": old.to_string()}),
    );
    let out = engine.poll(&sub, &p).unwrap();
    assert!(out.truncated, "a recreated store is a gap after a restart");
    assert!(out.events.is_empty());
}

#[test]
fn a_same_inode_with_another_birth_time_is_a_gap() {
    // Whatever the file system does with inodes: a cursor whose birth time is not the file's
    // names another file.
    let (w, _v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let sub = everything(EventType::MessagesReceived);
    let stamp = w.engine.stamp(EventType::MessagesReceived).unwrap();
    if stamp.identity.birth == 0 {
        eprintln!("skipped: this file system records no birth time");
        return;
    }
    let other = Cursor {
        identity: FileIdentity {
            birth: stamp.identity.birth - 1,
            ..stamp.identity
        },
        rowid: 1,
    };
    assert!(w.engine.next(&sub, other, 10).unwrap().truncated);
}

#[test]
fn a_v1_cursor_is_still_a_position_and_comes_back_as_v2() {
    let (w, _v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let s = settings(&[], &["+1202555*"]);
    let stamp = w.engine.stamp(EventType::MessagesReceived).unwrap();
    let v1 = format!(
        "v1.{}-{}.{}",
        stamp.identity.dev, stamp.identity.ino, stamp.head
    );
    let (sub, p) = subscribe(&s, json!({"name": "messages.received", "cursor": v1}));
    let out = w.engine.poll(&sub, &p).unwrap();
    assert!(!out.truncated);
    let back: Cursor = out.cursor.parse().unwrap();
    assert!(out.cursor.starts_with("v2."), "{}", out.cursor);
    assert_eq!(back.identity, stamp.identity);
    assert_eq!(back.rowid, stamp.head);
}
