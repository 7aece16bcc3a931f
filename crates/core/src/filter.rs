//! Who and where: sender patterns, the per-type filters, and how the allowlist narrows them.
//!
//! A subscription's sender bound comes from the client (`from`, `domains`) and from the user's
//! allowlist in Tidings. Both are lists of [`SenderPattern`]s; a row must match the client's list
//! (when given) *and* the allowlist (when set). Places (`mailboxes`, `chats`) narrow further.

use std::fmt;

use crate::event::Category;

/// One way to name senders. Matching is case-insensitive.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SenderPattern {
    /// One address or handle: `ana@example.com`, `+12025550143`.
    Exact(String),
    /// A domain and its subdomains: `example.com` matches `a@example.com` and `b@eu.example.com`.
    Domain(String),
    /// Everything starting with this text, written with a trailing `*`: `+120255501*`.
    Prefix(String),
    /// No sender at all: what a person or group allowlist entry stands for when it cannot be
    /// resolved (missing, ambiguous, Contacts unreadable), so an allowlist of such entries
    /// still bounds what is delivered (to nothing) instead of vanishing. Never parsed, never
    /// written to a file; `0` in SQL.
    Nobody,
}

/// Why a string is not a sender pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not {expected}")]
pub struct PatternError {
    /// The rejected value (sanitised).
    pub value: String,
    /// What was expected.
    pub expected: &'static str,
}

/// The longest address, handle or domain we accept (RFC 5321 caps a path at 256).
pub const MAX_PATTERN_LEN: usize = 320;

impl SenderPattern {
    /// Parse an allowlist entry: an address, a phone number, a domain (`example.com` or
    /// `@example.com`), or a prefix ending in `*`.
    pub fn parse_allow(raw: &str) -> Result<SenderPattern, PatternError> {
        let s = raw.trim();
        if let Some(prefix) = s.strip_suffix('*') {
            let p = normalize_handle(prefix);
            // `+*` is neither a phone range (no digit) nor an e-mail prefix anyone means.
            if p.is_empty()
                || p == "+"
                || p.len() > MAX_PATTERN_LEN
                || p.contains('*')
                || !is_printable(&p)
            {
                return Err(err(raw, "a prefix such as `+120255501*`"));
            }
            return Ok(SenderPattern::Prefix(p));
        }
        if let Some(domain) = s.strip_prefix('@') {
            return Self::parse_domain(domain);
        }
        if s.contains('@') || looks_like_phone(s) {
            return Self::parse_exact(s);
        }
        Self::parse_domain(s).map_err(|_| {
            err(
                raw,
                "an address, a phone number, a domain or a prefix ending in `*`",
            )
        })
    }

    /// Parse one address or handle (a client's `from` entry).
    pub fn parse_exact(raw: &str) -> Result<SenderPattern, PatternError> {
        let s = normalize_handle(raw);
        let valid = !s.is_empty()
            && s.len() <= MAX_PATTERN_LEN
            && !s.contains(['*', ' '])
            && is_printable(&s)
            && (looks_like_phone(&s)
                || s.split_once('@')
                    .is_some_and(|(l, d)| !l.is_empty() && !d.is_empty()));
        if !valid {
            return Err(err(raw, "an email address or a phone number"));
        }
        Ok(SenderPattern::Exact(s))
    }

