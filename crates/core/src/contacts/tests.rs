//! The Contacts reader on real store files built by `tidings_fixtures::contacts`.

use tidings_fixtures::MacHome;
use tidings_fixtures::contacts::{AddressBook, Card, Entities, demo, root_store, source_store};

use super::*;

fn us() -> Region {
    Region::parse("US").unwrap()
}

fn home() -> (tempfile::TempDir, MacHome, ContactsPaths) {
    let dir = tempfile::tempdir().unwrap();
    let home = MacHome::new(dir.path());
    let paths = ContactsPaths::for_home(dir.path());
    (dir, home, paths)
}

fn demo_home() -> (tempfile::TempDir, MacHome, ContactsPaths) {
    let (dir, home, paths) = home();
    demo::write_demo(&home).unwrap();
    (dir, home, paths)
}

fn name_of<'a>(c: &'a Contacts, handle: &str) -> Option<&'a str> {
    c.person_for_handle(handle).map(|p| p.name.as_str())
}

fn group(id: &str) -> PeopleEntry {
    PeopleEntry {
        kind: PeopleKind::Group,
        name: "Family".to_owned(),
        id: Some(id.to_owned()),
    }
}

#[test]
fn every_store_is_read_and_handles_find_their_cards() {
    let (_d, _home, paths) = demo_home();
    assert_eq!(paths.stores().len(), 2, "root and one account store");
    let c = load(&paths, &us());
    assert!(c.problems().is_empty(), "{:?}", c.problems());
    assert_eq!(c.stores_read(), 2);
    // A national number on the card, E.164 in chat.db.
    assert_eq!(name_of(&c, "+12025550101"), Some("Ana Ruiz"));
    let ana = c.person(demo::ANA).unwrap();
    assert_eq!(ana.phones[0].written, demo::ANA_PHONE);
    assert_eq!(ana.phones[0].key.as_deref(), Some("+12025550101"));
    // Addresses in any case; the card's own case does not matter either.
    assert_eq!(name_of(&c, "ALICE@example.com"), Some("Alice Park"));
    assert_eq!(name_of(&c, "bob@example.org"), Some("Bob Stone"));
    assert_eq!(name_of(&c, "+12025550143"), Some("Bob Stone"));
    // A company card is named by its organization.
    let company = c.person(demo::COMPANY).unwrap();
    assert!(company.company);
    assert_eq!(name_of(&c, "dave@example.net"), Some("Example Networks"));
    // The Exchange card (ABCDSubscribedContact) in the account store.
    assert_eq!(name_of(&c, "carol@eu.example.com"), Some("Carol Jones"));
    assert_eq!(name_of(&c, "+12025550177"), None);
}

#[test]
fn international_numbers_and_short_codes_match_as_the_stores_keep_them() {
    let (_d, home, paths) = home();
    let mut b = AddressBook::create(&root_store(&home), Entities::MACOS_26_6).unwrap();
    b.add_card(&Card::person("U1", "Ian", "Grey").phone("+44 7700 900123"))
        .unwrap();
    b.add_card(&Card::company("U2", "Pharmacy").phone("56249"))
        .unwrap();
    b.add_card(&Card::person("U3", "No", "Number").phone("call reception"))
        .unwrap();
    let c = load(&paths, &us());
    assert_eq!(name_of(&c, "+447700900123"), Some("Ian Grey"));
    assert_eq!(name_of(&c, "56249"), Some("Pharmacy"));
    let none = c.person("U3").unwrap();
    assert_eq!(
        none.phones[0].key, None,
        "kept as written, matching nothing"
    );
    assert!(none.keys().is_empty());
}

#[test]
fn entity_numbers_are_looked_up_not_assumed() {
    let (_d, home, paths) = home();
    let mut b = AddressBook::create(&root_store(&home), Entities::DRIFTED).unwrap();
    let ana = b
        .add_card(&Card::person("A", "Ana", "Ruiz").email("ana@example.com"))
        .unwrap();
    let sub = b
        .add_card(&Card {
            subscribed: true,
            ..Card::person("X", "Exa", "Change").email("x@example.com")
        })
        .unwrap();
    let g = b.add_group("G", "Family").unwrap();
    b.add_member(g, ana).unwrap();
    b.add_member(g, sub).unwrap();
    let c = load(&paths, &us());
    assert!(c.problems().is_empty(), "{:?}", c.problems());
    assert_eq!(c.people().len(), 2);
    assert_eq!(c.group("G").unwrap().members, ["A", "X"]);
}

