//! One signed POST to a subscription's endpoint, and the verification challenge: the body is
//! serialized once and each attempt signs those bytes with a fresh timestamp (Standard
//! Webhooks), with `X-MCP-Subscription-Id` beside the three `webhook-*` headers.

use std::fmt::Write as _;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tidings_webhook::{
    CallbackUrl, Category, Failure, Poster, Secret, Verdict, classify, signature,
};

/// The header that names the subscription a delivery is for.
pub const SUBSCRIPTION_HEADER: &str = "X-MCP-Subscription-Id";

/// The longest `eventId` sent as the `webhook-id` as it is (a Message-ID is at most a header
/// line, 998 bytes).
const MAX_PLAIN_ID: usize = 998;

/// POST `body` to `url`, signed with `secrets` under message id `id`; how it went, and the
/// reply's `Retry-After`, if any.
pub async fn post(
    poster: &Poster,
    url: &CallbackUrl,
    subscription_id: &str,
    secrets: &[Secret],
    id: &str,
    body: &[u8],
) -> (Verdict, Option<std::time::Duration>) {
    let timestamp = unix_seconds();
    let refs: Vec<&Secret> = secrets.iter().collect();
    let headers = [
        ("webhook-id", id.to_owned()),
        ("webhook-timestamp", timestamp.to_string()),
        ("webhook-signature", signature(&refs, id, timestamp, body)),
        (SUBSCRIPTION_HEADER, subscription_id.to_owned()),
    ];
    match poster.post(url, &headers, body.to_vec()).await {
        // Retry-After means "not now" only on 429 and 503; elsewhere it is ignored.
        Ok(reply) => {
            let wait = reply
                .retry_after
                .filter(|_| matches!(reply.status, 429 | 503));
            (classify(&reply), wait)
        }
        Err(failure) => (Verdict::Retry(failure), None),
    }
}

/// The verification challenge: a signed `{"type":"verification","challenge":…}` the endpoint
/// must answer with a 2xx whose JSON body echoes the challenge. `Err` carries the category
/// `events/subscribe` reports (`CallbackEndpointError`'s `data.reason`).
pub async fn challenge(
    poster: &Poster,
    url: &CallbackUrl,
    subscription_id: &str,
    secret: &Secret,
) -> Result<(), Failure> {
    let nonce = random_hex(16);
    let body = json!({"type": "verification", "challenge": nonce}).to_string();
    let id = control_id("verification");
    let timestamp = unix_seconds();
    let headers = [
        ("webhook-id", id.clone()),
        ("webhook-timestamp", timestamp.to_string()),
        (
            "webhook-signature",
            signature(&[secret], &id, timestamp, body.as_bytes()),
        ),
        (SUBSCRIPTION_HEADER, subscription_id.to_owned()),
    ];
    let reply = poster.post(url, &headers, body.into_bytes()).await?;
    match classify(&reply) {
        Verdict::Delivered => {}
        Verdict::Retry(f) | Verdict::Skip(f) => return Err(f),
    }
    let echoed = serde_json::from_slice::<Value>(&reply.body)
        .ok()
        .and_then(|v| {
            v.get("challenge")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    match echoed {
        Some(e) if bool::from(e.as_bytes().ct_eq(nonce.as_bytes())) => Ok(()),
        _ => Err(Failure {
            category: Category::ChallengeFailed,
            detail: format!(
                "the endpoint answered HTTP {} without echoing the challenge as \
                 {{\"challenge\": \"…\"}}",
                reply.status
            ),
        }),
    }
}

/// The `webhook-id` of an event: its `eventId` as it is, which receivers check the body's
/// `eventId` against (the AI SDK's refuses a delivery where the two differ). The signed prefix
/// stays unambiguous with dots in it: the timestamp after it is all digits. Only an id a
/// header cannot carry (a control character, or longer than [`MAX_PLAIN_ID`] bytes) becomes
/// `evt_` and 32 hex digits of its SHA-256. Stable across retries either way.
pub fn event_message_id(event_id: &str) -> String {
    let plain = !event_id.is_empty()
        && event_id.len() <= MAX_PLAIN_ID
        && event_id.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
    if plain {
        return event_id.to_owned();
    }
    let digest = Sha256::digest(event_id.as_bytes());
    let mut id = String::from("evt_");
    for b in &digest[..16] {
        let _ = write!(id, "{b:02x}");
    }
    id
}

/// A control envelope's `webhook-id`: `msg_<type>_<random>`.
pub fn control_id(kind: &str) -> String {
    format!("msg_{kind}_{}", random_hex(12))
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    // The OS's generator; should it ever fail, the clock's nanoseconds still differ per call.
    if getrandom::fill(&mut buf).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        buf = nanos.to_le_bytes()[..bytes.min(16)].to_vec();
    }
    buf.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn unix_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_id_is_the_webhook_id_unless_a_header_cannot_carry_it() {
        assert_eq!(event_message_id("p0123-ABCD"), "p0123-ABCD");
        let message_id = "<abc.123@mail.example.com>";
        assert_eq!(event_message_id(message_id), message_id);
        let hashed = event_message_id("<a\r\nInjected: yes@example.com>");
        assert!(hashed.starts_with("evt_") && hashed.len() == 36, "{hashed}");
        assert_eq!(hashed, event_message_id("<a\r\nInjected: yes@example.com>"));
        assert!(event_message_id(&"x".repeat(999)).starts_with("evt_"));
    }

    #[test]
    fn control_ids_name_their_type_and_differ() {
        let a = control_id("gap");
        assert!(a.starts_with("msg_gap_"), "{a}");
        assert_ne!(a, control_id("gap"));
    }
}
