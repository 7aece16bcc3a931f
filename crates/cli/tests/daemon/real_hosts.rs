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

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use tidings_server::events::pull::summary::UNTRUSTED_NOTE;
use tidings_server::events::pull::{CAUTION, INSTRUCTIONS};

use crate::common::{Daemon, NOT_RUNNING, WAIT, Writer, shim_bin, tidings_bin};

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

/// The scripted model API, killed when dropped.
struct ModelApi {
    child: Child,
    port: u16,
    record: PathBuf,
    /// `SERVED <api> <step>` lines, as it answers.
    served: Receiver<String>,
}

impl ModelApi {
    fn start(dir: &Path) -> ModelApi {
        let record = dir.join("model-requests.jsonl");
        let mut child = Command::new("node")
            .arg(clis().join("scripted_model_api.mjs"))
            .arg("--record")
            .arg(&record)
            .args(["--args", &json!({"domains": ["example.com"]}).to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn node scripted_model_api.mjs");
        let (tx, rx) = channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = rx
            .recv_timeout(WAIT)
            .expect("the model API printed no LISTENING line");
        let port = first
            .strip_prefix("LISTENING ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("not a LISTENING line: {first:?}"));
        ModelApi {
            child,
            port,
            record,
            served: rx,
        }
    }

    /// Every request it received, in order.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for ModelApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone, Copy, Debug)]
enum Host {
    ClaudeCode,
    Codex,
    Gemini,
}

impl Host {
    /// The name `tidings connect` takes.
    fn connect_name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
        }
    }

    /// The `clientInfo.name` the host announces, which picks its `tidings_wait` ceiling
    /// (`events/pull/hosts.rs`).
    fn client_name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex-mcp-client",
            Host::Gemini => "gemini-cli-mcp-client",
        }
    }

    /// The model turns the script plays with this host. Claude Code defers MCP tools: its
    /// model sees only their names until its tool search loads them.
    fn script(self) -> &'static [&'static str] {
        match self {
            Host::ClaudeCode => &["search", "check", "wait", "final"],
            Host::Codex | Host::Gemini => &["check", "wait", "final"],
        }
    }

    /// What the host needs in its home before `connect` adds Tidings' entry: Codex's model
    /// provider (the scripted API); Gemini CLI's sign-in kind and the working dir trusted
    /// (headless, it refuses to run in a folder it does not trust); Claude Code takes all it
    /// needs from the environment.
    fn prepare(self, place: &Place, api: &ModelApi) {
        let write = |path: &str, text: &str| {
            let path = place.home.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        match self {
            Host::ClaudeCode => {}
            Host::Codex => write(
                ".codex/config.toml",
                &format!(
                    "# The scripted model API of real_hosts.rs; `tidings connect` adds its \
                     entry below.\n\
                     model = \"scripted\"\n\
                     model_provider = \"scripted\"\n\
                     # Run MCP tools without asking: nobody is there to answer.\n\
                     approval_policy = \"never\"\n\
                     sandbox_mode = \"read-only\"\n\n\
                     [model_providers.scripted]\n\
                     name = \"scripted model API\"\n\
                     base_url = \"http://127.0.0.1:{}/v1\"\n\
                     wire_api = \"responses\"\n",
                    api.port
                ),
            ),
            Host::Gemini => {
                // The key from GEMINI_API_KEY, the API at GOOGLE_GEMINI_BASE_URL; nothing sent
                // to Google (usage statistics, update checks).
                let settings = json!({
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
                    "privacy": {"usageStatisticsEnabled": false},
                });
                write(".gemini/settings.json", &format!("{settings:#}\n"));
                // What `/permissions trust` writes for the working dir.
                let trusted = json!({place.work.to_str().unwrap(): "TRUST_FOLDER"});
                write(".gemini/trustedFolders.json", &format!("{trusted:#}\n"));
            }
        }
    }

    /// The host's own command for one prompt, in `place`, with only the environment it needs
    /// (no `TIDINGS_SOCKET`, no API key of the developer's).
    fn command(self, place: &Place, api: &ModelApi) -> Command {
        let (home, work, tmp) = (&place.home, &place.work, &place.tmp);
        let bin = clis().join("node_modules/.bin");
        let mut c = Command::new(bin.join(match self {
            Host::ClaudeCode => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
        }));
        c.env_clear()
            .env("HOME", home)
            // Codex's launcher and Gemini CLI are node scripts.
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            // What the hosts keep in the temp dir goes with the test's.
            .env("TMPDIR", tmp)
            .current_dir(work)
            .stdin(Stdio::null())
            // A group of its own, so a run that overstays is killed with its children.
            .process_group(0);
        match self {
            Host::ClaudeCode => {
                // `-p` runs one prompt and exits. The tools are allowed by name: Claude Code
                // refuses --dangerously-skip-permissions as root, and CI runs as root.
                c.args(["-p", PROMPT, "--allowedTools"])
                    .arg("mcp__tidings__tidings_check,mcp__tidings__tidings_wait")
                    .env(
                        "ANTHROPIC_BASE_URL",
                        format!("http://127.0.0.1:{}", api.port),
                    )
                    .env("ANTHROPIC_API_KEY", "scripted")
                    // No telemetry, error reports, update checks or release notes.
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .env("DISABLE_AUTOUPDATER", "1");
            }
            Host::Codex => {
                c.args(["exec", "--skip-git-repo-check", "--color", "never", PROMPT]);
            }
            Host::Gemini => {
                // A model named, so no routing request asks the API to pick one. YOLO runs the
                // tools without asking, as Codex's approval_policy = "never" does.
                c.args(["-m", "scripted", "-p", PROMPT, "--approval-mode", "yolo"])
                    .env(
                        "GOOGLE_GEMINI_BASE_URL",
                        format!("http://127.0.0.1:{}", api.port),
                    )
                    .env("GEMINI_API_KEY", "scripted");
            }
        }
        c
    }
}

