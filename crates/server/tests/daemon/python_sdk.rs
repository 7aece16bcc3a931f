//! The official Python MCP SDK (`mcp`, pinned in `examples/python/requirements.txt`) as a
//! client of a demo daemon through the real shim: `examples/python/events_stream.py` gets
//! events through `events/stream` on 2026-07-28, and through the pull tools on 2025-11-25
//! (skipped, saying so, while the daemon lists no `tidings_check`).
//!
//! The venv lives under this run's target dir and is reused; `scripts/python-sdk-venv.sh` makes
//! it (the Python package index must be reachable the first time, as it is in CI).

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

/// The example against `daemon` on `era`, its stdout lines on a channel.
fn example(daemon: &Daemon, era: &str, count: usize) -> (Child, Receiver<String>) {
    let mut child = Command::new(python())
        .arg(repo().join("examples/python/events_stream.py"))
        .arg("--shim")
        .arg(shim_bin())
        .arg("--socket")
        .arg(&daemon.socket)
        .args(["--era", era, "--domains", "example.com"])
        .args(["--count", &count.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the Python example");
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
        .unwrap_or_else(|_| panic!("the Python example printed no {what} within {WAIT:?}"))
}

/// Runs the example on `era`: two allowed mails and one from another domain are written once
/// it is listening; it must print exactly the two. `false` when it skipped.
fn two_events_through(era: &str) -> bool {
    let daemon = Daemon::start();
    let writer = Writer::new(daemon.home());
    let (mut child, rx) = example(&daemon, era, 2);
    let first = next_line(&rx, "READY line");
    if let Some(reason) = first.strip_prefix("SKIP ") {
        eprintln!("skipped the {era} run: {reason}");
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
    assert!(two_events_through("2026-07-28"), "2026-07-28 never skips");
}

#[test]
fn the_python_sdk_gets_events_through_the_pull_tools() {
    two_events_through("2025-11-25");
}
