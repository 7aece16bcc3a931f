//! The allowlist in words, for the app: what kind an entry is as it is typed, a whole list
//! checked before it is saved, and plain sentences of what an agent can see.
//!
//! Every entry is parsed by [`SenderPattern::parse_allow`], the parser `settings.toml` uses, so
//! the app can never accept what the file would refuse. The app is a little stricter (a
//! phone number in the mail allowlist never matches mail, a chat or `*.sub` cannot be an
//! entry): see docs/decisions/app.md, "Allowlist entries".

use serde::Serialize;

use crate::contacts::{PeopleEntry, PeopleKind, Resolved};
use crate::event::EventType;
use crate::filter::{MAX_PATTERN_LEN, SenderPattern, is_phone_handle};
use crate::settings::{AllowEntry, ContactsInForce, EventSettings, Settings};
use crate::text::{MAX_QUOTE_CHARS, sanitize};

/// The most entries one type's allowlist may hold when set from the app (the file itself is
/// bounded by its 1 MiB size).
pub const MAX_ALLOW_ENTRIES: usize = 1000;

/// Entries named one by one in a sentence; the rest are counted.
const NAMED_IN_SENTENCE: usize = 5;

/// Characters of an entry shown in the menu's one-line summary.
const SUMMARY_ENTRY_CHARS: usize = 40;

/// What an allowlist entry names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum AllowKind {
    /// One e-mail address (`ana@example.org`).
    Address,
    /// A domain and all its subdomains (`acme.com`, `@acme.com`).
    Domain,
    /// One phone number (`+1 202 555 0143`).
    Phone,
    /// Phone numbers starting with the digits before `*` (`+1202*`).
    PhonePrefix,
    /// E-mail addresses starting with the text before `*` (`noreply*`).
    AddressPrefix,
    /// A card in Contacts (`person: Ana Ruiz [ID]`): its numbers and addresses.
    Person,
    /// A group in Contacts (`group: Family [ID]`): its members' numbers and addresses.
    Group,
}

impl AllowKind {
    /// The kind of a parsed pattern.
    pub fn of(pattern: &SenderPattern) -> AllowKind {
        match pattern {
            SenderPattern::Exact(v) if v.contains('@') => AllowKind::Address,
            SenderPattern::Exact(_) => AllowKind::Phone,
            SenderPattern::Domain(_) => AllowKind::Domain,
            SenderPattern::Prefix(p) if is_phone_handle(p) => AllowKind::PhonePrefix,
            SenderPattern::Prefix(_) => AllowKind::AddressPrefix,
            // Only a people entry that resolves to nobody expands to `Nobody`.
            SenderPattern::Nobody => AllowKind::Person,
        }
    }

    /// The kind of an entry as saved.
    pub fn of_entry(entry: &AllowEntry) -> AllowKind {
        match entry {
            AllowEntry::Sender(p) => AllowKind::of(p),
            AllowEntry::People(e) => match e.kind {
                PeopleKind::Person => AllowKind::Person,
                PeopleKind::Group => AllowKind::Group,
            },
        }
    }
}

/// Whether a people entry stands for anyone now, for status and the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum EntryState {
    /// A sender entry, or a people entry found in Contacts.
    Ok,
    /// No such card or group (deleted, or a name nobody has): it allows nobody.
    Missing,
    /// A name-only entry that several cards or groups share: it allows nobody until an id
    /// is picked.
    Ambiguous,
    /// Contacts could not be read: it allows nobody until they can.
    Unreadable,
}

/// One allowlist entry described for status and the app.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EntryView {
    /// The entry as saved.
    pub entry: String,
    /// Its kind.
    pub kind: AllowKind,
    /// What to show: the name of a person or group, the pattern of a sender entry.
    pub label: String,
    /// Whether it stands for anyone now.
    pub state: EntryState,
}

/// The state of one entry with `contacts` in force.
pub fn entry_state(entry: &AllowEntry, contacts: &ContactsInForce) -> EntryState {
    match entry {
        AllowEntry::Sender(_) => EntryState::Ok,
        AllowEntry::People(e) => match contacts.resolve(e) {
            Resolved::Handles(_) => EntryState::Ok,
            Resolved::Missing => EntryState::Missing,
            Resolved::Ambiguous(_) => EntryState::Ambiguous,
            Resolved::Unreadable => EntryState::Unreadable,
        },
    }
}

/// Every entry of `ty`'s allowlist with its kind, label and state, in order.
pub fn describe(settings: &Settings, ty: EventType) -> Vec<EntryView> {
    settings
        .for_type(ty)
        .allow
        .iter()
        .map(|e| EntryView {
            entry: e.to_string(),
            kind: AllowKind::of_entry(e),
            label: label(e),
            state: entry_state(e, &settings.contacts),
        })
        .collect()
}

