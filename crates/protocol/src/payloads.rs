//! Typed params: the stream notifications (`active`, `heartbeat`, `error`, `terminated`), a
//! listen's filter and its acknowledgement, a cancellation, and `tidings/token/rotate`'s
//! result. Each serialises to the members the wire has, and reads back from them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::errors::ErrorObject;

/// `notifications/events/active`: the stream is open at `cursor`; `truncated` when events
/// before it are lost (a rebuilt store, a cursor too old, or the `maxAgeMs` floor).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Active {
    /// Where the stream stands; null while its store cannot be read and the client gave
    /// none.
    pub cursor: Option<String>,
    /// Events between the client's cursor and this one are gone.
    #[serde(default)]
    pub truncated: bool,
}

/// `notifications/events/heartbeat`: nothing new; the position to persist.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// Where the stream stands: the client's own cursor until the stream has resolved one.
    pub cursor: Option<String>,
}

/// `notifications/events/error` (a passing failure: the stream stays open) and
/// `notifications/events/terminated` (the stream ends): the error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorNote {
    /// What happened.
    pub error: ErrorObject,
}

/// A listen's filter (`subscriptions/listen`'s params) and what its acknowledgement
/// (`notifications/subscriptions/acknowledged`) accepted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listen {
    /// The list changes asked for, or accepted.
    pub notifications: ListChanges,
}

/// The list changes of a listen; a change not asked for is left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChanges {
    /// `notifications/events/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub events_list_changed: bool,
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub tools_list_changed: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_false(b: &bool) -> bool {
    !b
}

/// `notifications/cancelled`: the request the client gave up on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cancelled {
    /// The cancelled request's id, in its own JSON type.
    pub request_id: Value,
    /// Why, for the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `tidings/token/rotate`'s result (before its `resultType` and `_meta`): whether the
/// daemon switched to the new token, and if not, why ([`rotation`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rotation {
    /// The daemon serves the new token now.
    #[serde(default)]
    pub rotated: bool,
    /// Why not ([`rotation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The streams opened with the old token, ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams_ended: Option<u64>,
}

impl Rotation {
    /// Switched, ending `streams_ended` streams.
    pub fn done(streams_ended: u64) -> Rotation {
        Rotation {
            rotated: true,
            reason: None,
            streams_ended: Some(streams_ended),
        }
    }

    /// Not switched, for `reason` ([`rotation`]).
    pub fn declined(reason: &str) -> Rotation {
        Rotation {
            rotated: false,
            reason: Some(reason.to_owned()),
            streams_ended: None,
        }
    }
}

/// Each payload as the params (or result) value a transport takes.
macro_rules! into_value {
    ($($payload:ty),*) => {$(
        impl From<$payload> for Value {
            fn from(payload: $payload) -> Value {
                serde_json::to_value(payload)
                    .expect("a payload is strings, numbers, bools and JSON values")
            }
        }
    )*};
}
into_value!(Active, Heartbeat, ErrorNote, Listen, Cancelled, Rotation);

/// Why a [`Rotation`] did not switch.
pub mod rotation {
    /// The daemon serves no HTTP endpoint.
    pub const HTTP_OFF: &str = "http_off";
    /// The endpoint serves without a token (`--no-auth`).
    pub const NO_AUTH: &str = "no_auth";
    /// The keychain holds the token already in force.
    pub const UNCHANGED: &str = "unchanged";
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_stream_notifications_have_the_wire_members() {
        let active = Active {
            cursor: Some("c".into()),
            truncated: true,
        };
        assert_eq!(
            serde_json::to_value(&active).unwrap(),
            json!({"cursor": "c", "truncated": true})
        );
        assert_eq!(
            serde_json::to_value(Heartbeat { cursor: None }).unwrap(),
            json!({"cursor": null})
        );
        let note = ErrorNote {
            error: ErrorObject {
                code: -32023,
                message: "m".into(),
                data: Some(json!({"kind": "event"})),
            },
        };
        assert_eq!(
            serde_json::to_value(&note).unwrap(),
            json!({"error": {"code": -32023, "message": "m", "data": {"kind": "event"}}})
        );
        let read: Active = serde_json::from_value(json!({"cursor": "c"})).unwrap();
        assert!(!read.truncated);
    }

    #[test]
    fn a_listen_names_only_what_it_asks_for() {
        let listen = Listen {
            notifications: ListChanges {
                tools_list_changed: true,
                ..ListChanges::default()
            },
        };
        assert_eq!(
            serde_json::to_value(&listen).unwrap(),
            json!({"notifications": {"toolsListChanged": true}})
        );
        assert_eq!(
            serde_json::to_value(Listen::default()).unwrap(),
            json!({"notifications": {}})
        );
    }

    #[test]
    fn a_cancellation_and_a_rotation_have_the_wire_members() {
        let cancelled = Cancelled {
            request_id: json!(5),
            reason: None,
        };
        assert_eq!(
            serde_json::to_value(&cancelled).unwrap(),
            json!({"requestId": 5})
        );
        assert_eq!(
            serde_json::to_value(Rotation::done(2)).unwrap(),
            json!({"rotated": true, "streamsEnded": 2})
        );
        assert_eq!(
            Value::from(Rotation::declined(rotation::HTTP_OFF)),
            json!({"rotated": false, "reason": "http_off"})
        );
    }
}
