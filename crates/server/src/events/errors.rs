//! The JSON-RPC errors of the events extension (SEP-3415 numbering only, as docs/protocol.md's
//! "Errors" lists them), and the `{code, message, data}` object that `error` and `terminated`
//! notifications carry.

use std::path::Path;

use rmcp::ErrorData;
use rmcp::model::{ErrorCode, RequestId};
use serde_json::json;
use tidings_core::{EventType, RequestError, StoreError};
use tidings_protocol::errors::{self as codes, ErrorObject, data, kind, reason};
use tidings_protocol::versions;

use crate::clients::{Refusal, Revocation};
use crate::daemon::Daemon;

/// `NotFound`: an unknown or disabled event type, or an unknown webhook subscription.
pub const NOT_FOUND: ErrorCode = ErrorCode(codes::NOT_FOUND);
/// Forbidden: the user's settings no longer allow the subscription.
pub const FORBIDDEN: ErrorCode = ErrorCode(codes::FORBIDDEN);
/// `ResourceExhausted`: a stream cap was reached.
pub const RESOURCE_EXHAUSTED: ErrorCode = ErrorCode(codes::RESOURCE_EXHAUSTED);

/// A core request error as the wire error: `InvalidParams` names the field, `NotFound` says
/// `kind: "event"` (and `reason: "disabled"` with how to turn it on when the type is only
/// off; `settings_file` is where), a store failure carries `data.reason`.
pub fn request_error(e: RequestError, settings_file: &Path) -> ErrorData {
    match e {
        RequestError::InvalidParams { field, message } => {
            ErrorData::invalid_params(message, Some(json!({ data::FIELD: field })))
        }
        RequestError::NotFound { name } => not_found_event(&name),
        RequestError::Disabled { event_type } => type_disabled(event_type, settings_file),
        RequestError::Store(e) => store_error(&e),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// [`request_error`] as the daemon answers now: a type configured on but hidden by a pause
/// (docs/decisions/app.md) says it is paused and until when, not how to turn it on.
pub fn daemon_request_error(e: RequestError, daemon: &Daemon) -> ErrorData {
    if let RequestError::Disabled { event_type } = e
        && let Some(until) = paused_until(daemon, event_type)
    {
        return type_paused(event_type, until);
    }
    request_error(e, daemon.settings_path())
}

/// Until when `ty` is paused: a pause is running and `ty` is configured on.
pub fn paused_until(daemon: &Daemon, ty: EventType) -> Option<u64> {
    daemon
        .paused_until_ms()
        .filter(|_| daemon.settings().for_type(ty).enabled)
}

/// `NotFound` for a type hidden by a pause (as a request's error and as a stream's
/// `terminated`): `data.reason` is `paused` and `data.pausedUntilMs` says until when.
pub fn type_paused(ty: EventType, until_ms: u64) -> ErrorData {
    ErrorData::new(
        NOT_FOUND,
        format!(
            "`{ty}` is paused in Tidings until {}; it comes back by itself then, or when the \
             user resumes it in the menu bar",
            utc_time(until_ms)
        ),
        Some(json!({
            data::KIND: kind::EVENT,
            data::REASON: reason::PAUSED,
            "pausedUntilMs": until_ms
        })),
    )
}

/// RFC 3339 in UTC, to the second (an agent's clock may be in any zone).
pub(crate) fn utc_time(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// -32603 with the store error's public message and `data.reason` (e.g. `store_missing`).
/// The wire message leaves out the store's path, which names the user's account
/// (`/Users/<name>/…`); the full message stays local: in the log here, in the hub's log, and
/// in `tidings status`.
pub fn store_error(e: &StoreError) -> ErrorData {
    tracing::debug!(error = %e, "store error answered");
    ErrorData::internal_error(
        e.public_message(),
        Some(json!({ data::REASON: e.reason() })),
    )
}

/// `NotFound` for an event type name that is not served (unknown, or turned off).
pub fn not_found_event(name: &str) -> ErrorData {
    ErrorData::new(
        NOT_FOUND,
        format!("unknown event type `{name}`"),
        Some(json!({ data::KIND: kind::EVENT })),
    )
}

/// `NotFound` for a type that exists but is turned off: the type is not in `events/list`, so
/// `NotFound` stays the code, but the message says what is true and how to change it. The
/// settings path is shown home-relative (`~/…`): the full path names the user's account.
pub fn type_disabled(ty: EventType, settings_file: &Path) -> ErrorData {
    ErrorData::new(
        NOT_FOUND,
        format!(
            "`{ty}` is turned off in Tidings; turn it on in the menu bar or set `[{}] enabled = \
             true` in {}",
            ty.settings_section(),
            crate::home::home_relative(settings_file)
        ),
        Some(json!({ data::KIND: kind::EVENT, data::REASON: reason::DISABLED })),
    )
}

/// The `terminated` error when the user turns a type off.
pub fn type_turned_off(ty: EventType) -> ErrorData {
    ErrorData::new(
        NOT_FOUND,
        format!("event type `{ty}` was turned off in Tidings"),
        Some(json!({ data::KIND: kind::EVENT })),
    )
}

/// The `terminated` error when a settings change leaves a subscription with no sender bound.
pub fn allowlist_removed(ty: EventType) -> ErrorData {
    ErrorData::new(
        FORBIDDEN,
        format!(
            "the allowlist for `{ty}` was removed in Tidings and this subscription names no sender"
        ),
        Some(json!({ data::REASON: reason::ALLOWLIST })),
    )
}

/// `events/unsubscribe`: no webhook subscription ever exists here.
pub fn not_found_subscription() -> ErrorData {
    ErrorData::new(
        NOT_FOUND,
        "no such subscription: Tidings offers no webhook delivery",
        Some(json!({ data::KIND: kind::SUBSCRIPTION })),
    )
}

/// A request (a second `events/stream`, or any other) whose id is a live stream's on the same
/// connection: the id is the stream's `subscriptionId` and the key of its cancellation, so it
/// must be unique while the stream lives.
pub fn duplicate_stream_id(id: &RequestId) -> ErrorData {
    // The id is the client's own and may be up to a frame long: the response carries it in
    // full as `id`, so the message shows at most its first `MAX_ECHO_CHARS` characters.
    let shown = tidings_core::text::sanitize(
        &id.clone().into_json_value().to_string(),
        tidings_core::text::MAX_ECHO_CHARS,
    );
    ErrorData::invalid_params(
        format!(
            "request id {shown} is already the id of an open stream on this connection; \
             use a new id"
        ),
        Some(json!({ data::FIELD: "id" })),
    )
}

pub use crate::clients::StreamCap;

/// `ResourceExhausted` with `data: {"limit": "streams", "max": N}`.
pub fn streams_exhausted(cap: StreamCap) -> ErrorData {
    let (message, max) = match cap {
        StreamCap::PerConnection(max) => (
            format!("this connection already has {max} open streams, the limit per connection"),
            max,
        ),
        StreamCap::PerToken(max) => (
            format!("this token already has {max} open streams, the limit per token"),
            max,
        ),
        StreamCap::Total(max) => (
            format!("the daemon already serves {max} open streams, its limit"),
            max,
        ),
    };
    ErrorData::new(
        RESOURCE_EXHAUSTED,
        message,
        Some(json!({ "limit": "streams", "max": max })),
    )
}

/// The `terminated` error (and the refusal of a new stream) once the HTTP bearer token the
/// stream was opened with has been rotated.
pub fn token_rotated() -> ErrorData {
    ErrorData::new(
        FORBIDDEN,
        "the HTTP token this stream was opened with was rotated; reconnect with the new token",
        Some(json!({ data::REASON: reason::TOKEN_ROTATED })),
    )
}

/// The `terminated` error (and the refusal of every later request) once the user revoked
/// the client in the app; a new connection is a new client.
pub fn revoked_by_user() -> ErrorData {
    ErrorData::new(
        FORBIDDEN,
        "this client was revoked in Tidings; reconnect to be served again",
        Some(json!({ data::REASON: reason::REVOKED })),
    )
}

/// The `terminated` error once the agent's own HTTP token was revoked.
pub fn token_revoked() -> ErrorData {
    ErrorData::new(
        FORBIDDEN,
        "the HTTP token this stream was opened with was revoked; make this agent a new one with \
         `tidings token create NAME`",
        Some(json!({ data::REASON: reason::TOKEN_REVOKED })),
    )
}

/// The error for a principal revoked for `why`.
pub fn revoked(why: Revocation) -> ErrorData {
    match why {
        Revocation::TokenRotated => token_rotated(),
        Revocation::ByUser => revoked_by_user(),
        Revocation::TokenRevoked => token_revoked(),
    }
}

/// The error for a stream that could not take a place.
pub fn refused(refusal: Refusal) -> ErrorData {
    match refusal {
        Refusal::Exhausted(cap) => streams_exhausted(cap),
        Refusal::Revoked(why) => revoked(why),
    }
}

/// Why a request is served in the legacy era (docs/protocol.md, at its top).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LegacyEra {
    /// The connection negotiated this version through `initialize`.
    Initialized(String),
    /// The request itself declared this older version in `_meta`.
    Declared(String),
    /// The request declared no protocol version.
    Undeclared,
}

/// `events/*` on a request in the legacy era (-32601), saying which of the two reasons
/// applies: a connection that used `initialize`, or a request that declared an older version.
pub fn legacy_method(method: &str, era: &LegacyEra) -> ErrorData {
    let why = match era {
        LegacyEra::Initialized(v) => format!("this connection negotiated {v} through initialize"),
        LegacyEra::Declared(v) => format!("this request declared protocol {v}"),
        LegacyEra::Undeclared => "this request declared no protocol version".to_owned(),
    };
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "{method} is served on protocol {} only ({why})",
            versions::CURRENT
        ),
        None,
    )
}

