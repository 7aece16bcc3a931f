//! Field names the code builds or looks up by name (the typed payloads name theirs in
//! [`crate::payloads`]).

/// What a result is: [`COMPLETE`] for every result of the events extension.
pub const RESULT_TYPE: &str = "resultType";
/// The [`RESULT_TYPE`] of a finished result.
pub const COMPLETE: &str = "complete";
/// The literal of [`SUPPORTED_VERSIONS`], for [`SUPPORTED_VERSIONS_KEY`].
macro_rules! supported_versions {
    () => {
        "supportedVersions"
    };
}

/// Only a `server/discover` result has it: the revisions the server serves.
pub const SUPPORTED_VERSIONS: &str = supported_versions!();
/// [`SUPPORTED_VERSIONS`] as a key in JSON text, quoted: what finds a `server/discover`
/// result among frames without parsing each.
pub const SUPPORTED_VERSIONS_KEY: &str = concat!("\"", supported_versions!(), "\"");
/// The revision in an `initialize` request and its result.
pub const PROTOCOL_VERSION: &str = "protocolVersion";
/// The client's name and version in an `initialize` request.
pub const CLIENT_INFO: &str = "clientInfo";
/// The server's name and version in an `initialize` result.
pub const SERVER_INFO: &str = "serverInfo";
/// The instructions for the model in an `initialize` result.
pub const INSTRUCTIONS: &str = "instructions";

/// The descriptors in an `events/list` result.
pub const EVENTS: &str = "events";

/// A listen's filter, in its params and in its acknowledgement.
pub const NOTIFICATIONS: &str = "notifications";
/// The listen filter's opt-in to `notifications/events/list_changed`.
pub const EVENTS_LIST_CHANGED: &str = "eventsListChanged";
/// The listen filter's opt-in to `notifications/tools/list_changed`.
pub const TOOLS_LIST_CHANGED: &str = "toolsListChanged";

/// The cancelled request's id in `notifications/cancelled`.
pub const REQUEST_ID: &str = "requestId";
