//! What a server says about itself: its name, the extension identifiers, and the capability
//! keys the code builds or looks for.

/// The name the daemon and the channel announce in `serverInfo`.
pub const SERVER_NAME: &str = "tidings";

/// The events extension's identifier under `capabilities.extensions`.
pub const EVENTS_EXTENSION: &str = "io.modelcontextprotocol/events";
/// The top-level `capabilities` key of the events extension's earlier draft, which some
/// clients (`@ai-sdk/mcp` among them) still look for instead of the extension.
pub const DRAFT_EVENTS: &str = "events";
/// Claude Code's channel capability, under `capabilities.experimental`.
pub const CLAUDE_CHANNEL: &str = "claude/channel";

/// `capabilities` in a `server/discover` or `initialize` result.
pub const CAPABILITIES: &str = "capabilities";
/// The extensions, by identifier, under `capabilities`.
pub const EXTENSIONS: &str = "extensions";
/// Capabilities outside the protocol, under `capabilities`.
pub const EXPERIMENTAL: &str = "experimental";
/// The tools capability, under `capabilities`.
pub const TOOLS: &str = "tools";
/// A list capability's (or extension's) promise of `list_changed` notifications.
pub const LIST_CHANGED: &str = "listChanged";
