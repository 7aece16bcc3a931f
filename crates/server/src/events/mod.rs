//! The events extension on rmcp 3.11: [`EventsHandler`], one per connection, serving
//! `server/discover`, `events/list|poll|stream|subscribe|unsubscribe`, `subscriptions/listen`
//! (with `eventsListChanged`), `tidings/status` and `tidings/token/rotate` (socket only), and
//! on both eras the pull tools `tidings_check` / `tidings_wait`, and in demo mode the
//! conformance tools.
//!
//! Files: [`wire`] (result and notification shapes, the era check), [`errors`] (the codes),
//! [`list`] (capabilities and descriptors), [`poll`], [`stream`] (the push loop), [`listen`]
//! (`list_changed`), [`pull`] (the pull tools), [`tools`] (demo levers).

pub(crate) mod errors;
pub(crate) mod list;
pub(crate) mod listen;
pub(crate) mod poll;
pub mod pull;
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
use tidings_core::Settings;
use tidings_protocol::errors::data;
use tidings_protocol::payloads::{Rotation, rotation};
use tidings_protocol::{meta, methods};

use crate::clients::{ConnectionState, Principal};
use crate::daemon::Daemon;
use crate::listen_alias::shown;
use errors::{legacy_method, revoked};
use wire::{complete, era};

/// The rmcp handler of one socket connection, or of every HTTP request.
#[derive(Clone)]
pub struct EventsHandler {
    daemon: Daemon,
    /// The socket connection's state; `None` over HTTP, where each request carries its
    /// token's state (put there by the guard layer; see `http/guard.rs`).
    conn: Option<Arc<ConnectionState>>,
    /// The pull tools' per-connection cursors; over HTTP, per request (so none to continue).
    pull: Arc<pull::PullState>,
}

impl EventsHandler {
    pub(crate) fn new(daemon: Daemon, conn: Arc<ConnectionState>) -> EventsHandler {
        EventsHandler {
            daemon,
            conn: Some(conn),
            pull: Arc::default(),
        }
    }

    /// The handler the HTTP endpoint's factory hands out: the shared daemon, nothing else.
    pub(crate) fn for_http(daemon: Daemon) -> EventsHandler {
        EventsHandler {
            daemon,
            conn: None,
            pull: Arc::default(),
        }
    }

    /// The principal of this request: the socket connection, or the HTTP token's state.
    fn conn(&self, ctx: &RequestContext<RoleServer>) -> Result<Arc<ConnectionState>, ErrorData> {
        if let Some(conn) = &self.conn {
            return Ok(conn.clone());
        }
        ctx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>())
            .map(|p| p.0.clone())
            .ok_or_else(|| ErrorData::internal_error("request reached the handler unchecked", None))
    }

    /// Refuse a revoked client; note what it announced (`_meta.clientInfo`) for `State`.
    fn admit(&self, ctx: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let Ok(conn) = self.conn(ctx) else {
            return Ok(());
        };
        if let Some(why) = conn.revocation() {
            return Err(revoked(why));
        }
        if let Some(refused) = self.daemon.agent_refused(&conn) {
            return Err(refused);
        }
        let info = ctx.meta.get(meta::CLIENT_INFO);
        let field = |key: &str| info.and_then(|i| i.get(key)).and_then(Value::as_str);
        conn.announce(field("name"), field("version"));
        Ok(())
    }

    /// The request's agent is at work (anything but Tidings' own `tidings/status` and token
    /// reload, which `tidings status` and `tidings token` send): list it among the agents.
    fn note_agent(&self, ctx: &RequestContext<RoleServer>) {
        if let Ok(conn) = self.conn(ctx) {
            self.daemon
                .agents()
                .saw(conn.agent(), conn.name().as_deref());
        }
    }

    /// The settings this request's agent sees (the settings in force narrowed by its grant).
    fn settings_seen(&self, ctx: &RequestContext<RoleServer>) -> Arc<Settings> {
        match self.conn(ctx) {
            Ok(conn) => self.daemon.settings_for(&conn),
            Err(_) => self.daemon.settings_arc(),
        }
    }
}

impl ServerHandler for EventsHandler {
    fn get_info(&self) -> ServerConfig {
        list::server_config()
    }

