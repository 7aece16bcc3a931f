//! `tidings doctor [--report] [--json]`: every check a person (or a bug report) needs, each
//! with a one-line fix on failure: the daemon and its socket, each store and Full Disk Access,
//! the settings file, the HTTP endpoint. Exits non-zero when any check fails.
//!
//! The store checks prefer the daemon's view: on macOS the grant that counts is the one of
//! the process that reads (Tidings.app), not this one (Terminal). Without a daemon, this
//! process probes the stores itself and says so.
//!
//! `--report` adds what a bug report needs and nothing personal: versions, OS, each store's
//! schema profile (table and column names, `user_version`, rounded row counts), access
//! states and a settings summary in counts.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tidings_core::settings::{NotificationKind, SettingsError};
use tidings_core::{Engine, EventType, Limits, Settings, StoreError, StorePaths};
use tidings_server::notices::FULL_DISK_ACCESS_OWNER;
use tidings_server::state::{
    FullDiskAccess, HttpEndpointState, SettingsFileState, State, StoreAccess,
};

use tidings_connect::{self as connect, Verification};
use tidings_platform::{Host, Mode};
use tidings_server::app::LoginView;

use super::args::DoctorArgs;
use super::client::Client;
use super::exit_code::{Coded, UNHEALTHY};
use super::resolve_socket;

/// How long the daemon gets to answer `tidings/status`.
const STATUS_TIMEOUT: Duration = Duration::from_secs(5);

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Fine.
    Pass,
    /// Worth knowing, not a failure (a store for a type that is off is missing).
    Warn,
    /// Broken: the exit code is non-zero.
    Fail,
    /// Not applicable (the HTTP endpoint is off).
    Skip,
}

/// One line of the doctor's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was checked ("daemon", "mail store", ...).
    pub name: String,
    /// How it came out.
    pub outcome: Outcome,
    /// What was found, in one line.
    pub detail: String,
    /// What to do, in one line, when it did not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn new(name: &str, outcome: Outcome, detail: impl Into<String>) -> Check {
        Check {
            name: name.to_owned(),
            outcome,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }
}

/// The checks failed: the exit code says so ([`UNHEALTHY`]).
#[derive(Debug, thiserror::Error)]
#[error("{failed} check{} failed; each says how to fix it above", if *.failed == 1 { "" } else { "s" })]
pub struct Unhealthy {
    /// How many checks failed.
    pub failed: usize,
}

impl Coded for Unhealthy {
    fn exit_code(&self) -> u8 {
        UNHEALTHY
    }
}

