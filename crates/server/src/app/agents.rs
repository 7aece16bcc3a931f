//! The window's agent commands: the questions open (Allow, Don't Allow), an agent allowed or
//! denied, its grant per type, forgotten, and what a never-seen program gets.
//!
//! For the person at the Mac only: the questions' words and a grant's sender entries are in
//! the [`SettingsView`](super::SettingsView), never in `State`, which any socket client reads.

use serde::{Deserialize, Serialize};
use tidings_core::EventType;
use tidings_core::allowlist;
use tidings_core::settings::{AgentsSettings, NewAgents, TypeGrant};
use tidings_core::text::{MAX_ECHO_CHARS, sanitize};

use super::{AppError, SettingsView, event_type, settings_view};
use crate::engine::Handle;

/// One question open: a program with no grant asked for events and waits for the answer.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskView {
    /// The agent's id (`answer_agent` takes it).
    pub id: String,
    /// What it is, as the OS says: "claude (signed by Anthropic PBC)".
    pub agent: String,
    /// What it asked for: "new mail from example.com".
    pub wants: String,
    /// The type of its first request.
    pub event_type: String,
    /// When it asked (ms since the Unix epoch).
    pub since_ms: u64,
}

/// One type's part of an agent's grant, as the window shows and sends it: `"every"`,
/// `"none"`, or `{"senders": [...]}` (entries of the type's allowlist, as settings.toml holds
/// them).
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TypeGrantView {
    /// Everything the type lets through.
    Every,
    /// Nothing of this type.
    None,
    /// Only these senders of the type's allowlist.
    Senders(Vec<String>),
}

impl TypeGrantView {
    fn of(grant: &TypeGrant) -> TypeGrantView {
        match grant {
            TypeGrant::Every(true) => TypeGrantView::Every,
            TypeGrant::Every(false) => TypeGrantView::None,
            TypeGrant::Senders(s) => {
                TypeGrantView::Senders(s.iter().map(ToString::to_string).collect())
            }
        }
    }
}

/// One type of an agent's grant, with its senders.
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentTypeView {
    /// The type's wire name.
    pub event_type: String,
    /// What the agent may receive of it.
    pub grant: TypeGrantView,
}

/// The grant of one agent with an entry in settings.toml (`State.agents` has the rest).
#[cfg_attr(test, derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentGrantView {
    /// The agent's id, as in `State.agents`.
    pub id: String,
    /// Each type's grant, in `EventType::ALL` order.
    pub types: Vec<AgentTypeView>,
}

/// The questions open, oldest first.
pub(super) fn ask_views(handle: &Handle) -> Vec<AskView> {
    handle
        .agents()
        .asks()
        .into_iter()
        .map(|a| AskView {
            id: a.agent.id.clone(),
            agent: a.agent.label(),
            wants: a.wants,
            event_type: a.event_type.name().to_owned(),
            since_ms: a.since_ms,
        })
        .collect()
}

/// Every known agent's grant, by id.
pub(super) fn grant_views(agents: &AgentsSettings) -> Vec<AgentGrantView> {
    agents
        .known
        .iter()
        .map(|(id, grant)| AgentGrantView {
            id: id.clone(),
            types: EventType::ALL
                .into_iter()
                .map(|ty| AgentTypeView {
                    event_type: ty.name().to_owned(),
                    grant: TypeGrantView::of(grant.for_type(ty)),
                })
                .collect(),
        })
        .collect()
}

/// The user's answer to agent `id`'s question: Allow grants every type the user turned on,
/// Don't Allow denies it. Either way the waiting request goes on at once.
pub async fn answer_agent(
    handle: &Handle,
    id: &str,
    allow: bool,
) -> Result<SettingsView, AppError> {
    handle.answer_agent(id, allow)?;
    Ok(settings_view(handle).await)
}

/// Allow or deny agent `id`; denied, its streams end at once.
pub async fn set_agent_access(
    handle: &Handle,
    id: &str,
    allow: bool,
) -> Result<SettingsView, AppError> {
    handle.set_agent_access(id, allow)?;
    Ok(settings_view(handle).await)
}

/// Set agent `id`'s grant of `event_type`. A sender list names entries of the type's
/// allowlist (as settings.toml holds them), at least one; refused whole, naming the first
/// entry that is not on it.
pub async fn set_agent_type(
    handle: &Handle,
    id: &str,
    event_type_name: &str,
    grant: TypeGrantView,
) -> Result<SettingsView, AppError> {
    let ty = event_type(event_type_name)?;
    let grant = match grant {
        TypeGrantView::Every => TypeGrant::Every(true),
        TypeGrantView::None => TypeGrant::Every(false),
        TypeGrantView::Senders(entries) => TypeGrant::Senders(senders(handle, ty, &entries)?),
    };
    handle.set_agent_type(id, ty, grant)?;
    Ok(settings_view(handle).await)
}

/// `entries` checked as entries of `ty`'s allowlist in force.
fn senders(
    handle: &Handle,
    ty: EventType,
    entries: &[String],
) -> Result<Vec<tidings_core::settings::AllowEntry>, AppError> {
    if entries.is_empty() {
        return Err(AppError::NoSenders {
            event_type: ty.name(),
        });
    }
    let parsed = allowlist::check_allowlist(ty, entries).map_err(|reason| AppError::Allowlist {
        event_type: ty.name(),
        reason,
    })?;
    let settings = handle.daemon().settings_arc();
    let allow = &settings.for_type(ty).allow;
    if let Some((entry, _)) = entries
        .iter()
        .zip(&parsed)
        .find(|(_, e)| !allow.contains(e))
    {
        return Err(AppError::NotOnAllowlist {
            event_type: ty.name(),
            entry: sanitize(entry, MAX_ECHO_CHARS),
        });
    }
    Ok(parsed)
}

/// Forget agent `id`'s grant: `[agents] new` applies to it again.
pub async fn forget_agent(handle: &Handle, id: &str) -> Result<SettingsView, AppError> {
    handle.forget_agent(id)?;
    Ok(settings_view(handle).await)
}

/// What a never-seen program gets: `ask`, `allow` or `deny`.
pub async fn set_new_agents(handle: &Handle, new: &str) -> Result<SettingsView, AppError> {
    let new = match new {
        "ask" => NewAgents::Ask,
        "allow" => NewAgents::Allow,
        "deny" => NewAgents::Deny,
        other => {
            return Err(AppError::NewAgents {
                value: sanitize(other, MAX_ECHO_CHARS),
            });
        }
    };
    handle.update_settings(|s| s.agents.new = new)?;
    Ok(settings_view(handle).await)
}
