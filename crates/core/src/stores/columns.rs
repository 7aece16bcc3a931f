//! The columns a query reads, named once: the schema probe requires exactly these, and the
//! SQL is written from the same constants, so a store without one is a `store_schema` error
//! naming it at open rather than a failure of every scan.

use rusqlite::Connection;

use super::sql::columns;

/// One column a query reads: `table.name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Col {
    /// The table.
    pub table: &'static str,
    /// The column.
    pub name: &'static str,
}

impl Col {
    pub(crate) const fn new(table: &'static str, name: &'static str) -> Col {
        Col { table, name }
    }
}

/// Check that every column of `cols` exists (`ROWID` always does). `Err(Ok(detail))` names the
/// first missing table or column; `Err(Err(e))` is a `SQLite` failure.
pub(crate) fn require(
    conn: &Connection,
    cols: &[Col],
) -> Result<(), Result<String, rusqlite::Error>> {
    let mut tables: Vec<&str> = Vec::new();
    for c in cols {
        if !tables.contains(&c.table) {
            tables.push(c.table);
        }
    }
    for table in tables {
        let have = columns(conn, table).map_err(Err)?;
        if have.is_empty() {
            return Err(Ok(format!("no `{table}` table")));
        }
        for col in cols.iter().filter(|c| c.table == table) {
            if !col.name.eq_ignore_ascii_case("ROWID")
                && !have.iter().any(|h| h.eq_ignore_ascii_case(col.name))
            {
                return Err(Ok(format!("no `{table}.{}` column", col.name)));
            }
        }
    }
    Ok(())
}

/// Whether `table` exists; when it does, every column of `cols` must too (an optional table
/// we read is read in full).
pub(crate) fn optional_table(
    conn: &Connection,
    table: &str,
    cols: &[Col],
) -> Result<bool, Result<String, rusqlite::Error>> {
    if columns(conn, table).map_err(Err)?.is_empty() {
        return Ok(false);
    }
    require(conn, cols)?;
    Ok(true)
}

/// Whether `index` exists on `table`, is not partial and leads with `column`: one a query may
/// name with `INDEXED BY` (a partial index, or one that leads with another column, would make
/// the statement fail to compile, or walk the whole index).
pub(crate) fn leading_index(
    conn: &Connection,
    table: &str,
    index: &str,
    column: &str,
) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM pragma_index_list(?1) l WHERE l.name = ?2 AND l.partial = 0 \
         AND (SELECT i.name FROM pragma_index_info(l.name) i WHERE i.seqno = 0) = ?3 \
         COLLATE NOCASE",
        [table, index, column],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}
