//! The update check against a feed on 127.0.0.1: Tauri's updater plugin for real (on Tauri's
//! mock runtime, so no display), signatures made with a key of the test's own as `tauri
//! signer` makes them, and a small HTTP server that answers, fails or hangs as each test
//! needs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use serde_json::json;
use tauri::test::{MockRuntime, mock_builder, mock_context, noop_assets};
use tidings_platform::identity::{CodeSigning, Signing};
use tidings_server::app::updates::{FailReason, Outcome, read_last_check};

use super::developer::Developer;
use super::{Options, check, install};

/// This copy's version in every test.
const CURRENT: &str = "0.1.0";

/// A minisign key pair, its public half as tauri.conf.json carries it.
struct Key {
    pair: minisign::KeyPair,
    public: String,
}

impl Key {
    fn new() -> Key {
        let pair = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let public = b64(&pair.pk.to_box().unwrap().to_string());
        Key { pair, public }
    }

    /// The `.sig` text `tauri signer sign --app-version VERSION` writes for `bytes`.
    fn sign(&self, bytes: &[u8], version: &str) -> String {
        let comment = format!("timestamp:1\tfile:Tidings.app.tar.gz\tversion:{version}");
        let signature = minisign::sign(
            Some(&self.pair.pk),
            &self.pair.sk,
            bytes,
            Some(&comment),
            None,
        )
        .unwrap();
        b64(&signature.to_string())
    }
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// An updater archive: `Tidings.app/` with a file in it, gzipped tar, as the release makes.
fn archive() -> Vec<u8> {
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let body = b"#!/bin/sh\n";
    let mut header = tar::Header::new_gnu();
    header.set_size(body.len() as u64);
    header.set_mode(0o755);
    header.set_cksum();
    tar.append_data(
        &mut header,
        "Tidings.app/Contents/MacOS/tidings-app",
        &body[..],
    )
    .unwrap();
    tar.into_inner().unwrap().finish().unwrap()
}

/// What the server answers at a path.
#[derive(Clone)]
enum Reply {
    Ok(&'static str, Vec<u8>),
    Status(u16),
    /// Accepts and never answers.
    Hang,
}

/// A feed on 127.0.0.1: `/latest.json` and `/Tidings.app.tar.gz`, and every request it got.
struct Feed {
    port: u16,
    routes: Arc<Mutex<Vec<(String, Reply)>>>,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Feed {
    fn start() -> Feed {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let routes: Arc<Mutex<Vec<(String, Reply)>>> = Arc::default();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let (r, q) = (routes.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (r, q) = (r.clone(), q.clone());
                std::thread::spawn(move || serve(stream, &r, &q));
            }
        });
        Feed {
            port,
            routes,
            requests,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn route(&self, path: &str, reply: Reply) {
        self.routes.lock().unwrap().push((path.to_owned(), reply));
    }

    /// A feed offering `version` with `signature`, its archive at /Tidings.app.tar.gz.
    fn offer(&self, version: &str, signature: &str, archive: Vec<u8>) {
        let manifest = json!({
            "version": version,
            "notes": "Fixes the Mail reader.\nFaster start.\nThird line.",
            "pub_date": "2026-12-01T00:00:00Z",
            "platforms": { target(): { "signature": signature, "url": self.url("/Tidings.app.tar.gz") } },
        });
        self.route(
            "/latest.json",
            Reply::Ok("application/json", manifest.to_string().into_bytes()),
        );
        self.route(
            "/Tidings.app.tar.gz",
            Reply::Ok("application/octet-stream", archive),
        );
    }

    /// Each request's head (request line and headers), lower-cased.
    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    fn asked_for(&self, path: &str) -> bool {
        self.requests()
            .iter()
            .any(|r| r.starts_with(&format!("get {} ", path.to_lowercase())))
    }
}

/// The plugin's key for this machine in a feed's `platforms`.
fn target() -> String {
    let os = if cfg!(target_os = "macos") {
        "darwin"
    } else {
        "linux"
    };
    format!("{os}-{}", std::env::consts::ARCH)
}

fn serve(
    mut stream: TcpStream,
    routes: &Mutex<Vec<(String, Reply)>>,
    requests: &Mutex<Vec<String>>,
) {
    let mut head = String::new();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line.to_lowercase());
    }
    requests.lock().unwrap().push(head.clone());
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let reply = routes
        .lock()
        .unwrap()
        .iter()
        .find(|(p, _)| p.to_lowercase() == path)
        .map_or(Reply::Status(404), |(_, r)| r.clone());
    match reply {
        Reply::Ok(kind, body) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
        Reply::Status(code) => {
            let _ = write!(
                stream,
                "HTTP/1.1 {code} Nope\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
        Reply::Hang => {
            // Holds the connection open until the client gives up.
            let _ = stream.read(&mut [0; 1]);
        }
    }
}

/// A signer that says every program is signed by `team`.
struct SignedBy(Option<&'static str>);

impl CodeSigning for SignedBy {
    fn signing(&self, _: &Path) -> Option<Signing> {
        self.0.map(signed)
    }
}

fn signed(team: &str) -> Signing {
    Signing {
        identifier: "dev.tidings.Tidings".into(),
        team: Some(team.into()),
        signer: None,
    }
}

/// The app with the plugin, as tidings-settings builds it, on the mock runtime.
fn app(key: &Key) -> tauri::App<MockRuntime> {
    let mut context = mock_context(noop_assets());
    context.config_mut().plugins.0.insert(
        "updater".into(),
        json!({ "pubkey": key.public, "endpoints": [], "requireSignedVersion": true }),
    );
    context.package_info_mut().version = CURRENT.parse().unwrap();
    mock_builder()
        .plugin(tauri_plugin_updater::Builder::new().build())
        .build(context)
        .unwrap()
}

fn options(dir: &Path, feed: &Feed) -> Options {
    Options {
        dir: dir.to_owned(),
        feed: Some(feed.url("/latest.json").parse().unwrap()),
        feed_timeout: Duration::from_secs(2),
        download_timeout: Duration::from_secs(5),
        max_bytes: 1024 * 1024,
        developer: Developer::new(None, Box::new(SignedBy(None))),
    }
}

fn failed(outcome: &Outcome) -> (FailReason, &str) {
    match outcome {
        Outcome::Failed { reason, message } => (*reason, message),
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn kept(dir: &Path) -> bool {
    dir.join("update.tar.gz").exists() || dir.join("update.json").exists()
}

#[tokio::test]
async fn a_newer_signed_version_is_downloaded_checked_and_kept() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    feed.offer("9.9.9", &key.sign(&bytes, "9.9.9"), bytes.clone());
    let app = app(&key);

    let check = check(app.handle(), &options(dir.path(), &feed)).await;

    let Outcome::Ready(staged) = &check.outcome else {
        panic!("{check:?}")
    };
    assert_eq!(staged.version, "9.9.9");
    assert!(
        staged
            .notes
            .as_deref()
            .unwrap()
            .starts_with("Fixes the Mail reader.")
    );
    assert_eq!(check.current, CURRENT);
    assert_eq!(
        std::fs::read(dir.path().join("update.tar.gz")).unwrap(),
        bytes
    );
    assert_eq!(read_last_check(dir.path()).unwrap(), Some(check.clone()));
    assert_eq!(check.describe(), "Tidings 9.9.9 is ready to install.");
}

#[tokio::test]
async fn the_check_sends_nothing_but_the_request() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    feed.offer("9.9.9", &key.sign(&bytes, "9.9.9"), bytes);
    check(app(&key).handle(), &options(dir.path(), &feed)).await;

    let requests = feed.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    for head in &requests {
        let mut lines = head.lines();
        let request_line = lines.next().unwrap();
        assert!(!request_line.contains('?'), "no query: {request_line}");
        let names: Vec<_> = lines.filter_map(|l| l.split(':').next()).collect();
        for name in &names {
            assert!(
                ["host", "user-agent", "accept", "accept-encoding"].contains(name),
                "an unexpected header `{name}` in {head}"
            );
        }
        assert!(head.contains("user-agent: tauri-plugin-updater/"), "{head}");
    }
}

#[tokio::test]
async fn an_archive_signed_with_another_key_is_refused_and_not_kept() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    feed.offer("9.9.9", &Key::new().sign(&bytes, "9.9.9"), bytes);

    let check = check(app(&key).handle(), &options(dir.path(), &feed)).await;

    let (reason, message) = failed(&check.outcome);
    assert_eq!(reason, FailReason::Signature, "{message}");
    assert!(
        message.contains("does not match the key built into Tidings"),
        "{message}"
    );
    assert!(!kept(dir.path()));
}

#[tokio::test]
async fn altered_bytes_are_refused() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    let signature = key.sign(&bytes, "9.9.9");
    let mut altered = bytes;
    altered.push(0);
    feed.offer("9.9.9", &signature, altered);

    let check = check(app(&key).handle(), &options(dir.path(), &feed)).await;

    assert_eq!(failed(&check.outcome).0, FailReason::Signature);
    assert!(!kept(dir.path()));
}

#[tokio::test]
async fn a_newer_version_number_on_an_older_signed_archive_is_refused() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    // Signed for 0.0.5, announced as 9.9.9.
    feed.offer("9.9.9", &key.sign(&bytes, "0.0.5"), bytes);

