//! The user's Contacts, read from the `AddressBook` stores: people, groups, and their handles.
//!
//! Read-only, from the files (Full Disk Access, no Contacts prompt): the root store and one per
//! account under `Sources/`. Module map, from the top down (each uses only those after it):
//! - `read` (private): one store file to its people and groups, or a [`ContactsProblem`].
//! - `schema` (private): the Core Data entity numbers, looked up by name in each file.
//! - [`entry`]: [`PeopleEntry`], the saved form of a person or group allowlist entry.
//! - `phone` (private): [`Region`] and a card's handle to the form the stores keep.
//!
//! A store that cannot be read is a problem in the result, never an error: the others still
//! load, and what depended on the unreadable one resolves [`Resolved::Unreadable`].

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

mod entry;
mod phone;
mod read;
mod schema;

pub use entry::{EntryError, MAX_ENTRY_PART_CHARS, PeopleEntry, PeopleKind, Resolved};
pub use phone::{PhoneCache, Region, email_key, handle_key, phone_key, readable_handle};

/// The file name of every Contacts store (root and per account).
pub const STORE_NAME: &str = "AddressBook-v22.abcddb";

/// Where the Contacts stores live: `~/Library/Application Support/AddressBook`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContactsPaths {
    /// The `AddressBook` directory.
    pub dir: PathBuf,
}

impl ContactsPaths {
    /// The stores of the user whose home is `home`.
    pub fn for_home(home: &Path) -> ContactsPaths {
        ContactsPaths {
            dir: home.join("Library/Application Support/AddressBook"),
        }
    }

    /// Root `AddressBook-v22.abcddb` and each `Sources/<id>/AddressBook-v22.abcddb` that
    /// exists, the root first and the sources in name order (so a load is repeatable).
    pub fn stores(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let root = self.dir.join(STORE_NAME);
        if root.exists() {
            out.push(root);
        }
        let mut sources: Vec<PathBuf> = std::fs::read_dir(self.dir.join("Sources"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path().join(STORE_NAME))
            .filter(|p| p.exists())
            .collect();
        sources.sort();
        out.extend(sources);
        out
    }
}

/// One card: a person, or a company when the card is shown as one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Person {
    /// `ZUNIQUEID`: stable across edits and renames.
    pub id: String,
    /// The display name: first, middle and last name (or nickname), or the organization for a
    /// company card.
    pub name: String,
    /// Shown as a company (`ZDISPLAYFLAGS & 1`).
    pub company: bool,
    /// Phone numbers on the card.
    pub phones: Vec<Handle>,
    /// E-mail addresses on the card.
    pub emails: Vec<Handle>,
}

impl Person {
    /// Every handle's key (the store's form), in card order, without repeats.
    pub fn keys(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for h in self.phones.iter().chain(&self.emails) {
            if let Some(k) = &h.key
                && !out.contains(k)
            {
                out.push(k.clone());
            }
        }
        out
    }
}

/// A phone number or e-mail address on a card.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Handle {
    /// As on the card (`(202) 555-0101`).
    pub written: String,
    /// The store's form: E.164, lower-case address, short-code digits; `None` when it cannot
    /// be normalised (it then matches nothing).
    pub key: Option<String>,
}

/// A group and its members (a smart group keeps a rule, not members: it has none here).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Group {
    /// `ZUNIQUEID`.
    pub id: String,
    /// `ZNAME`.
    pub name: String,
    /// Person ids ([`Person::id`]).
    pub members: Vec<String>,
}

/// A store that could not be read, and why (no names or values in `detail`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ContactsProblem {
    /// The store file.
    pub path: PathBuf,
    /// What kind of failure.
    pub kind: ContactsProblemKind,
    /// What went wrong, for a log line or `tidings doctor`.
    pub detail: String,
}

/// Kinds of [`ContactsProblem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContactsProblemKind {
    /// No such file (or no Contacts directory at all).
    NotFound,
    /// The file cannot be opened: no permission (Full Disk Access) or another OS error.
    Unreadable,
    /// Contacts held a lock longer than we wait.
    Locked,
    /// Not a database, or a damaged one.
    Corrupt,
    /// A database, but not the shape a Contacts store has (a table or entity missing).
    Schema,
}

impl ContactsProblemKind {
    /// A few words for status lines and the log: `not found`, `unreadable`, `locked`,
    /// `corrupt`, `not a Contacts store`.
    pub fn name(self) -> &'static str {
        match self {
            ContactsProblemKind::NotFound => "not found",
            ContactsProblemKind::Unreadable => "unreadable",
            ContactsProblemKind::Locked => "locked",
            ContactsProblemKind::Corrupt => "corrupt",
            ContactsProblemKind::Schema => "not a Contacts store",
        }
    }
}

