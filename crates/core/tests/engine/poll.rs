//! `events/poll` semantics on real fixture stores: bootstrap, maxEvents and hasMore, the bound
//! on rows examined, maxAgeMs seeking, filters and the allowlist.

use crate::common::*;
use serde_json::json;
use tidings_core::{Cursor, EventType, Limits, RequestError, Subscription, SubscriptionParams};
use tidings_fixtures::{
    Addr, MailFixture, MailProfile, MessagesProfile, NewMail, apple_ns_from_unix,
};

fn mail_world(limits: Limits) -> (World, tidings_fixtures::Variety) {
    World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits)
}

#[test]
fn bootstrap_returns_no_events_and_the_head_cursor() {
    let (w, v) = mail_world(limits());
    let s = settings(&[], &[]);
    let (sub, p) = subscribe(
        &s,
        json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}, "maxAgeMs": 999_999_999_999u64}),
    );
    let out = w.engine.poll(&sub, &p).unwrap();
    assert!(
        out.events.is_empty(),
        "bootstrap replays nothing, even with maxAgeMs"
    );
    assert!(!out.truncated && !out.has_more);
    let head = v.manifest.mail.last().unwrap().rowid;
    assert_eq!(out.cursor.parse::<Cursor>().unwrap().rowid, head);
    assert!(out.next_poll_ms > 0);
}

#[test]
fn a_quiet_poll_returns_the_same_safe_cursor() {
    let (w, _v) = mail_world(limits());
    let s = settings(&[], &[]);
    let (sub, p) = subscribe(
        &s,
        json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}}),
    );
    let first = w.engine.poll(&sub, &p).unwrap();
    let (_, p2) = subscribe(
        &s,
        json!({"name": "mail.received", "arguments": {"domains": ["example.com"]}, "cursor": first.cursor}),
    );
    let second = w.engine.poll(&sub, &p2).unwrap();
    assert!(second.events.is_empty());
    assert_eq!(second.cursor, first.cursor);
}

#[test]
fn a_new_matching_mail_is_returned_after_the_cursor() {
    let (w, mut v) = mail_world(limits());
    let s = settings(&[], &[]);
    let args = json!({"domains": ["example.com"]});
    let (sub, p) = subscribe(&s, json!({"name": "mail.received", "arguments": args}));
    let boot = w.engine.poll(&sub, &p).unwrap();
    let inbox = mailbox_id(&v.mail, "INBOX");
    let outside = v
        .mail
        .append(&NewMail::new(
            Addr::bare("x@other.test"),
            "not for you",
            inbox,
            Some(NOW_UNIX),
        ))
        .unwrap();
    let rowid = v
        .mail
        .append(&NewMail::new(
            Addr::new("zoe@eu.example.com", "Zoe"),
            "Hello",
            inbox,
            Some(NOW_UNIX),
        ))
        .unwrap();
    assert!(outside < rowid);
    let (_, p) = subscribe(
        &s,
        json!({"name": "mail.received", "arguments": args, "cursor": boot.cursor}),
    );
    let out = w.engine.poll(&sub, &p).unwrap();
    assert_eq!(
        out.events.len(),
        1,
        "the subdomain sender matches, the outsider does not"
    );
    assert_eq!(rowid_of(&out.events[0]), rowid);
    assert_eq!(out.events[0].data["from"]["address"], "zoe@eu.example.com");
    assert_eq!(out.cursor, out.events[0].cursor);
}

#[test]
fn max_events_one_returns_one_event_and_has_more() {
    let (w, v) = mail_world(limits());
    let s = settings(&["example.com", "example.org", "example.net"], &[]);
    let first = v.manifest.mail[0].rowid;
    let from = w.cursor_at(EventType::MailReceived, first - 1);
    let (sub, p) = subscribe(
        &s,
        json!({"name": "mail.received", "cursor": from.to_string(), "maxEvents": 1}),
    );
    let out = w.engine.poll(&sub, &p).unwrap();
    assert_eq!(out.events.len(), 1);
    assert!(out.has_more);
    assert_eq!(
        out.cursor, out.events[0].cursor,
        "the cursor stops after the returned event"
    );
    // Following the cursor one event at a time reaches the same events as one big poll.
    let (all, _, calls) = w.drain(&sub, from, 1);
    let (once, _, _) = w.drain(&sub, from, 1000);
    assert_eq!(all, once);
    assert!(calls >= all.len());
}

