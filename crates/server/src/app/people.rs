//! The sender picker's commands: Contacts searched, groups listed, recent senders, and the
//! allowlist entries as the window shows them.
//!
//! For the person at the Mac only: these are bridge commands of the app, never an MCP
//! method, tool or `State` field, and nothing here is logged.

use serde::Serialize;
use tidings_core::EventType;
use tidings_core::allowlist::{self, AllowKind, EntryState};
use tidings_core::contacts::{Contacts, PeopleEntry, PeopleKind, Person};
use tidings_core::event::Category;
use tidings_core::text::sanitize;

use super::{AppError, event_type};
use crate::engine::Handle;

/// The most cards one search answers with: a picker shows a screenful, and typing narrows.
pub const MAX_SEARCH_HITS: usize = 50;

/// The longest search text looked at, in characters.
pub const MAX_QUERY_CHARS: usize = 200;

/// Characters of a name or handle the picker is given: enough for any real one, and a
/// card's field is text anyone who sent the user a vCard wrote.
const MAX_SHOWN_CHARS: usize = 120;

/// One allowlist entry as the window shows it.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowEntryView {
    /// The entry as settings.toml holds it (`person: Ana Ruiz [ID]`, `acme.com`).
    pub entry: String,
    /// What it names.
    pub kind: AllowKind,
    /// The name to show: a person's or group's name, else the entry itself.
    pub label: String,
    /// Whether it stands for anyone now.
    pub state: EntryState,
}

/// Whether the Contacts stores can be read, and why not.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContactsView {
    /// At least one store was read.
    pub readable: bool,
    /// The first store that could not be read and why, if any.
    pub problem: Option<String>,
}

/// One card found by [`search_people`].
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PersonHit {
    /// The card's id in Contacts.
    pub id: String,
    /// Its name (the organisation's, for a company card).
    pub name: String,
    /// A company card.
    pub company: bool,
    /// Its numbers and addresses, as written on it.
    pub handles: Vec<String>,
    /// The allowlist entry that names this person.
    pub entry: String,
}

/// One Contacts group from [`list_groups`].
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupHit {
    /// The group's id in Contacts.
    pub id: String,
    /// Its name.
    pub name: String,
    /// How many people it holds.
    pub members: usize,
    /// The allowlist entry that names this group.
    pub entry: String,
}

/// The entries of `ty`'s allowlist with their kind, label and state, in order.
pub(super) fn entry_views(settings: &tidings_core::Settings, ty: EventType) -> Vec<AllowEntryView> {
    allowlist::describe(settings, ty)
        .into_iter()
        .map(|v| AllowEntryView {
            entry: v.entry,
            kind: v.kind,
            label: sanitize(&v.label, MAX_SHOWN_CHARS),
            state: v.state,
        })
        .collect()
}

/// The Contacts stores as last read, in the window's terms.
pub(super) fn contacts_view(contacts: &Contacts) -> ContactsView {
    let state = crate::state::ContactsState::of(contacts);
    ContactsView {
        readable: state.stores_read > 0,
        problem: state.problem,
    }
}

/// Cards whose name, number or address holds `query`, at most [`MAX_SEARCH_HITS`]. An empty
/// query lists the first cards, so the picker shows something before anything is typed.
pub fn search_people(handle: &Handle, query: &str) -> Result<Vec<PersonHit>, AppError> {
    let chars = query.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(AppError::Query { chars });
    }
    let contacts = handle.daemon().contacts();
    Ok(contacts
        .search(query.trim(), MAX_SEARCH_HITS)
        .into_iter()
        .map(person_hit)
        .collect())
}

/// A name as an entry's label: the id decides what an entry names, and the label must read
/// back (no control characters, at most the entry's length).
fn entry_label(name: &str) -> String {
    let label = sanitize(name, tidings_core::contacts::MAX_ENTRY_PART_CHARS);
    if label.is_empty() {
        "(no name)".to_owned()
    } else {
        label
    }
}

fn person_hit(p: &Person) -> PersonHit {
    let entry = PeopleEntry {
        kind: PeopleKind::Person,
        name: entry_label(&p.name),
        id: Some(p.id.clone()),
    };
    PersonHit {
        id: p.id.clone(),
        name: sanitize(&p.name, MAX_SHOWN_CHARS),
        company: p.company,
        handles: p
            .phones
            .iter()
            .chain(&p.emails)
            .map(|h| sanitize(&h.written, MAX_SHOWN_CHARS))
            .collect(),
        entry: entry.to_string(),
    }
}