#[test]
fn groups_have_members_smart_groups_none_and_nesting_is_not_membership() {
    let (_d, home, paths) = home();
    let mut b = AddressBook::create(&root_store(&home), Entities::MACOS_26_6).unwrap();
    let ana = b
        .add_card(&Card::person("A", "Ana", "Ruiz").phone("(202) 555-0101"))
        .unwrap();
    let family = b.add_group("F", "Family").unwrap();
    let cousins = b.add_group("C", "Cousins").unwrap();
    b.add_smart_group("S", "Everyone nearby").unwrap();
    b.add_member(family, ana).unwrap();
    b.nest_group(cousins, family).unwrap();
    let c = load(&paths, &us());
    assert_eq!(c.groups().len(), 3);
    assert_eq!(c.group("F").unwrap().members, ["A"]);
    assert!(
        c.group("C").unwrap().members.is_empty(),
        "nesting holds no people"
    );
    assert!(c.group("S").unwrap().members.is_empty());
    assert_eq!(
        c.resolve(&group("F")),
        Resolved::Handles(vec!["+12025550101".to_owned()])
    );
}

#[test]
fn edits_are_seen_on_reload_and_change_the_fingerprint() {
    let (_d, home, paths) = demo_home();
    let first = load(&paths, &us());
    let keys = |c: &Contacts| match c.resolve(&group(demo::FAMILY)) {
        Resolved::Handles(k) => k,
        other => panic!("{other:?}"),
    };
    assert_eq!(keys(&first), ["alice@example.com", "+12025550101"]);
    assert_eq!(load(&paths, &us()).fingerprint(), first.fingerprint());

    demo::add_member(&home, demo::FAMILY, demo::BOB).unwrap();
    let added = load(&paths, &us());
    assert!(keys(&added).contains(&"bob@example.org".to_owned()));
    assert_ne!(added.fingerprint(), first.fingerprint());

    demo::remove_member(&home, demo::FAMILY, demo::ALICE).unwrap();
    demo::set_phone(&home, demo::ANA, demo::ANA_PHONE, "202-555-0177").unwrap();
    let edited = load(&paths, &us());
    let k = keys(&edited);
    assert!(!k.contains(&"alice@example.com".to_owned()), "{k:?}");
    assert!(k.contains(&"+12025550177".to_owned()), "{k:?}");
    assert_eq!(name_of(&edited, "+12025550177"), Some("Ana Ruiz"));
    assert_eq!(name_of(&edited, "+12025550101"), None);
}

#[test]
fn a_deleted_group_or_card_is_missing_and_names_resolve_when_unique() {
    let (_d, home, paths) = demo_home();
    let mut b = AddressBook::open(&root_store(&home)).unwrap();
    let pk = b.pk_of(demo::FAMILY).unwrap();
    b.delete_record(pk).unwrap();
    let c = load(&paths, &us());
    assert_eq!(c.resolve(&group(demo::FAMILY)), Resolved::Missing);
    let by_name = |kind, name: &str| PeopleEntry {
        kind,
        name: name.to_owned(),
        id: None,
    };
    assert_eq!(
        c.resolve(&by_name(PeopleKind::Person, "alice PARK")),
        Resolved::Handles(vec!["alice@example.com".to_owned()])
    );
    b.add_card(&Card::person("dup", "Alice", "Park")).unwrap();
    let c = load(&paths, &us());
    assert_eq!(
        c.resolve(&by_name(PeopleKind::Person, "Alice Park")),
        Resolved::Ambiguous(2)
    );
    // The id decides, whatever the name says now.
    let renamed = PeopleEntry {
        kind: PeopleKind::Person,
        name: "Old name".to_owned(),
        id: Some(demo::ALICE.to_owned()),
    };
    assert!(matches!(c.resolve(&renamed), Resolved::Handles(_)));
}

