//! What the app's Connect section calls: every host with its state and snippet, and
//! connect / disconnect by host id, each returning what the row shows.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tidings_platform::paths::Os;
use tidings_platform::{Host, Launch, Mode, hosts};

use super::{ConnectError, HostStatus, Target, Verification};

/// One row of the Connect section.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostView {
    /// Config file, configured mode, connected now.
    #[serde(flatten)]
    pub status: HostStatus,
    /// The snippet to copy, for the configured mode (else tools); `None` without a shim.
    pub snippet: Option<String>,
    /// Whether the host runs now (a change needs a restart).
    pub running: bool,
}

/// What Connect or Disconnect did, for the row.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", ts(rename = "ConnectOutcome"))]
pub struct Outcome {
    /// The file written.
    pub path: PathBuf,
    /// The copy of the old file.
    pub backup: Option<PathBuf>,
    /// The restart warning, when the host runs.
    pub restart: Option<String>,
    /// The check after connecting ("Connected ✓ …" or the failure); `None` after a
    /// disconnect.
    pub verification: Option<Verification>,
}

/// Why the app's request failed.
#[derive(Debug, thiserror::Error)]
pub enum AppConnectError {
    /// A host id the table lacks.
    #[error("no client called `{0}`")]
    UnknownHost(String),
    /// A mode name we do not know.
    #[error("no mode called `{0}`; use tools, events or channel")]
    UnknownMode(String),
    /// No home directory.
    #[error("cannot find your home directory")]
    NoHome,
    /// No shim beside the app, in /Applications or on PATH.
    #[error("cannot find tidings-mcp beside the app; reinstall Tidings.app")]
    NoShim,
    /// The config could not be changed.
    #[error(transparent)]
    Connect(#[from] ConnectError),
}

fn target(id: &str) -> Result<Target, AppConnectError> {
    let host = Host::from_id(id).ok_or_else(|| AppConnectError::UnknownHost(id.to_owned()))?;
    Target::current(host).ok_or(AppConnectError::NoHome)
}

/// Every host, with who is connected now: `names` are the `clientInfo.name`s of the engine's
/// connections, `socket` the engine's socket (for the snippet).
pub fn hosts_view(names: &[String], socket: &Path) -> Vec<HostView> {
    let Some(home) = std::env::home_dir() else {
        return Vec::new();
    };
    let shim = hosts::current_shim();
    let processes = tidings_platform::default_processes();
    super::list(&home, Os::CURRENT, Some(names))
        .into_iter()
        .map(|status| {
            let host = Host::from_id(status.id).expect("listed hosts are known");
            let mode = status
                .configured
                .and_then(Mode::from_name)
                .unwrap_or(Mode::Tools);
            HostView {
                snippet: shim
                    .as_deref()
                    .map(|s| host.snippet(&Launch::reaching(host, s, mode, socket))),
                running: processes.any_running(host.process_names(Os::CURRENT)),
                status,
            }
        })
        .collect()
}

/// Points host `id` at the shim beside the app in `mode`, reaching the engine on `socket`,
/// then checks it.
pub async fn connect_host(id: &str, mode: &str, socket: &Path) -> Result<Outcome, AppConnectError> {
    let target = target(id)?;
    let mode =
        Mode::from_name(mode).ok_or_else(|| AppConnectError::UnknownMode(mode.to_owned()))?;
    let shim = hosts::current_shim().ok_or(AppConnectError::NoShim)?;
    let change = super::plan_connect(&target, &Launch::reaching(target.host, &shim, mode, socket))?;
    let applied = super::apply(
        &change,
        target.os,
        tidings_platform::default_processes().as_ref(),
    )?;
    let entry = change
        .entry
        .clone()
        .expect("a connect change carries its entry");
    let verification = super::verify(
        &entry,
        mode,
        target.host.server_env(),
        super::verify::TIMEOUT,
    )
    .await;
    Ok(Outcome {
        path: change.path,
        backup: applied.backup,
        restart: applied.restart,
        verification: Some(verification),
    })
}

/// Removes Tidings' entry from host `id`; `path` only when there was none.
pub fn disconnect_host(id: &str) -> Result<Outcome, AppConnectError> {
    let target = target(id)?;
    let Some(change) = super::plan_disconnect(&target)? else {
        return Ok(Outcome {
            path: target.config_path(),
            backup: None,
            restart: None,
            verification: None,
        });
    };
    let applied = super::apply(
        &change,
        target.os,
        tidings_platform::default_processes().as_ref(),
    )?;
    Ok(Outcome {
        path: change.path,
        backup: applied.backup,
        restart: applied.restart,
        verification: None,
    })
}
