//! The host CLIs people use, for real: Claude Code, Codex and Gemini CLI (pinned in
//! `integrations/host-clis/package-lock.json`), each configured by `tidings connect --socket`
//! in a temporary home and pointed at a scripted model API on 127.0.0.1
//! (`integrations/host-clis/scripted_model_api.mjs`). The script has the model call
//! `tidings_check`, then `tidings_wait`, then stop; the test writes a mail once the check has
//! answered, and the mail's sender and subject must be in the wait's result as the host hands
//! it to the model in its next request, through the entry exactly as `connect` wrote it.
//!
//! The check comes first because the first call starts from now: a mail written after the
//! check answered is the wait's to return whether the wait began before or after the write,
//! so nothing races. A wait first would have to be running before the write, which nothing
//! outside the host can see.
//!
//! The control: Codex starts its servers with a filtered environment, so the same run with
//! the entry's `--socket` taken out never reaches the daemon, even with `TIDINGS_SOCKET` in
//! Codex's own environment. The model API records the request that follows (no Tidings tool
//! offered), a sentinel rather than a timeout.
//!
//! `scripts/host-clis.sh` installs the CLIs under this run's target dir and reuses them (the
//! npm registry must be reachable the first time, as it is in CI). Nothing leaves the
//! machine: each host gets only the environment set here, with the model API's URL in it.
//!
//! [`host`] sets a host up and drives one run; [`model_api`] is the scripted API and reads back
//! what the hosts sent it.

mod host;
mod model_api;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use tidings_server::events::pull::summary::UNTRUSTED_NOTE;
use tidings_server::events::pull::{CAUTION, INSTRUCTIONS};

use crate::common::{Daemon, NOT_RUNNING, tidings_bin};
use host::{Host, Place, connect, drive};
use model_api::{ModelApi, find_string, offered_tidings, steps, tool_turns};

/// The longest one host run may take, start to exit (a run takes 1 to 3 s here).
const HOST_RUN: Duration = Duration::from_secs(120);

/// The sender of the mail the test writes: in the demo's allowlist, and in the tools'
/// `domains` filter.
const SENDER: &str = "ana@example.com";

