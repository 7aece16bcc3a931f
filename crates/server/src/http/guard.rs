//! The guard layer in front of rmcp's Streamable HTTP service. Every request passes these
//! checks in order, and the first that fails answers without rmcp seeing the request:
//!
//! 1. Exactly one `Host` (more is 400, RFC 9112 3.2), naming this endpoint: `127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT` (and the
//!    bound address) – else 403. Stops DNS rebinding. An absolute-form request target
//!    (`POST http://host:port/mcp`) must name one of them too – else 403.
//! 2. `Origin`, if present, is in `[http] allowed_origins` (read live; empty by default) –
//!    else 403. A page in the user's browser cannot call the endpoint; even a listed one
//!    cannot, as its CORS preflight carries no token (the list is for non-browser clients).
//! 3. `Authorization: Bearer <token>` matches the token in force (constant time) – else 401
//!    with `WWW-Authenticate: Bearer`. With `--demo --no-auth` this check is skipped.
//! 4. The body is at most `max_http_body_bytes` – else 413 with a JSON-RPC error naming the
//!    limit – and arrives within `http_body_timeout` of the headers – else 408 naming it. The
//!    body is read here, bounded, so the next steps can see it. The token and the endpoint
//!    are checked again once it is in: a request whose token was rotated meanwhile is 401,
//!    one whose endpoint began stopping is 503.
//! 5. The body is one JSON object – else 400: not JSON is -32700, anything else (a batch
//!    included: 2026-07-28 has none) -32600. rmcp would answer these in plain text.
//! 6. `subscriptions/listen` is renamed to the internal alias (`listen_alias.rs`, shared with
//!    the socket's framer; rmcp's typed listen filter drops `eventsListChanged`), with its
//!    `Mcp-Method` header checked and rewritten to match.
//! 7. An events method under an older `MCP-Protocol-Version` (a client that used the legacy
//!    `initialize`) is 404 with the socket's -32601 "served on protocol 2026-07-28 only".
//! 8. On `events/poll|stream|subscribe|unsubscribe` with a string `params.name`, `Mcp-Name`
//!    (rmcp's `=?base64?…?=` form decoded) equals it – else 400 with -32020 `HeaderMismatch`
//!    (docs/http.md, "Routing headers"). Without a name there is nothing to mirror: the handler
//!    answers -32602 naming `name`. rmcp has no hook for these methods, hence this layer.
//! 9. The message is one rmcp can read (`frames::inbound::shape`, shared with the socket):
//!    else a request gets 400 with a JSON-RPC error carrying its id and naming the field,
//!    and a notification or response 202 with nothing (rmcp would answer 415 in plain text).
//!
//! The original bytes go on to rmcp unless the rename changed the body: re-serialising can
//! make an in-limit body longer (`1e5` becomes `100000.0`). On the way back, the answer to
//! `server/discover` gets `capabilities.events` beside the extension (`events_key.rs`, shared
//! with the socket's framer).
//!
//! Then the token's state rides in the request's extensions ([`Principal`]) to the handler,
//! which counts streams per token and ends them when the token is rotated.
//! `MCP-Protocol-Version`, `Mcp-Method` on other methods and `Accept` are rmcp's to check.

// Each check returns the finished refusal (`Err(Response)`): one is built at most once per
// request, on the refusal path, so boxing it would buy nothing.
#![allow(clippy::result_large_err)]

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Principal;
use super::auth::{AuthFailure, HttpAuth};
use super::refusal::{
    body_timeout, clip, header_mismatch, rpc_error, stopping, too_large, unauthorized,
};
use crate::clients::Revocation;
use crate::daemon::Daemon;
use crate::events::errors::{LegacyEra, legacy_method};
use crate::frames::inbound::{Shape, shape};
use crate::listen_alias::{LISTEN_ALIAS, rename_listen, shown};
use rmcp::model::ProtocolVersion;
use tidings_protocol::errors::{INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR};
use tidings_protocol::headers::{MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION, NAME_METHODS};
use tidings_protocol::{methods, versions};

/// What the guard checks against.
pub(crate) struct Guard {
    pub(crate) daemon: Daemon,
    pub(crate) auth: Arc<HttpAuth>,
    /// Accepted `Host` values, lowercase.
    pub(crate) hosts: Vec<String>,
    pub(crate) max_body: usize,
    /// How long the body may take once the headers are in.
    pub(crate) body_timeout: Duration,
    /// The endpoint's stop token: a request still being read when it fires is not served.
    pub(crate) stop: CancellationToken,
}

