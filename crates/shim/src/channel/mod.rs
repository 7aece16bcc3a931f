//! `tidings-mcp --channel`: a Claude Code channel. To Claude Code (stdio) it is a small MCP
//! server on 2025-11-25 with the `claude/channel` capability; to the daemon (the socket) it
//! is a 2026-07-28 client holding one `events/stream` per chosen type, turning each event
//! into one `notifications/claude/channel`, and one `subscriptions/listen` for the tool
//! list's changes. It forwards `tools/*` to the daemon, and when
//! the daemon goes away it reconnects and resumes every stream from its cursor (Claude Code
//! does not restart stdio servers). See docs/decisions/channel.md.
//!
//! - `wire`: host frames and the answers the shim gives itself.
//! - `meta`: an event as one plain line plus identifier-keyed string meta, capped.
//! - `streams`: the subscriptions, their cursors, and the dedupe window.
//! - `preset`: `[channel.presets.NAME]` from settings.toml.

mod meta;
mod preset;
mod streams;
mod wire;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tidings_platform::Launcher;
use tidings_protocol::errors::{INTERNAL_ERROR, METHOD_NOT_FOUND, data, reason};
use tidings_protocol::meta::{KEY as META, SUBSCRIPTION_ID};
use tidings_protocol::payloads::Cancelled;
use tidings_protocol::{fields, jsonrpc, methods, notifications};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines, Stdout};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::args::{ChannelArgs, TYPES};
use crate::{connect, exit_code};
use streams::{Seen, Stream};
use wire::HostFrame;

/// First pause before a reconnect attempt; doubled up to [`MAX_RECONNECT`].
const FIRST_RECONNECT: Duration = Duration::from_millis(100);
/// Channel notifications held until the host's `notifications/initialized`, at most.
const MAX_OUTBOX: usize = 256;
/// Longest pause between reconnect attempts: a restarted daemon is found within this.
const MAX_RECONNECT: Duration = Duration::from_secs(2);

/// Chooses the streams, connects, opens them and serves until Claude Code closes stdin.
/// Returns the exit code.
pub async fn serve(path: &Path, args: ChannelArgs) -> u8 {
    let streams = match choose(args) {
        Ok(streams) => streams,
        Err(error) => {
            eprintln!("tidings-mcp: {error}");
            return exit_code::CONFIG;
        }
    };
    let launcher = tidings_platform::default_launcher();
    let socket = match connect::connect_or_start(path, launcher.as_ref(), connect::START_WAIT).await
    {
        Ok(socket) => socket,
        Err(error) => {
            eprintln!("tidings-mcp: {error}");
            return error.exit_code();
        }
    };
    let mut channel = Channel {
        path: path.to_path_buf(),
        launcher,
        streams,
        seen: Seen::default(),
        conn: None,
        next_id: 0,
        pending: HashMap::new(),
        out: tokio::io::stdout(),
        initialized: false,
        outbox: Vec::new(),
        client_info: wire::own_client_info(),
        listen: None,
        listening: false,
        first_connection: true,
        backoff: FIRST_RECONNECT,
    };
    channel.attach(socket).await;
    channel.run().await
}

/// The streams the flags or the preset ask for.
fn choose(args: ChannelArgs) -> Result<Vec<Stream>, preset::PresetError> {
    let (types, from, domains) = match &args.preset {
        Some(name) => {
            let p = preset::load(name)?;
            (p.types, p.from, p.domains)
        }
        None => (args.types, args.from, args.domains),
    };
    Ok(if types.is_empty() {
        TYPES
            .iter()
            .map(|t| Stream::new(t, &from, &domains, false))
            .collect()
    } else {
        types
            .iter()
            .map(|t| Stream::new(t, &from, &domains, true))
            .collect()
    })
}

/// The daemon connection: frames in, frames out.
struct Conn {
    lines: Lines<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
}

/// A host request forwarded to the daemon, by the daemon-side id.
struct Pending {
    host_id: Value,
    method: String,
}

/// What to do after a frame.
enum Flow {
    Continue,
    Exit(u8),
}

struct Channel {
    path: PathBuf,
    launcher: Box<dyn Launcher>,
    streams: Vec<Stream>,
    seen: Seen,
    conn: Option<Conn>,
    next_id: u64,
    pending: HashMap<u64, Pending>,
    out: Stdout,
    /// Claude Code sent `notifications/initialized`: channel notifications may flow.
    initialized: bool,
    /// Channel notifications held until then.
    outbox: Vec<Value>,
    /// The host's `clientInfo`, passed on so the daemon clamps waits for that host.
    client_info: Value,
    /// The request id of the tool list's `subscriptions/listen` on the current connection.
    listen: Option<u64>,
    /// The daemon acknowledged that listen (or refused it): at start the host is answered
    /// only then, so no change of the tool list falls before it.
    listening: bool,
    /// Still on the connection made at start: a refused stream ends the process.
    first_connection: bool,
    /// The pause before the next reconnect attempt.
    backoff: Duration,
}

