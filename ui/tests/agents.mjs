// The agents the browser tests and the screenshots seed the fake bridge with: the captured
// demo State's one agent (the program behind its three clients) made a signed Claude Code
// that is allowed, a Python script that asks, and an unsigned program the user denied.

import { fixtures } from "./harness.mjs";

// The captured agent's id, as the engine's identity module gives it.
export const CLAUDE = fixtures().state.agents[0].id;
export const SCRIPT = "python3-host-a-7c1e20";
export const DENIED = "mcp-bridge-94b0aa";

/** The fixtures with three agents, one of them asking for mail. */
export function agentsSeed(base = fixtures()) {
  const s = base;
  const [claude] = s.state.agents;
  Object.assign(claude, {
    name: "claude",
    signer: "Anthropic PBC",
    kind: "signed",
    identity: "signed:Q6L2SF6YDW:com.anthropic.claude-code",
    program: "/Applications/Claude Code.app/Contents/MacOS/claude",
    announced: ["Claude Code"],
    access: "allowed",
  });
  claude.grants[1].senders = 1;
  const at = claude.lastSeenMs;
  s.state.agents.push(
    {
      id: SCRIPT, identity: "exe:/usr/bin/python3 script:/Users/you/agents/host_a.py", name: "python3 host_a.py", signer: null,
      program: "/Users/you/agents/host_a.py", kind: "program", announced: ["host-a"], access: "asking",
      grants: s.settings.types.map((t) => ({ eventType: t.name, granted: true, senders: null })),
      asking: "mail.received", connections: 1, streams: 0, delivered: 0, lastSeenMs: at,
    },
    {
      id: DENIED, identity: "exe:/usr/local/bin/mcp-bridge", name: "mcp-bridge", signer: null, program: "/usr/local/bin/mcp-bridge",
      kind: "program", announced: ["Claude Desktop"], access: "denied",
      grants: s.settings.types.map((t) => ({ eventType: t.name, granted: false, senders: null })),
      asking: null, connections: 0, streams: 0, delivered: 12, lastSeenMs: at - 3_600_000,
    },
  );
  s.settings.newAgents = "ask";
  s.settings.asks = [{ id: SCRIPT, agent: "python3 host_a.py", wants: "new mail from example.com", eventType: "mail.received", sinceMs: at }];
  s.settings.agentGrants = [
    { id: CLAUDE, types: [{ eventType: "mail.received", grant: "every" }, { eventType: "messages.received", grant: { senders: [s.settings.types[1].allow[0]] } }] },
    { id: DENIED, types: s.settings.types.map((t) => ({ eventType: t.name, grant: "every" })) },
  ];
  return s;
}
