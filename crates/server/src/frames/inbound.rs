//! What the framer does with each inbound line: forward it to rmcp (renaming
//! `subscriptions/listen`) saying what it is, or answer it itself when rmcp would answer badly
//! or not at all: a parse error (-32700; rmcp drops it), a message rmcp cannot read (rmcp
//! answers -32600 without the id, even to a notification: here a request gets its id and what
//! is wrong, a notification or a response gets nothing), `params` that are not an object
//! (-32602 with the request's id), and a line over the limit (-32600, with the id found in its
//! head when there is one). A second stream under a live stream's id is refused by the reader
//! (`frames/mod.rs`), which owns the reservations.

use rmcp::ErrorData;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, JsonRpcMessage, RequestId};
use serde_json::{Map, Value, json};
use tidings_core::request::json_kind;
use tidings_protocol::errors::data;
use tidings_protocol::{jsonrpc, methods};

use super::human;
use crate::events::errors::duplicate_stream_id;
use crate::listen_alias::{LISTEN_ALIAS, rename_listen};

/// What to do with one inbound line.
#[derive(Debug, PartialEq)]
pub enum Inbound {
    /// Pass it to rmcp (possibly rewritten); `kind` says what the reader must track.
    Forward { line: Vec<u8>, kind: Kind },
    /// Answer the client directly; rmcp never sees the line.
    Reply(Vec<u8>),
    /// A blank line, or a notification or response rmcp cannot read (no reply is due): drop it.
    Skip,
}

/// What a forwarded line is, as far as the reader cares.
#[derive(Debug, PartialEq)]
pub enum Kind {
    /// A request; `opens_stream` when it is `events/stream` or `subscriptions/listen`, whose
    /// id must name one live stream.
    Request { id: RequestId, opens_stream: bool },
    /// A notification.
    Notification,
    /// A response to a request of ours.
    Response,
}

impl Kind {
    /// Notifications and responses: rmcp ends the connection on these before a lifecycle
    /// begins, so the reader holds them until then.
    pub(super) fn is_one_way(&self) -> bool {
        !matches!(self, Kind::Request { .. })
    }
}

/// Classify one line.
pub(super) fn classify(line: &[u8]) -> Inbound {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Inbound::Skip;
    }
    let mut m = match serde_json::from_slice::<Value>(line) {
        // serde_json's message gives a position, never the text.
        Err(e) => {
            let error = ErrorData::new(ErrorCode::PARSE_ERROR, format!("parse error: {e}"), None);
            return Inbound::Reply(error_frame(&Value::Null, &error));
        }
        Ok(Value::Object(m)) => m,
        Ok(other) => {
            let error = ErrorData::invalid_request(
                format!(
                    "a JSON-RPC message must be an object, got {}",
                    json_kind(&other)
                ),
                None,
            );
            return Inbound::Reply(error_frame(&Value::Null, &error));
        }
    };
    let mut bytes = None;
    if rename_listen(&mut m) {
        match serde_json::to_vec(&m) {
            Ok(renamed) => bytes = Some(renamed),
            Err(e) => {
                return Inbound::Reply(error_frame(
                    &Value::Null,
                    &ErrorData::internal_error(format!("internal error: {e}"), None),
                ));
            }
        }
    }
    let line = bytes.unwrap_or_else(|| line.to_vec());
    match shape(&m, &line) {
        Shape::Message(message) => {
            let kind = kind_of(&message, &m);
            Inbound::Forward { line, kind }
        }
        Shape::Ignore => Inbound::Skip,
        Shape::Refuse { id, error } => Inbound::Reply(error_frame(&id, &error)),
    }
}

/// A JSON-RPC object as rmcp will read it.
pub(crate) enum Shape {
    /// rmcp reads it as this message.
    Message(Box<ClientJsonRpcMessage>),
    /// A notification or a response that does not fit its schema: no answer is due.
    Ignore,
    /// A request to answer here with `error` for `id` (null when unusable): rmcp would answer
    /// it without its id, or mishandle it.
    Refuse { id: Value, error: ErrorData },
}

/// How rmcp will take the object `m`, whose bytes are `line`: what it cannot read it answers
/// with -32600 and no id, even a notification or a response, which get no answer at all
/// (JSON-RPC 2.0, section 5); `params` that are not an object it answers -32600 without the
/// id. Shared by the socket's framer and the HTTP guard.
pub(crate) fn shape(m: &Map<String, Value>, line: &[u8]) -> Shape {
    if let Some((id, error)) = refuse_request(m) {
        return Shape::Refuse { id, error };
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => Shape::Message(Box::new(message)),
        Err(e) => unreadable(m, &e),
    }
}

fn kind_of(message: &ClientJsonRpcMessage, m: &Map<String, Value>) -> Kind {
    match message {
        JsonRpcMessage::Request(request) => {
            let method = m.get("method").and_then(Value::as_str);
            Kind::Request {
                id: request.id.clone(),
                opens_stream: matches!(method, Some(methods::EVENTS_STREAM | LISTEN_ALIAS)),
            }
        }
        JsonRpcMessage::Notification(_) => Kind::Notification,
        JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => Kind::Response,
    }
}