/// The `error` member of `notifications/events/error` and `…/terminated`.
pub fn error_object(e: &ErrorData) -> ErrorObject {
    ErrorObject {
        code: e.code.0.into(),
        message: e.message.to_string(),
        data: e.data.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_stream_id_is_not_echoed_whole_in_the_message() {
        let long = RequestId::String("x".repeat(100_000).into());
        let e = duplicate_stream_id(&long);
        assert!(e.message.len() < 200, "{} bytes", e.message.len());
        let short = duplicate_stream_id(&RequestId::Number(7));
        assert!(
            short.message.starts_with("request id 7 is already"),
            "{}",
            short.message
        );
    }

    #[test]
    fn invalid_params_names_the_field() {
        let e = request_error(
            RequestError::invalid("cursor", "bad cursor"),
            Path::new("s"),
        );
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(e.data, Some(json!({"field": "cursor"})));
    }

    #[test]
    fn not_found_is_32023_kind_event_never_32002() {
        let e = request_error(RequestError::NotFound { name: "x".into() }, Path::new("s"));
        assert_eq!(e.code.0, -32023);
        assert_eq!(e.data, Some(json!({"kind": "event"})));
    }

    #[test]
    fn a_turned_off_type_says_so_and_how_to_turn_it_on() {
        let e = request_error(
            RequestError::Disabled {
                event_type: EventType::MessagesReceived,
            },
            Path::new("/etc/tidings/settings.toml"),
        );
        assert_eq!(e.code.0, -32023);
        assert_eq!(e.data, Some(json!({"kind": "event", "reason": "disabled"})));
        assert_eq!(
            e.message,
            "`messages.received` is turned off in Tidings; turn it on in the menu bar or set \
             `[messages] enabled = true` in /etc/tidings/settings.toml"
        );
        assert!(!e.message.contains("unknown"));
    }

    #[test]
    fn a_store_error_on_the_wire_names_no_path() {
        let e = store_error(&StoreError::PermissionDenied {
            store: "Mail",
            path: "/Users/someone/Library/Mail/V10/MailData/Envelope Index".into(),
        });
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
        assert!(!e.message.contains("/Users"), "{}", e.message);
        assert!(!e.message.contains("someone"), "{}", e.message);
        assert!(e.message.contains("Full Disk Access"), "{}", e.message);
        assert_eq!(e.data, Some(json!({"reason": "permission_denied"})));
    }

    #[test]
    fn exhausted_names_the_limit_and_max() {
        let e = streams_exhausted(StreamCap::PerConnection(10));
        assert_eq!(e.code.0, -32025);
        assert_eq!(e.data, Some(json!({"limit": "streams", "max": 10})));
        assert!(e.message.contains("10"));
    }

    #[test]
    fn the_notification_error_object_keeps_data() {
        let o =
            serde_json::to_value(error_object(&type_turned_off(EventType::MailReceived))).unwrap();
        assert_eq!(o["code"], -32023);
        assert_eq!(o["data"]["kind"], "event");
    }
}
