//! Request parameters of `events/poll` and `events/stream`, checked field by field; the
//! subscription they describe is checked in `request/subscription.rs`.
//!
//! Every error names the offending field (`name`, `cursor`, `arguments.from`, …) and says what
//! was expected, so a client can fix its call without reading our source.

use serde_json::{Map, Value};

use crate::cursor::Cursor;
use crate::error::RequestError;

mod subscription;

pub use subscription::{Filter, Subscription, enabled_type};

/// The most events one poll returns, whatever `maxEvents` asks for.
pub const MAX_EVENTS_CAP: u32 = 1000;

/// The parameters shared by `events/poll` and `events/stream`.
#[derive(Clone, Debug, PartialEq)]
pub struct SubscriptionParams {
    /// The event type name, as sent.
    pub name: String,
    /// The subscription arguments (`{}` when absent or null).
    pub arguments: Map<String, Value>,
    /// The position to resume after; `None` for null or absent (start from now).
    pub cursor: Option<Cursor>,
    /// Replay floor in milliseconds.
    pub max_age_ms: Option<u64>,
    /// At most this many events (poll only), already capped at [`MAX_EVENTS_CAP`].
    pub max_events: Option<u32>,
}

impl SubscriptionParams {
    /// Check `params` (with `_meta` already removed or ignored). Unknown members are ignored, as
    /// a later revision may add optional ones (`timeoutMs` in one sketch).
    pub fn parse(params: &Value) -> Result<SubscriptionParams, RequestError> {
        let empty = Map::new();
        let obj = match params {
            Value::Object(o) => o,
            Value::Null => &empty,
            other => {
                return Err(RequestError::invalid(
                    "params",
                    format!("params must be an object, got {}", json_kind(other)),
                ));
            }
        };
        let name = match obj.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) => {
                return Err(RequestError::invalid("name", "name must not be empty"));
            }
            None | Some(Value::Null) => {
                return Err(RequestError::invalid(
                    "name",
                    "name (the event type, a string) is required",
                ));
            }
            Some(other) => {
                return Err(RequestError::invalid(
                    "name",
                    format!("name must be a string, got {}", json_kind(other)),
                ));
            }
        };
        let arguments = match obj.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(other) => {
                return Err(RequestError::invalid(
                    "arguments",
                    format!("arguments must be an object, got {}", json_kind(other)),
                ));
            }
        };
        let cursor = match obj.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(
                s.parse::<Cursor>()
                    .map_err(|e| RequestError::invalid("cursor", e.to_string()))?,
            ),
            Some(other) => {
                return Err(RequestError::invalid(
                    "cursor",
                    format!("cursor must be a string or null, got {}", json_kind(other)),
                ));
            }
        };
        let max_age_ms = non_negative(obj, "maxAgeMs")?;
        let max_events = match non_negative(obj, "maxEvents")? {
            Some(0) => {
                return Err(RequestError::invalid(
                    "maxEvents",
                    "maxEvents must be at least 1",
                ));
            }
            Some(n) => Some(u32::try_from(n).unwrap_or(u32::MAX).min(MAX_EVENTS_CAP)),
            None => None,
        };
        Ok(SubscriptionParams {
            name,
            arguments,
            cursor,
            max_age_ms,
            max_events,
        })
    }
}

/// A non-negative integer field. JSON has one number type, so `5.0` counts as 5; a value too
/// large for 64 bits saturates (every caller caps it anyway).
fn non_negative(obj: &Map<String, Value>, field: &str) -> Result<Option<u64>, RequestError> {
    let wrong = |got: &dyn std::fmt::Display| {
        RequestError::invalid(
            field,
            format!("{field} must be a non-negative integer, got {got}"),
        )
    };
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(v), _) => Ok(Some(v)),
            (None, Some(f)) if f.is_finite() && f >= 0.0 && f.fract() == 0.0 => {
                // `as` saturates at u64::MAX for larger values, which is what we want; the
                // guard above rules out a sign or a fraction.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Ok(Some(f as u64))
            }
            _ => Err(wrong(n)),
        },
        Some(other) => Err(wrong(&json_kind(other))),
    }
}

/// How an error message names a JSON value's type ("a string", "an array", …).
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field_of(e: RequestError) -> String {
        match e {
            RequestError::InvalidParams { field, .. } => field,
            other => panic!("expected InvalidParams, got {other:?}"),
        }
    }

    #[test]
    fn a_missing_or_mistyped_name_is_invalid_params_naming_name() {
        assert_eq!(
            field_of(SubscriptionParams::parse(&json!({})).unwrap_err()),
            "name"
        );
        assert_eq!(
            field_of(SubscriptionParams::parse(&json!({"name": 3})).unwrap_err()),
            "name"
        );
    }

    #[test]
    fn a_garbage_cursor_is_invalid_params_naming_cursor() {
        for c in [json!("garbage"), json!(12), json!({"a": 1})] {
            let e = SubscriptionParams::parse(&json!({"name": "mail.received", "cursor": c}))
                .unwrap_err();
            assert_eq!(field_of(e), "cursor");
        }
    }

    #[test]
    fn null_and_absent_cursor_are_the_same() {
        let a = SubscriptionParams::parse(&json!({"name": "x", "cursor": null})).unwrap();
        let b = SubscriptionParams::parse(&json!({"name": "x"})).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.cursor, None);
    }

    #[test]
    fn max_events_and_max_age_must_be_non_negative_integers() {
        for (k, v) in [
            ("maxEvents", json!(-1)),
            ("maxEvents", json!("5")),
            ("maxEvents", json!(0)),
            ("maxAgeMs", json!(1.5)),
            ("maxAgeMs", json!(-1e30)),
        ] {
            let e = SubscriptionParams::parse(&json!({"name": "x", k: v})).unwrap_err();
            assert_eq!(field_of(e), k);
        }
        let p = SubscriptionParams::parse(&json!({"name": "x", "maxEvents": 1_000_000})).unwrap();
        assert_eq!(p.max_events, Some(MAX_EVENTS_CAP));
    }

    #[test]
    fn whole_floats_count_as_integers_and_huge_values_saturate() {
        let p =
            SubscriptionParams::parse(&json!({"name": "x", "maxEvents": 1.0, "maxAgeMs": 60000.0}))
                .unwrap();
        assert_eq!((p.max_events, p.max_age_ms), (Some(1), Some(60_000)));
        let p =
            SubscriptionParams::parse(&json!({"name": "x", "maxEvents": 1e30, "maxAgeMs": 1e30}))
                .unwrap();
        assert_eq!(
            (p.max_events, p.max_age_ms),
            (Some(MAX_EVENTS_CAP), Some(u64::MAX))
        );
    }
}
