//! The guard's refusals: each is a JSON-RPC error as `application/json` with the HTTP status
//! that fits, its message naming what to fix and, for a limit, the limit (`data.limit`,
//! `data.max`), so no refusal reaches a client as rmcp's plain text.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tidings_protocol::errors::{
    ErrorObject, HEADER_MISMATCH, INTERNAL_ERROR, INVALID_REQUEST, data, reason,
};
use tidings_protocol::jsonrpc;

use super::auth::AuthFailure;

/// At most `MAX_ECHO_CHARS` characters of a client-supplied value, for messages.
pub(super) fn clip(value: &str) -> String {
    tidings_core::text::sanitize(value, tidings_core::text::MAX_ECHO_CHARS)
}

pub(super) fn header_mismatch(id: Value, message: String) -> Response {
    rpc_error(StatusCode::BAD_REQUEST, id, HEADER_MISMATCH, message, None)
}

pub(super) fn unauthorized(failure: AuthFailure) -> Response {
    let (challenge, message) = match failure {
        AuthFailure::Missing => (
            r#"Bearer realm="tidings""#,
            "a bearer token is required: send Authorization: Bearer <token> \
             (see `tidings token show`)",
        ),
        AuthFailure::Invalid => (
            r#"Bearer realm="tidings", error="invalid_token""#,
            "the bearer token is not the one in force (it may have been rotated; see \
             `tidings token show`)",
        ),
    };
    let mut response = rpc_error(
        StatusCode::UNAUTHORIZED,
        Value::Null,
        INVALID_REQUEST,
        message.to_owned(),
        None,
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}

pub(super) fn too_large(declared: Option<u64>, max: usize) -> Response {
    let size = declared.map_or("the request body".to_owned(), |n| {
        format!("a request body of {n} bytes")
    });
    rpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        Value::Null,
        INVALID_REQUEST,
        format!(
            "{size} exceeds the {} limit ({max} bytes)",
            crate::frames::human(max)
        ),
        Some(json!({"limit": "request_body_bytes", "max": max})),
    )
}

/// A JSON-RPC error response with `status`.
#[allow(clippy::needless_pass_by_value)] // callers build both for this call
pub(super) fn rpc_error(
    status: StatusCode,
    id: Value,
    code: i32,
    message: String,
    data: Option<Value>,
) -> Response {
    let error = ErrorObject {
        code: code.into(),
        message,
        data,
    };
    let body = jsonrpc::error(id, error);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The body did not arrive within `limit` of the headers.
pub(super) fn body_timeout(limit: Duration) -> Response {
    rpc_error(
        StatusCode::REQUEST_TIMEOUT,
        Value::Null,
        INVALID_REQUEST,
        format!(
            "the request body did not arrive within the {} ms limit after the headers",
            limit.as_millis()
        ),
        Some(
            json!({"limit": "request_body_timeout_ms", "max": u64::try_from(limit.as_millis()).unwrap_or(u64::MAX)}),
        ),
    )
}

/// The endpoint began stopping while the request's body was read.
pub(super) fn stopping() -> Response {
    rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        Value::Null,
        INTERNAL_ERROR,
        "the HTTP endpoint is stopping; the request was not served".to_owned(),
        Some(json!({data::REASON: reason::ENDPOINT_STOPPING})),
    )
}
