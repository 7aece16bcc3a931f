//! Mail's categories and priority, Messages' junk, blocked and SMS-filtered chats, and the
//! `categories` filter: the SQL read and the shared read agree, skipped rows move the cursor,
//! and stores without the columns still read. Also the app's recent senders.

use crate::common::*;
use serde_json::{Value, json};
use tidings_core::{Cursor, Engine, EventType, Occurrence, Settings, Subscription};
use tidings_fixtures::{
    Addr, ChatFilter, Classification, MacHome, MailFixture, MailProfile, MessagesFixture,
    MessagesProfile, NewChat, NewMail, NewMessage, Service, apple_ns_from_unix,
};

/// Every event for `args` from the start, read by SQL and by shared reads, which must agree;
/// and the cursor the SQL drain ends at.
fn both(
    engine: &Engine,
    ty: EventType,
    settings: &Settings,
    args: &Value,
) -> (Vec<Occurrence>, i64) {
    let sub = Subscription::new(ty.name(), args.as_object().unwrap(), settings).unwrap();
    let from = Cursor {
        identity: engine.stamp(ty).unwrap().identity,
        rowid: 0,
    };
    let (mut sql, mut at) = (Vec::new(), from);
    loop {
        let batch = engine.next(&sub, at, 2).unwrap();
        sql.extend(batch.events);
        at = batch.cursor;
        if !batch.has_more {
            break;
        }
    }
    let (mut shared, mut s_at) = (Vec::new(), from);
    loop {
        let read = engine.read_shared(ty, s_at).unwrap();
        let batch = read.batch_for(&sub, s_at).unwrap();
        shared.extend(batch.events);
        s_at = batch.cursor;
        if !batch.has_more {
            break;
        }
    }
    assert_eq!(shared, sql, "{ty} {args}");
    assert_eq!(s_at, at);
    (sql, at.rowid)
}

fn field(events: &[Occurrence], name: &str) -> Vec<Option<String>> {
    events
        .iter()
        .map(|e| e.data.get(name).and_then(Value::as_str).map(str::to_owned))
        .collect()
}

fn subjects(events: &[Occurrence]) -> Vec<String> {
    events
        .iter()
        .map(|e| e.data["subject"].as_str().unwrap().to_owned())
        .collect()
}

/// Six mails dated just before "now", classified as Mail would; the subject says which.
fn mail_home(profile: MailProfile) -> (tempfile::TempDir, MacHome) {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    let (mut mail, inbox) = MailFixture::create_with_inbox(&home, profile).unwrap();
    let c = |category, high_impact, urgent| Classification {
        category,
        high_impact,
        urgent,
    };
    let rows = [
        ("unclassified", "a@example.com", None),
        ("primary", "b@example.com", Some(c(Some(0), false, false))),
        ("high", "c@example.com", Some(c(Some(3), true, false))),
        ("urgent", "d@example.com", Some(c(Some(1), false, true))),
        (
            "overridden",
            "deals@example.com",
            Some(c(Some(2), false, false)),
        ),
        ("odd", "e@example.com", Some(c(Some(7), false, false))),
    ];
    for (i, (subject, from, class)) in rows.into_iter().enumerate() {
        let date = Some(NOW_UNIX - 3600 + i64::try_from(i).unwrap());
        let rowid = mail
            .append(&NewMail::new(Addr::new(from, "N"), subject, inbox, date))
            .unwrap();
        if let (Some(class), MailProfile::V10Macos26) = (class, profile) {
            mail.classify(rowid, &class).unwrap();
        }
    }
    if profile == MailProfile::V10Macos26 {
        mail.set_sender_category("deals@example.com", Some(3))
            .unwrap();
    }
    (dir, home)
}

