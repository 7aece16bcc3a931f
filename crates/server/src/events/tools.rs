//! Demo mode only: the tools the community conformance suite drives a server with:
//! `events_conformance_yield_error`, `_yield_gap` and `_terminate`, each taking
//! `{"name": <event type>}` and acting through the real mechanism (`DemoControl`), and the
//! webhook controls (`crate::webhooks::controls`).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, Tool};
use serde_json::{Value, json};
use tidings_core::EventType;
use tidings_protocol::errors::data;
use tidings_protocol::tools;

use super::wire::blocking;
use crate::daemon::Daemon;
use crate::demo::{DemoControl, Lever, SettingsEditor};

/// The levers, in the order `tools/list` shows them.
const LEVERS: [Lever; 3] = [Lever::YieldError, Lever::YieldGap, Lever::Terminate];

/// The three tools, with a schema whose `name` enumerates our event types.
pub fn tools() -> Vec<Tool> {
    let names: Vec<&str> = EventType::ALL.iter().map(|t| t.name()).collect();
    let schema = match json!({
        "type": "object",
        "properties": {"name": {"type": "string", "enum": names, "default": names[0]}},
        "required": ["name"],
    }) {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    [
        (Lever::YieldError, "Make the store behind an event type unreadable for a moment: open streams get notifications/events/error, then recover."),
        (Lever::YieldGap, "Rebuild the store behind an event type: open streams get a second notifications/events/active with truncated: true."),
        (Lever::Terminate, "Turn an event type off in settings (and back on shortly): open streams get notifications/events/terminated."),
    ]
    .into_iter()
    .map(|(lever, description)| Tool::new(lever.tool(), description, schema.clone()))
    .chain(crate::webhooks::controls::tools())
    .collect()
}

/// Run one tool. Failures of the lever are tool errors (`isError`), not protocol errors.
/// `terminate` changes the settings through `daemon`, which applies them at once.
pub async fn call(
    demo: &Arc<dyn DemoControl>,
    daemon: &Daemon,
    request: CallToolRequestParams,
) -> Result<CallToolResult, ErrorData> {
    if crate::webhooks::controls::is_control(&request.name) {
        let args = request.arguments.clone().unwrap_or_default();
        return Ok(
            match crate::webhooks::controls::call(daemon, &request.name, &args).await {
                Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
                Err(e) => CallToolResult::error(vec![ContentBlock::text(e)]),
            },
        );
    }
    let Some(lever) = LEVERS.into_iter().find(|l| l.tool() == request.name) else {
        return Err(ErrorData::invalid_params(
            format!(
                "unknown tool `{}`; the tools are {}, {} and the demo's events_conformance_*",
                tidings_core::text::sanitize(&request.name, tidings_core::text::MAX_ECHO_CHARS),
                tools::CHECK,
                tools::WAIT
            ),
            Some(json!({data::FIELD: "name"})),
        ));
    };
    let name = request
        .arguments
        .as_ref()
        .and_then(|a| a.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let Some(ty) = EventType::from_name(&name) else {
        return Err(ErrorData::invalid_params(
            format!(
                "arguments.name must be one of {}",
                EventType::ALL.map(tidings_core::EventType::name).join(", ")
            ),
            Some(json!({data::FIELD: "arguments.name"})),
        ));
    };
    let demo = demo.clone();
    let settings: Arc<dyn SettingsEditor> = Arc::new(daemon.clone());
    let outcome = blocking(move || match lever {
        Lever::YieldError => demo.yield_error(ty),
        Lever::YieldGap => demo.yield_gap(ty),
        Lever::Terminate => demo.terminate(ty, settings),
    })
    .await?;
    Ok(match outcome {
        Ok(()) => CallToolResult::success(vec![ContentBlock::text(format!("done for {ty}"))]),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
    })
}
