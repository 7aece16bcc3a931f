//! `server/discover`'s capabilities and `events/list`: the descriptors of the enabled types.

use rmcp::model::{
    CustomResult, ExtensionCapabilities, Implementation, ServerCapabilities, ServerConfig,
    ToolsCapability,
};
use serde_json::{Value, json};
use tidings_core::Settings;
use tidings_core::descriptor::enabled_descriptors_with;
use tidings_protocol::capabilities::{EVENTS_EXTENSION, LIST_CHANGED, SERVER_NAME};
use tidings_protocol::fields;

use super::wire::complete;

/// What `server/discover` advertises: the events extension with `listChanged`, the tools (the
/// pull tools, and in demo mode the conformance levers) with `listChanged`, and the
/// instructions for the model. A legacy `initialize` answers the same minus the extension
/// ([`without_events`]).
pub fn server_config() -> ServerConfig {
    let mut extensions = ExtensionCapabilities::new();
    let mut settings = serde_json::Map::new();
    settings.insert(LIST_CHANGED.into(), Value::Bool(true));
    extensions.insert(EVENTS_EXTENSION.into(), settings);
    let mut caps = ServerCapabilities::default();
    caps.extensions = Some(extensions);
    let mut tools = ToolsCapability::default();
    tools.list_changed = Some(true);
    caps.tools = Some(tools);
    ServerConfig::new(caps)
        .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
        .with_instructions(super::pull::INSTRUCTIONS)
}

/// `events/list`: one page, the enabled types only; Mail's known `accounts` are examples of
/// `mail.received`'s `account` argument. `webhook`: whether the caller has a principal a
/// webhook subscription can belong to; without one (the HTTP endpoint's `--no-auth`) no type
/// offers webhook delivery.
pub fn list(settings: &Settings, accounts: &[String], webhook: bool) -> CustomResult {
    let mut events = enabled_descriptors_with(settings, accounts);
    if !webhook {
        for e in &mut events {
            if let Some(serde_json::Value::Array(modes)) = e.get_mut("delivery") {
                modes.retain(|m| m != "webhook");
            }
        }
    }
    complete(json!({ fields::EVENTS: events }))
}

/// `config` without the events extension: what a legacy `initialize` answers. SEP-3415 defines
/// the extension on protocol 2026-07-28 only, and such a connection gets -32601 for
/// `events/*`, so advertising it there would promise what we refuse.
pub fn without_events(mut config: ServerConfig) -> ServerConfig {
    if let Some(extensions) = &mut config.capabilities.extensions {
        extensions.remove(EVENTS_EXTENSION);
        if extensions.is_empty() {
            config.capabilities.extensions = None;
        }
    }
    config
}

#[cfg(test)]
mod tests {
    use tidings_core::EventType;

    /// Core names the types it reads; the shim, which has no core, names them from the
    /// protocol crate: the two must agree.
    #[test]
    fn core_and_the_protocol_name_the_same_event_types() {
        let core = EventType::ALL.map(EventType::name);
        assert_eq!(core, tidings_protocol::event_types::ALL);
    }
}
