//! Over the fixture variety, exactly the rows the manifest marks deliverable become events:
//! every skip rule, Gmail's INBOX through labels, undated rows, duplicate copies once.

use crate::common::*;
use serde_json::json;
use tidings_core::{EventType, Occurrence};
use tidings_fixtures::{Addr, Expect, MailProfile, Manifest, MessagesProfile, NewMail};

fn delivered(expects: &[Expect]) -> Vec<i64> {
    Manifest::delivered(expects).map(|e| e.rowid).collect()
}

fn why<'a>(expects: &'a [Expect], what: &str) -> &'a Expect {
    expects
        .iter()
        .find(|e| e.why == what)
        .unwrap_or_else(|| panic!("no {what} row in the variety"))
}

/// The event delivered for the manifest's row marked `what`.
fn event_for(events: &[Occurrence], expects: &[Expect], what: &str) -> Occurrence {
    let rowid = why(expects, what).rowid;
    events
        .iter()
        .find(|e| rowid_of(e) == rowid)
        .unwrap()
        .clone()
}

#[test]
fn mail_delivers_exactly_the_manifest_on_both_profiles() {
    for profile in [MailProfile::V10Macos26, MailProfile::V10Pre26] {
        let (w, v) = World::variety(profile, MessagesProfile::Tahoe, limits());
        let sub = everything(EventType::MailReceived);
        let (events, _, _) = w.drain(&sub, w.cursor_at(EventType::MailReceived, 0), 1000);
        let rowids: Vec<i64> = events.iter().map(rowid_of).collect();
        assert_eq!(rowids, delivered(&v.manifest.mail), "{profile:?}");
        for (e, x) in events.iter().zip(Manifest::delivered(&v.manifest.mail)) {
            assert_eq!(e.name, "mail.received");
            if x.id.is_empty() {
                assert!(
                    e.event_id.starts_with("gmid-"),
                    "{profile:?} fallback id: {}",
                    e.event_id
                );
                assert_eq!(e.data["messageId"], json!(null));
            } else {
                assert_eq!(e.event_id, x.id);
                assert_eq!(e.data["messageId"], json!(x.id));
            }
        }
        let ids: std::collections::HashSet<_> = events.iter().map(|e| &e.event_id).collect();
        assert_eq!(ids.len(), events.len(), "event ids are unique");
    }
}

#[test]
fn messages_delivers_exactly_the_manifest_on_both_profiles() {
    for profile in [MessagesProfile::Tahoe, MessagesProfile::Sequoia] {
        let (w, v) = World::variety(MailProfile::V10Macos26, profile, limits());
        let sub = everything(EventType::MessagesReceived);
        let (events, _, _) = w.drain(&sub, w.cursor_at(EventType::MessagesReceived, 0), 1000);
        let rowids: Vec<i64> = events.iter().map(rowid_of).collect();
        assert_eq!(rowids, delivered(&v.manifest.messages), "{profile:?}");
        for (e, x) in events.iter().zip(Manifest::delivered(&v.manifest.messages)) {
            assert_eq!(e.event_id, x.id, "the guid is the event id");
            assert_eq!(e.data["guid"], json!(x.id));
        }
    }
}

#[test]
fn mail_payloads_carry_the_envelope_and_nothing_else() {
    let (w, v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let sub = everything(EventType::MailReceived);
    let (events, _, _) = w.drain(&sub, w.cursor_at(EventType::MailReceived, 0), 1000);
    let by_row = |what: &str| event_for(&events, &v.manifest.mail, what);
    let plain = by_row("plain");
    let keys: Vec<&String> = plain.data.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "account",
            "attachmentCount",
            "cc",
            "dateReceived",
            "dateSent",
            "flagged",
            "from",
            "mailbox",
            "messageId",
            "read",
            "subject",
            "to"
        ]
    );
    assert_eq!(
        plain.data["from"],
        json!({"address": "alice@example.com", "name": "Alice Park"})
    );
    assert_eq!(plain.data["to"][0]["address"], "me@example.org");
    assert_eq!(plain.data["cc"].as_array().unwrap().len(), 2);
    assert_eq!(plain.data["mailbox"], "INBOX");
    assert_eq!(plain.data["account"], "me@example.org");
    assert!(plain.timestamp.contains('T') && plain.timestamp.ends_with('Z'));
    assert_eq!(plain.data["dateReceived"], json!(plain.timestamp));

    assert_eq!(
        by_row("re prefix").data["subject"],
        "Re: Lunch on Thursday?"
    );
    assert_eq!(by_row("attachments").data["attachmentCount"], 2);

    let gmail = by_row("gmail inbox via labels");
    assert_eq!(
        gmail.data["mailbox"], "INBOX",
        "Gmail's INBOX membership is a label"
    );
    assert_eq!(gmail.data["account"], "me@example.com");

    let undated = by_row("undated");
    assert_eq!(undated.data["dateReceived"], json!(null));
    assert_eq!(
        undated.timestamp, "2030-01-01T00:00:00Z",
        "stamped with the scan time"
    );

    let hostile = by_row("hostile subject").data;
    let subject = hostile["subject"].as_str().unwrap();
    assert!(!subject.chars().any(char::is_control), "{subject:?}");
    assert!(subject.starts_with("[31mURGENT"), "{subject:?}");
    assert!(
        !hostile["from"]["name"]
            .as_str()
            .unwrap()
            .contains('\u{202e}')
    );

    let long = by_row("very long subject").data;
    assert_eq!(
        long["subject"].as_str().unwrap().chars().count(),
        tidings_core::text::MAX_SUBJECT_CHARS
    );
}

