//! Connecting MCP hosts: write (or remove) Tidings' entry in a host's config, then prove it
//! works by running it. `tidings connect` / `disconnect` / `clients` and the app's Connect
//! section call this; the host table and snippets are `tidings_platform::hosts`.
//!
//! - `app`: what the app's Connect section calls.
//! - `edit`: the entry in the config text, every other byte kept.
//! - `error`: why a config text cannot be edited ([`edit::EditError`]), below every editor.
//! - `file`: read, back up, replace atomically.
//! - `verify`: the handshake through the written command.
//! - `yaml`: the entry in Goose's YAML, checked before and after the edit.
//!
//! Decisions: docs/decisions/connect.md.

pub mod app;
pub mod edit;
mod error;
pub mod file;
pub mod verify;
pub mod yaml;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tidings_platform::paths::Os;
use tidings_platform::{Host, Launch, Mode, Processes};

pub use edit::Entry;
pub use verify::{Verification, verify};

/// What connecting or disconnecting needs to know.
#[derive(Debug, Clone)]
pub struct Target {
    /// The host.
    pub host: Host,
    /// The home its config is under.
    pub home: PathBuf,
    /// Whose paths to use.
    pub os: Os,
}

impl Target {
    /// `host` for this user on this OS; `None` without a home directory.
    pub fn current(host: Host) -> Option<Target> {
        let home = std::env::home_dir().filter(|h| h.is_absolute())?;
        Some(Target {
            host,
            home,
            os: Os::CURRENT,
        })
    }

    /// The host's config file.
    pub fn config_path(&self) -> PathBuf {
        self.host.config_path(&self.home, self.os)
    }
}

/// Why a config could not be changed. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The file does not parse, or has the wrong shape.
    #[error(
        "{} {source}; fix it (or move it aside) and try again. It was left untouched.",
        path.display()
    )]
    Invalid {
        /// The config file.
        path: PathBuf,
        /// What is wrong, with line and column.
        source: edit::EditError,
    },
    /// Reading, backing up or writing failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// "cannot read", "cannot back up", "cannot write".
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The mode does not apply to this host.
    #[error("{} has no {} mode; use one of: {}", host.display_name(), mode.name(), modes(*host))]
    Mode {
        /// The host.
        host: Host,
        /// The mode asked for.
        mode: Mode,
    },
}

fn modes(host: Host) -> String {
    host.modes()
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A change to one config file, computed but not yet written.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// The host's id.
    pub host: &'static str,
    /// The file (its target, when it is a symlink).
    pub path: PathBuf,
    /// Whether the file exists now.
    pub exists: bool,
    /// Whether the new text differs from the old.
    pub changes: bool,
    /// The changed lines, `-` old and `+` new, with a line of context each side.
    pub diff: String,
    /// The entry written (for `connect`), for the check.
    #[serde(skip)]
    pub entry: Option<Entry>,
    #[serde(skip)]
    old: Option<String>,
    #[serde(skip)]
    new: String,
}

/// What `apply` did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    /// The copy of the old file, if there was one.
    pub backup: Option<PathBuf>,
    /// "Restart Cursor: it reads its config only at start." when the host runs.
    pub restart: Option<String>,
}

/// The change that points `target`'s host at `launch` (the shim, its mode, and the socket
/// when the host's environment would not find it: [`tidings_platform::hosts::socket_arg`]).
pub fn plan_connect(target: &Target, launch: &Launch<'_>) -> Result<Change, ConnectError> {
    let host = target.host;
    let mode = launch.mode;
    if !host.modes().contains(&mode) {
        return Err(ConnectError::Mode { host, mode });
    }
    let (path, old) = load(target)?;
    let entry_json = host.entry(launch);
    let text = old.as_deref().unwrap_or("");
    let new = edit::set(
        host.format(),
        host.servers_key(),
        text,
        &host.entry_fields(launch),
    )
    .map_err(|source| ConnectError::Invalid {
        path: path.clone(),
        source,
    })?;
    // A new file gets a final newline, as editors write them.
    let new = if old.is_none() && !new.ends_with('\n') {
        new + "\n"
    } else {
        new
    };
    Ok(change(host, path, old, new, Entry::from_json(&entry_json)))
}

/// The change that removes Tidings' entry, `None` when there is none.
pub fn plan_disconnect(target: &Target) -> Result<Option<Change>, ConnectError> {
    let host = target.host;
    let (path, old) = load(target)?;
    let Some(text) = old.as_deref() else {
        return Ok(None);
    };
    let new = edit::remove(host.format(), host.servers_key(), text).map_err(|source| {
        ConnectError::Invalid {
            path: path.clone(),
            source,
        }
    })?;
    Ok(new.map(|new| change(host, path, old, new, None)))
}

