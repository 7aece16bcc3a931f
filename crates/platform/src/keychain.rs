//! The OS keychain behind a small trait: [`Keychain`] (`get`/`set`/`delete` one secret by
//! account), implemented once over keyring-core ([`KeyringKeychain`]) with the store picked
//! per OS: the login Keychain on macOS (apple-native-keyring-store), the Secret Service on
//! Linux (zbus-secret-service-keyring-store: pure Rust over D-Bus, so the build needs no C
//! library). [`KeyringKeychain::mock`] uses keyring-core's in-memory mock store, which shares
//! state across entries, for unit tests.
//!
//! Why keyring-core rather than `keyring` 4.x: `keyring` is now a thin wrapper, and its
//! maintainers advise depending on keyring-core plus the store crate per OS. Every call blocks
//! (on D-Bus or the Security framework): async callers run it on the blocking pool.
//!
//! Secrets never appear in errors: keyring-core's `BadEncoding` carries the stored bytes, so
//! it is mapped to a message without them.

use std::sync::Arc;

use keyring_core::{CredentialStore, Entry};

/// The service name Tidings' secrets are filed under.
pub const SERVICE: &str = "dev.tidings.Tidings";

/// The account of the loopback HTTP endpoint's bearer token.
pub const HTTP_TOKEN_ACCOUNT: &str = "http-token";

/// One secret per account, under one service.
pub trait Keychain: Send + Sync {
    /// The secret of `account`, or `None` when there is none.
    fn get(&self, account: &str) -> Result<Option<String>, KeychainError>;
    /// Store `secret` for `account`, replacing any previous one.
    fn set(&self, account: &str, secret: &str) -> Result<(), KeychainError>;
    /// Remove the secret of `account`; removing a missing one is not an error.
    fn delete(&self, account: &str) -> Result<(), KeychainError>;
    /// What backs it, for messages ("the macOS login keychain", "the Secret Service").
    fn describe(&self) -> &'static str;
}

/// Why the keychain could not be used. Messages name the store, service and account, and
/// never a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeychainError {
    /// No keychain store exists on this OS, or it could not be opened.
    #[error("{store} is not available: {message}")]
    Unavailable {
        /// What we tried to open.
        store: &'static str,
        /// What the store said.
        message: String,
    },
    /// The store refused or failed one call.
    #[error("{store} could not {action} the secret {service}/{account}: {message}")]
    Access {
        /// What backs the keychain.
        store: &'static str,
        /// `read`, `store` or `delete`.
        action: &'static str,
        /// The service name.
        service: String,
        /// The account name.
        account: String,
        /// What the store said (never the secret).
        message: String,
    },
}

/// A [`Keychain`] over one keyring-core credential store.
#[derive(Clone)]
pub struct KeyringKeychain {
    store: Arc<CredentialStore>,
    service: String,
    describe: &'static str,
}

impl std::fmt::Debug for KeyringKeychain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyringKeychain")
            .field("service", &self.service)
            .field("store", &self.describe)
            .finish()
    }
}

impl KeyringKeychain {
    /// The OS keychain for `service`: the login Keychain on macOS, the Secret Service on
    /// Linux. Opening does not yet talk to it; the first call does.
    pub fn system(service: &str) -> Result<KeyringKeychain, KeychainError> {
        let (store, describe) = system_store()?;
        Ok(KeyringKeychain {
            store,
            service: service.to_owned(),
            describe,
        })
    }

    /// An in-memory keychain (keyring-core's mock store). Clones share its contents; two
    /// separate `mock` calls do not.
    pub fn mock(service: &str) -> KeyringKeychain {
        let store: Arc<CredentialStore> =
            keyring_core::mock::Store::new().expect("the mock store cannot fail to build");
        KeyringKeychain {
            store,
            service: service.to_owned(),
            describe: "the in-memory test keychain",
        }
    }

    fn entry(&self, account: &str, action: &'static str) -> Result<Entry, KeychainError> {
        Entry::new_in_store(&self.store, &self.service, account)
            .map_err(|e| self.access(action, account, &e))
    }

    fn access(
        &self,
        action: &'static str,
        account: &str,
        e: &keyring_core::Error,
    ) -> KeychainError {
        KeychainError::Access {
            store: self.describe,
            action,
            service: self.service.clone(),
            account: account.to_owned(),
            message: safe_message(e),
        }
    }
}

impl Keychain for KeyringKeychain {
    fn get(&self, account: &str) -> Result<Option<String>, KeychainError> {
        match self.entry(account, "read")?.get_password() {
            Ok(secret) => Ok(Some(secret)),
            Err(keyring_core::Error::NoEntry) => Ok(None),
            Err(e) => Err(self.access("read", account, &e)),
        }
    }

    fn set(&self, account: &str, secret: &str) -> Result<(), KeychainError> {
        self.entry(account, "store")?
            .set_password(secret)
            .map_err(|e| self.access("store", account, &e))
    }

    fn delete(&self, account: &str) -> Result<(), KeychainError> {
        match self.entry(account, "delete")?.delete_credential() {
            Ok(()) | Err(keyring_core::Error::NoEntry) => Ok(()),
            Err(e) => Err(self.access("delete", account, &e)),
        }
    }

