//! Every `tidings tail` and `tidings status` command line the README and `tidings tail
//! --help` show, run as written against a demo daemon: each tail must print an event (so the
//! simulator's senders cover every example) and the cursor to resume from.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;

use crate::common::{Daemon, WAIT, signal, tidings_bin};

/// The command lines a reader is shown: the README's `./target/debug/tidings …` lines and the
/// examples at the end of `tidings tail --help`.
fn documented_commands() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let help = Command::new(tidings_bin())
        .args(["tail", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let mut commands: Vec<String> = readme
        .lines()
        .filter_map(|l| l.trim().strip_prefix("./target/debug/tidings "))
        .chain(
            help.lines()
                .filter_map(|l| l.trim().strip_prefix("tidings ")),
        )
        .filter(|c| c.starts_with("tail ") || c.starts_with("status"))
        .map(str::to_owned)
        .collect();
    commands.dedup();
    commands
}

#[test]
fn every_documented_command_line_works_against_the_demo() {
    let commands = documented_commands();
    assert!(commands.len() >= 5, "{commands:?}");
    // The README's layout: the demo in ./demo, commands run from its parent. The simulator
    // runs faster than the demo's default; the command lines are the same.
    let mut serve = Daemon::builder().data_dir("demo").simulate("0.2").start();
    let cwd = serve.tmp.path().to_path_buf();
    for command in &commands {
        run(command, &cwd, &serve.socket);
    }
    serve.terminate();
}

/// Run one documented command line in `cwd`; examples without `--socket` find the demo
/// through `TIDINGS_SOCKET`, as a reader's shell would after `export TIDINGS_SOCKET=…`.
fn run(command: &str, cwd: &Path, socket: &Path) {
    let args: Vec<&str> = command.split_whitespace().collect();
    let mut child = Command::new(tidings_bin())
        .args(&args)
        .current_dir(cwd)
        .env("TIDINGS_SOCKET", socket)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if args[0] == "status" {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "`{command}`: {out:?}");
        return;
    }
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = rx.recv_timeout(WAIT);
    signal(child.id(), libc::SIGINT);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    let first = first.unwrap_or_else(|_| panic!("`{command}` printed no event; stderr: {stderr}"));
    let event: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert!(event["eventId"].is_string(), "`{command}`: {event}");
    assert!(status.success(), "`{command}`: {status:?}; {stderr}");
    assert!(
        stderr.contains("resume with --cursor v2."),
        "`{command}`: {stderr}"
    );
}
