//! Each agent gets only its grant, over the real socket with real processes: two host
//! programs (`python3 host_a.py`, `python3 host_b.py`, each running the real `tidings-mcp`
//! as its child) told apart by what the OS says they are, never by the name they announce.
//!
//! The helpers here start hosts, learn each host's id and identity from `State.agents` (as the
//! daemon found them), write grants, and wait for the daemon to have applied them.

// Two hosts, each its grant on every path; a borrowed name; a grant widened by hand.
mod grants;
// Denied, asked with no app, and the one unidentified agent.
mod refusals;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{Client, Daemon, WAIT, is_note, shim_bin};

/// A host program: runs its arguments (the shim and its flags) as a child, stdio inherited,
/// and exits with its code, as Claude Code or Codex start a stdio MCP server.
const HOST: &str = "import subprocess, sys\nsys.exit(subprocess.run(sys.argv[1:]).returncode)\n";

/// Both types on, mail allowlisted to two domains, messages to the demo's phone range.
pub const ALLOWLISTS: &str = "[mail]\nenabled = true\nallow = [\"example.com\", \"example.org\"]\n\n\
     [messages]\nenabled = true\nallow = [\"+120255501*\"]\n";

/// The interpreter the hosts run on: the system's own when there is one (a version manager's
/// `python3` is a shell script in front of it).
pub fn python() -> PathBuf {
    let system = Path::new("/usr/bin/python3");
    if system.exists() {
        system.to_path_buf()
    } else {
        PathBuf::from("python3")
    }
}

/// One host program, a script in the test's temp dir.
pub struct Host {
    script: PathBuf,
}

impl Host {
    /// Writes `<dir>/<file>` (e.g. `host_a.py`).
    pub fn new(dir: &Path, file: &str) -> Host {
        let script = dir.join(file);
        std::fs::write(&script, HOST).unwrap();
        Host { script }
    }

    /// The script's file name, which the agent's identity and name carry.
    pub fn file(&self) -> &str {
        self.script.file_name().unwrap().to_str().unwrap()
    }

    /// The host running `tidings-mcp --socket <daemon's> <args>`; the client talks to the
    /// shim through the host's inherited stdio.
    pub fn shim(&self, daemon: &Daemon, args: &[&str]) -> Client {
        let mut command = Command::new(python());
        command
            .arg(&self.script)
            .arg(shim_bin())
            .arg("--socket")
            .arg(&daemon.socket)
            .args(args)
            .env("TIDINGS_CONFIG_DIR", &daemon.dir);
        Client::spawn(&mut command)
    }

    /// The host running the channel shim with `args` after `--channel`, handshaken as
    /// Claude Code does.
    pub fn channel(&self, daemon: &Daemon, args: &[&str]) -> Client {
        let mut all = vec!["--channel"];
        all.extend_from_slice(args);
        let mut client = self.shim(daemon, &all);
        let mark = client.mark();
        client.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": "2.1.90"}}}),
        );
        let init = client.wait_for("the channel's initialize", mark, |f| {
            f["id"] == 1 && f.get("method").is_none()
        });
        assert!(init.get("result").is_some(), "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }
}

/// A temp dir for a daemon, with `host_a.py` and `host_b.py` in it.
pub fn two_hosts() -> (Arc<TempDir>, Host, Host) {
    let tmp = Arc::new(tempfile::tempdir().unwrap());
    let a = Host::new(tmp.path(), "host_a.py");
    let b = Host::new(tmp.path(), "host_b.py");
    (tmp, a, b)
}

/// The daemon's `State`, straight on the socket.
pub fn status(daemon: &Daemon) -> Value {
    let answer = daemon
        .socket_call("tidings/status")
        .expect("tidings/status answers");
    answer["result"].clone()
}

/// Polls `State` until `pred` holds; returns it.
pub fn wait_status(daemon: &Daemon, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let state = status(daemon);
        if pred(&state) {
            return state;
        }
        assert!(
            Instant::now() < deadline,
            "never {what}; state:\n{state:#}\ndaemon stderr:\n{}",
            daemon.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The agent whose identity names `host`'s script, in `state`.
pub fn agent_of<'a>(state: &'a Value, host: &Host) -> Option<&'a Value> {
    state["agents"].as_array()?.iter().find(|a| {
        a["identity"]
            .as_str()
            .is_some_and(|i| i.contains("script:") && i.ends_with(host.file()))
    })
}

/// The agent with id `id`, in `state`.
pub fn agent_by_id<'a>(state: &'a Value, id: &str) -> Option<&'a Value> {
    state["agents"].as_array()?.iter().find(|a| a["id"] == id)
}