/// The middleware: see the module docs.
pub(crate) async fn check(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    match guard.admit(request).await {
        Ok((request, Asked::Discover)) => with_events_key(next.run(request).await).await,
        Ok((request, Asked::Other)) => next.run(request).await,
        Err(refusal) => refusal,
    }
}

/// Whether the request was `server/discover`, whose answer the guard patches.
enum Asked {
    Discover,
    Other,
}

/// The longest `server/discover` answer the guard reads to patch; rmcp's is under 2 KiB.
const MAX_DISCOVER_ANSWER: usize = 64 * 1024;

/// `response` with `capabilities.events` added when it is a JSON `server/discover` answer.
async fn with_events_key(response: Response) -> Response {
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_DISCOVER_ANSWER).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                Value::Null,
                INTERNAL_ERROR,
                format!("the server/discover answer could not be read: {e}"),
                None,
            );
        }
    };
    let bytes = crate::events_key::rewrite(&bytes).map_or(bytes, Bytes::from);
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    Response::from_parts(parts, Body::from(bytes))
}

impl Guard {
    async fn admit(&self, request: Request) -> Result<(Request, Asked), Response> {
        let (mut parts, body) = request.into_parts();
        self.check_host(&parts.headers)?;
        self.check_target(&parts.uri)?;
        self.check_origin(&parts.headers)?;
        let principal = match self.auth.authorize(
            parts
                .headers
                .get(header::AUTHORIZATION)
                .map(HeaderValue::as_bytes),
        ) {
            Ok(principal) => principal,
            Err(failure) => return Err(unauthorized(failure)),
        };
        parts.extensions.insert(Principal(principal.clone()));
        if parts.method != Method::POST {
            // rmcp answers 405 for everything but POST in stateless mode.
            return Ok((Request::from_parts(parts, body), Asked::Other));
        }
        let bytes = self.read_body(&parts.headers, body).await?;
        // The token was checked on the headers; the body may have taken until after a
        // rotation or a stop, and neither may let a request through.
        // A client the user revoked keeps a valid token: the handler answers it Forbidden.
        if matches!(
            principal.revocation(),
            Some(Revocation::TokenRotated | Revocation::TokenRevoked)
        ) {
            return Err(unauthorized(AuthFailure::Invalid));
        }
        if self.stop.is_cancelled() {
            return Err(stopping());
        }
        let mut message = one_message(&bytes)?;
        let asked = if message.get("method").and_then(Value::as_str) == Some(methods::DISCOVER) {
            Asked::Discover
        } else {
            Asked::Other
        };
        let bytes = if route_headers(&mut parts.headers, &mut message)? {
            Bytes::from(serde_json::to_vec(&message).map_err(|e| {
                rpc_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Value::Null,
                    INTERNAL_ERROR,
                    e.to_string(),
                    None,
                )
            })?)
        } else {
            bytes
        };
        readable(&message, &bytes)?;
        parts
            .headers
            .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
        Ok((Request::from_parts(parts, Body::from(bytes)), asked))
    }

    fn check_host(&self, headers: &HeaderMap) -> Result<(), Response> {
        // Two Host lines could name two hosts, and which one counts would be a guess.
        if headers.get_all(header::HOST).iter().nth(1).is_some() {
            return Err(rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                INVALID_REQUEST,
                "more than one Host header; send exactly one".to_owned(),
                None,
            ));
        }
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(|h| h.trim().to_ascii_lowercase());
        match host {
            Some(host) if self.hosts.contains(&host) => Ok(()),
            other => Err(rpc_error(
                StatusCode::FORBIDDEN,
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "Host {} is not this endpoint; use one of {}",
                    other.map_or("(missing)".to_owned(), |h| format!("`{}`", clip(&h))),
                    self.hosts.join(", ")
                ),
                None,
            )),
        }
    }

    /// An absolute-form target (`POST http://host/mcp`) must name this endpoint too: a proxy
    /// or a client would otherwise be served a request meant for another host.
    fn check_target(&self, uri: &Uri) -> Result<(), Response> {
        let Some(authority) = uri.authority() else {
            return Ok(());
        };
        let named = authority.as_str().to_ascii_lowercase();
        if uri.scheme_str() == Some("http") && self.hosts.contains(&named) {
            return Ok(());
        }
        Err(rpc_error(
            StatusCode::FORBIDDEN,
            Value::Null,
            INVALID_REQUEST,
            format!(
                "request target `{}` is not this endpoint; use one of {}",
                clip(&uri.to_string()),
                self.hosts.join(", ")
            ),
            None,
        ))
    }

    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Response> {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let origin = origin.to_str().map(normal_origin).unwrap_or_default();
        let settings = self.daemon.settings_arc();
        let allowed = &settings.http.allowed_origins;
        if !origin.is_empty() && allowed.iter().any(|a| normal_origin(a) == origin) {
            return Ok(());
        }
        Err(rpc_error(
            StatusCode::FORBIDDEN,
            Value::Null,
            INVALID_REQUEST,
            format!(
                "Origin `{}` is not allowed; web pages may not call Tidings unless listed in \
                 [http] allowed_origins",
                clip(&origin)
            ),
            None,
        ))
    }

    async fn read_body(&self, headers: &HeaderMap, body: Body) -> Result<Bytes, Response> {
        let max = self.max_body;
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(len) = declared.filter(|len| *len > max as u64) {
            return Err(too_large(Some(len), max));
        }
        let read = tokio::time::timeout(self.body_timeout, Limited::new(body, max).collect());
        let Ok(read) = read.await else {
            return Err(body_timeout(self.body_timeout));
        };
        match read {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large(None, max)),
            Err(e) => Err(rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                INVALID_REQUEST,
                format!("could not read the request body: {e}"),
                None,
            )),
        }
    }
}

