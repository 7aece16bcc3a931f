//! A webhook receiver on 127.0.0.1 for the tests: hyper's HTTP/1 server on a runtime of its
//! own (plain, or TLS with a certificate for `localhost` the daemon trusts through
//! `SSL_CERT_FILE`), every request kept in order, each answered as the test's [`Behaviour`]
//! says. Signatures are checked with the Standard Webhooks reference crate, never ours.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::{HeaderMap, Request, Response};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};

use crate::common::WAIT;

/// Two Standard Webhooks secrets (24 random bytes each).
pub const SECRET_A: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
pub const SECRET_B: &str = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";

/// One request the receiver was sent.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// The body as JSON (`null` if it is not).
    pub json: Value,
    /// How many requests with this `webhook-id` came before this one.
    pub attempt: usize,
}

impl Seen {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("no {name} header: {:?}", self.headers))
    }

    /// A control envelope (`gap`, `terminated`, `verification`): its `type`.
    pub fn control(&self) -> Option<&str> {
        self.json.get("type").and_then(Value::as_str)
    }

    /// An event's `eventId`.
    pub fn event_id(&self) -> Option<&str> {
        self.json.get("eventId").and_then(Value::as_str)
    }

    /// Panics unless the reference crate verifies the request under `secret`.
    pub fn verify(&self, secret: &str) {
        standardwebhooks::Webhook::new(secret)
            .unwrap()
            .verify(&self.body, &self.headers)
            .unwrap_or_else(|e| {
                panic!(
                    "signature does not verify ({e:?}): {} {:?}",
                    self.header("webhook-signature"),
                    String::from_utf8_lossy(&self.body)
                )
            });
    }

    /// Whether the reference crate verifies it under `secret`.
    pub fn verifies(&self, secret: &str) -> bool {
        standardwebhooks::Webhook::new(secret)
            .unwrap()
            .verify(&self.body, &self.headers)
            .is_ok()
    }
}

/// How to answer one request.
pub enum Reply {
    Status(u16, Vec<u8>),
    /// A status with `Retry-After: <seconds>` and no body.
    RetryAfter(u16, u64),
    /// Accept and never answer.
    Hang,
}

/// The test's answer to each request.
pub type Behaviour = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

