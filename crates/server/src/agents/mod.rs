//! Agents: the programs behind the connections, known by what the OS says they are (never by
//! the name they announce), each with its grant from `[agents]` in settings.
//!
//! This module is the registry ([`Agent`], [`Agents`]: agents seen, questions asked); the
//! daemon's `agent_gate` (what a request of an agent with no grant waits for, and the
//! refusals) and `grants` (the settings an agent sees; the user's decisions) use it.
//!
//! An agent's identity comes from `tidings_platform::identity` when its connection is
//! accepted (the socket's peer, walked up past the shim and shells), or from the HTTP token it
//! presented. The grant is looked up by that identity on every request, so a grant edited in
//! the file applies to the next request and, through the settings channel, to open streams.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tidings_core::EventType;
use tidings_platform::identity::{AgentIdentity, Identifier, default_identifier};

use crate::state::now_ms;
use crate::sync::lock;

/// The most questions open at once; an agent beyond them is refused at once (one question
/// per agent identity, so this bounds what a flood of programs can put in front of the user).
pub const MAX_ASKS: usize = 16;

/// The most agents remembered as seen (for the window and `tidings agents`); the oldest seen
/// is forgotten first. Agents with a grant are listed from the file whatever this says.
pub const MAX_SEEN: usize = 256;

/// The longest announced name kept per agent, and how many different ones.
const MAX_ANNOUNCED: usize = 4;

/// One agent: what it is and its id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    /// What the OS says it is.
    pub identity: AgentIdentity,
    /// Its id: the key of its grant in the file, when it has one, else the one its identity
    /// gives (`tidings_platform::identity::AgentIdentity::id`).
    pub id: String,
}

impl Agent {
    /// The agent `identity`, with the id its identity gives.
    pub fn new(identity: AgentIdentity) -> Arc<Agent> {
        let id = identity.id();
        Arc::new(Agent { identity, id })
    }

    /// The agent `identity`, with the id of its grant in `known` if it has one.
    pub fn known_as(
        identity: AgentIdentity,
        known: &tidings_core::settings::AgentsSettings,
    ) -> Arc<Agent> {
        let id = known
            .find(&identity.key)
            .map_or_else(|| identity.id(), |(id, _)| id.to_owned());
        Arc::new(Agent { identity, id })
    }

    /// The identity key its grant is stored under.
    pub fn key(&self) -> &str {
        &self.identity.key
    }

    /// How the user is shown it: "claude (signed by Anthropic PBC)".
    pub fn label(&self) -> String {
        match &self.identity.signer {
            Some(signer) => format!("{} (signed by {signer})", self.identity.name),
            None => self.identity.name.clone(),
        }
    }
}

/// One question put to the user: may this agent receive what it asked for?
#[derive(Clone, Debug)]
pub struct Ask {
    /// Who asks.
    pub agent: Arc<Agent>,
    /// The type of its first request.
    pub event_type: EventType,
    /// What it asked for, in words ("new mail from example.com"); shown to the user only.
    pub wants: String,
    /// When it first asked (ms since the Unix epoch).
    pub since_ms: u64,
}

/// What is remembered of an agent seen this run.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The agent.
    pub agent: Arc<Agent>,
    /// The names its connections announced, sanitised; shown beside it, never trusted.
    pub announced: Vec<String>,
    /// When it last connected or made a request (ms since the Unix epoch).
    pub last_seen_ms: u64,
    /// Events delivered to its connections that have closed.
    pub delivered_before: u64,
}

/// The agents seen and the questions open.
pub struct Agents {
    /// What tells who a socket peer is.
    identifier: Identifier,
    /// Whether someone can answer a question (the app runs the engine); headless, an agent
    /// with no grant under `new = "ask"` is refused at once.
    prompts: AtomicBool,
    asks: Mutex<BTreeMap<String, Ask>>,
    seen: Mutex<BTreeMap<String, Seen>>,
}

impl Default for Agents {
    fn default() -> Agents {
        Agents {
            identifier: default_identifier(),
            prompts: AtomicBool::new(false),
            asks: Mutex::default(),
            seen: Mutex::default(),
        }
    }
}

impl Agents {
    /// The agent behind socket peer `pid` (of our own uid: the socket checked it), with the
    /// id its grant has in `known`, if any. Blocks: the walk reads the process table, and on
    /// macOS runs `codesign`.
    pub(crate) fn identify(
        &self,
        pid: Option<i32>,
        known: &tidings_core::settings::AgentsSettings,
    ) -> Arc<Agent> {
        let identity = match pid {
            Some(pid) => self
                .identifier
                .identify(pid, tidings_platform::paths::current_uid()),
            None => AgentIdentity::unidentified(),
        };
        Agent::known_as(identity, known)
    }

    /// Let requests of agents with no grant wait for the user's answer (the app does).
    pub fn set_prompts(&self, on: bool) {
        self.prompts.store(on, Ordering::Release);
    }

