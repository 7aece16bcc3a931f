//! The JSON-RPC 2.0 envelope every frame shares: its `jsonrpc` version and the four frames
//! (request, notification, result, error) as JSON values.

use serde::Serialize;
use serde_json::{Value, json};

/// The literal of [`VERSION`], for frames built as one constant (`event.rs`).
macro_rules! version {
    () => {
        "2.0"
    };
}
pub(crate) use version;

/// The `jsonrpc` member of every frame.
pub const VERSION: &str = version!();

/// A request frame: `{"id", "jsonrpc", "method", "params"}`.
pub fn request(id: impl Serialize, method: &str, params: impl Serialize) -> Value {
    json!({"jsonrpc": VERSION, "id": id, "method": method, "params": params})
}

/// A notification frame with `params`.
pub fn notification(method: &str, params: impl Serialize) -> Value {
    json!({"jsonrpc": VERSION, "method": method, "params": params})
}

/// A notification frame without `params`.
pub fn bare_notification(method: &str) -> Value {
    json!({"jsonrpc": VERSION, "method": method})
}

/// A result frame answering `id`.
pub fn result(id: impl Serialize, result: impl Serialize) -> Value {
    json!({"jsonrpc": VERSION, "id": id, "result": result})
}

/// An error frame answering `id` (null when it is unknown); `error` is the `{code, message,
/// data}` object ([`crate::errors::ErrorObject`] or an equivalent).
pub fn error(id: impl Serialize, error: impl Serialize) -> Value {
    json!({"jsonrpc": VERSION, "id": id, "error": error})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_have_the_envelope() {
        assert_eq!(
            request(1, "events/list", json!({})).to_string(),
            r#"{"id":1,"jsonrpc":"2.0","method":"events/list","params":{}}"#
        );
        assert_eq!(
            notification("notifications/progress", json!({"progress": 1})).to_string(),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#
        );
        assert_eq!(
            bare_notification("notifications/initialized").to_string(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        assert_eq!(
            result("a", json!({})).to_string(),
            r#"{"id":"a","jsonrpc":"2.0","result":{}}"#
        );
        assert_eq!(
            error(Value::Null, json!({"code": -32700, "message": "m"})).to_string(),
            r#"{"error":{"code":-32700,"message":"m"},"id":null,"jsonrpc":"2.0"}"#
        );
    }
}
