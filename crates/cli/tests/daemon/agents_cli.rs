//! `tidings agents` against a demo daemon: the test process's agent listed with `--json`,
//! `deny` written to settings.toml and applied (its stream ends, its next request is refused
//! naming `tidings agents allow ID`), `forget`, unknown ids, no daemon, and the help.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use tidings_platform::identity::agent_id;

use crate::common::{Daemon, Raw, tidings_bin};

/// The name the test's raw connection announces: how its row is found.
const ANNOUNCED: &str = "agents-test-client";

/// `tidings agents ARGS --demo-dir DIR`.
fn agents(dir: &Path, args: &[&str]) -> Output {
    Command::new(tidings_bin())
        .arg("agents")
        .args(args)
        .arg("--demo-dir")
        .arg(dir)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `--json` list.
fn listed(dir: &Path) -> Vec<Value> {
    let out = agents(dir, &["--json"]);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

#[test]
fn deny_ends_the_agents_stream_and_refuses_it_then_forget_removes_the_grant() {
    let daemon = Daemon::start();
    let mut raw = Raw::connect(&daemon.socket, ANNOUNCED);
    raw.stream(1, "mail.received", json!({"domains": ["example.com"]}));

    let rows = listed(&daemon.dir);
    let row = rows
        .iter()
        .find(|r| {
            r["announced"]
                .as_array()
                .unwrap()
                .contains(&json!(ANNOUNCED))
        })
        .unwrap_or_else(|| panic!("the test's agent is listed: {rows:#?}"))
        .clone();
    let id = row["id"].as_str().unwrap().to_owned();
    let identity = row["identity"].as_str().unwrap();
    assert!(identity.starts_with("exe:"), "{row}");
    assert_eq!(
        id,
        agent_id(row["name"].as_str().unwrap(), identity),
        "{row}"
    );
    assert_eq!(row["kind"], "program", "{row}");
    assert_eq!(row["access"], "new", "the demo lets new agents in: {row}");
    assert_eq!(row["saved"], Value::Null, "{row}");
    assert!(row["streams"].as_u64().unwrap() >= 1, "{row}");
    assert!(row["lastSeenMs"].as_u64().is_some(), "{row}");
    assert_eq!(row["grants"].as_array().unwrap().len(), 2, "{row}");

    let out = agents(&daemon.dir, &["deny", &id]);
    assert!(out.status.success(), "{out:?}");
    let said = text(&out.stderr);
    assert!(
        said.contains("denied") && said.contains(&id) && said.contains("a second"),
        "{said}"
    );
    let file = std::fs::read_to_string(daemon.settings_path()).unwrap();
    assert!(file.contains(&format!("[agents.known.{id}]")), "{file}");
    assert!(file.contains("access = \"deny\""), "{file}");
    assert!(file.contains(identity), "{file}");

    // Applied: the open stream ends with Forbidden naming the agent.
    let ended = raw.wait_for("the stream's terminated", |f| {
        f["method"] == "notifications/events/terminated"
    });
    assert_eq!(
        ended["params"]["error"]["data"]["reason"], "agent_denied",
        "{ended}"
    );
    // A new connection of the same program is refused, with the way back.
    let mut again = Raw::connect(&daemon.socket, ANNOUNCED);
    let refused = again.call(
        2,
        "events/stream",
        json!({"name": "mail.received",
        "arguments": {"domains": ["example.com"]}}),
    );
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("tidings agents allow {id}")),
        "{refused}"
    );

    // The file's decision is listed whether or not this program may ask the daemon.
    let rows = listed(&daemon.dir);
    let row = rows.iter().find(|r| r["id"] == json!(id)).unwrap();
    assert_eq!(row["saved"], "deny", "{row}");

    let out = agents(&daemon.dir, &["forget", &id]);
    assert!(out.status.success(), "{out:?}");
    assert!(text(&out.stderr).contains("forgot"), "{out:?}");
    let file = std::fs::read_to_string(daemon.settings_path()).unwrap();
    assert!(!file.contains(&id), "{file}");
    let out = agents(&daemon.dir, &["forget", &id]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(text(&out.stderr).contains("`tidings agents`"), "{out:?}");
}

#[test]
fn allow_of_an_id_no_one_knows_fails_naming_the_list() {
    let daemon = Daemon::start();
    let before = std::fs::read_to_string(daemon.settings_path()).unwrap();
    let out = agents(&daemon.dir, &["allow", "nobody-000000"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = text(&out.stderr);
    assert!(
        said.contains("no agent `nobody-000000`") && said.contains("`tidings agents` lists"),
        "{said}"
    );
    let out = agents(&daemon.dir, &["deny", "Not An Id"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(text(&out.stderr).contains("not an agent id"), "{out:?}");
    let after = std::fs::read_to_string(daemon.settings_path()).unwrap();
    assert_eq!(before, after, "a refused decision writes nothing");
}

#[test]
fn without_a_daemon_the_files_agents_are_listed_and_new_agents_said() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("settings.toml"),
        "[agents]\nnew = \"deny\"\n\n[agents.known.py-1a2b3c]\nidentity = \"exe:/usr/bin/python3\"\nname = \"python3\"\naccess = \"allow\"\nmessages = false\n",
    )
    .unwrap();
    let out = agents(tmp.path(), &[]);
    assert!(out.status.success(), "{out:?}");
    let listing = text(&out.stdout);
    assert!(listing.contains("py-1a2b3c  python3: allowed"), "{listing}");
    assert!(
        listing.contains("mail.received: every sender; messages.received: none"),
        "{listing}"
    );
    assert!(
        listing.contains("New agents ([agents] new = \"deny\")"),
        "{listing}"
    );
    assert!(
        text(&out.stderr).contains("Tidings is not running"),
        "{out:?}"
    );
    // An id in the file needs no daemon.
    let out = agents(tmp.path(), &["deny", "py-1a2b3c"]);
    assert!(out.status.success(), "{out:?}");
    let file = std::fs::read_to_string(tmp.path().join("settings.toml")).unwrap();
    assert!(file.contains("access = \"deny\""), "{file}");
    assert!(file.contains("new = \"deny\""), "the rest is kept: {file}");
}

#[test]
fn the_help_names_the_decisions_and_the_tokens() {
    let out = Command::new(tidings_bin())
        .args(["agents", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let help = text(&out.stdout);
    for word in [
        "allow",
        "deny",
        "forget",
        "--json",
        "--demo-dir",
        "5 seconds",
    ] {
        assert!(help.contains(word), "{word}: {help}");
    }
    let out = Command::new(tidings_bin())
        .args(["token", "--help"])
        .output()
        .unwrap();
    let help = text(&out.stdout);
    for word in ["create", "list", "revoke", "show", "rotate"] {
        assert!(help.contains(word), "{word}: {help}");
    }
}

#[test]
fn agent_tokens_are_made_listed_without_the_token_and_revoked() {
    let tmp = tempfile::tempdir().unwrap();
    let token = |args: &[&str]| {
        Command::new(tidings_bin())
            .arg("token")
            .args(args)
            .arg("--demo-dir")
            .arg(tmp.path())
            .output()
            .unwrap()
    };
    let out = token(&["create", "cursor"]);
    assert!(out.status.success(), "{out:?}");
    let secret = text(&out.stdout).trim().to_owned();
    assert_eq!(secret.len(), 43, "{out:?}");
    let out = token(&["list"]);
    let listing = text(&out.stdout);
    assert!(listing.contains("cursor  created "), "{listing}");
    assert!(!listing.contains(&secret), "{listing}");
    let file = std::fs::read_to_string(tmp.path().join("agent-tokens.json")).unwrap();
    assert!(!file.contains(&secret), "{file}");
    let out = token(&["create", "http"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = token(&["revoke", "cursor"]);
    assert!(out.status.success(), "{out:?}");
    assert!(text(&out.stderr).contains("no daemon running"), "{out:?}");
    let out = token(&["revoke", "cursor"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(text(&out.stderr).contains("tidings token list"), "{out:?}");
}
