//! The Streamable HTTP headers the endpoint's guard checks (lower case, as `http` names them).

use crate::methods;

/// The body's method, mirrored.
pub const MCP_METHOD: &str = "mcp-method";
/// The body's `params.name`, mirrored on the [`NAME_METHODS`].
pub const MCP_NAME: &str = "mcp-name";
/// The revision of a stateless request that sent no `_meta`.
pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// The methods whose `Mcp-Name` must equal `params.name`.
pub const NAME_METHODS: [&str; 4] = [
    methods::EVENTS_POLL,
    methods::EVENTS_STREAM,
    methods::EVENTS_SUBSCRIBE,
    methods::EVENTS_UNSUBSCRIBE,
];