    let check = check(app(&key).handle(), &options(dir.path(), &feed)).await;

    let (reason, message) = failed(&check.outcome);
    assert_eq!(reason, FailReason::Signature, "{message}");
    assert!(!kept(dir.path()));
}

#[tokio::test]
async fn an_unsigned_entry_is_refused_before_downloading() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    feed.offer("9.9.9", "", archive());

    let check = check(app(&key).handle(), &options(dir.path(), &feed)).await;

    let (reason, message) = failed(&check.outcome);
    assert_eq!(reason, FailReason::Unsigned);
    assert_eq!(message, "the feed offers 9.9.9 without a signature");
    assert!(!feed.asked_for("/Tidings.app.tar.gz"));
}

#[tokio::test]
async fn an_older_version_is_named_and_never_downloaded() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    feed.offer("0.0.9", &key.sign(&bytes, "0.0.9"), bytes);

    let check = check(app(&key).handle(), &options(dir.path(), &feed)).await;

    assert_eq!(
        check.outcome,
        Outcome::Older {
            offered: "0.0.9".into()
        }
    );
    assert_eq!(
        check.describe(),
        "The update feed offers 0.0.9, older than this 0.1.0: nothing installed."
    );
    assert!(!feed.asked_for("/Tidings.app.tar.gz"));
    assert!(!kept(dir.path()));
}

