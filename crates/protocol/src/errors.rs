//! JSON-RPC error codes (the standard ones, core 2026-07-28's, and the events extension's:
//! SEP-3415 numbering only), the values of `data.reason` and `data.kind`, and the `{code,
//! message, data}` object that error responses and the `error` and `terminated`
//! notifications carry.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The line is not JSON.
pub const PARSE_ERROR: i32 = -32700;
/// Not a JSON-RPC message this side can read (and refusals about no header's value).
pub const INVALID_REQUEST: i32 = -32600;
/// A method this side does not serve (or not on this revision).
pub const METHOD_NOT_FOUND: i32 = -32601;
/// The params are wrong; `data.field` names which.
pub const INVALID_PARAMS: i32 = -32602;
/// The server broke, or can no longer serve the request.
pub const INTERNAL_ERROR: i32 = -32603;
/// `HeaderMismatch` (core 2026-07-28): an HTTP header does not mirror the body.
pub const HEADER_MISMATCH: i32 = -32020;
/// `NotFound`: an unknown or disabled event type, or an unknown webhook subscription.
pub const NOT_FOUND: i32 = -32023;
/// `Forbidden`: the user's settings no longer allow the subscription, or the client was
/// revoked.
pub const FORBIDDEN: i32 = -32024;
/// `ResourceExhausted`: a stream cap or the webhook subscriptions' cap was reached.
pub const RESOURCE_EXHAUSTED: i32 = -32025;
/// `Unsupported`: a delivery mode a type does not offer.
pub const UNSUPPORTED: i32 = -32026;
/// `CallbackEndpointError`: a webhook's endpoint failed verification or could not be reached;
/// `data.reason` is one of the delivery-status categories (`connection_refused`, `timeout`,
/// `tls_error`, `http_4xx`, `http_5xx`, `challenge_failed`).
pub const CALLBACK_ENDPOINT_ERROR: i32 = -32027;

/// The keys of an error's `data` that more than one side reads.
pub mod data {
    /// The request field that is wrong.
    pub const FIELD: &str = "field";
    /// What was not found ([`super::kind`]).
    pub const KIND: &str = "kind";
    /// Why ([`super::reason`]).
    pub const REASON: &str = "reason";
}

/// Values of `data.kind` on a `NotFound`.
pub mod kind {
    /// An event type.
    pub const EVENT: &str = "event";
    /// A webhook subscription.
    pub const SUBSCRIPTION: &str = "subscription";
}

/// Values of `data.reason` (a store's failures name their own, in tidings-core).
pub mod reason {
    /// The type is turned off in the settings.
    pub const DISABLED: &str = "disabled";
    /// The type is hidden by a pause; `data.pausedUntilMs` says until when.
    pub const PAUSED: &str = "paused";
    /// The allowlist was removed and the subscription names no sender.
    pub const ALLOWLIST: &str = "allowlist";
    /// The HTTP token the stream was opened with was rotated.
    pub const TOKEN_ROTATED: &str = "token_rotated";
    /// The agent's own HTTP token the stream was opened with was revoked.
    pub const TOKEN_REVOKED: &str = "token_revoked";
    /// The user revoked the client in the app.
    pub const REVOKED: &str = "revoked";
    /// An event could not be encoded; the stream holds before it.
    pub const ENCODE_FAILED: &str = "encode_failed";
    /// The HTTP endpoint began stopping while the request was read.
    pub const ENDPOINT_STOPPING: &str = "endpoint_stopping";
    /// The user denied the agent (the program behind the connection) in Tidings.
    pub const AGENT_DENIED: &str = "agent_denied";
    /// The agent has no grant and no one answered (or could answer) whether it may have one.
    pub const AGENT_NOT_ALLOWED: &str = "agent_not_allowed";
    /// Too many agents with no grant wait for the user's answer at once.
    pub const AGENT_ASKS: &str = "agent_asks";
    /// A webhook's callback origin is not on the user's list of destinations.
    pub const DESTINATION_NOT_ALLOWED: &str = "destination_not_allowed";
    /// The user removed a webhook's destination from the list, or ended the subscription.
    pub const DESTINATION_REMOVED: &str = "destination_removed";
    /// A webhook subscription reached its `refreshBefore` without a refresh.
    pub const EXPIRED: &str = "expired";
    /// Webhook calls need a principal: the HTTP endpoint serves without a token.
    pub const UNAUTHENTICATED: &str = "unauthenticated";
}

/// The `{code, message, data}` of an error response, and the `error` member of
/// `notifications/events/error` and `…/terminated`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// One of the codes above (or another JSON-RPC code).
    pub code: i64,
    /// What went wrong, and what to do about it.
    pub message: String,
    /// Details: [`data::FIELD`], [`data::KIND`], [`data::REASON`] and the like.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_error_object_leaves_out_absent_data() {
        let bare = ErrorObject {
            code: NOT_FOUND.into(),
            message: "m".into(),
            data: None,
        };
        assert_eq!(
            serde_json::to_value(&bare).unwrap(),
            json!({"code": -32023, "message": "m"})
        );
        let with = ErrorObject {
            data: Some(json!({"kind": "event"})),
            ..bare
        };
        let back: ErrorObject =
            serde_json::from_value(serde_json::to_value(&with).unwrap()).unwrap();
        assert_eq!(back, with);
    }
}
