//! Each agent's grant (`[agents]`): what a never-seen agent gets, and per known agent whether
//! it may receive at all and, per type, everything the type lets through or a narrower list of
//! the type's allowlist entries. [`Settings::for_agent`] turns a grant into the settings that
//! agent sees, so every path (stream, poll, the tools, the channel, digests) narrows alike.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{AllowEntry, Settings};
use crate::event::EventType;

/// The longest agent id accepted in the file (ids are made as a short slug and a hash).
pub const MAX_AGENT_ID: usize = 48;

/// The most agents the file may list; a grant per program the user has, with room to spare.
pub const MAX_KNOWN_AGENTS: usize = 512;

/// `[agents]`: the default for new agents and the grant of each known one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawAgents")]
pub struct AgentsSettings {
    /// What an agent with no grant in the file gets.
    pub new: NewAgents,
    /// Known agents by id (`[agents.known.ID]`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub known: BTreeMap<String, AgentGrant>,
}

/// What a never-seen agent gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum NewAgents {
    /// Ask the user in the app; refused when no app can ask or nobody answers in time.
    #[default]
    Ask,
    /// Everything the user turned on, within the allowlists, as before grants existed.
    Allow,
    /// Nothing until the user allows it.
    Deny,
}

/// Whether a known agent may receive anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// It receives what its per-type grants let through.
    #[default]
    Allow,
    /// It receives nothing, and its connections are refused.
    Deny,
}

/// One type's part of a grant: `true` (everything the type lets through), `false` (nothing),
/// or a list of the type's allowlist entries (only those senders).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TypeGrant {
    /// All or nothing.
    Every(bool),
    /// Only these entries of the type's allowlist.
    Senders(Vec<AllowEntry>),
}

impl Default for TypeGrant {
    fn default() -> TypeGrant {
        TypeGrant::Every(true)
    }
}

/// One known agent: who it is and what it may receive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentGrant {
    /// What identifies it, as the daemon found it (`exe:/usr/bin/foo`, `signed:TEAM:ID`,
    /// `token:NAME`, `unidentified`). The grant applies to that program, whatever name it
    /// announces.
    pub identity: String,
    /// A name to show for it.
    #[serde(default)]
    pub name: String,
    /// Whether it may receive anything.
    #[serde(default)]
    pub access: Access,
    /// `mail.received`.
    #[serde(default)]
    pub mail: TypeGrant,
    /// `messages.received`.
    #[serde(default)]
    pub messages: TypeGrant,
}

impl AgentGrant {
    /// A grant of everything the user turned on, for `identity` shown as `name`.
    pub fn allowed(identity: &str, name: &str) -> AgentGrant {
        AgentGrant {
            identity: identity.to_owned(),
            name: name.to_owned(),
            access: Access::Allow,
            mail: TypeGrant::default(),
            messages: TypeGrant::default(),
        }
    }

    /// The grant of one type.
    pub fn for_type(&self, ty: EventType) -> &TypeGrant {
        match ty {
            EventType::MailReceived => &self.mail,
            EventType::MessagesReceived => &self.messages,
        }
    }

    /// The grant of one type, to change it.
    pub fn for_type_mut(&mut self, ty: EventType) -> &mut TypeGrant {
        match ty {
            EventType::MailReceived => &mut self.mail,
            EventType::MessagesReceived => &mut self.messages,
        }
    }
}

/// What the file says about one agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentDecision<'a> {
    /// A known agent the user allowed: its id and grant.
    Granted(&'a str, &'a AgentGrant),
    /// A known agent the user refused: its id.
    Denied(&'a str),
    /// No grant: `new` applies.
    Unknown(NewAgents),
}

impl AgentsSettings {
    /// The id and grant stored for `identity`, if any.
    pub fn find(&self, identity: &str) -> Option<(&str, &AgentGrant)> {
        self.known
            .iter()
            .find(|(_, g)| g.identity == identity)
            .map(|(id, g)| (id.as_str(), g))
    }