/// What an entry is called: a person's or group's name, or the pattern itself.
fn label(entry: &AllowEntry) -> String {
    match entry {
        AllowEntry::Sender(p) => p.to_string(),
        AllowEntry::People(e) => e.name.clone(),
    }
}

/// Check one entry of `ty`'s allowlist as it is typed: its kind, or why it is refused, in a
/// sentence that quotes the entry (cut to a few dozen characters).
pub fn check_allow_entry(ty: EventType, entry: &str) -> Result<AllowKind, String> {
    check(ty, entry).map(|e| AllowKind::of_entry(&e))
}

fn check(ty: EventType, entry: &str) -> Result<AllowEntry, String> {
    let s = entry.trim();
    let quoted = sanitize(s, MAX_QUOTE_CHARS);
    if s.is_empty() {
        return Err("an entry cannot be empty".to_owned());
    }
    let chars = s.chars().count();
    if chars > MAX_PATTERN_LEN {
        return Err(format!(
            "`{quoted}` is {chars} characters; an entry is at most {MAX_PATTERN_LEN}"
        ));
    }
    if PeopleEntry::is_people(s) {
        // A person or group stands for whatever handles the card has: numbers in the mail
        // allowlist simply match no mail.
        return PeopleEntry::parse(s)
            .map(AllowEntry::People)
            .map_err(|e| e.to_string());
    }
    if looks_like_chat(s) {
        return Err(format!(
            "`{quoted}` is a chat; a chat cannot be allowed (anyone can add you to one or name \
             one like it), so allow its members' numbers or addresses instead"
        ));
    }
    if let Some(domain) = s.strip_prefix("*.") {
        let domain = sanitize(domain, MAX_QUOTE_CHARS);
        return Err(format!(
            "`{quoted}`: write `{domain}`; a domain entry already covers all its subdomains"
        ));
    }
    let pattern = SenderPattern::parse_allow(s).map_err(|e| e.to_string())?;
    let kind = AllowKind::of(&pattern);
    if ty == EventType::MailReceived && matches!(kind, AllowKind::Phone | AllowKind::PhonePrefix) {
        return Err(format!(
            "`{quoted}` is a phone number; mail comes from addresses, so it would never match"
        ));
    }
    Ok(AllowEntry::Sender(pattern))
}

/// Chat identifiers and guids as chat.db keeps them: `chat123456789`, `iMessage;+;chat…`.
fn looks_like_chat(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    let id_tail = lower
        .strip_prefix("chat")
        .is_some_and(|rest| rest.len() >= 6 && rest.bytes().all(|b| b.is_ascii_digit()));
    id_tail || lower.contains(";+;") || lower.contains(";-;")
}

/// Check a whole allowlist for `ty` before it is saved: at most [`MAX_ALLOW_ENTRIES`], each
/// entry as [`check_allow_entry`] says. The error names the first bad entry, its position
/// (1-based) and why; duplicates are dropped, first one kept.
pub fn check_allowlist(ty: EventType, entries: &[String]) -> Result<Vec<AllowEntry>, String> {
    if entries.len() > MAX_ALLOW_ENTRIES {
        return Err(format!(
            "the {} allowlist has {} entries; at most {MAX_ALLOW_ENTRIES} are allowed",
            ty.name(),
            entries.len()
        ));
    }
    let mut out: Vec<AllowEntry> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let checked = check(ty, entry).map_err(|why| format!("entry {}: {why}", i + 1))?;
        if !out.contains(&checked) {
            out.push(checked);
        }
    }
    Ok(out)
}

/// What an agent can see of `ty`, in one plain sentence for the settings window. A person or
/// group entry that stands for nobody now (`contacts` says which) is not named as a sender:
/// the sentence counts it apart.
pub fn reach_sentence(
    ty: EventType,
    settings: &EventSettings,
    contacts: &ContactsInForce,
) -> String {
    let (title, noun) = words(ty);
    if !settings.enabled {
        return format!("{title} is off: no agent receives any.");
    }
    if settings.allow.is_empty() {
        // The sender bound (`request/`): with no allowlist, a client must name its senders,
        // and then gets whichever it names.
        return format!(
            "Agents can receive {noun} from any sender they name themselves; add senders here \
             to limit who can reach them. Never the body."
        );
    }
    let (live, unresolved): (Vec<&AllowEntry>, Vec<&AllowEntry>) = settings
        .allow
        .iter()
        .partition(|e| entry_state(e, contacts) == EntryState::Ok);
    let nobody = match unresolved.len() {
        0 => String::new(),
        1 => " (1 person or group entry is not found in Contacts and matches nobody)".to_owned(),
        n => format!(" ({n} person or group entries are not found in Contacts and match nobody)"),
    };
    if live.is_empty() {
        return format!("Agents receive no {noun}: no entry matches anyone{nobody}.");
    }
    let mut parts: Vec<String> = live
        .iter()
        .take(NAMED_IN_SENTENCE)
        .map(|e| phrase(e))
        .collect();
    let rest = live.len().saturating_sub(NAMED_IN_SENTENCE);
    if rest > 0 {
        parts.push(format!(
            "from {rest} more {}",
            if rest == 1 { "entry" } else { "entries" }
        ));
    }
    format!(
        "Agents can receive {noun} {}; nothing else{nobody}. Never the body.",
        join_and(&parts)
    )
}