#[test]
fn an_unreadable_store_fails_closed_while_the_others_load() {
    let (_d, home, paths) = demo_home();
    // The account store is garbage: a half-written copy.
    let bad = source_store(&home, demo::EXCHANGE_SOURCE);
    std::fs::write(
        &bad,
        b"SQLite format 3\0 this is not the rest of a database",
    )
    .unwrap();
    let c = load(&paths, &us());
    assert_eq!(c.stores_read(), 1);
    assert_eq!(c.problems().len(), 1);
    let p = &c.problems()[0];
    assert_eq!(p.path, bad);
    assert_eq!(p.kind, ContactsProblemKind::Corrupt, "{p:?}");
    assert!(!p.detail.contains("carol"), "{p:?}");
    // The root still answers; what could be in the bad store is unreadable, not missing.
    assert_eq!(name_of(&c, "+12025550101"), Some("Ana Ruiz"));
    let carol = PeopleEntry {
        kind: PeopleKind::Person,
        name: "Carol Jones".to_owned(),
        id: Some(demo::CAROL.to_owned()),
    };
    assert_eq!(c.resolve(&carol), Resolved::Unreadable);

    // An allowlist of that entry only delivers nothing.
    let mut s = crate::Settings::default();
    s.messages.allow = vec![crate::settings::AllowEntry::People(carol)];
    s.contacts = crate::settings::ContactsInForce::new(c);
    let list = s.allowlist(crate::EventType::MessagesReceived);
    assert_eq!(list, [crate::filter::SenderPattern::Nobody]);
    assert!(!list[0].matches("carol@eu.example.com"));
}

#[test]
fn missing_and_foreign_files_are_named_problems() {
    let (_d, home, paths) = home();
    let none = load(&paths, &us());
    assert_eq!(none.problems()[0].kind, ContactsProblemKind::NotFound);
    assert_eq!(none.stores_read(), 0);

    let root = root_store(&home);
    std::fs::create_dir_all(root.parent().unwrap()).unwrap();
    rusqlite::Connection::open(&root)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let c = load(&paths, &us());
    assert_eq!(c.problems()[0].kind, ContactsProblemKind::Schema);
    assert!(c.problems()[0].detail.contains("Z_PRIMARYKEY"));

    std::fs::write(&root, b"").unwrap();
    assert_eq!(
        load(&paths, &us()).problems()[0].kind,
        ContactsProblemKind::Corrupt
    );
}

#[test]
fn a_locked_store_is_locked_and_the_other_loads() {
    let (_d, home, paths) = demo_home();
    let root = root_store(&home);
    // Contacts holding an exclusive lock (a rollback-journal store mid-write).
    let w = rusqlite::Connection::open(&root).unwrap();
    w.execute_batch(
        "PRAGMA journal_mode = DELETE; PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;",
    )
    .unwrap();
    let c = load(&paths, &us());
    assert_eq!(c.problems().len(), 1, "{:?}", c.problems());
    assert_eq!(c.problems()[0].kind, ContactsProblemKind::Locked);
    assert_eq!(name_of(&c, "carol@eu.example.com"), Some("Carol Jones"));
    w.execute_batch("COMMIT").unwrap();
}

#[test]
fn search_finds_names_numbers_and_addresses() {
    let (_d, _home, paths) = demo_home();
    let c = load(&paths, &us());
    let names =
        |q: &str| -> Vec<&str> { c.search(q, 10).iter().map(|p| p.name.as_str()).collect() };
    assert_eq!(names("ana"), ["Ana Ruiz"]);
    assert_eq!(names("PARK"), ["Alice Park"]);
    assert_eq!(names("202 555 0101"), ["Ana Ruiz"]);
    assert_eq!(names("+12025550101"), ["Ana Ruiz"]);
    assert_eq!(names("(202) 555-0143"), ["Bob Stone"]);
    assert_eq!(names("example.net"), ["Example Networks"]);
    assert_eq!(names("carol@EU"), ["Carol Jones"]);
    assert!(names("zzz").is_empty());
    assert_eq!(c.search("a", 2).len(), 2, "at most the limit");
    assert!(c.search("  ", 10).is_empty());
}
