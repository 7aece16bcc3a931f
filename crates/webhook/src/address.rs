//! The address rule: which resolved addresses a delivery to an origin may connect to.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::origin::{Host, Origin};

/// A resolved address a delivery will not connect to, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub ip: IpAddr,
    /// The address's class with its article, e.g. "a loopback address".
    pub class: &'static str,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.ip, self.class)
    }
}

/// Whether a delivery to `origin` may connect to `ip` (one of its host's addresses):
/// - an IP-literal host: only that address, the one the user named;
/// - `localhost`: loopback addresses only;
/// - any other name: globally routable addresses only, so a public name the user approved
///   cannot be pointed by its DNS at this machine, the LAN or a cloud metadata service.
pub fn refusal(origin: &Origin, ip: IpAddr) -> Option<Refusal> {
    match origin.host() {
        Host::Ip(named) if *named == ip => None,
        Host::Ip(_) => Some(Refusal {
            ip,
            class: "not the address the destination names",
        }),
        Host::Name(name) if name == "localhost" => match special_class(ip) {
            Some("a loopback address") => None,
            Some(class) => Some(Refusal { ip, class }),
            None => Some(Refusal {
                ip,
                class: "a public address, not loopback as localhost must be",
            }),
        },
        Host::Name(_) => special_class(ip).map(|class| Refusal { ip, class }),
    }
}

/// The class of an address that is not globally routable, or `None` for one that is.
/// IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are judged as the IPv4 address they carry.
pub fn special_class(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_class(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4_class(v4),
            None => v6_class(v6),
        },
    }
}

fn v4_class(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => "a cloud metadata address",
        _ if ip.is_unspecified() => "an unspecified address",
        _ if ip.is_broadcast() => "a broadcast address",
        (0, _, _) => "a this-network address (0.0.0.0/8)",
        (127, _, _) => "a loopback address",
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => "a private address",
        (100, 64..=127, _) => "a shared (CGNAT) address",
        (169, 254, _) => "a link-local address",
        (224..=239, _, _) => "a multicast address",
        // Reserved (240/4), IETF protocol assignments, documentation and benchmarking.
        (240..=255, _, _)
        | (192, 0, 0 | 2)
        | (198, 51, 100)
        | (203, 0, 113)
        | (198, 18 | 19, _) => "a reserved address",
        _ => return None,
    })
}