impl Channel {
    async fn run(&mut self) -> u8 {
        // Bytes, not `lines()`: a line that is not UTF-8 gets a parse error, not an end.
        let mut host = BufReader::new(tokio::io::stdin());
        let mut host_line = Vec::new();
        loop {
            // At start, the streams are settled before Claude Code is answered, so a refused
            // channel exits before it looks connected.
            let starting = self.starting();
            let flow = tokio::select! {
                // Cancel-safe: a partly read line stays in `host_line` for the next round.
                read = host.read_until(b'\n', &mut host_line), if !starting => match read {
                    Ok(n) if n > 0 => {
                        let line = String::from_utf8_lossy(&host_line).into_owned();
                        host_line.clear();
                        self.on_host(&line).await
                    }
                    // Claude Code closed stdin (or it broke): the session is over.
                    _ => Flow::Exit(exit_code::SUCCESS),
                },
                line = next_line(&mut self.conn) => if let Some(line) = line {
                    self.on_daemon(&line).await
                } else {
                    self.lost().await
                },
                () = tokio::time::sleep(self.backoff), if self.conn.is_none() => {
                    // A zero wait: ask the OS to start the daemon if it can, never block here.
                    match connect::connect_or_start(&self.path, self.launcher.as_ref(), Duration::ZERO).await {
                        Ok(socket) => {
                            eprintln!("tidings-mcp: reconnected to the daemon; resuming the channel");
                            self.attach(socket).await;
                        }
                        Err(_) => self.backoff = (self.backoff * 2).min(MAX_RECONNECT),
                    }
                    Flow::Continue
                }
            };
            if let Flow::Exit(code) = flow {
                return code;
            }
        }
    }

    fn starting(&self) -> bool {
        self.first_connection
            && self.conn.is_some()
            && (!self.listening || self.streams.iter().any(|s| !s.confirmed && !s.ended))
    }

    /// Takes a fresh daemon connection, opens the tool list's listen and (re)opens every
    /// stream from its cursor.
    async fn attach(&mut self, socket: UnixStream) {
        let (read, writer) = socket.into_split();
        self.conn = Some(Conn {
            lines: BufReader::new(read).lines(),
            writer,
        });
        // On 2026-07-28 `notifications/tools/list_changed` rides a listen; first, so it is
        // open before the streams' events come through.
        let id = self.id();
        self.listen = Some(id);
        self.listening = false;
        let frame = wire::daemon_request(
            id,
            methods::LISTEN,
            wire::listen_params(),
            &self.client_info,
        );
        self.send_daemon(&frame).await;
        for i in 0..self.streams.len() {
            if self.streams[i].ended {
                continue;
            }
            let id = self.id();
            self.streams[i].request = Some(id);
            let params = self.streams[i].open_params();
            let frame = wire::daemon_request(id, methods::EVENTS_STREAM, params, &self.client_info);
            self.send_daemon(&frame).await;
        }
    }

    /// The daemon closed: fail the calls in flight and start reconnecting.
    async fn lost(&mut self) -> Flow {
        eprintln!(
            "tidings-mcp: lost the daemon at {}; reconnecting",
            self.path.display()
        );
        self.conn = None;
        self.listen = None;
        self.first_connection = false;
        self.backoff = FIRST_RECONNECT;
        for stream in &mut self.streams {
            stream.request = None;
        }
        let pending: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        for call in pending {
            let frame = wire::error(
                &call.host_id,
                INTERNAL_ERROR,
                "Tidings restarted during this call; try again in a moment",
            );
            if let Flow::Exit(code) = self.send_host(&frame).await {
                return Flow::Exit(code);
            }
        }
        Flow::Continue
    }

