//! `tidings agents`: the agents settings.toml lists merged with those a running daemon has
//! seen (`tidings/status`'s `agents`), for people or as JSON; and `allow`, `deny`, `forget`,
//! which edit settings.toml in place (`tidings_server::settings_file::save`, comments kept).
//! The daemon applies the file on its own: a narrowing edit within about a second, a widening
//! one after five seconds unchanged (see docs/security.md), so this never asks it to.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};
use tidings_core::Settings;
use tidings_core::settings::{Access, AgentGrant, NewAgents, valid_id};
use tidings_protocol::{fields, meta, methods};
use tidings_server::daemon::agents_in_file;
use tidings_server::settings_file;
use tidings_server::state::{AgentAccess, AgentState, State};

use super::args::{AgentsArgs, AgentsCommand};
use super::client::{Client, ClientError};
use super::exit_code::{Coded, FAILURE, USAGE};
use super::output::count;
use super::resolve_config;

/// A decision that could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AgentsError {
    /// Not an id at all.
    #[error(
        "`{0}` is not an agent id (lower-case letters, digits and `-`, at most 48); `tidings \
         agents` lists the ids"
    )]
    BadId(String),
    /// Neither the file nor the running daemon knows it.
    #[error(
        "no agent `{id}` in {} {where_}; `tidings agents` lists the agents and their ids (a \
         program is listed once it has connected while Tidings runs)",
        .settings.display()
    )]
    Unknown {
        /// The id asked for.
        id: String,
        /// The settings file looked in.
        settings: PathBuf,
        /// Where else it was looked for.
        where_: &'static str,
    },
    /// `forget` of an agent with no grant.
    #[error(
        "agent `{id}` has no grant in {} to forget; `tidings agents` lists the agents with one",
        .settings.display()
    )]
    NotInFile {
        /// The id asked for.
        id: String,
        /// The settings file looked in.
        settings: PathBuf,
    },
}

impl Coded for AgentsError {
    fn exit_code(&self) -> u8 {
        match self {
            AgentsError::BadId(_) => USAGE,
            AgentsError::Unknown { .. } | AgentsError::NotInFile { .. } => FAILURE,
        }
    }
}

/// What the running daemon said about its agents (and its webhooks, for `tidings webhooks`).
pub(crate) enum Live {
    /// Its status.
    Running(Box<State>),
    /// No daemon on the socket.
    NotRunning,
    /// It answered with an error (say, this terminal's program is denied): the message.
    Refused(String),
}

/// Runs `tidings agents …`.
pub async fn run(args: AgentsArgs) -> anyhow::Result<()> {
    let (config, socket) = resolve_config(args.demo_dir.as_deref(), args.socket.as_deref())?;
    let path = config.join("settings.toml");
    match args.command {
        None => list(&path, &socket, args.json).await,
        Some(AgentsCommand::Allow(a)) => decide(&path, &socket, &a.id, Some(Access::Allow)).await,
        Some(AgentsCommand::Deny(a)) => decide(&path, &socket, &a.id, Some(Access::Deny)).await,
        Some(AgentsCommand::Forget(a)) => decide(&path, &socket, &a.id, None).await,
    }
}

impl Live {
    /// Say on stderr, when the daemon did not answer, that the listing of `what` is the
    /// file's alone.
    pub(crate) fn note_if_file_only(&self, what: &str, socket: &Path, path: &Path) {
        let note = match self {
            Live::Running(_) => return,
            Live::NotRunning => format!(
                "Tidings is not running (no daemon at {}): these are the {what} in {} only",
                socket.display(),
                path.display()
            ),
            Live::Refused(why) => format!(
                "the daemon did not list its {what} ({why}): these are the {what} in {} only",
                path.display()
            ),
        };
        crate::output::err(format_args!("tidings: {note}"));
    }
}

/// `tidings/status` from the daemon on `socket`.
pub(crate) async fn live(socket: &Path) -> anyhow::Result<Live> {
    let mut client = match Client::connect(socket).await {
        Ok(client) => client,
        Err(ClientError::NotRunning { .. }) => return Ok(Live::NotRunning),
        Err(e) => return Err(e.into()),
    };
    let mut status = match client.call(1, methods::STATUS, json!({})).await {
        Ok(status) => status,
        Err(e @ ClientError::Rpc { .. }) => return Ok(Live::Refused(e.to_string())),
        Err(e) => return Err(e.into()),
    };
    if let Value::Object(m) = &mut status {
        m.remove(fields::RESULT_TYPE);
        m.remove(meta::KEY);
    }
    let state: State = serde_json::from_value(status).map_err(|e| {
        anyhow::anyhow!(
            "the daemon's status is not one this tidings reads: {e}; is it another version?"
        )
    })?;
    Ok(Live::Running(Box::new(state)))
}

/// One agent as `--json` prints it: `State.agents`' fields, and what settings.toml holds.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    #[serde(flatten)]
    state: AgentState,
    /// The access settings.toml holds for it (`allow` / `deny`), `None` with no grant there. It
    /// differs from `access` while a running daemon has not applied an edit yet.
    saved: Option<Access>,
}

