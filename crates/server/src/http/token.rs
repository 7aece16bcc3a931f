//! The HTTP endpoint's bearer token: 32 random bytes from the OS (getrandom), written as
//! unpadded base64url (43 characters), kept only in the OS keychain (service
//! `dev.tidings.Tidings`, account `http-token`) and in the daemon's memory. Never on disk,
//! never in a log: [`Token`]'s `Debug` is redacted and it has no `Display`.
//!
//! Every function here blocks on the keychain; async callers use the blocking pool.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use subtle::ConstantTimeEq;
use tidings_platform::keychain::{HTTP_TOKEN_ACCOUNT, Keychain, KeychainError};

/// Random bytes per token.
pub const TOKEN_BYTES: usize = 32;

/// A bearer token. Compared in constant time; never printed by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// The token's text, for `tidings token show` (the one place it is meant to be seen).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `presented` is this token. Constant time in the content; the length is public
    /// (every token is 43 characters), so a length mismatch may return early.
    pub fn matches(&self, presented: &[u8]) -> bool {
        self.0.as_bytes().ct_eq(presented).into()
    }
}

/// Why a token could not be read, made or stored.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The keychain refused or is missing.
    #[error(transparent)]
    Keychain(#[from] KeychainError),
    /// The OS random source failed.
    #[error("the OS random source failed while making a token: {0}")]
    Random(String),
    /// The keychain holds something that is not a token we made (edited by hand?).
    #[error(
        "the keychain entry {account} does not hold a Tidings token ({len} characters, expected \
         {expected}); run `tidings token rotate` to replace it"
    )]
    Malformed {
        /// The account.
        account: &'static str,
        /// Its length.
        len: usize,
        /// A token's length.
        expected: usize,
    },
}

/// The length of every token we make.
pub const TOKEN_CHARS: usize = (TOKEN_BYTES * 4).div_ceil(3);

/// A fresh random token.
pub fn generate() -> Result<Token, TokenError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    Ok(Token(URL_SAFE_NO_PAD.encode(bytes)))
}

/// The stored token, if any.
pub fn load(keychain: &dyn Keychain) -> Result<Option<Token>, TokenError> {
    match keychain.get(HTTP_TOKEN_ACCOUNT)? {
        None => Ok(None),
        Some(text) => {
            let text = text.trim().to_owned();
            if text.len() != TOKEN_CHARS || URL_SAFE_NO_PAD.decode(&text).is_err() {
                return Err(TokenError::Malformed {
                    account: HTTP_TOKEN_ACCOUNT,
                    len: text.len(),
                    expected: TOKEN_CHARS,
                });
            }
            Ok(Some(Token(text)))
        }
    }
}

/// The stored token, generating and storing one on first use (the endpoint's first enable).
pub fn load_or_create(keychain: &dyn Keychain) -> Result<Token, TokenError> {
    if let Some(token) = load(keychain)? {
        return Ok(token);
    }
    let token = generate()?;
    keychain.set(HTTP_TOKEN_ACCOUNT, token.expose())?;
    tracing::info!(store = keychain.describe(), "generated the HTTP token");
    Ok(token)
}

/// Replace the stored token with a fresh one.
pub fn rotate(keychain: &dyn Keychain) -> Result<Token, TokenError> {
    let token = generate()?;
    keychain.set(HTTP_TOKEN_ACCOUNT, token.expose())?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tidings_platform::KeyringKeychain;
    use tidings_platform::keychain::SERVICE;

    #[test]
    fn tokens_are_43_base64url_chars_and_differ() {
        let (a, b) = (generate().unwrap(), generate().unwrap());
        assert_eq!(a.expose().len(), TOKEN_CHARS);
        assert_eq!(TOKEN_CHARS, 43);
        assert_eq!(URL_SAFE_NO_PAD.decode(a.expose()).unwrap().len(), 32);
        assert_ne!(a, b);
        assert_eq!(format!("{a:?}"), "Token(<redacted>)");
    }

    #[test]
    fn matching_is_exact() {
        let t = generate().unwrap();
        assert!(t.matches(t.expose().as_bytes()));
        assert!(!t.matches(&t.expose().as_bytes()[..42]));
        assert!(!t.matches(b""));
        let mut other = t.expose().as_bytes().to_vec();
        other[42] ^= 1;
        assert!(!t.matches(&other));
    }

    #[test]
    fn first_use_creates_then_reuses_and_rotate_replaces() {
        let k = KeyringKeychain::mock(SERVICE);
        assert!(load(&k).unwrap().is_none());
        let first = load_or_create(&k).unwrap();
        assert_eq!(load_or_create(&k).unwrap(), first);
        let second = rotate(&k).unwrap();
        assert_ne!(second, first);
        assert_eq!(load(&k).unwrap(), Some(second));
    }

    #[test]
    fn a_hand_edited_entry_is_refused_without_echoing_it() {
        let k = KeyringKeychain::mock(SERVICE);
        k.set(HTTP_TOKEN_ACCOUNT, "swordfish").unwrap();
        let err = load(&k).unwrap_err().to_string();
        assert!(
            err.contains("9 characters") && !err.contains("swordfish"),
            "{err}"
        );
    }
}
