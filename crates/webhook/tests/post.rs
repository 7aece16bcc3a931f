//! `Poster::post` against real receivers on 127.0.0.1: plain HTTP, TLS, and the failures.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::{HeaderMap, Request, Response};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tidings_webhook::{
    CallbackUrl, Category, PostLimits, Poster, Verdict, address::refusal, classify,
};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// What a receiver was sent.
#[derive(Debug)]
struct Seen {
    method: String,
    target: String,
    headers: HeaderMap,
    body: Vec<u8>,
}

type Handler = Arc<dyn Fn(&Seen) -> Response<Full<Bytes>> + Send + Sync>;

fn answer(status: u16, body: &'static [u8]) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .body(Full::new(Bytes::from_static(body)))
        .unwrap()
}

/// Serves `handler` on 127.0.0.1 (over TLS when given an acceptor), reporting each request.
async fn receiver(
    tls: Option<tokio_rustls::TlsAcceptor>,
    handler: impl Fn(&Seen) -> Response<Full<Bytes>> + Send + Sync + 'static,
) -> (SocketAddr, mpsc::UnboundedReceiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (seen_tx, seen_rx) = mpsc::unbounded_channel();
    let handler: Handler = Arc::new(handler);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (handler, seen_tx, tls) = (handler.clone(), seen_tx.clone(), tls.clone());
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                        let (handler, seen_tx) = (handler.clone(), seen_tx.clone());
                        async move {
                            let (parts, body) = request.into_parts();
                            let body = body.collect().await?.to_bytes().to_vec();
                            let seen = Seen {
                                method: parts.method.to_string(),
                                target: parts.uri.to_string(),
                                headers: parts.headers,
                                body,
                            };
                            let response = handler(&seen);
                            let _ = seen_tx.send(seen);
                            Ok::<_, hyper::Error>(response)
                        }
                    });
                let http = hyper::server::conn::http1::Builder::new();
                match tls {
                    None => {
                        let _ = http.serve_connection(TokioIo::new(stream), service).await;
                    }
                    Some(acceptor) => {
                        let Ok(stream) = acceptor.accept(stream).await else {
                            return;
                        };
                        let _ = http.serve_connection(TokioIo::new(stream), service).await;
                    }
                }
            });
        }
    });
    (address, seen_rx)
}

fn plain_poster(limits: PostLimits) -> Poster {
    Poster::with_roots(limits, rustls::RootCertStore::empty())
}

fn url(text: &str) -> CallbackUrl {
    CallbackUrl::parse(text).unwrap()
}

