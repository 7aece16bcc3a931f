//! A stream's wire: its notifications and event frames, to the socket's writer queue or rmcp.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::RequestId;
use rmcp::service::RoleServer;
use serde_json::{Value, json};
use tidings_core::{EventType, Occurrence};
use tidings_protocol::errors::{data, reason};
use tidings_protocol::event::event_frame;
use tidings_protocol::{jsonrpc, meta, notifications};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::End;
use crate::events::wire::notify;

/// Where a stream's notifications go: the connection's writer queue (a socket connection),
/// else rmcp.
pub(super) struct Wire {
    pub(super) peer: rmcp::Peer<RoleServer>,
    pub(super) id: RequestId,
    /// `id` as JSON, for the frames written directly.
    pub(super) id_json: String,
    pub(super) cancelled: CancellationToken,
    /// How long one frame may wait to be written.
    pub(super) deadline: Duration,
    /// The socket connection's writer queue.
    pub(super) direct: Option<mpsc::WeakSender<Vec<u8>>>,
}

impl Wire {
    /// Send one notification on the stream unless it was cancelled; `End::Closed` when the
    /// stream must end (cancelled, the connection is gone, or the frame could not be written
    /// within the deadline: the client reads nothing, and its slot goes to someone who does).
    pub(super) async fn send(&self, method: &str, mut params: Value) -> Result<(), End> {
        if self.direct.is_none() {
            return self
                .sent(notify(&self.peer, &self.id, method, params))
                .await;
        }
        if let Value::Object(m) = &mut params {
            m.insert(
                meta::KEY.to_owned(),
                json!({meta::SUBSCRIPTION_ID: self.id.clone().into_json_value()}),
            );
        }
        let frame = jsonrpc::notification(method, params);
        let Ok(mut frame) = serde_json::to_vec(&frame) else {
            return Err(End::Closed);
        };
        frame.push(b'\n');
        self.write(frame).await
    }

    /// Send `event` (`json`: the `Occurrence`, encoded); the JSON is copied into the frame
    /// as it is, with the stream's `_meta` added.
    pub(super) async fn send_event(&self, event: &Occurrence, json: &[u8]) -> Result<(), End> {
        let mut frame = Vec::new();
        if self.direct.is_none() || !event_frame(json, &self.id_json, &mut frame) {
            let params = serde_json::to_value(event).map_err(|_| End::Closed)?;
            return self.send(notifications::EVENT, params).await;
        }
        self.write(frame).await
    }

    /// Queue `frame` for the client, within the deadline.
    async fn write(&self, frame: Vec<u8>) -> Result<(), End> {
        let Some(queue) = self.direct.as_ref().and_then(mpsc::WeakSender::upgrade) else {
            return Err(End::Closed);
        };
        self.sent(async move { queue.send(frame).await }).await
    }

    /// Await `send` within the deadline unless the stream is cancelled, before or while it
    /// waits. (Over HTTP a client that hangs up mid-send leaves rmcp's notification unacked:
    /// rmcp's loop has stopped reading and only cancels the request once its drain times out,
    /// so the cancel, not the send, is what ends such a stream.)
    async fn sent<E>(&self, send: impl Future<Output = Result<(), E>>) -> Result<(), End> {
        if self.cancelled.is_cancelled() {
            return Err(End::Closed);
        }
        let within = tokio::select! {
            biased;
            () = self.cancelled.cancelled() => return Err(End::Closed),
            within = tokio::time::timeout(self.deadline, send) => within,
        };
        if let Ok(sent) = within {
            sent.map_err(|_| End::Closed)
        } else {
            tracing::warn!(
                deadline_s = self.deadline.as_secs(),
                "stream ended: its client has read nothing for the write deadline"
            );
            Err(End::Closed)
        }
    }
}

/// The recoverable error for an event of `ty` that could not be encoded: the stream stays
/// open and holds its cursor before the event.
pub(super) fn unencodable(ty: EventType) -> ErrorData {
    ErrorData::internal_error(
        format!("a {ty} event could not be encoded; delivery resumes from it on the next try"),
        Some(json!({data::REASON: reason::ENCODE_FAILED})),
    )
}