/// The one-line summary under a type in the menu: "from acme.com and 2 more".
pub fn allow_summary(settings: &EventSettings) -> String {
    let shown = |e: &AllowEntry| sanitize(&label(e), SUMMARY_ENTRY_CHARS);
    match settings.allow.as_slice() {
        [] => "any sender an agent names".to_owned(),
        [one] => format!("from {}", shown(one)),
        [one, two] => format!("from {} and {}", shown(one), shown(two)),
        [one, rest @ ..] => format!("from {} and {} more", shown(one), rest.len()),
    }
}

fn words(ty: EventType) -> (&'static str, &'static str) {
    (ty.app_name(), ty.settings_section())
}

fn phrase(entry: &AllowEntry) -> String {
    let pattern = match entry {
        AllowEntry::Sender(p) => p,
        AllowEntry::People(e) => {
            let name = sanitize(&e.name, SUMMARY_ENTRY_CHARS);
            return match e.kind {
                PeopleKind::Person => format!("from {name}"),
                PeopleKind::Group => format!("from the group {name}"),
            };
        }
    };
    match (AllowKind::of(pattern), pattern) {
        (AllowKind::Domain, SenderPattern::Domain(d)) => format!("from anyone at {d}"),
        (AllowKind::PhonePrefix, SenderPattern::Prefix(p)) => format!("from numbers starting {p}"),
        (AllowKind::AddressPrefix, SenderPattern::Prefix(p)) => {
            format!("from addresses starting {p}")
        }
        (_, other) => format!("from {other}"),
    }
}

