//! Filters against hostile senders and big lists, on real fixture stores: phone patterns and
//! e-mail handles, chats named like yours, 10,000-entry lists, `service` and `account`.

use crate::common::*;
use serde_json::{Value, json};
use tidings_core::descriptor::MAX_ARGUMENT_ITEMS;
use tidings_core::{EventType, RequestError, Subscription, SubscriptionParams};
use tidings_fixtures::{
    Addr, MailProfile, MessagesProfile, NewChat, NewMail, NewMessage, Service, apple_ns_from_unix,
};

fn world() -> (World, tidings_fixtures::Variety) {
    World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits())
}

fn handles(events: &[tidings_core::Occurrence]) -> Vec<String> {
    events
        .iter()
        .map(|e| e.data["from"]["handle"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn senders(events: &[tidings_core::Occurrence]) -> Vec<String> {
    events
        .iter()
        .map(|e| e.data["from"]["address"].as_str().unwrap().to_lowercase())
        .collect()
}

fn field_and_message(e: RequestError) -> (String, String) {
    match e {
        RequestError::InvalidParams { field, message } => (field, message),
        other => panic!("expected InvalidParams, got {other:?}"),
    }
}

/// A one-to-one chat with `handle` and one incoming message from it.
fn message_from(v: &mut tidings_fixtures::Variety, handle: &str, service: Service) -> i64 {
    let h = v.messages.add_handle(handle, service).unwrap();
    let chat = v
        .messages
        .add_chat(&NewChat {
            identifier: handle.into(),
            display_name: None,
            group: false,
            service,
            participants: vec![h],
        })
        .unwrap();
    let mut m = NewMessage::new(h, chat, "hi", Some(apple_ns_from_unix(NOW_UNIX)));
    m.service = service;
    v.messages.append(&m).unwrap()
}

#[test]
fn a_phone_range_never_lets_an_email_handle_through() {
    let (w, mut v) = world();
    let from = w.cursor_at(EventType::MessagesReceived, 0);
    let evil = message_from(&mut v, "+12025550143@evil.test", Service::IMessage);
    let phone = message_from(&mut v, "+12025550144", Service::IMessage);
    let s = settings(&[], &["+120255501*"]);
    let (sub, _) = subscribe(&s, json!({"name": "messages.received"}));
    let (events, _, _) = w.drain(&sub, from, 1000);
    let rows: Vec<i64> = events.iter().map(rowid_of).collect();
    assert!(!rows.contains(&evil), "{:?}", handles(&events));
    assert!(rows.contains(&phone));
    assert!(
        handles(&events)
            .iter()
            .all(|h| h.starts_with("+120255501") && !h.contains('@')),
        "{:?}",
        handles(&events)
    );
}

#[test]
fn a_phone_range_in_the_mail_allowlist_matches_no_address() {
    let (w, mut v) = world();
    let from = w.cursor_at(EventType::MailReceived, 0);
    let inbox: i64 = v
        .mail
        .connection()
        .query_row(
            "SELECT ROWID FROM mailboxes WHERE url LIKE '%/INBOX' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    v.mail
        .append(&NewMail::new(
            Addr::bare("+12025550143@evil.test"),
            "hello",
            inbox,
            Some(NOW_UNIX),
        ))
        .unwrap();
    let s = settings(&["+120255501*"], &[]);
    let (sub, _) = subscribe(&s, json!({"name": "mail.received"}));
    let (events, _, _) = w.drain(&sub, from, 1000);
    assert_eq!(senders(&events), Vec::<String>::new());
}

#[test]
fn a_chat_named_like_yours_is_not_your_chat() {
    let (w, mut v) = world();
    let from = w.cursor_at(EventType::MessagesReceived, 0);
    let mom = v
        .messages
        .add_handle("+12025550111", Service::IMessage)
        .unwrap();
    let stranger = v
        .messages
        .add_handle("+14155550999", Service::IMessage)
        .unwrap();
    let family = family_group(&mut v, "chat111111111111111111", vec![mom]);
    let fake = family_group(&mut v, "chat999999999999999999", vec![stranger, mom]);
    let date = Some(apple_ns_from_unix(NOW_UNIX));
    let real = v
        .messages
        .append(&NewMessage::new(mom, family, "dinner?", date))
        .unwrap();
    let lure = v
        .messages
        .append(&NewMessage::new(stranger, fake, "click this", date))
        .unwrap();
    let s = settings(&[], &[]);

    // A chat filter alone no longer bounds a subscription.
    let p = SubscriptionParams::parse(
        &json!({"name": "messages.received", "arguments": {"chats": ["chat111111111111111111"]}}),
    )
    .unwrap();
    let (field, _) = field_and_message(Subscription::new(&p.name, &p.arguments, &s).unwrap_err());
    assert_eq!(field, "arguments");

    // By identifier: the user's chat, not the stranger's namesake.
    let args =
        json!({"from": ["+12025550111", "+14155550999"], "chats": ["chat111111111111111111"]});
    let (sub, _) = subscribe(&s, json!({"name": "messages.received", "arguments": args}));
    let (events, _, _) = w.drain(&sub, from, 1000);
    assert_eq!(events.iter().map(rowid_of).collect::<Vec<_>>(), vec![real]);

    // By display name: refused, and never matched.
    let args = json!({"from": ["+12025550111", "+14155550999"], "chats": ["family"]});
    let (sub, _) = subscribe(&s, json!({"name": "messages.received", "arguments": args}));
    let (field, message) = field_and_message(w.engine.start(&sub, Some(from), None).unwrap_err());
    assert_eq!(field, "arguments.chats");
    assert!(message.contains("display name"), "{message}");
    let (events, _, _) = w.drain(&sub, from, 1000);
    assert!(
        !events.iter().map(rowid_of).any(|r| r == lure || r == real),
        "a display name selected a chat"
    );
}

/// A group chat called "Family" with `members`.
fn family_group(v: &mut tidings_fixtures::Variety, identifier: &str, members: Vec<i64>) -> i64 {
    v.messages
        .add_chat(&NewChat {
            identifier: identifier.into(),
            display_name: Some("Family".into()),
            group: true,
            service: Service::IMessage,
            participants: members,
        })
        .unwrap()
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn many_domains(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("d{i}.example.net")).collect()
}

#[test]
fn ten_thousand_allowlist_entries_work_in_both_stores() {
    let (w, _v) = world();
    let mut mail_allow = many_domains(10_000);
    mail_allow.push("example.com".into());
    let mut messages_allow: Vec<String> = (0..10_000).map(|i| format!("+1303555{i:04}")).collect();
    messages_allow.push("+120255501*".into());
    let big = settings(&refs(&mail_allow), &refs(&messages_allow));
    let small = settings(&["example.com"], &["+120255501*"]);
    for (ty, name) in [
        (EventType::MailReceived, "mail.received"),
        (EventType::MessagesReceived, "messages.received"),
    ] {
        let from = w.cursor_at(ty, 0);
        let (sub, _) = subscribe(&big, json!({"name": name}));
        let (got, _, _) = w.drain(&sub, from, 1000);
        let (sub, _) = subscribe(&small, json!({"name": name}));
        let (want, _, _) = w.drain(&sub, from, 1000);
        assert!(!want.is_empty(), "{name}");
        assert_eq!(
            got.iter().map(rowid_of).collect::<Vec<_>>(),
            want.iter().map(rowid_of).collect::<Vec<_>>(),
            "{name}"
        );
    }
}

#[test]
fn client_lists_of_the_maximum_length_work_and_one_more_is_refused() {
    assert_eq!(MAX_ARGUMENT_ITEMS, 10_000);
    let (w, _v) = world();
    let s = settings(&[], &[]);
    let mut domains = many_domains(MAX_ARGUMENT_ITEMS - 1);
    domains.push("example.com".into());
    let mut from_list: Vec<String> = (0..MAX_ARGUMENT_ITEMS - 1)
        .map(|i| format!("u{i}@example.net"))
        .collect();
    from_list.push("+12025550101".into());
    for (ty, name, args) in [
        (
            EventType::MailReceived,
            "mail.received",
            json!({"domains": domains}),
        ),
        (
            EventType::MessagesReceived,
            "messages.received",
            json!({"from": from_list, "domains": domains}),
        ),
    ] {
        let from = w.cursor_at(ty, 0);
        let (sub, _) = subscribe(&s, json!({"name": name, "arguments": args}));
        let (events, _, _) = w.drain(&sub, from, 1000);
        assert!(!events.is_empty(), "{name}");
    }
    let mut too_many = many_domains(MAX_ARGUMENT_ITEMS);
    too_many.push("example.com".into());
    let p = SubscriptionParams::parse(
        &json!({"name": "mail.received", "arguments": {"domains": too_many}}),
    )
    .unwrap();
    let (field, message) =
        field_and_message(Subscription::new(&p.name, &p.arguments, &s).unwrap_err());
    assert_eq!(field, "arguments.domains");
    assert!(message.contains("10000"), "{message}");
}

#[test]
fn service_narrows_messages_to_one_service() {
    let (w, _v) = world();
    let s = settings(&[], &[]);
    let from = w.cursor_at(EventType::MessagesReceived, 0);
    let senders = json!(["+12025550101", "+12025550194", "+14155550123"]);
    let (sub, _) = subscribe(
        &s,
        json!({"name": "messages.received", "arguments": {"from": senders}}),
    );
    let (all, _, _) = w.drain(&sub, from, 1000);
    for service in ["iMessage", "SMS", "RCS"] {
        let (sub, _) = subscribe(
            &s,
            json!({"name": "messages.received", "arguments": {"from": senders, "service": service}}),
        );
        let (events, _, _) = w.drain(&sub, from, 1000);
        let want: Vec<i64> = all
            .iter()
            .filter(|e| e.data["from"]["service"] == service)
            .map(rowid_of)
            .collect();
        assert!(!want.is_empty(), "{service}");
        assert_eq!(
            events.iter().map(rowid_of).collect::<Vec<_>>(),
            want,
            "{service}"
        );
    }
}

#[test]
fn account_narrows_mail_to_one_account_and_names_an_unknown_one() {
    let (w, _v) = world();
    let s = settings(
        &[
            "example.com",
            "example.org",
            "example.net",
            "deals.test",
            "acme.test",
        ],
        &[],
    );
    let from = w.cursor_at(EventType::MailReceived, 0);
    let (sub, _) = subscribe(&s, json!({"name": "mail.received"}));
    let (all, _, _) = w.drain(&sub, from, 1000);
    let accounts: std::collections::BTreeSet<String> = all
        .iter()
        .filter_map(|e| e.data["account"].as_str().map(str::to_owned))
        .collect();
    assert!(accounts.len() >= 2, "{accounts:?}");
    assert_eq!(
        w.engine.mail_accounts(),
        ["me@eu.example.com", "me@example.com", "me@example.org"]
    );
    for account in &accounts {
        let (sub, _) = subscribe(
            &s,
            json!({"name": "mail.received", "arguments": {"account": account.to_uppercase()}}),
        );
        w.engine.start(&sub, Some(from), None).unwrap();
        let (events, _, _) = w.drain(&sub, from, 1000);
        let want: Vec<i64> = all
            .iter()
            .filter(|e| e.data["account"] == Value::String(account.clone()))
            .map(rowid_of)
            .collect();
        assert_eq!(
            events.iter().map(rowid_of).collect::<Vec<_>>(),
            want,
            "{account}"
        );
    }
    let (sub, _) = subscribe(
        &s,
        json!({"name": "mail.received", "arguments": {"account": "nobody@nowhere.test"}}),
    );
    let (field, message) = field_and_message(w.engine.start(&sub, Some(from), None).unwrap_err());
    assert_eq!(field, "arguments.account");
    assert!(message.contains("nobody@nowhere.test"), "{message}");
}

/// Every event a client gets from ROWID 0 under `allow` with `arguments`, `max` a call, each
/// call reading at most `scan_rows` ROWIDs.
fn catch_up(
    home: &tidings_fixtures::MacHome,
    allow: &[&str],
    arguments: &Value,
    max: u32,
    scan_rows: i64,
) -> Vec<i64> {
    let engine = engine_for(
        home,
        tidings_core::Limits {
            scan_rows,
            ..limits()
        },
    );
    let stamp = engine.stamp(EventType::MailReceived).unwrap();
    let start = tidings_core::Cursor {
        identity: stamp.identity,
        rowid: 0,
    };
    let (sub, mut p) = subscribe(
        &settings(allow, &[]),
        json!({"name": "mail.received", "cursor": start.to_string(), "maxEvents": max,
               "arguments": arguments}),
    );
    let mut got = Vec::new();
    loop {
        let out = engine.poll(&sub, &p).unwrap();
        got.extend(out.events.iter().map(rowid_of));
        if !out.has_more {
            return got;
        }
        p.cursor = Some(out.cursor.parse().unwrap());
    }
}

#[test]
fn a_catch_up_gets_the_same_rows_whether_its_senders_match_most_mail_or_little() {
    // 12,000 mails, 5% from one domain. Senders that match most rows (the allowlist of whole
    // example domains alone, or a client's filter for one of them) are read per row once a
    // wide window's first rows show they match densely; one domain's few are listed. Either
    // way the events are those of windows so short that every sender is always tested per
    // row.
    let dir = tempfile::tempdir().unwrap();
    let home = tidings_fixtures::MacHome::new(dir.path());
    let spec = tidings_fixtures::BulkSpec {
        messages: 12_000,
        target_domain: "watched.example.com".into(),
        target_fraction: 0.05,
        seed: 9,
    };
    tidings_fixtures::bulk_mail(&home, MailProfile::V10Macos26, &spec).unwrap();
    let broad = ["example.com", "example.org", "example.net"];
    for (allow, arguments, at_least) in [
        (&broad[..], json!({}), 6_000),
        (&["watched.example.com"][..], json!({}), 400),
        (&broad[..], json!({"domains": ["example.com"]}), 2_000),
        (&broad[..], json!({"domains": ["watched.example.com"]}), 400),
    ] {
        let short = catch_up(&home, allow, &arguments, 100, 256);
        assert!(
            short.len() >= at_least,
            "{allow:?} {arguments}: {} events",
            short.len()
        );
        // A batch of 100 fills within the first rows; one of 1,000 reads on past them.
        for max in [100, 1_000] {
            let wide = catch_up(&home, allow, &arguments, max, 20_000);
            assert_eq!(wide, short, "{allow:?} {arguments}, {max} a call");
        }
    }
}
