//! `tidings serve`: the headless daemon, on real stores or (with `--demo`) on fixture stores
//! with a simulator, until Ctrl-C or SIGTERM; with `--http` (for the whole run) or
//! `[http] enabled` (live, as settings change) also on the loopback Streamable HTTP endpoint.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tidings_core::{EventType, Settings};
use tidings_server::demo::Layout;
use tidings_server::engine::{self, Config, DemoConfig, DemoInfo, HttpConfig};
use tidings_server::http::auth::AuthMode;
use tidings_server::limits::ServerLimits;
use tidings_server::state::HttpEndpointState;
use tidings_server::{Handle, Tidings};

use super::args::ServeArgs;
use super::resolve_socket;
use crate::output;

/// Runs the daemon until a signal.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    // Before anything else, so a signal during start-up is a clean stop too.
    let stop = super::interrupted();
    let mut limits = ServerLimits::default();
    if let Some(ms) = args.heartbeat_ms {
        limits.heartbeat = Duration::from_millis(ms.max(1));
    }
    if let Some(ms) = args.write_deadline_ms {
        limits.write_deadline = Duration::from_millis(ms.max(1));
    }
    limits.shared_reads = !args.no_shared_reads;
    if let Some(ms) = args.live_check_ms {
        limits.live_check = Duration::from_millis(ms.max(1));
    }
    if let Some(ms) = args.tool_progress_ms {
        limits.tool_progress = Duration::from_millis(ms.max(1));
    }
    let mut config = if args.demo {
        Config::demo(DemoConfig {
            data_dir: args.data_dir.clone(),
            simulate: args.simulate.0,
            conformance_controls: args.conformance_controls,
        })
    } else {
        Config::for_user()?
    };
    // --socket, then TIDINGS_SOCKET (see `resolve_socket`), then the engine's default (the
    // demo dir in demo mode).
    let from_env =
        std::env::var_os(tidings_platform::paths::SOCKET_ENV).is_some_and(|v| !v.is_empty());
    if args.socket.is_some() || from_env || !args.demo {
        config.socket = Some(resolve_socket(args.socket.as_deref())?);
    }
    config.limits = limits;
    config.http = http_config(&args);
    let handle = Tidings::start(config)?;
    // The user's notices as desktop notifications; no notification server is logged once.
    tidings_server::notices::deliver(handle.notices(), tidings_platform::desktop_notifier());
    if let Some(demo) = handle.demo() {
        output::out(how_to_connect(demo, handle.socket_path()));
    } else {
        output::err(format_args!(
            "tidings: serving on {}",
            handle.socket_path().display()
        ));
        if let Some(line) = all_off_line(&handle.settings(), handle.settings_path()) {
            output::err(format_args!("tidings: {line}"));
        }
    }
    let demo = handle.demo().is_some();
    let say = |line: String| {
        if demo {
            output::out(&line);
        } else {
            output::err(format_args!("tidings: {line}"));
        }
    };
    serve_until_signal(&handle, stop, say).await?;
    Ok(())
}

/// Waits for Ctrl-C (SIGINT) or SIGTERM, then shuts the engine down and waits for it. `say`
/// gets the HTTP endpoint's URL once it serves. A forced (`--http`) endpoint that cannot
/// start stops the engine by itself and is the error.
async fn serve_until_signal(
    handle: &Handle,
    stop: impl Future<Output = ()>,
    say: impl FnOnce(String),
) -> anyhow::Result<()> {
    tokio::pin!(stop);
    let settled = tokio::select! {
        () = &mut stop => None,
        settled = handle.http_settled() => Some(settled),
    };
    if let Some(settled) = settled {
        if let Some(how_to) = settled.as_ref().and_then(http_how_to) {
            say(how_to);
        }
        tokio::select! {
            () = &mut stop => {}
            // The engine stopped by itself: a forced endpoint could not start.
            joined = handle.join() => return Ok(joined?),
        }
    }
    handle.shutdown();
    handle.join().await?;
    Ok(())
}

/// `--http ADDR` forces the endpoint on for the whole run, and a failure to start it (a
/// non-loopback address, no keychain, a taken port) stops `serve`, as the user asked for it
/// on the command line. Otherwise `[http]` in settings decides, live; a failure there is
/// logged and retried on the next settings change.
fn http_config(args: &ServeArgs) -> HttpConfig {
    let auth: tidings_server::http::supervisor::AuthSource = if args.no_auth {
        // `--no-auth` requires `--http`, so the endpoint is forced on and this prints once.
        output::err(NO_AUTH_WARNING);
        Arc::new(|| Ok(AuthMode::NoAuth))
    } else {
        engine::system_keychain()
    };
    HttpConfig {
        forced: args.http,
        auth,
    }
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
fn http_how_to(state: &HttpEndpointState) -> Option<String> {
    match state {
        HttpEndpointState::Serving { url, no_auth: true } => Some(format!("HTTP (no auth): {url}")),
        HttpEndpointState::Serving { url, .. } => Some(format!(
            "HTTP: {url} (send Authorization: Bearer <token>; print the token with `tidings token show`)"
        )),
        _ => None,
    }
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
fn how_to_connect(demo: &DemoInfo, socket: &Path) -> String {
    let (layout, every) = (demo.layout, demo.simulate);
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
         \n\
         Connect a host (its entry names this socket, since hosts such as Codex pass no\n\
         TIDINGS_SOCKET to the servers they start):\n\
         \x20 {tidings} connect claude-code --socket {socket_arg}\n\
         Stop with Ctrl-C.",
        home = demo.root.display(),
        settings = demo.settings.display(),
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
