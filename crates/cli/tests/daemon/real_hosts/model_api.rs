//! The scripted model API (`integrations/host-clis/scripted_model_api.mjs`) and what the
//! hosts sent it: the model turns, the tool results in a request, whether a Tidings tool was
//! offered.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

use serde_json::{Value, json};

use super::clis;
use crate::common::WAIT;

/// The scripted model API, killed when dropped.
pub(super) struct ModelApi {
    child: Child,
    pub(super) port: u16,
    record: PathBuf,
    /// `SERVED <api> <step>` lines, as it answers.
    pub(super) served: Receiver<String>,
}

impl ModelApi {
    pub(super) fn start(dir: &Path) -> ModelApi {
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
    pub(super) fn requests(&self) -> Vec<Value> {
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
/// One tool call in a request to the model, with the result the host sent back for it.
#[derive(Debug)]
pub(super) struct ToolTurn {
    /// The tool as the host names it to the model (`mcp__tidings__tidings_wait`).
    pub(super) name: String,
    /// The result, as the model reads it.
    pub(super) result: String,
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
pub(super) fn tool_turns(request: &Value) -> Vec<ToolTurn> {
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
pub(super) fn steps(requests: &[Value]) -> Vec<String> {
    requests
        .iter()
        .filter_map(|r| r["step"].as_str())
        .filter_map(|s| s.split_once(' ').map(|(_, step)| step.to_owned()))
        .filter(|s| s != "side")
        .collect()
}

/// The JSON pointer of the first string in `value` containing `needle`.
pub(super) fn find_string(value: &Value, needle: &str, at: &str) -> Option<String> {
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
pub(super) fn offered_tidings(requests: &[Value]) -> bool {
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