    fn describe(&self) -> &'static str {
        self.describe
    }
}

/// keyring-core's message, minus anything that could hold the secret.
fn safe_message(e: &keyring_core::Error) -> String {
    match e {
        keyring_core::Error::BadEncoding(_) | keyring_core::Error::BadDataFormat(..) => {
            "the stored secret is not valid UTF-8 text".to_owned()
        }
        other => other.to_string(),
    }
}

#[cfg(target_os = "macos")]
fn system_store() -> Result<(Arc<CredentialStore>, &'static str), KeychainError> {
    const STORE: &str = "the macOS login keychain";
    let store = apple_native_keyring_store::keychain::Store::new().map_err(|e| {
        KeychainError::Unavailable {
            store: STORE,
            message: e.to_string(),
        }
    })?;
    Ok((store, STORE))
}

#[cfg(target_os = "linux")]
fn system_store() -> Result<(Arc<CredentialStore>, &'static str), KeychainError> {
    const STORE: &str = "the Secret Service (D-Bus org.freedesktop.secrets)";
    let store = zbus_secret_service_keyring_store::Store::new().map_err(|e| {
        KeychainError::Unavailable {
            store: STORE,
            message: e.to_string(),
        }
    })?;
    Ok((store, STORE))
}

#[cfg(not(any(target_os = "macos", target_os = "linux")))]
fn system_store() -> Result<(Arc<CredentialStore>, &'static str), KeychainError> {
    Err(KeychainError::Unavailable {
        store: "the OS keychain",
        message: "Tidings supports a keychain on macOS and Linux only".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_secret_is_none_and_delete_of_it_is_ok() {
        let k = KeyringKeychain::mock(SERVICE);
        assert_eq!(k.get(HTTP_TOKEN_ACCOUNT).unwrap(), None);
        k.delete(HTTP_TOKEN_ACCOUNT).unwrap();
    }

    #[test]
    fn set_get_replace_delete_round_trip() {
        let k = KeyringKeychain::mock(SERVICE);
        k.set(HTTP_TOKEN_ACCOUNT, "first").unwrap();
        assert_eq!(k.get(HTTP_TOKEN_ACCOUNT).unwrap().as_deref(), Some("first"));
        k.set(HTTP_TOKEN_ACCOUNT, "second").unwrap();
        assert_eq!(
            k.get(HTTP_TOKEN_ACCOUNT).unwrap().as_deref(),
            Some("second")
        );
        k.delete(HTTP_TOKEN_ACCOUNT).unwrap();
        assert_eq!(k.get(HTTP_TOKEN_ACCOUNT).unwrap(), None);
    }

    #[test]
    fn clones_share_state_and_accounts_are_separate() {
        let a = KeyringKeychain::mock(SERVICE);
        let b = a.clone();
        a.set("one", "1").unwrap();
        assert_eq!(b.get("one").unwrap().as_deref(), Some("1"));
        assert_eq!(b.get("two").unwrap(), None);
        // Another mock is another keychain.
        assert_eq!(KeyringKeychain::mock(SERVICE).get("one").unwrap(), None);
    }

    #[test]
    fn errors_never_carry_the_secret() {
        let e = keyring_core::Error::BadEncoding(b"hunter2".to_vec());
        assert!(!safe_message(&e).contains("hunter2"));
    }

    /// The real Secret Service round trip; runs under `scripts/with-keyring.sh`, which sets
    /// `TIDINGS_TEST_SECRET_SERVICE=1` inside a private D-Bus session with an unlocked
    /// gnome-keyring-daemon.
    #[cfg(target_os = "linux")]
    #[test]
    fn secret_service_round_trip() {
        if std::env::var_os("TIDINGS_TEST_SECRET_SERVICE").is_none_or(|v| v != "1") {
            eprintln!(
                "SKIP secret_service_round_trip: set TIDINGS_TEST_SECRET_SERVICE=1 \
                 (run under scripts/with-keyring.sh) to test the real Secret Service"
            );
            return;
        }
        let service = format!("{SERVICE}.test-{}", std::process::id());
        let k = KeyringKeychain::system(&service).unwrap();
        assert_eq!(k.get(HTTP_TOKEN_ACCOUNT).unwrap(), None);
        k.set(HTTP_TOKEN_ACCOUNT, "first-token").unwrap();
        assert_eq!(
            k.get(HTTP_TOKEN_ACCOUNT).unwrap().as_deref(),
            Some("first-token")
        );
        // Rotate: a second set replaces, it does not add an ambiguous twin.
        k.set(HTTP_TOKEN_ACCOUNT, "rotated-token").unwrap();
        let fresh = KeyringKeychain::system(&service).unwrap();
        assert_eq!(
            fresh.get(HTTP_TOKEN_ACCOUNT).unwrap().as_deref(),
            Some("rotated-token")
        );
        fresh.delete(HTTP_TOKEN_ACCOUNT).unwrap();
        assert_eq!(k.get(HTTP_TOKEN_ACCOUNT).unwrap(), None);
    }
}
