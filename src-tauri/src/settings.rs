//! `tidings-settings`: the settings window, a process of its own that the app (`tidings-app`,
//! the tray and the engine) starts while the window is open, so the app itself never loads
//! a web view. It forwards every command the page invokes to the app and emits the app's events
//! to the page, over the `wire` bridge on its stdin and stdout; it exits when the window
//! closes or the app goes away. It inherits the app's environment, `GDK_GL=disable` with it
//! on Linux (no Mesa for a web view that composites without GDK's GL). Decisions:
//! docs/decisions/app.md ("Two processes").
//!
//! With `--updater check|install` it is instead the app's updater, with no window: Tauri's
//! updater plugin runs in a Tauri program, and the tray process links none (`updater`).
//!
//! Modules: `wire` (the bridge's messages, shared with the app), `updater` (the update check
//! and install).

// No console window on Windows release builds (harmless elsewhere).
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod updater;
mod wire;

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tauri::ipc::{Invoke, InvokeBody, InvokeResolver};
use tauri::{AppHandle, Emitter, Manager, Wry};
use wire::{Request, ToWindow};

/// The settings window's label (`tauri.conf.json`).
const SETTINGS: &str = "settings";

/// The page's calls waiting for the app's reply, by request id.
#[derive(Default)]
struct Pending {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, InvokeResolver<Wry>>>,
}

impl Pending {
    /// Rejects every call still waiting (the app went away).
    fn reject_all(&self, why: &str) {
        let waiting = std::mem::take(&mut *lock(&self.waiting));
        for resolver in waiting.into_values() {
            resolver.reject(json!({ "message": why }));
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn main() -> std::process::ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "--updater") {
        return updater::main(&args, context());
    }
    if let Some(refusal) = started_by_hand() {
        return refusal;
    }
    // First, before anything can print: the bridge keeps the real stdout and fd 1 becomes
    // stderr, so a stray print from a library cannot corrupt a request line.
    let to_app = match bridge_stdout() {
        Ok(file) => file,
        Err(error) => {
            eprintln!("tidings-settings: cannot keep stdout for the bridge: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match run(to_app) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tidings-settings: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `--version` (the bundle check runs every packaged program so), and a clear word to a
/// person who starts this program from a terminal: only the app can answer its requests.
fn started_by_hand() -> Option<std::process::ExitCode> {
    use std::io::IsTerminal;
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    if args.len() == 1 && args[0] == "--version" {
        println!("tidings-settings {}", tidings_platform::version::LONG);
        return Some(std::process::ExitCode::SUCCESS);
    }
    if !args.is_empty() || std::io::stdin().is_terminal() {
        eprintln!(
            "tidings-settings: this is the settings window of tidings-app, which starts it; \
             choose Settings… in the menu, or run `tidings-app --open-settings`"
        );
        return Some(std::process::ExitCode::from(2));
    }
    None
}

/// A copy of stdout for the bridge; fd 1 then points at stderr.
fn bridge_stdout() -> std::io::Result<File> {
    use std::os::fd::AsFd;
    let bridge = rustix::io::dup(std::io::stdout().as_fd())?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    Ok(File::from(bridge))
}

fn run(to_app: File) -> Result<(), Box<dyn std::error::Error>> {
    let pending = Arc::new(Pending::default());
    let to_app = Arc::new(Mutex::new(to_app));
    let forward = {
        let (pending, to_app) = (pending.clone(), to_app.clone());
        move |invoke: Invoke<Wry>| {
            forward(&pending, &to_app, invoke);
            true
        }
    };
    let app = tauri::Builder::default()
        .invoke_handler(forward)
        .setup(move |app| {
            #[cfg(target_os = "macos")]
            app.set_activation_policy(tauri::ActivationPolicy::Accessory);
            open_window(app.handle())?;
            let app = app.handle().clone();
            std::thread::Builder::new()
                .name("from-app".into())
                .spawn(move || from_app(&app, &pending))?;
            Ok(())
        })
        .build(context())?;
    // Closing the window is the last window closing: Tauri then exits, as it should.
    app.run(|_, _| {});
    Ok(())
}

/// The app's configuration and the window's page, built in (one copy for both uses).
fn context() -> tauri::Context {
    tauri::generate_context!()
}

/// Sends one of the page's calls to the app; its reply resolves it (`from_app`).
fn forward(pending: &Pending, to_app: &Mutex<File>, invoke: Invoke<Wry>) {
    let args = match invoke.message.payload() {
        InvokeBody::Json(args) => args.clone(),
        InvokeBody::Raw(_) => {
            invoke
                .resolver
                .reject(json!({ "message": "the app's commands take JSON arguments" }));
            return;
        }
    };
    let id = pending.next.fetch_add(1, Ordering::Relaxed);
    let request = Request {
        id,
        command: invoke.message.command().to_owned(),
        args,
    };
    lock(&pending.waiting).insert(id, invoke.resolver);
    let mut line = serde_json::to_vec(&request).expect("a request serializes");
    line.push(b'\n');
    let mut to_app = lock(to_app);
    if to_app
        .write_all(&line)
        .and_then(|()| to_app.flush())
        .is_err()
        && let Some(resolver) = lock(&pending.waiting).remove(&id)
    {
        resolver.reject(json!({ "message": "Tidings is not running; start it again" }));
    }
}

/// Reads the app's messages until it goes away (stdin closes), then exits.
fn from_app(app: &AppHandle, pending: &Pending) {
    for line in BufReader::new(std::io::stdin().lock()).lines() {
        let Ok(line) = line else { break };
        match serde_json::from_str::<ToWindow>(&line) {
            Ok(ToWindow::Reply { id, result }) => {
                if let Some(resolver) = lock(&pending.waiting).remove(&id) {
                    match result {
                        Ok(value) => resolver.resolve(value),
                        Err(error) => resolver.reject(error),
                    }
                }
            }
            Ok(ToWindow::Event { name, payload }) => {
                let _ = app.emit(&name, payload);
            }
            Ok(ToWindow::Show) => {
                let shown = app.clone();
                let _ = app.run_on_main_thread(move || {
                    if let Err(error) = open_window(&shown) {
                        eprintln!("tidings-settings: {error}");
                    }
                });
            }
            // Both ends are built together; a line that does not parse is a bug, said
            // without its content (it may hold settings).
            Err(error) => eprintln!("tidings-settings: a message from the app: {error}"),
        }
    }
    pending.reject_all("Tidings quit");
    app.exit(0);
}

/// Shows the settings window and brings it to the front, creating it first if needed.
fn open_window(app: &AppHandle) -> tauri::Result<()> {
    let window = if let Some(window) = app.get_webview_window(SETTINGS) {
        window
    } else {
        let config = app
            .config()
            .app
            .windows
            .iter()
            .find(|w| w.label == SETTINGS)
            .expect("tauri.conf.json declares the settings window");
        tauri::WebviewWindowBuilder::from_config(app, config)?.build()?
    };
    window.unminimize()?;
    window.show()?;
    window.set_focus()
}
