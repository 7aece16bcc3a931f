//! An MCP client on a `tidings-mcp` child, every frame kept in order and every wait capped,
//! and the predicates tests match frames with.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{WAIT, meta, shim_bin};

/// An MCP client on a `tidings-mcp` child: newline-delimited JSON-RPC on its stdio.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    /// Every frame received, in order; waits search it from a mark.
    pub frames: Vec<Value>,
    stderr: Arc<Mutex<String>>,
}

impl Client {
    pub fn connect(socket: &Path) -> Client {
        Client::spawn(Command::new(shim_bin()).arg("--socket").arg(socket))
    }

    /// Runs `command` (a shim invocation) with piped stdio and a reader thread.
    pub fn spawn(command: &mut Command) -> Client {
        command
            .env_remove("TIDINGS_SOCKET")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A shim just copied (`shim_for_everyone`) can be "busy" for a moment: a process
        // another test forks meanwhile holds the copy's write descriptor until it execs.
        let mut tries = 0;
        let mut child = loop {
            match command.spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                spawned => break spawned.expect("spawn tidings-mcp"),
            }
        };
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("shim wrote a non-JSON line ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            sink.lock().unwrap().push_str(&text);
        });
        Client {
            stdin: child.stdin.take(),
            child,
            rx,
            frames: Vec::new(),
            stderr,
        }
    }

    pub fn send(&mut self, frame: &Value) {
        self.try_send(frame).unwrap();
    }

    /// [`send`](Client::send), with a failed write returned: a shim that has already ended
    /// (its daemon closed the connection first) is a broken pipe, which some tests expect.
    pub fn try_send(&mut self, frame: &Value) -> std::io::Result<()> {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{frame}")?;
        stdin.flush()
    }

    /// Writes `text` as is, in one write (several lines arrive together).
    pub fn send_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request with the required `_meta` added to `params`.
    pub fn request(&mut self, id: impl Into<Value>, method: &str, params: Value) {
        let mut params = params;
        params["_meta"] = meta();
        self.send(&json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}));
    }

    /// Sends a request and returns its response frame (result or error).
    pub fn call(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        let mark = self.mark();
        self.request(id.clone(), method, params);
        self.wait_for(&format!("the response to {method}"), mark, |f| {
            is_response(f, &id)
        })
    }

    /// `call` that insists on a result and returns it.
    pub fn result(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let response = self.call(id, method, params);
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    /// `call` that insists on an error and returns it.
    pub fn error(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let response = self.call(id, method, params);
        assert!(
            response.get("result").is_none(),
            "{method} should fail: {response}"
        );
        response["error"].clone()
    }

    pub fn cancel(&mut self, id: impl Into<Value>) {
        self.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": id.into(), "reason": "test done"}}),
        );
    }

    /// The index the next frame will get.
    pub fn mark(&self) -> usize {
        self.frames.len()
    }

    /// Reads one frame into `frames`; false if none came before `deadline` or the shim closed.
    fn pump(&mut self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(left) {
            Ok(frame) => {
                self.frames.push(frame);
                true
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => false,
        }
    }

    /// The first frame at or after `from` that matches, reading more for up to [`WAIT`].
    pub fn wait_for(&mut self, what: &str, from: usize, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_within(what, from, WAIT, pred)
    }

    /// [`wait_for`](Self::wait_for) with its own cap.
    pub fn wait_for_within(
        &mut self,
        what: &str,
        from: usize,
        within: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + within;
        let mut next = from;
        loop {
            while next < self.frames.len() {
                if pred(&self.frames[next]) {
                    return self.frames[next].clone();
                }
                next += 1;
            }
            if !self.pump(deadline) {
                let tail: Vec<String> = self
                    .frames
                    .iter()
                    .rev()
                    .take(8)
                    .map(Value::to_string)
                    .collect();
                panic!(
                    "timed out after {within:?} waiting for {what}; last frames (newest first):\n{}\nshim stderr: {}",
                    tail.join("\n"),
                    self.stderr.lock().unwrap()
                );
            }
        }
    }

    /// The exit status if the shim has ended, after collecting what it wrote.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        let status = self.child.try_wait().unwrap()?;
        while self.pump(Instant::now() + Duration::from_millis(200)) {}
        Some(status)
    }

    /// Closes stdin (the host going away) and waits for the shim to exit, within [`WAIT`],
    /// collecting what it wrote.
    pub fn close(&mut self) -> ExitStatus {
        self.stdin.take();
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.try_exit() {
                return status;
            }
            assert!(Instant::now() < deadline, "shim did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn is_response(frame: &Value, id: &Value) -> bool {
    frame.get("id") == Some(id) && frame.get("method").is_none()
}

/// A notification `method` on stream `id` (by `_meta` subscription id).
pub fn is_note(frame: &Value, method: &str, id: &Value) -> bool {
    frame["method"] == method
        && frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == *id
}

/// Any notification on stream `id`.
pub fn on_stream(frame: &Value, id: &Value) -> bool {
    frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == *id
}

/// An event on stream `id` with `eventId`.
pub fn is_event(frame: &Value, id: &Value, event_id: &str) -> bool {
    is_note(frame, "notifications/events/event", id) && frame["params"]["eventId"] == event_id
}
