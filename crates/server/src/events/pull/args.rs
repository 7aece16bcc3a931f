//! The pull tools' arguments, checked: every error names the argument and the limit, in
//! words a model can act on. The sender filters are passed on to core unchanged, per type.

use serde_json::{Map, Value};
use tidings_core::EventType;
use tidings_core::descriptor::argument_names;
use tidings_core::request::json_kind;
use tidings_core::text::sanitize;

use super::cursor::ToolCursor;
use super::{DEFAULT_EVENTS, MAX_EVENTS};

/// The filters a call may pass, each taken by the types that accept it.
const FILTERS: &[&str] = &[
    "from",
    "domains",
    "mailboxes",
    "account",
    "chats",
    "service",
    "categories",
];

/// Where a call starts.
#[derive(Clone, Debug, PartialEq)]
pub enum CursorArg {
    /// No `cursor`: where this connection's last call on the same types ended.
    Omitted,
    /// `cursor: null`: from now.
    FromNow,
    /// A cursor a previous result returned.
    Given(ToolCursor),
}

/// A checked call.
#[derive(Clone, Debug)]
pub struct PullArgs {
    /// The types asked for, in `EventType::ALL` order without repeats; `None`: every type on.
    pub events: Option<Vec<EventType>>,
    pub cursor: CursorArg,
    pub max_events: u32,
    /// `tidings_wait` only.
    pub timeout_s: Option<f64>,
    /// The sender filters, as sent.
    pub filters: Map<String, Value>,
}

impl PullArgs {
    /// Check `arguments` of `tidings_check` (or, with `waits`, `tidings_wait`).
    pub fn parse(arguments: Option<&Map<String, Value>>, waits: bool) -> Result<PullArgs, String> {
        let empty = Map::new();
        let args = arguments.unwrap_or(&empty);
        let tool = if waits { super::WAIT } else { super::CHECK };
        for key in args.keys() {
            let known = ["events", "cursor", "max_events"].contains(&key.as_str())
                || FILTERS.contains(&key.as_str())
                || (waits && key == "timeout_s");
            if !known {
                let mut takes = vec!["events", "cursor", "max_events"];
                if waits {
                    takes.push("timeout_s");
                }
                takes.extend(FILTERS);
                return Err(format!(
                    "unknown argument `{}`; {tool} takes {}",
                    sanitize(key, 64),
                    takes.join(", ")
                ));
            }
        }
        let events = match args.get("events") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) if !items.is_empty() => {
                let mut types = Vec::new();
                for item in items {
                    let name = item.as_str().unwrap_or_default();
                    let ty = EventType::from_name(name).ok_or_else(|| {
                        format!(
                            "events: unknown event type {}; the types are {}",
                            serde_json::to_string(&sanitize(name, 64)).unwrap_or_default(),
                            EventType::ALL.map(EventType::name).join(", ")
                        )
                    })?;
                    types.push(ty);
                }
                Some(
                    EventType::ALL
                        .into_iter()
                        .filter(|t| types.contains(t))
                        .collect(),
                )
            }
            Some(other) => {
                return Err(format!(
                    "events must be a non-empty array of event type names, got {}",
                    json_kind(other)
                ));
            }
        };
        let cursor = match args.get("cursor") {
            None => CursorArg::Omitted,
            Some(Value::Null) => CursorArg::FromNow,
            Some(Value::String(s)) => CursorArg::Given(ToolCursor::parse(s)?),
            Some(other) => {
                return Err(format!(
                    "cursor must be a string or null, got {}",
                    json_kind(other)
                ));
            }
        };
        let max_events = match args.get("max_events") {
            None | Some(Value::Null) => DEFAULT_EVENTS,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=u64::from(MAX_EVENTS)).contains(&n) => {
                    u32::try_from(n).unwrap_or(MAX_EVENTS)
                }
                _ => {
                    return Err(format!(
                        "max_events must be an integer from 1 to {MAX_EVENTS}, got {}",
                        sanitize(&v.to_string(), 32)
                    ));
                }
            },
        };
        let timeout_s = match args.get("timeout_s") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_f64() {
                // Any length is accepted: the host's ceiling clamps it.
                Some(s) if s.is_finite() && s >= 0.0 => Some(s),
                _ => {
                    return Err(format!(
                        "timeout_s must be a non-negative number of seconds (it is clamped \
                         below your host's tool timeout), got {}",
                        sanitize(&v.to_string(), 32)
                    ));
                }
            },
        };
        let filters = args
            .iter()
            .filter(|(k, _)| FILTERS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(PullArgs {
            events,
            cursor,
            max_events,
            timeout_s,
            filters,
        })
    }

    /// Refuse a filter none of `types` takes (`chats` on mail alone), rather than drop it.
    pub fn check_filters_apply(&self, types: &[EventType]) -> Result<(), String> {
        for key in self.filters.keys() {
            if !types
                .iter()
                .any(|t| argument_names(*t).contains(&key.as_str()))
            {
                let owners: Vec<&str> = EventType::ALL
                    .into_iter()
                    .filter(|t| argument_names(*t).contains(&key.as_str()))
                    .map(EventType::name)
                    .collect();
                let asked: Vec<&str> = types.iter().map(|t| t.name()).collect();
                return Err(format!(
                    "`{key}` applies to {} only, and this call reads {}",
                    owners.join(", "),
                    asked.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// The subscription arguments of `ty`: the filters it takes.
    pub fn arguments_for(&self, ty: EventType) -> Map<String, Value> {
        self.filters
            .iter()
            .filter(|(k, _)| argument_names(ty).contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: &Value, waits: bool) -> Result<PullArgs, String> {
        PullArgs::parse(v.as_object(), waits)
    }

    #[test]
    fn errors_name_the_argument_and_the_limit() {
        let e = parse(&json!({"max_events": 500}), false).unwrap_err();
        assert!(
            e.starts_with("max_events must be an integer from 1 to 100"),
            "{e}"
        );
        let e = parse(&json!({"timeout_s": 5}), false).unwrap_err();
        assert!(e.contains("unknown argument `timeout_s`"), "{e}");
        let e = parse(&json!({"timeout_s": -1}), true).unwrap_err();
        assert!(
            e.starts_with("timeout_s must be a non-negative number"),
            "{e}"
        );
        let e = parse(&json!({"events": ["mail.sent"]}), false).unwrap_err();
        assert!(e.contains("unknown event type \"mail.sent\""), "{e}");
        let e = parse(&json!({"cursor": 5}), false).unwrap_err();
        assert!(e.starts_with("cursor must be a string or null"), "{e}");
    }

    #[test]
    fn filters_go_to_the_types_that_take_them() {
        let a = parse(
            &json!({"domains": ["example.com"], "chats": ["chat1"]}),
            false,
        )
        .unwrap();
        assert_eq!(a.cursor, CursorArg::Omitted);
        assert_eq!(a.max_events, DEFAULT_EVENTS);
        let mail = a.arguments_for(EventType::MailReceived);
        assert!(mail.contains_key("domains") && !mail.contains_key("chats"));
        let e = a
            .check_filters_apply(&[EventType::MailReceived])
            .unwrap_err();
        assert!(
            e.starts_with("`chats` applies to messages.received only"),
            "{e}"
        );
        let a = parse(&json!({"cursor": null}), true).unwrap();
        assert_eq!(a.cursor, CursorArg::FromNow);
    }
}