#[test]
fn the_bound_on_rows_examined_gives_has_more_and_progress() {
    let (w, v) = mail_world(Limits {
        scan_rows: 3,
        ..limits()
    });
    let sub = everything(EventType::MailReceived);
    let from = w.cursor_at(EventType::MailReceived, 0);
    let batch = w.engine.next(&sub, from, 1000).unwrap();
    assert!(
        batch.has_more,
        "16 rows cannot be examined 3 at a time in one call"
    );
    assert_eq!(
        batch.cursor.rowid, 3,
        "the cursor advances past the examined window"
    );
    let (events, end, calls) = w.drain(&sub, from, 1000);
    assert_eq!(
        events.len(),
        v.manifest.mail.iter().filter(|e| e.deliver).count()
    );
    assert_eq!(end.rowid, v.manifest.mail.last().unwrap().rowid);
    assert!(calls >= v.manifest.mail.len() / 3);
}

#[test]
fn max_age_floor_past_the_cursor_seeks_and_sets_truncated() {
    let (w, mut v) = mail_world(limits());
    let s = settings(&["example.com"], &[]);
    let inbox = mailbox_id(&v.mail, "INBOX");
    // Two hours-old mails and one fresh one, after the (2025-dated) variety.
    let old1 = v
        .mail
        .append(&NewMail::new(
            Addr::bare("a@example.com"),
            "old",
            inbox,
            Some(NOW_UNIX - 7200),
        ))
        .unwrap();
    v.mail
        .append(&NewMail::new(
            Addr::bare("b@example.com"),
            "old",
            inbox,
            Some(NOW_UNIX - 7100),
        ))
        .unwrap();
    let fresh = v
        .mail
        .append(&NewMail::new(
            Addr::bare("c@example.com"),
            "fresh",
            inbox,
            Some(NOW_UNIX - 60),
        ))
        .unwrap();
    let from = w.cursor_at(EventType::MailReceived, 0);
    let (sub, p) = subscribe(
        &s,
        json!({"name": "mail.received", "cursor": from.to_string(), "maxAgeMs": 600_000}),
    );
    let out = w.engine.poll(&sub, &p).unwrap();
    assert!(out.truncated, "rows before the floor were skipped");
    let rowids: Vec<i64> = out.events.iter().map(rowid_of).collect();
    assert_eq!(rowids, vec![fresh]);
    assert!(old1 < fresh);
    // The floor was found by seeking, not by walking: with a 1-row scan bound the first call
    // still lands on the fresh row.
    let w2 = World {
        dir: tempfile::tempdir().unwrap(),
        home: w.home.clone(),
        engine: engine_for(
            &w.home,
            Limits {
                scan_rows: 1,
                ..limits()
            },
        ),
    };
    let start = w2.engine.start(&sub, Some(from), Some(600_000)).unwrap();
    assert!(start.truncated);
    assert_eq!(start.cursor.rowid, fresh - 1);
    // A floor before the cursor changes nothing.
    let late = w.cursor_at(EventType::MailReceived, fresh);
    let start = w.engine.start(&sub, Some(late), Some(600_000)).unwrap();
    assert!(!start.truncated);
    assert_eq!(start.cursor, late);
}

#[test]
fn max_age_seeks_through_messages_dates_too() {
    let (w, mut v) = mail_world(limits());
    let s = settings(&[], &["+120255501*"]);
    let (chat, handle) = one_to_one(&v.messages);
    let fresh = v
        .messages
        .append(&tidings_fixtures::NewMessage::new(
            handle,
            chat,
            "hi",
            Some(apple_ns_from_unix(NOW_UNIX - 5)),
        ))
        .unwrap();
    let from = w.cursor_at(EventType::MessagesReceived, 0);
    let (sub, p) = subscribe(
        &s,
        json!({"name": "messages.received", "cursor": from.to_string(), "maxAgeMs": 60_000}),
    );
    let out = w.engine.poll(&sub, &p).unwrap();
    assert!(out.truncated);
    assert_eq!(
        out.events.iter().map(rowid_of).collect::<Vec<_>>(),
        vec![fresh]
    );
}