/// Step 5 of the module docs: the body as one JSON-RPC message object.
fn one_message(bytes: &[u8]) -> Result<Value, Response> {
    let refused = |code, message: String| {
        Err(rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            code,
            message,
            None,
        ))
    };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(message @ Value::Object(_)) => Ok(message),
        Ok(Value::Array(_)) => refused(
            INVALID_REQUEST,
            format!(
                "a JSON array (batch) is not supported: protocol {} has no batches; send one \
                 JSON-RPC message per request",
                versions::CURRENT
            ),
        ),
        Ok(_) => refused(
            INVALID_REQUEST,
            "the request body must be one JSON-RPC message (a JSON object)".to_owned(),
        ),
        Err(e) => refused(
            PARSE_ERROR,
            format!(
                "the request body is not valid JSON: {}",
                clip(&e.to_string())
            ),
        ),
    }
}

/// Step 9 of the module docs: what rmcp cannot read as a client message it answers with plain
/// text and no id (415), so it is answered here as the socket's framer answers it: a request
/// with a JSON-RPC error carrying its id (400), a notification or a response with 202 and
/// nothing (no answer is due).
fn readable(message: &Value, bytes: &[u8]) -> Result<(), Response> {
    let Value::Object(m) = message else {
        return Ok(());
    };
    match shape(m, bytes) {
        Shape::Message(_) => Ok(()),
        Shape::Ignore => Err(StatusCode::ACCEPTED.into_response()),
        Shape::Refuse { id, error } => Err(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            error.code.0,
            error.message.into_owned(),
            error.data,
        )),
    }
}

/// Steps 6 to 8 of the module docs, on a parsed message. Whether the body changed (only the
/// listen rename changes it).
fn route_headers(headers: &mut HeaderMap, message: &mut Value) -> Result<bool, Response> {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let method = message.get("method").and_then(Value::as_str).unwrap_or("");
    if method == methods::LISTEN {
        let sent = headers.get(MCP_METHOD).map(HeaderValue::as_bytes);
        if sent != Some(methods::LISTEN.as_bytes()) {
            let message = match sent {
                None => format!(
                    "missing required Mcp-Method header for `{}`",
                    methods::LISTEN
                ),
                Some(v) => format!(
                    "Mcp-Method header `{}` does not match body method `{}`",
                    clip(&String::from_utf8_lossy(v)),
                    methods::LISTEN
                ),
            };
            return Err(header_mismatch(id, message));
        }
        if let Value::Object(m) = message {
            rename_listen(m);
        }
        headers.insert(MCP_METHOD, HeaderValue::from_static(LISTEN_ALIAS));
        return Ok(true);
    }
    if let Some(refusal) = legacy_era(headers, method, &id) {
        return Err(refusal);
    }
    if !NAME_METHODS.contains(&method) {
        return Ok(false);
    }
    // The header mirrors `params.name`: with no name there is nothing to mirror, and the
    // handler's -32602 naming `name` is the more specific answer.
    let Some(name) = message.pointer("/params/name").and_then(Value::as_str) else {
        return Ok(false);
    };
    let mut values = headers.get_all(MCP_NAME).iter();
    let Some(sent) = values.next() else {
        return Err(header_mismatch(
            id,
            format!("missing required Mcp-Name header for `{method}`"),
        ));
    };
    if values.next().is_some() {
        return Err(header_mismatch(
            id,
            format!("multiple Mcp-Name header values for `{method}`; send exactly one"),
        ));
    }
    let Some(sent) = sent.to_str().ok().and_then(decode_header_value) else {
        return Err(header_mismatch(
            id,
            "Mcp-Name header is not valid text or not valid =?base64?…?= encoding".to_owned(),
        ));
    };
    if name == sent {
        return Ok(false);
    }
    Err(header_mismatch(
        id,
        format!(
            "Mcp-Name header `{}` does not match params.name `{}` for `{method}`",
            clip(&sent),
            clip(name)
        ),
    ))
}

