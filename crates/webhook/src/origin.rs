//! Origins (the user's allow-list entries) and callback URLs: parsed, checked and normalised.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The longest callback URL accepted, in bytes.
pub const MAX_URL_LEN: usize = 2048;

/// A destination's host: a lower-cased DNS name or an IP literal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Host {
    Name(String),
    Ip(IpAddr),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(name) => f.write_str(name),
            Host::Ip(IpAddr::V4(ip)) => write!(f, "{ip}"),
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
        }
    }
}

/// Scheme, host and port: what an allow-list entry names and a callback URL must match.
/// Two spellings of one origin (`HTTPS://Hooks.Example.com:443/`) are equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin {
    https: bool,
    host: Host,
    port: u16,
}

impl Origin {
    /// Reads an allow-list entry: `scheme://host[:port]`, a trailing `/` at most. `https` may
    /// name any host; `http` only this machine, where nothing crosses a network in clear.
    pub fn parse_entry(text: &str) -> Result<Origin, OriginError> {
        let parts = split(text.trim()).map_err(OriginError::Url)?;
        if parts.query {
            return Err(OriginError::HasQuery);
        }
        if !(parts.path.is_empty() || parts.path == "/") {
            return Err(OriginError::HasPath {
                origin: parts.origin.to_string(),
            });
        }
        if !parts.origin.https && !parts.origin.is_loopback() {
            return Err(OriginError::PlainHttp {
                host: parts.origin.host.to_string(),
            });
        }
        Ok(parts.origin)
    }

    /// Whether the host is this machine: `localhost`, 127.0.0.0/8 or `::1`.
    pub fn is_loopback(&self) -> bool {
        match &self.host {
            Host::Name(name) => name == "localhost",
            Host::Ip(ip) => ip.is_loopback(),
        }
    }

    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The port, the scheme's default when none was written.
    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn is_https(&self) -> bool {
        self.https
    }

    fn default_port(&self) -> u16 {
        if self.https { 443 } else { 80 }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}", self.host)?;
        if self.port != self.default_port() {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

/// Why an allow-list entry was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginError {
    #[error("{0}")]
    Url(UrlError),
    #[error("an allowed destination is an origin with no path: write {origin}")]
    HasPath { origin: String },
    #[error("an allowed destination is an origin with no query: write scheme://host[:port]")]
    HasQuery,
    #[error(
        "http:// is allowed only for this machine (localhost, 127.0.0.1, [::1]); write https://{host} for {host}"
    )]
    PlainHttp { host: String },
}

/// Why a callback URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("a callback URL is at most {MAX_URL_LEN} bytes; this one is {0}")]
    TooLong(usize),
    #[error(
        "a callback URL is plain ASCII with no spaces: percent-encode the path and write an international host name as punycode (xn--)"
    )]
    NotAscii,
    #[error("a callback URL starts with https:// (or http:// for this machine)")]
    NoScheme,
    #[error("a callback URL's scheme is https or http, not {0}")]
    Scheme(String),
    #[error("a callback URL names a host: https://host[:port]/path")]
    NoHost,
    #[error("a callback URL carries no user name or password (nothing before @ in the host)")]
    Userinfo,
    #[error("a callback URL has no #fragment: remove it")]
    Fragment,
    #[error("a callback URL's port is a number from 1 to 65535")]
    BadPort,
    #[error(
        "a callback URL's IPv6 host is written in brackets, without a zone: https://[2001:db8::1]/"
    )]
    BadIpv6,
    #[error("an IPv4 host is written as four decimal numbers (127.0.0.1)")]
    BadIpv4,
    #[error("a callback URL's host name is letters, digits, '-' and '.' between non-empty labels")]
    BadHostName,
    #[error("'{0}' is not allowed in a callback URL's path or query: percent-encode it")]
    BadPathChar(char),
}

/// A URL deliveries are sent to. Parsing checks its shape only: whether its origin is
/// allowed is the caller's question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackUrl {
    origin: Origin,
    /// The normalised text: origin as [`Origin`] shows it, then the path (`/` when empty)
    /// and query as written.
    text: String,
    /// Where the path starts in `text`.
    path_at: usize,
}

impl CallbackUrl {
    pub fn parse(text: &str) -> Result<CallbackUrl, UrlError> {
        if text.len() > MAX_URL_LEN {
            return Err(UrlError::TooLong(text.len()));
        }
        let parts = split(text)?;
        let origin_text = parts.origin.to_string();
        let path = if parts.path.is_empty() {
            "/"
        } else {
            parts.path
        };
        Ok(CallbackUrl {
            path_at: origin_text.len(),
            text: format!("{origin_text}{path}"),
            origin: parts.origin,
        })
    }

    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The normalised URL: scheme and host lower-cased, the default port left out.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The request target: the path and query, never empty.
    pub fn path_and_query(&self) -> &str {
        &self.text[self.path_at..]
    }
}

impl fmt::Display for CallbackUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

struct Parts<'a> {
    origin: Origin,
    /// From the first `/` or `?` after the host to the end (may be empty).
    path: &'a str,
    query: bool,
}

