//! The mailbox lookup: mailbox ROWID to path and account name, from the index itself
//! (`mailboxes.url` is `scheme://ACCOUNT-UUID/percent-encoded/path`) and Mail's account map
//! file (`AccountsMap.plist`: UUID to `AccountURL`, whose user part is the address). Mail does
//! not have to be running. Kept warm; reparsed only when the table or the file changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rusqlite::Connection;

use crate::filter::MailboxRef;

/// One mailbox, as the lookup knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mailbox {
    /// The account's UUID (the URL's host).
    pub account_id: String,
    /// The decoded path, e.g. `[Gmail]/All Mail`.
    pub path: String,
}

/// Mailboxes by ROWID plus account names by UUID.
#[derive(Default)]
pub(crate) struct MailboxLookup {
    urls: Vec<(i64, String)>,
    by_id: HashMap<i64, Mailbox>,
    accounts: AccountNames,
}

impl MailboxLookup {
    /// Re-read the mailboxes table (small: one row per mailbox) and reparse only if it changed;
    /// re-read the account map only if its size or mtime changed. The rows are compared with
    /// the list kept, borrowed, so an unchanged table (every commit but a mailbox's) costs no
    /// allocation: this runs on every read after a commit, a single stream's latency.
    pub(crate) fn refresh(
        &mut self,
        conn: &Connection,
        accounts_map: &Path,
    ) -> rusqlite::Result<()> {
        let mut stmt = conn.prepare_cached("SELECT ROWID, url FROM mailboxes ORDER BY ROWID")?;
        let mut rows = stmt.query([])?;
        // Rows equal to the kept list's so far, then the new list from the first difference.
        let mut same = 0;
        let mut changed: Option<Vec<(i64, String)>> = None;
        while let Some(row) = rows.next()? {
            let id = row.get::<_, i64>(0)?;
            // Lossy: one mailbox URL that is not UTF-8 must not stop every scan.
            let url = crate::stores::read::text_ref(row, 1)?.unwrap_or_default();
            match &mut changed {
                Some(urls) => urls.push((id, url.into_owned())),
                None if self
                    .urls
                    .get(same)
                    .is_some_and(|(k, u)| *k == id && *u == url) =>
                {
                    same += 1;
                }
                None => {
                    let mut urls = self.urls[..same].to_vec();
                    urls.push((id, url.into_owned()));
                    changed = Some(urls);
                }
            }
        }
        if changed.is_none() && same < self.urls.len() {
            changed = Some(self.urls[..same].to_vec());
        }
        if let Some(urls) = changed {
            self.by_id = urls
                .iter()
                .filter_map(|(id, url)| Some((*id, parse_url(url)?)))
                .collect();
            self.urls = urls;
        }
        self.accounts.refresh(accounts_map);
        Ok(())
    }

    pub(crate) fn get(&self, rowid: i64) -> Option<&Mailbox> {
        self.by_id.get(&rowid)
    }

    /// The account name of a mailbox (its address from the account map), if known.
    pub(crate) fn account_name(&self, mailbox: &Mailbox) -> Option<&str> {
        self.accounts
            .names
            .get(&mailbox.account_id.to_ascii_uppercase())
            .map(String::as_str)
    }

