//! One occurrence on the wire: the `notifications/events/event` frame built around the
//! occurrence's JSON as it was encoded (once, for every stream that gets it), and the sender
//! read from an occurrence's envelope.

use serde::Deserialize;
use serde_json::Value;

use crate::{jsonrpc, meta, notifications};

/// An event frame up to its params' first member.
const HEAD: &str = concat!(
    r#"{"jsonrpc":""#,
    jsonrpc::version!(),
    r#"","method":""#,
    notifications::event!(),
    r#"","params":"#
);

/// After the occurrence's last member, up to the stream's id.
const META: &str = concat!(
    r#",""#,
    meta::key!(),
    r#"":{""#,
    meta::subscription_id!(),
    r#"":"#
);

/// After the stream's id: `_meta`, params and frame closed, and the line's end.
const TAIL: &str = "}}}\n";

/// Append to `out` the `notifications/events/event` frame of `occurrence` (an occurrence's
/// JSON object, copied as it is) with `_meta.subscriptionId` set to `subscription_id` (the
/// stream's request id as JSON), as one line; false, with nothing appended, when
/// `occurrence` is not an object.
///
/// The frame is built by hand rather than through serde so that the occurrence, encoded
/// once for every stream at a store's head, is copied and never parsed: one reservation and
/// five copies, three of them constants.
pub fn event_frame(occurrence: &[u8], subscription_id: &str, out: &mut Vec<u8>) -> bool {
    if occurrence.len() < 2 || occurrence.last() != Some(&b'}') {
        return false;
    }
    let members = &occurrence[..occurrence.len() - 1];
    out.reserve(HEAD.len() + members.len() + META.len() + subscription_id.len() + TAIL.len());
    out.extend_from_slice(HEAD.as_bytes());
    out.extend_from_slice(members);
    out.extend_from_slice(META.as_bytes());
    out.extend_from_slice(subscription_id.as_bytes());
    out.extend_from_slice(TAIL.as_bytes());
    true
}

/// The part of an occurrence's `data` that names its sender.
#[derive(Debug, Default, Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    from: Option<Party<'a>>,
}

/// `data.from`: a mail sender's `address` or a message sender's `handle`.
#[derive(Debug, Deserialize)]
struct Party<'a> {
    #[serde(borrow, default)]
    address: Option<&'a str>,
    #[serde(borrow, default)]
    handle: Option<&'a str>,
}

/// The sender of an occurrence's envelope `data`: `from.address` (mail) or `from.handle`
/// (messages); empty when it names neither.
pub fn sender(data: &Value) -> &str {
    Envelope::deserialize(data)
        .ok()
        .and_then(|e| e.from)
        .and_then(|from| from.address.or(from.handle))
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_frame_is_the_occurrence_with_the_streams_meta() {
        let occurrence = br#"{"eventId":"e","name":"mail.received","cursor":"c"}"#;
        let mut out = b"before\n".to_vec();
        assert!(event_frame(occurrence, "\"s-1\"", &mut out));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "before\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/events/event\",\"params\":\
             {\"eventId\":\"e\",\"name\":\"mail.received\",\"cursor\":\"c\",\"_meta\":\
             {\"io.modelcontextprotocol/subscriptionId\":\"s-1\"}}}\n"
        );
    }

    #[test]
    fn a_frame_parses_as_the_notification() {
        let mut out = Vec::new();
        assert!(event_frame(br#"{"eventId":"e"}"#, "7", &mut out));
        let frame: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(frame["jsonrpc"], jsonrpc::VERSION);
        assert_eq!(frame["method"], notifications::EVENT);
        assert_eq!(frame["params"]["eventId"], "e");
        assert_eq!(frame["params"][meta::KEY][meta::SUBSCRIPTION_ID], 7);
    }

    #[test]
    fn what_is_not_an_object_appends_nothing() {
        let mut out = Vec::new();
        for json in [&b""[..], b"}", b"[1]", b"\"x\""] {
            assert!(!event_frame(json, "1", &mut out), "{json:?}");
        }
        assert!(out.is_empty());
    }

    #[test]
    fn the_sender_is_the_address_or_the_handle() {
        let mail = json!({"from": {"address": "ana@example.com", "name": "Ana"}, "subject": "s"});
        assert_eq!(sender(&mail), "ana@example.com");
        let message = json!({"from": {"handle": "+12025550101", "service": "SMS"}});
        assert_eq!(sender(&message), "+12025550101");
        for neither in [
            json!({}),
            json!({"from": null}),
            json!(null),
            json!({"from": {}}),
        ] {
            assert_eq!(sender(&neither), "", "{neither}");
        }
    }
}
