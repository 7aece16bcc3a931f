//! A shared read matched in memory answers exactly what each subscription's own SQL read
//! answers: the same rows and filters through both paths, over the fixture variety (Gmail
//! labels, duplicate copies, group chats, every skip rule) plus rows with bad bytes, with
//! small and large bounds and the backfill guard on.

use std::collections::BTreeSet;

use crate::common::*;
use serde_json::{Value, json};
use tidings_core::{Cursor, Engine, EventType, Limits, Occurrence, Pick, Settings, Subscription};
use tidings_fixtures::{
    Addr, MailProfile, MessagesProfile, NewChat, NewMail, NewMessage, Service, apple_ns_from_unix,
};

/// Every event after `from` through shared reads, each matched for `sub` only.
fn shared_drain(engine: &Engine, sub: &Subscription, from: Cursor) -> Vec<Occurrence> {
    let mut at = from;
    let mut out = Vec::new();
    for _ in 0..100_000 {
        let shared = engine.read_shared(sub.event_type(), at).unwrap();
        let batch = shared
            .batch_for(sub, at)
            .expect("a read covers its own start");
        assert!(!batch.truncated);
        out.extend(batch.events);
        at = batch.cursor;
        if !batch.has_more {
            return out;
        }
    }
    panic!("the shared drain makes no progress");
}

fn sql_drain(engine: &Engine, sub: &Subscription, from: Cursor, max: u32) -> Vec<Occurrence> {
    let mut at = from;
    let mut out = Vec::new();
    loop {
        let batch = engine.next(sub, at, max).unwrap();
        out.extend(batch.events);
        at = batch.cursor;
        if !batch.has_more {
            return out;
        }
    }
}

