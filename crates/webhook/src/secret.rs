//! A webhook signing secret: `whsec_` and standard base64 of 24..=64 bytes, never shown.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};

/// The fewest key bytes a secret may carry (Standard Webhooks asks for 24 to 64).
pub const MIN_SECRET_BYTES: usize = 24;
/// The most key bytes a secret may carry.
pub const MAX_SECRET_BYTES: usize = 64;

const PREFIX: &str = "whsec_";

/// An HMAC key. Its bytes leave only through [`Secret::to_text`] (for persistence) and the
/// signer; `Debug` prints `Secret(…)` and there is no `Display`, so a log line cannot hold it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    bytes: Vec<u8>,
}

/// Why a secret was refused. No variant carries the text it was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error(
        "a webhook secret starts with \"whsec_\" followed by base64 of {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes"
    )]
    MissingPrefix,
    #[error(
        "a webhook secret is \"whsec_\" followed by standard base64 (A-Z a-z 0-9 + /, padding optional); this one is not valid base64"
    )]
    NotBase64,
    #[error(
        "a webhook secret must decode to {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes; this one decodes to {0} bytes"
    )]
    WrongLength(usize),
}

impl Secret {
    /// Reads `whsec_<base64>`, padded or not.
    pub fn parse(text: &str) -> Result<Secret, SecretError> {
        let encoded = text
            .strip_prefix(PREFIX)
            .ok_or(SecretError::MissingPrefix)?;
        // Padding is optional on the wire: decode without it after trimming any `=`, so a
        // padded and an unpadded spelling give the same key, and misplaced `=` still fail.
        let unpadded = encoded
            .strip_suffix("==")
            .or_else(|| encoded.strip_suffix('='))
            .unwrap_or(encoded);
        let bytes = STANDARD_NO_PAD
            .decode(unpadded)
            .map_err(|_| SecretError::NotBase64)?;
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&bytes.len()) {
            return Err(SecretError::WrongLength(bytes.len()));
        }
        Ok(Secret { bytes })
    }

    /// `whsec_<padded base64>`, the form written to disk.
    pub fn to_text(&self) -> String {
        format!("{PREFIX}{}", STANDARD.encode(&self.bytes))
    }

    /// The HMAC key.
    pub(crate) fn key(&self) -> &[u8] {
        &self.bytes
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(len: usize) -> String {
        STANDARD.encode(vec![7u8; len])
    }

    #[test]
    fn reads_the_reference_secret() {
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(secret.key().len(), 24);
        assert_eq!(secret.to_text(), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    }

    #[test]
    fn padded_and_unpadded_spellings_give_the_same_key() {
        let padded = b64(32);
        assert!(padded.ends_with('='));
        let unpadded = padded.trim_end_matches('=');
        let a = Secret::parse(&format!("whsec_{padded}")).unwrap();
        let b = Secret::parse(&format!("whsec_{unpadded}")).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.key(), &[7u8; 32][..]);
        assert_eq!(b.to_text(), format!("whsec_{padded}"));
    }

    #[test]
    fn the_prefix_is_required() {
        assert_eq!(Secret::parse(&b64(32)), Err(SecretError::MissingPrefix));
        assert_eq!(
            Secret::parse(&format!("WHSEC_{}", b64(32))),
            Err(SecretError::MissingPrefix)
        );
    }

    #[test]
    fn bad_base64_is_refused() {
        assert_eq!(
            Secret::parse("whsec_not*base64!!"),
            Err(SecretError::NotBase64)
        );
        // URL-safe alphabet is not the standard one.
        let url_safe = b64(33).replace('+', "-").replace('/', "_") + "-_";
        assert_eq!(
            Secret::parse(&format!("whsec_{url_safe}")),
            Err(SecretError::NotBase64)
        );
        assert_eq!(
            Secret::parse(&format!("whsec_={}", b64(30))),
            Err(SecretError::NotBase64)
        );
    }

    #[test]
    fn the_length_limits_are_inclusive() {
        assert_eq!(
            Secret::parse(&format!("whsec_{}", b64(23))),
            Err(SecretError::WrongLength(23))
        );
        assert_eq!(
            Secret::parse(&format!("whsec_{}", b64(65))),
            Err(SecretError::WrongLength(65))
        );
        assert!(Secret::parse(&format!("whsec_{}", b64(24))).is_ok());
        assert!(Secret::parse(&format!("whsec_{}", b64(64))).is_ok());
        assert_eq!(Secret::parse("whsec_"), Err(SecretError::WrongLength(0)));
        let message = SecretError::WrongLength(23).to_string();
        assert!(message.contains("24 to 64 bytes"), "{message}");
    }

    #[test]
    fn errors_and_debug_never_show_the_value() {
        let text = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let secret = Secret::parse(text).unwrap();
        let shown = format!("{secret:?} {:?}", Some(secret.clone()));
        assert_eq!(shown, "Secret(…) Some(Secret(…))");
        for bad in [
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_MfKQ9r8G*qrTwjUPD8IL",
            "whsec_MfKQ9r8G",
        ] {
            let error = Secret::parse(bad).unwrap_err();
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains("MfKQ9r8G"), "{shown}");
        }
    }
}
