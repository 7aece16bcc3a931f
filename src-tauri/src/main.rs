//! Tidings' menu-bar app: hosts the engine in-process (`tidings_server::Tidings::start`),
//! shows the tray menu, and runs the settings window's commands for it. The window is a
//! second process (`tidings-settings`, src/settings.rs) started while it is open, so this one
//! never loads a web view: with the window closed the app holds the engine and a menu.
//!
//! Modules: `args` (the command line), `tray` (the menu, updated in place on the main
//! thread), `window` (the window process and its bridge), `wire` (the bridge's messages),
//! `commands` (the window's commands), `bridge` (engine changes to the menu and the window),
//! `handover` (a second launch opens the first one's Settings), `menu_bar` (a hidden menu-bar
//! icon opens Settings with where to allow it), `updates` (the update checks, the menu's
//! update line, Install and Restart).
//! Decisions: docs/decisions/app.md.

// No console window on Windows release builds (harmless elsewhere).
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod args;
mod bridge;
mod commands;
mod handover;
mod menu_bar;
mod tray;
mod updates;
mod window;
mod wire;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use clap::Parser;
use tao::event::{Event, StartCause};
use tao::event_loop::{ControlFlow, EventLoopBuilder, EventLoopProxy};
use tidings_core::EventType;
use tidings_server::socket::SocketError;
use tidings_server::{Handle, StartError, Tidings, app};
use tracing::level_filters::LevelFilter;
use tray_icon::menu::MenuEvent;

use commands::Context;
use menu_bar::Watch;
use updates::Updates;
use window::Window;

/// How long "Pause all for 1 hour" pauses.
const PAUSE_MINUTES: u32 = 60;

/// What the main thread is asked to do (the menu, the tray and the event loop live there).
#[derive(Debug)]
pub enum AppEvent {
    /// A menu item was clicked (its id).
    Menu(String),
    /// The engine's state or settings changed: update the menu.
    Refresh,
    /// Start at login changed: update its tick.
    Login(app::LoginView),
    /// Open Settings (a second launch).
    ShowSettings,
    /// SIGTERM or Ctrl-C: quit as the menu's Quit does.
    Quit,
    /// Quit and start this executable again (`restart_app`).
    Restart,
    /// Check the update feed now (the window's Check Now).
    CheckForUpdates,
    /// An update check or install started or ended: update the menu's update items.
    UpdatesChanged,
}

/// Sends an [`AppEvent`] to the main thread from any thread.
#[derive(Clone)]
pub struct Proxy(Arc<dyn Fn(AppEvent) + Send + Sync>);

impl Proxy {
    pub fn new(send: impl Fn(AppEvent) + Send + Sync + 'static) -> Proxy {
        Proxy(Arc::new(send))
    }

    /// Sends `event`; after Quit the event loop is gone and it is dropped.
    pub fn send(&self, event: AppEvent) {
        (self.0)(event);
    }

    fn of(event_loop: EventLoopProxy<AppEvent>) -> Proxy {
        let event_loop = Mutex::new(event_loop);
        Proxy::new(move |event| {
            let _ = event_loop
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .send_event(event);
        })
    }
}

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
/// the probe loads Mesa (under Xvfb its software renderer and LLVM), which stays resident
/// for as long as the app runs, though the tray never draws with GL (docs/benchmarks.md). A
/// `GDK_GL` the user set is left alone; the window process inherits it. macOS has no GDK:
/// nothing to do there.
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

