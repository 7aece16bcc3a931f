//! The agents for [`State`]: every agent with a grant in settings.toml, every one seen since
//! start, and every one asking, each once, with what it holds now.

use std::collections::BTreeMap;

use tidings_core::settings::{Access, AgentGrant, AgentsSettings, TypeGrant};
use tidings_core::{EventType, Settings};

use super::Daemon;
use crate::home::home_relative;
use crate::state::{AgentAccess, AgentKind, AgentState, TypeGrantState};

impl Daemon {
    /// The agents, as `State.agents` lists them: asking first, then by name.
    pub(super) fn agent_list(&self, settings: &Settings) -> Vec<AgentState> {
        let agents = self.clients().agents();
        let live = self.clients().by_agent();
        let asks = agents.asks();
        let mut out: BTreeMap<String, AgentState> = BTreeMap::new();
        for (id, grant) in &settings.agents.known {
            out.insert(grant.identity.clone(), from_grant(id, grant));
        }
        for seen in agents.seen() {
            let key = seen.agent.key().to_owned();
            let entry = out
                .entry(key.clone())
                .or_insert_with(|| new_agent(&seen.agent.id, &key, &settings.agents));
            let identity = &seen.agent.identity;
            entry.name.clone_from(&identity.name);
            entry.signer.clone_from(&identity.signer);
            if let Some(program) = &identity.program {
                entry.program = Some(home_relative(program));
            }
            entry.announced.clone_from(&seen.announced);
            entry.last_seen_ms = Some(seen.last_seen_ms);
            entry.delivered = seen.delivered_before;
        }
        for ask in &asks {
            let key = ask.agent.key().to_owned();
            let entry = out
                .entry(key.clone())
                .or_insert_with(|| new_agent(&ask.agent.id, &key, &settings.agents));
            entry.access = AgentAccess::Asking;
            entry.asking = Some(ask.event_type.name().to_owned());
        }
        for (key, (connections, streams, delivered)) in live {
            if let Some(entry) = out.get_mut(&key) {
                entry.connections = connections;
                entry.streams = streams;
                entry.delivered = entry.delivered.saturating_add(delivered);
            }
        }
        let mut list: Vec<AgentState> = out.into_values().collect();
        list.sort_by(|a, b| {
            (
                a.access != AgentAccess::Asking,
                a.name.to_lowercase(),
                &a.id,
            )
                .cmp(&(
                    b.access != AgentAccess::Asking,
                    b.name.to_lowercase(),
                    &b.id,
                ))
        });
        list
    }
}

/// The agents settings.toml lists, as `State.agents` shows them before any of them is seen:
/// what `tidings agents` prints while no daemon runs.
pub fn agents_in_file(settings: &Settings) -> Vec<AgentState> {
    settings
        .agents
        .known
        .iter()
        .map(|(id, grant)| from_grant(id, grant))
        .collect()
}

/// An agent with a grant, as the file has it (identity details are filled in when seen).
fn from_grant(id: &str, grant: &AgentGrant) -> AgentState {
    AgentState {
        id: id.to_owned(),
        identity: grant.identity.clone(),
        name: if grant.name.is_empty() {
            id.to_owned()
        } else {
            grant.name.clone()
        },
        signer: None,
        program: program_of(&grant.identity),
        kind: AgentKind::of_key(&grant.identity),
        announced: Vec::new(),
        access: match grant.access {
            Access::Allow => AgentAccess::Allowed,
            Access::Deny => AgentAccess::Denied,
        },
        grants: EventType::ALL
            .into_iter()
            .map(|ty| type_grant(ty, grant.for_type(ty)))
            .collect(),
        asking: None,
        connections: 0,
        streams: 0,
        delivered: 0,
        last_seen_ms: None,
    }
}

/// An agent with no grant: `new` applies.
fn new_agent(id: &str, key: &str, agents: &AgentsSettings) -> AgentState {
    let mut state = from_grant(id, &AgentGrant::allowed(key, id));
    state.access = AgentAccess::New;
    if agents.new == tidings_core::settings::NewAgents::Deny {
        for g in &mut state.grants {
            g.granted = false;
        }
    }
    state
}

fn type_grant(ty: EventType, grant: &TypeGrant) -> TypeGrantState {
    let (granted, senders) = match grant {
        TypeGrant::Every(on) => (*on, None),
        TypeGrant::Senders(list) => (true, Some(list.len())),
    };
    TypeGrantState {
        event_type: ty.name().to_owned(),
        granted,
        senders,
    }
}

/// The program path an identity key names (`exe:PATH`, or its script), home-relative.
fn program_of(key: &str) -> Option<String> {
    let rest = key.strip_prefix("exe:")?;
    let path = rest
        .split_once(" script:")
        .map_or(rest, |(_, script)| script);
    Some(home_relative(std::path::Path::new(path)))
}