/// Everything the checks look at, gathered first so the checks themselves are pure.
pub struct Findings {
    /// The socket asked.
    pub socket: PathBuf,
    /// The daemon's state, or why it could not be had.
    pub daemon: Result<State, String>,
    /// The socket directory's privacy check; `None` when it does not exist yet.
    pub socket_dir: Option<Result<(), String>>,
    /// The settings file and what reading it gave.
    pub settings_path: PathBuf,
    /// The settings, or why the file is refused.
    pub settings: Result<Settings, SettingsError>,
    /// This process's own probe of each store (`EventType::ALL` order).
    pub local_stores: Vec<Result<(), StoreError>>,
    /// Whether the HTTP endpoint the daemon serves answered a TCP connect.
    pub http_reachable: Option<Result<(), String>>,
    /// Whether Tidings starts at login (`tidings install`, the menu's Start at Login).
    pub login: LoginView,
    /// Each MCP client configured for Tidings (`tidings connect`), and what running its
    /// configured command and completing a handshake gave; or why its config is unreadable.
    pub clients: Vec<(&'static str, Result<Verification, String>)>,
}

/// Runs `doctor`: prints the checks (and the report), Err when any failed.
pub async fn run(args: DoctorArgs) -> anyhow::Result<()> {
    let (home, settings_path, socket) = locations(&args)?;
    let findings = gather(&home, &settings_path, &socket).await;
    let checks = checks(&findings);
    let report = args
        .report
        .then(|| report(&home, &findings, &tidings_platform::SystemRunner));
    if args.json {
        let mut out = json!({
            "healthy": !checks.iter().any(|c| c.outcome == Outcome::Fail),
            "checks": checks,
        });
        if let Some(report) = &report {
            out["report"] = report.clone();
        }
        crate::output::out(format_args!("{out}"));
    } else {
        crate::output::out(render(&checks).trim_end());
        if let Some(report) = &report {
            crate::output::out("");
            crate::output::out(render_report(report).trim_end());
        }
    }
    let failed = checks.iter().filter(|c| c.outcome == Outcome::Fail).count();
    if failed > 0 {
        return Err(Unhealthy { failed }.into());
    }
    Ok(())
}

/// The home the stores are found under, the settings file and the socket: `--demo-dir` is a
/// demo's (its fake home, its `settings.toml`, its socket), else the user's.
fn locations(args: &DoctorArgs) -> anyhow::Result<(PathBuf, PathBuf, PathBuf)> {
    if let Some(dir) = &args.demo_dir {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        let socket = match &args.socket {
            Some(s) => resolve_socket(Some(s))?,
            None => dir.join(tidings_platform::paths::SOCKET_FILE_NAME),
        };
        return Ok((dir.clone(), dir.join("settings.toml"), socket));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("HOME is not set, so the stores cannot be found"))?;
    let settings = tidings_platform::paths::config_dir()?.join("settings.toml");
    Ok((home, settings, resolve_socket(args.socket.as_deref())?))
}

/// Look at everything once.
async fn gather(home: &Path, settings_path: &Path, socket: &Path) -> Findings {
    let daemon = daemon_state(socket).await;
    let socket_dir = socket.parent().filter(|d| d.exists()).map(|d| {
        // Never created or repaired here: only checked.
        tidings_platform::paths::ensure_private_dir(d).map_err(|e| e.to_string())
    });
    let paths = StorePaths::for_home(home);
    let local_stores = {
        let engine = Engine::new(&paths, Limits::default());
        EventType::ALL
            .into_iter()
            .map(|ty| engine.stamp(ty).map(drop))
            .collect()
    };
    let http_reachable = match &daemon {
        Ok(State {
            http: HttpEndpointState::Serving { url, .. },
            ..
        }) => Some(http_connect(url).await),
        _ => None,
    };
    Findings {
        socket: socket.to_owned(),
        daemon,
        socket_dir,
        settings_path: settings_path.to_owned(),
        settings: Settings::load(settings_path),
        local_stores,
        http_reachable,
        login: tidings_server::app::login_view_blocking().await,
        clients: clients().await,
    }
}

/// Every host with a Tidings entry, checked the way the host would start it. The checks run
/// side by side: each may wait up to [`connect::verify::TIMEOUT`] for a handshake, and a
/// user with three broken entries should wait once, not three times.
async fn clients() -> Vec<(&'static str, Result<Verification, String>)> {
    let mut checks = tokio::task::JoinSet::new();
    for (order, host) in Host::ALL.into_iter().enumerate() {
        let Some(target) = connect::Target::current(host) else {
            continue;
        };
        match connect::configured(&target) {
            Ok(None) => {}
            Ok(Some(entry)) => {
                checks.spawn(async move {
                    let mode = Mode::of_args(&entry.args);
                    let check =
                        connect::verify(&entry, mode, host.server_env(), connect::verify::TIMEOUT)
                            .await;
                    (order, host.id(), Ok(check))
                });
            }
            Err(e) => {
                let failure = e.to_string();
                checks.spawn(async move { (order, host.id(), Err(failure)) });
            }
        }
    }
    let mut out: Vec<_> = checks.join_all().await;
    out.sort_by_key(|(order, _, _)| *order);
    out.into_iter().map(|(_, id, check)| (id, check)).collect()
}

/// `tidings/status` from the daemon on `socket`.
async fn daemon_state(socket: &Path) -> Result<State, String> {
    let ask = async {
        let mut client = Client::connect(socket).await.map_err(|e| e.to_string())?;
        let mut status = client
            .call(1, "tidings/status", json!({}))
            .await
            .map_err(|e| e.to_string())?;
        if let Value::Object(m) = &mut status {
            m.remove("resultType");
            m.remove("_meta");
        }
        serde_json::from_value::<State>(status).map_err(|e| {
            format!("its status is not one this tidings reads ({e}); another version?")
        })
    };
    tokio::time::timeout(STATUS_TIMEOUT, ask)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {}s", STATUS_TIMEOUT.as_secs())))
}

/// A TCP connect to the host and port of `url` (`http://127.0.0.1:3917/mcp`).
async fn http_connect(url: &str) -> Result<(), String> {
    let addr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .ok_or_else(|| format!("cannot read the address in {url}"))?;
    match tokio::time::timeout(STATUS_TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no answer".to_owned()),
    }
}

/// The checks, in the order they print. The lead appends "login item" (from the `login`
/// work) and "clients configured and reachable" (from `connect`) at the marked place.
pub fn checks(f: &Findings) -> Vec<Check> {
    let mut checks = vec![daemon_check(f), socket_dir_check(f)];
    for (i, ty) in EventType::ALL.into_iter().enumerate() {
        checks.push(store_check(f, ty, i));
    }
    checks.push(access_check(f));
    checks.push(settings_check(f));
    checks.push(http_check(f));
    checks.push(login_check(&f.login));
    checks.extend(client_checks(&f.clients));
    checks
}

/// Off is a choice, not a failure; waiting for approval is worth a warning.
fn login_check(login: &LoginView) -> Check {
    match login.state {
        "enabled" => Check::new("login item", Outcome::Pass, login.text.clone()),
        "requiresApproval" => Check::new("login item", Outcome::Warn, login.text.clone())
            .fix("allow Tidings in System Settings > General > Login Items"),
        _ => Check::new("login item", Outcome::Warn, login.text.clone())
            .fix("run `tidings install`, or tick Start at Login in the menu"),
    }
}

/// One check per configured client; none configured is a warning with the way to connect.
fn client_checks(clients: &[(&'static str, Result<Verification, String>)]) -> Vec<Check> {
    if clients.is_empty() {
        return vec![
            Check::new(
                "clients",
                Outcome::Warn,
                "no MCP client is configured for Tidings",
            )
            .fix("run `tidings connect claude-code` (or any client `tidings clients` lists)"),
        ];
    }
    clients
        .iter()
        .map(|(id, result)| {
            let name = format!("client {id}");
            match result {
                Ok(v) if v.ok => Check::new(&name, Outcome::Pass, v.message.clone()),
                Ok(v) => Check::new(&name, Outcome::Fail, v.message.clone())
                    .fix(format!("run `tidings connect {id}` again; it rewrites the entry and checks it")),
                Err(e) => Check::new(&name, Outcome::Fail, e.clone())
                    .fix("fix or remove the file named above; `tidings connect` will not touch it until then"),
            }
        })
        .collect()
}

fn daemon_check(f: &Findings) -> Check {
    match &f.daemon {
        Ok(state) => Check::new(
            "daemon",
            Outcome::Pass,
            format!(
                "Tidings {} serving on {}",
                state.version,
                f.socket.display()
            ),
        ),
        Err(e) => Check::new("daemon", Outcome::Fail, e.clone()).fix(
            "Start Tidings: open Tidings.app, or run `tidings serve` (the stores below are \
             then checked by this process instead)",
        ),
    }
}

fn socket_dir_check(f: &Findings) -> Check {
    let dir = f
        .socket
        .parent()
        .map_or_else(String::new, |d| d.display().to_string());
    match &f.socket_dir {
        None => Check::new(
            "socket directory",
            Outcome::Skip,
            format!("{dir} does not exist yet; Tidings creates it (mode 0700) when it starts"),
        ),
        Some(Ok(())) => Check::new(
            "socket directory",
            Outcome::Pass,
            format!("{dir} is private (0700, yours)"),
        ),
        Some(Err(e)) => Check::new("socket directory", Outcome::Fail, e.clone()).fix(format!(
            "Run `chmod 700 {dir}` if it is yours, else remove it and restart Tidings"
        )),
    }
}

/// A store's access in `State`'s terms, from the daemon when it answered, else from this
/// process's probe; and the problem's words.
fn store_view(f: &Findings, ty: EventType, i: usize) -> (StoreAccess, Option<String>, bool) {
    if let Ok(state) = &f.daemon
        && let Some(t) = state.types.iter().find(|t| t.name == ty.name())
    {
        return (t.store.access, t.store.problem.clone(), true);
    }
    match &f.local_stores[i] {
        Ok(()) => (StoreAccess::Ok, None, false),
        Err(e) => (
            StoreAccess::from_reason(e.reason()),
            Some(e.to_string()),
            false,
        ),
    }
}

fn type_enabled(f: &Findings, ty: EventType) -> bool {
    match (&f.daemon, &f.settings) {
        (Ok(state), _) => state.types.iter().any(|t| t.name == ty.name() && t.enabled),
        (_, Ok(settings)) => settings.for_type(ty).enabled,
        _ => false,
    }
}

fn store_check(f: &Findings, ty: EventType, i: usize) -> Check {
    let name = match ty {
        EventType::MailReceived => "mail store",
        EventType::MessagesReceived => "messages store",
    };
    let (access, problem, by_daemon) = store_view(f, ty, i);
    let problem = problem.unwrap_or_default();
    let whose = if by_daemon {
        ""
    } else {
        " (checked by this process, not by Tidings)"
    };
    let enabled = type_enabled(f, ty);
    match access {
        StoreAccess::Ok => Check::new(name, Outcome::Pass, format!("readable{whose}")),
        StoreAccess::NotChecked => Check::new(
            name,
            Outcome::Warn,
            "not checked yet (the daemon just started)",
        )
        .fix("Run `tidings doctor` again in a few seconds"),
        StoreAccess::Missing => {
            let outcome = if enabled { Outcome::Fail } else { Outcome::Warn };
            Check::new(name, outcome, format!("{problem}{whose}")).fix(
                "Open Mail or Messages once on this Mac so it creates its store, or turn the type \
                 off",
            )
        }
        StoreAccess::PermissionDenied => Check::new(name, Outcome::Fail, format!("{problem}{whose}"))
            .fix(format!(
                "Grant Full Disk Access to Tidings.app (System Settings > Privacy & Security > \
                 Full Disk Access). {FULL_DISK_ACCESS_OWNER}"
            )),
        StoreAccess::SchemaProblem => Check::new(name, Outcome::Fail, format!("{problem}{whose}"))
            .fix(
                "Update Tidings; if this is the newest, file a bug with `tidings doctor --report`",
            ),
        StoreAccess::Unreadable => Check::new(name, Outcome::Fail, format!("{problem}{whose}"))
            .fix("Quit and reopen Mail or Messages; if it stays, file a bug with `tidings doctor --report`"),
    }
}

fn access_check(f: &Findings) -> Check {
    let access = if let Ok(state) = &f.daemon {
        state.full_disk_access.clone()
    } else {
        let denied = f
            .local_stores
            .iter()
            .any(|r| matches!(r, Err(StoreError::PermissionDenied { .. })));
        let read = f.local_stores.iter().any(Result::is_ok);
        if denied {
            FullDiskAccess::Missing
        } else if read {
            FullDiskAccess::Granted
        } else {
            FullDiskAccess::Unknown
        }
    };
    let name = "full disk access";
    match &access {
        FullDiskAccess::Granted => Check::new(name, Outcome::Pass, "granted (a store was read)"),
        FullDiskAccess::Unknown => {
            Check::new(name, Outcome::Skip, "unknown: no store was read or refused")
        }
        FullDiskAccess::Missing => Check::new(name, Outcome::Fail, "missing: a store was refused")
            .fix(format!(
                "{} {FULL_DISK_ACCESS_OWNER}",
                access.fix().unwrap_or_default()
            )),
        FullDiskAccess::Stale { last_granted } => Check::new(
            name,
            Outcome::Fail,
            format!("stale: Tidings {last_granted} had it, this build has not"),
        )
        .fix(access.fix().unwrap_or_default()),
    }
}

fn settings_check(f: &Findings) -> Check {
    let name = "settings file";
    let path = f.settings_path.display();
    if let Ok(State {
        settings: SettingsFileState::Rejected { reason, .. },
        ..
    }) = &f.daemon
    {
        return Check::new(
            name,
            Outcome::Fail,
            format!("{reason}; the last good settings are in force"),
        )
        .fix(format!(
            "Fix that line of {path}; Tidings applies the file when it is saved"
        ));
    }
    match &f.settings {
        Ok(s) => {
            let on: Vec<&str> = EventType::ALL
                .into_iter()
                .filter(|ty| s.for_type(*ty).enabled)
                .map(EventType::name)
                .collect();
            let on = if on.is_empty() {
                "no type is on".to_owned()
            } else {
                format!("on: {}", on.join(", "))
            };
            Check::new(name, Outcome::Pass, format!("{path} parses; {on}"))
        }
        Err(e) => Check::new(name, Outcome::Fail, e.summary()).fix(format!(
            "Fix {path} (or remove it to start over from the defaults)"
        )),
    }
}

fn http_check(f: &Findings) -> Check {
    let name = "http endpoint";
    let daemon_http = f.daemon.as_ref().ok().map(|s| &s.http);
    let enabled = f.settings.as_ref().is_ok_and(|s| s.http.enabled);
    match (daemon_http, &f.http_reachable) {
        (Some(HttpEndpointState::Serving { url, .. }), Some(Ok(()))) => {
            Check::new(name, Outcome::Pass, format!("serving at {url}"))
        }
        (Some(HttpEndpointState::Serving { url, .. }), Some(Err(e))) => {
            Check::new(name, Outcome::Fail, format!("{url} does not answer: {e}"))
                .fix("Restart Tidings; if it stays, another program may hold the port")
        }
        (Some(failed @ HttpEndpointState::Failed { .. }), _) => {
            Check::new(name, Outcome::Fail, failed.describe())
                .fix("Pick another port in [http] listen, or free this one")
        }
        (Some(HttpEndpointState::Starting), _) => Check::new(name, Outcome::Warn, "starting")
            .fix("Run `tidings doctor` again in a few seconds"),
        _ if enabled => Check::new(
            name,
            Outcome::Skip,
            "on in settings; not checked without a daemon",
        ),
        _ => Check::new(name, Outcome::Skip, "off"),
    }
}

/// The checks for people: `[ok]   daemon  Tidings 0.1.0 serving on …`, a fix under each
/// failure.
pub fn render(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let mark = match c.outcome {
            Outcome::Pass => "[ok]  ",
            Outcome::Warn => "[warn]",
            Outcome::Fail => "[FAIL]",
            Outcome::Skip => "[skip]",
        };
        let _ = writeln!(out, "{mark} {:<17} {}", c.name, c.detail);
        if let (Some(fix), true) = (&c.fix, c.outcome != Outcome::Pass) {
            let _ = writeln!(out, "       fix: {fix}");
        }
    }
    let failed = checks.iter().filter(|c| c.outcome == Outcome::Fail).count();
    let _ = writeln!(
        out,
        "{}",
        match failed {
            0 => "All checks passed.".to_owned(),
            1 => "1 check failed.".to_owned(),
            n => format!("{n} checks failed."),
        }
    );
    out
}

/// What a bug report needs, as JSON: versions, OS, schema profiles, access, settings in
/// counts, the daemon's counts. Nothing personal: no address, subject, handle or value.
pub fn report(home: &Path, f: &Findings, runner: &dyn tidings_platform::CommandRunner) -> Value {
    let paths = StorePaths::for_home(home);
    let stores: Vec<Value> = EventType::ALL
        .into_iter()
        .enumerate()
        .map(|(i, ty)| {
            let (access, _, by_daemon) = store_view(f, ty, i);
            let profile = match tidings_core::store_profile(&paths, ty) {
                Ok(p) => serde_json::to_value(p).unwrap_or(Value::Null),
                Err(e) => json!({"error": e.reason()}),
            };
            json!({
                "type": ty.name(),
                "path": home_relative(paths.database(ty), home),
                "access": access,
                "accessSeenBy": if by_daemon { "daemon" } else { "doctor" },
                "profile": profile,
            })
        })
        .collect();
    let settings = match &f.settings {
        Ok(s) => settings_summary(s),
        Err(e) => json!({"error": e.summary()}),
    };
    let daemon = match &f.daemon {
        Ok(s) => json!({
            "version": s.version,
            "connections": s.connections,
            "streams": s.streams,
            "clients": s.clients.len(),
            "http": match &s.http {
                HttpEndpointState::Off => "off",
                HttpEndpointState::Starting => "starting",
                HttpEndpointState::Serving { .. } => "serving",
                HttpEndpointState::Failed { .. } => "failed",
            },
            "fullDiskAccess": s.full_disk_access,
            "paused": s.paused_until_ms.is_some(),
        }),
        Err(_) => json!("not running"),
    };
    json!({
        "tidings": tidings_server::daemon::build_id(),
        "os": os_description(runner),
        "stores": stores,
        "settings": settings,
        "daemon": daemon,
    })
}

/// The settings in counts: which types are on, how many allowlist entries, backfill days,
/// whether HTTP and each notification are on. Never an entry or an address.
fn settings_summary(s: &Settings) -> Value {
    let types: serde_json::Map<String, Value> = EventType::ALL
        .into_iter()
        .map(|ty| {
            let t = s.for_type(ty);
            (
                ty.name().to_owned(),
                json!({
                    "enabled": t.enabled,
                    "allowEntries": t.allow.len(),
                    "backfillDays": t.backfill_days,
                }),
            )
        })
        .collect();
    let notifications: serde_json::Map<String, Value> = NotificationKind::ALL
        .into_iter()
        .map(|k| {
            (
                serde_json::to_value(k)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                Value::Bool(*s.notifications.switch(k)),
            )
        })
        .collect();
    json!({
        "types": types,
        "http": {"enabled": s.http.enabled, "allowedOrigins": s.http.allowed_origins.len()},
        "channelPresets": s.channel.presets.len(),
        "notifications": {"enabled": s.notifications.enabled, "kinds": notifications},
    })
}

/// `macOS 15.1 (aarch64)`, `Debian GNU/Linux 13 (trixie) (x86_64)`.
fn os_description(runner: &dyn tidings_platform::CommandRunner) -> String {
    let arch = std::env::consts::ARCH;
    let name = if cfg!(target_os = "macos") {
        runner
            .run("sw_vers", &["-productVersion"])
            .ok()
            .filter(tidings_platform::CommandOutput::is_success)
            .map(|o| format!("macOS {}", String::from_utf8_lossy(&o.stdout).trim()))
    } else {
        std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                    .map(|v| v.trim_matches('"').to_owned())
            })
    };
    format!(
        "{} ({arch})",
        name.unwrap_or_else(|| std::env::consts::OS.to_owned())
    )
}