/// The agents: the daemon's (when it runs), then those only the file lists.
fn merge(settings: &Settings, live: Option<&State>) -> Vec<Row> {
    let mut states: Vec<AgentState> = live.map(|s| s.agents.clone()).unwrap_or_default();
    for file in agents_in_file(settings) {
        if !states
            .iter()
            .any(|s| s.id == file.id || s.identity == file.identity)
        {
            states.push(file);
        }
    }
    states
        .into_iter()
        .map(|state| {
            let saved = settings
                .agents
                .known
                .get(&state.id)
                .or_else(|| settings.agents.find(&state.identity).map(|(_, g)| g))
                .map(|g| g.access);
            Row { state, saved }
        })
        .collect()
}

async fn list(path: &Path, socket: &Path, json_out: bool) -> anyhow::Result<()> {
    let settings = Settings::load(path)?;
    let live = live(socket).await?;
    let state = match &live {
        Live::Running(state) => Some(state.as_ref()),
        _ => None,
    };
    let rows = merge(&settings, state);
    if json_out {
        crate::output::out(serde_json::to_string(&rows)?);
    } else {
        let new = state.map_or(settings.agents.new, |s| s.new_agents);
        crate::output::out(render(&rows, new).trim_end());
    }
    live.note_if_file_only("agents", socket, path);
    Ok(())
}

/// How the agent was identified, in words.
fn kind_word(kind: tidings_server::state::AgentKind) -> &'static str {
    use tidings_server::state::AgentKind;
    match kind {
        AgentKind::Program => "a program",
        AgentKind::Signed => "a signed program",
        AgentKind::Token => "an HTTP token",
        AgentKind::Unidentified => "not identified",
    }
}

fn render(rows: &[Row], new: NewAgents) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str("No agents yet: a program is listed once it connects.\n");
    }
    for row in rows {
        let a = &row.state;
        let signer = a
            .signer
            .as_ref()
            .map(|s| format!(" (signed by {s})"))
            .unwrap_or_default();
        let _ = writeln!(out, "{}  {}{signer}: {}", a.id, a.name, access(row));
        let _ = writeln!(
            out,
            "    identity: {} ({}){}",
            a.identity,
            kind_word(a.kind),
            a.program
                .as_ref()
                .map(|p| format!(", program {p}"))
                .unwrap_or_default()
        );
        if !a.announced.is_empty() {
            let _ = writeln!(out, "    announced: {}", a.announced.join(", "));
        }
        let grants: Vec<String> = a
            .grants
            .iter()
            .map(|g| {
                let what = match (g.granted, g.senders) {
                    (false, _) => "none".to_owned(),
                    (true, None) => "every sender".to_owned(),
                    (true, Some(1)) => "1 of the allowlist's entries".to_owned(),
                    (true, Some(n)) => format!("{n} of the allowlist's entries"),
                };
                format!("{}: {what}", g.event_type)
            })
            .collect();
        let _ = writeln!(out, "    grant: {}", grants.join("; "));
        let _ = writeln!(
            out,
            "    now: {}, {}; {} delivered; last seen {}",
            count(a.connections, "connection"),
            count(a.streams, "stream"),
            count(usize::try_from(a.delivered).unwrap_or(usize::MAX), "event"),
            a.last_seen_ms.map_or_else(
                || "not since Tidings started".to_owned(),
                crate::output::utc
            )
        );
    }
    let _ = writeln!(
        out,
        "New agents ([agents] new = \"{}\"): {}",
        new_name(new),
        match new {
            NewAgents::Ask => {
                "the app asks you at their first request; without the app they are refused"
            }
            NewAgents::Allow => "allowed everything you turned on",
            NewAgents::Deny => "refused until you allow them",
        }
    );
    out
}

/// The access column: what applies now, and the file's decision when it differs.
fn access(row: &Row) -> String {
    let now = match row.state.access {
        AgentAccess::Allowed => "allowed",
        AgentAccess::Denied => "denied",
        AgentAccess::Asking => "asking",
        AgentAccess::New => "new",
    };
    let pending = match (row.saved, row.state.access) {
        (Some(Access::Allow), AgentAccess::Allowed) | (Some(Access::Deny), AgentAccess::Denied) => {
            None
        }
        (Some(Access::Allow), _) => Some("allow"),
        (Some(Access::Deny), _) => Some("deny"),
        (None, AgentAccess::Allowed | AgentAccess::Denied) => Some("forget"),
        (None, _) => None,
    };
    match pending {
        Some(p) => format!("{now} ({p} saved in settings.toml; the daemon applies it shortly)"),
        None => now.to_owned(),
    }
}

fn new_name(new: NewAgents) -> &'static str {
    match new {
        NewAgents::Ask => "ask",
        NewAgents::Allow => "allow",
        NewAgents::Deny => "deny",
    }
}

