//! The gate before an agent's data requests (a stream, a poll, a pull tool): a granted agent
//! passes, a denied one is refused, and one with no grant gets what `[agents] new` says: let
//! in, refused, or asked. Asked, the request waits (holding no stream slot) until the user
//! answers in the app or `ServerLimits::ask_wait` passes; one question per agent, however
//! many connections it opens.

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Map, Value, json};
use tidings_core::EventType;
use tidings_core::settings::{AgentDecision, NewAgents};
use tidings_protocol::errors::{self as codes, data, reason};

use super::Daemon;
use crate::agents::{Agent, Asked, MAX_ASKS};
use crate::clients::ConnectionState;
use crate::notices::Notice;

impl Daemon {
    /// Let `conn`'s agent make a data request for `ty` with `arguments`, or say why not.
    pub(crate) async fn agent_gate(
        &self,
        conn: &ConnectionState,
        ty: EventType,
        arguments: &Map<String, Value>,
    ) -> Result<(), ErrorData> {
        let agent = conn.agent().clone();
        let agents = self.agents();
        let mut settings = self.settings_receiver();
        let deadline = tokio::time::Instant::now() + self.limits().ask_wait;
        let mut asking = false;
        loop {
            let verdict = {
                let now = settings.borrow_and_update();
                match now.agents.decision(agent.key()) {
                    AgentDecision::Granted(..) | AgentDecision::Unknown(NewAgents::Allow) => {
                        return Ok(());
                    }
                    AgentDecision::Denied(id) => Some(denied(&agent, id)),
                    AgentDecision::Unknown(NewAgents::Deny) => Some(not_allowed(&agent, None)),
                    AgentDecision::Unknown(NewAgents::Ask) if !agents.prompts() => {
                        Some(not_allowed(&agent, Some(Unasked::NoApp)))
                    }
                    AgentDecision::Unknown(NewAgents::Ask) => None,
                }
            };
            if let Some(refusal) = verdict {
                return Err(refusal);
            }
            if !asking {
                let wants = crate::notices::wants(ty, arguments);
                match agents.ask(&agent, ty, &wants) {
                    Asked::Full => return Err(too_many_asks()),
                    Asked::New => self.notify(Notice::AgentAsks {
                        agent: agent.label(),
                        wants,
                    }),
                    Asked::Open => {}
                }
                self.board_changed();
                asking = true;
            }
            tokio::select! {
                changed = settings.changed() => if changed.is_err() {
                    return Err(not_allowed(&agent, Some(Unasked::Unanswered)));
                },
                () = tokio::time::sleep_until(deadline) => {
                    return Err(not_allowed(&agent, Some(Unasked::Unanswered)));
                }
                () = conn.closed.cancelled() => {
                    return Err(not_allowed(&agent, Some(Unasked::Unanswered)));
                }
            }
        }
    }

    /// Refuse every request of a denied agent (its `initialize` too), so a fresh shim from a
    /// denied program is turned away as its old connection was.
    pub(crate) fn agent_refused(&self, conn: &ConnectionState) -> Option<ErrorData> {
        self.agent_denied(conn.agent())
    }

    /// The refusal of `agent` if the user denied it (a webhook's deliveries check it, with no
    /// connection behind them).
    pub(crate) fn agent_denied(&self, agent: &Agent) -> Option<ErrorData> {
        match self.settings_arc().agents.decision(agent.key()) {
            AgentDecision::Denied(id) => Some(denied(agent, id)),
            _ => None,
        }
    }
}

/// Why an agent with no grant was not asked, or got no answer.
#[derive(Clone, Copy)]
enum Unasked {
    /// Nothing can ask the user: `tidings serve` runs without the app.
    NoApp,
    /// The user did not answer in time.
    Unanswered,
}

/// The refusal of an agent the user denied.
pub(crate) fn denied(agent: &Agent, id: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode(codes::FORBIDDEN),
        format!(
            "{} is denied in Tidings; to let it receive events again, allow it in the Tidings \
             window or run `tidings agents allow {id}`",
            agent.label()
        ),
        Some(json!({ data::REASON: reason::AGENT_DENIED, "agent": id })),
    )
}

/// The refusal of an agent with no grant.
fn not_allowed(agent: &Agent, why: Option<Unasked>) -> ErrorData {
    let because = match why {
        None => "new programs are denied (`[agents] new = \"deny\"` in settings.toml)",
        Some(Unasked::NoApp) => {
            "it has not been allowed yet and the Tidings app is not running to ask you"
        }
        Some(Unasked::Unanswered) => "it has not been allowed yet and no one answered in time",
    };
    ErrorData::new(
        ErrorCode(codes::FORBIDDEN),
        format!(
            "{} may not receive events: {because}; allow it in the Tidings window or run \
             `tidings agents allow {}`",
            agent.label(),
            agent.id
        ),
        Some(json!({ data::REASON: reason::AGENT_NOT_ALLOWED, "agent": agent.id })),
    )
}

fn too_many_asks() -> ErrorData {
    ErrorData::new(
        ErrorCode(codes::RESOURCE_EXHAUSTED),
        format!(
            "{MAX_ASKS} programs already wait for your answer in Tidings; answer them in the \
             Tidings window, or allow this one with `tidings agents allow ID` (`tidings agents` \
             lists the ids)"
        ),
        Some(json!({ data::REASON: reason::AGENT_ASKS, "max": MAX_ASKS })),
    )
}