/// Starts the engine and runs the menu until Quit. Returns only on a start-up error or a
/// hand-over to a running app: on Quit, the event loop exits the process.
fn run(args: &args::AppArgs) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("tidings-app")
        .build()?;
    let Some(handle) = start_engine(args, &runtime)? else {
        return Ok(());
    };
    tracing::info!("engine started");
    eprintln!("tidings-app: serving on {}", handle.socket_path().display());

    let event_loop = EventLoopBuilder::<AppEvent>::with_user_event().build();
    #[cfg(target_os = "macos")]
    let event_loop = {
        use tao::platform::macos::{ActivationPolicy, EventLoopExtMacOS};
        let mut event_loop = event_loop;
        event_loop.set_activation_policy(ActivationPolicy::Accessory);
        event_loop
    };
    let main = Proxy::of(event_loop.create_proxy());
    let menu = main.clone();
    MenuEvent::set_event_handler(Some(move |event: MenuEvent| {
        menu.send(AppEvent::Menu(event.id.0));
    }));
    let cx = Arc::new(Context {
        handle: handle.clone(),
        main: main.clone(),
        menu_bar: menu_bar::MenuBarState::default(),
    });
    let window = Window::new(cx.clone(), runtime.handle().clone());
    let mut handover = listen_for_handover(&runtime, &handle, &main);
    bridge::spawn(runtime.handle(), &cx, &window);
    let updates = Updates::new(&handle, main.clone(), args.updater_args());
    runtime.spawn(updates::daily(updates.clone(), handle.clone()));
    runtime.spawn(quit_on_signal(main.clone()));
    let open_at_start = args.open_settings || handle.first_run();
    let restart_args: Vec<_> = std::env::args_os().skip(1).collect();

    let mut tray = None;
    // Whether the icon is shown (`menu_bar`), from the tray's making on.
    let mut icon: Option<Watch> = None;
    event_loop.run(move |event, _, control_flow| {
        // While the launch check runs, the loop sleeps until its next look at the latest (an
        // exit set below is sticky: tao keeps it).
        *control_flow = icon
            .as_ref()
            .and_then(Watch::next_look)
            .map_or(ControlFlow::Wait, ControlFlow::WaitUntil);
        // Quit: the window's process, the engine (final frames, socket removed), the
        // hand-over socket, then the loop, which exits the process with `code`.
        let mut quit = |control_flow: &mut ControlFlow, code: i32| {
            window.close();
            stop(&runtime, &handle);
            if let Some(handover) = handover.take() {
                runtime.block_on(handover.close());
            }
            *control_flow = ControlFlow::ExitWithCode(code);
        };
        match event {
            // The tray is made once the loop runs (as macOS needs it).
            Event::NewEvents(StartCause::Init) => match tray::Tray::build(&handle) {
                Ok(built) => {
                    built.update_updates(&updates.menu());
                    icon = Some(Watch::new(built.presence(), Instant::now()));
                    tray = Some(built);
                    if open_at_start {
                        window.show();
                    }
                }
                Err(error) => {
                    eprintln!("tidings-app: cannot show the tray icon: {error}");
                    quit(control_flow, 1);
                }
            },
            Event::UserEvent(event) => match event {
                AppEvent::Refresh => {
                    if let Some(tray) = &tray {
                        tray.update(&handle, &handle.state().borrow());
                    }
                }
                AppEvent::Login(view) => {
                    if let Some(tray) = &tray {
                        tray.update_login(&view);
                    }
                }
                AppEvent::UpdatesChanged => {
                    if let Some(tray) = &tray {
                        tray.update_updates(&updates.menu());
                    }
                    bridge::send_settings(runtime.handle(), &cx, &window);
                }
                AppEvent::ShowSettings => show_settings(&cx, &window, icon.as_ref()),
                AppEvent::Menu(id) => match id.as_str() {
                    tray::QUIT => quit(control_flow, 0),
                    tray::SETTINGS => show_settings(&cx, &window, icon.as_ref()),
                    _ => menu_action(&runtime, &cx, &updates, id),
                },
                AppEvent::Quit => quit(control_flow, 0),
                AppEvent::Restart => {
                    quit(control_flow, 0);
                    restart(&restart_args);
                }
                AppEvent::CheckForUpdates => drop(runtime.spawn(updates.clone().check())),
            },
            // The launch check's timer, or any other wake-up.
            Event::NewEvents(_) => look_at_icon(&cx, &window, icon.as_mut()),
            _ => {}
        }
    })
}

/// A menu item that runs on the engine's runtime: the update items, or a settings change.
fn menu_action(
    runtime: &tokio::runtime::Runtime,
    cx: &Arc<Context>,
    updates: &Arc<Updates>,
    id: String,
) {
    tracing::info!(item = id, "menu");
    match id.as_str() {
        tray::CHECK_UPDATES => drop(runtime.spawn(updates.clone().check())),
        tray::INSTALL_UPDATE => drop(runtime.spawn(updates.clone().install())),
        _ => drop(runtime.spawn(act(cx.clone(), id))),
    }
}

/// The socket a second launch hands over at; `None` (said in the log) when it cannot be made:
/// a second launch is then refused.
fn listen_for_handover(
    runtime: &tokio::runtime::Runtime,
    handle: &Handle,
    main: &Proxy,
) -> Option<handover::Handover> {
    let path = handover::path(handle.socket_path());
    match runtime.block_on(async { handover::listen(&path, main.clone()) }) {
        Ok(handover) => Some(handover),
        Err(error) => {
            tracing::warn!(%error, "a second launch cannot reach this app; it will be refused");
            None
        }
    }
}