#[test]
fn the_allowlist_narrows_a_clients_filter() {
    let (w, v) = mail_world(limits());
    let from = w.cursor_at(EventType::MailReceived, 0);
    let args = json!({"domains": ["example.com", "acme.test"]});
    let open = settings(&[], &[]);
    let (sub, _) = subscribe(&open, json!({"name": "mail.received", "arguments": args}));
    let (wide, _, _) = w.drain(&sub, from, 1000);
    assert!(
        wide.iter()
            .any(|e| e.data["from"]["address"] == "mallory@acme.test")
    );
    let narrow = settings(&["example.com"], &[]);
    let (sub, _) = subscribe(&narrow, json!({"name": "mail.received", "arguments": args}));
    let (events, _, _) = w.drain(&sub, from, 1000);
    assert!(!events.is_empty());
    assert!(events.len() < wide.len());
    for e in &events {
        let a = e.data["from"]["address"].as_str().unwrap().to_lowercase();
        assert!(
            a.ends_with("@example.com") || a.ends_with(".example.com"),
            "{a} passed the allowlist"
        );
    }
    drop(v);
}

#[test]
fn mailbox_filters_see_gmail_labels_and_name_unknown_mailboxes() {
    let (w, _v) = mail_world(limits());
    let s = settings(
        &["example.com", "example.org", "example.net", "deals.test"],
        &[],
    );
    let from = w.cursor_at(EventType::MailReceived, 0);
    let (sub, _) = subscribe(
        &s,
        json!({"name": "mail.received", "arguments": {"mailboxes": ["me@example.com:INBOX"]}}),
    );
    w.engine.start(&sub, Some(from), None).unwrap();
    let (events, _, _) = w.drain(&sub, from, 1000);
    let subjects: Vec<&str> = events
        .iter()
        .map(|e| e.data["subject"].as_str().unwrap())
        .collect();
    assert_eq!(
        subjects,
        ["Your receipt", "Café ☕ déjà vu — 50% off"],
        "Gmail INBOX lives in labels"
    );
    for e in &events {
        assert_eq!(
            e.data["mailbox"], "INBOX",
            "the label is the mailbox asked for"
        );
    }
    let (sub, _) = subscribe(
        &s,
        json!({"name": "mail.received", "arguments": {"mailboxes": ["Clients/Acme"]}}),
    );
    let (events, _, _) = w.drain(&sub, from, 1000);
    assert_eq!(
        events.len(),
        1,
        "the copy in Clients/Acme puts the message there, once"
    );
    assert_eq!(events[0].data["mailbox"], "Clients/Acme");
    let (sub, _) = subscribe(
        &s,
        json!({"name": "mail.received", "arguments": {"mailboxes": ["Nope/Never"]}}),
    );
    match w.engine.start(&sub, Some(from), None) {
        Err(RequestError::InvalidParams { field, message }) => {
            assert_eq!(field, "arguments.mailboxes");
            assert!(message.contains("Nope/Never"), "{message}");
        }
        other => panic!("expected InvalidParams, got {other:?}"),
    }
}

#[test]
fn chat_and_handle_filters_match_messages() {
    let (w, _v) = mail_world(limits());
    let s = settings(&[], &[]);
    let from = w.cursor_at(EventType::MessagesReceived, 0);
    let (sub, _) = subscribe(
        &s,
        json!({"name": "messages.received", "arguments": {
            "chats": ["CHAT183746592018374659"],
            "from": ["+12025550102", "+12025550103", "dee@example.com", "+12025550101"],
        }}),
    );
    let (events, _, _) = w.drain(&sub, from, 1000);
    assert!(!events.is_empty());
    assert!(events.iter().all(|e| e.data["chat"]["isGroup"] == true));
    let (sub, _) = subscribe(
        &s,
        json!({"name": "messages.received", "arguments": {"from": ["+1 (202) 555-0101"]}}),
    );
    let (events, _, _) = w.drain(&sub, from, 1000);
    assert!(!events.is_empty());
    assert!(
        events
            .iter()
            .all(|e| e.data["from"]["handle"] == "+12025550101"),
        "iMessage and SMS handles of one number"
    );
    let services: std::collections::HashSet<_> = events
        .iter()
        .map(|e| e.data["from"]["service"].clone())
        .collect();
    assert_eq!(services.len(), 2);
}