/// `host`'s id and identity as the daemon found them (it has connected): the grant in the
/// file is keyed by them.
pub fn seen(daemon: &Daemon, host: &Host) -> (String, String) {
    let state = wait_status(
        daemon,
        &format!(
            "listed {} as an agent of its own (the platform's identity module names an \
             interpreter by its script)",
            host.file()
        ),
        |s| agent_of(s, host).is_some(),
    );
    let agent = agent_of(&state, host).unwrap();
    assert_eq!(
        agent["name"],
        format!("python3 {}", host.file()),
        "{agent:#}"
    );
    (
        agent["id"].as_str().unwrap().to_owned(),
        agent["identity"].as_str().unwrap().to_owned(),
    )
}

/// One `[agents.known.ID]` table.
pub fn grant(id: &str, identity: &str, access: &str, mail: &str, messages: &str) -> String {
    named_grant(id, id, identity, access, mail, messages)
}

/// One `[agents.known.ID]` table whose `name` (what the file shows) is `name`.
pub fn named_grant(
    id: &str,
    name: &str,
    identity: &str,
    access: &str,
    mail: &str,
    messages: &str,
) -> String {
    format!(
        "\n[agents.known.{id}]\nidentity = {}\nname = {}\naccess = \"{access}\"\n\
         mail = {mail}\nmessages = {messages}\n",
        toml_string(identity),
        toml_string(name)
    )
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// Waits until agent `id` is in force with `access` and a mail grant of `senders` entries
/// (`None`: every sender, or mail not granted).
pub fn wait_grant(daemon: &Daemon, id: &str, access: &str, mail_senders: Option<usize>) {
    wait_status(
        daemon,
        &format!("applied the grant of {id} ({access}, mail senders {mail_senders:?})"),
        |s| {
            agent_by_id(s, id).is_some_and(|a| {
                a["access"] == access
                    && a["grants"].as_array().unwrap().iter().any(|g| {
                        g["eventType"] == "mail.received" && g["senders"] == json!(mail_senders)
                    })
            })
        },
    );
}

/// A request as a client announcing `name` would send it (2026-07-28 `_meta`).
pub fn request_as(client: &mut Client, name: &str, id: u64, method: &str, params: Value) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"}
    });
    client.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
}

/// Opens a stream of `event_type` (no filter) announcing `name`; its `active`, or the error
/// it was refused with.
pub fn open_stream(
    client: &mut Client,
    name: &str,
    id: u64,
    event_type: &str,
) -> Result<(), Value> {
    let mark = client.mark();
    request_as(
        client,
        name,
        id,
        "events/stream",
        json!({"name": event_type, "arguments": {}}),
    );
    let sub = json!(id);
    let frame = client.wait_for(&format!("{event_type}'s active or refusal"), mark, |f| {
        is_note(f, "notifications/events/active", &sub)
            || (f["id"] == sub && f.get("method").is_none())
    });
    match frame.get("error") {
        Some(error) => Err(error.clone()),
        None => Ok(()),
    }
}

/// The events stream `id` delivered so far.
pub fn streamed(client: &Client, id: u64) -> Vec<String> {
    let sub = json!(id);
    client
        .frames
        .iter()
        .filter(|f| is_note(f, "notifications/events/event", &sub))
        .map(|f| f["params"]["eventId"].as_str().unwrap().to_owned())
        .collect()
}

/// Asserts `error` is Forbidden for `reason`, naming agent `id`.
pub fn assert_forbidden(error: &Value, reason: &str, id: &str) {
    assert_eq!(error["code"], -32024, "{error}");
    assert_eq!(error["data"]["reason"], reason, "{error}");
    assert_eq!(error["data"]["agent"], id, "{error}");
}

/// Settings with [`ALLOWLISTS`], new agents denied, and the grants `known`.
pub fn deny_new(known: &str) -> String {
    format!("{ALLOWLISTS}\n[agents]\nnew = \"deny\"\n{known}")
}

/// Has `client` (a shim run by `host`, announcing `name`) answer one request, so its
/// connection is up; then `host`'s id and identity.
pub fn introduce(
    daemon: &Daemon,
    host: &Host,
    client: &mut Client,
    name: &str,
) -> (String, String) {
    let mark = client.mark();
    request_as(client, name, 900, "events/list", json!({}));
    client.wait_for("the answer to events/list", mark, |f| {
        f["id"] == 900 && f.get("method").is_none()
    });
    seen(daemon, host)
}