/// The answer to a JSON object rmcp cannot read as a client message: nothing for a
/// notification or a response, else an error carrying the request's id when it has a usable
/// one (null otherwise), naming what is wrong.
fn unreadable(m: &Map<String, Value>, e: &serde_json::Error) -> Shape {
    let method = m.get("method");
    let is_response = method.is_none() && (m.contains_key("result") || m.contains_key("error"));
    let is_notification = method.is_some() && !m.contains_key("id");
    if is_response || is_notification {
        tracing::debug!("dropped a notification or response that does not fit its schema");
        return Shape::Ignore;
    }
    let id = m.get("id").filter(|id| is_usable_id(id));
    let error = if m.get("jsonrpc").and_then(Value::as_str) != Some(jsonrpc::VERSION) {
        ErrorData::invalid_request(
            format!("`jsonrpc` must be \"{}\"", jsonrpc::VERSION),
            Some(json!({data::FIELD: "jsonrpc"})),
        )
    } else if id.is_none() {
        ErrorData::invalid_request(
            "`id` must be a string or an integer",
            Some(json!({data::FIELD: "id"})),
        )
    } else if let Some(method) = method.and_then(Value::as_str) {
        ErrorData::invalid_params(
            format!("params do not fit `{method}`: {e}"),
            Some(json!({data::FIELD: "params"})),
        )
    } else {
        ErrorData::invalid_request(
            "a request needs a `method` string",
            Some(json!({data::FIELD: "method"})),
        )
    };
    Shape::Refuse {
        id: id.cloned().unwrap_or(Value::Null),
        error,
    }
}

/// An id the client could have meant and rmcp can carry: an integer or a string.
fn is_usable_id(id: &Value) -> bool {
    id.is_i64() || id.is_u64() || id.is_string()
}

/// The answer to a request (a `method` and an `id`) that must not reach rmcp, if any.
fn refuse_request(m: &Map<String, Value>) -> Option<(Value, ErrorData)> {
    m.get("method")?.as_str()?;
    let id = m.get("id").filter(|id| is_usable_id(id))?;
    if let Some(params) = m.get("params")
        && !params.is_object()
        && !params.is_null()
    {
        let error = ErrorData::invalid_params(
            format!("params must be an object, got {}", json_kind(params)),
            Some(json!({data::FIELD: "params"})),
        );
        return Some((id.clone(), error));
    }
    None
}

/// The answer to a second stream under a live stream's id.
pub(super) fn duplicate(id: &RequestId) -> Vec<u8> {
    error_frame(&id.clone().into_json_value(), &duplicate_stream_id(id))
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
    error_frame(&scan_id(head).unwrap_or(Value::Null), &error)
}

/// A JSON-RPC error answering `id` (null when unknown), as a line.
fn error_frame(id: &Value, error: &ErrorData) -> Vec<u8> {
    let mut frame = jsonrpc::error(id, error).to_string().into_bytes();
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
    is_usable_id(&id).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let v = reply(classify(b"{not json"));
        assert_eq!(v["error"]["code"], -32700);
        assert_eq!(v["id"], Value::Null);
        assert_eq!(classify(b"  \r"), Inbound::Skip);
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"events/list"}"#;
        assert_eq!(
            classify(line),
            Inbound::Forward {
                line: line.to_vec(),
                kind: Kind::Request {
                    id: RequestId::Number(1),
                    opens_stream: false
                }
            }
        );
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
            let v = reply(classify(line.as_bytes()));
            assert_eq!(v["id"], "r");
            assert_eq!(v["error"]["code"], -32602);
            assert_eq!(v["error"]["data"], json!({"field": "params"}));
            assert_eq!(
                v["error"]["message"],
                format!("params must be an object, got {got}")
            );
        }
        // Null or absent params are rmcp's to judge.
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"events/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"events/list"}"#,
        ] {
            assert!(
                matches!(classify(line.as_bytes()), Inbound::Forward { .. }),
                "{line}"
            );
        }
        // A notification has no id to answer: never a reply.
        let line = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":"x"}"#;
        assert_eq!(classify(line), Inbound::Skip);
    }

    #[test]
    fn what_rmcp_cannot_read_is_answered_with_the_id_or_not_at_all() {
        for (line, id, code, field) in [
            (r#"{"jsonrpc":"2.0","id":8}"#, json!(8), -32600, "method"),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":5}}"#,
                json!(7),
                -32602,
                "params",
            ),
            (
                r#"{"jsonrpc":"1.0","id":"v","method":"events/list"}"#,
                json!("v"),
                -32600,
                "jsonrpc",
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"events/list"}"#,
                Value::Null,
                -32600,
                "id",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"events/list"}"#,
                Value::Null,
                -32600,
                "id",
            ),
        ] {
            let v = reply(classify(line.as_bytes()));
            assert_eq!(v["id"], id, "{line}: {v}");
            assert_eq!(v["error"]["code"], code, "{line}: {v}");
            assert_eq!(v["error"]["data"]["field"], field, "{line}: {v}");
        }
        let v = reply(classify(b"[1,2]"));
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (Value::Null, json!(-32600))
        );
        // Responses and notifications that do not fit get no answer.
        for line in [
            r#"{"jsonrpc":"2.0","id":16,"error":5}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":5}"#,
        ] {
            assert_eq!(classify(line.as_bytes()), Inbound::Skip, "{line}");
        }
    }

    #[test]
    fn streams_and_one_way_messages_are_told_apart() {
        let kind = |line: &str| match classify(line.as_bytes()) {
            Inbound::Forward { kind, .. } => kind,
            other => panic!("{line}: {other:?}"),
        };
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":5,"method":"events/stream","params":{}}"#),
            Kind::Request {
                id: RequestId::Number(5),
                opens_stream: true
            }
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{}}"#),
            Kind::Request {
                id: RequestId::String("l".into()),
                opens_stream: true
            }
        );
        assert_eq!(
            kind(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#
            ),
            Kind::Notification
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Kind::Notification
        );
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Kind::Response
        );
    }

    #[test]
    fn listen_is_renamed_to_the_alias() {
        let Inbound::Forward { line: bytes, .. } =
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}"#)
        else {
            panic!()
        };
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["method"], LISTEN_ALIAS);
        assert_eq!(v["id"], 1);
    }
}
