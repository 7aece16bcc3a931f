//! One signed POST to a callback URL: resolve, check, connect, TLS, HTTP/1, capped reply.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::header::{
    CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderName, HeaderValue, RETRY_AFTER, USER_AGENT,
};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use crate::address::{Refusal, refusal};
use crate::origin::{CallbackUrl, Host, Origin};
use crate::outcome::{Category, Failure};
pub use crate::reply::{PostLimits, Reply};

/// Why [`Poster::new`] could not set up TLS.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    #[error(
        "no trusted root certificates were found in the system's store; point SSL_CERT_FILE at a PEM bundle (or SSL_CERT_DIR at a directory of them)"
    )]
    NoRoots,
}

/// Sends deliveries. Cheap to clone; every [`Poster::post`] opens its own connection, so each
/// delivery resolves the host and checks its addresses again (DNS may have changed).
#[derive(Clone)]
pub struct Poster {
    inner: Arc<Inner>,
}

struct Inner {
    limits: PostLimits,
    tls: tokio_rustls::TlsConnector,
}

impl std::fmt::Debug for Poster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poster")
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

impl Poster {
    /// A poster trusting the system's roots (the macOS keychain, the distribution's bundle on
    /// Linux, or `SSL_CERT_FILE` / `SSL_CERT_DIR` when set). Unreadable certificates are
    /// skipped; none at all is an error.
    pub fn new(limits: PostLimits) -> Result<Poster, TlsSetupError> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        if roots.is_empty() {
            return Err(TlsSetupError::NoRoots);
        }
        Ok(Poster::with_roots(limits, roots))
    }

    /// A poster that trusts no certificate: plain-http loopback deliveries still work, and
    /// every https one fails as `tls_error` (what the daemon falls back to when the system
    /// has no roots at all, rather than not starting).
    pub fn without_roots(limits: PostLimits) -> Poster {
        Poster::with_roots(limits, rustls::RootCertStore::empty())
    }

    /// A poster trusting exactly `roots`.
    pub fn with_roots(limits: PostLimits, roots: rustls::RootCertStore) -> Poster {
        // ring, not aws-lc-rs (rustls' default): a small C build with no cmake, which the macOS
        // check from Linux can stub out. rustls 0.23.48 deprecates it for lacking post-quantum
        // key exchange; classical X25519 and P-256 are what webhook receivers offer today.
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("the ring provider supports the default TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let tls = tokio_rustls::TlsConnector::from(Arc::new(config));
        Poster {
            inner: Arc::new(Inner { limits, tls }),
        }
    }

    pub fn limits(&self) -> PostLimits {
        self.inner.limits
    }

    /// POSTs `body` (JSON) to `url` with `headers` beside our own (`Host`, `Content-Type`,
    /// `Content-Length`, `User-Agent`). Any answer is a [`Reply`], redirects included (they
    /// are never followed); no answer is a [`Failure`].
    pub async fn post(
        &self,
        url: &CallbackUrl,
        headers: &[(&str, String)],
        body: Vec<u8>,
    ) -> Result<Reply, Failure> {
        let request = build_request(url, headers, body)?;
        let total = self.inner.limits.total;
        match tokio::time::timeout(total, self.exchange(url.origin(), request)).await {
            Ok(result) => result,
            Err(_) => Err(Failure::new(
                Category::Timeout,
                format!("no complete answer within {}", seconds(total)),
            )),
        }
    }

    async fn exchange(
        &self,
        origin: &Origin,
        request: hyper::Request<Full<Bytes>>,
    ) -> Result<Reply, Failure> {
        let limits = self.inner.limits;
        let tcp = match tokio::time::timeout(limits.connect, connect(origin)).await {
            Ok(tcp) => tcp?,
            Err(_) => {
                return Err(Failure::new(
                    Category::Timeout,
                    format!("could not connect within {}", seconds(limits.connect)),
                ));
            }
        };
        if !origin.is_https() {
            return send(tcp, request, limits.max_reply).await;
        }
        let name = match origin.host() {
            Host::Name(name) => ServerName::try_from(name.clone()).map_err(|_| {
                Failure::new(Category::TlsError, "the host is not a valid TLS name")
            })?,
            Host::Ip(ip) => ServerName::IpAddress((*ip).into()),
        };
        let tls = self.inner.tls.connect(name, tcp).await.map_err(|error| {
            Failure::new(
                Category::TlsError,
                format!("the TLS handshake failed: {error}"),
            )
        })?;
        send(tls, request, limits.max_reply).await
    }
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

fn build_request(
    url: &CallbackUrl,
    headers: &[(&str, String)],
    body: Vec<u8>,
) -> Result<hyper::Request<Full<Bytes>>, Failure> {
    let origin = url.origin();
    // `Host` is the origin without its scheme: the port only when it is not the default.
    let shown = origin.to_string();
    let host = shown
        .split_once("://")
        .map_or(shown.as_str(), |(_, host)| host);
    let mut builder = hyper::Request::post(url.path_and_query())
        .header(HOST, host)
        .header(CONTENT_TYPE, "application/json")
        .header(CONTENT_LENGTH, body.len())
        .header(USER_AGENT, concat!("Tidings/", env!("CARGO_PKG_VERSION")));
    for (name, value) in headers {
        let (Ok(name), Ok(value)) = (HeaderName::try_from(*name), HeaderValue::try_from(value))
        else {
            return Err(Failure::new(
                Category::Http4xx,
                format!("the header {name:?} is not valid HTTP; nothing was sent"),
            ));
        };
        builder = builder.header(name, value);
    }
    builder.body(Full::new(Bytes::from(body))).map_err(|_| {
        Failure::new(
            Category::Http4xx,
            "the request is not valid HTTP; nothing was sent",
        )
    })
}

/// Resolves the host (an IP literal is taken as written), keeps the addresses the rule
/// allows, and connects to the first of them that answers.
async fn connect(origin: &Origin) -> Result<TcpStream, Failure> {
    let port = origin.port();
    let resolved: Vec<IpAddr> = match origin.host() {
        Host::Ip(ip) => vec![*ip],
        Host::Name(name) => tokio::net::lookup_host((name.as_str(), port))
            .await
            .map_err(|_| {
                Failure::new(
                    Category::ConnectionRefused,
                    format!("{name} could not be resolved"),
                )
            })?
            .map(|address| address.ip())
            .collect(),
    };
    let mut refused: Option<Refusal> = None;
    let mut last_error = None;
    for ip in resolved.iter().copied() {
        if let Some(refusal) = refusal(origin, ip) {
            refused.get_or_insert(refusal);
            continue;
        }
        match TcpStream::connect(SocketAddr::new(ip, port)).await {
            Ok(stream) => {
                // The request goes out in one write; no need to wait for more.
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(error) => last_error = Some((ip, error)),
        }
    }
    let host = origin.host();
    Err(match (last_error, refused) {
        (Some((ip, error)), _) => {
            let why = match error.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".to_owned(),
                kind => kind.to_string(),
            };
            Failure::new(
                Category::ConnectionRefused,
                format!("could not connect to {}: {why}", SocketAddr::new(ip, port)),
            )
        }
        (None, Some(refusal)) => Failure::new(
            Category::ConnectionRefused,
            format!("{host} resolves only to refused addresses: {refusal}"),
        ),
        (None, None) => Failure::new(
            Category::ConnectionRefused,
            format!("{host} resolves to no address"),
        ),
    })
}

/// Aborts the connection's task when the exchange ends or is dropped at the deadline.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn send<S>(
    stream: S,
    request: hyper::Request<Full<Bytes>>,
    max_reply: usize,
) -> Result<Reply, Failure>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|error| http_failure(&error))?;
    let _connection = AbortOnDrop(tokio::spawn(async move {
        let _ = connection.await;
    }));
    let response = sender
        .send_request(request)
        .await
        .map_err(|error| http_failure(&error))?;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let mut incoming = response.into_body();
    let mut body = Vec::new();
    // Read until the cap and stop there: the rest is never wanted. A body cut short after
    // the status still gives the status.
    while body.len() < max_reply {
        let Some(Ok(frame)) = incoming.frame().await else {
            break;
        };
        if let Ok(data) = frame.into_data() {
            let room = max_reply - body.len();
            body.extend_from_slice(&data[..data.len().min(room)]);
        }
    }
    Ok(Reply {
        status,
        body,
        retry_after,
    })
}

fn http_failure(error: &hyper::Error) -> Failure {
    if error.is_parse() || error.is_parse_status() || error.is_parse_too_large() {
        Failure::new(
            Category::Http5xx,
            "the receiver's answer is not valid HTTP/1.1",
        )
    } else {
        Failure::new(
            Category::ConnectionRefused,
            "the connection closed before an answer",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poster_and_its_post_can_go_to_another_task() {
        fn shared<T: Clone + Send + Sync>(_: &T) {}
        fn sendable<T: Send>(_: &T) {}
        let poster = Poster::with_roots(PostLimits::default(), rustls::RootCertStore::empty());
        shared(&poster);
        let url = CallbackUrl::parse("http://127.0.0.1:9/").unwrap();
        let headers = [("webhook-id", "msg_1".to_owned())];
        sendable(&poster.post(&url, &headers, Vec::new()));
    }
}
