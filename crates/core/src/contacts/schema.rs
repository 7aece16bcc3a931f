//! The Core Data entity numbers of one store, looked up by name (they drift between macOS
//! versions: 26.6 has contacts at 22 and groups at 19, a 2013 store had 21 and 17), and the
//! table and column names built from them.

use std::collections::HashMap;

use rusqlite::Connection;

/// The entities a reader needs, as numbers in this file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Entities {
    /// `ABCDContact` and every entity under it (`ABCDSubscribedContact`: Exchange cards).
    pub people: Vec<i64>,
    /// Every group entity: `ABCDAbstractGroup`'s tree (or `ABCDGroup`'s when there is none).
    pub groups: Vec<i64>,
    /// `ABCDSmartGroup`'s tree: groups that keep a rule, not members.
    pub smart: Vec<i64>,
    /// `ABCDContact` itself: the `<contact>` of the membership table's name.
    pub contact: i64,
    /// `ABCDGroup` itself: the `<group>` of the membership column's name.
    pub group: Option<i64>,
}

impl Entities {
    /// Read `Z_PRIMARYKEY`. `Err(Ok(detail))` when the file is not a Contacts store.
    pub fn read(conn: &Connection) -> Result<Entities, Result<String, rusqlite::Error>> {
        if !has_table(conn, "Z_PRIMARYKEY").map_err(Err)? {
            return Err(Ok("no Z_PRIMARYKEY table: not a Core Data store".to_owned()));
        }
        let has_super = columns(conn, "Z_PRIMARYKEY")
            .map_err(Err)?
            .iter()
            .any(|c| c == "Z_SUPER");
        let sql = if has_super {
            "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY"
        } else {
            "SELECT Z_ENT, Z_NAME, 0 FROM Z_PRIMARYKEY"
        };
        let rows: Vec<(i64, String, i64)> = conn
            .prepare(sql)
            .and_then(|mut s| {
                s.query_map([], |r| {
                    Ok((
                        r.get(0)?,
                        r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                        r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                    ))
                })?
                .collect()
            })
            .map_err(Err)?;
        let by_name: HashMap<&str, i64> = rows.iter().map(|(e, n, _)| (n.as_str(), *e)).collect();
        let tree = |root: i64| descendants(&rows, root);
        let Some(&contact) = by_name.get("ABCDContact") else {
            return Err(Ok("no ABCDContact entity in Z_PRIMARYKEY".to_owned()));
        };
        let group = by_name.get("ABCDGroup").copied();
        let groups = match (by_name.get("ABCDAbstractGroup"), group) {
            (Some(&abstract_group), _) => tree(abstract_group),
            (None, Some(g)) => tree(g),
            (None, None) => Vec::new(),
        };
        let smart = by_name
            .get("ABCDSmartGroup")
            .map(|&s| tree(s))
            .unwrap_or_default();
        Ok(Entities {
            people: tree(contact),
            groups,
            smart,
            contact,
            group,
        })
    }

    /// The membership table and its two columns (contact, group):
    /// `Z_<contact>PARENTGROUPS(Z_<contact>CONTACTS, Z_<group>PARENTGROUPS1)`. `None` without
    /// an `ABCDGroup` entity.
    pub fn membership(&self) -> Option<(String, String, String)> {
        let (c, g) = (self.contact, self.group?);
        Some((
            format!("Z_{c}PARENTGROUPS"),
            format!("Z_{c}CONTACTS"),
            format!("Z_{g}PARENTGROUPS1"),
        ))
    }
}

/// `root` and every entity whose `Z_SUPER` chain reaches it, in number order.
fn descendants(rows: &[(i64, String, i64)], root: i64) -> Vec<i64> {
    let mut out = vec![root];
    // Core Data trees are a few levels deep; a bounded loop also survives a cyclic table.
    for _ in 0..rows.len() {
        let before = out.len();
        for (ent, _, sup) in rows {
            if out.contains(sup) && !out.contains(ent) {
                out.push(*ent);
            }
        }
        if out.len() == before {
            break;
        }
    }
    out.sort_unstable();
    out
}

/// Whether `name` is a table of this file.
pub(super) fn has_table(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// The column names of `table` (empty when there is no such table).
pub(super) fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    stmt.query_map([table], |r| r.get(0))?.collect()
}

/// `ints` as an SQL list (`22,23`): entity numbers are integers we read, never text.
pub(super) fn sql_list(ints: &[i64]) -> String {
    ints.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}