#[test]
fn mail_events_carry_category_and_priority_and_filter_alike_on_both_paths() {
    let (_dir, home) = mail_home(MailProfile::V10Macos26);
    let engine = engine_for(&home, limits());
    let s = settings(&["example.com"], &[]);
    let ty = EventType::MailReceived;
    let (all, _) = both(&engine, ty, &s, &json!({}));
    assert_eq!(
        subjects(&all),
        [
            "unclassified",
            "primary",
            "high",
            "urgent",
            "overridden",
            "odd"
        ]
    );
    let some = |v: &str| Some(v.to_owned());
    assert_eq!(
        field(&all, "category"),
        [
            None,
            some("primary"),
            some("primary"),
            some("transactions"),
            some("promotions"),
            None
        ],
        "unknown is absent; high impact is Primary; the sender's category wins"
    );
    assert_eq!(
        field(&all, "priority"),
        [None, None, some("high"), some("urgent"), None, None]
    );
    assert!(all[0].data.as_object().unwrap().get("category").is_none());
    for (args, want) in [
        (
            json!({"categories": ["primary"]}),
            vec!["unclassified", "primary", "high", "odd"],
        ),
        (json!({"categories": ["promotions"]}), vec!["overridden"]),
        (
            json!({"categories": ["transactions", "updates"]}),
            vec!["urgent"],
        ),
        (json!({"categories": ["updates"]}), vec![]),
    ] {
        assert_eq!(subjects(&both(&engine, ty, &s, &args).0), want, "{args}");
    }
    // The user's setting narrows what a client asks for.
    let mut narrow = s.clone();
    narrow.mail.categories = vec![tidings_core::event::Category::Transactions];
    assert_eq!(
        subjects(&both(&engine, ty, &narrow, &json!({})).0),
        ["urgent"]
    );
}

#[test]
fn a_mail_store_without_categories_reads_as_before_and_counts_as_primary() {
    let (_dir, home) = mail_home(MailProfile::V10Pre26);
    let engine = engine_for(&home, limits());
    let s = settings(&["example.com"], &[]);
    let ty = EventType::MailReceived;
    let (all, _) = both(&engine, ty, &s, &json!({}));
    assert_eq!(all.len(), 6);
    assert!(field(&all, "category").iter().all(Option::is_none));
    assert!(field(&all, "priority").iter().all(Option::is_none));
    let primary = both(&engine, ty, &s, &json!({"categories": ["primary"]})).0;
    assert_eq!(primary, all);
    assert!(
        both(&engine, ty, &s, &json!({"categories": ["promotions"]}))
            .0
            .is_empty()
    );
}

/// Chats of every kind Messages files, one message each (the text names the chat), plus
/// macOS 27 filter actions when `filter_columns`.
fn messages_home(profile: MessagesProfile, filter_columns: bool) -> (tempfile::TempDir, MacHome) {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    let mut db = MessagesFixture::create(&home, profile).unwrap();
    let handle = db.add_handle("+12025550143", Service::Sms).unwrap();
    let chat = |db: &mut MessagesFixture, identifier: &str, f: ChatFilter| {
        let id = db
            .add_chat(&NewChat {
                identifier: identifier.into(),
                display_name: None,
                group: false,
                service: Service::Sms,
                participants: vec![handle],
            })
            .unwrap();
        db.set_chat_filter(id, f).unwrap();
        id
    };
    let plain = chat(&mut db, "+12025550143", ChatFilter::default());
    let unknown = chat(
        &mut db,
        "+12025550144",
        ChatFilter {
            is_filtered: 1,
            blackholed: false,
        },
    );
    let junk = chat(
        &mut db,
        "+12025550145",
        ChatFilter {
            is_filtered: 2,
            blackholed: false,
        },
    );
    let blocked = chat(
        &mut db,
        "+12025550146",
        ChatFilter {
            is_filtered: 0,
            blackholed: true,
        },
    );
    let promo = chat(
        &mut db,
        "56249(smsfp)",
        ChatFilter {
            is_filtered: 3,
            blackholed: false,
        },
    );
    let receipts = chat(
        &mut db,
        "53849(smsft_fi)",
        ChatFilter {
            is_filtered: 4,
            blackholed: false,
        },
    );
    if filter_columns {
        db.add_filter_columns().unwrap();
    }
    let mut at = NOW_UNIX - 3600;
    let mut send = |db: &mut MessagesFixture, chat: i64, text: &str| {
        at += 1;
        let mut m = NewMessage::new(handle, chat, text, Some(apple_ns_from_unix(at)));
        m.service = Service::Sms;
        db.append(&m).unwrap()
    };
    for (c, text) in [
        (plain, "plain"),
        (unknown, "unknown"),
        (junk, "junk"),
        (blocked, "blocked"),
        (promo, "promo"),
        (receipts, "receipts"),
    ] {
        send(&mut db, c, text);
    }
    if filter_columns {
        for (action, text) in [
            (2, "filtered junk"),
            (3, "filtered promo"),
            (4, "filtered receipt"),
        ] {
            let rowid = send(&mut db, plain, text);
            db.set_filter_action(rowid, action).unwrap();
        }
    }
    // The last row is a skipped one: the cursor must still move past it.
    send(&mut db, blocked, "blocked again");
    (dir, home)
}