/// Every Contacts group, by name.
pub fn list_groups(handle: &Handle) -> Vec<GroupHit> {
    let contacts = handle.daemon().contacts();
    let mut groups: Vec<GroupHit> = contacts
        .groups()
        .iter()
        .map(|g| GroupHit {
            id: g.id.clone(),
            name: sanitize(&g.name, MAX_SHOWN_CHARS),
            members: g.members.len(),
            entry: PeopleEntry {
                kind: PeopleKind::Group,
                name: entry_label(&g.name),
                id: Some(g.id.clone()),
            }
            .to_string(),
        })
        .collect();
    groups.sort_by_cached_key(|g| g.name.to_lowercase());
    groups
}

/// Turn the sender's Contacts name in `event_type`'s events on or off.
pub async fn set_names(
    handle: &Handle,
    event_type_name: &str,
    on: bool,
) -> Result<super::SettingsView, AppError> {
    let ty = event_type(event_type_name)?;
    handle.update_settings(|s| s.for_type_mut(ty).contact_names = on)?;
    Ok(super::settings_view(handle).await)
}

/// One sender who wrote in the last [`RECENT_DAYS`] days, from [`recent_senders`].
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentSenderView {
    /// As the store holds it (`+12025550101`, `ana@example.com`).
    pub handle: String,
    /// The Contacts name when a card has this handle, else the name Mail shows.
    pub name: Option<String>,
    /// Messages from this sender in the window.
    pub count: u64,
    /// The newest one's time (RFC 3339).
    pub last: String,
    /// Whether the allowlist already lets this sender through.
    pub allowed: bool,
}

/// The days the picker looks back for recent senders.
pub const RECENT_DAYS: u32 = 30;

/// The most recent senders the picker lists.
pub const MAX_RECENT: usize = 200;

/// Who wrote to this Mac in the last [`RECENT_DAYS`] days, newest first, names resolved and
/// those the allowlist already lets through marked. Read on a blocking thread.
pub async fn recent_senders(
    handle: &Handle,
    event_type_name: &str,
) -> Result<Vec<RecentSenderView>, AppError> {
    let ty = event_type(event_type_name)?;
    let daemon = handle.daemon().clone();
    let rows = tokio::task::spawn_blocking(move || {
        daemon.engine().recent_senders(ty, RECENT_DAYS, MAX_RECENT)
    })
    .await
    .map_err(|e| AppError::Recent(e.to_string()))?
    .map_err(|e| AppError::Recent(crate::home::without_home(&e.to_string())))?;
    let settings = handle.daemon().settings_with_contacts();
    let contacts = handle.daemon().contacts();
    let allow = settings.allowlist(ty);
    Ok(rows
        .into_iter()
        .map(|r| {
            let card = contacts.person_for_handle(&r.handle);
            RecentSenderView {
                allowed: !allow.is_empty() && allow.iter().any(|p| p.matches(&r.handle)),
                name: card.map(|p| sanitize(&p.name, MAX_SHOWN_CHARS)).or(r.name),
                handle: r.handle,
                count: r.count,
                last: r.last,
            }
        })
        .collect())
}

/// Restrict `event_type` to `categories` (empty: every category), on top of its allowlist.
pub async fn set_categories(
    handle: &Handle,
    event_type_name: &str,
    categories: &[String],
) -> Result<super::SettingsView, AppError> {
    let ty = event_type(event_type_name)?;
    let offered = Category::offered(ty);
    let mut picked = Vec::new();
    for name in categories {
        match Category::parse(name).filter(|c| offered.contains(c)) {
            Some(c) if !picked.contains(&c) => picked.push(c),
            Some(_) => {}
            None => {
                let names: Vec<&str> = offered.iter().map(|c| c.name()).collect();
                return Err(AppError::Category {
                    event_type: ty.name(),
                    name: sanitize(name, tidings_core::text::MAX_QUOTE_CHARS),
                    offered: names.join(", "),
                });
            }
        }
    }
    // In the order the window lists them, so the file reads the same whatever was clicked.
    picked.sort_by_key(|c| offered.iter().position(|o| o == c));
    handle.update_settings(|s| s.for_type_mut(ty).categories = picked)?;
    Ok(super::settings_view(handle).await)
}
