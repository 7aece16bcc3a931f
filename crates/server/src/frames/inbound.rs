//! What the framer does with each inbound line: forward it to rmcp (renaming
//! `subscriptions/listen`), or answer it itself when rmcp would answer badly or not at all:
//! a parse error (-32700; rmcp drops it), `params` that are not an object (-32602 with the
//! request's id; rmcp answers -32600 without one), a second `events/stream` under a live
//! stream's id (see `duplicate_stream_id`), and a line over the limit (-32600, with the id
//! found in its head when there is one).

use rmcp::ErrorData;
use rmcp::model::{ErrorCode, RequestId};
use serde_json::{Map, Value, json};
use tidings_core::request::json_kind;

use super::human;
use crate::events::errors::duplicate_stream_id;
use crate::events::listen::LISTEN_ALIAS;

/// What to do with one inbound line.
#[derive(Debug, PartialEq)]
pub enum Inbound {
    /// Pass it to rmcp (possibly rewritten).
    Forward(Vec<u8>),
    /// Answer the client directly; rmcp never sees the line.
    Reply(Vec<u8>),
    /// A blank line: ignore it.
    Skip,
}

/// Classify one line. `live` says whether a request id is a live stream's on this connection.
pub(super) fn classify(line: &[u8], live: impl Fn(&RequestId) -> bool) -> Inbound {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Inbound::Skip;
    }
    let mut m = match serde_json::from_slice::<Value>(line) {
        // serde_json's message gives a position, never the text.
        Err(e) => {
            let error = ErrorData::new(ErrorCode::PARSE_ERROR, format!("parse error: {e}"), None);
            return Inbound::Reply(error_frame(Value::Null, &error));
        }
        Ok(Value::Object(m)) => m,
        Ok(_) => return Inbound::Forward(line.to_vec()),
    };
    if let Some(reply) = refuse_request(&m, live) {
        return Inbound::Reply(reply);
    }
    if m.get("method").and_then(Value::as_str) == Some("subscriptions/listen") {
        m.insert("method".into(), Value::String(LISTEN_ALIAS.into()));
        return match serde_json::to_vec(&m) {
            Ok(bytes) => Inbound::Forward(bytes),
            Err(e) => Inbound::Reply(error_frame(
                Value::Null,
                &ErrorData::internal_error(format!("internal error: {e}"), None),
            )),
        };
    }
    Inbound::Forward(line.to_vec())
}

/// The answer to a request (a `method` and an `id`) that must not reach rmcp, if any.
fn refuse_request(m: &Map<String, Value>, live: impl Fn(&RequestId) -> bool) -> Option<Vec<u8>> {
    let method = m.get("method")?.as_str()?;
    let id = m.get("id").filter(|id| id.is_number() || id.is_string())?;
    if let Some(params) = m.get("params")
        && !params.is_object()
        && !params.is_null()
    {
        let error = ErrorData::invalid_params(
            format!("params must be an object, got {}", json_kind(params)),
            Some(json!({"field": "params"})),
        );
        return Some(error_frame(id.clone(), &error));
    }
    // rmcp keeps one cancellation entry per request id: a duplicate that reached it would
    // replace the live stream's, leaving that stream deaf to `notifications/cancelled`. The
    // handler refuses duplicates too (two sent back to back both pass here before either
    // stream is live), but only this check keeps the live one cancellable.
    if method == "events/stream" {
        let request_id = serde_json::from_value::<RequestId>(id.clone()).ok()?;
        if live(&request_id) {
            return Some(error_frame(id.clone(), &duplicate_stream_id(&request_id)));
        }
    }
    None
}

/// -32600 for a line of `len` bytes over `max`, echoing the id found in its `head`.
pub(super) fn oversized(len: usize, max: usize, head: &[u8]) -> Vec<u8> {
    let error = ErrorData::new(
        ErrorCode::INVALID_REQUEST,
        format!(
            "frame of {len} bytes exceeds the {} limit ({max} bytes)",
            human(max)
        ),
        None,
    );
    error_frame(scan_id(head).unwrap_or(Value::Null), &error)
}

/// A JSON-RPC error answering `id` (null when unknown), as a line.
fn error_frame(id: Value, error: &ErrorData) -> Vec<u8> {
    let mut frame = json!({"jsonrpc": "2.0", "id": id, "error": error})
        .to_string()
        .into_bytes();
    frame.push(b'\n');
    frame
}

