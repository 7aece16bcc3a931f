//! The client side: NDJSON over the daemon's Unix socket, as an MCP client would speak it,
//! and reader threads that timestamp each event frame the moment its line is read.

use std::io::{BufRead, BufReader, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The longest any single read may wait before the part fails.
pub const WAIT: Duration = Duration::from_secs(60);

/// The 2026-07-28 `_meta` every request carries.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tidings-bench", "version": "0"}
    })
}

/// One NDJSON connection to the daemon.
pub struct Conn {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
}

/// What became of one `events/stream` request.
#[derive(Debug)]
pub enum Opened {
    /// `notifications/events/active` came.
    Active,
    /// A JSON-RPC error, with `data.max` when it names a cap.
    Refused { max: Option<u64> },
}

impl Conn {
    pub fn open(socket: &Path) -> Result<Conn> {
        let stream = UnixStream::connect(socket)
            .with_context(|| format!("connect to {}", socket.display()))?;
        Conn::from_stream(stream)
    }

    /// The client side of an already connected socket (the fan-out's socket floor).
    pub fn from_stream(stream: UnixStream) -> Result<Conn> {
        stream.set_read_timeout(Some(WAIT))?;
        Ok(Conn {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    pub fn send(&mut self, v: &Value) -> Result<()> {
        let mut line = serde_json::to_vec(v)?;
        line.push(b'\n');
        self.writer
            .write_all(&line)
            .context("write to the daemon (did it close the connection?)")
    }

    /// The next line that satisfies `until`.
    pub fn read(&mut self, until: impl Fn(&Value) -> bool) -> Result<Value> {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self
                .reader
                .read_line(&mut line)
                .context("read from the daemon")?;
            if n == 0 {
                bail!("the daemon closed the connection");
            }
            let v: Value = serde_json::from_str(&line).context("a line that is not JSON")?;
            if until(&v) {
                return Ok(v);
            }
        }
    }

    /// One request; its response (result or error).
    pub fn call(&mut self, id: &str, method: &str, mut params: Value) -> Result<Value> {
        params["_meta"] = meta();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        self.read(|v| {
            v["id"] == json!(id) && (v.get("result").is_some() || v.get("error").is_some())
        })
    }

    /// Sends every `(id, name, arguments)` stream request at once, then waits for each one's
    /// `active` or error.
    pub fn open_streams(&mut self, streams: &[(String, &str, Value)]) -> Result<Vec<Opened>> {
        for (id, name, arguments) in streams {
            self.send(
                &json!({"jsonrpc": "2.0", "id": id, "method": "events/stream",
                "params": {"name": name, "arguments": arguments, "_meta": meta()}}),
            )?;
        }
        let mut out: Vec<Option<Opened>> = streams.iter().map(|_| None).collect();
        while out.iter().any(Option::is_none) {
            let v = self.read(|_| true)?;
            let sub = &v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"];
            let (id, opened) = if v["method"] == "notifications/events/active" {
                (sub, Opened::Active)
            } else if let Some(e) = v.get("error") {
                (
                    &v["id"],
                    Opened::Refused {
                        max: e["data"]["max"].as_u64(),
                    },
                )
            } else {
                continue;
            };
            if let Some(i) = streams.iter().position(|(s, _, _)| json!(s) == *id) {
                out[i].get_or_insert(opened);
            }
        }
        Ok(out.into_iter().map(Option::unwrap).collect())
    }

    /// Hands the read side to a thread that sends every event frame, timestamped as read, to
    /// `tx`. The returned [`Reading`] closes the connection (and so ends the thread) on drop.
    pub fn into_frames(self, tx: Sender<Frame>) -> Result<Reading> {
        self.writer.set_read_timeout(None)?;
        let mut reader = self.reader;
        let thread = std::thread::spawn(move || {
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                let at = Instant::now();
                if line.contains("\"notifications/events/event\"") {
                    let frame = Frame {
                        at,
                        sub: field(&line, "io.modelcontextprotocol/subscriptionId")
                            .unwrap_or_default()
                            .to_owned(),
                        event_id: field(&line, "eventId").unwrap_or_default().to_owned(),
                    };
                    if tx.send(frame).is_err() {
                        return;
                    }
                }
                line.clear();
            }
        });
        Ok(Reading {
            writer: self.writer,
            thread: Some(thread),
        })
    }
}

/// A connection whose frames a thread reads.
pub struct Reading {
    writer: UnixStream,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Reading {
    fn drop(&mut self) {
        let _ = self.writer.shutdown(Shutdown::Both);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One `notifications/events/event`, as read.
#[derive(Debug)]
pub struct Frame {
    pub at: Instant,
    /// The stream's subscription id (the request id; the bench uses strings).
    pub sub: String,
    pub event_id: String,
}

/// The string value of `"key":"…"` in a compact JSON line, without parsing the line (the
/// reader must keep up with thousands of frames a second on a shared core).
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let pattern = format!("\"{key}\":\"");
    let start = line.find(&pattern)? + pattern.len();
    let len = line[start..].find('"')?;
    Some(&line[start..start + len])
}

/// Connects, retrying until `deadline`: a daemon binds its socket a moment after it starts.
pub fn connect_by(socket: &Path, deadline: Instant) -> Result<UnixStream> {
    loop {
        match UnixStream::connect(socket) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() > deadline => {
                bail!("no daemon accepting on {}: {e}", socket.display())
            }
            Err(_) => std::thread::sleep(Duration::from_micros(200)),
        }
    }
}