/// `path` with `home` shown as `~` (the home names the user).
fn home_relative(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

/// The report for people: the JSON, indented (it is pasted into an issue as is).
fn render_report(report: &Value) -> String {
    format!(
        "Bug report (no personal data: names of tables and columns, rounded counts):\n{}",
        serde_json::to_string_pretty(report).unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(daemon: Result<State, String>, local: Vec<Result<(), StoreError>>) -> Findings {
        Findings {
            socket: PathBuf::from("/run/t/tidings.sock"),
            daemon,
            socket_dir: Some(Ok(())),
            settings_path: PathBuf::from("/c/settings.toml"),
            settings: Ok(Settings::default()),
            local_stores: local,
            http_reachable: None,
            login: LoginView {
                state: "enabled",
                text: "Tidings starts at login.".into(),
            },
            clients: Vec::new(),
        }
    }

    fn named<'a>(checks: &'a [Check], name: &str) -> &'a Check {
        checks.iter().find(|c| c.name == name).expect(name)
    }

    #[test]
    fn a_client_whose_handshake_fails_is_a_failure_with_the_way_to_reconnect() {
        let mut f = findings(Err("not running".into()), vec![Ok(()), Ok(())]);
        f.clients = vec![
            (
                "cursor",
                Ok(Verification {
                    ok: true,
                    message: "Connected ✓".into(),
                }),
            ),
            (
                "claude-code",
                Ok(Verification {
                    ok: false,
                    message: "tidings-mcp exited with status 69".into(),
                }),
            ),
            ("zed", Err("settings.json line 3 column 1: not JSON".into())),
        ];
        let checks = checks(&f);
        assert_eq!(named(&checks, "client cursor").outcome, Outcome::Pass);
        let failed = named(&checks, "client claude-code");
        assert_eq!(failed.outcome, Outcome::Fail);
        assert!(
            failed
                .fix
                .as_deref()
                .unwrap()
                .contains("tidings connect claude-code")
        );
        assert_eq!(named(&checks, "client zed").outcome, Outcome::Fail);
    }

    #[test]
    fn no_client_and_no_login_item_are_warnings_that_say_what_to_run() {
        let mut f = findings(Err("not running".into()), vec![Ok(()), Ok(())]);
        f.login = LoginView {
            state: "disabled",
            text: "Tidings does not start at login.".into(),
        };
        let checks = checks(&f);
        let login = named(&checks, "login item");
        assert_eq!(login.outcome, Outcome::Warn);
        assert!(login.fix.as_deref().unwrap().contains("tidings install"));
        let clients = named(&checks, "clients");
        assert_eq!(clients.outcome, Outcome::Warn);
        assert!(clients.fix.as_deref().unwrap().contains("tidings connect"));
    }

    fn denied(store: &'static str) -> Result<(), StoreError> {
        Err(StoreError::PermissionDenied {
            store,
            path: PathBuf::from("/h/x"),
        })
    }

    #[test]
    fn eperm_without_a_daemon_fails_with_the_full_disk_access_fix() {
        let f = findings(
            Err("Tidings is not running".into()),
            vec![denied("Mail"), Ok(())],
        );
        let checks = checks(&f);
        let by = |n: &str| checks.iter().find(|c| c.name == n).unwrap().clone();
        assert_eq!(by("daemon").outcome, Outcome::Fail);
        let mail = by("mail store");
        assert_eq!(mail.outcome, Outcome::Fail);
        assert!(mail.detail.contains("checked by this process"), "{mail:?}");
        assert!(mail.fix.unwrap().contains("not to Terminal"));
        assert_eq!(by("messages store").outcome, Outcome::Pass);
        let access = by("full disk access");
        assert_eq!(access.outcome, Outcome::Fail);
        assert!(access.fix.unwrap().contains("Full Disk Access"));
        let text = render(&checks);
        assert!(text.contains("[FAIL] mail store"), "{text}");
        assert!(
            text.contains("       fix: Grant Full Disk Access"),
            "{text}"
        );
        assert!(text.ends_with("3 checks failed.\n"), "{text}");
    }

    #[test]
    fn a_missing_store_fails_only_for_a_type_that_is_on() {
        let missing = || {
            Err(StoreError::Missing {
                store: "Messages",
                path: PathBuf::from("/h/chat.db"),
            })
        };
        let mut f = findings(Err("down".into()), vec![Ok(()), missing()]);
        let c = store_check(&f, EventType::MessagesReceived, 1);
        assert_eq!(c.outcome, Outcome::Warn, "{c:?}");
        let mut s = Settings::default();
        s.messages.enabled = true;
        f.settings = Ok(s);
        let c = store_check(&f, EventType::MessagesReceived, 1);
        assert_eq!(c.outcome, Outcome::Fail, "{c:?}");
    }

    #[test]
    fn a_stale_grant_says_to_re_add_tidings() {
        let state = State {
            version: "2".into(),
            socket: None,
            connections: 1,
            streams: 0,
            types: vec![],
            http: HttpEndpointState::Off,
            settings: SettingsFileState::Ok,
            clients: vec![],
            paused_until_ms: None,
            full_disk_access: FullDiskAccess::Stale {
                last_granted: "1".into(),
            },
        };
        let c = access_check(&findings(Ok(state), vec![Ok(()), Ok(())]));
        assert_eq!(c.outcome, Outcome::Fail);
        assert!(c.detail.contains("Tidings 1 had it"), "{c:?}");
        assert!(c.fix.unwrap().contains("remove Tidings"));
    }
}