/// Echo a verification challenge; everything else as `other` says.
pub fn echoing(other: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Behaviour {
    Arc::new(move |seen: &Seen| {
        if seen.control() == Some("verification") {
            let challenge = seen.json["challenge"].clone();
            Reply::Status(
                200,
                json!({ "challenge": challenge }).to_string().into_bytes(),
            )
        } else {
            other(seen)
        }
    })
}

/// Echo the challenge and take every delivery with 200.
pub fn accepting() -> Behaviour {
    echoing(|_| Reply::Status(200, Vec::new()))
}

/// A receiver, stopped when dropped (its runtime goes, and every connection with it).
pub struct Receiver {
    pub addr: SocketAddr,
    tls: bool,
    seen: Arc<(Mutex<Vec<Seen>>, Condvar)>,
    _runtime: tokio::runtime::Runtime,
}

impl Receiver {
    /// Plain HTTP on 127.0.0.1.
    pub fn plain(behaviour: Behaviour) -> Receiver {
        Receiver::serve(None, behaviour)
    }

    /// HTTPS on 127.0.0.1 with a new certificate for `localhost`, its PEM written to
    /// `ca_file` for the daemon's `SSL_CERT_FILE`.
    pub fn tls(behaviour: Behaviour, ca_file: &Path) -> Receiver {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        std::fs::write(ca_file, made.cert.pem()).unwrap();
        let certificate: CertificateDer<'static> = made.cert.der().clone();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
        #[allow(deprecated)] // The ring provider, as the daemon's client uses.
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![certificate], key)
            .unwrap();
        Receiver::serve(
            Some(tokio_rustls::TlsAcceptor::from(Arc::new(config))),
            behaviour,
        )
    }

    fn serve(tls: Option<tokio_rustls::TlsAcceptor>, behaviour: Behaviour) -> Receiver {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let seen: Arc<(Mutex<Vec<Seen>>, Condvar)> = Arc::default();
        let attempts: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let is_tls = tls.is_some();
        let record = Arc::clone(&seen);
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (behaviour, record, attempts, tls) = (
                    Arc::clone(&behaviour),
                    Arc::clone(&record),
                    Arc::clone(&attempts),
                    tls.clone(),
                );
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request: Request<_>| {
                        let (behaviour, record, attempts) = (
                            Arc::clone(&behaviour),
                            Arc::clone(&record),
                            Arc::clone(&attempts),
                        );
                        handle(request, behaviour, record, attempts)
                    });
                    let http = hyper::server::conn::http1::Builder::new();
                    match tls {
                        None => {
                            let _ = http.serve_connection(TokioIo::new(stream), service).await;
                        }
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                let _ = http.serve_connection(TokioIo::new(stream), service).await;
                            }
                        }
                    }
                });
            }
        });
        Receiver {
            addr,
            tls: is_tls,
            seen,
            _runtime: runtime,
        }
    }

    /// `http://127.0.0.1:PORT`, or `https://localhost:PORT` for a TLS receiver.
    pub fn origin(&self) -> String {
        if self.tls {
            format!("https://localhost:{}", self.addr.port())
        } else {
            format!("http://127.0.0.1:{}", self.addr.port())
        }
    }

    /// The callback URL: the origin and `/hook`.
    pub fn url(&self) -> String {
        format!("{}/hook", self.origin())
    }

    /// Every request so far, in the order they came.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.0.lock().unwrap().clone()
    }

    /// The deliveries of events so far (no control envelopes), in order.
    pub fn events(&self) -> Vec<Seen> {
        self.requests()
            .into_iter()
            .filter(|s| s.event_id().is_some())
            .collect()
    }

    /// The `eventId` of each event received so far, in the order they came.
    pub fn event_ids(&self) -> Vec<String> {
        self.events()
            .iter()
            .filter_map(|s| s.event_id().map(str::to_owned))
            .collect()
    }

    /// Waits until `done` holds of the requests so far (within [`WAIT`]); returns them.
    pub fn wait_until(&self, what: &str, done: impl Fn(&[Seen]) -> bool) -> Vec<Seen> {
        let deadline = Instant::now() + WAIT;
        let (lock, changed) = &*self.seen;
        let mut seen = lock.lock().unwrap();
        loop {
            if done(&seen) {
                return seen.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "timed out after {WAIT:?} waiting for {what}; the receiver saw:\n{}",
                describe(&seen)
            );
            seen = changed.wait_timeout(seen, left).unwrap().0;
        }
    }

    /// Waits for the first control envelope of `kind` (`terminated`, `gap`); returns it.
    pub fn wait_control(&self, kind: &str) -> Seen {
        let all = self.wait_until(&format!("a {kind} envelope"), |seen| {
            seen.iter().any(|s| s.control() == Some(kind))
        });
        all.into_iter().find(|s| s.control() == Some(kind)).unwrap()
    }

    /// Waits for the delivery of the event `event_id`; returns it (its first attempt).
    pub fn wait_event(&self, event_id: &str) -> Seen {
        let all = self.wait_until(&format!("event {event_id}"), |seen| {
            seen.iter().any(|s| s.event_id() == Some(event_id))
        });
        all.into_iter()
            .find(|s| s.event_id() == Some(event_id))
            .unwrap()
    }
}

async fn handle(
    request: Request<hyper::body::Incoming>,
    behaviour: Behaviour,
    record: Arc<(Mutex<Vec<Seen>>, Condvar)>,
    attempts: Arc<Mutex<HashMap<String, usize>>>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await?.to_bytes().to_vec();
    let id = parts
        .headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let attempt = {
        let mut attempts = attempts.lock().unwrap();
        let n = attempts.entry(id).or_default();
        *n += 1;
        *n - 1
    };
    let seen = Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        headers: parts.headers,
        json: serde_json::from_slice(&body).unwrap_or(Value::Null),
        body,
        attempt,
    };
    let reply = behaviour(&seen);
    {
        let (lock, changed) = &*record;
        lock.lock().unwrap().push(seen);
        changed.notify_all();
    }
    match reply {
        Reply::Status(status, body) => Ok(Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap()),
        Reply::RetryAfter(status, seconds) => Ok(Response::builder()
            .status(status)
            .header("retry-after", seconds.to_string())
            .body(Full::new(Bytes::new()))
            .unwrap()),
        Reply::Hang => std::future::pending().await,
    }
}

/// The requests, one line each, for a failing wait's message.
fn describe(seen: &[Seen]) -> String {
    seen.iter()
        .map(|s| {
            format!(
                "{} {} id={:?} {}",
                s.method,
                s.path,
                s.headers.get("webhook-id"),
                String::from_utf8_lossy(&s.body)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
