//! `tidings connect`, `tidings disconnect` and `tidings clients`: Tidings' entry in an MCP
//! host's config, written or removed with everything else kept, then checked by running it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tidings_connect::{self as connect, Target};
use tidings_platform::paths::Os;
use tidings_platform::{Host, Launch, Mode, hosts};
use tidings_protocol::{fields, meta, methods};
use tidings_server::state::State;

use super::args::{ClientsArgs, ConnectArgs, DisconnectArgs};
use super::client::Client;
use super::exit_code::{CONFIG, Coded, FAILURE, USAGE};
use super::resolve_socket;

/// What went wrong with the command line or the host's config.
#[derive(Debug, thiserror::Error)]
pub enum ConnectCliError {
    /// A client we have no writer for.
    #[error("no client called `{0}`; use one of: {list}", list = host_ids())]
    UnknownHost(String),
    /// No client named and no `--list`.
    #[error("name a client (one of: {}), or pass --list", host_ids())]
    NoHost,
    /// No home directory to find configs in.
    #[error("cannot find your home directory; set HOME")]
    NoHome,
    /// No shim to point the entry at.
    #[error(
        "cannot find tidings-mcp beside this tidings, in /Applications/Tidings.app or on PATH; \
         pass --shim /path/to/tidings-mcp"
    )]
    NoShim,
    /// `--shim` that is not an absolute path to a file.
    #[error("--shim {0} is not an absolute path to a file; pass the full path to tidings-mcp")]
    BadShim(PathBuf),
    /// The written entry did not answer.
    #[error("the entry was written, but the check failed: {0}")]
    NotConnected(String),
}

impl Coded for ConnectCliError {
    fn exit_code(&self) -> u8 {
        match self {
            ConnectCliError::UnknownHost(_)
            | ConnectCliError::NoHost
            | ConnectCliError::BadShim(_) => USAGE,
            ConnectCliError::NoHome | ConnectCliError::NoShim => CONFIG,
            ConnectCliError::NotConnected(_) => FAILURE,
        }
    }
}

fn host_ids() -> String {
    Host::ALL
        .iter()
        .map(|h| h.id())
        .collect::<Vec<_>>()
        .join(", ")
}

fn host(name: Option<&str>) -> Result<Host, ConnectCliError> {
    let name = name.ok_or(ConnectCliError::NoHost)?;
    Host::from_id(name).ok_or_else(|| ConnectCliError::UnknownHost(name.to_owned()))
}

fn target(host: Host) -> Result<Target, ConnectCliError> {
    Target::current(host).ok_or(ConnectCliError::NoHome)
}

/// `--shim`, made absolute and checked, else the shim beside us, in the app, on `PATH`.
fn shim(flag: Option<&Path>) -> Result<PathBuf, ConnectCliError> {
    match flag {
        Some(path) => {
            let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            if path.is_file() {
                Ok(path)
            } else {
                Err(ConnectCliError::BadShim(path))
            }
        }
        None => hosts::current_shim().ok_or(ConnectCliError::NoShim),
    }
}

/// Runs `connect`.
pub async fn run_connect(args: ConnectArgs) -> anyhow::Result<()> {
    if args.list {
        return run_clients(ClientsArgs {
            socket: args.socket,
            json: false,
        })
        .await;
    }
    let host = host(args.client.as_deref())?;
    let target = target(host)?;
    let mode = args.mode.map_or(Mode::Tools, Mode::from);
    let shim = shim(args.shim.as_deref())?;
    let socket = resolve_socket(args.socket.as_deref())?;
    let launch = Launch::reaching(host, &shim, mode, &socket);
    let change = connect::plan_connect(&target, &launch)?;
    let shown = tidings_server::home_relative(&change.path);
    let mut out = String::new();
    if args.dry_run {
        if change.changes {
            let _ = writeln!(out, "Would write {shown}:\n{}", change.diff.trim_end());
        } else {
            let _ = writeln!(out, "{shown} already has this entry.");
        }
        let _ = writeln!(out, "Nothing was written (--dry-run).");
        crate::output::out(out.trim_end());
        return Ok(());
    }
    let applied = connect::apply(
        &change,
        target.os,
        tidings_platform::default_processes().as_ref(),
    )?;
    if change.changes {
        let _ = writeln!(
            out,
            "{} now starts {} ({} mode), in {shown}:\n{}",
            host.display_name(),
            shim.display(),
            mode.name(),
            change.diff.trim_end()
        );
        match &applied.backup {
            Some(backup) => {
                let _ = writeln!(
                    out,
                    "Backup of the old file: {}",
                    tidings_server::home_relative(backup)
                );
            }
            None => {
                let _ = writeln!(out, "(a new file: nothing to back up)");
            }
        }
    } else {
        let _ = writeln!(out, "{shown} already has this entry; nothing written.");
    }
    if host == Host::ClaudeCode {
        let _ = writeln!(
            out,
            "The same with Claude Code's own command:\n  {}",
            hosts::claude_mcp_add(&launch)
        );
    }
    if host == Host::GeminiCli {
        // Otherwise the check passes and the session still shows the server disabled.
        let _ = writeln!(
            out,
            "Gemini CLI starts it only in folders it trusts: `/permissions trust` in a session."
        );
    }
    crate::output::out(out.trim_end());
    if let Some(restart) = &applied.restart {
        crate::output::err(format_args!("warning: {restart}"));
    }
    if args.no_check {
        return Ok(());
    }
    let entry = change
        .entry
        .clone()
        .expect("a connect change carries its entry");
    let check = connect::verify(&entry, mode, host.server_env(), connect::verify::TIMEOUT).await;
    if check.ok {
        crate::output::out(&check.message);
        Ok(())
    } else {
        Err(ConnectCliError::NotConnected(check.message).into())
    }
}