    /// Whether questions can be answered.
    pub fn prompts(&self) -> bool {
        self.prompts.load(Ordering::Acquire)
    }

    /// `agent` connected, or made a request announcing `name`.
    pub(crate) fn saw(&self, agent: &Arc<Agent>, name: Option<&str>) {
        let mut seen = lock(&self.seen);
        let entry = seen.entry(agent.key().to_owned()).or_insert_with(|| Seen {
            agent: agent.clone(),
            announced: Vec::new(),
            last_seen_ms: 0,
            delivered_before: 0,
        });
        entry.last_seen_ms = now_ms();
        if let Some(name) = name
            && !entry.announced.iter().any(|n| n == name)
            && entry.announced.len() < MAX_ANNOUNCED
        {
            entry.announced.push(name.to_owned());
        }
        if seen.len() > MAX_SEEN
            && let Some(oldest) = seen
                .iter()
                .filter(|(k, _)| k.as_str() != agent.key())
                .min_by_key(|(_, s)| s.last_seen_ms)
                .map(|(k, _)| k.clone())
        {
            seen.remove(&oldest);
        }
    }

    /// A connection of `agent` closed having delivered `delivered` events.
    pub(crate) fn closed(&self, agent: &Agent, delivered: u64) {
        if let Some(seen) = lock(&self.seen).get_mut(agent.key()) {
            seen.delivered_before = seen.delivered_before.saturating_add(delivered);
        }
    }

    /// The agents seen this run.
    pub fn seen(&self) -> Vec<Seen> {
        lock(&self.seen).values().cloned().collect()
    }

    /// The questions open, oldest first.
    pub fn asks(&self) -> Vec<Ask> {
        let mut asks: Vec<Ask> = lock(&self.asks).values().cloned().collect();
        asks.sort_by_key(|a| a.since_ms);
        asks
    }

    /// The agent with id `id` among those seen or asking.
    pub fn by_id(&self, id: &str) -> Option<Arc<Agent>> {
        let asking = lock(&self.asks)
            .values()
            .find(|a| a.agent.id == id)
            .map(|a| a.agent.clone());
        asking.or_else(|| {
            lock(&self.seen)
                .values()
                .find(|s| s.agent.id == id)
                .map(|s| s.agent.clone())
        })
    }

    /// The question `key` was answered (or its agent got a grant some other way).
    pub(crate) fn answered(&self, key: &str) -> bool {
        lock(&self.asks).remove(key).is_some()
    }
}

/// What [`Agents::ask`] did.
pub(crate) enum Asked {
    /// A new question: tell the user.
    New,
    /// The agent already waits for an answer.
    Open,
    /// Too many questions are open.
    Full,
}

impl Agents {
    /// Open (or join) the question of `agent`.
    pub(crate) fn ask(&self, agent: &Arc<Agent>, event_type: EventType, wants: &str) -> Asked {
        let mut asks = lock(&self.asks);
        let full = asks.len() >= MAX_ASKS;
        match asks.entry(agent.key().to_owned()) {
            Entry::Occupied(_) => Asked::Open,
            Entry::Vacant(_) if full => Asked::Full,
            Entry::Vacant(slot) => {
                slot.insert(Ask {
                    agent: agent.clone(),
                    event_type,
                    wants: wants.to_owned(),
                    since_ms: now_ms(),
                });
                Asked::New
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(n: usize) -> Arc<Agent> {
        Agent::new(AgentIdentity::token(&format!("agent-{n}")))
    }

    #[test]
    fn one_question_per_agent_and_at_most_max_asks() {
        let agents = Agents::default();
        for n in 0..MAX_ASKS {
            assert!(matches!(
                agents.ask(&agent(n), EventType::MailReceived, "new mail"),
                Asked::New
            ));
        }
        // The same agent again joins its question; a new one past the cap is refused.
        assert!(matches!(
            agents.ask(&agent(0), EventType::MessagesReceived, "new messages"),
            Asked::Open
        ));
        assert!(matches!(
            agents.ask(&agent(MAX_ASKS), EventType::MailReceived, "new mail"),
            Asked::Full
        ));
        assert_eq!(agents.asks().len(), MAX_ASKS);
        // An answer makes room.
        assert!(agents.answered(agent(3).key()));
        assert!(matches!(
            agents.ask(&agent(MAX_ASKS), EventType::MailReceived, "new mail"),
            Asked::New
        ));
    }

    #[test]
    fn seen_agents_keep_a_few_announced_names_and_a_bounded_list() {
        let agents = Agents::default();
        let a = agent(1);
        for name in ["claude-code", "claude-code", "cursor", "x", "y", "z"] {
            agents.saw(&a, Some(name));
        }
        let seen = agents.seen();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].announced, ["claude-code", "cursor", "x", "y"]);
        for n in 0..MAX_SEEN + 10 {
            agents.saw(&agent(n + 10), None);
        }
        assert_eq!(agents.seen().len(), MAX_SEEN);
    }
}