/// `allow` / `deny` (`Some`) or `forget` (`None`) agent `id`, in the file at `path`.
async fn decide(
    path: &Path,
    socket: &Path,
    id: &str,
    access: Option<Access>,
) -> anyhow::Result<()> {
    if !valid_id(id) {
        return Err(AgentsError::BadId(id.to_owned()).into());
    }
    let mut settings = Settings::load(path)?;
    let Some(access) = access else {
        let Some(grant) = settings.agents.known.remove(id) else {
            return Err(AgentsError::NotInFile {
                id: id.to_owned(),
                settings: path.to_owned(),
            }
            .into());
        };
        settings_file::save(&settings, path)?;
        crate::output::err(format_args!(
            "tidings: forgot {} ({id}) in {}: `[agents] new = \"{}\"` applies to it again. A \
             running daemon applies this within about a second when it takes access away, \
             after 5 seconds unchanged when it gives access",
            label(&grant),
            path.display(),
            new_name(settings.agents.new)
        ));
        return Ok(());
    };
    let (name, running) = if let Some(grant) = settings.agents.known.get_mut(id) {
        grant.access = access;
        (label(grant), None)
    } else {
        let live = live(socket).await?;
        let found = match &live {
            Live::Running(state) => state.agents.iter().find(|a| a.id == id).cloned(),
            _ => None,
        };
        let Some(agent) = found else {
            return Err(AgentsError::Unknown {
                id: id.to_owned(),
                settings: path.to_owned(),
                where_: match live {
                    Live::Running(_) => "nor among the agents the running daemon has seen",
                    Live::NotRunning => "(and Tidings is not running to ask)",
                    Live::Refused(_) => "(and the running daemon did not list its agents)",
                },
            }
            .into());
        };
        let mut grant = AgentGrant::allowed(&agent.identity, &agent.name);
        grant.access = access;
        let name = label(&grant);
        settings.agents.known.insert(id.to_owned(), grant);
        (name, Some(true))
    };
    settings_file::save(&settings, path)?;
    let (done, when) = match access {
        Access::Allow => (
            "allowed",
            "a running daemon applies it once the file has been unchanged for 5 seconds \
             (edits that give access wait, so a quick undo is never applied)",
        ),
        Access::Deny => (
            "denied",
            "a running daemon applies it within about a second: its streams end and its \
             requests are refused",
        ),
    };
    let added = if running.is_some() {
        " (added from the running daemon's agents)"
    } else {
        ""
    };
    crate::output::err(format_args!(
        "tidings: {done} {name} ({id}) in {}{added}; {when}",
        path.display()
    ));
    Ok(())
}

/// The grant's name, or its identity when it has none.
fn label(grant: &AgentGrant) -> String {
    if grant.name.is_empty() {
        grant.identity.clone()
    } else {
        grant.name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
[agents]
new = \"ask\"

[agents.known.py-1a2b3c]
identity = \"exe:/usr/bin/python3\"
name = \"python3\"
access = \"deny\"
mail = [\"example.com\"]
messages = false
";

    fn settings() -> Settings {
        Settings::parse(FILE, Path::new("settings.toml")).unwrap()
    }

    #[test]
    fn the_file_alone_lists_its_grants_and_what_new_agents_get() {
        let rows = merge(&settings(), None);
        assert_eq!(rows.len(), 1);
        let text = render(&rows, NewAgents::Ask);
        assert!(text.contains("py-1a2b3c  python3: denied\n"), "{text}");
        assert!(
            text.contains(
                "grant: mail.received: 1 of the allowlist's entries; messages.received: none"
            ),
            "{text}"
        );
        assert!(
            text.contains("last seen not since Tidings started"),
            "{text}"
        );
        assert!(
            text.contains("New agents ([agents] new = \"ask\")"),
            "{text}"
        );
        let json = serde_json::to_value(&rows).unwrap();
        assert_eq!(json[0]["id"], "py-1a2b3c");
        assert_eq!(json[0]["access"], "denied");
        assert_eq!(json[0]["saved"], "deny");
        assert_eq!(json[0]["lastSeenMs"], Value::Null);
    }

    #[test]
    fn a_saved_decision_the_daemon_has_not_applied_is_shown_beside_its_access() {
        let mut live = agents_in_file(&settings()).remove(0);
        live.access = AgentAccess::New;
        live.last_seen_ms = Some(0);
        let state = State {
            version: "0".into(),
            socket: None,
            connections: 0,
            streams: 0,
            types: vec![],
            http: tidings_server::state::HttpEndpointState::Off,
            settings: tidings_server::state::SettingsFileState::Ok,
            clients: vec![],
            paused_until_ms: None,
            full_disk_access: tidings_server::state::FullDiskAccess::Unknown,
            contacts: tidings_server::state::ContactsState::default(),
            agents: vec![live],
            new_agents: NewAgents::Allow,
            webhooks: tidings_server::state::WebhooksState::default(),
        };
        let rows = merge(&settings(), Some(&state));
        assert_eq!(rows.len(), 1, "the file's agent is the daemon's, once");
        let text = render(&rows, NewAgents::Allow);
        assert!(
            text.contains("new (deny saved in settings.toml; the daemon applies it shortly)"),
            "{text}"
        );
        assert!(text.contains("last seen 1970-01-01 00:00:00 UTC"), "{text}");
    }
}
