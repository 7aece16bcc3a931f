//! `tidings doctor [--report] [--json]`: every check a person (or a bug report) needs, each
//! with a one-line fix on failure: the daemon and its socket, each store and Full Disk Access,
//! the settings file, the HTTP endpoint, this copy's version, the last check for updates and
//! whether Full Disk Access carries over to the update waiting. Exits non-zero when any check
//! fails.
//!
//! The store checks prefer the daemon's view: on macOS the grant that counts is the one of
//! the process that reads (Tidings.app), not this one (Terminal). Without a daemon, this
//! process probes the stores itself and says so.
//!
//! `--report` adds what a bug report needs and nothing personal: versions, OS, each store's
//! schema profile (table and column names, `user_version`, rounded row counts), access
//! states and a settings summary in counts.
//!
//! Here: gathering the [`Findings`] (the only part that does I/O) and `run`; `checks`: the
//! checks, pure functions of the findings; `updates`: the update checks (version, updates,
//! grant); `report`: what is printed, and the bug report.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tidings_connect::{self as connect, Verification};
use tidings_core::settings::SettingsError;
use tidings_core::{Engine, EventType, Limits, Settings, StoreError, StorePaths};
use tidings_platform::identity::{CodeSigning, Codesign};
use tidings_platform::{Host, InstallSource, Mode};
use tidings_protocol::{fields, meta, methods};
use tidings_server::app::LoginView;
use tidings_server::app::updates::{LastCheck, read_last_check, updates_dir};
use tidings_server::state::{HttpEndpointState, State};

use super::args::DoctorArgs;
use super::client::Client;
use super::exit_code::{Coded, UNHEALTHY};
use super::resolve_socket;
mod checks;
mod report;
#[cfg(test)]
mod tests;
mod updates;

pub use checks::checks;
pub use report::{render, report};
pub use updates::OwnSigning;

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
    /// The Contacts stores as the daemon read them (else as this process reads them): how
    /// many were read, and the first that could not be, with why.
    pub contacts: tidings_server::state::ContactsState,
    /// Each MCP client configured for Tidings (`tidings connect`), and what running its
    /// configured command and completing a handshake gave; or why its config is unreadable.
    pub clients: Vec<(&'static str, Result<Verification, String>)>,
    /// The app's last check for updates (`updates/last-check.json` beside the settings file):
    /// `None` when none has run, or why it cannot be read.
    pub last_check: Result<Option<LastCheck>, String>,
    /// How this copy was installed (a Homebrew copy updates through `brew upgrade`).
    pub install: InstallSource,
    /// Who signed this copy (the running Tidings.app), for the grant check.
    pub own_signing: OwnSigning,
    /// Now, in ms since the Unix epoch: how long ago the last check was.
    pub now_ms: u64,
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
            crate::output::out(report::render_report(report).trim_end());
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
    let contacts = match &daemon {
        Ok(state) => state.contacts.clone(),
        Err(_) => local_contacts(home),
    };
    Findings {
        contacts,
        socket: socket.to_owned(),
        daemon,
        socket_dir,
        settings_path: settings_path.to_owned(),
        settings: Settings::load(settings_path),
        local_stores,
        http_reachable,
        login: tidings_server::app::login_view_blocking().await,
        clients: clients().await,
        last_check: read_last_check(&updates_dir(settings_path)).map_err(|e| e.to_string()),
        install: tidings_platform::install_source(),
        own_signing: own_signing(),
        now_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    }
}

/// Who signed the Tidings.app this process runs from (`codesign` on the bundle, whose
/// signature Full Disk Access is granted to); nothing is code-signed off macOS.
fn own_signing() -> OwnSigning {
    if !cfg!(target_os = "macos") {
        return OwnSigning::NotHere;
    }
    let Some(bundle) = tidings_platform::install::current_app_bundle() else {
        return OwnSigning::Unknown(
            "this copy does not run from inside Tidings.app (a development build?)".to_owned(),
        );
    };
    match Codesign::new(tidings_platform::SystemRunner).signing(&bundle) {
        Some(signing) => OwnSigning::Signed(signing),
        None => OwnSigning::Unknown(format!("{} is not code-signed", bundle.display())),
    }
}

/// The Contacts stores read by this process, as the daemon reports them (no card is kept).
fn local_contacts(home: &Path) -> tidings_server::state::ContactsState {
    let source = tidings_server::daemon::ContactsSource::for_user(home);
    tidings_server::state::ContactsState::of(&source.load())
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
            .call(1, methods::STATUS, json!({}))
            .await
            .map_err(|e| e.to_string())?;
        if let Value::Object(m) = &mut status {
            m.remove(fields::RESULT_TYPE);
            m.remove(meta::KEY);
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
