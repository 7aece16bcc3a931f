//! The params of `events/subscribe` and `events/unsubscribe`, checked: the shared fields
//! through core's [`SubscriptionParams`], then `delivery` and `ttlMs`. Every refusal is
//! `InvalidParams` naming the field, and never echoes a secret.

use rmcp::ErrorData;
use serde_json::{Map, Value, json};
use tidings_core::{Cursor, RequestError, SubscriptionParams};
use tidings_protocol::errors::data;
use tidings_webhook::{CallbackUrl, Secret};

/// The TTL granted when a subscribe does not suggest one: a day.
pub const DEFAULT_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// The shortest TTL granted: a shorter suggestion is clamped up to it.
pub const MIN_TTL_MS: u64 = 60 * 1000;
/// The longest finite TTL granted: a longer suggestion gets this.
pub const MAX_TTL_MS: u64 = 30 * 24 * 60 * 60 * 1000;

/// What `ttlMs` asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// Absent: the default.
    Default,
    /// `null`: no expiry.
    Never,
    /// A suggestion in ms.
    Suggested(u64),
}

impl Ttl {
    /// The TTL granted, in ms; `None` is no expiry.
    pub fn granted(self) -> Option<u64> {
        match self {
            Ttl::Default => Some(DEFAULT_TTL_MS),
            Ttl::Never => None,
            Ttl::Suggested(ms) => Some(ms.clamp(MIN_TTL_MS, MAX_TTL_MS)),
        }
    }
}

/// A checked `events/subscribe`.
#[derive(Debug)]
pub struct Subscribe {
    pub name: String,
    pub arguments: Map<String, Value>,
    pub url: CallbackUrl,
    pub secret: Secret,
    pub cursor: Option<Cursor>,
    pub max_age_ms: Option<u64>,
    pub ttl: Ttl,
}

/// A checked `events/unsubscribe`.
#[derive(Debug)]
pub struct Unsubscribe {
    pub name: String,
    pub arguments: Map<String, Value>,
    pub url: CallbackUrl,
}

/// Parse `events/subscribe`'s params; `core` turns a core error into the wire's.
pub fn subscribe(
    params: &Value,
    core: impl Fn(RequestError) -> ErrorData,
) -> Result<Subscribe, ErrorData> {
    let shared = SubscriptionParams::parse(params).map_err(&core)?;
    let delivery = delivery(params)?;
    match delivery.get("mode") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if m == "webhook" => {}
        Some(Value::String(m)) => {
            return Err(invalid(
                "delivery.mode",
                format!(
                    "delivery.mode `{}`: events/subscribe is webhook delivery only; poll with \
                     events/poll, push with events/stream",
                    tidings_core::text::sanitize(m, 32)
                ),
            ));
        }
        Some(_) => {
            return Err(invalid(
                "delivery.mode",
                "delivery.mode must be \"webhook\"",
            ));
        }
    }
    let url = url(delivery)?;
    let secret = match delivery.get("secret") {
        Some(Value::String(s)) => Secret::parse(s)
            .map_err(|e| invalid("delivery.secret", format!("delivery.secret: {e}")))?,
        None | Some(Value::Null) => {
            return Err(invalid(
                "delivery.secret",
                "delivery.secret is required: a Standard Webhooks secret, `whsec_` and the \
                 base64 of 24 to 64 random bytes",
            ));
        }
        Some(_) => {
            return Err(invalid(
                "delivery.secret",
                "delivery.secret must be a string",
            ));
        }
    };
    let ttl = match params.get("ttlMs") {
        None => Ttl::Default,
        Some(Value::Null) => Ttl::Never,
        Some(v) => match v.as_u64() {
            Some(ms) => Ttl::Suggested(ms),
            None => {
                return Err(invalid(
                    "ttlMs",
                    "ttlMs must be a whole number of milliseconds, or null for no expiry",
                ));
            }
        },
    };
    Ok(Subscribe {
        name: shared.name,
        arguments: shared.arguments,
        url,
        secret,
        cursor: shared.cursor,
        max_age_ms: shared.max_age_ms,
        ttl,
    })
}

