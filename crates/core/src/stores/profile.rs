//! A store's schema profile for a bug report (`tidings doctor --report`): which of the tables
//! and columns we read are there, the optional features the probe found, `user_version`, and
//! row counts rounded to two significant digits. Names of tables and columns only: never a
//! row's content.

use std::collections::BTreeMap;
use std::time::Duration;

use rusqlite::Connection;
use serde::Serialize;

use crate::error::StoreError;
use crate::event::EventType;
use crate::stores::columns::Col;
use crate::stores::sql::columns;
use crate::stores::{StoreHandle, StorePaths, mail, messages};

/// What a bug report says about one store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaProfile {
    /// "Mail" or "Messages".
    pub store: &'static str,
    /// `PRAGMA user_version` (Apple bumps it with schema changes).
    pub user_version: i64,
    /// Each table we read: present or not, its rows (rounded), the columns we need that it
    /// lacks.
    pub tables: BTreeMap<String, TableProfile>,
    /// The optional features the probe found; `None` when the schema is not one we read.
    pub features: Option<String>,
    /// Why the schema is not one we read (the first missing table or column).
    pub schema_problem: Option<String>,
}

/// One table of a [`SchemaProfile`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TableProfile {
    /// Whether the table exists.
    pub present: bool,
    /// Its row count, rounded to two significant digits (so a report does not tell exactly
    /// how many mails someone has); `None` when absent.
    pub rows_about: Option<u64>,
    /// Columns we read that it lacks.
    pub missing_columns: Vec<String>,
}

/// `n` rounded to two significant digits: 1234 → 1200, 87 → 87, 5 → 5.
pub fn round_two_digits(n: u64) -> u64 {
    let mut scale = 1;
    while n / scale >= 100 {
        scale *= 10;
    }
    (n + scale / 2) / scale * scale
}

/// Profile the store behind `ty`, read-only. A store that cannot be opened is its error
/// (missing, permission denied, corrupt, ...); a schema we do not read is still profiled.
pub fn profile(paths: &StorePaths, ty: EventType) -> Result<SchemaProfile, StoreError> {
    let label = ty.app_name();
    let required: &[Col] = match ty {
        EventType::MailReceived => mail::schema::REQUIRED,
        EventType::MessagesReceived => messages::schema::REQUIRED,
    };
    let path = paths.database(ty).to_owned();
    // Any schema opens: the profile is what tells a schema we cannot read.
    let mut handle: StoreHandle<()> =
        StoreHandle::new(label, path, Duration::from_millis(500), |_| Ok(()));
    let (conn, _, ()) = handle.current()?;
    let profiled = read_profile(conn, label, ty, required);
    profiled.map_err(|e| handle.fail(e))
}

fn read_profile(
    conn: &Connection,
    label: &'static str,
    ty: EventType,
    required: &[Col],
) -> rusqlite::Result<SchemaProfile> {
    let user_version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let mut tables = BTreeMap::new();
    for col in required {
        if tables.contains_key(col.table) {
            continue;
        }
        let have = columns(conn, col.table)?;
        let present = !have.is_empty();
        let rows_about = if present {
            let n: i64 = conn.query_row(
                &format!("SELECT count(*) FROM \"{}\"", col.table),
                [],
                |r| r.get(0),
            )?;
            Some(round_two_digits(u64::try_from(n).unwrap_or(0)))
        } else {
            None
        };
        let missing_columns = required
            .iter()
            .filter(|c| c.table == col.table && !c.name.eq_ignore_ascii_case("ROWID"))
            .filter(|c| present && !have.iter().any(|h| h.eq_ignore_ascii_case(c.name)))
            .map(|c| c.name.to_owned())
            .collect();
        tables.insert(
            col.table.to_owned(),
            TableProfile {
                present,
                rows_about,
                missing_columns,
            },
        );
    }
    let features = match ty {
        EventType::MailReceived => mail::schema::probe(conn).map(|c| format!("{c:?}")),
        EventType::MessagesReceived => messages::schema::probe(conn).map(|c| format!("{c:?}")),
    };
    let (features, schema_problem) = match features {
        Ok(f) => (Some(f), None),
        Err(Ok(detail)) => (None, Some(detail)),
        Err(Err(e)) => return Err(e),
    };
    Ok(SchemaProfile {
        store: label,
        user_version,
        tables,
        features,
        schema_problem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_two_significant_digits() {
        assert_eq!(round_two_digits(0), 0);
        assert_eq!(round_two_digits(5), 5);
        assert_eq!(round_two_digits(87), 87);
        assert_eq!(round_two_digits(1234), 1200);
        assert_eq!(round_two_digits(1250), 1300);
        assert_eq!(round_two_digits(98_765), 99_000);
    }
}