/// A temporary home, working dir, log dir and temp dir for one host, under this run's target
/// dir.
struct Place {
    _dir: TempDir,
    home: PathBuf,
    work: PathBuf,
    logs: PathBuf,
    tmp: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::Builder::new()
            .prefix("real-hosts-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let [home, work, logs, tmp] = ["home", "work", "logs", "tmp"].map(|d| dir.path().join(d));
        for d in [&home, &work, &logs, &tmp] {
            std::fs::create_dir_all(d).unwrap();
        }
        Place {
            _dir: dir,
            home,
            work,
            logs,
            tmp,
        }
    }
}

/// `tidings connect HOST --socket S` in `home`, with no `TIDINGS_SOCKET`: the entry names the
/// socket because it is not where the host's `tidings-mcp` would look.
fn connect(host: Host, home: &Path, socket: &Path) {
    let out = Command::new(tidings_bin())
        .args(["connect", host.connect_name(), "--socket"])
        .arg(socket)
        .arg("--shim")
        .arg(shim_bin())
        .env("HOME", home)
        .env_remove("TIDINGS_SOCKET")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "tidings connect {host:?}:\n{text}");
}

/// What a host run left: its exit, its output, and what the daemon said of it meanwhile.
struct Run {
    status: ExitStatus,
    output: String,
    /// `tidings status --json` taken when the model asked for the wait (the check done).
    state_at_wait: Option<Value>,
    /// The subject of the mail written then.
    subject: Option<String>,
}

/// Kills the host's process group if the run ends early (a failed assert, a timeout).
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.0.id())])
                .status();
            let _ = self.0.wait();
        }
    }
}

/// Runs `command` to its end (at most [`HOST_RUN`]), writing a mail from [`SENDER`] with a
/// subject of its own as soon as the model API has answered with the wait: the check's
/// result is in, so the wait returns this mail whenever it starts.
fn drive(mut command: Command, daemon: &Daemon, api: &ModelApi, logs: &Path) -> Run {
    let out_path = logs.join("host.out");
    let err_path = logs.join("host.err");
    let child = command
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .expect("spawn the host");
    let mut group = Group(child);
    let output = || {
        format!(
            "stdout:\n{}\nstderr:\n{}",
            std::fs::read_to_string(&out_path).unwrap_or_default(),
            std::fs::read_to_string(&err_path).unwrap_or_default()
        )
    };
    let deadline = Instant::now() + HOST_RUN;
    let mut state_at_wait = None;
    let mut subject = None;
    let status = loop {
        match api.served.recv_timeout(Duration::from_millis(100)) {
            Ok(line) if line.ends_with(" wait") && subject.is_none() => {
                state_at_wait = Some(status_json(daemon));
                let s = format!(
                    "Invoice 4471 for the real_hosts test ({})",
                    std::process::id()
                );
                Writer::new(daemon.home()).mail_titled(SENDER, &s);
                subject = Some(s);
            }
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => panic!("the model API exited"),
        }
        if let Some(status) = group.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the host ran past {HOST_RUN:?}; {}",
            output()
        );
    };
    Run {
        status,
        output: output(),
        state_at_wait,
        subject,
    }
}

