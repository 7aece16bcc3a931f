//! One Contacts store file to its people and groups, read-only, and the search over them.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::phone::{PhoneCache, email_key};
use super::schema::{Entities, columns, has_table, sql_list};
use super::{ContactsProblem, ContactsProblemKind, Group, Handle, Person, Region};

/// How long to wait for Contacts' own write lock: a load is a background refresh, and a
/// store busy this long is reported as locked and read again on the next change.
const BUSY_TIMEOUT: Duration = Duration::from_millis(250);

/// The person columns read when present (older stores lack some).
const PERSON_COLUMNS: [&str; 6] = [
    "ZFIRSTNAME",
    "ZMIDDLENAME",
    "ZLASTNAME",
    "ZNICKNAME",
    "ZORGANIZATION",
    "ZDISPLAYFLAGS",
];

/// What one store holds.
pub(super) struct Store {
    pub people: Vec<Person>,
    pub groups: Vec<Group>,
}

/// Read one store, or say why it cannot be read.
pub(super) fn read_store(
    path: &Path,
    region: &Region,
    cache: &mut PhoneCache,
) -> Result<Store, ContactsProblem> {
    let problem = |kind, detail: &str| ContactsProblem {
        path: path.to_path_buf(),
        kind,
        detail: detail.to_owned(),
    };
    // Opened by hand first, so "no permission" is told apart from SQLite's "unable to open".
    match std::fs::File::open(path).and_then(|f| f.metadata()) {
        Ok(m) if m.len() == 0 => return Err(problem(ContactsProblemKind::Corrupt, "empty file")),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(problem(ContactsProblemKind::NotFound, "no such file"));
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(problem(
                ContactsProblemKind::Unreadable,
                "permission denied: give Tidings Full Disk Access",
            ));
        }
        Err(e) => {
            return Err(problem(
                ContactsProblemKind::Unreadable,
                &e.kind().to_string(),
            ));
        }
    }
    let read = open(path).and_then(|conn| {
        let tx = conn.unchecked_transaction().map_err(Err)?;
        let store = read_all(&tx, region, cache)?;
        tx.finish().map_err(Err)?;
        Ok(store)
    });
    read.map_err(|e| match e {
        Ok(detail) => problem(ContactsProblemKind::Schema, &detail),
        Err(e) => classify(path, &e),
    })
}

/// A `SQLite` failure as a problem. The detail is `SQLite`'s code name, never a value.
fn classify(path: &Path, e: &rusqlite::Error) -> ContactsProblem {
    let (kind, detail) = match e {
        rusqlite::Error::SqliteFailure(f, _) => {
            let kind = match f.code {
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => ContactsProblemKind::Locked,
                ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => {
                    ContactsProblemKind::Corrupt
                }
                ErrorCode::AuthorizationForStatementDenied | ErrorCode::PermissionDenied => {
                    ContactsProblemKind::Unreadable
                }
                ErrorCode::CannotOpen if !path.exists() => ContactsProblemKind::NotFound,
                ErrorCode::CannotOpen => ContactsProblemKind::Unreadable,
                _ => ContactsProblemKind::Corrupt,
            };
            (
                kind,
                format!("{:?} (SQLite code {})", f.code, f.extended_code),
            )
        }
        other => (
            ContactsProblemKind::Corrupt,
            format!("{other:?}").chars().take(80).collect(),
        ),
    };
    ContactsProblem {
        path: path.to_path_buf(),
        kind,
        detail,
    }
}

type ReadResult<T> = Result<T, Result<String, rusqlite::Error>>;

/// Open read-only (`mode=ro`: a reader in WAL mode that never writes, as core's other stores).
fn open(path: &Path) -> ReadResult<Connection> {
    let uri = format!("file:{}?mode=ro", crate::text::uri_escape(path));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri, flags).map_err(Err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(Err)?;
    Ok(conn)
}