    /// The ROWIDs named by `refs`, and the refs that name no mailbox.
    pub(crate) fn resolve<'r>(&self, refs: &'r [MailboxRef]) -> (Vec<i64>, Vec<&'r MailboxRef>) {
        let mut ids = Vec::new();
        let mut unknown = Vec::new();
        for r in refs {
            let before = ids.len();
            for (id, mb) in &self.by_id {
                if self.matches(r, mb) {
                    ids.push(*id);
                }
            }
            if ids.len() == before {
                unknown.push(r);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        (ids, unknown)
    }

    /// The ROWIDs of every mailbox of `account` (its address, name or UUID), sorted; empty
    /// when no mailbox in the index belongs to it.
    pub(crate) fn account_mailboxes(&self, account: &str) -> Vec<i64> {
        let mut ids: Vec<i64> = self
            .by_id
            .iter()
            .filter(|(_, mb)| self.in_account(account, mb))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The mailboxes the user's own mail sits in (Sent, Drafts, Outbox, by the last part of
    /// their path), sorted: the recent senders leave them out.
    pub(crate) fn outgoing_mailboxes(&self) -> Vec<i64> {
        const OUTGOING: &[&str] = &[
            "sent",
            "sent messages",
            "sent mail",
            "sent items",
            "drafts",
            "outbox",
        ];
        let mut ids: Vec<i64> = self
            .by_id
            .iter()
            .filter(|(_, mb)| {
                let last = mb.path.rsplit('/').next().unwrap_or("").to_lowercase();
                OUTGOING.contains(&last.as_str())
            })
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The user's own addresses: the account names that are addresses, lower-cased.
    pub(crate) fn own_addresses(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .accounts
            .names
            .values()
            .filter(|n| n.contains('@'))
            .map(|n| n.to_lowercase())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    fn matches(&self, r: &MailboxRef, mb: &Mailbox) -> bool {
        if !r.path.to_lowercase().eq(&mb.path.to_lowercase()) {
            return false;
        }
        match &r.account {
            None => true,
            Some(a) => self.in_account(a, mb),
        }
    }

    /// Whether `mb` belongs to the account named `a` (its UUID, or its name from the map).
    fn in_account(&self, a: &str, mb: &Mailbox) -> bool {
        a.eq_ignore_ascii_case(&mb.account_id)
            || self
                .account_name(mb)
                .is_some_and(|n| n.to_lowercase() == a.to_lowercase())
    }
}

/// Account names from `AccountsMap.plist`, keyed by upper-case UUID.
#[derive(Default)]
struct AccountNames {
    seen: Option<(PathBuf, u64, Option<SystemTime>)>,
    names: HashMap<String, String>,
}

impl AccountNames {
    fn refresh(&mut self, path: &Path) {
        let meta = std::fs::metadata(path).ok();
        let len = meta.as_ref().map_or(0, std::fs::Metadata::len);
        let modified = meta.as_ref().and_then(|m| m.modified().ok());
        if let Some((p, l, m)) = &self.seen
            && p == path
            && *l == len
            && *m == modified
        {
            return;
        }
        // A missing or unreadable map only costs us names; paths still work.
        self.names = meta
            .and_then(|_| read_account_map(path))
            .unwrap_or_default();
        self.seen = Some((path.to_owned(), len, modified));
    }
}

/// The account names in the map at `path`, sorted and deduplicated; empty when it cannot be
/// read. For the `account` argument's examples, so read on demand, not kept.
pub(crate) fn account_names(path: &Path) -> Vec<String> {
    let mut names: Vec<String> = read_account_map(path)
        .unwrap_or_default()
        .into_values()
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

fn read_account_map(path: &Path) -> Option<HashMap<String, String>> {
    let value = plist::Value::from_file(path).ok()?;
    let dict = value.as_dictionary()?;
    Some(
        dict.iter()
            .filter_map(|(uuid, entry)| {
                let url = entry.as_dictionary()?.get("AccountURL")?.as_string()?;
                Some((uuid.to_ascii_uppercase(), account_name_from_url(url)?))
            })
            .collect(),
    )
}

/// `imap://user%40example.com@imap.example.com` → `user@example.com`.
fn account_name_from_url(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    let (user, _host) = authority.rsplit_once('@')?;
    let name = percent_decode(user);
    (!name.is_empty()).then(|| crate::text::sanitize(&name, crate::text::MAX_NAME_CHARS))
}

/// `imap://UUID/%5BGmail%5D/All%20Mail` → account `UUID`, path `[Gmail]/All Mail`.
pub(crate) fn parse_url(url: &str) -> Option<Mailbox> {
    let (_scheme, rest) = url.split_once("://")?;
    let (account, path) = rest.split_once('/').unwrap_or((rest, ""));
    let path = path
        .split('/')
        .map(percent_decode)
        .collect::<Vec<_>>()
        .join("/");
    Some(Mailbox {
        account_id: account.to_owned(),
        path: path.trim_matches('/').to_owned(),
    })
}

fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            // Two hex digits: at most 255.
            out.push(u8::try_from(h * 16 + l).expect("two hex digits fit a byte"));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mailbox_urls_decode_to_account_and_path() {
        let mb = parse_url("imap://6A2B-11/%5BGmail%5D/All%20Mail").unwrap();
        assert_eq!(
            mb,
            Mailbox {
                account_id: "6A2B-11".into(),
                path: "[Gmail]/All Mail".into()
            }
        );
        assert_eq!(
            parse_url("ews://U/Deleted%20Items").unwrap().path,
            "Deleted Items"
        );
        assert_eq!(
            parse_url("imap://U/Clients/Acme").unwrap().path,
            "Clients/Acme"
        );
        assert_eq!(parse_url("not a url"), None);
        assert_eq!(percent_decode("50%"), "50%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }

    #[test]
    fn a_refresh_sees_a_mailbox_added_renamed_in_place_or_removed() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE mailboxes (ROWID INTEGER PRIMARY KEY, url TEXT);
             INSERT INTO mailboxes VALUES (1, 'imap://A/INBOX'), (2, 'imap://A/Work'),
                                          (3, 'imap://A/Old');",
        )
        .unwrap();
        let map = Path::new("/nonexistent/AccountsMap.plist");
        let mut lookup = MailboxLookup::default();
        let paths = |l: &MailboxLookup| -> Vec<Option<String>> {
            (1..=5)
                .map(|id| l.get(id).map(|m| m.path.clone()))
                .collect()
        };
        let some = |v: &[&str]| -> Vec<Option<String>> {
            v.iter()
                .map(|p| (!p.is_empty()).then(|| (*p).to_owned()))
                .collect()
        };
        lookup.refresh(&conn, map).unwrap();
        assert_eq!(paths(&lookup), some(&["INBOX", "Work", "Old", "", ""]));
        lookup.refresh(&conn, map).unwrap();
        assert_eq!(
            paths(&lookup),
            some(&["INBOX", "Work", "Old", "", ""]),
            "unchanged"
        );
        // Renamed in place, in the middle: the rows before it are equal, the ones after too.
        conn.execute(
            "UPDATE mailboxes SET url = 'imap://A/Clients' WHERE ROWID = 2",
            [],
        )
        .unwrap();
        lookup.refresh(&conn, map).unwrap();
        assert_eq!(paths(&lookup), some(&["INBOX", "Clients", "Old", "", ""]));
        conn.execute("INSERT INTO mailboxes VALUES (5, 'imap://A/New')", [])
            .unwrap();
        lookup.refresh(&conn, map).unwrap();
        assert_eq!(
            paths(&lookup),
            some(&["INBOX", "Clients", "Old", "", "New"])
        );
        // The last rows removed: every row left is equal, and the list still shortens.
        conn.execute("DELETE FROM mailboxes WHERE ROWID >= 3", [])
            .unwrap();
        lookup.refresh(&conn, map).unwrap();
        assert_eq!(paths(&lookup), some(&["INBOX", "Clients", "", "", ""]));
    }

    #[test]
    fn account_names_come_from_the_url_user_part() {
        assert_eq!(
            account_name_from_url("imap://ana%40example.com@imap.example.com").as_deref(),
            Some("ana@example.com")
        );
        assert_eq!(account_name_from_url("imap://imap.example.com"), None);
    }
}
