//! The senders heard from lately, grouped by the store's handle, newest first: the SQL behind
//! `Engine::recent_senders` (`crate::recent`). Incoming only, with the event path's skip rules,
//! so a sender the picker offers is one whose messages could be delivered.

use rusqlite::{Connection, params};

use super::read;

/// One sender as the store has it: raw handle (unsanitised), display name, messages, newest
/// date (the store's own unit).
pub(crate) type RecentRow = (String, Option<String>, u64, Option<i64>);

/// Mail: messages received at or after `since` (Unix seconds), not deleted, one per message
/// (copies share a global id), outside the user's own mailboxes (`outgoing`) and not from the
/// user's own addresses (`own`, lower case: Gmail's All Mail holds sent mail too). The name
/// is the comment of the sender's newest row (`SQLite` takes a bare column from the `max` row).
pub(crate) fn mail(
    conn: &Connection,
    since: i64,
    outgoing: &[i64],
    own: &[String],
    limit: usize,
) -> rusqlite::Result<Vec<RecentRow>> {
    let outgoing = serde_json::to_string(outgoing).expect("a list of integers serialises");
    let own = serde_json::to_string(own).expect("a list of strings serialises");
    let mut stmt = conn.prepare_cached(
        "SELECT a.address, a.comment, count(DISTINCT m.global_message_id), max(m.date_received) \
         FROM messages m JOIN addresses a ON a.ROWID = m.sender \
         WHERE m.date_received >= ?1 AND +m.deleted = 0 \
         AND m.mailbox NOT IN (SELECT value FROM json_each(?2)) \
         AND lower(a.address) NOT IN (SELECT value FROM json_each(?3)) \
         GROUP BY a.address ORDER BY max(m.date_received) DESC LIMIT ?4",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut rows = stmt.query(params![since, outgoing, own, limit])?;
    collect(&mut rows)
}

/// Messages: messages dated at or after `since` (Apple nanoseconds) that pass `skip`, the
/// scan's skip rules on `m` (someone else's, not a tapback, not in a blocked or junk chat…),
/// grouped by handle (one number's iMessage and SMS handles are one sender). Messages keeps
/// no display names.
pub(crate) fn messages(
    conn: &Connection,
    skip: &str,
    since: i64,
    limit: usize,
) -> rusqlite::Result<Vec<RecentRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT h.id, NULL, count(*), max(m.date) FROM message m \
         JOIN handle h ON h.ROWID = m.handle_id \
         WHERE m.date >= ?1 AND {skip} \
         GROUP BY h.id ORDER BY max(m.date) DESC LIMIT ?2"
    ))?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut rows = stmt.query(params![since, limit])?;
    collect(&mut rows)
}

fn collect(rows: &mut rusqlite::Rows<'_>) -> rusqlite::Result<Vec<RecentRow>> {
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let Some(handle) = read::text(r, 0)? else {
            continue;
        };
        let name = read::text(r, 1)?.filter(|n| !n.trim().is_empty());
        let count = u64::try_from(read::int(r, 2)?.unwrap_or(0)).unwrap_or(0);
        out.push((handle, name, count, read::int(r, 3)?));
    }
    Ok(out)
}