#[test]
fn a_poll_for_a_disabled_type_says_it_is_turned_off() {
    let mut s = settings(&["example.com"], &[]);
    s.mail.enabled = false;
    let p = SubscriptionParams::parse(&json!({"name": "mail.received"})).unwrap();
    assert!(matches!(
        Subscription::new(&p.name, &p.arguments, &s),
        Err(RequestError::Disabled { .. })
    ));
}

pub fn mailbox_id(mail: &MailFixture, path: &str) -> i64 {
    mail.connection()
        .query_row(
            "SELECT ROWID FROM mailboxes WHERE url LIKE '%/' || ?1 ORDER BY ROWID LIMIT 1",
            [path],
            |r| r.get(0),
        )
        .unwrap()
}

pub fn one_to_one(db: &tidings_fixtures::MessagesFixture) -> (i64, i64) {
    db.connection()
        .query_row(
            "SELECT c.ROWID, j.handle_id FROM chat c JOIN chat_handle_join j ON j.chat_id = c.ROWID \
             JOIN handle h ON h.ROWID = j.handle_id WHERE c.style = 45 AND h.id LIKE '+1202555010%' LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
}

#[test]
fn a_max_age_beyond_the_representable_past_skips_nothing() {
    let (w, _v) = mail_world(limits());
    let s = settings(&["example.com"], &[]);
    let from = w.cursor_at(EventType::MailReceived, 0);
    for age in [u64::MAX, 1_000_000_000_000_000] {
        let (sub, p) = subscribe(
            &s,
            json!({"name": "mail.received", "cursor": from.to_string(), "maxAgeMs": age}),
        );
        let start = w.engine.start(&sub, p.cursor, p.max_age_ms).unwrap();
        assert!(!start.truncated, "maxAgeMs {age}");
        assert_eq!(start.cursor, from);
        assert!(!w.engine.poll(&sub, &p).unwrap().events.is_empty());
    }
}

#[test]
fn a_moved_message_is_not_new_mail() {
    let (w, mut v) = mail_world(limits());
    let s = settings(&["example.com"], &[]);
    let inbox = mailbox_id(&v.mail, "INBOX");
    let archive = mailbox_id(&v.mail, "Clients/Acme");
    let (sub, p) = subscribe(&s, json!({"name": "mail.received"}));
    let boot = w.engine.poll(&sub, &p).unwrap();
    let first = v
        .mail
        .append(&NewMail::new(
            Addr::bare("mover@example.com"),
            "to be filed",
            inbox,
            Some(NOW_UNIX),
        ))
        .unwrap();
    let (_, p) = subscribe(&s, json!({"name": "mail.received", "cursor": boot.cursor}));
    let out = w.engine.poll(&sub, &p).unwrap();
    assert_eq!(
        out.events.iter().map(rowid_of).collect::<Vec<_>>(),
        vec![first]
    );
    // What a move looks like in the index: a new row for the same message elsewhere, and the
    // old row marked deleted.
    let global: i64 = v
        .mail
        .connection()
        .query_row(
            "SELECT global_message_id FROM messages WHERE ROWID = ?1",
            [first],
            |r| r.get(0),
        )
        .unwrap();
    let mut moved = NewMail::new(
        Addr::bare("mover@example.com"),
        "to be filed",
        archive,
        Some(NOW_UNIX),
    );
    moved.global_message_id = Some(global);
    v.mail.append(&moved).unwrap();
    v.mail.set_deleted(first, true).unwrap();
    let (_, p) = subscribe(&s, json!({"name": "mail.received", "cursor": out.cursor}));
    let after = w.engine.poll(&sub, &p).unwrap();
    assert!(
        after.events.is_empty(),
        "the moved copy came out again: {:?}",
        after.events
    );
}
