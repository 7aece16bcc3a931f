//! The settings window as a second process (`tidings-settings`, beside this executable),
//! started when the window is asked for and gone when it closes: the app itself never loads
//! a web view. Its requests (the page's commands) run here (`commands::dispatch`); the engine's
//! changes go to it as events. The bridge is its stdin and stdout (`wire`).

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;

use crate::commands::{self, Context};
use crate::wire::{Request, ToWindow};

/// The window program's name, beside `tidings-app` (in the bundle, `Contents/MacOS`).
const PROGRAM: &str = "tidings-settings";

/// The window process, if one is running. Cheap to clone; every clone is the same window.
#[derive(Clone)]
pub struct Window {
    cx: Arc<Context>,
    runtime: tokio::runtime::Handle,
    running: Arc<Mutex<Option<Running>>>,
    starts: Arc<AtomicU64>,
}

struct Running {
    /// Which start this is: a process that ends clears only its own entry.
    start: u64,
    to_window: mpsc::UnboundedSender<ToWindow>,
    // Killed when dropped (Quit, or a window that stopped reading).
    _child: Child,
}

impl Window {
    pub fn new(cx: Arc<Context>, runtime: tokio::runtime::Handle) -> Window {
        Window {
            cx,
            runtime,
            running: Arc::default(),
            starts: Arc::default(),
        }
    }

    /// Brings the window to the front, starting its process if none runs.
    pub fn show(&self) {
        let mut running = self.lock();
        if let Some(window) = running.as_ref()
            && window.to_window.send(ToWindow::Show).is_ok()
        {
            return;
        }
        let start = self.starts.fetch_add(1, Ordering::Relaxed);
        match self.start(start) {
            Ok(window) => *running = Some(window),
            Err(error) => tracing::error!(%error, "cannot open the settings window"),
        }
    }

    /// Whether the window's process is running (its page listens for engine changes).
    pub fn is_open(&self) -> bool {
        self.lock().is_some()
    }

    /// Sends an engine change to the page, if the window is open.
    pub fn send(&self, message: ToWindow) {
        if let Some(window) = self.lock().as_ref() {
            let _ = window.to_window.send(message);
        }
    }

    /// Closes the window (Quit): its process is killed.
    pub fn close(&self) {
        self.lock().take();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn start(&self, start: u64) -> std::io::Result<Running> {
        let program = program()?;
        let _runtime = self.runtime.enter();
        let mut child = Command::new(&program)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| {
                std::io::Error::new(
                    error.kind(),
                    format!(
                        "{}: {error}; reinstall Tidings (in a checkout, `cargo build -p \
                         tidings-app` builds it beside tidings-app)",
                        program.display()
                    ),
                )
            })?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (to_window, outbox) = mpsc::unbounded_channel();
        tokio::spawn(write_to(stdin, outbox));
        tokio::spawn(self.clone().read_from(stdout, to_window.clone(), start));
        tracing::info!("settings window opened");
        Ok(Running {
            start,
            to_window,
            _child: child,
        })
    }

    /// Runs the window's requests until its stdout closes (the window closed), then forgets
    /// this start.
    async fn read_from(
        self,
        stdout: ChildStdout,
        to_window: mpsc::UnboundedSender<ToWindow>,
        start: u64,
    ) {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let request: Request = match serde_json::from_str(&line) {
                Ok(request) => request,
                // Both ends are built together: a bug, said without the line (it may hold
                // allowlist entries).
                Err(error) => {
                    tracing::warn!(%error, "a malformed request from the settings window");
                    continue;
                }
            };
            let (cx, to_window) = (self.cx.clone(), to_window.clone());
            tokio::spawn(async move {
                let result = commands::dispatch(&cx, &request.command, request.args)
                    .await
                    .map_err(|error| serde_json::to_value(error).expect("an error serializes"));
                let _ = to_window.send(ToWindow::Reply {
                    id: request.id,
                    result,
                });
            });
        }
        let mut running = self.lock();
        if running.as_ref().is_some_and(|w| w.start == start) {
            running.take();
            tracing::info!("settings window closed");
        }
    }
}

/// Writes the app's messages to the window, one line each, until either side goes away.
async fn write_to(mut stdin: ChildStdin, mut outbox: mpsc::UnboundedReceiver<ToWindow>) {
    while let Some(message) = outbox.recv().await {
        let mut line = serde_json::to_vec(&message).expect("a message serializes");
        line.push(b'\n');
        if stdin.write_all(&line).await.is_err() {
            break;
        }
    }
}

/// `tidings-settings` beside this executable.
fn program() -> std::io::Result<PathBuf> {
    Ok(std::env::current_exe()?.with_file_name(PROGRAM))
}