/// Writes `change`: backs the old file up first, then replaces it atomically. A change that
/// changes nothing writes nothing. `processes` says whether the host must be restarted.
pub fn apply(change: &Change, os: Os, processes: &dyn Processes) -> Result<Applied, ConnectError> {
    let host = Host::from_id(change.host).expect("a change names a known host");
    let mut backup = None;
    if change.changes {
        if change.old.is_some() {
            backup = Some(
                file::backup(&change.path).map_err(|source| ConnectError::Io {
                    what: "cannot back up",
                    path: change.path.clone(),
                    source,
                })?,
            );
        }
        file::write_atomic(&change.path, &change.new).map_err(|source| ConnectError::Io {
            what: "cannot write",
            path: change.path.clone(),
            source,
        })?;
    }
    let restart = (change.changes && processes.any_running(host.process_names(os))).then(|| {
        format!(
            "{} is running: restart it to load the change (it reads its config only at start).",
            host.display_name()
        )
    });
    Ok(Applied { backup, restart })
}

/// One host's state for a listing.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostStatus {
    /// `claude-code`, ….
    pub id: &'static str,
    /// "Claude Code", ….
    pub name: &'static str,
    /// Its config file.
    pub path: PathBuf,
    /// The configured mode (`tools` stands for tools and events), `None` when not
    /// configured.
    pub configured: Option<&'static str>,
    /// The configured command, when configured.
    pub command: Option<String>,
    /// Why the config could not be read, if it could not.
    pub problem: Option<String>,
    /// The modes that apply.
    pub modes: Vec<&'static str>,
    /// How many connections announced this host now; `None` when no daemon answered.
    pub connected: Option<usize>,
}

/// Every host's state; `client_names` are the `clientInfo.name`s of the daemon's
/// connections, `None` when no daemon runs.
pub fn list(home: &Path, os: Os, client_names: Option<&[String]>) -> Vec<HostStatus> {
    Host::ALL
        .into_iter()
        .map(|host| {
            let target = Target {
                host,
                home: home.to_path_buf(),
                os,
            };
            let path = target.config_path();
            let read = load(&target).and_then(|(path, text)| {
                edit::read(
                    host.format(),
                    host.servers_key(),
                    text.as_deref().unwrap_or(""),
                )
                .map_err(|source| ConnectError::Invalid { path, source })
            });
            let (entry, problem) = match read {
                Ok(entry) => (entry, None),
                Err(e) => (None, Some(e.to_string())),
            };
            HostStatus {
                id: host.id(),
                name: host.display_name(),
                path,
                configured: entry.as_ref().map(|e| Mode::of_args(&e.args).name()),
                command: entry.map(|e| e.command),
                problem,
                modes: host.modes().iter().map(|m| m.name()).collect(),
                connected: client_names
                    .map(|names| names.iter().filter(|n| host.announced_as(n)).count()),
            }
        })
        .collect()
}

/// The configured entry of `target`'s host, if any.
pub fn configured(target: &Target) -> Result<Option<Entry>, ConnectError> {
    let host = target.host;
    let (path, text) = load(target)?;
    edit::read(
        host.format(),
        host.servers_key(),
        text.as_deref().unwrap_or(""),
    )
    .map_err(|source| ConnectError::Invalid { path, source })
}

/// The config's path (symlink followed) and text.
fn load(target: &Target) -> Result<(PathBuf, Option<String>), ConnectError> {
    let path = file::target(&target.config_path());
    let text = file::read(&path).map_err(|source| ConnectError::Io {
        what: "cannot read",
        path: path.clone(),
        source,
    })?;
    Ok((path, text))
}

fn change(
    host: Host,
    path: PathBuf,
    old: Option<String>,
    new: String,
    entry: Option<Entry>,
) -> Change {
    let before = old.as_deref().unwrap_or("");
    Change {
        host: host.id(),
        path,
        exists: old.is_some(),
        changes: old.as_deref() != Some(new.as_str()),
        diff: diff(before, &new),
        entry,
        old,
        new,
    }
}

/// The lines that differ between `old` and `new` (one changed region: an edit touches one
/// entry), with a line of context each side.
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    if prefix == a.len() && prefix == b.len() {
        return String::new();
    }
    let mut out = String::new();
    if prefix > 0 {
        let _ = writeln!(out, "  {}", a[prefix - 1]);
    }
    for line in &a[prefix..a.len() - suffix] {
        let _ = writeln!(out, "- {line}");
    }
    for line in &b[prefix..b.len() - suffix] {
        let _ = writeln!(out, "+ {line}");
    }
    if suffix > 0 {
        let _ = writeln!(out, "  {}", a[a.len() - suffix]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_shows_only_the_changed_lines_with_context() {
        let old = "{\n  \"a\": 1\n}\n";
        let new = "{\n  \"a\": 1,\n  \"b\": 2\n}\n";
        assert_eq!(
            diff(old, new),
            "  {\n-   \"a\": 1\n+   \"a\": 1,\n+   \"b\": 2\n  }\n"
        );
        assert_eq!(diff(old, old), "");
        assert_eq!(diff("", "x\n"), "+ x\n");
    }
}