fn split(text: &str) -> Result<Parts<'_>, UrlError> {
    if !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(UrlError::NotAscii);
    }
    let (scheme, rest) = text.split_once("://").ok_or(UrlError::NoScheme)?;
    let https = match scheme.to_ascii_lowercase().as_str() {
        "https" => true,
        "http" => false,
        "" => return Err(UrlError::NoScheme),
        other => return Err(UrlError::Scheme(other.to_owned())),
    };
    if rest.contains('#') {
        return Err(UrlError::Fragment);
    }
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.contains('@') {
        return Err(UrlError::Userinfo);
    }
    if let Some(bad) = path.chars().find(|c| !is_path_char(*c)) {
        return Err(UrlError::BadPathChar(bad));
    }
    let (host, port) = split_host_port(authority)?;
    let port = match port {
        None => {
            if https {
                443
            } else {
                80
            }
        }
        Some(digits) => parse_port(digits)?,
    };
    Ok(Parts {
        origin: Origin { https, host, port },
        path,
        query: path.contains('?'),
    })
}

fn split_host_port(authority: &str) -> Result<(Host, Option<&str>), UrlError> {
    if authority.is_empty() {
        return Err(UrlError::NoHost);
    }
    if let Some(bracketed) = authority.strip_prefix('[') {
        let (inside, after) = bracketed.split_once(']').ok_or(UrlError::BadIpv6)?;
        let ip: Ipv6Addr = inside.parse().map_err(|_| UrlError::BadIpv6)?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or(UrlError::BadPort)?),
        };
        return Ok((Host::Ip(IpAddr::V6(ip)), port));
    }
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    if port.is_some_and(|p| p.contains(':')) {
        // An IPv6 address outside brackets.
        return Err(UrlError::BadIpv6);
    }
    if host.is_empty() {
        return Err(UrlError::NoHost);
    }
    Ok((parse_host(host)?, port))
}

fn parse_host(host: &str) -> Result<Host, UrlError> {
    let host = host.to_ascii_lowercase();
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        return Ok(Host::Ip(IpAddr::V4(ip)));
    }
    // A last label of digits (or 0x…) reads as an IPv4 address to browsers and resolvers
    // (`127.1`, `0x7f.1`): refused, so what the user approved is what is dialled.
    let last = host.rsplit('.').next().unwrap_or_default();
    if !last.is_empty() && (last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x")) {
        return Err(UrlError::BadIpv4);
    }
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if host.len() > 253 || !host.split('.').all(label_ok) {
        return Err(UrlError::BadHostName);
    }
    Ok(Host::Name(host))
}

fn parse_port(digits: &str) -> Result<u16, UrlError> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(UrlError::BadPort);
    }
    match digits.parse::<u16>() {
        Ok(port) if port > 0 => Ok(port),
        _ => Err(UrlError::BadPort),
    }
}

