//! A person or group allowlist entry: its saved form, and what it stands for now.

use std::fmt;

use super::Contacts;

/// A person or group allowlist entry. Saved form (readable, hand-writable):
/// `person: Ana Ruiz [4F1C…:ABPerson]`, `group: Family [9A2B…:ABGroup]`, `group: Family`.
/// The id (`ZUNIQUEID`) decides; without one the name is looked up (unique, case-insensitive).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PeopleEntry {
    /// A person or a group.
    pub kind: PeopleKind,
    /// The name when the entry was made (shown while the card is missing).
    pub name: String,
    /// The card's or group's `ZUNIQUEID`.
    pub id: Option<String>,
}

/// What a [`PeopleEntry`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeopleKind {
    /// One card.
    Person,
    /// A group's members.
    Group,
}

/// What a [`PeopleEntry`] stands for now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// The handle keys (store form) it allows; may be empty (a card with no handles).
    Handles(Vec<String>),
    /// No such card or group (deleted, or a name nobody has).
    Missing,
    /// A name-only entry that several cards or groups share: how many.
    Ambiguous(usize),
    /// A Contacts store could not be read, so the answer is unknown.
    Unreadable,
}

/// Why a string is not a people entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a people entry: {why}")]
pub struct EntryError {
    /// The rejected value (sanitised, cut).
    pub value: String,
    /// What is wrong and how to write it.
    pub why: &'static str,
}

/// The longest name or id an entry keeps, in characters.
pub const MAX_ENTRY_PART_CHARS: usize = 200;

impl PeopleKind {
    /// The entry's prefix word: `person` or `group`.
    pub fn word(self) -> &'static str {
        match self {
            PeopleKind::Person => "person",
            PeopleKind::Group => "group",
        }
    }
}

impl PeopleEntry {
    /// Whether `s` is written as a people entry (`person:` or `group:`), right or wrong: such
    /// a string is never read as a sender pattern.
    pub fn is_people(s: &str) -> bool {
        split_kind(s).is_some()
    }

    /// Parse the saved form: `person: Ana Ruiz [4F1C…:ABPerson]`, `group: Family`.
    pub fn parse(s: &str) -> Result<PeopleEntry, EntryError> {
        let bad = |why| EntryError {
            value: crate::text::sanitize(s, crate::text::MAX_QUOTE_CHARS),
            why,
        };
        let (kind, rest) = split_kind(s).ok_or_else(|| {
            bad("write `person: NAME [ID]` or `group: NAME [ID]` (the `[ID]` is optional)")
        })?;
        let rest = rest.trim();
        let (name, id) = match rest.strip_suffix(']').and_then(|r| r.rsplit_once('[')) {
            Some((name, id)) => (name.trim(), Some(id.trim())),
            None => (rest, None),
        };
        if name.is_empty() {
            return Err(bad("the name is empty; write the name before the `[ID]`"));
        }
        if id.is_some_and(str::is_empty) {
            return Err(bad("the `[ID]` is empty; leave it out to look the name up"));
        }
        let too_long = |t: &str| t.chars().count() > MAX_ENTRY_PART_CHARS;
        if too_long(name) || id.is_some_and(too_long) {
            return Err(bad("a name or id is at most 200 characters"));
        }
        let unprintable = |t: &str| t.chars().any(char::is_control);
        if unprintable(name) || id.is_some_and(|i| unprintable(i) || i.contains(['[', ']'])) {
            return Err(bad(
                "control characters, or `[`/`]` inside the id, are not allowed",
            ));
        }
        Ok(PeopleEntry {
            kind,
            name: name.to_owned(),
            id: id.map(str::to_owned),
        })
    }
}

/// The kind and the rest of `person: …` / `group: …` (any case, spaces around the colon).
fn split_kind(s: &str) -> Option<(PeopleKind, &str)> {
    let (word, rest) = s.trim_start().split_once(':')?;
    let kind = match word.trim() {
        w if w.eq_ignore_ascii_case("person") => PeopleKind::Person,
        w if w.eq_ignore_ascii_case("group") => PeopleKind::Group,
        _ => return None,
    };
    Some((kind, rest))
}