/// The top-level `"id"` of the JSON object that `head` begins (possibly cut short), when it is
/// a number or a string that ends within `head`. One pass, no allocation unless found: it
/// tracks nesting and strings, and only a key at depth 1 can be `id`.
pub(super) fn scan_id(head: &[u8]) -> Option<Value> {
    let mut i = skip_ws(head, 0);
    if head.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut depth = 1usize;
    let mut expect_key = true;
    while let Some(&b) = head.get(i) {
        match b {
            b'"' => {
                let end = string_end(head, i)?;
                if depth == 1 && expect_key {
                    let key = &head[i + 1..end - 1];
                    let colon = skip_ws(head, end);
                    if head.get(colon) != Some(&b':') {
                        return None;
                    }
                    let value = skip_ws(head, colon + 1);
                    if key == b"id" {
                        return id_value(head, value);
                    }
                    expect_key = false;
                    i = value;
                    continue;
                }
                i = end;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return None;
                }
            }
            b',' if depth == 1 => expect_key = true,
            _ => {}
        }
        i += 1;
    }
    None
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while s
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The index just past the string starting at `start` (a quote), if it ends within `s`.
fn string_end(s: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while let Some(&b) = s.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// A number or string id at `at`, if it ends within `s` (a number cut by the end of the
/// head might have had more digits).
fn id_value(s: &[u8], at: usize) -> Option<Value> {
    let text = match s.get(at)? {
        b'"' => &s[at..string_end(s, at)?],
        b'-' | b'0'..=b'9' => {
            let len = s[at..]
                .iter()
                .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))?;
            &s[at..at + len]
        }
        _ => return None,
    };
    let id: Value = serde_json::from_slice(text).ok()?;
    // The id echoed must be one the client could have meant: an integer or a string.
    (id.is_i64() || id.is_u64() || id.is_string()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &RequestId) -> bool {
        false
    }

    fn reply(inbound: Inbound) -> Value {
        let Inbound::Reply(frame) = inbound else {
            panic!("expected a reply, got {inbound:?}")
        };
        serde_json::from_slice(&frame).unwrap()
    }

    #[test]
    fn the_oversize_answer_names_size_and_limit_and_the_id() {
        let frame: Value =
            serde_json::from_slice(&oversized(1_048_577, 1_048_576, br#"{"id":3,"#)).unwrap();
        assert_eq!(frame["id"], 3);
        assert_eq!(frame["error"]["code"], -32600);
        assert_eq!(
            frame["error"]["message"],
            "frame of 1048577 bytes exceeds the 1 MiB limit (1048576 bytes)"
        );
        let frame: Value = serde_json::from_slice(&oversized(20, 10, b"xxxx")).unwrap();
        assert_eq!(frame["id"], Value::Null);
    }

    #[test]
    fn the_scan_finds_only_a_top_level_id() {
        let cases: [(&[u8], Option<Value>); 12] = [
            (br#"{"jsonrpc":"2.0","id":42,"method":"x""#, Some(json!(42))),
            (br#" { "id" : "a\"b" , "#, Some(json!("a\"b"))),
            (
                br#"{"method":"x","params":{"id":1},"id":-7}"#,
                Some(json!(-7)),
            ),
            (
                br#"{"params":{"id":1,"x":[{"id":2}]},"id":"top"}"#,
                Some(json!("top")),
            ),
            (br#"{"method":"id","id":9}"#, Some(json!(9))),
            (br#"{"params":{"id":1}}"#, None),
            (br#"{"id":12"#, None),
            (br#"{"id":"cut"#, None),
            (br#"{"id":null,"#, None),
            (br#"{"id":1.5,"#, None),
            (br#"[{"id":1}]"#, None),
            (br#"{"pad":"xxxxxxxxx"#, None),
        ];
        for (head, want) in cases {
            assert_eq!(scan_id(head), want, "{}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn garbage_gets_a_parse_error_and_blank_lines_are_ignored() {
        let v = reply(classify(b"{not json", none));
        assert_eq!(v["error"]["code"], -32700);
        assert_eq!(v["id"], Value::Null);
        assert_eq!(classify(b"  \r", none), Inbound::Skip);
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"events/list"}"#;
        assert_eq!(classify(line, none), Inbound::Forward(line.to_vec()));
    }

    #[test]
    fn params_that_are_not_an_object_are_answered_with_the_id() {
        for (params, got) in [
            ("\"x\"", "a string"),
            ("[1]", "an array"),
            ("3", "a number"),
        ] {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":"r","method":"events/list","params":{params}}}"#);
            let v = reply(classify(line.as_bytes(), none));
            assert_eq!(v["id"], "r");
            assert_eq!(v["error"]["code"], -32602);
            assert_eq!(v["error"]["data"], json!({"field": "params"}));
            assert_eq!(
                v["error"]["message"],
                format!("params must be an object, got {got}")
            );
        }
        // Null or absent params are rmcp's to judge; so is a notification (no id to answer).
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"events/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"events/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":"x"}"#,
        ] {
            assert!(
                matches!(classify(line.as_bytes(), none), Inbound::Forward(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn a_stream_under_a_live_id_is_refused_before_rmcp() {
        let live = |id: &RequestId| *id == RequestId::Number(5);
        let line = br#"{"jsonrpc":"2.0","id":5,"method":"events/stream","params":{}}"#;
        let v = reply(classify(line, live));
        assert_eq!(v["id"], 5);
        assert_eq!(v["error"]["code"], -32602);
        assert_eq!(v["error"]["data"], json!({"field": "id"}));
        // The same id as a string is another id; another method is not a stream.
        for line in [
            r#"{"jsonrpc":"2.0","id":"5","method":"events/stream","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"events/list","params":{}}"#,
        ] {
            assert!(
                matches!(classify(line.as_bytes(), live), Inbound::Forward(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn listen_is_renamed_to_the_alias() {
        let Inbound::Forward(bytes) = classify(
            br#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}"#,
            none,
        ) else {
            panic!()
        };
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["method"], LISTEN_ALIAS);
        assert_eq!(v["id"], 1);
    }
}