/// "a", "a and b", "a, b and c".
fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[&str]) -> EventSettings {
        EventSettings {
            enabled: true,
            allow: list.iter().map(|e| AllowEntry::parse(e).unwrap()).collect(),
            ..EventSettings::default()
        }
    }

    #[test]
    fn entries_are_told_apart_by_kind() {
        let m = EventType::MessagesReceived;
        let cases = [
            ("ana@example.org", AllowKind::Address),
            ("acme.com", AllowKind::Domain),
            ("@acme.com", AllowKind::Domain),
            ("eu.acme.com", AllowKind::Domain),
            ("+1 (202) 555-0143", AllowKind::Phone),
            ("+1202*", AllowKind::PhonePrefix),
            ("noreply*", AllowKind::AddressPrefix),
        ];
        for (entry, kind) in cases {
            assert_eq!(check_allow_entry(m, entry), Ok(kind), "{entry}");
        }
        assert_eq!(
            check_allow_entry(EventType::MailReceived, "ana@example.org"),
            Ok(AllowKind::Address)
        );
    }

    #[test]
    fn refusals_name_the_entry_and_why() {
        let mail = EventType::MailReceived;
        let msgs = EventType::MessagesReceived;
        let err = |ty, e| check_allow_entry(ty, e).unwrap_err();
        assert_eq!(err(mail, "  "), "an entry cannot be empty");
        assert!(err(mail, "everyone").contains("`everyone` is not"));
        assert!(err(mail, "+12025550143").contains("phone number; mail comes from addresses"));
        assert!(err(mail, "+1202*").contains("never match"));
        assert!(err(msgs, "chat123456789").contains("is a chat"));
        assert!(err(msgs, "iMessage;+;chat123456").contains("is a chat"));
        assert!(err(mail, "*.acme.com").contains("write `acme.com`"));
        let long = format!("{}@example.com", "a".repeat(400));
        let e = err(mail, &long);
        assert!(
            e.contains("412 characters") && e.contains("at most 320"),
            "{e}"
        );
        assert!(e.len() < 200, "the entry is quoted cut: {e}");
    }

    #[test]
    fn a_list_names_its_first_bad_entry_and_drops_duplicates() {
        let ty = EventType::MessagesReceived;
        let list = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let err = check_allowlist(ty, &list(&["acme.com", "nope", "x y"])).unwrap_err();
        assert!(err.starts_with("entry 2: `nope` is not"), "{err}");
        let ok = check_allowlist(ty, &list(&["acme.com", "ACME.com", "+1202*"])).unwrap();
        assert_eq!(ok.len(), 2);
        let many = vec!["acme.com".to_owned(); MAX_ALLOW_ENTRIES + 1];
        let err = check_allowlist(ty, &many).unwrap_err();
        assert!(err.contains("1001 entries; at most 1000"), "{err}");
    }

    #[test]
    fn the_reach_sentence_says_what_an_agent_can_see() {
        let ty = EventType::MailReceived;
        let none = ContactsInForce::default();
        assert_eq!(
            reach_sentence(ty, &EventSettings::default(), &none),
            "Mail is off: no agent receives any."
        );
        assert_eq!(
            reach_sentence(ty, &entries(&["acme.com", "ana@example.org"]), &none),
            "Agents can receive mail from anyone at acme.com and from ana@example.org; nothing \
             else. Never the body."
        );
        let open = reach_sentence(EventType::MessagesReceived, &entries(&[]), &none);
        assert!(open.starts_with("Agents can receive messages from any sender they name"));
        let seven = entries(&[
            "a.com", "b.com", "c.com", "d.com", "e.com", "f.com", "+1202*",
        ]);
        let s = reach_sentence(EventType::MessagesReceived, &seven, &none);
        assert!(
            s.contains("from anyone at e.com and from 2 more entries;"),
            "{s}"
        );
        let s = reach_sentence(
            EventType::MessagesReceived,
            &entries(&["+1202*", "no*"]),
            &none,
        );
        assert!(
            s.contains("from numbers starting +1202 and from addresses starting no;"),
            "{s}"
        );
    }

    #[test]
    fn the_menu_summary_is_short() {
        assert_eq!(allow_summary(&entries(&[])), "any sender an agent names");
        assert_eq!(allow_summary(&entries(&["acme.com"])), "from acme.com");
        assert_eq!(
            allow_summary(&entries(&["acme.com", "b.org"])),
            "from acme.com and b.org"
        );
        assert_eq!(
            allow_summary(&entries(&["acme.com", "b.org", "c.org"])),
            "from acme.com and 2 more"
        );
        let long = format!("{}.com", "x".repeat(100));
        assert!(allow_summary(&entries(&[&long])).chars().count() < 50);
    }

    #[test]
    fn people_entries_are_checked_and_described_by_state() {
        use EntryState::{Missing, Ok as Fine, Unreadable};
        let mail = EventType::MailReceived;
        assert_eq!(
            check_allow_entry(mail, "person: Ana Ruiz [A1:ABPerson]"),
            Ok(AllowKind::Person)
        );
        assert_eq!(
            check_allow_entry(mail, "group: Family"),
            Ok(AllowKind::Group)
        );
        assert!(
            check_allow_entry(mail, "group: ")
                .unwrap_err()
                .contains("name is empty")
        );
        let list = ["group: Family".to_owned(), "GROUP: Family".to_owned()];
        assert_eq!(
            check_allowlist(mail, &list).unwrap().len(),
            1,
            "duplicates dropped"
        );

        let mut s = Settings {
            mail: entries(&[
                "acme.com",
                "person: Ana Ruiz [A1:ABPerson]",
                "group: Family",
            ]),
            ..Settings::default()
        };
        let states = |s: &Settings| -> Vec<EntryState> {
            describe(s, mail).iter().map(|v| v.state).collect()
        };
        assert_eq!(states(&s), [Fine, Unreadable, Unreadable]);
        s.contacts = ContactsInForce::new(crate::contacts::Contacts::from_parts(
            vec![],
            vec![],
            vec![],
            1,
        ));
        assert_eq!(states(&s), [Fine, Missing, Missing]);
        let view = &describe(&s, mail)[1];
        assert_eq!(
            (view.kind, view.label.as_str()),
            (AllowKind::Person, "Ana Ruiz")
        );
        // Neither is in Contacts: named apart, not as senders.
        assert_eq!(
            reach_sentence(mail, &s.mail, &s.contacts),
            "Agents can receive mail from anyone at acme.com; nothing else (2 person or group \
             entries are not found in Contacts and match nobody). Never the body."
        );
        s.mail.allow.remove(0);
        assert_eq!(
            reach_sentence(mail, &s.mail, &s.contacts),
            "Agents receive no mail: no entry matches anyone (2 person or group entries are not \
             found in Contacts and match nobody)."
        );
        assert_eq!(allow_summary(&entries(&["group: Family"])), "from Family");
    }
}
