//! `tidings serve`: the headless daemon, on real stores or (with `--demo`) on fixture stores
//! with a simulator, until Ctrl-C or SIGTERM; with `--http` (for the whole run) or
//! `[http] enabled` (live, as settings change) also on the loopback Streamable HTTP endpoint.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tidings_core::{EventType, Limits, Settings, StorePaths};
use tidings_server::daemon::{Daemon, DaemonConfig};
use tidings_server::demo::{Demo, DemoHome, Layout};
use tidings_server::http::HttpError;
use tidings_server::http::auth::AuthMode;
use tidings_server::http::supervisor::{AuthSource, HttpState, HttpSupervisor};
use tidings_server::limits::ServerLimits;
use tidings_server::socket::SocketListener;

use super::args::ServeArgs;
use super::exit_code::{CONFIG, Coded};
use super::resolve_socket;
use crate::output;

/// Why `serve` could not work out what to serve (the rest are the library's errors).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// No home directory to find the real stores under.
    #[error("HOME is not set, so the Mail and Messages stores cannot be found; set HOME")]
    NoHome,
}

impl Coded for ServeError {
    fn exit_code(&self) -> u8 {
        CONFIG
    }
}

/// Runs the daemon until a signal.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    // Before anything else, so a signal during start-up is a clean stop too.
    let stop = super::interrupted();
    let mut limits = ServerLimits::default();
    if let Some(ms) = args.heartbeat_ms {
        limits.heartbeat = Duration::from_millis(ms.max(1));
    }
    if let Some(ms) = args.live_check_ms {
        limits.live_check = Duration::from_millis(ms.max(1));
    }
    if args.demo {
        run_demo(args, limits, stop).await
    } else {
        run_real(args, limits, stop).await
    }
}

async fn run_real(
    args: ServeArgs,
    limits: ServerLimits,
    stop: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let socket_path = resolve_socket(args.socket.as_deref())?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or(ServeError::NoHome)?;
    let config_dir = tidings_platform::paths::config_dir()?;
    // Lock and bind first: a second daemon must fail before it does any work.
    let listener = SocketListener::bind(&socket_path)?;
    let settings_path = config_dir.join("settings.toml");
    // A first run leaves a commented file to edit, with everything off.
    if Settings::create_if_missing(&settings_path)? {
        tracing::info!(settings = %settings_path.display(), "wrote the default settings");
    }
    let config = DaemonConfig {
        store_paths: StorePaths::for_home(&home),
        settings_path,
        engine_limits: Limits::default(),
        limits,
        demo: None,
    };
    tracing::info!(settings = %config.settings_path.display(), "settings");
    let daemon = Daemon::start(config)?;
    let http = spawn_http(&args, &daemon);
    output::err(format_args!(
        "tidings: serving on {}",
        listener.path().display()
    ));
    if let Some(line) = all_off_line(&daemon.settings(), daemon.settings_path()) {
        output::err(format_args!("tidings: {line}"));
    }
    serve_until_signal(&listener, &daemon, stop, http, |how_to| {
        output::err(format_args!("tidings: {how_to}"));
    })
    .await?;
    Ok(())
}

async fn run_demo(
    args: ServeArgs,
    limits: ServerLimits,
    stop: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let home = DemoHome::create(args.data_dir.as_deref())?;
    // --socket, then TIDINGS_SOCKET (see `resolve_socket`), then the demo dir.
    let socket_path = match &args.socket {
        Some(path) => resolve_socket(Some(path))?,
        None if std::env::var_os(tidings_platform::paths::SOCKET_ENV)
            .is_some_and(|v| !v.is_empty()) =>
        {
            resolve_socket(None)?
        }
        None => home.default_socket_path(),
    };
    let listener = SocketListener::bind(&socket_path)?;
    let layout = home.lay_out()?;
    let demo = Demo::start(&home, args.simulate.0)?;
    let config = DaemonConfig {
        store_paths: home.store_paths(),
        settings_path: home.settings_path(),
        engine_limits: Limits::default(),
        limits,
        // The conformance levers rebuild the user's demo stores: only when asked for.
        demo: args.conformance_controls.then(|| demo.control()),
    };
    let daemon = Daemon::start(config)?;
    let http = spawn_http(&args, &daemon);
    let how_to = how_to_connect(&home, layout, listener.path(), args.simulate.0);
    output::out(&how_to);
    let served = serve_until_signal(&listener, &daemon, stop, http, |how_to| {
        output::out(&how_to);
    })
    .await;
    // Stop the simulator before the temporary home (if any) is removed.
    drop(demo);
    drop(listener);
    drop(home);
    served?;
    Ok(())
}

/// Accepts until Ctrl-C (SIGINT) or SIGTERM, then shuts the daemon down (which ends the HTTP
/// endpoint too). The socket serves from the start; the HTTP endpoint starts beside it, and
/// `say` gets its URL once it serves. A forced (`--http`) endpoint that cannot start shuts
/// the daemon down and is the error. The caller drops the listener afterwards, which removes
/// the socket.
async fn serve_until_signal(
    listener: &SocketListener,
    daemon: &Daemon,
    stop: impl Future<Output = ()>,
    mut http: HttpSupervisor,
    say: impl FnOnce(String),
) -> Result<(), HttpError> {
    let serving = listener.serve(daemon, stop);
    tokio::pin!(serving);
    let mut result = Ok(());
    tokio::select! {
        // A signal during start-up: the supervisor is raced against shutdown, so this is quick.
        () = &mut serving => {}
        settled = http.settled() => {
            match settled {
                Ok(state) => {
                    if let Some(how_to) = http_how_to(&state) {
                        say(how_to);
                    }
                    serving.await;
                }
                Err(error) => result = Err(error),
            }
        }
    }
    tracing::info!("shutting down");
    daemon.shutdown();
    http.stopped().await;
    result
}

