//! Shapes shared by every events method: `resultType: "complete"` results with the server's
//! info in `_meta`, notifications tagged with their subscription id, the era check, and the
//! hop to a blocking thread for core calls.

use rmcp::model::{
    CustomNotification, CustomResult, NotificationMetaObject, ProtocolVersion, RequestId,
    ServerNotification,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, Peer};
use serde_json::{Value, json};
use tidings_protocol::capabilities::SERVER_NAME;
use tidings_protocol::{fields, meta, versions};

use super::errors::LegacyEra;

/// `{"name": "tidings", "version": …}`.
pub fn server_info() -> Value {
    meta::implementation(SERVER_NAME, env!("CARGO_PKG_VERSION"))
}

/// `body` (an object) with `resultType: "complete"` and `_meta.serverInfo` added.
pub fn complete(mut body: Value) -> CustomResult {
    if let Value::Object(m) = &mut body {
        m.insert(fields::RESULT_TYPE.into(), json!(fields::COMPLETE));
        let found = m.entry(meta::KEY).or_insert_with(|| json!({}));
        if let Value::Object(found) = found {
            found.insert(meta::SERVER_INFO.into(), server_info());
        }
    }
    CustomResult::new(body)
}

/// The final result of a stream or listen request the server closes:
/// `{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId": id}}`.
pub fn final_result(id: &RequestId) -> CustomResult {
    CustomResult::new(json!({
        fields::RESULT_TYPE: fields::COMPLETE,
        meta::KEY: {meta::SUBSCRIPTION_ID: id.clone().into_json_value()},
    }))
}

/// Send `method` with `params` (an object) and `_meta.subscriptionId = id`, the id keeping its
/// own JSON type. Err when the connection is gone.
pub async fn notify(
    peer: &Peer<RoleServer>,
    id: &RequestId,
    method: &str,
    params: Value,
) -> Result<(), rmcp::ServiceError> {
    let mut n = CustomNotification::new(method, Some(params));
    let mut meta = NotificationMetaObject::new();
    meta.set_subscription_id(id.clone());
    n.extensions.insert(meta);
    peer.send_notification(ServerNotification::CustomNotification(n))
        .await
}

/// Whether this request is served in the 2026-07-28 era: the connection did not negotiate an
/// older version through `initialize` (rmcp keeps that in `peer_info`; a connection opened
/// inline has none), and the request itself declares 2026-07-28 or later. Err says which
/// failed, so the refusal can say what is true.
pub fn era(ctx: &RequestContext<RoleServer>) -> Result<(), LegacyEra> {
    let modern = |v: &ProtocolVersion| versions::serves_events(v.as_str());
    if let Some(info) = ctx.peer.peer_info()
        && !modern(&info.protocol_version)
    {
        return Err(LegacyEra::Initialized(info.protocol_version.to_string()));
    }
    match ctx.meta.protocol_version() {
        Some(v) if modern(&v) => Ok(()),
        Some(v) => Err(LegacyEra::Declared(v.to_string())),
        None => Err(LegacyEra::Undeclared),
    }
}

/// Run a synchronous core call on the blocking pool.
pub async fn blocking<T, F>(f: F) -> Result<T, ErrorData>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ErrorData::internal_error(format!("blocking task failed: {e}"), None))
}