    /// Parse a domain (a client's `domains` entry); a leading `@` is allowed.
    pub fn parse_domain(raw: &str) -> Result<SenderPattern, PatternError> {
        let s = raw
            .trim()
            .trim_start_matches('@')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let valid = !s.is_empty()
            && s.len() <= MAX_PATTERN_LEN
            && s.contains('.')
            && !s.starts_with('.')
            && !s.contains("..")
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '.')
            // No top-level domain is all digits (RFC 3696 2.1), and `1.2` written back to
            // settings would read as the phone number 12.
            && !s.rsplit('.').next().unwrap_or("").bytes().all(|b| b.is_ascii_digit());
        if !valid {
            return Err(err(raw, "a domain such as `example.com`"));
        }
        Ok(SenderPattern::Domain(s))
    }

    /// Whether `sender` (an address or handle) matches, with the same rules the SQL uses
    /// (`stores::sql`): a phone pattern matches phone handles only and an e-mail pattern
    /// e-mail handles only, so `+120255501*` never lets `+12025550143@evil.test` through.
    /// Case is folded for ASCII only, as `SQLite`'s `LIKE` and `NOCASE` do.
    pub fn matches(&self, sender: &str) -> bool {
        // Compared as `sender.to_ascii_lowercase()` would be, without making it: a fan-out
        // matches one sender against every stream's patterns.
        let sender = sender.as_bytes();
        match self {
            SenderPattern::Exact(e) => folded_eq(sender, e.as_bytes()),
            // The domain part of an e-mail handle: `d` follows an `@`, or a `.` after an `@`.
            SenderPattern::Domain(d) => {
                let mut after_at = false;
                sender.iter().enumerate().any(|(i, &b)| {
                    after_at |= b == b'@';
                    after_at
                        && matches!(b, b'@' | b'.')
                        && folded_eq(&sender[i + 1..], d.as_bytes())
                })
            }
            SenderPattern::Prefix(p) if is_phone_handle(p) => {
                is_phone_handle_bytes(sender) && folded_starts_with(sender, p.as_bytes())
            }
            SenderPattern::Prefix(p) => {
                sender.contains(&b'@') && folded_starts_with(sender, p.as_bytes())
            }
            SenderPattern::Nobody => false,
        }
    }
}

impl fmt::Display for SenderPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SenderPattern::Exact(s) | SenderPattern::Domain(s) => f.write_str(s),
            SenderPattern::Prefix(p) => write!(f, "{p}*"),
            // Not a valid entry, so a file that somehow got it is refused, never widened.
            SenderPattern::Nobody => f.write_str("(nobody)"),
        }
    }
}

fn err(raw: &str, expected: &'static str) -> PatternError {
    PatternError {
        value: crate::text::sanitize(raw, crate::text::MAX_QUOTE_CHARS),
        expected,
    }
}

fn is_printable(s: &str) -> bool {
    !s.chars().any(char::is_control)
}

/// Whether `sender`, its ASCII letters lowered, equals `pattern`.
fn folded_eq(sender: &[u8], pattern: &[u8]) -> bool {
    sender.len() == pattern.len() && folded_starts_with(sender, pattern)
}

/// Whether `sender`, its ASCII letters lowered, starts with `pattern`.
fn folded_starts_with(sender: &[u8], pattern: &[u8]) -> bool {
    sender.len() >= pattern.len()
        && sender
            .iter()
            .zip(pattern)
            .all(|(s, p)| s.to_ascii_lowercase() == *p)
}

/// A phone handle, as the stores keep it (normalised E.164 or a short code): digits with an
/// optional leading `+`, nothing else. Everything else is an e-mail handle.
pub fn is_phone_handle(s: &str) -> bool {
    is_phone_handle_bytes(s.as_bytes())
}

fn is_phone_handle_bytes(s: &[u8]) -> bool {
    let digits = s.strip_prefix(b"+").unwrap_or(s);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

/// A phone number is digits with an optional leading `+`, once separators are removed.
fn looks_like_phone(s: &str) -> bool {
    is_phone_handle(&strip_phone_separators(s))
}

fn strip_phone_separators(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, ' ' | '-' | '(' | ')' | '.' | '\u{a0}'))
        .collect()
}

/// Handles are stored as E.164 (`+12025550143`) or case-insensitive emails: drop phone
/// separators from numbers and lower-case ASCII (`SQLite` folds no other case).
fn normalize_handle(raw: &str) -> String {
    let s = raw.trim();
    let phone = strip_phone_separators(s);
    if is_phone_handle(&phone) {
        phone
    } else {
        s.to_ascii_lowercase()
    }
}

/// A mailbox named by a client: a path such as `INBOX` or `Clients/Acme`, optionally qualified
/// by an account as `account:path` (the account's name or its UUID).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MailboxRef {
    /// The account qualifier, if any.
    pub account: Option<String>,
    /// The mailbox path, `/`-separated.
    pub path: String,
}