    async fn on_host(&mut self, line: &str) -> Flow {
        if line.trim().is_empty() {
            return Flow::Continue;
        }
        match wire::parse_host(line) {
            HostFrame::Request { id, method, params } => match method.as_str() {
                methods::INITIALIZE => {
                    if let Some(info) = params.get(fields::CLIENT_INFO).filter(|i| i.is_object()) {
                        self.client_info = info.clone();
                    }
                    self.send_host(&wire::result(&id, &wire::initialize_result()))
                        .await
                }
                methods::PING => self.send_host(&wire::result(&id, &json!({}))).await,
                methods::TOOLS_LIST | methods::TOOLS_CALL => self.forward(id, method, params).await,
                _ => self.send_host(&wire::not_found(&id, &method)).await,
            },
            HostFrame::Notification { method, params } => match method.as_str() {
                notifications::INITIALIZED => {
                    self.initialized = true;
                    for frame in std::mem::take(&mut self.outbox) {
                        if let Flow::Exit(code) = self.send_host(&frame).await {
                            return Flow::Exit(code);
                        }
                    }
                    Flow::Continue
                }
                notifications::CANCELLED => {
                    let host_id = &params[fields::REQUEST_ID];
                    let daemon_id = self
                        .pending
                        .iter()
                        .find(|(_, p)| &p.host_id == host_id)
                        .map(|(id, _)| *id);
                    if let Some(id) = daemon_id {
                        self.pending.remove(&id);
                        let cancelled = Cancelled {
                            request_id: id.into(),
                            reason: None,
                        };
                        let frame = jsonrpc::notification(notifications::CANCELLED, cancelled);
                        self.send_daemon(&frame).await;
                    }
                    Flow::Continue
                }
                _ => Flow::Continue,
            },
            HostFrame::Other => Flow::Continue,
            HostFrame::Invalid(code, message) => {
                self.send_host(&wire::error(&Value::Null, code, message))
                    .await
            }
        }
    }

    /// Sends a host request on to the daemon, remembering whose it is.
    async fn forward(&mut self, host_id: Value, method: String, params: Value) -> Flow {
        if self.conn.is_none() {
            let frame = wire::error(
                &host_id,
                INTERNAL_ERROR,
                "Tidings is restarting; try again in a moment",
            );
            return self.send_host(&frame).await;
        }
        let id = self.id();
        let frame = wire::daemon_request(id, &method, params, &self.client_info);
        self.pending.insert(id, Pending { host_id, method });
        self.send_daemon(&frame).await;
        Flow::Continue
    }

    async fn on_daemon(&mut self, line: &str) -> Flow {
        let Ok(frame) = serde_json::from_str::<Value>(line) else {
            return Flow::Continue;
        };
        let params = &frame["params"];
        match frame["method"].as_str() {
            Some(method) if notifications::is_events(method) => {
                let sub = subscription_of(params);
                match self
                    .streams
                    .iter()
                    .position(|s| s.request.is_some() && s.request == sub)
                {
                    Some(i) => self.on_stream_note(i, method, params).await,
                    None => Flow::Continue,
                }
            }
            // Progress of a forwarded tidings_wait (the host's token).
            Some(notifications::PROGRESS) => self.send_host(&frame).await,
            Some(notifications::ACKNOWLEDGED) => {
                if self.listen.is_some() && self.listen == subscription_of(params) {
                    self.listening = true;
                }
                Flow::Continue
            }
            // A type turned on or off. Bare: the listen's id means nothing to the host, and
            // before its handshake the host lists the tools afresh anyway.
            Some(notifications::TOOLS_LIST_CHANGED) => {
                if self.initialized {
                    let frame = jsonrpc::bare_notification(notifications::TOOLS_LIST_CHANGED);
                    self.send_host(&frame).await
                } else {
                    Flow::Continue
                }
            }
            Some(_) => Flow::Continue,
            None => self.on_response(&frame).await,
        }
    }

    async fn on_stream_note(&mut self, i: usize, method: &str, params: &Value) -> Flow {
        let stream = &mut self.streams[i];
        if let Some(cursor) = params["cursor"].as_str() {
            stream.cursor = Some(cursor.to_owned());
        }
        match method {
            notifications::ACTIVE => {
                if params["truncated"] == true && stream.confirmed {
                    eprintln!(
                        "tidings-mcp: {}: the store was rebuilt; events in the gap are lost",
                        stream.name
                    );
                }
                stream.confirmed = true;
                Flow::Continue
            }
            notifications::EVENT => {
                let name = stream.name.clone();
                let id = params["eventId"].as_str().unwrap_or_default();
                if !self.seen.first_time(&name, id) {
                    return Flow::Continue;
                }
                match meta::channel_params(params) {
                    Some(channel) => {
                        let frame = jsonrpc::notification(notifications::CLAUDE_CHANNEL, channel);
                        if self.initialized {
                            self.send_host(&frame).await
                        } else {
                            // Bounded: a host that never finishes its handshake gets the
                            // latest events, not an ever-growing queue.
                            if self.outbox.len() == MAX_OUTBOX {
                                self.outbox.remove(0);
                            }
                            self.outbox.push(frame);
                            Flow::Continue
                        }
                    }
                    None => Flow::Continue,
                }
            }
            notifications::ERROR | notifications::TERMINATED => {
                // The daemon's messages name no path and no sender; safe for the log.
                let message = params["error"]["message"]
                    .as_str()
                    .unwrap_or("unknown error");
                eprintln!("tidings-mcp: {}: {message}", stream.name);
                if method == notifications::TERMINATED {
                    stream.ended = true;
                    stream.request = None;
                }
                Flow::Continue
            }
            _ => Flow::Continue,
        }
    }

