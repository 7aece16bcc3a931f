//! Gaps: a cursor for another file (a rebuilt store, the other store) or past the head is
//! answered with `truncated` and a fresh head cursor, never an error.

mod common;

use common::*;
use serde_json::json;
use tidings_core::{Cursor, EventType};
use tidings_fixtures::{Addr, MailProfile, MessagesProfile, NewMail};

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