impl MailboxRef {
    /// Parse `path` or `account:path`.
    pub fn parse(raw: &str) -> Result<MailboxRef, PatternError> {
        let s = raw.trim();
        let (account, path) = match s.split_once(':') {
            Some((a, p)) if !a.trim().is_empty() => (Some(a.trim().to_owned()), p.trim()),
            _ => (None, s),
        };
        let path = path.trim_matches('/');
        if path.is_empty() || path.len() > MAX_PATTERN_LEN || !is_printable(path) {
            return Err(err(
                raw,
                "a mailbox path such as `INBOX` or `Work:Clients/Acme`",
            ));
        }
        Ok(MailboxRef {
            account,
            path: path.to_owned(),
        })
    }
}

/// What a `mail.received` subscription lets through.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MailFilter {
    /// The client's senders (`from` and `domains`); empty = no client sender bound.
    pub senders: Vec<SenderPattern>,
    /// The user's allowlist; empty = none set.
    pub allow: Vec<SenderPattern>,
    /// The client's mailboxes; empty = any mailbox.
    pub mailboxes: Vec<MailboxRef>,
    /// The client's account (its address or name as Mail shows it, or its UUID); `None` = any.
    pub account: Option<String>,
    /// The categories the client asked for, within what the user allows; empty = any (a
    /// message with no category counts as Primary).
    pub categories: Vec<Category>,
}

/// What a `messages.received` subscription lets through.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessagesFilter {
    /// The client's senders (`from` and `domains`); empty = no client sender bound.
    pub senders: Vec<SenderPattern>,
    /// The user's allowlist; empty = none set.
    pub allow: Vec<SenderPattern>,
    /// Chats by identifier or guid (case-insensitive), never by display name; empty = any chat.
    pub chats: Vec<String>,
    /// The client's service; `None` = any.
    pub service: Option<Service>,
    /// As [`MailFilter::categories`].
    pub categories: Vec<Category>,
}

impl MailFilter {
    /// Whether a scan tests senders: the client's or the allowlist (see
    /// `stores::read::fill_by_senders`).
    pub(crate) fn tests_senders(&self) -> bool {
        !(self.senders.is_empty() && self.allow.is_empty())
    }
}

impl MessagesFilter {
    /// Whether a scan tests senders: the client's or the allowlist (see
    /// `stores::read::fill_by_senders`).
    pub(crate) fn tests_senders(&self) -> bool {
        !(self.senders.is_empty() && self.allow.is_empty())
    }
}

/// A Messages service, as chat.db spells it in `message.service` and `chat.service_name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Service {
    /// `iMessage`.
    IMessage,
    /// `SMS`.
    Sms,
    /// `RCS`.
    Rcs,
}

impl Service {
    /// Every service, in schema order.
    pub const ALL: [Service; 3] = [Service::IMessage, Service::Sms, Service::Rcs];

