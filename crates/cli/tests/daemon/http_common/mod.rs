//! Shared helpers for the HTTP endpoint tests: the engine in-process, a demo daemon (simulator
//! on) with the endpoint on 127.0.0.1 and an ephemeral port, its token in a mock keychain, and
//! a light HTTP/1.1 client (hyper's connection API) with an SSE reader. Every wait is capped by
//! [`WAIT`]. [`live`] runs the endpoint under its settings supervisor instead; [`raw`] speaks
//! HTTP/1.1 by hand on a TCP stream, for requests no well-behaved client would send.

pub mod live;
pub mod raw;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tidings_core::Limits;
use tidings_platform::keychain::{HTTP_TOKEN_ACCOUNT, SERVICE};
use tidings_platform::{Keychain, KeyringKeychain};
use tidings_server::daemon::{Daemon, DaemonConfig};
use tidings_server::demo::{Demo, DemoHome};
use tidings_server::http::auth::AuthMode;
use tidings_server::http::{HttpEndpoint, HttpOptions};
use tidings_server::limits::ServerLimits;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use crate::common::WAIT;

/// A running daemon with its HTTP endpoint.
pub struct Server {
    pub daemon: Daemon,
    pub addr: SocketAddr,
    pub keychain: KeyringKeychain,
    pub auth: Arc<tidings_server::http::auth::HttpAuth>,
    /// The endpoint's own stop token.
    pub stop: CancellationToken,
    /// The endpoint's `serve` task: it ends once every connection is gone.
    pub served: JoinHandle<()>,
    _demo: Demo,
    _home: DemoHome,
}

impl Server {
    /// The demo stores, a simulator every 150 ms, 200 ms heartbeats, and `limits` on top.
    pub async fn start(tune: impl FnOnce(&mut ServerLimits)) -> Server {
        let (daemon, demo, home) = demo_daemon(tune);
        let keychain = KeyringKeychain::mock(SERVICE);
        let endpoint = HttpEndpoint::bind(
            &daemon,
            HttpOptions {
                listen: "127.0.0.1:0".parse().unwrap(),
                auth: AuthMode::Token(Arc::new(keychain.clone())),
            },
        )
        .await
        .unwrap();
        let addr = endpoint.local_addr();
        let auth = endpoint.auth().clone();
        let stop = endpoint.stop_token();
        let served = tokio::spawn(endpoint.serve());
        Server {
            daemon,
            addr,
            keychain,
            auth,
            stop,
            served,
            _demo: demo,
            _home: home,
        }
    }

    /// The token in the keychain.
    pub fn token(&self) -> String {
        self.keychain.get(HTTP_TOKEN_ACCOUNT).unwrap().unwrap()
    }

    /// A request with every header right; tests then change one thing.
    pub fn request(&self, id: u64, method: &str, params: Value) -> Call {
        request(self.addr, &self.token(), id, method, params)
    }

    /// Open streams daemon-wide, waiting (capped) until it equals `n`.
    pub async fn wait_streams(&self, n: usize) {
        wait_streams(&self.daemon, n).await;
    }

    /// What `tidings token rotate` does: a new token in the keychain, then the socket
    /// request. Returns the socket's answer.
    pub async fn rotate(&self) -> Value {
        tidings_server::http::token::rotate(&self.keychain).unwrap();
        socket_call(&self.daemon, "tidings/token/rotate", json!({})).await
    }
}