fn read_all(conn: &Connection, region: &Region, cache: &mut PhoneCache) -> ReadResult<Store> {
    let ents = Entities::read(conn)?;
    if !has_table(conn, "ZABCDRECORD").map_err(Err)? {
        return Err(Ok("no ZABCDRECORD table".to_owned()));
    }
    let cols = columns(conn, "ZABCDRECORD").map_err(Err)?;
    for needed in ["Z_PK", "Z_ENT", "ZUNIQUEID"] {
        if !cols.iter().any(|c| c == needed) {
            return Err(Ok(format!("ZABCDRECORD has no {needed} column")));
        }
    }
    let col = |name: &str| {
        if cols.iter().any(|c| c == name) {
            name.to_owned()
        } else {
            "NULL".to_owned()
        }
    };
    let person_cols: Vec<String> = PERSON_COLUMNS.iter().map(|c| col(c)).collect();
    let sql = format!(
        "SELECT Z_PK, ZUNIQUEID, {} FROM ZABCDRECORD WHERE Z_ENT IN ({}) ORDER BY Z_PK",
        person_cols.join(", "),
        sql_list(&ents.people)
    );
    let mut people = Vec::new();
    let mut index: HashMap<i64, usize> = HashMap::new();
    {
        let mut stmt = conn.prepare(&sql).map_err(Err)?;
        let mut rows = stmt.query([]).map_err(Err)?;
        while let Some(r) = rows.next().map_err(Err)? {
            let text = |i| {
                r.get::<_, Option<String>>(i)
                    .ok()
                    .flatten()
                    .unwrap_or_default()
            };
            let pk: i64 = r.get(0).map_err(Err)?;
            let Some(id) = r.get::<_, Option<String>>(1).ok().flatten() else {
                continue; // a card with no id cannot be named by an entry
            };
            let flags = r.get::<_, Option<i64>>(7).ok().flatten().unwrap_or(0);
            let company = flags & 1 == 1;
            let name = display_name(&[text(2), text(3), text(4)], &text(5), &text(6), company);
            index.insert(pk, people.len());
            people.push(Person {
                id,
                name,
                company,
                phones: Vec::new(),
                emails: Vec::new(),
            });
        }
    }
    let mut add = |table: &str, value: &str, phone: bool| -> ReadResult<()> {
        let cols = columns(conn, table).map_err(Err)?;
        if !cols.iter().any(|c| c == value) || !cols.iter().any(|c| c == "ZOWNER") {
            return Ok(()); // no such table (or column) in this store: no handles of the kind
        }
        let order = if cols.iter().any(|c| c == "ZORDERINGINDEX") {
            "ZOWNER, ZORDERINGINDEX, Z_PK"
        } else {
            "ZOWNER, Z_PK"
        };
        let sql = format!("SELECT ZOWNER, {value} FROM {table} ORDER BY {order}");
        let mut stmt = conn.prepare(&sql).map_err(Err)?;
        let mut rows = stmt.query([]).map_err(Err)?;
        while let Some(r) = rows.next().map_err(Err)? {
            let owner = r.get::<_, Option<i64>>(0).ok().flatten();
            let written = r.get::<_, Option<String>>(1).ok().flatten();
            let (Some(&i), Some(written)) = (owner.and_then(|o| index.get(&o)), written) else {
                continue;
            };
            let p = &mut people[i];
            if phone {
                let key = cache.key(&written, region);
                p.phones.push(Handle { written, key });
            } else {
                let key = email_key(&written);
                p.emails.push(Handle { written, key });
            }
        }
        Ok(())
    };
    add("ZABCDPHONENUMBER", "ZFULLNUMBER", true)?;
    add("ZABCDEMAILADDRESS", "ZADDRESS", false)?;
    let groups = read_groups(conn, &ents, &cols, &people, &index)?;
    Ok(Store { people, groups })
}