/// Runs `disconnect`.
pub fn run_disconnect(args: &DisconnectArgs) -> anyhow::Result<()> {
    let host = host(Some(&args.client))?;
    let target = target(host)?;
    let Some(change) = connect::plan_disconnect(&target)? else {
        crate::output::out(format_args!(
            "{} has no Tidings entry in {}; nothing to do.",
            host.display_name(),
            tidings_server::home_relative(&target.config_path())
        ));
        return Ok(());
    };
    let shown = tidings_server::home_relative(&change.path);
    if args.dry_run {
        crate::output::out(format_args!(
            "Would write {shown}:\n{}\nNothing was written (--dry-run).",
            change.diff.trim_end()
        ));
        return Ok(());
    }
    let applied = connect::apply(
        &change,
        target.os,
        tidings_platform::default_processes().as_ref(),
    )?;
    let backup = applied
        .backup
        .as_deref()
        .map(tidings_server::home_relative)
        .unwrap_or_default();
    crate::output::out(format_args!(
        "Removed Tidings from {} ({shown}):\n{}\nBackup of the old file: {backup}",
        host.display_name(),
        change.diff.trim_end()
    ));
    if let Some(restart) = &applied.restart {
        crate::output::err(format_args!("warning: {restart}"));
    }
    Ok(())
}

/// Runs `clients` (and `connect --list`).
pub async fn run_clients(args: ClientsArgs) -> anyhow::Result<()> {
    let home = std::env::home_dir().ok_or(ConnectCliError::NoHome)?;
    let names = connected_names(args.socket.as_deref()).await;
    let hosts = connect::list(&home, Os::CURRENT, names.as_deref());
    if args.json {
        crate::output::out(json!({"clients": hosts, "daemon": names.is_some()}));
        return Ok(());
    }
    let mut out = String::new();
    for host in &hosts {
        let configured = match (&host.problem, host.configured) {
            (Some(problem), _) => format!("unreadable: {problem}"),
            // An events entry and a tools entry are the same command line (the shim serves
            // both), so the file cannot say which was chosen: say what it gives.
            (None, Some("channel")) => "configured (channel)".to_owned(),
            (None, Some(_)) => "configured (events + tools)".to_owned(),
            (None, None) => "not configured".to_owned(),
        };
        let connected = match host.connected {
            None => String::new(),
            Some(0) => ", not connected now".to_owned(),
            Some(n) => format!(", connected now ({n})"),
        };
        let _ = writeln!(
            out,
            "{:<15} {configured}{connected}\n{:<15} {}",
            host.id,
            "",
            tidings_server::home_relative(&host.path)
        );
    }
    if names.is_none() {
        let _ = writeln!(
            out,
            "(no daemon answered, so who is connected now is unknown)"
        );
    }
    crate::output::out(out.trim_end());
    Ok(())
}

/// The `clientInfo.name`s of the daemon's connections, `None` when none answers.
async fn connected_names(socket: Option<&Path>) -> Option<Vec<String>> {
    let socket = resolve_socket(socket).ok()?;
    let mut client = Client::connect(&socket).await.ok()?;
    let mut status: Value = client.call(1, methods::STATUS, json!({})).await.ok()?;
    if let Value::Object(m) = &mut status {
        m.remove(fields::RESULT_TYPE);
        m.remove(meta::KEY);
    }
    let state: State = serde_json::from_value(status).ok()?;
    Some(state.clients.into_iter().filter_map(|c| c.name).collect())
}
