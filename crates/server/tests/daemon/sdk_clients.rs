//! The official MCP SDKs as clients of a demo daemon through the real shim. The Python SDK
//! (`mcp`, pinned in `examples/python/requirements.txt`) runs `examples/python/events_stream.py`,
//! which gets events through `events/stream` on 2026-07-28 and through the pull tools on
//! 2025-11-25. The TypeScript SDK (`@modelcontextprotocol/sdk`, pinned in
//! `examples/typescript/package-lock.json`), the one today's hosts are built on, runs
//! `examples/typescript/pull_tools.mjs` on the pull tools. Each example skips, saying so,
//! against a daemon that lists no `tidings_check`; this one does.
//!
//! The venv and the `node_modules` live under this run's target dir and are reused;
//! `scripts/python-sdk-venv.sh` and `scripts/typescript-sdk-deps.sh` make them (the Python
//! package index and the npm registry must be reachable the first time, as they are in CI).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, channel};

use crate::common::{Daemon, WAIT, Writer, shim_bin};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The venv's python, made once per test binary.
fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-sdk-venv");
            let out = Command::new(repo().join("scripts/python-sdk-venv.sh"))
                .arg(&venv)
                .stderr(Stdio::inherit())
                .output()
                .expect("run scripts/python-sdk-venv.sh (needs bash and python3)");
            assert!(
                out.status.success(),
                "making the Python SDK venv failed; is PyPI reachable and python3-venv installed \
                 (scripts/install-deps.sh)?"
            );
            PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
        })
        .clone()
}

/// The directory holding `pull_tools.mjs` beside its `node_modules`, made once per test binary.
fn typescript_example_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("typescript-sdk");
        let out = Command::new(repo().join("scripts/typescript-sdk-deps.sh"))
            .arg(&dir)
            .stderr(Stdio::inherit())
            .output()
            .expect("run scripts/typescript-sdk-deps.sh (needs bash, node and npm)");
        assert!(
            out.status.success(),
            "installing the TypeScript SDK failed; is npm's registry reachable and node \
             installed (scripts/install-deps.sh)?"
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
    .clone()
}

/// Which client runs the example.
enum Sdk {
    /// The Python SDK on a protocol era.
    Python { era: &'static str },
    /// The TypeScript SDK (2025-11-25: the pull tools).
    TypeScript,
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
        Sdk::TypeScript => {
            let mut c = Command::new("node");
            c.arg(typescript_example_dir().join("pull_tools.mjs"));
            c
        }
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
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
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