#[tokio::test]
async fn the_same_version_is_up_to_date() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    feed.offer(CURRENT, &key.sign(&bytes, CURRENT), bytes);

    let check = check(app(&key).handle(), &options(dir.path(), &feed)).await;

    assert_eq!(
        check.outcome,
        Outcome::UpToDate {
            newest: Some(CURRENT.into())
        }
    );
}

#[tokio::test]
async fn no_content_is_up_to_date() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    feed.route("/latest.json", Reply::Status(204));

    let check = check(app(&key).handle(), &options(dir.path(), &feed)).await;

    assert_eq!(check.outcome, Outcome::UpToDate { newest: None });
}

#[tokio::test]
async fn a_malformed_feed_is_refused_with_what_is_wrong() {
    let key = Key::new();
    for (body, expect) in [
        (&b"<html>not json</html>"[..], "not an update manifest (not JSON)"),
        (br#"{"release": "soon"}"#, "not an update manifest"),
        (br#"{"version": "9.9.9", "platforms": {"plan9-mips": {"signature": "x", "url": "http://127.0.0.1/"}}}"#, "no entry for this Mac"),
        (br#"{"version": "nine", "platforms": {}}"#, "not an update manifest"),
    ] {
        let (feed, dir) = (Feed::start(), tempfile::tempdir().unwrap());
        feed.route("/latest.json", Reply::Ok("application/json", body.to_vec()));

        let check = check(app(&key).handle(), &options(dir.path(), &feed)).await;

        let (reason, message) = failed(&check.outcome);
        assert_eq!(reason, FailReason::Malformed, "{message}");
        assert!(message.contains(expect), "{expect}: {message}");
        assert!(!kept(dir.path()));
    }
}

#[tokio::test]
async fn a_hung_feed_times_out() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    feed.route("/latest.json", Reply::Hang);

    let check = check(app(&key).handle(), &options(dir.path(), &feed)).await;

    let (reason, message) = failed(&check.outcome);
    assert_eq!(reason, FailReason::Timeout);
    assert_eq!(message, "the update feed did not answer in time");
    assert_eq!(
        read_last_check(dir.path()).unwrap().unwrap().outcome,
        check.outcome
    );
}

#[tokio::test]
async fn a_hung_archive_times_out_and_nothing_is_kept() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    feed.offer("9.9.9", &key.sign(&bytes, "9.9.9"), bytes);
    feed.routes
        .lock()
        .unwrap()
        .retain(|(p, _)| p != "/Tidings.app.tar.gz");
    feed.route("/Tidings.app.tar.gz", Reply::Hang);
    let mut options = options(dir.path(), &feed);
    options.download_timeout = Duration::from_secs(1);

    let check = check(app(&key).handle(), &options).await;

    assert_eq!(failed(&check.outcome).0, FailReason::Timeout);
    assert!(!kept(dir.path()));
}

#[tokio::test]
async fn an_unreachable_feed_and_an_error_status_say_so() {
    let key = Key::new();
    let dir = tempfile::tempdir().unwrap();
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let feed = Feed::start();
    let mut unreachable = options(dir.path(), &feed);
    unreachable.feed = Some(
        format!("http://127.0.0.1:{port}/latest.json")
            .parse()
            .unwrap(),
    );
    let check_closed = check(app(&key).handle(), &unreachable).await;
    let (reason, message) = failed(&check_closed.outcome);
    assert_eq!(reason, FailReason::Unreachable);
    assert!(
        message.starts_with("the update feed cannot be reached"),
        "{message}"
    );

    feed.route("/latest.json", Reply::Status(500));
    let check_500 = check(app(&key).handle(), &options(dir.path(), &feed)).await;
    assert_eq!(failed(&check_500.outcome).0, FailReason::Http);
}

#[tokio::test]
async fn an_archive_larger_than_the_bound_is_refused() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    feed.offer("9.9.9", &key.sign(&bytes, "9.9.9"), bytes.clone());
    let mut options = options(dir.path(), &feed);
    options.max_bytes = (bytes.len() - 1) as u64;

    let check = check(app(&key).handle(), &options).await;

    let (reason, message) = failed(&check.outcome);
    assert_eq!(reason, FailReason::TooLarge);
    assert!(message.contains("larger than 0 MiB"), "{message}");
    assert!(!kept(dir.path()));
}