    /// rmcp's default, minus the events extension in the answer (see [`list::without_events`]).
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if let Some(conn) = &self.conn {
            if let Some(why) = conn.revocation() {
                return Err(revoked(why));
            }
            if let Some(refused) = self.daemon.agent_refused(conn) {
                return Err(refused);
            }
            conn.announce(
                Some(&request.client_info.name),
                Some(&request.client_info.version),
            );
            self.daemon
                .agents()
                .saw(conn.agent(), conn.name().as_deref());
        }
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
        // is done with it, whichever way it returns (see `frames/mod.rs`).
        let _stream_id = (method == methods::EVENTS_STREAM || method == listen::LISTEN_ALIAS)
            .then(|| self.conn.as_ref().map(|conn| conn.hold_stream_id(&ctx.id)));
        let params = params.unwrap_or(Value::Null);
        self.admit(&ctx)?;
        let socket = self.conn.is_some();
        if socket && method == methods::STATUS {
            let state = serde_json::to_value(self.daemon.state())
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            return Ok(complete(state));
        }
        // Sent by `tidings token rotate` after it wrote a new token to the keychain.
        if socket && method == methods::TOKEN_ROTATE {
            return reload_token(&self.daemon).await.map(complete);
        }
        self.note_agent(&ctx);
        let events_method = methods::is_events(&method) || method == listen::LISTEN_ALIAS;
        if !events_method {
            return Err(ErrorData::method_not_found_with_name(&method));
        }
        if let Err(mut legacy) = era(&ctx) {
            // Over HTTP nothing is remembered of an `initialize`: rmcp takes a request with
            // neither `_meta` nor a version header for 2025-03-26 (an older version in the
            // header is refused by the guard before this), so say what the request did.
            if self.conn.is_none() && matches!(legacy, errors::LegacyEra::Initialized(_)) {
                legacy = errors::LegacyEra::Undeclared;
            }
            return Err(legacy_method(shown(&method), &legacy));
        }
        match method.as_str() {
            methods::EVENTS_LIST => {
                // The account map is a small file, read only here (never the index).
                let accounts = self.daemon.engine().mail_accounts();
                let webhook = self.conn(&ctx).is_ok_and(|c| c.authenticated());
                Ok(list::list(&self.settings_seen(&ctx), &accounts, webhook))
            }
            methods::EVENTS_POLL => {
                let conn = self.conn(&ctx)?;
                poll::poll(&self.daemon, &conn, params).await
            }
            methods::EVENTS_STREAM => {
                let conn = self.conn(&ctx)?;
                stream::stream(&self.daemon, &conn, params, ctx).await
            }
            methods::EVENTS_SUBSCRIBE => {
                let conn = self.conn(&ctx)?;
                crate::webhooks::subscribe(&self.daemon, &conn, &params)
                    .await
                    .map(complete)
            }
            methods::EVENTS_UNSUBSCRIBE => {
                let conn = self.conn(&ctx)?;
                crate::webhooks::unsubscribe(&self.daemon, &conn, &params).map(complete)
            }
            m if m == listen::LISTEN_ALIAS => {
                let conn = self.conn(&ctx)?;
                listen::listen(&self.daemon, &conn, params, ctx).await
            }
            _ => Err(ErrorData::method_not_found_with_name(&method)),
        }
    }

    /// The pull tools on both eras, and the demo's levers. A legacy socket connection that
    /// listed them gets `notifications/tools/list_changed` from now on; on 2026-07-28 that
    /// notification comes through `subscriptions/listen` (`toolsListChanged`).
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.admit(&ctx)?;
        self.note_agent(&ctx);
        if let Some(conn) = &self.conn
            && era(&ctx).is_err()
        {
            pull::watch_tool_list(
                &self.pull,
                &self.daemon,
                ctx.peer.clone(),
                conn.closed.clone(),
            );
        }
        let mut all = pull::tools(&self.settings_seen(&ctx));
        if self.daemon.demo().is_some() {
            all.extend(tools::tools());
        }
        Ok(ListToolsResult::with_all_items(all))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.admit(&ctx)?;
        self.note_agent(&ctx);
        if pull::is_pull_tool(&request.name) {
            let conn = self.conn(&ctx).ok();
            return pull::call(
                &self.daemon,
                conn,
                self.conn.is_some().then_some(&*self.pull),
                request,
                ctx,
            )
            .await
            .map(CallToolResponse::Complete);
        }
        match self.daemon.demo() {
            Some(demo) => tools::call(demo, &self.daemon, request)
                .await
                .map(CallToolResponse::Complete),
            None => Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; the tools are {} and {}",
                    tidings_core::text::sanitize(&request.name, 64),
                    pull::CHECK,
                    pull::WAIT
                ),
                Some(json!({data::FIELD: "name"})),
            )),
        }
    }
}

/// `tidings/token/rotate` on the socket: reload the HTTP token, or say why not.
async fn reload_token(daemon: &Daemon) -> Result<Value, ErrorData> {
    let Some(reload) = daemon.token_reload() else {
        return Ok(Rotation::declined(rotation::HTTP_OFF).into());
    };
    tokio::task::spawn_blocking(move || reload.reload_blocking())
        .await
        .map_err(|e| ErrorData::internal_error(format!("token reload panicked: {e}"), None))?
        .map_err(|e| ErrorData::internal_error(e, None))
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