/// `tidings status --json` on the daemon.
fn status_json(daemon: &Daemon) -> Value {
    let out = Command::new(tidings_bin())
        .args(["status", "--json", "--socket"])
        .arg(&daemon.socket)
        .output()
        .unwrap();
    assert!(out.status.success(), "tidings status: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One tool call in a request to the model, with the result the host sent back for it.
#[derive(Debug)]
struct ToolTurn {
    /// The tool as the host names it to the model (`mcp__tidings__tidings_wait`).
    name: String,
    /// The result, as the model reads it.
    result: String,
}

/// The text of a tool result: a string, or the text of its blocks (other blocks as JSON).
fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| {
                b["text"]
                    .as_str()
                    .map_or_else(|| b.to_string(), str::to_owned)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// The tool calls and their results in one recorded request: Messages API (Claude Code),
/// Responses API (Codex) or Gemini API (Gemini CLI).
fn tool_turns(request: &Value) -> Vec<ToolTurn> {
    let body = &request["body"];
    let mut names = BTreeMap::new();
    let mut turns = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") => {
                    let name = block["name"].as_str().unwrap_or_default().to_owned();
                    names.insert(block["id"].to_string(), name);
                }
                Some("tool_result") => turns.push(ToolTurn {
                    name: names
                        .get(&block["tool_use_id"].to_string())
                        .cloned()
                        .unwrap_or_default(),
                    result: result_text(&block["content"]),
                }),
                _ => {}
            }
        }
    }
    for item in body["input"].as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("function_call") => {
                // Codex groups a server's tools in a namespace (`mcp__tidings`).
                let name = match item["namespace"].as_str() {
                    Some(ns) => format!("{ns}__{}", item["name"].as_str().unwrap_or_default()),
                    None => item["name"].as_str().unwrap_or_default().to_owned(),
                };
                names.insert(item["call_id"].to_string(), name);
            }
            Some("function_call_output") => turns.push(ToolTurn {
                name: names
                    .get(&item["call_id"].to_string())
                    .cloned()
                    .unwrap_or_default(),
                result: result_text(&item["output"]),
            }),
            _ => {}
        }
    }
    for content in body["contents"].as_array().into_iter().flatten() {
        for part in content["parts"].as_array().into_iter().flatten() {
            // Gemini CLI answers each call by its name (and an id it made up).
            if let Some(response) = part.get("functionResponse") {
                let output = &response["response"]["output"];
                turns.push(ToolTurn {
                    name: response["name"].as_str().unwrap_or_default().to_owned(),
                    result: output
                        .as_str()
                        .map_or_else(|| response["response"].to_string(), str::to_owned),
                });
            }
        }
    }
    turns
}

/// The model turns (requests the script answered), by step: `check`, `wait`, `final`, …
/// Requests without tools (a title, a quota check) are `side` and left out.
fn steps(requests: &[Value]) -> Vec<String> {
    requests
        .iter()
        .filter_map(|r| r["step"].as_str())
        .filter_map(|s| s.split_once(' ').map(|(_, step)| step.to_owned()))
        .filter(|s| s != "side")
        .collect()
}

/// The JSON pointer of the first string in `value` containing `needle`.
fn find_string(value: &Value, needle: &str, at: &str) -> Option<String> {
    match value {
        Value::String(s) if s.contains(needle) => Some(at.to_owned()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_string(v, needle, &format!("{at}/{i}"))),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| find_string(v, needle, &format!("{at}/{k}"))),
        _ => None,
    }
}

/// Whether any request offered the model a Tidings tool.
fn offered_tidings(requests: &[Value]) -> bool {
    requests.iter().any(|r| {
        r["body"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| {
                let inner = t["tools"].as_array().into_iter().flatten();
                t["name"].as_str().is_some_and(|n| n.contains("tidings"))
                    || inner
                        .into_iter()
                        .any(|i| i["name"].as_str().is_some_and(|n| n.contains("tidings")))
            })
    })
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
