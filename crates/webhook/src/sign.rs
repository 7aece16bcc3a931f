//! The `webhook-signature` header: `v1,<base64 HMAC-SHA256>` per secret, space-separated.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;

use crate::secret::Secret;

/// Signs `id.timestamp.body` with each secret, in order: the newest first while a rotated
/// secret still signs beside it, so a receiver holding either one accepts the delivery.
pub fn signature(secrets: &[&Secret], id: &str, timestamp: i64, body: &[u8]) -> String {
    let timestamp = timestamp.to_string();
    secrets
        .iter()
        .map(|secret| {
            let mut mac = Hmac::<Sha256>::new_from_slice(secret.key())
                .expect("HMAC takes a key of any length");
            mac.update(id.as_bytes());
            mac.update(b".");
            mac.update(timestamp.as_bytes());
            mac.update(b".");
            mac.update(body);
            format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{HeaderMap, HeaderValue};
    use standardwebhooks::Webhook;

    const REFERENCE_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    #[test]
    fn matches_the_standard_webhooks_test_vector() {
        let secret = Secret::parse(REFERENCE_SECRET).unwrap();
        let header = signature(
            &[&secret],
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(header, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    fn headers(id: &str, timestamp: i64, signature: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("webhook-id", HeaderValue::from_str(id).unwrap());
        headers.insert(
            "webhook-timestamp",
            HeaderValue::from_str(&timestamp.to_string()).unwrap(),
        );
        headers.insert(
            "webhook-signature",
            HeaderValue::from_str(signature).unwrap(),
        );
        headers
    }

    fn now() -> i64 {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        i64::try_from(since.as_secs()).unwrap()
    }

    #[test]
    fn the_reference_crate_verifies_our_signature() {
        let text = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
        let secret = Secret::parse(text).unwrap();
        let body = br#"{"eventId":"e1","name":"mail.received","data":{}}"#;
        let ts = now();
        let header = signature(&[&secret], "msg_1", ts, body);
        let verifier = Webhook::new(text).unwrap();
        verifier
            .verify(body, &headers("msg_1", ts, &header))
            .unwrap();
        // A changed body, id or timestamp does not verify.
        assert!(
            verifier
                .verify(b"{}", &headers("msg_1", ts, &header))
                .is_err()
        );
        assert!(
            verifier
                .verify(body, &headers("msg_2", ts, &header))
                .is_err()
        );
        assert!(
            verifier
                .verify(body, &headers("msg_1", ts - 1, &header))
                .is_err()
        );
    }

    #[test]
    fn while_rotating_both_secrets_sign_and_either_verifies() {
        let new_text = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
        let old_text = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let new = Secret::parse(new_text).unwrap();
        let old = Secret::parse(old_text).unwrap();
        let body = br#"{"type":"gap","cursor":"c1"}"#;
        let ts = now();
        let header = signature(&[&new, &old], "msg_gap_ab12", ts, body);
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(parts.len(), 2, "{header}");
        assert_eq!(parts[0], signature(&[&new], "msg_gap_ab12", ts, body));
        assert_eq!(parts[1], signature(&[&old], "msg_gap_ab12", ts, body));
        for text in [new_text, old_text] {
            Webhook::new(text)
                .unwrap()
                .verify(body, &headers("msg_gap_ab12", ts, &header))
                .unwrap();
        }
        let stranger = Webhook::new("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").unwrap();
        assert!(
            stranger
                .verify(body, &headers("msg_gap_ab12", ts, &header))
                .is_err()
        );
    }
}
