//! One Contacts store file to its people and groups, read-only.

use std::path::Path;

use super::{ContactsProblem, Group, Person, Region};

/// What one store holds.
pub(super) struct Store {
    pub people: Vec<Person>,
    pub groups: Vec<Group>,
}

pub(super) fn read_store(path: &Path, region: &Region) -> Result<Store, ContactsProblem> {
    let _ = (path, region);
    todo!()
}

pub(super) fn search<'a>(people: &'a [Person], query: &str, limit: usize) -> Vec<&'a Person> {
    let _ = (people, query, limit);
    todo!()
}
