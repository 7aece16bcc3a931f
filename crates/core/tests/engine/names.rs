//! `from.contact`: a sender's card name in events only while the engine is told to name from
//! Contacts, read from a real Contacts store, the same on the SQL and the shared path, and
//! cleaned like every other name.

use std::sync::Arc;

use crate::common::*;
use serde_json::{Map, Value};
use tidings_core::contacts::{self, Contacts, ContactsPaths, Handle, Person, Region};
use tidings_core::{Cursor, Engine, EventType, Occurrence, Subscription};
use tidings_fixtures::contacts::demo;
use tidings_fixtures::{
    Addr, MacHome, MailFixture, MailProfile, MessagesFixture, MessagesProfile, NewChat, NewMail,
    NewMessage, Service, apple_ns_from_unix,
};

/// Every event of `ty` from the start, by SQL and by a shared read, which must agree.
fn both(engine: &Engine, ty: EventType) -> Vec<Occurrence> {
    let sub = everyone(ty);
    let from = Cursor {
        identity: engine.stamp(ty).unwrap().identity,
        rowid: 0,
    };
    let sql = engine.next(&sub, from, 100).unwrap().events;
    let shared = engine
        .read_shared(ty, from)
        .unwrap()
        .batch_for(&sub, from)
        .unwrap()
        .events;
    assert_eq!(shared, sql);
    sql
}

fn everyone(ty: EventType) -> Subscription {
    let s = settings(&["example.com", "example.net"], &["+1*"]);
    Subscription::new(ty.name(), &Map::new(), &s).unwrap()
}

fn contact_of(events: &[Occurrence]) -> Vec<Option<&str>> {
    events
        .iter()
        .map(|e| e.data["from"].get("contact").and_then(Value::as_str))
        .collect()
}

/// A home with the demo Contacts, three mails and three messages: from a card's address
/// (written in another case), from no card, and from a card's number.
fn home() -> (tempfile::TempDir, MacHome, Arc<Contacts>) {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    demo::write_demo(&home).unwrap();
    let (mut mail, inbox) = MailFixture::create_with_inbox(&home, MailProfile::V10Macos26).unwrap();
    for (i, from) in [
        "Alice@Example.com",
        "stranger@example.com",
        "dave@example.net",
    ]
    .into_iter()
    .enumerate()
    {
        let at = Some(NOW_UNIX - 60 + i64::try_from(i).unwrap());
        mail.append(&NewMail::new(
            Addr::new(from, "Header Name"),
            "hi",
            inbox,
            at,
        ))
        .unwrap();
    }
    let mut db = MessagesFixture::create(&home, MessagesProfile::Tahoe).unwrap();
    for (i, number) in ["+12025550101", "+12025550199", "+12025550143"]
        .into_iter()
        .enumerate()
    {
        let handle = db.add_handle(number, Service::IMessage).unwrap();
        let chat = db
            .add_chat(&NewChat {
                identifier: number.into(),
                display_name: None,
                group: false,
                service: Service::IMessage,
                participants: vec![handle],
            })
            .unwrap();
        let at = NOW_UNIX - 60 + i64::try_from(i).unwrap();
        db.append(&NewMessage::new(
            handle,
            chat,
            "hi",
            Some(apple_ns_from_unix(at)),
        ))
        .unwrap();
    }
    let us = Region::parse("US").unwrap();
    let read = contacts::load(&ContactsPaths::for_home(dir.path()), &us);
    assert!(read.problems().is_empty(), "{:?}", read.problems());
    (dir, home, Arc::new(read))
}

#[test]
fn senders_are_named_only_while_names_are_on_and_on_both_paths() {
    let (_dir, home, book) = home();
    let engine = engine_for(&home, limits());
    for ty in EventType::ALL {
        assert!(
            contact_of(&both(&engine, ty)).iter().all(Option::is_none),
            "{ty}: no names until the engine is told"
        );
    }
    engine.set_names(EventType::MessagesReceived, Some(book.clone()));
    assert_eq!(
        contact_of(&both(&engine, EventType::MessagesReceived)),
        [Some("Ana Ruiz"), None, Some("Bob Stone")]
    );
    assert!(
        contact_of(&both(&engine, EventType::MailReceived))
            .iter()
            .all(Option::is_none),
        "the switch is per type"
    );
    engine.set_names(EventType::MailReceived, Some(book));
    let mail = both(&engine, EventType::MailReceived);
    assert_eq!(
        contact_of(&mail),
        [Some("Alice Park"), None, Some("Example Networks")]
    );
    assert_eq!(
        mail[0].data["from"]["name"], "Header Name",
        "the header's own name stays"
    );
    for ty in EventType::ALL {
        // The schema describes the field, on the sender only.
        let schema = tidings_core::descriptor::payload_schema(ty);
        let from = &schema["properties"]["from"]["properties"];
        assert_eq!(from["contact"]["type"], "string", "{ty}");
        for e in both(&engine, ty) {
            for key in e.data["from"].as_object().unwrap().keys() {
                assert!(from.get(key).is_some(), "{ty}: from.{key} is described");
            }
        }
    }
    let to = &tidings_core::descriptor::payload_schema(EventType::MailReceived)["properties"]["to"];
    assert!(to["items"]["properties"].get("contact").is_none());
    engine.set_names(EventType::MessagesReceived, None);
    let off = both(&engine, EventType::MessagesReceived);
    assert!(contact_of(&off).iter().all(Option::is_none));
    assert!(
        off.iter()
            .all(|e| e.data["from"].as_object().unwrap().get("contact").is_none()),
        "absent, not null"
    );
}

#[test]
fn a_card_name_is_cleaned_and_capped_like_any_name() {
    let (_dir, home, _) = home();
    let engine = engine_for(&home, limits());
    let card = |id: &str, name: String, number: &str| Person {
        id: id.into(),
        name,
        company: false,
        phones: vec![Handle {
            written: number.into(),
            key: Some(number.into()),
        }],
        emails: Vec::new(),
    };
    let book = Contacts::from_parts(
        vec![
            card("a", "Ana\u{202E} \nRuiz\u{200B}".into(), "+12025550101"),
            card("b", "\u{200B}\u{202E}".into(), "+12025550199"),
            card("c", "x".repeat(5000), "+12025550143"),
        ],
        Vec::new(),
        Vec::new(),
        1,
    );
    engine.set_names(EventType::MessagesReceived, Some(Arc::new(book)));
    let events = both(&engine, EventType::MessagesReceived);
    let names = contact_of(&events);
    assert_eq!(names[0], Some("Ana  Ruiz"));
    assert_eq!(names[1], None, "a name that cleans to nothing is no name");
    let long = names[2].unwrap();
    assert_eq!(long.chars().count(), tidings_core::text::MAX_NAME_CHARS);
    assert!(long.ends_with('…'));
}
