//! Refusals: an agent denied in the file loses its open stream at once and a fresh shim from
//! it is turned away, while another host goes on; with `new = "ask"` and no app to ask, a new
//! host is refused with the command that allows it; and what cannot be identified is one
//! agent, `unidentified`, granted and denied like any other.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::{
    ALLOWLISTS, agent_by_id, assert_forbidden, deny_new, grant, introduce, open_stream, request_as,
    seen, two_hosts, wait_grant, wait_status,
};
use crate::common::{Client, Daemon, Writer, is_event, is_note, shim_bin};

/// Waits for `terminated` on stream `id`; its error.
fn terminated(client: &mut Client, id: u64, mark: usize) -> Value {
    let sub = json!(id);
    let note = client.wait_for(&format!("terminated on stream {id}"), mark, |f| {
        is_note(f, "notifications/events/terminated", &sub)
    });
    note["params"]["error"].clone()
}

/// Asserts a refusal's message names the command that would allow agent `id`.
fn names_the_command(error: &Value, id: &str) {
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("`tidings agents allow {id}`")),
        "{message}"
    );
}

#[test]
fn agents_deny_ends_the_stream_at_once_and_refuses_a_fresh_shim() {
    let (tmp, a, b) = two_hosts();
    let daemon = Daemon::builder().tmp(tmp).settings(&deny_new("")).start();
    let mut a_client = a.shim(&daemon, &[]);
    let mut b_client = b.shim(&daemon, &[]);
    let (a_id, a_key) = introduce(&daemon, &a, &mut a_client, "tidings-tests");
    let (b_id, b_key) = introduce(&daemon, &b, &mut b_client, "tidings-tests");
    let b_grant = grant(&b_id, &b_key, "allow", "true", "true");
    daemon.write_settings(&deny_new(&format!(
        "{}{b_grant}",
        grant(&a_id, &a_key, "allow", "true", "true")
    )));
    wait_grant(&daemon, &a_id, "allowed", None);
    wait_grant(&daemon, &b_id, "allowed", None);
    open_stream(&mut a_client, "tidings-tests", 1, "mail.received").unwrap();
    open_stream(&mut b_client, "tidings-tests", 1, "mail.received").unwrap();

    // Denied in the file, as `tidings agents deny` or an editor would write it.
    let mark = a_client.mark();
    daemon.write_settings(&deny_new(&format!(
        "{}{b_grant}",
        grant(&a_id, &a_key, "deny", "true", "true")
    )));
    let error = terminated(&mut a_client, 1, mark);
    assert_forbidden(&error, "agent_denied", &a_id);
    names_the_command(&error, &a_id);

    // A fresh shim from the same program: its initialize is refused, and so is a 2026 request.
    let mut fresh = a.shim(&daemon, &[]);
    let mark = fresh.mark();
    fresh.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "1"}}}),
    );
    let init = fresh.wait_for("initialize", mark, |f| {
        f["id"] == 1 && f.get("method").is_none()
    });
    assert_forbidden(&init["error"], "agent_denied", &a_id);
    let mut fresh = a.shim(&daemon, &[]);
    let mark = fresh.mark();
    request_as(&mut fresh, "tidings-tests", 2, "events/list", json!({}));
    let list = fresh.wait_for("events/list", mark, |f| {
        f["id"] == 2 && f.get("method").is_none()
    });
    assert_forbidden(&list["error"], "agent_denied", &a_id);
    let poll = fresh.call(
        3,
        "events/poll",
        json!({"name": "mail.received", "arguments": {}}),
    );
    assert_forbidden(&poll["error"], "agent_denied", &a_id);

    // B is untouched: its stream goes on and delivers, and it may open another.
    let writer = Writer::new(daemon.home());
    let mail = writer.mail("ana@example.com");
    let sub = json!(1);
    b_client.wait_for("B's mail", 0, |f| is_event(f, &sub, &mail));
    assert!(
        !b_client
            .frames
            .iter()
            .any(|f| is_note(f, "notifications/events/terminated", &sub)),
        "B's stream ended"
    );
    open_stream(&mut b_client, "tidings-tests", 2, "messages.received").unwrap();
    let a_frames: String = a_client.frames.iter().map(Value::to_string).collect();
    assert!(!a_frames.contains(&mail), "the denied agent got mail");
    let state = super::status(&daemon);
    assert_eq!(
        agent_by_id(&state, &a_id).unwrap()["access"],
        "denied",
        "{state:#}"
    );
}