    /// The name chat.db stores and the `service` argument takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Service::IMessage => "iMessage",
            Service::Sms => "SMS",
            Service::Rcs => "RCS",
        }
    }

    /// The service called `name`, ignoring ASCII case (`imessage`, `sms`).
    pub fn parse(name: &str) -> Option<Service> {
        Service::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(name.trim()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_is_capped_like_every_other_pattern() {
        let at_cap = format!("{}*", "a".repeat(MAX_PATTERN_LEN));
        assert!(SenderPattern::parse_allow(&at_cap).is_ok());
        let over = format!("{}*", "a".repeat(MAX_PATTERN_LEN + 1));
        assert!(SenderPattern::parse_allow(&over).is_err());
    }

    #[test]
    fn allow_entries_parse_by_shape() {
        use SenderPattern::*;
        assert_eq!(
            SenderPattern::parse_allow("Ana@Example.com"),
            Ok(Exact("ana@example.com".into()))
        );
        assert_eq!(
            SenderPattern::parse_allow("example.org"),
            Ok(Domain("example.org".into()))
        );
        assert_eq!(
            SenderPattern::parse_allow("@eu.example.com"),
            Ok(Domain("eu.example.com".into()))
        );
        assert_eq!(
            SenderPattern::parse_allow("+1 (202) 555-0143"),
            Ok(Exact("+12025550143".into()))
        );
        assert_eq!(
            SenderPattern::parse_allow("+1 202 555 01*"),
            Ok(Prefix("+120255501".into()))
        );
        assert!(SenderPattern::parse_allow("everyone").is_err());
        assert!(SenderPattern::parse_allow("*").is_err());
        assert!(SenderPattern::parse_allow("a*b*").is_err());
    }

    #[test]
    fn an_allow_entry_reads_back_as_itself_from_its_saved_form() {
        // Found by the settings fuzz target: `@1.2` was a domain, saved as `1.2`, which reads
        // back as the phone number 12. No top-level domain is all digits, so it is refused.
        for raw in ["@1.2", "10.0.0.1", "@example.123"] {
            assert!(
                SenderPattern::parse_domain(raw).is_err(),
                "{raw} is a domain"
            );
            assert!(!matches!(
                SenderPattern::parse_allow(raw),
                Ok(SenderPattern::Domain(_))
            ));
        }
        for raw in [
            "Ana@Example.com",
            "@eu.example.com",
            "example.org.",
            "1password.com",
            "+1 (202) 555-0143",
            "+1 202 555 01*",
            "a@b*",
        ] {
            let entry = SenderPattern::parse_allow(raw).unwrap();
            assert_eq!(
                SenderPattern::parse_allow(&entry.to_string()),
                Ok(entry.clone()),
                "{raw}"
            );
        }
    }

    #[test]
    fn domains_match_subdomains_but_not_lookalikes() {
        let d = SenderPattern::parse_domain("example.com").unwrap();
        assert!(d.matches("a@example.com"));
        assert!(d.matches("b@EU.example.com"));
        assert!(!d.matches("c@notexample.com"));
        assert!(!d.matches("d@example.com.evil.test"));
    }

    #[test]
    fn matching_folds_case_as_a_lowered_copy_would() {
        // What `matches` did when it lowered a copy of the sender first.
        fn lowered(p: &SenderPattern, sender: &str) -> bool {
            let s = sender.to_ascii_lowercase();
            match p {
                SenderPattern::Exact(e) => s == *e,
                SenderPattern::Domain(d) => s.char_indices().any(|(i, c)| {
                    matches!(c, '@' | '.') && s[..=i].contains('@') && s[i + 1..] == *d
                }),
                SenderPattern::Prefix(x) if is_phone_handle(x) => {
                    is_phone_handle(&s) && s.starts_with(x.as_str())
                }
                SenderPattern::Prefix(x) => s.contains('@') && s.starts_with(x.as_str()),
                SenderPattern::Nobody => false,
            }
        }
        let patterns = [
            SenderPattern::Exact("ana@example.com".into()),
            SenderPattern::Exact("Ana@example.com".into()),
            SenderPattern::Exact("+12025550143".into()),
            SenderPattern::Domain("example.com".into()),
            SenderPattern::Domain("ä.example".into()),
            SenderPattern::Prefix("+120255501".into()),
            SenderPattern::Prefix("ana".into()),
            SenderPattern::Prefix("Ana".into()),
        ];
        let senders = [
            "ana@example.com",
            "ANA@EXAMPLE.COM",
            "Ana@Example.Com.",
            "ana@sub.example.com",
            "ana@notexample.com",
            "a.b@example.com",
            "example.com",
            "@example.com",
            "ana@example.com.evil.test",
            "ana@Ä.example",
            "ana@ä.example",
            "+12025550143",
            "+12025550143@evil.test",
            "+1202555014",
            "anaïs@example.com",
            "",
            "@",
        ];
        for p in &patterns {
            for sender in senders {
                assert_eq!(p.matches(sender), lowered(p, sender), "{p:?} on {sender:?}");
            }
        }
    }

    #[test]
    fn mailbox_refs_take_an_optional_account() {
        assert_eq!(
            MailboxRef::parse("Work:Clients/Acme"),
            Ok(MailboxRef {
                account: Some("Work".into()),
                path: "Clients/Acme".into()
            })
        );
        assert_eq!(
            MailboxRef::parse("INBOX"),
            Ok(MailboxRef {
                account: None,
                path: "INBOX".into()
            })
        );
        assert!(MailboxRef::parse("  ").is_err());
    }

    #[test]
    fn nobody_matches_no_sender_and_is_no_entry() {
        for sender in ["ana@example.com", "+12025550143", "56249", "", "(nobody)"] {
            assert!(!SenderPattern::Nobody.matches(sender), "{sender}");
        }
        assert!(SenderPattern::parse_allow(&SenderPattern::Nobody.to_string()).is_err());
    }
}
