// The webhooks the browser tests and the screenshots seed the fake bridge with: two
// destinations, a subscription that delivers and one suspended after its retries ran out, and
// an agent asking for a destination not on the list.

import { fixtures } from "./harness.mjs";

export const ACTIVE = "sub_3f9a1c2b7d4e5f60";
export const SUSPENDED = "sub_a07c55e1b2d3f489";
export const ASKED = "https://x.example";

/** `base` with webhooks: its first agent's two subscriptions and one question. */
export function webhooksSeed(base = fixtures()) {
  const s = base;
  const agent = s.state.agents[0] ?? { id: "claude-4f0e21", name: "claude" };
  const at = s.state.clients[0]?.connectedSinceMs ?? 1_796_049_387_711;
  const hook = (id, destination, eventType, extra) => ({
    id, eventType, destination, agent: agent.id, agentName: agent.name, filter: { domains: 1 },
    active: true, refreshBeforeMs: at + 86_400_000, lastDeliveryMs: at, lastError: null, failedSinceMs: null, delivered: 0, ...extra,
  });
  s.state.webhooks = {
    destinations: ["https://hooks.example.com", "http://127.0.0.1:8787"],
    subscriptions: [
      hook(ACTIVE, "https://hooks.example.com", "mail.received", { delivered: 42 }),
      hook(SUSPENDED, "http://127.0.0.1:8787", "messages.received", { active: false, lastError: "http_5xx", failedSinceMs: at - 600_000, delivered: 7, lastDeliveryMs: at - 900_000 }),
    ],
    asks: [{ origin: ASKED, agent: "python3 events_stream.py", sinceMs: at }],
  };
  return s;
}
