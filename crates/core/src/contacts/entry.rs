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

impl PeopleEntry {
    /// Whether `s` is written as a people entry (`person:` or `group:`), right or wrong.
    pub fn is_people(s: &str) -> bool {
        let _ = s;
        todo!()
    }

    /// Parse the saved form.
    pub fn parse(s: &str) -> Result<PeopleEntry, EntryError> {
        let _ = s;
        todo!()
    }
}

impl fmt::Display for PeopleEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let _ = f;
        todo!()
    }
}

pub(super) fn resolve(contacts: &Contacts, entry: &PeopleEntry) -> Resolved {
    let _ = (contacts, entry);
    todo!()
}
