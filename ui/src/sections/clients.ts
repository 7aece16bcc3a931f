// Clients: the agents (programs, as the OS knows them) with their grants and Allow / Deny /
// Forget, what new programs get, and inside each agent its connections: the name each
// announced, transport and age, each subscription (filter summary, mode, delivered count),
// and Revoke. Rows are kept per agent and client id and updated in place, so a focused
// button survives live updates.

import { call, messageOf } from "../bridge";
import type { Ctx, Model, Section } from "../context";
import type { NewAgents, SettingsView } from "../model";
import { type AgentCard, agentCard } from "./agents";
import { h, replaceChildren, setText } from "../dom";
import { filterSummary, modeLabel, plural, timeLabel, typeLabel } from "../format";
import type { ClientState } from "../model";

interface Row {
  el: HTMLElement;
  update(c: ClientState): void;
}

function displayName(c: ClientState): string {
  return c.name?.trim() ? c.name : "Unnamed client";
}

function clientRow(id: number, onRevoke: (id: number, name: string) => Promise<void>): Row {
  const name = h("strong", { class: "client-name" });
  const version = h("span", { class: "muted" });
  const meta = h("p", { class: "meta" });
  const subs = h("ul", { class: "subs" });
  const revoke = h("button", { class: "btn fixed-w", attrs: { type: "button" } });
  let current = "";
  revoke.addEventListener("click", () => void onRevoke(id, current));
  const el = h(
    "li",
    { class: "client", attrs: { "data-client-id": id } },
    h("div", { class: "row" }, h("div", { class: "row-text" }, name, " ", version), revoke),
    meta,
    subs,
  );
  return {
    el,
    update(c) {
      current = displayName(c);
      setText(name, current);
      setText(version, c.version ? `v${c.version}` : "");
      const transport = c.transport === "http" ? "HTTP" : "Socket";
      setText(
        meta,
        `${transport} · connected since ${timeLabel(c.connectedSinceMs)}${c.pid != null ? ` · pid ${c.pid}` : ""}${c.revoked ? " · revoked: gets Forbidden until it reconnects" : ""}`,
      );
      setText(revoke, c.revoked ? "Revoked" : "Revoke");
      revoke.disabled = c.revoked;
      revoke.setAttribute("aria-label", c.revoked ? `${current} is revoked` : `Revoke ${current}`);
      const items = c.subscriptions.map((s) =>
        h(
          "li",
          {},
          `${typeLabel(s.eventType)} · ${modeLabel(s.mode)} · ${filterSummary(s)} · ${plural(s.delivered, "event", "events")} delivered`,
        ),
      );
      if (!items.length) items.push(h("li", { class: "muted", text: "No subscriptions yet." }));
      replaceChildren(subs, ...items);
    },
  };
}

const NEW_AGENTS: { value: NewAgents; text: string }[] = [
  { value: "ask", text: "Ask me" },
  { value: "allow", text: "Allow" },
  { value: "deny", text: "Deny" },
];

export function clientsSection(ctx: Ctx): Section {
  const agentsCount = h("p", { class: "lede", attrs: { "data-testid": "agents-count" } });
  const count = h("p", { class: "lede", attrs: { "data-testid": "clients-count" } });
  const newAgents = h("select", { id: "new-agents", attrs: { "data-testid": "new-agents" } },
    ...NEW_AGENTS.map((o) => h("option", { text: o.text, attrs: { value: o.value } })));
  const agents = h("ul", { class: "clients", attrs: { "aria-label": "Agents" } });
  const list = h("ul", { class: "clients", attrs: { "aria-label": "Connected clients" } });
  const others = h("h3", { text: "Connections of no agent listed" });
  const empty = h("p", {
    class: "empty",
    text: "No client is connected. Agents connect through the socket or the HTTP endpoint.",
  });
  const error = h("p", { class: "msg error", attrs: { role: "alert" } });
  const rows = new Map<number, Row>();
  const cards = new Map<string, AgentCard>();
  const say = (text: string): void => setText(error, text);

  newAgents.addEventListener("change", async () => {
    try {
      ctx.applySettings(await call<SettingsView>("set_new_agents", { new: newAgents.value }));
      say("");
    } catch (e) {
      say(`Could not change what new programs get: ${messageOf(e)}`);
    }
  });

  async function revoke(id: number, name: string): Promise<void> {
    try {
      await call<null>("revoke_client", { id });
      setText(error, "");
    } catch (e) {
      setText(error, `Could not revoke ${name}: ${messageOf(e)}`);
    }
  }

  const panel = h(
    "section",
    {},
    h("h2", { text: "Clients" }),
    agentsCount,
    count,
    h("div", { class: "row" }, h("label", { class: "row-text", attrs: { for: "new-agents" }, text: "When a new program connects" }), newAgents),
    h("p", { class: "muted small", text: "Tidings knows each agent by its program, never by the name it announces. A new one can be asked about, let in, or kept out until you allow it." }),
    error,
    agents,
    others,
    list,
    empty,
  );
  return {
    id: "clients",
    title: "Clients",
    panel,
    update(m: Model) {
      const all = m.state?.agents ?? [];
      const clients = m.state?.clients ?? [];
      setText(agentsCount, `${plural(all.length, "agent", "agents")} known.`);
      setText(count, `${plural(clients.length, "client", "clients")} connected.`);
      if (m.settings && document.activeElement !== newAgents) newAgents.value = m.settings.newAgents;
      empty.hidden = clients.length > 0 || all.length > 0;

      const seenAgents = new Set<string>();
      all.forEach((a, i) => {
        seenAgents.add(a.id);
        let card = cards.get(a.id);
        if (!card) {
          card = agentCard(ctx, a.id, say);
          cards.set(a.id, card);
        }
        card.update(a, m.settings);
        if (agents.children[i] !== card.el) agents.insertBefore(card.el, agents.children[i] ?? null);
      });
      for (const [id, card] of cards) {
        if (!seenAgents.has(id)) {
          card.el.remove();
          cards.delete(id);
        }
      }

      // Each connection inside its agent; one of no agent listed (a State from before agents,
      // or an agent just gone) in the list below.
      const seen = new Set<number>();
      const placed = new Map<HTMLElement, number>();
      let loose = 0;
      clients.forEach((c) => {
        seen.add(c.id);
        let row = rows.get(c.id);
        if (!row) {
          row = clientRow(c.id, revoke);
          rows.set(c.id, row);
        }
        row.update(c);
        const home = (c.agent && cards.get(c.agent)?.connections) || list;
        const i = placed.get(home) ?? 0;
        placed.set(home, i + 1);
        if (home === list) loose += 1;
        if (home.children[i] !== row.el) home.insertBefore(row.el, home.children[i] ?? null);
      });
      others.hidden = loose === 0 || all.length === 0;
      for (const [id, row] of rows) {
        if (!seen.has(id)) {
          row.el.remove();
          rows.delete(id);
        }
      }
    },
  };
}