/// Parse `events/unsubscribe`'s params.
pub fn unsubscribe(
    params: &Value,
    core: impl Fn(RequestError) -> ErrorData,
) -> Result<Unsubscribe, ErrorData> {
    let shared = SubscriptionParams::parse(params).map_err(&core)?;
    let url = url(delivery(params)?)?;
    Ok(Unsubscribe {
        name: shared.name,
        arguments: shared.arguments,
        url,
    })
}

fn delivery(params: &Value) -> Result<&Map<String, Value>, ErrorData> {
    match params.get("delivery") {
        Some(Value::Object(d)) => Ok(d),
        None | Some(Value::Null) => Err(invalid(
            "delivery",
            "delivery is required: {\"mode\": \"webhook\", \"url\": …, \"secret\": …}",
        )),
        Some(_) => Err(invalid("delivery", "delivery must be an object")),
    }
}

fn url(delivery: &Map<String, Value>) -> Result<CallbackUrl, ErrorData> {
    match delivery.get("url") {
        Some(Value::String(u)) => {
            CallbackUrl::parse(u).map_err(|e| invalid("delivery.url", format!("delivery.url: {e}")))
        }
        None | Some(Value::Null) => Err(invalid("delivery.url", "delivery.url is required")),
        Some(_) => Err(invalid("delivery.url", "delivery.url must be a string")),
    }
}

fn invalid(field: &str, message: impl Into<String>) -> ErrorData {
    ErrorData::invalid_params(message.into(), Some(json!({ data::FIELD: field })))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    fn parse(params: &Value) -> Result<Subscribe, ErrorData> {
        subscribe(params, |e| ErrorData::invalid_params(e.to_string(), None))
    }

    fn field(e: &ErrorData) -> &str {
        e.data.as_ref().unwrap()["field"].as_str().unwrap()
    }

    #[test]
    fn a_full_subscribe_parses() {
        let s = parse(
            &json!({"name": "mail.received", "arguments": {"domains": ["example.com"]},
            "delivery": {"mode": "webhook", "url": "https://hooks.example.com/x", "secret": SECRET},
            "ttlMs": 5000}),
        )
        .unwrap();
        assert_eq!(s.url.as_str(), "https://hooks.example.com/x");
        assert_eq!(s.ttl, Ttl::Suggested(5000));
        assert_eq!(
            s.ttl.granted(),
            Some(MIN_TTL_MS),
            "clamped up, never refused"
        );
    }

    #[test]
    fn ttl_absent_is_the_default_and_null_is_never() {
        let base = json!({"name": "mail.received",
            "delivery": {"url": "https://h.example.com/", "secret": SECRET}});
        assert_eq!(
            parse(&base.clone()).unwrap().ttl.granted(),
            Some(DEFAULT_TTL_MS)
        );
        let mut never = base;
        never["ttlMs"] = Value::Null;
        assert_eq!(parse(&never).unwrap().ttl.granted(), None);
    }

    #[test]
    fn each_bad_field_is_named_and_the_secret_never_echoed() {
        let bad_secret = "whsec_c2hvcnQ=";
        let cases = [
            (json!({"name": "mail.received"}), "delivery"),
            (
                json!({"name": "mail.received", "delivery": {"secret": SECRET}}),
                "delivery.url",
            ),
            (
                json!({"name": "mail.received", "delivery": {"url": "ftp://x.example.com", "secret": SECRET}}),
                "delivery.url",
            ),
            (
                json!({"name": "mail.received", "delivery": {"url": "https://x.example.com"}}),
                "delivery.secret",
            ),
            (
                json!({"name": "mail.received", "delivery": {"url": "https://x.example.com", "secret": bad_secret}}),
                "delivery.secret",
            ),
            (
                json!({"name": "mail.received", "delivery": {"mode": "push", "url": "https://x.example.com", "secret": SECRET}}),
                "delivery.mode",
            ),
            (
                json!({"name": "mail.received", "delivery": {"url": "https://x.example.com", "secret": SECRET}, "ttlMs": "1h"}),
                "ttlMs",
            ),
        ];
        for (params, want) in cases {
            let e = parse(&params).unwrap_err();
            assert_eq!(field(&e), want, "{}", e.message);
            assert!(!e.message.contains("c2hvcnQ"), "{}", e.message);
            assert!(!e.message.contains("MfKQ9r8"), "{}", e.message);
        }
    }
}