/// A look at the icon if one is due. Once the launch check answers, an open window (a first
/// run) is told at once; a hidden icon opens the window, which asks for the state itself.
fn look_at_icon(cx: &Context, window: &Window, icon: Option<&mut Watch>) {
    if let Some(open) = icon.and_then(|icon| icon.wake(Instant::now(), &cx.menu_bar)) {
        window.send(bridge::state_changed(cx));
        if open {
            window.show();
        }
    }
}

/// Opens Settings (the menu's Settings…, a second launch). When the launch check found the
/// icon hidden, one more look first: allowed since, the window's notice goes.
fn show_settings(cx: &Context, window: &Window, icon: Option<&Watch>) {
    if let Some(icon) = icon
        && icon.look_again(&cx.menu_bar)
    {
        window.send(bridge::state_changed(cx));
    }
    window.show();
}

/// Starts the engine, with its notices shown as desktop notifications. `None`: a second
/// launch, handed over to the running app (which opens Settings); this one exits 0.
fn start_engine(
    args: &args::AppArgs,
    runtime: &tokio::runtime::Runtime,
) -> Result<Option<Handle>, StartError> {
    let started = runtime.block_on(async {
        let handle = Tidings::start(args.config()?)?;
        // The app can ask: an agent with no grant under `[agents] new = "ask"` waits for the
        // window's Allow or Don't Allow instead of being refused at once.
        handle.agents().set_prompts(true);
        // As `tidings serve` shows them; a missing notification server is logged once, never
        // fatal.
        tidings_server::notices::deliver(handle.notices(), tidings_platform::desktop_notifier());
        Ok::<_, StartError>(handle)
    });
    match started {
        Ok(handle) => Ok(Some(handle)),
        // The lock is taken before the stores are laid out or read. A `tidings serve` on the
        // socket does not answer at the hand-over socket, and its error stands.
        Err(StartError::Socket(SocketError::AlreadyRunning { path, .. }))
            if handover::hand_over(&handover::path(&path)) =>
        {
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// The menu's items that change settings, through the same functions as the window's
/// commands; the menu then follows the engine, not the click (muda flipped the tick).
async fn act(cx: Arc<Context>, id: String) {
    let handle = &cx.handle;
    if id == tray::LOGIN {
        // Off when on; on (or, waiting for approval, the Login Items pane) otherwise.
        let on = app::login_view().state == "enabled";
        let view = match app::set_start_at_login(handle, !on).await {
            Ok(view) => view.start_at_login,
            Err(error) => {
                tracing::warn!(%error, "the menu action failed");
                app::login_view()
            }
        };
        cx.main.send(AppEvent::Login(view));
        return;
    }
    let result = if id == tray::PAUSE {
        if handle.paused_until_ms().is_some() {
            Ok(app::resume_all(handle).await)
        } else {
            app::pause_all(handle, PAUSE_MINUTES).await
        }
    } else if let Some(ty) = EventType::ALL
        .into_iter()
        .find(|ty| tray::type_id(*ty) == id)
    {
        let on = handle.settings().for_type(ty).enabled;
        app::set_type_enabled(handle, ty.name(), !on).await
    } else {
        return;
    };
    if let Err(error) = result {
        tracing::warn!(item = id, %error, "the menu action failed");
    }
    cx.main.send(AppEvent::Refresh);
}

/// SIGTERM (launchd or systemd stopping the app, `kill`) and Ctrl-C quit as the menu's Quit
/// does, so streams get their final frames and the socket file is removed.
async fn quit_on_signal(main: Proxy) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    main.send(AppEvent::Quit);
}

/// Stops the engine and waits for it: streams get their final frames, the socket file goes.
fn stop(runtime: &tokio::runtime::Runtime, handle: &Handle) {
    handle.shutdown();
    if let Err(error) = runtime.block_on(handle.join()) {
        eprintln!("tidings-app: {error}");
    }
}

/// Starts this executable again with the same arguments (the engine has stopped, so the new
/// one takes its socket).
fn restart(args: &[std::ffi::OsString]) {
    let started = std::env::current_exe()
        .and_then(|exe: PathBuf| std::process::Command::new(exe).args(args).spawn());
    if let Err(error) = started {
        eprintln!("tidings-app: cannot start again: {error}");
    }
}
