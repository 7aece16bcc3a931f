//! Tidings' menu-bar app: hosts the engine in-process (`tidings_server::Tidings::start`), shows
//! the tray menu and the settings window, and bridges the window to the engine's `Handle`.
//!
//! Modules: `args` (the command line), `commands` (the window's Tauri commands, one line each),
//! `tray` (the menu, updated in place), `bridge` (engine changes to window events and the menu).
//! Decisions: docs/decisions/app.md.

// No console window on Windows release builds (harmless elsewhere).
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod args;
mod bridge;
mod commands;
mod tray;

use clap::Parser;
use tauri::{Manager, RunEvent};
use tidings_server::{Handle, Tidings};
use tracing::level_filters::LevelFilter;

/// The settings window's label (`tauri.conf.json`).
pub const SETTINGS: &str = "settings";

fn main() -> std::process::ExitCode {
    no_gl_probe_at_start();
    let args = args::AppArgs::parse();
    init_logging(args.log_level());
    match run(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tidings-app: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// On Linux (the development twin), keeps GTK from probing OpenGL when it opens the display:
/// the probe loads Mesa (under Xvfb its software renderer and LLVM), about 50 MB resident
/// for as long as the app runs, though the tray never draws with GL. The settings window
/// still paints (`WebKitGTK` composites without GDK's GL; `make app-e2e` checks each shot).
/// A `GDK_GL` the user set is left alone. macOS has no GDK: nothing to do there.
#[allow(unsafe_code)]
fn no_gl_probe_at_start() {
    #[cfg(target_os = "linux")]
    if std::env::var_os("GDK_GL").is_none() {
        // SAFETY: the first thing `main` does, before any thread exists that could read the
        // environment at the same time.
        unsafe { std::env::set_var("GDK_GL", "disable") };
    }
}

/// Logs to stderr at `level` (`-v`), and to the daily log file the daemon keeps
/// (`tidings_server::logfile`) at info: no subjects, addresses or handles at that level. A log
/// directory that cannot be written is said once on stderr; the app goes on without the file.
fn init_logging(level: tracing::Level) {
    use tidings_server::logfilter::{ClientGone, log_filter};
    use tracing_subscriber::Layer;
    use tracing_subscriber::filter::FilterExt;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let level = LevelFilter::from_level(level);
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .log_internal_errors(false)
        .with_filter(log_filter(level).and(ClientGone));
    let file = match tidings_server::logfile::open_in_log_dir() {
        Ok(appender) => Some(tidings_server::logfile::layer(appender, LevelFilter::INFO)),
        Err(error) => {
            eprintln!("tidings-app: {error}; logging to stderr only");
            None
        }
    };
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
}

/// Builds and runs the app until Quit. Returns only on a start-up error: on Quit, Tauri exits
/// the process from its event loop (after `RunEvent::Exit`, where the engine is stopped).
fn run(args: &args::AppArgs) -> Result<(), Box<dyn std::error::Error>> {
    let config = args.config()?;
    let open_settings = args.open_settings;
    let app = tauri::Builder::default()
        // First: a second launch hands over to this one and exits before it starts an engine
        // (plugins run before `setup`; spec desktop.md 1.1).
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            show_settings(app);
        }))
        .invoke_handler(commands::handler())
        .setup(move |app| {
            #[cfg(target_os = "macos")]
            app.set_activation_policy(tauri::ActivationPolicy::Accessory);
            // The engine runs on Tauri's tokio runtime, so its tasks and the commands share one.
            let started = tauri::async_runtime::block_on(async {
                let handle = Tidings::start(config)?;
                // The engine's notices as desktop notifications, as `tidings serve` shows
                // them; a missing notification server is logged once, never fatal.
                tidings_server::notices::deliver(
                    handle.notices(),
                    tidings_platform::desktop_notifier(),
                );
                Ok::<_, tidings_server::StartError>(handle)
            });
            // Tauri panics on an error from `setup`, with a backtrace; a start-up error
            // names its own fix, so say just that and exit as `tidings serve` does.
            let handle = started.unwrap_or_else(|error| {
                eprintln!("tidings-app: {error}");
                std::process::exit(1)
            });
            tracing::info!("engine started");
            eprintln!("tidings-app: serving on {}", handle.socket_path().display());
            let first_run = handle.first_run();
            app.manage(handle);
            quit_on_signal(app.handle().clone());
            let tray = tray::Tray::build(app.handle())?;
            bridge::spawn(app.handle(), tray);
            if open_settings || first_run {
                show_settings(app.handle());
            }
            Ok(())
        })
        .build(tauri::generate_context!())?;
    app.run(|app, event| match event {
        // The last window closing is not a reason to quit; `app.exit(n)` (Quit) passes
        // `Some(n)` and still quits.
        RunEvent::ExitRequested { api, code, .. } if code.is_none() => api.prevent_exit(),
        RunEvent::Exit => {
            if let Some(handle) = app.try_state::<Handle>() {
                stop(&handle);
            }
        }
        _ => {}
    });
    Ok(())
}

/// Shows the settings window and brings it to the front, creating it first if it is not
/// open. The window exists only while it is open: closing it destroys its web view, so the
/// app with its window closed holds no web content process (docs/decisions/app-window.md).
pub fn show_settings(app: &tauri::AppHandle) {
    let window = if let Some(window) = app.get_webview_window(SETTINGS) {
        window
    } else {
        let Some(config) = app
            .config()
            .app
            .windows
            .iter()
            .find(|w| w.label == SETTINGS)
        else {
            tracing::error!("no settings window in tauri.conf.json");
            return;
        };
        match tauri::WebviewWindowBuilder::from_config(app, config)
            .and_then(tauri::WebviewWindowBuilder::build)
        {
            Ok(window) => window,
            Err(error) => {
                tracing::error!(%error, "cannot open the settings window");
                return;
            }
        }
    };
    let _ = window.unminimize();
    let _ = window.show();
    let _ = window.set_focus();
}

/// SIGTERM (launchd or systemd stopping the app, `kill`) and Ctrl-C quit as the menu's Quit
/// does, so streams get their final frames and the socket file is removed.
fn quit_on_signal(app: tauri::AppHandle) {
    tauri::async_runtime::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut term) = signal(SignalKind::terminate()) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        app.exit(0);
    });
}

/// Stops the engine and waits for it: streams get their final frames, the socket file goes.
fn stop(handle: &Handle) {
    handle.shutdown();
    if let Err(error) = tauri::async_runtime::block_on(handle.join()) {
        eprintln!("tidings-app: {error}");
    }
}