fn chats(events: &[Occurrence]) -> Vec<String> {
    events
        .iter()
        .map(|e| e.data["chat"]["identifier"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn junk_and_blocked_chats_are_never_delivered_and_sms_lists_are_categories() {
    for (profile, filter_columns) in [
        (MessagesProfile::Tahoe, true),
        (MessagesProfile::Tahoe, false),
        (MessagesProfile::Sequoia, false),
    ] {
        let (_dir, home) = messages_home(profile, filter_columns);
        let engine = engine_for(&home, limits());
        let s = settings(&[], &["+1*", "5*"]);
        let ty = EventType::MessagesReceived;
        let head = engine.stamp(ty).unwrap().head;
        let (all, end) = both(&engine, ty, &s, &json!({}));
        assert_eq!(end, head, "the cursor moves past skipped rows");
        let mut want = vec![
            "+12025550143",
            "+12025550144",
            "56249(smsfp)",
            "53849(smsft_fi)",
        ];
        if filter_columns {
            want.extend(["+12025550143", "+12025550143"]);
        }
        assert_eq!(chats(&all), want, "{profile:?}");
        let some = |v: &str| Some(v.to_owned());
        let mut categories = vec![None, None, some("promotions"), some("transactions")];
        if filter_columns {
            categories.extend([some("promotions"), some("transactions")]);
        }
        assert_eq!(field(&all, "category"), categories, "{profile:?}");
        let promos = both(&engine, ty, &s, &json!({"categories": ["promotions"]})).0;
        assert_eq!(promos.len(), if filter_columns { 2 } else { 1 });
        let primary = both(&engine, ty, &s, &json!({"categories": ["primary"]})).0;
        assert_eq!(chats(&primary), ["+12025550143", "+12025550144"]);
    }
}

#[test]
fn recent_senders_are_incoming_grouped_newest_first_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    let (mut mail, inbox) = MailFixture::create_with_inbox(&home, MailProfile::V10Macos26).unwrap();
    let account = mail.accounts().keys().next().unwrap().clone();
    let sent = mail.add_mailbox(&account, "Sent Messages").unwrap();
    let day = 86_400;
    for (from, name, mailbox, age) in [
        ("ana@example.com", "Ana \u{202e}Ruiz", inbox, 3 * day),
        ("ANA@example.com", "Ana Ruiz", inbox, 60),
        ("bob@example.com", "", inbox, 2 * day),
        ("old@example.com", "Old", inbox, 40 * day),
        ("me@example.com", "Me", sent, 10),
    ] {
        mail.append(&NewMail::new(
            Addr::new(from, name),
            "s",
            mailbox,
            Some(NOW_UNIX - age),
        ))
        .unwrap();
    }
    let engine = engine_for(&home, limits());
    let got = engine
        .recent_senders(EventType::MailReceived, 30, 10)
        .unwrap();
    let handles: Vec<String> = got.iter().map(|r| r.handle.to_lowercase()).collect();
    assert_eq!(handles, ["ana@example.com", "bob@example.com"]);
    assert_eq!(got[0].count, 2);
    assert_eq!(got[0].name.as_deref(), Some("Ana Ruiz"));
    assert_eq!(got[1].name, None);
    assert_eq!(got[0].last, "2029-12-31T23:59:00Z");
    assert_eq!(
        engine
            .recent_senders(EventType::MailReceived, 30, 1)
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        engine
            .recent_senders(EventType::MailReceived, 60, 10)
            .unwrap()
            .len(),
        3
    );

    let (_m, home) = messages_home(MessagesProfile::Tahoe, true);
    let engine = engine_for(&home, limits());
    let got = engine
        .recent_senders(EventType::MessagesReceived, 7, 10)
        .unwrap();
    assert_eq!(got.len(), 1, "one handle");
    assert_eq!(got[0].handle, "+12025550143");
    assert_eq!(
        got[0].count, 6,
        "junk, blocked and filtered-junk messages are not counted"
    );
    assert_eq!(got[0].name, None);
}