fn v6_class(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    Some(match segments[0] {
        _ if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) => "a cloud metadata address",
        _ if ip.is_unspecified() => "an unspecified address",
        _ if ip.is_loopback() => "a loopback address",
        0xfc00..=0xfdff => "a unique-local address",
        0xfe80..=0xfebf => "a link-local address",
        // Site-local, deprecated but still private.
        0xfec0..=0xfeff => "a site-local address",
        0xff00..=0xffff => "a multicast address",
        0x2001 if segments[1] == 0x0db8 => "a reserved address",
        // The rest of ::/8 (IPv4-compatible and friends) and the discard prefix 100::/64.
        0x0000..=0x00ff => "a reserved address",
        0x0100 if segments[1..4] == [0, 0, 0] => "a reserved address",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn class(text: &str) -> Option<&'static str> {
        special_class(ip(text))
    }

    #[test]
    fn ipv4_classes() {
        assert_eq!(class("127.0.0.1"), Some("a loopback address"));
        assert_eq!(class("127.255.0.9"), Some("a loopback address"));
        assert_eq!(class("10.1.2.3"), Some("a private address"));
        assert_eq!(class("172.16.0.1"), Some("a private address"));
        assert_eq!(class("172.31.255.255"), Some("a private address"));
        assert_eq!(class("172.32.0.1"), None);
        assert_eq!(class("172.15.0.1"), None);
        assert_eq!(class("192.168.1.1"), Some("a private address"));
        assert_eq!(class("100.64.0.1"), Some("a shared (CGNAT) address"));
        assert_eq!(class("100.127.255.255"), Some("a shared (CGNAT) address"));
        assert_eq!(class("100.128.0.1"), None);
        assert_eq!(class("169.254.10.10"), Some("a link-local address"));
        assert_eq!(class("169.254.169.254"), Some("a cloud metadata address"));
        assert_eq!(class("0.0.0.0"), Some("an unspecified address"));
        assert_eq!(class("0.1.2.3"), Some("a this-network address (0.0.0.0/8)"));
        assert_eq!(class("224.0.0.1"), Some("a multicast address"));
        assert_eq!(class("239.255.255.250"), Some("a multicast address"));
        assert_eq!(class("255.255.255.255"), Some("a broadcast address"));
        assert_eq!(class("240.0.0.1"), Some("a reserved address"));
        assert_eq!(class("192.0.2.1"), Some("a reserved address"));
        assert_eq!(class("198.18.0.1"), Some("a reserved address"));
        assert_eq!(class("93.184.216.34"), None);
        assert_eq!(class("8.8.8.8"), None);
    }

    #[test]
    fn ipv6_classes() {
        assert_eq!(class("::1"), Some("a loopback address"));
        assert_eq!(class("::"), Some("an unspecified address"));
        assert_eq!(class("fd00:ec2::254"), Some("a cloud metadata address"));
        assert_eq!(class("fd12:3456::1"), Some("a unique-local address"));
        assert_eq!(class("fc00::1"), Some("a unique-local address"));
        assert_eq!(class("fe80::1"), Some("a link-local address"));
        assert_eq!(class("fec0::1"), Some("a site-local address"));
        assert_eq!(class("ff02::1"), Some("a multicast address"));
        assert_eq!(class("2001:db8::1"), Some("a reserved address"));
        assert_eq!(class("100::1"), Some("a reserved address"));
        assert_eq!(class("2606:4700:4700::1111"), None);
        assert_eq!(class("2001:4860:4860::8888"), None);
    }

    #[test]
    fn ipv4_mapped_addresses_are_judged_as_ipv4() {
        assert_eq!(class("::ffff:127.0.0.1"), Some("a loopback address"));
        assert_eq!(class("::ffff:10.0.0.1"), Some("a private address"));
        assert_eq!(
            class("::ffff:169.254.169.254"),
            Some("a cloud metadata address")
        );
        assert_eq!(class("::ffff:8.8.8.8"), None);
    }

    fn origin(text: &str) -> Origin {
        Origin::parse_entry(text).unwrap()
    }

    #[test]
    fn a_public_name_may_reach_only_public_addresses() {
        let hooks = origin("https://hooks.example.com");
        assert_eq!(refusal(&hooks, ip("93.184.216.34")), None);
        let refused = refusal(&hooks, ip("127.0.0.1")).unwrap();
        assert_eq!(
            refused,
            Refusal {
                ip: ip("127.0.0.1"),
                class: "a loopback address"
            }
        );
        assert_eq!(refused.to_string(), "127.0.0.1, a loopback address");
        assert!(refusal(&hooks, ip("::ffff:192.168.0.10")).is_some());
        assert!(refusal(&hooks, ip("fd00:ec2::254")).is_some());
    }

    #[test]
    fn localhost_may_reach_only_loopback() {
        let local = origin("http://localhost:8787");
        assert_eq!(refusal(&local, ip("127.0.0.1")), None);
        assert_eq!(refusal(&local, ip("::1")), None);
        assert_eq!(
            refusal(&local, ip("192.168.1.5")).unwrap().class,
            "a private address"
        );
        assert!(refusal(&local, ip("93.184.216.34")).is_some());
    }

    #[test]
    fn an_ip_literal_reaches_exactly_itself() {
        let private = origin("https://10.0.0.5:8443");
        assert_eq!(refusal(&private, ip("10.0.0.5")), None);
        assert!(refusal(&private, ip("10.0.0.6")).is_some());
        let loopback = origin("http://127.0.0.1:8787");
        assert_eq!(refusal(&loopback, ip("127.0.0.1")), None);
    }
}