    /// What the file decides for the agent `identity`.
    pub fn decision(&self, identity: &str) -> AgentDecision<'_> {
        match self.find(identity) {
            Some((id, grant)) if grant.access == Access::Allow => AgentDecision::Granted(id, grant),
            Some((id, _)) => AgentDecision::Denied(id),
            None => AgentDecision::Unknown(self.new),
        }
    }
}

impl Settings {
    /// The settings agent `grant` sees: a type its grant refuses is off; a type granted for a
    /// list of senders keeps only those of its allowlist entries (all of them when the type
    /// has no allowlist), and is off when none is left. `None` (an agent let in by
    /// `new = "allow"`, or one waiting for the user's answer) sees the settings unchanged;
    /// a denied agent is refused before it gets here, and sees every type off anyway.
    #[must_use]
    pub fn for_agent(&self, grant: Option<&AgentGrant>) -> Settings {
        let mut out = self.clone();
        let Some(grant) = grant else {
            return out;
        };
        for ty in EventType::ALL {
            let of = out.for_type_mut(ty);
            match (grant.access, grant.for_type(ty)) {
                (Access::Deny, _) | (_, TypeGrant::Every(false)) => of.enabled = false,
                (Access::Allow, TypeGrant::Every(true)) => {}
                (Access::Allow, TypeGrant::Senders(senders)) => {
                    let kept: Vec<AllowEntry> = if of.allow.is_empty() {
                        senders.clone()
                    } else {
                        senders
                            .iter()
                            .filter(|e| of.allow.contains(e))
                            .cloned()
                            .collect()
                    };
                    if kept.is_empty() {
                        of.enabled = false;
                    }
                    of.allow = kept;
                }
            }
        }
        out
    }
}

/// `[agents]` as written, checked into [`AgentsSettings`].
#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RawAgents {
    new: NewAgents,
    known: BTreeMap<String, AgentGrant>,
}

impl TryFrom<RawAgents> for AgentsSettings {
    type Error = String;

    fn try_from(raw: RawAgents) -> Result<AgentsSettings, String> {
        if raw.known.len() > MAX_KNOWN_AGENTS {
            return Err(format!(
                "[agents.known] lists {} agents, more than the {MAX_KNOWN_AGENTS} allowed; \
                 remove the ones you no longer use (`tidings agents forget ID`)",
                raw.known.len()
            ));
        }
        let mut seen = HashSet::new();
        for (id, grant) in &raw.known {
            if !valid_id(id) {
                return Err(format!(
                    "agent id `{}` is not valid: use at most {MAX_AGENT_ID} lower-case letters, \
                     digits and `-`",
                    crate::text::sanitize(id, MAX_AGENT_ID)
                ));
            }
            if grant.identity.trim().is_empty() {
                return Err(format!("[agents.known.{id}] has no identity"));
            }
            if !seen.insert(grant.identity.as_str()) {
                return Err(format!(
                    "[agents.known.{id}] has the same identity as another agent; keep one of \
                     the two"
                ));
            }
        }
        Ok(AgentsSettings {
            new: raw.new,
            known: raw.known,
        })
    }
}