#[test]
fn messages_payloads_carry_the_envelope_and_nothing_else() {
    let (w, v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let sub = everything(EventType::MessagesReceived);
    let (events, _, _) = w.drain(&sub, w.cursor_at(EventType::MessagesReceived, 0), 1000);
    let by_row = |what: &str| event_for(&events, &v.manifest.messages, what);
    let plain = by_row("plain");
    assert_eq!(
        plain.data["from"],
        json!({"handle": "+12025550101", "service": "iMessage"})
    );
    assert_eq!(plain.data["chat"]["isGroup"], false);
    assert_eq!(plain.data["isReply"], false);
    let text = serde_json::to_string(&events).unwrap();
    assert!(
        !text.contains("still on for tonight"),
        "no message text in any payload"
    );

    let group = by_row("group").data;
    assert_eq!(group["chat"]["isGroup"], true);
    assert_eq!(group["chat"]["name"], "Weekend Plans 🌲");
    assert_eq!(by_row("sms").data["from"]["service"], "SMS");
    assert_eq!(by_row("rcs").data["from"]["service"], "RCS");
    assert_eq!(by_row("reply").data["isReply"], true);
    assert_eq!(by_row("attachment only").data["attachmentCount"], 1);
    let undated = by_row("undated");
    assert_eq!(undated.data["date"], json!(null));
    assert_eq!(undated.timestamp, "2030-01-01T00:00:00Z");
}

#[test]
fn a_mail_to_a_long_list_names_at_most_the_schema_s_recipients() {
    use tidings_core::descriptor::{MAX_RECIPIENTS, payload_schema};
    let (w, mut v) = World::variety(MailProfile::V10Macos26, MessagesProfile::Tahoe, limits());
    let head = w.engine.stamp(EventType::MailReceived).unwrap().head;
    let mailbox: i64 = v
        .mail
        .connection()
        .query_row(
            "SELECT ROWID FROM mailboxes WHERE url LIKE '%/INBOX' ORDER BY ROWID LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let list = |tag: &str| -> Vec<Addr> {
        (0..MAX_RECIPIENTS + 10)
            .map(|i| Addr::bare(&format!("{tag}{i}@example.org")))
            .collect()
    };
    let mut m = NewMail::new(
        Addr::bare("list@example.com"),
        "To everyone",
        mailbox,
        Some(NOW_UNIX),
    );
    m.to = list("to");
    m.cc = list("cc");
    v.mail.append(&m).unwrap();
    let sub = everything(EventType::MailReceived);
    let (events, _, _) = w.drain(&sub, w.cursor_at(EventType::MailReceived, head), 100);
    let data = &events.last().unwrap().data;
    let schema = payload_schema(EventType::MailReceived);
    for key in ["to", "cc"] {
        assert_eq!(data[key].as_array().unwrap().len(), MAX_RECIPIENTS, "{key}");
        let addresses: Vec<&str> = data[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["address"].as_str().unwrap())
            .collect();
        let in_order: Vec<String> = (0..MAX_RECIPIENTS)
            .map(|i| format!("{key}{i}@example.org"))
            .collect();
        assert_eq!(addresses, in_order, "{key}: the first, in their order");
        assert_eq!(schema["properties"][key]["maxItems"], json!(MAX_RECIPIENTS));
    }
}
