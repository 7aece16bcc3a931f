//! The settings an agent sees (the settings in force narrowed by its grant), and the user's
//! decisions about agents: an answer to a question, allow or deny, a type's grant, forget.
//! Each decision is a settings edit saved to the file, so the file stays the one record.

use std::sync::Arc;

use tidings_core::settings::{Access, AgentDecision, AgentGrant, NewAgents, TypeGrant, valid_id};
use tidings_core::{EventType, Settings};

use super::{Daemon, DaemonError};
use crate::agents::Agent;
use crate::clients::ConnectionState;

/// Why a decision about an agent could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// No agent has this id: none in settings.toml, none seen since Tidings started.
    #[error(
        "no agent `{0}`: `tidings agents` lists the agents Tidings knows and their ids (a \
         program is known once it has connected)"
    )]
    Unknown(String),
    /// The decision could not be saved.
    #[error(transparent)]
    Daemon(#[from] DaemonError),
}

impl Daemon {
    /// The settings `conn`'s agent sees: the settings in force narrowed by its grant. A
    /// denied agent, or a new one under `new = "deny"`, sees every type off.
    pub(crate) fn settings_for(&self, conn: &ConnectionState) -> Arc<Settings> {
        narrowed(&self.settings_arc(), conn.agent())
    }

    /// The settings `agent` sees with no connection at hand (a webhook subscription's
    /// deliveries, which outlive the connection that made it).
    pub(crate) fn settings_for_agent(&self, agent: &Agent) -> Arc<Settings> {
        narrowed(&self.settings_arc(), agent)
    }

    /// The user answered the question of agent `id` (the app's Allow and Don't Allow):
    /// allowed, it gets every type the user turned on; refused, it is denied.
    pub fn answer_agent(&self, id: &str, allow: bool) -> Result<(), AgentError> {
        self.set_agent_access(id, allow)
    }

    /// Allow or deny agent `id`. Allowing a denied agent keeps its per-type grants; allowing
    /// a new one grants every type. Denying ends its streams with `terminated` at once.
    pub fn set_agent_access(&self, id: &str, allow: bool) -> Result<(), AgentError> {
        let access = if allow { Access::Allow } else { Access::Deny };
        self.edit_grant(id, |grant| grant.access = access)
    }

    /// Set agent `id`'s grant of `ty`.
    pub fn set_agent_type(
        &self,
        id: &str,
        ty: EventType,
        grant: TypeGrant,
    ) -> Result<(), AgentError> {
        self.edit_grant(id, |g| *g.for_type_mut(ty) = grant)
    }

    /// Forget agent `id`'s grant: it is a new agent again (`[agents] new` applies).
    pub fn forget_agent(&self, id: &str) -> Result<(), AgentError> {
        let mut found = false;
        self.update_settings(|s| found = s.agents.known.remove(id).is_some())?;
        if found {
            Ok(())
        } else {
            Err(AgentError::Unknown(id.to_owned()))
        }
    }

    /// Change (or make) the grant of agent `id`, saved to the file.
    fn edit_grant(&self, id: &str, change: impl FnOnce(&mut AgentGrant)) -> Result<(), AgentError> {
        let known = self.settings_arc().agents.known.contains_key(id);
        let fresh = if known {
            None
        } else {
            let agent = self
                .agents()
                .by_id(id)
                .filter(|_| valid_id(id))
                .ok_or_else(|| AgentError::Unknown(id.to_owned()))?;
            Some(AgentGrant::allowed(agent.key(), &agent.label()))
        };
        self.update_settings(|s| {
            let grant = match fresh {
                Some(grant) => s.agents.known.entry(id.to_owned()).or_insert(grant),
                None => match s.agents.known.get_mut(id) {
                    Some(grant) => grant,
                    None => return,
                },
            };
            change(grant);
        })?;
        Ok(())
    }

    /// After a publish: questions whose agent now has a decision in the file are closed.
    pub(crate) fn settle_asks(&self, settings: &Settings) {
        let agents = self.agents();
        let decided: Vec<String> = agents
            .asks()
            .into_iter()
            .filter(|a| {
                !matches!(
                    settings.agents.decision(a.agent.key()),
                    AgentDecision::Unknown(NewAgents::Ask)
                )
            })
            .map(|a| a.agent.key().to_owned())
            .collect();
        for key in decided {
            agents.answered(&key);
        }
    }
}

/// `settings` as `agent` sees them.
pub(crate) fn narrowed(settings: &Arc<Settings>, agent: &Agent) -> Arc<Settings> {
    match settings.agents.decision(agent.key()) {
        AgentDecision::Granted(_, grant) => {
            let all = grant.access == Access::Allow
                && grant.mail == TypeGrant::Every(true)
                && grant.messages == TypeGrant::Every(true);
            if all {
                settings.clone()
            } else {
                Arc::new(settings.for_agent(Some(grant)))
            }
        }
        AgentDecision::Unknown(NewAgents::Allow | NewAgents::Ask) => settings.clone(),
        AgentDecision::Denied(_) | AgentDecision::Unknown(NewAgents::Deny) => {
            let mut none = AgentGrant::allowed(agent.key(), "");
            none.access = Access::Deny;
            Arc::new(settings.for_agent(Some(&none)))
        }
    }
}