/// What the user asks; the scripted model does the same whatever it says.
const PROMPT: &str = "Has any new mail come in from example.com?";

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The directory `scripts/host-clis.sh` fills (the CLIs' `node_modules` and the model API),
/// made once per test binary.
fn clis() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = Command::new(repo().join("scripts/host-clis.sh"))
            .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("host-clis"))
            .stderr(Stdio::inherit())
            .output()
            .expect("run scripts/host-clis.sh");
        assert!(
            out.status.success(),
            "scripts/host-clis.sh failed; is npm's registry reachable and node 20 or later \
             installed (scripts/install-deps.sh)?"
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
    .clone()
}
/// `host` configured by `tidings connect` and run on the script: the mail written during the
/// run reaches the model through the wait, and the daemon saw the host by name.
fn the_mail_reaches_the_model_through(host: Host) {
    let daemon = Daemon::start();
    let place = Place::new();
    let api = ModelApi::start(&place.logs);
    host.prepare(&place, &api);
    connect(host, &place.home, &daemon.socket);

    let run = drive(host.command(&place, &api), &daemon, &api, &place.logs);
    assert!(run.status.success(), "{host:?} failed: {}", run.output);
    let requests = api.requests();
    assert_eq!(
        steps(&requests),
        host.script(),
        "the model turns; {}",
        run.output
    );
    let subject = run.subject.expect("the mail was written at the wait");

    // The request after the wait: the check's result came before the mail, the wait's has it.
    let last = requests
        .iter()
        .rfind(|r| r["step"].as_str().is_some_and(|s| s.ends_with(" final")))
        .unwrap();
    let turns = tool_turns(last);
    let result_of = |tool: &str| {
        turns
            .iter()
            .find(|t| t.name.ends_with(tool))
            .unwrap_or_else(|| panic!("no {tool} result in the model's request: {turns:?}"))
    };
    // `mcp__tidings__tidings_wait` (Claude Code, Codex), `mcp_tidings_tidings_wait` (Gemini).
    let check = result_of("_tidings_check");
    let wait = result_of("_tidings_wait");
    assert!(!check.result.contains(&subject), "{check:?}");
    assert!(
        wait.result.contains(SENDER) && wait.result.contains(&subject),
        "the wait's result as {host:?} passed it to the model lacks the mail: {wait:?}"
    );

    // The daemon knew the host by the name its wait ceiling is chosen by.
    let state = run.state_at_wait.unwrap();
    let client = state["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == host.client_name())
        .unwrap_or_else(|| panic!("no client {:?} in {state}", host.client_name()));
    assert!(
        client["subscriptions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["eventType"] == "mail.received" && s["mode"] == "tools"),
        "{client}"
    );

    // The server's instructions (the untrusted-text warning) reach the model.
    let first_sentence = INSTRUCTIONS.split(". ").next().unwrap();
    let instructions_at = find_string(&last["body"], first_sentence, "");
    assert!(
        instructions_at.is_some(),
        "{host:?} did not pass the server's instructions to the model"
    );
    // Whichever part of the result the host passes on, the warning that its fields are
    // untrusted travels with it: the caution opening the structured JSON, ahead of the mail,
    // or the note closing the text block.
    let structured = wait.result.contains("\"has_more\"");
    let warned = if structured {
        wait.result
            .find(CAUTION)
            .is_some_and(|at| at < wait.result.find(&subject).unwrap())
    } else {
        wait.result.contains(UNTRUSTED_NOTE)
    };
    assert!(
        warned,
        "{host:?} passed the model the mail without the warning: {wait:?}"
    );
    // Facts for docs/clients.md, in the test's output.
    let form = if structured {
        "structuredContent as JSON"
    } else {
        "the text block"
    };
    eprintln!(
        "{host:?}: client {} {}; model turns {:?}; the model reads {form} of a tool result; \
         the instructions are at {} of its request",
        client["name"].as_str().unwrap_or_default(),
        client["version"].as_str().unwrap_or_default(),
        host.script(),
        instructions_at.unwrap()
    );
}

#[test]
fn claude_code_hands_the_model_the_mail_through_the_entry_connect_wrote() {
    the_mail_reaches_the_model_through(Host::ClaudeCode);
}

#[test]
fn codex_hands_the_model_the_mail_through_the_entry_connect_wrote() {
    the_mail_reaches_the_model_through(Host::Codex);
}

#[test]
fn gemini_cli_hands_the_model_the_mail_through_the_entry_connect_wrote() {
    the_mail_reaches_the_model_through(Host::Gemini);
}

/// The control for the Codex test: the same run with `--socket` taken out of the entry
/// `connect` wrote, and `TIDINGS_SOCKET` in Codex's environment, gives the model no Tidings
/// tool, because Codex passes its servers only a few variables (HOME, PATH, LANG, …).
#[test]
fn codex_without_the_socket_in_its_entry_never_reaches_the_daemon() {
    let daemon = Daemon::start();
    let place = Place::new();
    let api = ModelApi::start(&place.logs);
    Host::Codex.prepare(&place, &api);
    connect(Host::Codex, &place.home, &daemon.socket);

    let config = place.home.join(".codex/config.toml");
    let mut doc: toml_edit::DocumentMut =
        std::fs::read_to_string(&config).unwrap().parse().unwrap();
    let entry = &mut doc["mcp_servers"]["tidings"];
    let args: Vec<String> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        args,
        ["--socket", daemon.socket.to_str().unwrap()],
        "connect names the socket in Codex's entry"
    );
    entry["args"] = toml_edit::value(toml_edit::Array::new());
    std::fs::write(&config, doc.to_string()).unwrap();

    // Where a server of Codex's looks for the daemon without --socket; a daemon of someone
    // else's there would serve the tools (but never this daemon's mail).
    let elsewhere = Command::new(tidings_bin())
        .args(["status", "--json"])
        .env_clear()
        .env("HOME", &place.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .unwrap();
    let nothing_elsewhere = elsewhere.status.code() == Some(NOT_RUNNING);

    let mut command = Host::Codex.command(&place, &api);
    command.env("TIDINGS_SOCKET", &daemon.socket);
    let run = drive(command, &daemon, &api, &place.logs);
    assert!(run.status.success(), "Codex failed: {}", run.output);
    let requests = api.requests();
    if let Some(subject) = &run.subject {
        assert!(
            requests
                .iter()
                .all(|r| find_string(&r["body"], subject, "").is_none()),
            "the mail reached the model without --socket"
        );
    }
    if nothing_elsewhere {
        assert_eq!(steps(&requests), ["no-tool"], "{}", run.output);
        assert!(!offered_tidings(&requests), "{}", run.output);
    } else {
        eprintln!(
            "a daemon answers where Codex's tidings-mcp looks without --socket; only checked \
             that this daemon's mail never reached the model"
        );
    }
}