impl fmt::Display for PeopleEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.word(), self.name)?;
        match &self.id {
            Some(id) => write!(f, " [{id}]"),
            None => Ok(()),
        }
    }
}

/// What `entry` stands for in `contacts`: the id decides; without one, the name (unique,
/// case-insensitive). Not found while a store could not be read is unreadable, not missing:
/// the card may be in that store.
pub(super) fn resolve(contacts: &Contacts, entry: &PeopleEntry) -> Resolved {
    let not_found = || {
        if contacts.problems().is_empty() && contacts.stores_read() > 0 {
            Resolved::Missing
        } else {
            Resolved::Unreadable
        }
    };
    let person_keys = |id: &str| contacts.person(id).map(super::Person::keys);
    match (entry.kind, &entry.id) {
        (PeopleKind::Person, Some(id)) => person_keys(id).map_or_else(not_found, Resolved::Handles),
        (PeopleKind::Group, Some(id)) => contacts
            .group(id)
            .map_or_else(not_found, |g| group_handles(contacts, g)),
        (PeopleKind::Person, None) => match by_name(contacts.people(), |p| &p.name, &entry.name) {
            Ok(one) => Resolved::Handles(one.keys()),
            Err(0) => not_found(),
            Err(many) => Resolved::Ambiguous(many),
        },
        (PeopleKind::Group, None) => match by_name(contacts.groups(), |g| &g.name, &entry.name) {
            Ok(one) => group_handles(contacts, one),
            Err(0) => not_found(),
            Err(many) => Resolved::Ambiguous(many),
        },
    }
}

/// The one item called `name` (case-insensitive), or how many are: 0, or several.
fn by_name<'a, T>(
    items: &'a [T],
    name_of: impl Fn(&T) -> &str,
    name: &str,
) -> Result<&'a T, usize> {
    let mut same = items.iter().filter(|i| same_name(name_of(i), name));
    match (same.next(), same.next()) {
        (Some(one), None) => Ok(one),
        (None, _) => Err(0),
        (Some(_), Some(_)) => Err(2 + same.count()),
    }
}

fn group_handles(contacts: &Contacts, group: &super::Group) -> Resolved {
    // In member order, each handle once (a set: a group may hold thousands of handles).
    let mut seen = std::collections::HashSet::new();
    let out = group
        .members
        .iter()
        .filter_map(|id| contacts.person(id))
        .flat_map(super::Person::keys)
        .filter(|key| seen.insert(key.clone()))
        .collect();
    Resolved::Handles(out)
}

fn same_name(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_through_their_saved_form() {
        for text in [
            "person: Ana Ruiz [4F1C-22:ABPerson]",
            "group: Family [9A2B:ABGroup]",
            "group: Family",
            "person: Ana [Work] Ruiz",
        ] {
            let e = PeopleEntry::parse(text).unwrap();
            assert_eq!(e.to_string(), text);
        }
        let e = PeopleEntry::parse("  Person :  Ana Ruiz   [ X:ABPerson ] ").unwrap();
        assert_eq!(e.kind, PeopleKind::Person);
        assert_eq!(e.name, "Ana Ruiz");
        assert_eq!(e.id.as_deref(), Some("X:ABPerson"));
    }

    #[test]
    fn bad_entries_say_how_to_write_them() {
        assert!(!PeopleEntry::is_people("ana@example.com"));
        assert!(PeopleEntry::is_people("group:"));
        let why = |s: &str| PeopleEntry::parse(s).unwrap_err().to_string();
        assert!(why("ana@example.com").contains("write `person: NAME [ID]`"));
        assert!(why("group:  ").contains("the name is empty"));
        assert!(why("person: Ana []").contains("`[ID]` is empty"));
        assert!(why(&format!("person: {}", "a".repeat(201))).contains("at most 200"));
        assert!(why("person: A\u{7}na").contains("control characters"));
    }
}
