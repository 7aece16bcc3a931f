//! The official MCP SDKs as clients of a demo daemon through the real shim. The Python SDK
//! (`mcp`, pinned in `examples/python/requirements.txt`) runs `examples/python/events_stream.py`,
//! which gets events through `events/stream` on 2026-07-28 and through the pull tools on
//! 2025-11-25. Of the TypeScript SDKs (pinned in `examples/typescript/package-lock.json`), the
//! 1.x line today's hosts are built on (`@modelcontextprotocol/sdk`) runs
//! `examples/typescript/pull_tools.mjs` on the pull tools, and the v2 client
//! (`@modelcontextprotocol/client`) runs `examples/typescript/events_stream.mjs`, which gets
//! events through `events/stream` on 2026-07-28; the AI SDK's client (`@ai-sdk/mcp`) runs
//! `examples/typescript/ai_sdk_events.mjs`, which lists the event types, and
//! `examples/typescript/ai_sdk_webhook.mjs`, which subscribes with webhook delivery to its own
//! loopback receiver and checks every POST's signature. The pull-tools examples skip, saying
//! so, against a daemon that lists no `tidings_check`; this one does.
//!
//! The venv and the `node_modules` live under this run's target dir and are reused;
//! `scripts/python-sdk-venv.sh` and `scripts/typescript-sdk-deps.sh` make them (the Python
//! package index and the npm registry must be reachable the first time, as they are in CI).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, channel};

use crate::common::{Daemon, WAIT, Writer, shim_bin};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Runs `scripts/<script> <target tmp>/<dir>` once and returns the path it prints: the
/// script makes (or reuses) an SDK's install there. `needs` is what to check when it fails.
fn prepared(script: &str, dir: &str, needs: &str) -> PathBuf {
    let out = Command::new(repo().join("scripts").join(script))
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir))
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("run scripts/{script}: {e}"));
    assert!(out.status.success(), "scripts/{script} failed; {needs}");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// The venv's python, made once per test binary.
fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            prepared(
                "python-sdk-venv.sh",
                "python-sdk-venv",
                "is PyPI reachable and python3-venv installed (scripts/install-deps.sh)?",
            )
        })
        .clone()
}

/// The directory holding the `*.mjs` examples beside their `node_modules`, made once per test
/// binary.
fn typescript_example_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        prepared(
            "typescript-sdk-deps.sh",
            "typescript-sdk",
            "is npm's registry reachable and node 20 or later installed \
             (scripts/install-deps.sh)?",
        )
    })
    .clone()
}

