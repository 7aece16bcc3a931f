//! Person and group allowlist entries on a running daemon: Contacts edits reach streams and
//! polls, and entries that stand for nobody (a missing group, an unreadable store) match
//! nobody, with `State` saying so in counts.

use serde_json::{Value, json};
use tidings_core::EventType;
use tidings_core::filter::SenderPattern;
use tidings_core::settings::AllowEntry;
use tidings_fixtures::contacts::demo::{self, ALICE, ANA, BOB, FAMILY};

use super::support::{Client, Harness, both_on};

/// `entry` as the mail allowlist's only entry.
fn mail_allow_only(entry: &str) -> impl FnOnce(&mut tidings_core::Settings) {
    let entry = AllowEntry::parse(entry).unwrap();
    move |s| {
        both_on(s);
        s.mail.allow = vec![entry.clone()];
        s.messages.allow = vec![entry];
    }
}

fn family() -> String {
    format!("group: Family [{FAMILY}]")
}

/// Write the demo Contacts and wait (capped) until the daemon's watcher has read them.
async fn with_contacts(h: &Harness) {
    demo::write_demo(&h.home).unwrap();
    h.until_daemon("the Contacts to be read", |d| {
        !d.contacts().people().is_empty()
    })
    .await;
}

/// Wait (capped) until the mail allowlist in force says `sender` passes, or not.
async fn until_allowed(h: &Harness, ty: EventType, sender: &str, allowed: bool) {
    h.until_daemon("the allowlist in force", |d| {
        d.settings_arc()
            .allowlist(ty)
            .iter()
            .any(|p| p.matches(sender))
            == allowed
    })
    .await;
}

/// A poll's cursor at the head of mail now.
async fn mail_head(c: &mut Client) -> String {
    let first = c
        .ok(
            "events/poll",
            json!({"name": "mail.received", "arguments": {}}),
        )
        .await;
    first["cursor"].as_str().unwrap().to_owned()
}

