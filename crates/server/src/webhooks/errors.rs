//! The errors only webhook calls and deliveries give: no principal, a destination not on the
//! user's list (or taken off it), an endpoint that failed verification, too many
//! subscriptions.

use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use serde_json::json;
use tidings_protocol::errors::{self as codes, data, reason};
use tidings_webhook::{Failure, Origin};

/// The most webhook subscriptions one agent holds; one more is `ResourceExhausted`.
pub const MAX_PER_AGENT: usize = 1000;

/// The `data.limit` of that refusal.
pub const LIMIT: &str = "webhook_subscriptions";

/// Forbidden: webhook calls need a principal, and the HTTP endpoint serves without a token.
pub fn unauthenticated() -> ErrorData {
    ErrorData::new(
        ErrorCode(codes::FORBIDDEN),
        "webhook subscriptions need an authenticated principal, and this HTTP endpoint serves \
         without a token (--no-auth); connect through tidings-mcp or with a token (`tidings \
         token create NAME`)",
        Some(json!({ data::REASON: reason::UNAUTHENTICATED })),
    )
}

/// Forbidden: `origin` is not on the user's list of destinations. `asked`: the window shows
/// the question now.
pub fn destination_not_allowed(origin: &Origin, asked: bool) -> ErrorData {
    let how = if asked {
        "the Tidings window now asks the user; subscribe again once they allow it"
    } else {
        "ask the user to add it in the Tidings window's Webhooks section"
    };
    ErrorData::new(
        ErrorCode(codes::FORBIDDEN),
        format!(
            "{origin} is not one of the destinations the user allows webhooks to post to; \
             {how}, or to run `tidings webhooks allow {origin}`"
        ),
        Some(
            json!({ data::REASON: reason::DESTINATION_NOT_ALLOWED, "origin": origin.to_string() }),
        ),
    )
}

/// Forbidden (a `terminated` envelope's error): the user took `origin` off the list, or
/// ended the subscription in the window.
pub fn destination_removed(origin: &Origin) -> ErrorData {
    ErrorData::new(
        ErrorCode(codes::FORBIDDEN),
        format!("the user no longer allows webhooks to post to {origin}"),
        Some(json!({ data::REASON: reason::DESTINATION_REMOVED, "origin": origin.to_string() })),
    )
}

/// `CallbackEndpointError`: the endpoint failed the verification challenge or could not be
/// reached. The message is ours (never the endpoint's body); `data.reason` the category.
pub fn endpoint_failed(failure: &Failure) -> ErrorData {
    ErrorData::new(
        ErrorCode(codes::CALLBACK_ENDPOINT_ERROR),
        format!(
            "the callback endpoint failed verification: {}",
            failure.detail
        ),
        Some(json!({ data::REASON: failure.category.as_str() })),
    )
}

/// `ResourceExhausted`: the agent holds [`MAX_PER_AGENT`] subscriptions already.
pub fn exhausted() -> ErrorData {
    ErrorData::new(
        ErrorCode(codes::RESOURCE_EXHAUSTED),
        format!(
            "this agent holds {MAX_PER_AGENT} webhook subscriptions, the most allowed; \
             unsubscribe one first"
        ),
        Some(json!({ "limit": LIMIT, "max": MAX_PER_AGENT })),
    )
}