#[tokio::test]
async fn an_update_from_another_developer_is_refused_to_keep_full_disk_access() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    feed.offer("9.9.9", &key.sign(&bytes, "9.9.9"), bytes);
    let mut options = options(dir.path(), &feed);
    options.developer = Developer::new(Some(signed("OURTEAM")), Box::new(SignedBy(Some("OTHER"))));

    let refused = check(app(&key).handle(), &options).await;

    let (reason, message) = failed(&refused.outcome);
    assert_eq!(reason, FailReason::Identity);
    assert_eq!(
        message,
        "9.9.9 is signed by OTHER:dev.tidings.Tidings, this copy by OURTEAM:dev.tidings.Tidings: \
         installing it would lose Full Disk Access, so it was not kept"
    );
    assert!(!kept(dir.path()));

    options.developer =
        Developer::new(Some(signed("OURTEAM")), Box::new(SignedBy(Some("OURTEAM"))));
    let check = check(app(&key).handle(), &options).await;
    let Outcome::Ready(staged) = check.outcome else {
        panic!("{check:?}")
    };
    assert_eq!(
        staged.signed_by.as_deref(),
        Some("OURTEAM:dev.tidings.Tidings")
    );
}

#[tokio::test]
async fn install_checks_the_kept_archive_again() {
    let (key, feed, dir) = (Key::new(), Feed::start(), tempfile::tempdir().unwrap());
    let bytes = archive();
    feed.offer("9.9.9", &key.sign(&bytes, "9.9.9"), bytes);
    let app = app(&key);
    let options = options(dir.path(), &feed);

    let nothing = install(app.handle(), &options);
    assert_eq!(
        nothing.error.as_deref(),
        Some("no update is ready: check for updates first")
    );

    check(app.handle(), &options).await;
    let installed = install(app.handle(), &options);
    assert_eq!(installed.installed, None);
    // The Linux twin stops after the checks; macOS replaces the bundle here.
    let error = installed.error.unwrap();
    assert!(error.starts_with("9.9.9 checks out"), "{error}");

    // An archive changed on disk after the check is refused.
    let archive = dir.path().join("update.tar.gz");
    let mut altered = std::fs::read(&archive).unwrap();
    altered[20] ^= 0xff;
    std::fs::write(&archive, altered).unwrap();
    let error = install(app.handle(), &options).error.unwrap();
    assert!(error.contains("failed its signature check"), "{error}");
}
