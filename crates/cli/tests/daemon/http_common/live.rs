//! The endpoint under its settings supervisor, as `tidings serve` runs it: a demo daemon, an
//! [`HttpSupervisor`] with a mock keychain, and helpers to flip `[http]` live, wait on the
//! endpoint's state, and ask the Unix socket side (a duplex stream into `serve_connection`).

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use serde_json::Value;
use tidings_platform::keychain::{HTTP_TOKEN_ACCOUNT, SERVICE};
use tidings_platform::{Keychain, KeyringKeychain};
use tidings_server::daemon::Daemon;
use tidings_server::demo::{Demo, DemoHome};
use tidings_server::http::auth::AuthMode;
use tidings_server::http::supervisor::{AuthSource, HttpState, HttpSupervisor};

use super::{Call, demo_daemon, within};

/// A demo daemon whose endpoint follows `[http]` (or `--http`, with `forced`).
pub struct Live {
    pub daemon: Daemon,
    pub keychain: KeyringKeychain,
    pub http: HttpSupervisor,
    _demo: Demo,
    _home: DemoHome,
}

impl Live {
    /// Settings decide (they start with `[http]` off).
    pub async fn start() -> Live {
        Live::start_forced(None).await
    }

    /// With `Some(addr)`, as `serve --http addr`.
    pub async fn start_forced(forced: Option<SocketAddr>) -> Live {
        let (daemon, demo, home) = demo_daemon(|_| {});
        let keychain = KeyringKeychain::mock(SERVICE);
        let source = keychain.clone();
        let auth: AuthSource = Arc::new(move || Ok(AuthMode::Token(Arc::new(source.clone()))));
        let http = HttpSupervisor::start(&daemon, forced, auth).await.unwrap();
        Live {
            daemon,
            keychain,
            http,
            _demo: demo,
            _home: home,
        }
    }

    /// Settings with `[http]` enabled on `listen` from the start, and `auth` for the
    /// keychain; the supervisor is spawned, not waited for (as `serve` runs it).
    pub fn spawn_with(listen: SocketAddr, auth: AuthSource) -> Live {
        let (daemon, demo, home) = demo_daemon(|_| {});
        daemon
            .update_settings(|s| {
                s.http.enabled = true;
                s.http.listen = listen;
            })
            .unwrap();
        let keychain = KeyringKeychain::mock(SERVICE);
        let http = HttpSupervisor::spawn(&daemon, None, auth);
        Live {
            daemon,
            keychain,
            http,
            _demo: demo,
            _home: home,
        }
    }

    /// Set `[http] enabled` and `listen`, as the menu would (saved, then applied).
    pub fn set_http(&self, enabled: bool, listen: SocketAddr) {
        self.daemon
            .update_settings(|s| {
                s.http.enabled = enabled;
                s.http.listen = listen;
            })
            .unwrap();
    }

    /// Wait (capped) until the endpoint's state satisfies `pred`; returns it.
    pub async fn wait_state(&self, pred: impl Fn(&HttpState) -> bool) -> HttpState {
        let mut rx = self.http.subscribe();
        within(async { rx.wait_for(|s| pred(s)).await.unwrap().clone() }).await
    }

    /// Wait until the endpoint serves on exactly `addr`.
    pub async fn wait_serving(&self, addr: SocketAddr) {
        self.wait_state(|s| matches!(s, HttpState::Serving { addr: a, .. } if *a == addr))
            .await;
    }

    /// The token in the keychain, if one was made.
    pub fn token(&self) -> Option<String> {
        self.keychain.get(HTTP_TOKEN_ACCOUNT).unwrap()
    }

    /// A request to the endpoint on `addr`, with the keychain's token.
    pub fn request(&self, addr: SocketAddr, id: u64, method: &str, params: Value) -> Call {
        let token = self.token().expect("no token in the keychain yet");
        super::request(addr, &token, id, method, params)
    }

    /// One request on a fresh socket connection; its answer.
    pub async fn socket_call(&self, method: &str, params: Value) -> Value {
        super::socket_call(&self.daemon, method, params).await
    }
}

/// A loopback address with a port free a moment ago (bound, then released), so the test knows
/// the URL before the endpoint binds it.
pub fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// Whether nothing listens on `addr` any more: a connection is refused.
pub async fn refused(addr: SocketAddr) -> bool {
    match within(tokio::net::TcpStream::connect(addr)).await {
        Ok(_) => false,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionRefused,
    }
}
