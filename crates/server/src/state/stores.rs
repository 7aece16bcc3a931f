//! An event type's part of [`State`](super::State): its store, its allowlist, Full Disk Access.
//!
//! Whether the type is on, its allowlist as counts per kind, its store's access and counters,
//! and Full Disk Access as the stores' checks show it.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use tidings_core::StoreErrorKind;

/// One event type: whether it is on, who may reach agents through it, and its store.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeState {
    /// The wire name (`mail.received`).
    pub name: String,
    /// Whether clients may see it.
    pub enabled: bool,
    /// The sender allowlist, as counts per kind.
    pub allowlist: AllowlistSummary,
    /// The backfill window in days (`0`: off).
    pub backfill_days: u32,
    /// The store behind it.
    pub store: StoreState,
}

/// How many allowlist entries of each kind are set; never the entries themselves.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowlistSummary {
    /// Exact email addresses.
    pub addresses: usize,
    /// Exact phone numbers or other handles.
    pub handles: usize,
    /// Domains (with their subdomains).
    pub domains: usize,
    /// Prefixes (`+1202*`).
    pub prefixes: usize,
    /// Cards from Contacts (each stands for its numbers and addresses).
    #[serde(default)]
    pub people: usize,
    /// Contacts groups (each stands for its members).
    #[serde(default)]
    pub groups: usize,
    /// Person or group entries that stand for nobody now: the card or group is gone, the
    /// name is shared, or Contacts cannot be read. They match no sender.
    #[serde(default)]
    pub unresolved: usize,
}

impl AllowlistSummary {
    /// All entries.
    pub fn total(&self) -> usize {
        self.addresses + self.handles + self.domains + self.prefixes + self.people + self.groups
    }

    /// "2 addresses, 1 domain", or "none".
    pub fn describe(&self) -> String {
        let parts = [
            (self.addresses, "address", "addresses"),
            (self.handles, "handle", "handles"),
            (self.domains, "domain", "domains"),
            (self.prefixes, "prefix", "prefixes"),
            (self.people, "person", "people"),
            (self.groups, "group", "groups"),
        ];
        let text: Vec<String> = parts
            .into_iter()
            .filter(|(n, _, _)| *n > 0)
            .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
            .collect();
        let mut text = if text.is_empty() {
            "none".to_owned()
        } else {
            text.join(", ")
        };
        if self.unresolved > 0 {
            let _ = write!(
                text,
                " ({} not found in Contacts: {} nobody)",
                self.unresolved,
                if self.unresolved == 1 {
                    "it matches"
                } else {
                    "they match"
                }
            );
        }
        text
    }
}

/// One store: where it is, whether it can be read, and what the engine saw in it.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreState {
    /// The store file, home-relative.
    pub path: String,
    /// Whether it can be read, from the last check (else the last scan).
    pub access: StoreAccess,
    /// The last check's or scan's error message (home-relative), when not `ok`.
    pub problem: Option<String>,
    /// The last scan's error (a poll or a stream step), home-relative; `None` when the last
    /// scan worked or none ran yet.
    pub last_scan_error: Option<String>,
    /// When the store last changed (ms since the Unix epoch), as seen since start.
    pub last_change_ms: Option<u64>,
    /// Distinct rows skipped as backfill since start.
    pub backfilled: u64,
    /// Rows skipped because they could not be read, since start.
    pub unreadable_rows: u64,
}

/// Whether a store can be read, in the terms its fix is given in.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreAccess {
    /// Not checked yet (the first check runs at start).
    NotChecked,
    /// Found and readable.
    Ok,
    /// No file at the path (Mail or Messages never ran, or another path).
    Missing,
    /// The OS refused to open it: Full Disk Access is missing.
    PermissionDenied,
    /// Readable, but not the schema we know (a newer macOS).
    SchemaProblem,
    /// Another failure (locked, corrupt, empty, I/O).
    Unreadable,
}

impl From<StoreErrorKind> for StoreAccess {
    /// A failed check's access, from the kind of its core `StoreError`.
    fn from(kind: StoreErrorKind) -> StoreAccess {
        match kind {
            StoreErrorKind::Missing => StoreAccess::Missing,
            StoreErrorKind::PermissionDenied => StoreAccess::PermissionDenied,
            StoreErrorKind::Schema => StoreAccess::SchemaProblem,
            StoreErrorKind::Locked
            | StoreErrorKind::Corrupt
            | StoreErrorKind::Empty
            | StoreErrorKind::Other => StoreAccess::Unreadable,
        }
    }
}

/// Full Disk Access, as the stores' checks show it (macOS has no API that tells).
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum FullDiskAccess {
    /// No store was read or refused yet (not checked, or no store there).
    #[default]
    Unknown,
    /// A store was read, none refused.
    Granted,
    /// A store was refused (EPERM): Tidings is not in the Full Disk Access list, or is
    /// switched off there.
    Missing,
    /// A store is refused now, but an earlier version of Tidings could read one: the grant
    /// went stale with an update (a new signature); remove Tidings from the list and add it
    /// again.
    Stale {
        /// The version that last had access.
        last_granted: String,
    },
}

impl FullDiskAccess {
    /// What to do, in one sentence, or `None` when nothing is to be done.
    pub fn fix(&self) -> Option<&'static str> {
        match self {
            FullDiskAccess::Missing => Some(
                "Open System Settings > Privacy & Security > Full Disk Access, turn Tidings \
                 on (add it with + if it is not listed), then restart Tidings.",
            ),
            FullDiskAccess::Stale { .. } => Some(crate::notices::STALE_GRANT_FIX),
            FullDiskAccess::Unknown | FullDiskAccess::Granted => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_count_kinds_and_name_no_value() {
        let s = AllowlistSummary {
            addresses: 3,
            domains: 1,
            ..AllowlistSummary::default()
        };
        assert_eq!(s.describe(), "3 addresses, 1 domain");
        assert_eq!(s.total(), 4);
        assert_eq!(AllowlistSummary::default().describe(), "none");
    }
}