/// Which client runs the example.
enum Sdk {
    /// The Python SDK on a protocol era.
    Python { era: &'static str },
    /// The TypeScript SDK 1.x (2025-11-25: the pull tools).
    TypeScript,
    /// The TypeScript client v2 (2026-07-28: `events/stream`).
    TypeScriptEvents,
}

/// `node` on one of the TypeScript examples, run from beside its `node_modules`.
fn node(script: &str) -> Command {
    let mut c = Command::new("node");
    c.arg(typescript_example_dir().join(script));
    c
}

/// Lines of `from` on a channel, read on a thread.
fn lines(from: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The example for `sdk` against `daemon`, its stdout lines on a channel.
fn example(daemon: &Daemon, sdk: &Sdk, count: usize) -> (Child, Receiver<String>) {
    let mut command = match sdk {
        Sdk::Python { era } => {
            let mut c = Command::new(python());
            c.arg(repo().join("examples/python/events_stream.py"))
                .args(["--era", era]);
            c
        }
        Sdk::TypeScript => node("pull_tools.mjs"),
        Sdk::TypeScriptEvents => node("events_stream.mjs"),
    };
    let mut child = command
        .arg("--shim")
        .arg(shim_bin())
        .arg("--socket")
        .arg(&daemon.socket)
        .args(["--domains", "example.com"])
        .args(["--count", &count.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the example");
    let stdout = lines(child.stdout.take().unwrap());
    (child, stdout)
}

fn next_line(rx: &Receiver<String>, what: &str) -> String {
    rx.recv_timeout(WAIT)
        .unwrap_or_else(|_| panic!("the example printed no {what} within {WAIT:?}"))
}

/// Runs the example on `sdk`: two allowed mails and one from another domain are written once
/// it is listening; it must print exactly the two. `false` when it skipped.
fn two_events_through(sdk: &Sdk) -> bool {
    let daemon = Daemon::start();
    let writer = Writer::new(daemon.home());
    let (mut child, rx) = example(&daemon, sdk, 2);
    let first = next_line(&rx, "READY line");
    if let Some(reason) = first.strip_prefix("SKIP ") {
        eprintln!("skipped the run: {reason}");
        assert!(child.wait().unwrap().success());
        return false;
    }
    assert_eq!(first, "READY");
    let ana = writer.mail("ana@example.com");
    writer.mail("bob@example.org");
    let carol = writer.mail("carol@example.com");
    let got = [next_line(&rx, "event"), next_line(&rx, "second event")];
    assert_eq!(
        got,
        [
            format!("EVENT mail.received {ana}"),
            format!("EVENT mail.received {carol}")
        ]
    );
    assert!(child.wait().unwrap().success());
    true
}

#[test]
fn the_python_sdk_gets_events_through_events_stream() {
    assert!(
        two_events_through(&Sdk::Python { era: "2026-07-28" }),
        "2026-07-28 never skips"
    );
}

#[test]
fn the_python_sdk_gets_events_through_the_pull_tools() {
    assert!(
        two_events_through(&Sdk::Python { era: "2025-11-25" }),
        "the daemon lists the pull tools, so the 2025-11-25 run must not skip"
    );
}

#[test]
fn the_typescript_sdk_gets_events_through_the_pull_tools() {
    assert!(
        two_events_through(&Sdk::TypeScript),
        "the daemon lists the pull tools, so the TypeScript run must not skip"
    );
}

#[test]
fn the_typescript_client_v2_gets_events_through_events_stream() {
    assert!(
        two_events_through(&Sdk::TypeScriptEvents),
        "events_stream.mjs never skips"
    );
}

/// `@ai-sdk/mcp` asks `server/discover` and then looks only for a top-level
/// `capabilities.events`; without it, it says "Server does not support events" and sends
/// nothing. Tidings declares it beside the extension key, so the AI SDK lists the types.
#[test]
fn the_ai_sdk_lists_the_event_types() {
    let daemon = Daemon::start();
    let out = node("ai_sdk_events.mjs")
        .arg("--shim")
        .arg(shim_bin())
        .arg("--socket")
        .arg(&daemon.socket)
        .stderr(Stdio::inherit())
        .output()
        .expect("run ai_sdk_events.mjs");
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "EVENTS mail.received,messages.received",
            "TOOLS tidings_check,tidings_wait"
        ],
        "{stdout}"
    );
}

/// A port free on 127.0.0.1 now: the system picks it, and the listener closes at once so the
/// example can take it.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The demo with mail on and `webhooks` as the `[webhooks]` table's body.
fn webhook_daemon(webhooks: &str) -> Daemon {
    Daemon::builder()
        .settings(&format!(
            "[mail]\nenabled = true\nallow = [\"example.com\", \"example.org\"]\n\n\
             [webhooks]\n{webhooks}"
        ))
        .start()
}

/// `ai_sdk_webhook.mjs` receiving on `port` for mail from example.com, its stdout and stderr
/// lines on channels.
fn webhook_example(
    daemon: &Daemon,
    port: u16,
    count: usize,
) -> (Running, Receiver<String>, Receiver<String>) {
    let mut child = node("ai_sdk_webhook.mjs")
        .arg("--shim")
        .arg(shim_bin())
        .arg("--socket")
        .arg(&daemon.socket)
        .args(["--port", &port.to_string()])
        .args(["--domains", "example.com"])
        .args(["--count", &count.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ai_sdk_webhook.mjs");
    let stdout = lines(child.stdout.take().unwrap());
    let stderr = lines(child.stderr.take().unwrap());
    (Running(child), stdout, stderr)
}

/// The webhook example, killed if the test fails first: its receiver would otherwise keep
/// it listening after the daemon is gone.
struct Running(Child);

impl Running {
    fn wait(&mut self) -> std::process::ExitStatus {
        self.0.wait().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits for the stderr line `want`, passing the others (the shim's) through.
fn wait_stderr(rx: &Receiver<String>, want: &str) {
    loop {
        let line = rx
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("the example printed no {want:?} within {WAIT:?}"));
        if line == want {
            return;
        }
        eprintln!("example: {line}");
    }
}

/// POSTs a delivery signed with a key that is not the subscription's to `target` (path and
/// query) on 127.0.0.1:`port`; returns the status line.
fn forged_delivery(port: u16, target: &str) -> String {
    let body = r#"{"eventId":"forged","name":"mail.received","timestamp":"2026-01-01T00:00:00Z","data":{}}"#;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    write!(
        stream,
        "POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nwebhook-id: forged\r\nwebhook-timestamp: {now}\r\n\
         webhook-signature: v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\
         X-MCP-Subscription-Id: sub_0000000000000000\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer.lines().next().unwrap_or_default().to_owned()
}

/// The AI SDK subscribes `mail.received` with webhook delivery to the example's receiver on
/// an origin the user allowed: the daemon's signed challenge is answered, the subscribe
/// succeeds, a POST signed with another key is refused, and the one allowed mail (not the one
/// from example.org) arrives signed; the example then unsubscribes and exits 0.
#[test]
fn the_ai_sdk_gets_mail_by_webhook_to_an_allowed_origin() {
    let port = free_port();
    let daemon = webhook_daemon(&format!("allow = [\"http://127.0.0.1:{port}\"]\n"));
    let writer = Writer::new(daemon.home());
    let (mut child, stdout, stderr) = webhook_example(&daemon, port, 1);
    let ready = next_line(&stdout, "READY line");
    let origin = format!("http://127.0.0.1:{port}");
    let target = ready
        .strip_prefix(&format!("READY {origin}"))
        .unwrap_or_else(|| panic!("expected READY {origin}/hooks/tidings…, got {ready:?}"));
    assert!(target.starts_with("/hooks/tidings?"), "{ready}");

    assert_eq!(forged_delivery(port, target), "HTTP/1.1 401 Unauthorized");
    wait_stderr(&stderr, "REFUSED bad signature");

    writer.mail("bob@example.org");
    let ana = writer.mail("ana@example.com");
    let Ok(event) = stdout.recv_timeout(WAIT) else {
        let said: Vec<String> = stderr.try_iter().collect();
        panic!(
            "the example printed no event within {WAIT:?}; it said {said:#?}; the daemon said\n{}",
            daemon.stderr()
        );
    };
    assert_eq!(event, format!("EVENT mail.received {ana} from=example.com"));
    assert!(child.wait().success());
}

/// The same example against a daemon whose list lacks the receiver's origin: the daemon
/// refuses the subscribe (Forbidden) with the command that allows it, and the example says so
/// and exits 1 without ever printing READY.
#[test]
fn the_ai_sdk_is_refused_an_origin_the_user_did_not_allow() {
    let port = free_port();
    let other = free_port();
    let daemon = webhook_daemon(&format!("allow = [\"http://127.0.0.1:{other}\"]\n"));
    let (mut child, stdout, _stderr) = webhook_example(&daemon, port, 1);
    let line = next_line(&stdout, "ERROR line");
    assert!(line.starts_with("ERROR -32024 "), "{line}");
    let fix = format!("tidings webhooks allow http://127.0.0.1:{port}");
    assert!(line.contains(&fix), "expected {fix:?} in {line:?}");
    assert_eq!(child.wait().code(), Some(1));
}