/// An events method under an older `MCP-Protocol-Version`: the socket's words (-32601, "served
/// on protocol 2026-07-28 only") with 404, as for any method this era does not have. Stateless
/// HTTP keeps nothing from a legacy `initialize`, so each later request declares its version
/// in this header, and rmcp would only say that `_meta` lacks one. Unknown versions are left
/// to rmcp (-32022).
fn legacy_era(headers: &HeaderMap, method: &str, id: &Value) -> Option<Response> {
    let events = methods::is_events(method) || method == LISTEN_ALIAS;
    if !events {
        return None;
    }
    let declared = headers.get(MCP_PROTOCOL_VERSION)?.to_str().ok()?;
    let legacy = ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .any(|v| v.as_str() == declared && !versions::serves_events(v.as_str()));
    if !legacy {
        return None;
    }
    let error = legacy_method(shown(method), &LegacyEra::Declared(declared.to_owned()));
    Some(rpc_error(
        StatusCode::NOT_FOUND,
        id.clone(),
        error.code.0,
        error.message.into_owned(),
        None,
    ))
}

/// rmcp's header value encoding reversed: `=?base64?<standard base64>?=` wraps values that
/// cannot travel bare (non-ASCII, edge spaces); anything else is the value itself.
pub fn decode_header_value(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|inner| inner.strip_suffix("?="))
    {
        Some(inner) => String::from_utf8(STANDARD.decode(inner).ok()?).ok(),
        None => Some(value.to_owned()),
    }
}

/// `scheme://host[:port]`, lowercase, without a trailing slash, for comparison.
fn normal_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_values_decode_like_rmcp_encodes_them() {
        assert_eq!(
            decode_header_value("mail.received").unwrap(),
            "mail.received"
        );
        let wrapped = format!("=?base64?{}?=", STANDARD.encode("café "));
        assert_eq!(decode_header_value(&wrapped).unwrap(), "café ");
        assert_eq!(decode_header_value("=?base64?***?="), None);
    }

    fn routed(method: &str, name: Option<&str>, header: &[&str]) -> Result<Value, StatusCode> {
        let mut headers = HeaderMap::new();
        for h in header {
            headers.append("mcp-name", HeaderValue::from_str(h).unwrap());
        }
        let mut message = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": {}});
        if let Some(name) = name {
            message["params"]["name"] = json!(name);
        }
        route_headers(&mut headers, &mut message)
            .map(|_| message)
            .map_err(|r| r.status())
    }

    #[test]
    fn mcp_name_must_match_on_the_four_methods_only() {
        for method in NAME_METHODS {
            assert!(routed(method, Some("mail.received"), &["mail.received"]).is_ok());
            assert_eq!(
                routed(method, Some("mail.received"), &[]),
                Err(StatusCode::BAD_REQUEST)
            );
            assert_eq!(
                routed(method, Some("mail.received"), &["messages.received"]),
                Err(StatusCode::BAD_REQUEST)
            );
            assert_eq!(
                routed(method, Some("a"), &["a", "a"]),
                Err(StatusCode::BAD_REQUEST)
            );
        }
        assert!(routed("events/list", None, &[]).is_ok());
    }

    #[test]
    fn listen_is_renamed_with_its_method_header() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "mcp-method",
            HeaderValue::from_static("subscriptions/listen"),
        );
        let mut message = json!({"id": 1, "method": "subscriptions/listen", "params": {}});
        assert!(route_headers(&mut headers, &mut message).unwrap());
        assert_eq!(message["method"], LISTEN_ALIAS);
        assert_eq!(headers["mcp-method"], LISTEN_ALIAS);
        let mut message = json!({"id": 1, "method": "subscriptions/listen"});
        let refused = route_headers(&mut HeaderMap::new(), &mut message).unwrap_err();
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    }
}