fn read_groups(
    conn: &Connection,
    ents: &Entities,
    cols: &[String],
    people: &[Person],
    index: &HashMap<i64, usize>,
) -> ReadResult<Vec<Group>> {
    if ents.groups.is_empty() || !cols.iter().any(|c| c == "ZNAME") {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT Z_PK, ZUNIQUEID, ZNAME, Z_ENT FROM ZABCDRECORD WHERE Z_ENT IN ({}) ORDER BY Z_PK",
        sql_list(&ents.groups)
    );
    let mut groups = Vec::new();
    let mut by_pk: HashMap<i64, usize> = HashMap::new();
    {
        let mut stmt = conn.prepare(&sql).map_err(Err)?;
        let mut rows = stmt.query([]).map_err(Err)?;
        while let Some(r) = rows.next().map_err(Err)? {
            let pk: i64 = r.get(0).map_err(Err)?;
            let Some(id) = r.get::<_, Option<String>>(1).ok().flatten() else {
                continue;
            };
            let name = r
                .get::<_, Option<String>>(2)
                .ok()
                .flatten()
                .unwrap_or_default();
            let ent: i64 = r.get(3).map_err(Err)?;
            if !ents.smart.contains(&ent) {
                by_pk.insert(pk, groups.len());
            }
            groups.push(Group {
                id,
                name,
                members: Vec::new(),
            });
        }
    }
    // Members: the contact-to-group join table only. `Z_<abstract group>PARENTGROUPS` holds
    // groups nested in groups, not people; smart groups keep a rule and have no rows here.
    if let Some((table, contact_col, group_col)) = ents.membership() {
        let jcols = columns(conn, &table).map_err(Err)?;
        if jcols.contains(&contact_col) && jcols.contains(&group_col) {
            let sql = format!("SELECT {contact_col}, {group_col} FROM {table} ORDER BY 2, 1");
            let mut stmt = conn.prepare(&sql).map_err(Err)?;
            let mut rows = stmt.query([]).map_err(Err)?;
            while let Some(r) = rows.next().map_err(Err)? {
                let contact = r.get::<_, Option<i64>>(0).ok().flatten();
                let group = r.get::<_, Option<i64>>(1).ok().flatten();
                if let (Some(p), Some(g)) = (
                    contact.and_then(|c| index.get(&c)),
                    group.and_then(|g| by_pk.get(&g)),
                ) {
                    groups[*g].members.push(people[*p].id.clone());
                }
            }
        }
    }
    Ok(groups)
}

/// A card's name as Contacts shows it: the organization for a company card, else the
/// person's names, else the nickname, else the organization.
fn display_name(names: &[String; 3], nickname: &str, organization: &str, company: bool) -> String {
    let org = organization.trim();
    if company && !org.is_empty() {
        return org.to_owned();
    }
    let joined = names
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    [joined.as_str(), nickname.trim(), org]
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or("")
        .to_owned()
}

/// People whose name, address or number holds `query`, case-insensitive; a query of digits
/// (in any format) matches the digits of a number however it is written. Names that start
/// with the query come first.
pub(super) fn search<'a>(people: &'a [Person], query: &str, limit: usize) -> Vec<&'a Person> {
    let q = query.trim().to_lowercase();
    if q.is_empty() || limit == 0 {
        return Vec::new();
    }
    let q_digits: String = q.chars().filter(char::is_ascii_digit).collect();
    let numeric = q_digits.len() >= 3
        && q.chars()
            .all(|c| c.is_ascii_digit() || " +-().".contains(c));
    let hit = |p: &Person| -> Option<u8> {
        let name = p.name.to_lowercase();
        if name.starts_with(&q) {
            return Some(0);
        }
        if name.contains(&q)
            || p.emails
                .iter()
                .any(|e| e.written.to_lowercase().contains(&q))
        {
            return Some(1);
        }
        let phone_hit = numeric
            && p.phones.iter().any(|h| {
                let digits: String = h.written.chars().filter(char::is_ascii_digit).collect();
                digits.contains(&q_digits) || h.key.as_ref().is_some_and(|k| k.contains(&q_digits))
            });
        phone_hit.then_some(1)
    };
    let mut found: Vec<(u8, &Person)> = people
        .iter()
        .filter_map(|p| hit(p).map(|rank| (rank, p)))
        .collect();
    found.sort_by_key(|(rank, _)| *rank);
    found.into_iter().take(limit).map(|(_, p)| p).collect()
}