/// One request (with the 2026-07-28 `_meta`) on a fresh socket-style connection to `daemon`;
/// its answer.
pub async fn socket_call(daemon: &Daemon, method: &str, mut params: Value) -> Value {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let daemon = daemon.clone();
    tokio::spawn(async move { daemon.serve_connection(theirs).await });
    let (read, mut write) = tokio::io::split(ours);
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    write
        .write_all(format!("{request}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    within(BufReader::new(read).read_line(&mut line))
        .await
        .unwrap();
    serde_json::from_str(&line).unwrap()
}

/// A demo daemon (no HTTP endpoint yet): the demo stores, a simulator every 150 ms, 200 ms
/// heartbeats, and `limits` on top.
pub fn demo_daemon(tune: impl FnOnce(&mut ServerLimits)) -> (Daemon, Demo, DemoHome) {
    let home = DemoHome::create(None).unwrap();
    home.lay_out().unwrap();
    let demo = Demo::start(&home, Some(Duration::from_millis(150))).unwrap();
    let mut limits = ServerLimits {
        heartbeat: Duration::from_millis(200),
        ..ServerLimits::default()
    };
    tune(&mut limits);
    let daemon = Daemon::start(DaemonConfig {
        store_paths: home.store_paths(),
        contacts: tidings_server::daemon::ContactsSource::for_demo(&home),
        settings_path: home.settings_path(),
        engine_limits: Limits::default(),
        limits,
        demo: None,
    })
    .unwrap();
    (daemon, demo, home)
}

/// Open streams daemon-wide, waiting (capped) until it equals `n`.
pub async fn wait_streams(daemon: &Daemon, n: usize) {
    within(async {
        while daemon.state().streams != n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

/// A request to the endpoint on `addr` with every header right, bearing `token`.
pub fn request(addr: SocketAddr, token: &str, id: u64, method: &str, params: Value) -> Call {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut headers = vec![
        ("host".to_owned(), format!("127.0.0.1:{}", addr.port())),
        ("content-type".to_owned(), "application/json".to_owned()),
        (
            "accept".to_owned(),
            "application/json, text/event-stream".to_owned(),
        ),
        ("mcp-protocol-version".to_owned(), "2026-07-28".to_owned()),
        ("mcp-method".to_owned(), method.to_owned()),
        ("authorization".to_owned(), format!("Bearer {token}")),
    ];
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        headers.push(("mcp-name".to_owned(), name.to_owned()));
    }
    Call {
        addr,
        headers,
        body: json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
            .to_string()
            .into_bytes(),
    }
}

/// One HTTP request being built.
pub struct Call {
    addr: SocketAddr,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Call {
    /// Replace (or with `None`, remove) a header.
    pub fn header(mut self, name: &str, value: Option<&str>) -> Call {
        self.headers.retain(|(n, _)| n != name);
        if let Some(value) = value {
            self.headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// Send it on a fresh connection.
    pub async fn send(self) -> Reply {
        within(async {
            let stream = tokio::net::TcpStream::connect(self.addr).await.unwrap();
            let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .unwrap();
            let conn = tokio::spawn(async move {
                let _ = conn.await;
            });
            let mut request = Request::post("/mcp");
            for (name, value) in &self.headers {
                request = request.header(name, value);
            }
            let request = request.body(Full::new(Bytes::from(self.body))).unwrap();
            let response = sender.send_request(request).await.unwrap();
            Reply {
                response,
                conn,
                buf: Vec::new(),
            }
        })
        .await
    }
}

/// A response, read as JSON or as SSE; dropping it closes the connection.
pub struct Reply {
    pub response: hyper::Response<Incoming>,
    conn: JoinHandle<()>,
    buf: Vec<u8>,
}

impl Drop for Reply {
    fn drop(&mut self) {
        self.conn.abort();
    }
}

impl Reply {
    pub fn status(&self) -> StatusCode {
        self.response.status()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    }

    /// The whole body as JSON.
    pub async fn json(mut self) -> Value {
        let body = within(async { self.response.body_mut().collect().await.unwrap() }).await;
        serde_json::from_slice(&body.to_bytes()).unwrap()
    }

    /// The next SSE event's data as JSON, or `None` when the stream ended. Panics on a
    /// comment line (`:`): heartbeats must be data frames.
    pub async fn next_event(&mut self) -> Option<Value> {
        within(async {
            loop {
                if let Some(end) = find(&self.buf, b"\n\n") {
                    let block: Vec<u8> = self.buf.drain(..end + 2).collect();
                    let text = String::from_utf8(block).unwrap();
                    let mut data = String::new();
                    for line in text.lines() {
                        assert!(!line.starts_with(':'), "SSE comment line: {line:?}");
                        if let Some(d) = line.strip_prefix("data:") {
                            data.push_str(d.trim_start());
                        }
                    }
                    if data.is_empty() {
                        continue;
                    }
                    return Some(serde_json::from_str(&data).unwrap());
                }
                match self.response.body_mut().frame().await {
                    Some(Ok(frame)) => {
                        if let Some(bytes) = frame.data_ref() {
                            self.buf.extend_from_slice(bytes);
                        }
                    }
                    Some(Err(_)) | None => return None,
                }
            }
        })
        .await
    }

    /// The next event whose method is `method` (others are skipped).
    pub async fn next_method(&mut self, method: &str) -> Value {
        loop {
            let event = self
                .next_event()
                .await
                .unwrap_or_else(|| panic!("stream ended before {method}"));
            if event["method"] == method {
                return event;
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Cap a wait.
pub async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, f)
        .await
        .expect("waited longer than the test's cap")
}

/// The demo allowlist makes `{}` valid arguments.
pub fn sub(name: &str) -> Value {
    json!({"name": name, "arguments": {}})
}
