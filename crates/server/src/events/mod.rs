//! The events extension on rmcp 3.11: [`EventsHandler`], one per connection, serving
//! `server/discover`, `events/list|poll|stream|subscribe|unsubscribe`, `subscriptions/listen`
//! (with `eventsListChanged`), `tidings/status` and `tidings/token/rotate` (socket only), and
//! in demo mode the conformance tools.
//!
//! Files: [`wire`] (result and notification shapes, the era check), [`errors`] (the codes),
//! [`list`] (capabilities and descriptors), [`poll`], [`stream`] (the push loop), [`listen`]
//! (`list_changed`), [`tools`] (demo levers).

pub(crate) mod errors;
pub(crate) mod list;
pub(crate) mod listen;
pub(crate) mod poll;
pub(crate) mod stream;
pub(crate) mod tools;
pub(crate) mod wire;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use tidings_core::request::enabled_type;

use crate::daemon::{ConnectionState, Daemon};
use errors::{legacy_method, not_found_subscription, request_error, webhook_unsupported};
use wire::{complete, era};

/// The rmcp handler of one socket connection, or of every HTTP request.
#[derive(Clone)]
pub struct EventsHandler {
    daemon: Daemon,
    /// The socket connection's state; `None` over HTTP, where each request carries its
    /// token's state (put there by the guard layer; see `http/guard.rs`).
    conn: Option<Arc<ConnectionState>>,
}

impl EventsHandler {
    pub(crate) fn new(daemon: Daemon, conn: Arc<ConnectionState>) -> EventsHandler {
        EventsHandler {
            daemon,
            conn: Some(conn),
        }
    }

    /// The handler the HTTP endpoint's factory hands out: the shared daemon, nothing else.
    pub(crate) fn for_http(daemon: Daemon) -> EventsHandler {
        EventsHandler { daemon, conn: None }
    }

    /// The principal of this request: the socket connection, or the HTTP token's state.
    fn conn(&self, ctx: &RequestContext<RoleServer>) -> Result<Arc<ConnectionState>, ErrorData> {
        if let Some(conn) = &self.conn {
            return Ok(conn.clone());
        }
        ctx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<crate::http::Principal>())
            .map(|p| p.0.clone())
            .ok_or_else(|| ErrorData::internal_error("request reached the handler unchecked", None))
    }

    /// `events/subscribe`: the name is looked up first (`NotFound`), then webhook is declined.
    fn subscribe(&self, params: &Value) -> ErrorData {
        let name = match required_name(params) {
            Ok(name) => name,
            Err(e) => return e,
        };
        match enabled_type(name, &self.daemon.settings_arc()) {
            Ok(ty) => webhook_unsupported(ty),
            Err(e) => request_error(e, self.daemon.settings_path()),
        }
    }
}

impl ServerHandler for EventsHandler {
    fn get_info(&self) -> ServerConfig {
        list::server_config(self.daemon.demo().is_some())
    }

    /// rmcp's default, minus the events extension in the answer (see [`list::without_events`]).
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        ctx.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
            .map(list::without_events)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let CustomRequest { method, params, .. } = request;
        // The framer reserved a stream's id on the socket; it stays taken until this handler
        // is done with it, whichever way it returns (see `frames.rs`).
        let _stream_id = (method == "events/stream" || method == listen::LISTEN_ALIAS)
            .then(|| self.conn.as_ref().map(|conn| conn.hold_stream_id(&ctx.id)));
        let params = params.unwrap_or(Value::Null);
        let socket = self.conn.is_some();
        if socket && method == "tidings/status" {
            let status = serde_json::to_value(self.daemon.status())
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            return Ok(complete(status));
        }
        if socket && method == crate::http::ROTATE_METHOD {
            return crate::http::auth::reload(&self.daemon).await.map(complete);
        }
        let events_method = method.starts_with("events/") || method == listen::LISTEN_ALIAS;
        if !events_method {
            return Err(ErrorData::method_not_found_with_name(&method));
        }
        if let Err(legacy) = era(&ctx) {
            let shown = if method == listen::LISTEN_ALIAS {
                "subscriptions/listen"
            } else {
                method.as_str()
            };
            return Err(legacy_method(shown, &legacy));
        }
        match method.as_str() {
            "events/list" => {
                // The account map is a small file, read only here (never the index).
                let accounts = self.daemon.engine().mail_accounts();
                Ok(list::list(&self.daemon.settings_arc(), &accounts))
            }
            "events/poll" => poll::poll(&self.daemon, params).await,
            "events/stream" => {
                let conn = self.conn(&ctx)?;
                stream::stream(&self.daemon, &conn, params, ctx).await
            }
            "events/subscribe" => Err(self.subscribe(&params)),
            "events/unsubscribe" => Err(required_name(&params)
                .err()
                .unwrap_or_else(not_found_subscription)),
            m if m == listen::LISTEN_ALIAS => {
                let conn = self.conn(&ctx)?;
                listen::listen(&self.daemon, &conn, params, ctx).await
            }
            _ => Err(ErrorData::method_not_found_with_name(&method)),
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        match self.daemon.demo() {
            Some(_) => Ok(ListToolsResult::with_all_items(tools::tools())),
            None => Err(ErrorData::method_not_found_with_name("tools/list")),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match self.daemon.demo() {
            Some(demo) => tools::call(demo, request)
                .await
                .map(CallToolResponse::Complete),
            None => Err(ErrorData::method_not_found_with_name("tools/call")),
        }
    }
}

/// `params.name`, a non-empty string, or -32602 naming `name`.
fn required_name(params: &Value) -> Result<&str, ErrorData> {
    match params.get("name") {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.as_str()),
        _ => Err(ErrorData::invalid_params(
            "name (the event type, a string) is required",
            Some(json!({"field": "name"})),
        )),
    }
}

/// rmcp's `method_not_found` takes a type-level method name; ours are runtime strings.
trait MethodNotFound {
    fn method_not_found_with_name(method: &str) -> ErrorData;
}

impl MethodNotFound for ErrorData {
    fn method_not_found_with_name(method: &str) -> ErrorData {
        ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            method.to_owned(),
            None,
        )
    }
}

#[cfg(test)]
mod tests;