/// Start the HTTP supervisor in the background: `--http ADDR` forces the endpoint on for the
/// whole run, and a failure to start it (a non-loopback address, no keychain, a taken port)
/// stops `serve`, as the user asked for it on the command line. Otherwise `[http]` in
/// settings decides, live; a failure there is logged and retried on the next settings change.
fn spawn_http(args: &ServeArgs, daemon: &Daemon) -> HttpSupervisor {
    let auth: AuthSource = if args.no_auth {
        // `--no-auth` requires `--http`, so the endpoint is forced on and this prints once.
        output::err(NO_AUTH_WARNING);
        Arc::new(|| Ok(AuthMode::NoAuth))
    } else {
        // The system keychain is looked up at each start, so one that appears later is used.
        Arc::new(|| {
            let keychain =
                tidings_platform::KeyringKeychain::system(tidings_platform::keychain::SERVICE)
                    .map_err(|e| HttpError::Token { source: e.into() })?;
            Ok(AuthMode::Token(Arc::new(keychain)))
        })
    };
    HttpSupervisor::spawn(daemon, args.http, auth)
}

const NO_AUTH_WARNING: &str = "\
WARNING: ------------------------------------------------------------------------
WARNING: the HTTP endpoint runs WITHOUT AUTHENTICATION (--demo --no-auth).
WARNING: Any process on this machine can read the demo's events over HTTP.
WARNING: This is for conformance tools that cannot send headers; the demo's
WARNING: stores are fake. Never use it with real mail or messages.
WARNING: ------------------------------------------------------------------------";

/// One line when no event type is on (a first run): what is off and where to turn it on.
fn all_off_line(settings: &Settings, path: &Path) -> Option<String> {
    let off = EventType::ALL
        .into_iter()
        .all(|ty| !settings.for_type(ty).enabled);
    off.then(|| {
        format!(
            "mail.received and messages.received are both off; turn them on in the menu bar \
             or set `enabled = true` under [mail] and [messages] in {}",
            path.display()
        )
    })
}

/// The endpoint's URL and how to authenticate, if it serves.
fn http_how_to(state: &HttpState) -> Option<String> {
    let url = state.url()?;
    Some(match state {
        HttpState::Serving { no_auth: true, .. } => format!("HTTP (no auth): {url}"),
        _ => format!(
            "HTTP: {url} (send Authorization: Bearer <token>; print the token with `tidings token show`)"
        ),
    })
}

/// The `tidings-mcp` beside this binary, if it is there; else the bare name (on PATH).
fn shim_path() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("tidings-mcp")))
        .filter(|shim| shim.is_file())
        .unwrap_or_else(|| PathBuf::from("tidings-mcp"))
}

/// This `tidings` binary's absolute path, so the printed commands work from any directory.
fn this_binary() -> PathBuf {
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("tidings"))
}

/// `path` as one shell word: as is when it holds only safe characters, else single-quoted.
fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+:@,=%".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The how-to-connect text printed at start.
fn how_to_connect(
    home: &DemoHome,
    layout: Layout,
    socket: &Path,
    every: Option<Duration>,
) -> String {
    let config = json!({"mcpServers": {"tidings": {
        "command": shim_path(),
        "args": ["--socket", socket],
    }}});
    let stores = match layout {
        Layout::Reused => "reusing the stores already there",
        Layout::Seeded => "fresh stores from the fixtures",
    };
    let simulator = match every {
        Some(every) => format!("a new mail and message every {} s", every.as_secs_f64()),
        None => "simulator off: write to the stores yourself".to_owned(),
    };
    let socket_path = socket;
    let socket = socket.display();
    format!(
        "Tidings demo is serving.\n\
         \x20 home:     {home} ({stores})\n\
         \x20 settings: {settings} (edit it; changes apply at once)\n\
         \x20 socket:   {socket}\n\
         \x20 {simulator}\n\
         \n\
         MCP client config:\n\
         \x20 {config}\n\
         \n\
         Watch events:\n\
         \x20 {tidings} tail mail.received --socket {socket_arg}\n\
         \x20 {tidings} tail messages.received --from +12025550101 --socket {socket_arg}\n\
         \x20 {tidings} status --socket {socket_arg}\n\
         Stop with Ctrl-C.",
        home = home.root().display(),
        settings = home.settings_path().display(),
        tidings = shell_word(&this_binary()),
        socket_arg = shell_word(socket_path),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word(Path::new("/a/b-c_d.sock")), "/a/b-c_d.sock");
        assert_eq!(
            shell_word(Path::new("/Users/ana/Library/Application Support/x.sock")),
            "'/Users/ana/Library/Application Support/x.sock'"
        );
        assert_eq!(shell_word(Path::new("/it's")), r"'/it'\''s'");
    }
}