/// RFC 3986's path and query characters: unreserved, sub-delims, `:@/?` and `%` escapes.
fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/?%".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> Origin {
        Origin::parse_entry(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn entries_are_normalised() {
        assert_eq!(
            entry("https://hooks.example.com").to_string(),
            "https://hooks.example.com"
        );
        assert_eq!(
            entry("HTTPS://Hooks.Example.COM:443/").to_string(),
            "https://hooks.example.com"
        );
        assert_eq!(
            entry("https://hooks.example.com:8443").to_string(),
            "https://hooks.example.com:8443"
        );
        assert_eq!(
            entry("http://127.0.0.1:8787").to_string(),
            "http://127.0.0.1:8787"
        );
        assert_eq!(entry("http://localhost:80").to_string(), "http://localhost");
        assert_eq!(entry("http://[::1]:8787/").to_string(), "http://[::1]:8787");
        assert_eq!(
            entry("https://[2001:DB8::1]").to_string(),
            "https://[2001:db8::1]"
        );
        assert_eq!(entry("https://a.example"), entry("https://A.example:443/"));
        let origin = entry("http://127.0.0.2:9");
        assert_eq!(origin.port(), 9);
        assert!(!origin.is_https());
        assert_eq!(origin.host(), &Host::Ip("127.0.0.2".parse().unwrap()));
        assert_eq!(entry("https://x.example").port(), 443);
        assert_eq!(entry("http://localhost").port(), 80);
    }

    #[test]
    fn plain_http_is_for_this_machine_only() {
        for ok in [
            "http://localhost:1",
            "http://127.0.0.1",
            "http://127.9.9.9:5",
            "http://[::1]",
        ] {
            assert!(entry(ok).is_loopback(), "{ok}");
        }
        for bad in [
            "http://hooks.example.com",
            "http://10.0.0.1",
            "http://[::ffff:127.0.0.1]",
            "http://localhost.example",
        ] {
            let error = Origin::parse_entry(bad).unwrap_err();
            assert!(
                matches!(error, OriginError::PlainHttp { .. }),
                "{bad}: {error:?}"
            );
        }
        let message = Origin::parse_entry("http://hooks.example.com")
            .unwrap_err()
            .to_string();
        assert!(message.contains("https://hooks.example.com"), "{message}");
        assert!(!entry("https://hooks.example.com").is_loopback());
    }

    #[test]
    fn entries_carry_no_path_query_user_or_fragment() {
        let error = Origin::parse_entry("https://hooks.example.com/hook").unwrap_err();
        assert_eq!(
            error,
            OriginError::HasPath {
                origin: "https://hooks.example.com".into()
            }
        );
        assert!(
            error
                .to_string()
                .contains("write https://hooks.example.com"),
            "{error}"
        );
        assert_eq!(
            Origin::parse_entry("https://h.example//").unwrap_err(),
            OriginError::HasPath {
                origin: "https://h.example".into()
            }
        );
        assert_eq!(
            Origin::parse_entry("https://h.example?a=1").unwrap_err(),
            OriginError::HasQuery
        );
        assert_eq!(
            Origin::parse_entry("https://u:p@h.example").unwrap_err(),
            OriginError::Url(UrlError::Userinfo)
        );
        assert_eq!(
            Origin::parse_entry("https://h.example/#x").unwrap_err(),
            OriginError::Url(UrlError::Fragment)
        );
        assert_eq!(
            Origin::parse_entry("h.example").unwrap_err(),
            OriginError::Url(UrlError::NoScheme)
        );
    }

    #[test]
    fn callback_urls_keep_path_and_query_and_normalise_the_origin() {
        let url = CallbackUrl::parse("HTTPS://Hooks.Example.com:443/a/B?x=1&y=%20").unwrap();
        assert_eq!(url.as_str(), "https://hooks.example.com/a/B?x=1&y=%20");
        assert_eq!(url.path_and_query(), "/a/B?x=1&y=%20");
        assert_eq!(url.origin(), &entry("https://hooks.example.com"));
        let bare = CallbackUrl::parse("http://127.0.0.1:8787").unwrap();
        assert_eq!(bare.as_str(), "http://127.0.0.1:8787/");
        assert_eq!(bare.path_and_query(), "/");
        let query_only = CallbackUrl::parse("https://h.example?k=v").unwrap();
        assert_eq!(query_only.as_str(), "https://h.example?k=v");
        assert_eq!(query_only.path_and_query(), "?k=v");
        let v6 = CallbackUrl::parse("http://[::1]:9/hook").unwrap();
        assert_eq!(v6.origin().host(), &Host::Ip("::1".parse().unwrap()));
        assert_eq!(v6.as_str(), "http://[::1]:9/hook");
        // Not checked against any list: a public plain-http URL parses.
        assert!(
            !CallbackUrl::parse("http://hooks.example.com/x")
                .unwrap()
                .origin()
                .is_https()
        );
    }

    #[test]
    fn callback_urls_refuse_what_is_not_a_plain_http_url() {
        let cases: &[(&str, UrlError)] = &[
            ("ftp://h.example/", UrlError::Scheme("ftp".into())),
            ("//h.example/", UrlError::NoScheme),
            ("h.example/x", UrlError::NoScheme),
            ("https:///x", UrlError::NoHost),
            ("https://:443/x", UrlError::NoHost),
            ("https://user@h.example/", UrlError::Userinfo),
            ("https://h.example/x#frag", UrlError::Fragment),
            ("https://h.example:0/", UrlError::BadPort),
            ("https://h.example:65536/", UrlError::BadPort),
            ("https://h.example:/", UrlError::BadPort),
            ("https://h.example:8a/", UrlError::BadPort),
            ("https://[fe80::1%25eth0]/", UrlError::BadIpv6),
            ("https://[::1/", UrlError::BadIpv6),
            ("https://::1/", UrlError::BadIpv6),
            ("https://127.1/", UrlError::BadIpv4),
            ("https://0x7f.0.0.1/", UrlError::BadIpv4),
            ("https://a..b/", UrlError::BadHostName),
            ("https://h.example./", UrlError::BadHostName),
            ("https://h*.example/", UrlError::BadHostName),
            ("https://h.example/a b", UrlError::NotAscii),
            ("https://bücher.example/", UrlError::NotAscii),
            ("https://h.example/a<b>", UrlError::BadPathChar('<')),
        ];
        for (text, expected) in cases {
            assert_eq!(CallbackUrl::parse(text).as_ref(), Err(expected), "{text}");
        }
        let long = format!("https://h.example/{}", "a".repeat(MAX_URL_LEN));
        assert_eq!(
            CallbackUrl::parse(&long),
            Err(UrlError::TooLong(long.len()))
        );
        let longest = format!("https://h.example/{}", "a".repeat(MAX_URL_LEN - 18));
        assert_eq!(longest.len(), MAX_URL_LEN);
        assert!(CallbackUrl::parse(&longest).is_ok());
        assert!(UrlError::TooLong(3000).to_string().contains("2048"));
    }

    #[test]
    fn origins_order_and_hash_as_values() {
        let mut list = vec![
            entry("https://b.example"),
            entry("https://a.example"),
            entry("HTTPS://A.example/"),
        ];
        list.sort();
        list.dedup();
        assert_eq!(
            list,
            vec![entry("https://a.example"), entry("https://b.example")]
        );
    }
}