/// Rows beyond the variety: dated now (so the backfill guard lets them through), from new
/// senders, one with a bad byte in its sender, one in a group chat and a second chat. They
/// come after a gap of 1,000 ROWIDs (rows deleted), so a read from the start spans a long
/// window (sender conditions listed) and a small-bounds read short ones (tested per row).
fn add_rows(v: &mut tidings_fixtures::Variety) {
    for (conn, table) in [
        (v.mail.connection(), "messages"),
        (v.messages.connection(), "message"),
    ] {
        let bumped = conn
            .execute(
                "UPDATE sqlite_sequence SET seq = seq + 1000 WHERE name = ?1",
                [table],
            )
            .unwrap();
        assert_eq!(bumped, 1, "{table} has an AUTOINCREMENT sequence");
    }
    let inbox: i64 = v
        .mail
        .connection()
        .query_row(
            "SELECT ROWID FROM mailboxes WHERE url LIKE '%/INBOX' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    for (i, from) in ["new@example.com", "x@eu.example.org", "bad@example.com"]
        .iter()
        .enumerate()
    {
        v.mail
            .append(&NewMail::new(
                Addr::new(from, "N"),
                &format!("s{i}"),
                inbox,
                Some(NOW_UNIX),
            ))
            .unwrap();
    }
    v.mail
        .connection()
        .execute(
            "UPDATE addresses SET address = CAST(X'626164FE406578616D706C652E636F6D' AS TEXT) \
             WHERE address = 'bad@example.com'",
            [],
        )
        .unwrap();
    let db = &mut v.messages;
    let a = db.add_handle("+12025550188", Service::Sms).unwrap();
    let b = db.add_handle("pal@example.com", Service::IMessage).unwrap();
    let group = db
        .add_chat(&NewChat {
            identifier: "chat999999999999999999".into(),
            display_name: Some("Team".into()),
            group: true,
            service: Service::IMessage,
            participants: vec![a, b],
        })
        .unwrap();
    let date = Some(apple_ns_from_unix(NOW_UNIX));
    for h in [a, b, a] {
        db.append(&NewMessage::new(h, group, "hi", date)).unwrap();
    }
}

/// Distinct string values at `path` in `events`.
fn values(events: &[Occurrence], path: &[&str]) -> Vec<String> {
    let set: BTreeSet<String> = events
        .iter()
        .filter_map(|e| {
            let mut v = &e.data;
            for p in path {
                v = v.get(p)?;
            }
            v.as_str().map(str::to_owned)
        })
        .collect();
    set.into_iter().collect()
}

fn domain(address: &str) -> Option<String> {
    let d = address.rsplit_once('@')?.1.to_ascii_lowercase();
    d.contains('.').then_some(d)
}

/// Arguments worth comparing for mail: senders, domains, mailboxes (bare and qualified),
/// accounts, and mixes of them, taken from what the variety holds.
fn mail_arguments(events: &[Occurrence]) -> Vec<Value> {
    let addresses = values(events, &["from", "address"]);
    let mailboxes = values(events, &["mailbox"]);
    let accounts = values(events, &["account"]);
    let mut args = vec![json!({})];
    let domains: BTreeSet<String> = addresses.iter().filter_map(|a| domain(a)).collect();
    for d in &domains {
        args.push(json!({"domains": [d]}));
    }
    args.push(json!({"from": addresses.iter().step_by(3).collect::<Vec<_>>()}));
    for m in mailboxes
        .iter()
        .chain(["INBOX".to_owned(), "inbox".to_owned()].iter())
    {
        args.push(json!({"mailboxes": [m]}));
        for a in &accounts {
            args.push(json!({"mailboxes": [format!("{a}:{m}")]}));
        }
    }
    for a in &accounts {
        args.push(json!({"account": a}));
        args.push(json!({"account": a.to_uppercase(), "mailboxes": ["INBOX"]}));
    }
    args.push(json!({"mailboxes": ["INBOX", "Archive"], "domains": ["example.com"]}));
    args
}

/// Arguments worth comparing for Messages: handles, domains, chats (identifiers, case
/// changed), services, and mixes.
fn messages_arguments(events: &[Occurrence]) -> Vec<Value> {
    let handles = values(events, &["from", "handle"]);
    let chats = values(events, &["chat", "identifier"]);
    let mut args = vec![json!({})];
    args.push(json!({"from": handles.iter().step_by(2).collect::<Vec<_>>()}));
    args.push(json!({"domains": ["example.com"]}));
    for c in &chats {
        args.push(json!({"chats": [c]}));
        args.push(json!({"chats": [c.to_uppercase()], "service": "iMessage"}));
    }
    for s in ["iMessage", "SMS", "RCS"] {
        args.push(json!({"service": s}));
    }
    args
}

/// Allowlists: every fixture sender, and a narrow one, so the allowlist on top is compared too.
fn allowlists() -> Vec<Settings> {
    vec![
        settings(EVERY_FIXTURE_SENDER, EVERY_FIXTURE_SENDER),
        settings(&["example.com", "+1202*"], &["example.com", "+1202*"]),
    ]
}

fn compare(engine: &Engine, ty: EventType, arguments: &[Value], label: &str) -> usize {
    let from = Cursor {
        identity: engine.stamp(ty).unwrap().identity,
        rowid: 0,
    };
    let mut compared = 0;
    for s in allowlists() {
        for args in arguments {
            let Value::Object(map) = args else { panic!() };
            let Ok(sub) = Subscription::new(ty.name(), map, &s) else {
                continue; // refused (unbounded): neither path serves it
            };
            let want = sql_drain(engine, &sub, from, 3);
            let got = shared_drain(engine, &sub, from);
            assert_eq!(got, want, "{label} {ty} {args}");
            // A stream partway through the span a read covers takes the rest of it.
            if let Some(mid) = want.get(want.len() / 2) {
                let mid: Cursor = mid.cursor.parse().unwrap();
                let mut shared = engine.read_shared(ty, from).unwrap();
                while !shared.covers(mid) {
                    shared = engine.read_shared(ty, shared.cursor()).unwrap();
                }
                let part = shared.batch_for(&sub, mid).unwrap();
                let upto = shared.cursor().rowid;
                let sql: Vec<_> = want
                    .iter()
                    .filter(|e| (mid.rowid + 1..=upto).contains(&rowid_of(e)))
                    .cloned()
                    .collect();
                assert_eq!(part.events, sql, "{label} {ty} {args} from the middle");
            }
            compared += 1;
        }
    }
    compared
}

#[test]
fn shared_reads_match_what_each_subscription_reads_on_its_own() {
    for (mail, messages) in [
        (MailProfile::V10Macos26, MessagesProfile::Tahoe),
        (MailProfile::V10Pre26, MessagesProfile::Sequoia),
    ] {
        let (w, mut v) = World::variety(mail, messages, limits());
        add_rows(&mut v);
        let all = |ty| {
            let from = w.cursor_at(ty, 0);
            sql_drain(&w.engine, &everything(ty), from, 1000)
        };
        let mail_args = mail_arguments(&all(EventType::MailReceived));
        let messages_args = messages_arguments(&all(EventType::MessagesReceived));
        assert!(mail_args.len() > 10 && messages_args.len() > 6);
        // Large bounds, small bounds (windows of 5 ROWIDs), and the backfill guard on.
        let small = Limits {
            scan_rows: 5,
            ..limits()
        };
        for (label, limits, backfill) in [
            ("default", limits(), false),
            ("small", small, false),
            ("backfill", limits(), true),
        ] {
            let engine = engine_for(&w.home, limits);
            if backfill {
                for ty in EventType::ALL {
                    engine.set_backfill_window(ty, Some(std::time::Duration::from_secs(86_400)));
                }
            }
            let n = compare(&engine, EventType::MailReceived, &mail_args, label)
                + compare(&engine, EventType::MessagesReceived, &messages_args, label);
            assert!(n > 20, "{label}: only {n} subscriptions compared");
        }
    }
}

#[test]
fn a_read_does_not_cover_a_position_outside_it_or_another_type() {
    let (w, _v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let ty = EventType::MailReceived;
    let head = w.engine.stamp(ty).unwrap().head;
    let shared = w.engine.read_shared(ty, w.cursor_at(ty, 2)).unwrap();
    assert!(shared.covers(w.cursor_at(ty, 2)));
    assert!(!shared.covers(w.cursor_at(ty, 1)), "before the read");
    assert!(!shared.covers(w.cursor_at(ty, head)), "at its end: read on");
    let messages = everything(EventType::MessagesReceived);
    assert!(shared.batch_for(&messages, w.cursor_at(ty, 2)).is_none());
}

#[test]
fn picks_name_the_reads_own_events_and_copy_only_what_a_filter_changes() {
    let (w, _v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    for ty in EventType::ALL {
        let shared = w.engine.read_shared(ty, w.cursor_at(ty, 0)).unwrap();
        let sub = everything(ty);
        let picks = shared.picks_for(&sub, w.cursor_at(ty, 0)).unwrap();
        let batch = shared.batch_for(&sub, w.cursor_at(ty, 0)).unwrap();
        assert!(!batch.events.is_empty(), "{ty}: the fixture has events");
        assert_eq!(picks.picks.len(), batch.events.len());
        for (pick, event) in picks.picks.iter().zip(&batch.events) {
            // No filter changes an event here: each is the read's own, by index, not a copy.
            let Pick::Same(index) = pick else {
                panic!("{ty}: an unfiltered subscription got a copy");
            };
            assert_eq!(&shared.events()[*index], event);
        }
        assert_eq!(picks.cursor, batch.cursor);
    }
}