    async fn on_response(&mut self, frame: &Value) -> Flow {
        let Some(id) = frame["id"].as_u64() else {
            return Flow::Continue;
        };
        if let Some(i) = self.streams.iter().position(|s| s.request == Some(id)) {
            if frame["error"].is_null() {
                // A final result with no `terminated` before it: the daemon is shutting
                // down (a `terminated` stream has no request left to match). Reconnect and
                // resume rather than lose the stream.
                self.streams[i].request = None;
                return self.lost().await;
            }
            return self.on_stream_refused(i, &frame["error"]);
        }
        if self.listen == Some(id) {
            // Refused (an older daemon), or ended by a daemon shutting down (the streams'
            // own ends reconnect): the channel goes on without tool list changes.
            if let Some(message) = frame["error"]["message"].as_str() {
                eprintln!("tidings-mcp: tool list changes will not be passed on: {message}");
            }
            self.listen = None;
            self.listening = true;
            return Flow::Continue;
        }
        let Some(call) = self.pending.remove(&id) else {
            return Flow::Continue;
        };
        let answer = match (&frame["error"], call.method.as_str()) {
            // A daemon without pull tools: a channel that offers none, not an error.
            (error, methods::TOOLS_LIST) if error["code"] == METHOD_NOT_FOUND => {
                wire::result(&call.host_id, &json!({"tools": []}))
            }
            (Value::Null, _) => wire::result(&call.host_id, &frame["result"]),
            (error, _) => jsonrpc::error(call.host_id, error),
        };
        self.send_host(&answer).await
    }

    /// The daemon refused a stream request: fatal on the first connection, else that
    /// stream ends with a note.
    fn on_stream_refused(&mut self, i: usize, error: &Value) -> Flow {
        let first_connection = self.first_connection;
        let stream = &mut self.streams[i];
        stream.request = None;
        stream.ended = true;
        let message = error["message"].as_str().unwrap_or("refused");
        let disabled = error["data"][data::REASON] == reason::DISABLED;
        if first_connection && !stream.confirmed && (stream.explicit || !disabled) {
            let hint = if error["data"][data::FIELD] == "arguments" {
                "; give the channel --from or --domains, or a --preset that has them"
            } else {
                ""
            };
            eprintln!(
                "tidings-mcp: the channel cannot subscribe to {}: {message}{hint}",
                stream.name
            );
            return Flow::Exit(exit_code::REFUSED);
        }
        eprintln!("tidings-mcp: {}: not delivered: {message}", stream.name);
        if first_connection && self.streams.iter().all(|s| s.ended) {
            eprintln!("tidings-mcp: the channel has nothing to deliver: every event type is off");
            return Flow::Exit(exit_code::REFUSED);
        }
        Flow::Continue
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// One frame to Claude Code. A closed stdout means Claude Code is gone: exit 0.
    async fn send_host(&mut self, frame: &Value) -> Flow {
        let mut line = frame.to_string();
        line.push('\n');
        let written = match self.out.write_all(line.as_bytes()).await {
            Ok(()) => self.out.flush().await,
            Err(e) => Err(e),
        };
        match written {
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Exit(exit_code::SUCCESS),
        }
    }

    /// One frame to the daemon. A failed write shows up as EOF on the read side, which
    /// reconnects; nothing to do here.
    async fn send_daemon(&mut self, frame: &Value) {
        if let Some(conn) = &mut self.conn {
            let mut line = frame.to_string();
            line.push('\n');
            let _ = conn.writer.write_all(line.as_bytes()).await;
        }
    }
}

/// The daemon-side request a notification belongs to.
fn subscription_of(params: &Value) -> Option<u64> {
    params[META][SUBSCRIPTION_ID].as_u64()
}

/// The next line from the daemon; `None` at EOF or on a read error. Never resolves while
/// there is no connection.
async fn next_line(conn: &mut Option<Conn>) -> Option<String> {
    match conn {
        Some(conn) => conn.lines.next_line().await.ok().flatten(),
        None => std::future::pending().await,
    }
}