#[test]
fn agents_ask_with_no_app_refuses_naming_the_command() {
    let (tmp, a, _) = two_hosts();
    // `[agents]` with nothing in it: `new` is its default, ask.
    let daemon = Daemon::builder()
        .tmp(tmp)
        .settings(&format!("{ALLOWLISTS}\n[agents]\n"))
        .start();
    assert_eq!(super::status(&daemon)["newAgents"], "ask");
    let mut client = a.shim(&daemon, &[]);
    let error = open_stream(&mut client, "tidings-tests", 1, "mail.received").unwrap_err();
    let (id, _) = seen(&daemon, &a);
    assert_forbidden(&error, "agent_not_allowed", &id);
    names_the_command(&error, &id);
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("python3 host_a.py"), "{message}");

    let poll = client.call(
        2,
        "events/poll",
        json!({"name": "messages.received", "arguments": {}}),
    );
    assert_forbidden(&poll["error"], "agent_not_allowed", &id);
    names_the_command(&poll["error"], &id);
    let tool = client.result(
        3,
        "tools/call",
        json!({"name": "tidings_check", "arguments": {}}),
    );
    assert_eq!(tool["isError"], true, "{tool}");
    assert!(
        tool.to_string()
            .contains(&format!("tidings agents allow {id}")),
        "{tool}"
    );
    // Nothing waits for an answer no one can give.
    let state = super::status(&daemon);
    assert_ne!(
        agent_by_id(&state, &id).unwrap()["access"],
        "asking",
        "{state:#}"
    );
}

/// A shim whose parent exits at once: it is started only once its parent is gone, so the
/// daemon finds init (pid 1) above it.
const ORPHAN: &str = "import os, sys, time\nparent = os.getpid()\nif os.fork():\n    os._exit(0)\n\
     while os.getppid() == parent:\n    time.sleep(0.01)\nos.execv(sys.argv[1], sys.argv[1:])\n";

/// A shim under `$1` nested shells: past the walk's 16 steps.
const NESTED: &str = "n=$1; shift\nif [ \"$n\" -gt 0 ]; then\n  sh \"$0\" $((n - 1)) \"$@\"\n  \
     exit $?\nfi\nexec \"$@\"\n";

fn orphan(dir: &Path, daemon: &Daemon) -> Client {
    let script = dir.join("orphan.py");
    std::fs::write(&script, ORPHAN).unwrap();
    Client::spawn(
        Command::new(super::python())
            .arg(script)
            .arg(shim_bin())
            .arg("--socket")
            .arg(&daemon.socket),
    )
}

fn nested(dir: &Path, daemon: &Daemon) -> Client {
    let script = dir.join("nested.sh");
    std::fs::write(&script, NESTED).unwrap();
    Client::spawn(
        Command::new("sh")
            .arg(script)
            .arg("20")
            .arg(shim_bin())
            .arg("--socket")
            .arg(&daemon.socket),
    )
}

#[test]
fn agents_unidentified_is_one_agent() {
    let (tmp, a, _) = two_hosts();
    let dir = tmp.path().to_path_buf();
    let unidentified = |access: &str| {
        deny_new(&grant(
            "unidentified",
            "unidentified",
            access,
            "true",
            "false",
        ))
    };
    let daemon = Daemon::builder()
        .tmp(tmp)
        .settings(&unidentified("allow"))
        .start();
    let mut clients = [orphan(&dir, &daemon), nested(&dir, &daemon)];
    for client in &mut clients {
        open_stream(client, "tidings-tests", 1, "mail.received").unwrap();
        let refused = open_stream(client, "tidings-tests", 2, "messages.received");
        assert!(refused.is_err(), "messages are not granted to it");
    }
    // One agent for both, listed once.
    let state = wait_status(
        &daemon,
        "counted both streams of the unidentified agent",
        |s| agent_by_id(s, "unidentified").is_some_and(|u| u["streams"] == 2),
    );
    let listed: Vec<&Value> = state["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["identity"] == "unidentified")
        .collect();
    assert_eq!(listed.len(), 1, "{state:#}");
    assert_eq!(listed[0]["kind"], "unidentified", "{state:#}");
    assert_eq!(listed[0]["access"], "allowed", "{state:#}");
    // Its grant is its own: an identified host under `new = "deny"` gets nothing.
    let mut host = a.shim(&daemon, &[]);
    let error = open_stream(&mut host, "tidings-tests", 1, "mail.received").unwrap_err();
    assert_eq!(error["data"]["reason"], "agent_not_allowed", "{error}");
    assert_ne!(error["data"]["agent"], "unidentified", "{error}");

    let writer = Writer::new(daemon.home());
    let mail = writer.mail("ana@example.com");
    let sub = json!(1);
    for client in &mut clients {
        client.wait_for("the mail", 0, |f| is_event(f, &sub, &mail));
    }

    // Denied, like any other: both streams end, and a new unidentified shim is refused.
    let marks: Vec<usize> = clients.iter().map(Client::mark).collect();
    daemon.write_settings(&unidentified("deny"));
    for (client, mark) in clients.iter_mut().zip(marks) {
        let error = terminated(client, 1, mark);
        assert_forbidden(&error, "agent_denied", "unidentified");
    }
    let mut again = nested(&dir, &daemon);
    let mark = again.mark();
    request_as(&mut again, "tidings-tests", 1, "events/list", json!({}));
    let list = again.wait_for("events/list", mark, |f| {
        f["id"] == 1 && f.get("method").is_none()
    });
    assert_forbidden(&list["error"], "agent_denied", "unidentified");
}
