//! Allowlist entries as saved (a sender pattern, or a person or group from Contacts) and the
//! Contacts in force that turn people entries into senders.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::contacts::{Contacts, EntryError, PeopleEntry, Resolved};
use crate::filter::{PatternError, SenderPattern};

/// One allowlist entry, validated when the file is read. Saved as one string: a sender
/// pattern as before (`acme.com`, `+1202*`), or `person: NAME [ID]` / `group: NAME [ID]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum AllowEntry {
    /// An address, phone number, domain or prefix.
    Sender(SenderPattern),
    /// A card or a group of cards in Contacts: whatever handles it has now.
    People(PeopleEntry),
}

/// Why a string is not an allowlist entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllowEntryError {
    /// Not a sender pattern.
    #[error(transparent)]
    Sender(#[from] PatternError),
    /// Written as a person or group entry, but not a valid one.
    #[error(transparent)]
    People(#[from] EntryError),
}

impl AllowEntry {
    /// Parse one entry: `person:`/`group:` entries as people, anything else as a sender.
    pub fn parse(s: &str) -> Result<AllowEntry, AllowEntryError> {
        if PeopleEntry::is_people(s) {
            Ok(AllowEntry::People(PeopleEntry::parse(s)?))
        } else {
            Ok(AllowEntry::Sender(SenderPattern::parse_allow(s)?))
        }
    }

    /// The sender pattern, for a sender entry.
    pub fn sender(&self) -> Option<&SenderPattern> {
        match self {
            AllowEntry::Sender(p) => Some(p),
            AllowEntry::People(_) => None,
        }
    }

    /// The patterns this entry stands for with `contacts` in force: a sender entry itself; a
    /// people entry each handle it resolves to, or [`SenderPattern::Nobody`] when it resolves
    /// to nothing (missing, ambiguous, Contacts unreadable or not loaded): fail closed.
    pub fn expand(&self, contacts: &ContactsInForce, out: &mut Vec<SenderPattern>) {
        match self {
            AllowEntry::Sender(p) => out.push(p.clone()),
            AllowEntry::People(entry) => match contacts.resolve(entry) {
                Resolved::Handles(keys) if !keys.is_empty() => {
                    out.extend(keys.into_iter().map(SenderPattern::Exact));
                }
                _ => out.push(SenderPattern::Nobody),
            },
        }
    }
}

impl TryFrom<String> for AllowEntry {
    type Error = AllowEntryError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        AllowEntry::parse(&s)
    }
}

impl From<AllowEntry> for String {
    fn from(e: AllowEntry) -> String {
        e.to_string()
    }
}

impl std::fmt::Display for AllowEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllowEntry::Sender(p) => p.fmt(f),
            AllowEntry::People(e) => e.fmt(f),
        }
    }
}

/// The Contacts people entries resolve against, as last loaded by the daemon; none until
/// loaded (people entries then allow nobody). Never saved. Two are equal when their
/// [`Contacts::fingerprint`]s are, so settings compare unchanged across a reload that read
/// the same cards.
#[derive(Clone, Debug, Default)]
pub struct ContactsInForce(pub Option<Arc<Contacts>>);

impl ContactsInForce {
    /// Contacts in force.
    pub fn new(contacts: Contacts) -> ContactsInForce {
        ContactsInForce(Some(Arc::new(contacts)))
    }

    /// The loaded Contacts, if any.
    pub fn get(&self) -> Option<&Contacts> {
        self.0.as_deref()
    }

    /// What `entry` stands for: [`Resolved::Unreadable`] when no Contacts are loaded.
    pub fn resolve(&self, entry: &PeopleEntry) -> Resolved {
        self.get()
            .map_or(Resolved::Unreadable, |c| c.resolve(entry))
    }
}

impl PartialEq for ContactsInForce {
    fn eq(&self, other: &Self) -> bool {
        self.get().map(Contacts::fingerprint) == other.get().map(Contacts::fingerprint)
    }
}

impl Eq for ContactsInForce {}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::contacts::{Contacts, Group, Handle, Person};
    use crate::event::EventType;
    use crate::settings::Settings;

    fn ana() -> Person {
        let h = |w: &str, k: &str| Handle {
            written: w.to_owned(),
            key: Some(k.to_owned()),
        };
        Person {
            id: "A1:ABPerson".to_owned(),
            name: "Ana Ruiz".to_owned(),
            company: false,
            phones: vec![h("(202) 555-0101", "+12025550101")],
            emails: vec![h("Ana@Example.com", "ana@example.com")],
        }
    }

    const TEXT: &str = "[mail]\nenabled = true\n\
        allow = [\"acme.com\", \"person: Ana Ruiz [A1:ABPerson]\", \"group: Family\"]\n";

    #[test]
    fn people_entries_are_saved_as_written_and_expand_through_contacts() {
        let mut s = Settings::parse(TEXT, Path::new("s.toml")).unwrap();
        assert!(matches!(s.mail.allow[1], AllowEntry::People(_)));
        let saved = toml::to_string(&s).unwrap();
        assert!(
            saved.contains("\"person: Ana Ruiz [A1:ABPerson]\""),
            "{saved}"
        );
        assert!(!saved.contains("contacts"), "{saved}");

        // No Contacts loaded: people entries allow nobody, the sender entry still applies.
        let nobody = s.allowlist(EventType::MailReceived);
        assert_eq!(
            nobody,
            [
                SenderPattern::Domain("acme.com".into()),
                SenderPattern::Nobody,
                SenderPattern::Nobody
            ]
        );

        let family = Group {
            id: "G1:ABGroup".to_owned(),
            name: "Family".to_owned(),
            members: vec!["A1:ABPerson".to_owned()],
        };
        let before = s.clone();
        s.contacts =
            ContactsInForce::new(Contacts::from_parts(vec![ana()], vec![family], vec![], 1));
        assert_ne!(
            s, before,
            "settings with Contacts differ from settings without"
        );
        let list = s.allowlist(EventType::MailReceived);
        assert!(list.contains(&SenderPattern::Exact("+12025550101".into())));
        assert!(list.contains(&SenderPattern::Exact("ana@example.com".into())));
        assert!(!list.contains(&SenderPattern::Nobody), "{list:?}");
        let mut same = before.clone();
        same.contacts = ContactsInForce::new(Contacts::from_parts(vec![ana()], vec![], vec![], 1));
        let mut again = before;
        again.contacts = ContactsInForce::new(Contacts::from_parts(vec![ana()], vec![], vec![], 1));
        assert_eq!(same, again, "equal by fingerprint");
    }

    #[test]
    fn a_bad_people_entry_is_refused_with_its_line() {
        let text = "[mail]\nallow = [\"group: \"]\n";
        let err = Settings::parse(text, Path::new("s.toml")).unwrap_err();
        assert!(err.to_string().contains("the name is empty"), "{err}");
    }
}