/// Everything read from the Contacts stores at one moment.
#[derive(Clone, Debug, Default)]
pub struct Contacts {
    people: Vec<Person>,
    groups: Vec<Group>,
    problems: Vec<ContactsProblem>,
    stores_read: usize,
    /// Handle key to the index of the first person holding it.
    by_handle: HashMap<String, usize>,
    by_id: HashMap<String, usize>,
    group_by_id: HashMap<String, usize>,
    fingerprint: u64,
}

/// Read every store under `paths`, numbers read in `region`. Never fails: a store that cannot
/// be read is a problem in the result, the others still load.
pub fn load(paths: &ContactsPaths, region: &Region) -> Contacts {
    load_cached(paths, region, &mut PhoneCache::default())
}

/// [`load`], reading each number the last load through `cache` read from the cache: a reader
/// that keeps Contacts warm passes the same cache each time.
pub fn load_cached(paths: &ContactsPaths, region: &Region, cache: &mut PhoneCache) -> Contacts {
    let stores = paths.stores();
    let mut people = Vec::new();
    let mut groups = Vec::new();
    let mut problems = Vec::new();
    let mut read_ok = 0;
    if stores.is_empty() {
        problems.push(ContactsProblem {
            path: paths.dir.join(STORE_NAME),
            kind: ContactsProblemKind::NotFound,
            detail: "no Contacts store found".to_owned(),
        });
    }
    for path in stores {
        match read::read_store(&path, region, cache) {
            Ok(store) => {
                read_ok += 1;
                people.extend(store.people);
                groups.extend(store.groups);
            }
            Err(problem) => problems.push(problem),
        }
    }
    cache.finish();
    Contacts::from_parts(people, groups, problems, read_ok)
}

impl Contacts {
    /// Contacts made of already-read parts (tests, and [`load`]).
    pub fn from_parts(
        people: Vec<Person>,
        groups: Vec<Group>,
        problems: Vec<ContactsProblem>,
        stores_read: usize,
    ) -> Contacts {
        let mut by_handle = HashMap::new();
        let mut by_id = HashMap::new();
        for (i, p) in people.iter().enumerate() {
            by_id.entry(p.id.clone()).or_insert(i);
            for k in p.keys() {
                by_handle.entry(k).or_insert(i);
            }
        }
        let group_by_id = groups
            .iter()
            .enumerate()
            .map(|(i, g)| (g.id.clone(), i))
            .collect::<HashMap<_, _>>();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        people.hash(&mut h);
        groups.hash(&mut h);
        problems.hash(&mut h);
        stores_read.hash(&mut h);
        Contacts {
            fingerprint: h.finish(),
            people,
            groups,
            problems,
            stores_read,
            by_handle,
            by_id,
            group_by_id,
        }
    }

    /// Every card, in store order.
    pub fn people(&self) -> &[Person] {
        &self.people
    }

    /// Every group (smart groups included, with no members).
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The stores that could not be read: which file and why.
    pub fn problems(&self) -> &[ContactsProblem] {
        &self.problems
    }

    /// Stores read without a problem.
    pub fn stores_read(&self) -> usize {
        self.stores_read
    }

    /// The card whose `ZUNIQUEID` is `id`.
    pub fn person(&self, id: &str) -> Option<&Person> {
        self.by_id.get(id).map(|&i| &self.people[i])
    }

    /// The group whose `ZUNIQUEID` is `id`.
    pub fn group(&self, id: &str) -> Option<&Group> {
        self.group_by_id.get(id).map(|&i| &self.groups[i])
    }

    /// A store's handle (`+12025550101`, `Ana@Example.com`, `56249`) to its card: one map
    /// lookup of the handle's normal form.
    pub fn person_for_handle(&self, handle: &str) -> Option<&Person> {
        let key = phone::store_handle_key(handle)?;
        self.by_handle.get(&key).map(|&i| &self.people[i])
    }

    /// Name, number (digits in any format) or address; case-insensitive; at most `limit`.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&Person> {
        read::search(&self.people, query, limit)
    }

    /// What a person or group entry stands for now.
    pub fn resolve(&self, entry: &PeopleEntry) -> Resolved {
        entry::resolve(self, entry)
    }

    /// Changes whenever anything a resolution or a name depends on changes (for equality).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

#[cfg(test)]
mod tests;
