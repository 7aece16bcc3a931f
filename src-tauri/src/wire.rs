//! The bridge between the app (tray and engine) and its settings window process: one JSON
//! object a line, the window's requests on its stdout, the app's replies and events on the
//! window's stdin. Shared by both binaries (`mod wire;` in each).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The window asks the app to run one of its commands (the names in `commands.json`).
#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    /// Chosen by the window; the reply carries it back.
    pub id: u64,
    /// The command's name, as the page invoked it.
    pub command: String,
    /// The page's arguments, as the page sent them (camelCase keys).
    pub args: Value,
}

/// What the app sends the window.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ToWindow {
    /// The answer to request `id`: the command's value, or `{ "message": ... }`.
    Reply {
        /// The request's id.
        id: u64,
        /// `Ok` resolves the page's call, `Err` rejects it.
        result: Result<Value, Value>,
    },
    /// An engine change the page listens for (`state-changed`, `settings-changed`,
    /// `activity-changed`).
    Event {
        /// The event's name.
        name: String,
        /// Its payload.
        payload: Value,
    },
    /// Bring the window to the front (the menu's Settings…, a second launch).
    Show,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The two ends are separate programs: the form on the wire is the contract.
    #[test]
    fn messages_have_one_form_on_the_wire() {
        let reply = ToWindow::Reply {
            id: 3,
            result: Err(json!({ "message": "no" })),
        };
        assert_eq!(
            serde_json::to_value(&reply).unwrap(),
            json!({ "kind": "reply", "id": 3, "result": { "Err": { "message": "no" } } })
        );
        let show: ToWindow = serde_json::from_str(r#"{"kind":"show"}"#).unwrap();
        assert!(matches!(show, ToWindow::Show));
        let request: Request =
            serde_json::from_str(r#"{"id":1,"command":"get_state","args":{}}"#).unwrap();
        assert_eq!((request.id, request.command.as_str()), (1, "get_state"));
    }
}
