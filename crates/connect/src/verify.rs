//! The check after writing: start the entry's command the way the host would (its command,
//! its arguments, the environment the host gives its servers with the entry's `env` on top,
//! stdio piped), complete a handshake fitting the mode, and say "Connected ✓" or exactly what
//! failed.

use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tidings_platform::{Mode, ServerEnv};
use tidings_protocol::capabilities::{CAPABILITIES, CLAUDE_CHANNEL, EXPERIMENTAL};
use tidings_protocol::{fields, jsonrpc, meta, methods, notifications, versions};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::Command;

use super::edit::Entry;

/// How long the whole handshake may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The name the check announces, so `tidings status` shows what it was.
pub const CLIENT_NAME: &str = "tidings-connect-check";

/// The result of a check.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    /// Whether the handshake completed.
    pub ok: bool,
    /// "Connected ✓ (…)" or the failure.
    pub message: String,
}

impl Verification {
    fn failed(message: impl Into<String>) -> Self {
        Verification {
            ok: false,
            message: message.into(),
        }
    }
}

/// Runs `entry` with the environment a host whose rule is `env` would give it, and completes
/// the handshake for `mode` within `timeout`. Our own environment is filtered the same way,
/// so a check cannot pass on a variable (`TIDINGS_SOCKET`, `XDG_RUNTIME_DIR`) that the host
/// would drop.
pub async fn verify(entry: &Entry, mode: Mode, env: ServerEnv, timeout: Duration) -> Verification {
    let mut child = match Command::new(&entry.command)
        .args(&entry.args)
        .env_clear()
        .envs(env.filter(std::env::vars_os()))
        .envs(entry.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            return Verification::failed(format!("cannot start {}: {e}", entry.command));
        }
    };
    let (Some(stdin), Some(stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Verification::failed("the command's stdio could not be piped");
    };
    let stderr_task = tokio::spawn(async move {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf).await;
        buf
    });
    let outcome = tokio::time::timeout(timeout, handshake(stdin, stdout, mode)).await;
    let _ = child.start_kill();
    let status = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
    let stderr = tokio::time::timeout(Duration::from_secs(1), stderr_task)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    match outcome {
        Ok(Ok(detail)) => Verification {
            ok: true,
            message: format!("Connected ✓ ({detail})"),
        },
        Ok(Err(Step::Closed(step))) => {
            let status = match status {
                Ok(Ok(s)) => s
                    .code()
                    .map_or_else(|| s.to_string(), |c| format!("status {c}")),
                _ => "an unknown status".to_owned(),
            };
            Verification::failed(format!(
                "{} exited with {status} before answering {step}{}",
                entry.command,
                tail(&stderr)
            ))
        }
        Ok(Err(Step::Refused(step, error))) => {
            Verification::failed(format!("{step} was refused: {error}{}", tail(&stderr)))
        }
        Err(_) => Verification::failed(format!(
            "no answer within {} s from {}{}",
            timeout.as_secs(),
            entry.command,
            tail(&stderr)
        )),
    }
}

/// Why a handshake stopped.
enum Step {
    /// The output closed before the answer to this step.
    Closed(&'static str),
    /// The answer to this step was an error (or not what the mode needs).
    Refused(&'static str, String),
}

/// `; it said: …` with the last lines of stderr, or nothing.
fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let last = lines[lines.len().saturating_sub(3)..].join(" / ");
    let cut: String = last.chars().take(500).collect();
    format!("; it said: {cut}")
}

/// The name and version the check announces.
fn client_info() -> Value {
    meta::implementation(CLIENT_NAME, env!("CARGO_PKG_VERSION"))
}

/// The params of a 2026-07-28 request without arguments: the `_meta` it carries.
fn stateless() -> Value {
    json!({meta::KEY: meta::request(client_info())})
}

/// Tools and channel: `initialize` (2025-11-25), `notifications/initialized`, `tools/list`.
/// Events: `server/discover` and `events/list` on 2026-07-28. Returns what was seen.
async fn handshake(
    mut stdin: tokio::process::ChildStdin,
    stdout: tokio::process::ChildStdout,
    mode: Mode,
) -> Result<String, Step> {
    let mut lines = BufReader::new(stdout).lines();
    let mut send = async |frame: Value| {
        let mut line = frame.to_string();
        line.push('\n');
        // A write error means the process is gone; the read below says so.
        let _ = stdin.write_all(line.as_bytes()).await;
        let _ = stdin.flush().await;
    };
    if mode == Mode::Events {
        send(jsonrpc::request(1, methods::DISCOVER, stateless())).await;
        answer(&mut lines, 1, methods::DISCOVER).await?;
        send(jsonrpc::request(2, methods::EVENTS_LIST, stateless())).await;
        let list = answer(&mut lines, 2, methods::EVENTS_LIST).await?;
        let names: Vec<&str> = list[fields::EVENTS]
            .as_array()
            .map(|a| a.iter().filter_map(|e| e["name"].as_str()).collect())
            .unwrap_or_default();
        return Ok(if names.is_empty() {
            "events: none turned on yet".to_owned()
        } else {
            format!("events: {}", names.join(", "))
        });
    }
    let init = json!({
        fields::PROTOCOL_VERSION: versions::LEGACY,
        CAPABILITIES: {},
        fields::CLIENT_INFO: client_info(),
    });
    send(jsonrpc::request(1, methods::INITIALIZE, init)).await;
    let init = answer(&mut lines, 1, methods::INITIALIZE).await?;
    if mode == Mode::Channel && init[CAPABILITIES][EXPERIMENTAL][CLAUDE_CHANNEL].is_null() {
        return Err(Step::Refused(
            methods::INITIALIZE,
            "the answer has no claude/channel capability; is the entry missing --channel?".into(),
        ));
    }
    send(jsonrpc::bare_notification(notifications::INITIALIZED)).await;
    send(jsonrpc::request(2, methods::TOOLS_LIST, json!({}))).await;
    let list = answer(&mut lines, 2, methods::TOOLS_LIST).await?;
    let tools: Vec<&str> = list["tools"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    let what = if mode == Mode::Channel {
        "channel, tools"
    } else {
        "tools"
    };
    Ok(format!("{what}: {}", tools.join(", ")))
}

/// The result of request `id`, skipping notifications and other lines.
async fn answer(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    id: u64,
    step: &'static str,
) -> Result<Value, Step> {
    loop {
        let Ok(Some(line)) = lines.next_line().await else {
            return Err(Step::Closed(step));
        };
        let Ok(frame) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if frame["id"] != json!(id) {
            continue;
        }
        if let Some(error) = frame.get("error") {
            let message = error["message"].as_str().unwrap_or("no message");
            return Err(Step::Refused(
                step,
                format!("{message} (code {})", error["code"]),
            ));
        }
        return Ok(frame["result"].clone());
    }
}
