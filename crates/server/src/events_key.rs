//! The one outbound rewrite, shared by the socket's framer and the HTTP guard: a top-level
//! `capabilities.events` beside `capabilities.extensions["io.modelcontextprotocol/events"]` in
//! `server/discover`'s answer.
//!
//! Clients written against the Events extension's earlier draft (`@ai-sdk/mcp` among them)
//! look only for `capabilities.events` and report "Server does not support events" without
//! asking. rmcp's typed `ServerCapabilities` has no room for an unknown key,
//! so the answer is patched as JSON on its way out. Only `server/discover` gets it: a legacy
//! `initialize` is not offered Events at all (docs/decisions/server.md). A leaf, so neither
//! transport depends on the other for it.

use serde_json::Value;
use tidings_protocol::capabilities::{CAPABILITIES, DRAFT_EVENTS, EVENTS_EXTENSION, EXTENSIONS};
use tidings_protocol::fields::{SUPPORTED_VERSIONS, SUPPORTED_VERSIONS_KEY};

/// A key only a `server/discover` result has; lines without it are passed on untouched,
/// unparsed.
const DISCOVER_MARK: &[u8] = SUPPORTED_VERSIONS_KEY.as_bytes();

/// Adds `capabilities.events` (a copy of the extension's settings) to a `server/discover`
/// result that declares the extension; true when it did.
pub fn add_events_key(result: &mut Value) -> bool {
    if result.get(SUPPORTED_VERSIONS).is_none() {
        return false;
    }
    let Some(capabilities) = result.get_mut(CAPABILITIES).and_then(Value::as_object_mut) else {
        return false;
    };
    let Some(settings) = capabilities
        .get(EXTENSIONS)
        .and_then(|e| e.get(EVENTS_EXTENSION))
        .cloned()
    else {
        return false;
    };
    capabilities.insert(DRAFT_EVENTS.to_owned(), settings);
    true
}

/// One JSON-RPC message as bytes (a line of rmcp's output, an HTTP body): the same message
/// with the key added when it answers `server/discover`, else `None` (leave it as it is).
pub fn rewrite(message: &[u8]) -> Option<Vec<u8>> {
    memchr::memmem::find(message, DISCOVER_MARK)?;
    let mut value: Value = serde_json::from_slice(message).ok()?;
    if !add_events_key(value.get_mut("result")?) {
        return None;
    }
    let mut out = serde_json::to_vec(&value).ok()?;
    if message.ends_with(b"\n") {
        out.push(b'\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_discover_answer_gets_both_keys() {
        let line = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"extensions": {EVENTS_EXTENSION: {"listChanged": true}}, "tools": {}}}})
        .to_string()
            + "\n";
        let out = rewrite(line.as_bytes()).expect("a discover answer is rewritten");
        assert!(out.ends_with(b"\n"));
        let value: Value = serde_json::from_slice(&out).unwrap();
        let caps = &value["result"]["capabilities"];
        assert_eq!(caps["events"], json!({"listChanged": true}));
        assert_eq!(
            caps["extensions"][EVENTS_EXTENSION],
            json!({"listChanged": true})
        );
        assert_eq!(value["id"], 1);
    }

    #[test]
    fn every_other_message_is_left_alone() {
        for message in [
            // An initialize answer: no Events there, so no key.
            json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}}}),
            // A discover answer without the extension.
            json!({"jsonrpc": "2.0", "id": 2, "result": {"supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}}}}),
            // A notification that merely mentions the key in a string.
            json!({"jsonrpc": "2.0", "method": "x", "params": {"s": "\"supportedVersions\""}}),
        ] {
            assert_eq!(rewrite(message.to_string().as_bytes()), None, "{message}");
        }
        assert_eq!(rewrite(b"not json \"supportedVersions\""), None);
    }
}
