//! `_meta`: its keys, and the `_meta` every 2026-07-28 request carries (the revision, the
//! client's capabilities and its `clientInfo`), since no `initialize` handshake holds them.

use serde_json::{Map, Value, json};

use crate::versions;

/// The literal of [`KEY`], for frames built as one constant (`event.rs`).
macro_rules! key {
    () => {
        "_meta"
    };
}
pub(crate) use key;

/// The literal of [`SUBSCRIPTION_ID`], for frames built as one constant (`event.rs`).
macro_rules! subscription_id {
    () => {
        "io.modelcontextprotocol/subscriptionId"
    };
}
pub(crate) use subscription_id;

/// The member of params and results that holds the metadata below.
pub const KEY: &str = key!();

/// The revision a request declares.
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The client's capabilities, on each request.
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The client's name and version, on each request (the daemon shows it, and clamps a pull
/// tool's wait below that host's tool timeout).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The server's name and version, on each `complete` result.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// A stream's (or listen's) request id, on each of its notifications and its final result.
pub const SUBSCRIPTION_ID: &str = subscription_id!();
/// Marks `tidings-mcp --channel`'s streams, so the app lists them as `channel` rather than
/// `push`. A label only: it changes nothing about what the stream may receive.
pub const CHANNEL: &str = "dev.tidings/channel";

/// `{"name", "version"}`: a `clientInfo` or `serverInfo`.
pub fn implementation(name: &str, version: &str) -> Value {
    json!({"name": name, "version": version})
}

/// The `_meta` members a 2026-07-28 request must carry: [`versions::CURRENT`], no client
/// capabilities, and `client_info`.
pub fn request(client_info: Value) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(PROTOCOL_VERSION.into(), versions::CURRENT.into());
    meta.insert(CLIENT_CAPABILITIES.into(), json!({}));
    meta.insert(CLIENT_INFO.into(), client_info);
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_declares_the_revision_and_the_client() {
        let meta = Value::Object(request(implementation("tidings", "1.0")));
        assert_eq!(
            meta,
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "tidings", "version": "1.0"}
            })
        );
    }
}
