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
    /// re-read the account map only if its size or mtime changed.
    pub(crate) fn refresh(
        &mut self,
        conn: &Connection,
        accounts_map: &Path,
    ) -> rusqlite::Result<()> {
        let mut stmt = conn.prepare_cached("SELECT ROWID, url FROM mailboxes ORDER BY ROWID")?;
        let urls = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    // Lossy: one mailbox URL that is not UTF-8 must not stop every scan.
                    crate::stores::read::text(r, 1)?.unwrap_or_default(),
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        if urls != self.urls {
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
        let key = (
            path.to_owned(),
            meta.as_ref().map_or(0, std::fs::Metadata::len),
            meta.as_ref().and_then(|m| m.modified().ok()),
        );
        if self.seen.as_ref() == Some(&key) {
            return;
        }
        // A missing or unreadable map only costs us names; paths still work.
        self.names = meta
            .and_then(|_| read_account_map(path))
            .unwrap_or_default();
        self.seen = Some(key);
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
    fn account_names_come_from_the_url_user_part() {
        assert_eq!(
            account_name_from_url("imap://ana%40example.com@imap.example.com").as_deref(),
            Some("ana@example.com")
        );
        assert_eq!(account_name_from_url("imap://imap.example.com"), None);
    }
}