/// Whether `id` may name an agent: lower-case ASCII letters, digits and `-`, not empty.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_AGENT_ID
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn parse(text: &str) -> Settings {
        Settings::parse(text, Path::new("settings.toml")).unwrap()
    }

    const TWO_AGENTS: &str = "\
[mail]
enabled = true
allow = [\"acme.com\", \"ana@example.org\"]

[messages]
enabled = true

[agents]
new = \"deny\"

[agents.known.work-1a2b3c]
identity = \"exe:/usr/bin/work\"
name = \"work\"
mail = [\"acme.com\", \"bob@elsewhere.net\"]
messages = false

[agents.known.script-4d5e6f]
identity = \"exe:/usr/bin/python3 script:/home/u/s.py\"
access = \"deny\"
";

    #[test]
    fn new_agents_are_asked_about_by_default() {
        let s = parse("");
        assert_eq!(s.agents.new, NewAgents::Ask);
        assert_eq!(
            s.agents.decision("exe:/x"),
            AgentDecision::Unknown(NewAgents::Ask)
        );
        // A file without agents keeps its shape.
        assert!(!toml::to_string(&s).unwrap().contains("known"));
    }

    #[test]
    fn a_grant_is_found_by_identity_never_by_name() {
        let s = parse(TWO_AGENTS);
        assert_eq!(s.agents.new, NewAgents::Deny);
        let AgentDecision::Granted(id, grant) = s.agents.decision("exe:/usr/bin/work") else {
            panic!("work is granted");
        };
        assert_eq!(id, "work-1a2b3c");
        assert_eq!(grant.messages, TypeGrant::Every(false));
        assert_eq!(
            s.agents
                .decision("exe:/usr/bin/python3 script:/home/u/s.py"),
            AgentDecision::Denied("script-4d5e6f")
        );
        assert_eq!(
            s.agents.decision("work"),
            AgentDecision::Unknown(NewAgents::Deny)
        );
    }

    #[test]
    fn an_agent_sees_its_grant_within_the_allowlist() {
        let s = parse(TWO_AGENTS);
        let (_, work) = s.agents.find("exe:/usr/bin/work").unwrap();
        let seen = s.for_agent(Some(work));
        // Only the allowlist's entries it was granted: bob was never on the allowlist.
        assert!(seen.mail.enabled);
        assert_eq!(seen.mail.allow, [AllowEntry::parse("acme.com").unwrap()]);
        assert!(!seen.messages.enabled);
        // No grant: the settings as they are.
        assert_eq!(s.for_agent(None), s);
        // Denied: every type off.
        let (_, script) = s
            .agents
            .find("exe:/usr/bin/python3 script:/home/u/s.py")
            .unwrap();
        let seen = s.for_agent(Some(script));
        assert!(!seen.mail.enabled && !seen.messages.enabled);
    }

    #[test]
    fn a_grant_with_no_sender_left_turns_the_type_off_and_never_widens() {
        let mut s = parse(TWO_AGENTS);
        s.mail.allow = vec![AllowEntry::parse("ana@example.org").unwrap()];
        let (_, work) = s.agents.find("exe:/usr/bin/work").unwrap();
        let seen = s.for_agent(Some(work));
        assert!(
            !seen.mail.enabled,
            "nothing of the grant is on the allowlist"
        );
        // A type with no allowlist is bounded by the grant's list.
        s.mail.allow.clear();
        let (_, work) = s.agents.find("exe:/usr/bin/work").unwrap();
        let seen = s.for_agent(Some(work));
        assert_eq!(seen.mail.allow.len(), 2);
    }

    #[test]
    fn bad_agent_tables_are_errors_naming_the_fix() {
        let cases = [
            ("[agents]\nnew = \"maybe\"\n", "maybe"),
            (
                "[agents.known.Bad_Id]\nidentity = \"exe:/x\"\n",
                "not valid",
            ),
            ("[agents.known.a]\nname = \"x\"\n", "identity"),
            ("[agents.known.a]\nidentity = \" \"\n", "has no identity"),
            (
                "[agents.known.a]\nidentity = \"exe:/x\"\n[agents.known.b]\nidentity = \"exe:/x\"\n",
                "same identity",
            ),
            (
                "[agents.known.a]\nidentity = \"exe:/x\"\nmail = [\"not an entry\"]\n",
                "",
            ),
            ("[agents.known.a]\nidentity = \"exe:/x\"\nmail = 3\n", ""),
        ];
        for (text, says) in cases {
            let err = Settings::parse(text, Path::new("s.toml")).unwrap_err();
            assert!(err.to_string().contains(says), "{text}: {err}");
            assert!(err.line().is_some(), "{text}: {err}");
        }
    }

    #[test]
    fn grants_round_trip_through_the_file() {
        let s = parse(TWO_AGENTS);
        let back = parse(&toml::to_string(&s).unwrap());
        assert_eq!(back, s);
    }
}