#[tokio::test]
async fn posts_the_body_with_our_headers_and_reads_the_reply() {
    let (address, mut seen) = receiver(None, |_| answer(200, br#"{"challenge":"n1"}"#)).await;
    let poster = plain_poster(PostLimits::default());
    let target = url(&format!("http://{address}/hook?k=v"));
    let body = br#"{"eventId":"e1"}"#.to_vec();
    let headers = [
        ("webhook-id", "msg_1".to_owned()),
        ("X-MCP-Subscription-Id", "sub_ab".to_owned()),
    ];
    let reply = poster.post(&target, &headers, body.clone()).await.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, br#"{"challenge":"n1"}"#);
    assert_eq!(reply.retry_after, None);
    assert_eq!(classify(&reply), Verdict::Delivered);

    let request = seen.recv().await.unwrap();
    assert_eq!(request.method, "POST");
    assert_eq!(request.target, "/hook?k=v");
    assert_eq!(request.body, body);
    let header = |name: &str| {
        request
            .headers
            .get(name)
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(header("host"), address.to_string());
    assert_eq!(header("content-type"), "application/json");
    assert_eq!(header("content-length"), body.len().to_string());
    assert_eq!(
        header("user-agent"),
        format!("Tidings/{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(header("webhook-id"), "msg_1");
    assert_eq!(header("x-mcp-subscription-id"), "sub_ab");
}

#[tokio::test]
async fn error_statuses_come_back_as_replies_with_retry_after() {
    let (address, _seen) = receiver(None, |seen| match seen.target.as_str() {
        "/busy" => Response::builder()
            .status(503)
            .header("retry-after", "7")
            .body(Full::new(Bytes::from_static(b"down")))
            .unwrap(),
        "/gone" => answer(410, b""),
        "/big" => answer(413, b""),
        _ => answer(500, b"oops"),
    })
    .await;
    let poster = plain_poster(PostLimits::default());
    let post = |path: &str| {
        let (poster, target) = (poster.clone(), url(&format!("http://{address}{path}")));
        async move { poster.post(&target, &[], b"{}".to_vec()).await.unwrap() }
    };
    let busy = post("/busy").await;
    assert_eq!(
        (busy.status, busy.retry_after),
        (503, Some(Duration::from_secs(7)))
    );
    let failed = post("/fail").await;
    assert_eq!((failed.status, failed.retry_after), (500, None));
    let Verdict::Retry(failure) = classify(&failed) else {
        panic!("{failed:?}")
    };
    assert_eq!(failure.category, Category::Http5xx);
    assert!(matches!(classify(&post("/gone").await), Verdict::Skip(_)));
    assert!(matches!(classify(&post("/big").await), Verdict::Skip(_)));
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let (address, mut seen) = receiver(None, |seen| match seen.target.as_str() {
        "/moved" => Response::builder()
            .status(302)
            .header("location", "/elsewhere")
            .body(Full::new(Bytes::new()))
            .unwrap(),
        _ => answer(200, b""),
    })
    .await;
    let poster = plain_poster(PostLimits::default());
    let reply = poster
        .post(
            &url(&format!("http://{address}/moved")),
            &[],
            b"{}".to_vec(),
        )
        .await
        .unwrap();
    assert_eq!(reply.status, 302);
    let Verdict::Retry(failure) = classify(&reply) else {
        panic!("{reply:?}")
    };
    assert_eq!(failure.category, Category::Http4xx);
    assert_eq!(failure.detail, "redirects are not followed (HTTP 302)");
    assert_eq!(seen.recv().await.unwrap().target, "/moved");
    drop(poster);
    assert!(seen.try_recv().is_err(), "the redirect was followed");
}

#[tokio::test]
async fn a_receiver_that_never_answers_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let limits = PostLimits {
        total: Duration::from_millis(300),
        ..PostLimits::default()
    };
    let failure = plain_poster(limits)
        .post(&url(&format!("http://{address}/")), &[], b"{}".to_vec())
        .await
        .unwrap_err();
    assert_eq!(failure.category, Category::Timeout, "{failure}");
    holder.abort();
}

#[tokio::test]
async fn a_huge_reply_is_read_up_to_the_cap() {
    static HUGE: [u8; 1 << 20] = [b'x'; 1 << 20];
    let (address, _seen) = receiver(None, |_| answer(200, &HUGE)).await;
    let limits = PostLimits {
        max_reply: 1000,
        ..PostLimits::default()
    };
    let reply = plain_poster(limits)
        .post(&url(&format!("http://{address}/")), &[], b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body.len(), 1000);
}

#[tokio::test]
async fn a_closed_port_is_connection_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let failure = plain_poster(PostLimits::default())
        .post(&url(&format!("http://{address}/")), &[], b"{}".to_vec())
        .await
        .unwrap_err();
    assert_eq!(failure.category, Category::ConnectionRefused, "{failure}");
    assert!(
        failure.detail.contains(&address.to_string()),
        "{}",
        failure.detail
    );
}

#[tokio::test]
async fn a_receiver_that_resets_mid_request_is_a_retryable_failure() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    // Accepts, reads a little of the request, and hangs up without a word.
    tokio::spawn(async move {
        let (mut conn, _) = listener.accept().await.unwrap();
        let mut some = [0u8; 16];
        let _ = tokio::io::AsyncReadExt::read(&mut conn, &mut some).await;
        drop(conn);
    });
    let failure = plain_poster(PostLimits::default())
        .post(&url(&format!("http://{address}/")), &[], b"{}".to_vec())
        .await
        .unwrap_err();
    assert_eq!(failure.category, Category::ConnectionRefused, "{failure}");
    assert!(
        failure.detail.contains("closed before an answer"),
        "{}",
        failure.detail
    );
}

struct Tls {
    acceptor: tokio_rustls::TlsAcceptor,
    certificate: CertificateDer<'static>,
}

fn tls_for_localhost() -> Tls {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let certificate = made.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
    #[allow(deprecated)] // The ring provider, as the client uses.
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![certificate.clone()], key)
        .unwrap();
    Tls {
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        certificate,
    }
}

#[tokio::test]
async fn https_with_a_trusted_certificate_delivers_with_the_name_as_sni_and_host() {
    let tls = tls_for_localhost();
    let (address, mut seen) = receiver(Some(tls.acceptor), |_| answer(204, b"")).await;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(tls.certificate).unwrap();
    let poster = Poster::with_roots(PostLimits::default(), roots);
    let target = url(&format!("https://localhost:{}/hook", address.port()));
    let reply = poster.post(&target, &[], b"{}".to_vec()).await.unwrap();
    assert_eq!(reply.status, 204);
    let request = seen.recv().await.unwrap();
    assert_eq!(
        request.headers["host"],
        format!("localhost:{}", address.port())
    );
}

#[tokio::test]
async fn https_with_an_untrusted_certificate_is_a_tls_error() {
    let tls = tls_for_localhost();
    let (address, mut seen) = receiver(Some(tls.acceptor), |_| answer(200, b"")).await;
    let poster = Poster::with_roots(PostLimits::default(), rustls::RootCertStore::empty());
    let target = url(&format!("https://localhost:{}/hook", address.port()));
    let failure = poster.post(&target, &[], b"{}".to_vec()).await.unwrap_err();
    assert_eq!(failure.category, Category::TlsError, "{failure}");
    // The certificate names localhost, not the address: trusted or not, that fails too.
    let mut roots = rustls::RootCertStore::empty();
    roots.add(tls.certificate).unwrap();
    let poster = Poster::with_roots(PostLimits::default(), roots);
    let by_ip = url(&format!("https://127.0.0.1:{}/hook", address.port()));
    let failure = poster.post(&by_ip, &[], b"{}".to_vec()).await.unwrap_err();
    assert_eq!(failure.category, Category::TlsError, "{failure}");
    assert!(
        seen.try_recv().is_err(),
        "a request went out over a failed handshake"
    );
}

#[tokio::test]
async fn a_name_that_resolves_to_loopback_is_refused() {
    let Some(hostname) = std::process::Command::new("hostname")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| !name.is_empty() && name != "localhost")
    else {
        eprintln!("skipped: this machine's hostname is unknown");
        return;
    };
    let Ok(target) = CallbackUrl::parse(&format!("https://{hostname}:9/")) else {
        eprintln!("skipped: the hostname {hostname:?} is not a URL host");
        return;
    };
    let resolved: Vec<_> = match tokio::net::lookup_host((hostname.as_str(), 9)).await {
        Ok(found) => found.map(|address| address.ip()).collect(),
        Err(_) => Vec::new(),
    };
    if resolved.is_empty() || !resolved.iter().all(std::net::IpAddr::is_loopback) {
        eprintln!("skipped: {hostname} does not resolve only to loopback ({resolved:?})");
        return;
    }
    assert!(
        resolved
            .iter()
            .all(|ip| refusal(target.origin(), *ip).is_some())
    );
    let failure = plain_poster(PostLimits::default())
        .post(&target, &[], b"{}".to_vec())
        .await
        .unwrap_err();
    assert_eq!(failure.category, Category::ConnectionRefused, "{failure}");
    let expected = format!(
        "{hostname} resolves only to refused addresses: {}, a loopback address",
        resolved[0]
    );
    assert_eq!(failure.detail, expected);
}