/// The senders of the mail after `cursor`.
async fn mail_after(c: &mut Client, cursor: &str) -> Vec<String> {
    let r = c
        .ok(
            "events/poll",
            json!({"name": "mail.received", "arguments": {}, "cursor": cursor}),
        )
        .await;
    r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["data"]["from"]["address"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_entry_follows_contacts_edits_on_a_running_stream() {
    let mut h = Harness::new(mail_allow_only(&family())).await;
    with_contacts(&h).await;
    until_allowed(&h, EventType::MailReceived, "alice@example.com", true).await;
    let mut c = h.connect();
    let id = c
        .request(
            "events/stream",
            json!({"name": "mail.received", "arguments": {}}),
        )
        .await;
    c.note_of(id, "notifications/events/active").await;
    // Bob is not in Family, Alice is: the first event is Alice's.
    h.append_mail("bob@example.org");
    h.append_mail("alice@example.com");
    let event = c.note_of(id, "notifications/events/event").await;
    assert_eq!(
        event["params"]["data"]["from"]["address"],
        "alice@example.com"
    );

    // Alice leaves the group and Bob joins it, in Contacts, while the stream runs.
    demo::remove_member(&h.home, FAMILY, ALICE).unwrap();
    demo::add_member(&h.home, FAMILY, BOB).unwrap();
    until_allowed(&h, EventType::MailReceived, "alice@example.com", false).await;
    until_allowed(&h, EventType::MailReceived, "bob@example.org", true).await;
    h.append_mail("alice@example.com");
    h.append_mail("bob@example.org");
    let event = c.note_of(id, "notifications/events/event").await;
    assert_eq!(
        event["params"]["data"]["from"]["address"], "bob@example.org",
        "Alice's mail after she left the group is not delivered"
    );
}

/// The ROWID a cursor (`v2.<file>.<rowid>`) stands after.
fn rowid_of(cursor: &Value) -> i64 {
    cursor
        .as_str()
        .and_then(|c| c.rsplit('.').next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("not a cursor: {cursor}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_number_added_to_an_allowed_card_reaches_a_running_stream() {
    // The harness's chat is with +12025550143; Ana's card has only (202) 555-0101.
    let mut h = Harness::new(mail_allow_only(&format!("person: Ana Ruiz [{ANA}]"))).await;
    with_contacts(&h).await;
    until_allowed(&h, EventType::MessagesReceived, "+12025550101", true).await;
    let mut c = h.connect();
    let id = c
        .request(
            "events/stream",
            json!({"name": "messages.received", "arguments": {}}),
        )
        .await;
    c.note_of(id, "notifications/events/active").await;
    // Not Ana's number yet: read and passed over (a heartbeat's cursor moves past it).
    let before = h.append_message();
    loop {
        let beat = c.note_of(id, "notifications/events/heartbeat").await;
        if rowid_of(&beat["params"]["cursor"]) >= before {
            break;
        }
    }
    // The number added to her card, written nationally as a user would type it.
    demo::set_phone(&h.home, ANA, demo::ANA_PHONE, "(202) 555-0143").unwrap();
    until_allowed(&h, EventType::MessagesReceived, "+12025550143", true).await;
    let after = h.append_message();
    let event = c.note_of(id, "notifications/events/event").await;
    assert_eq!(event["params"]["data"]["from"]["handle"], "+12025550143");
    assert_eq!(
        rowid_of(&event["params"]["cursor"]),
        after,
        "the message from before the edit stays undelivered"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_group_matches_nobody_and_status_counts_it() {
    let mut h = Harness::new(mail_allow_only(
        "group: Friends [00000000-0000-0000-0000-000000000000:ABGroup]",
    ))
    .await;
    with_contacts(&h).await;
    h.until("the entry to show as unresolved", |s| {
        s.types[0].allowlist.groups == 1 && s.types[0].allowlist.unresolved == 1
    })
    .await;
    assert_eq!(
        h.daemon.settings_arc().allowlist(EventType::MailReceived),
        vec![SenderPattern::Nobody]
    );
    let mut c = h.connect();
    // Still a bound (never everybody): the subscription is accepted and delivers nothing.
    let head = mail_head(&mut c).await;
    h.append_mail("alice@example.com");
    assert_eq!(mail_after(&mut c, &head).await, Vec::<String>::new());
    // No name in what any client may read.
    let status = c.ok("tidings/status", json!({})).await;
    assert!(!status.to_string().contains("Friends"), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_contacts_store_fails_closed_and_says_which_file() {
    let mut h = Harness::new(mail_allow_only(&family())).await;
    with_contacts(&h).await;
    until_allowed(&h, EventType::MailReceived, "alice@example.com", true).await;
    let mut c = h.connect();
    let head = mail_head(&mut c).await;
    h.append_mail("alice@example.com");
    assert_eq!(mail_after(&mut c, &head).await, ["alice@example.com"]);

    // The root store is overwritten with garbage (a half-written or corrupt file).
    let root = tidings_fixtures::contacts::root_store(&h.home);
    for suffix in ["-wal", "-shm"] {
        let mut side = root.clone().into_os_string();
        side.push(suffix);
        let _ = std::fs::remove_file(side);
    }
    std::fs::write(&root, vec![0x5a; 8192]).unwrap();
    until_allowed(&h, EventType::MailReceived, "alice@example.com", false).await;
    h.until("the Contacts problem in status", |s| {
        s.contacts
            .problem
            .as_deref()
            .is_some_and(|p| p.contains("AddressBook-v22.abcddb"))
            && s.types[0].allowlist.unresolved == 1
    })
    .await;
    let head = mail_head(&mut c).await;
    h.append_mail("alice@example.com");
    assert_eq!(mail_after(&mut c, &head).await, Vec::<String>::new());
    let status: Value = c.ok("tidings/status", json!({})).await;
    for name in ["Alice", "Family", "Ana Ruiz"] {
        assert!(!status.to_string().contains(name), "{name} in {status}");
    }
}
