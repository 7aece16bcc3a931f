// Clients: each connected client by the name it announced, its transport and age, each
// subscription (filter summary, mode, delivered count), and Revoke. Rows are kept per client
// id and updated in place, so a focused Revoke button survives live updates.

import { call, messageOf } from "../bridge";
import type { Ctx, Model, Section } from "../context";
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

export function clientsSection(ctx: Ctx): Section {
  void ctx;
  const count = h("p", { class: "lede", attrs: { "data-testid": "clients-count" } });
  const list = h("ul", { class: "clients", attrs: { "aria-label": "Connected clients" } });
  const empty = h("p", {
    class: "empty",
    text: "No client is connected. Agents connect through the socket or the HTTP endpoint.",
  });
  const error = h("p", { class: "msg error", attrs: { role: "alert" } });
  const rows = new Map<number, Row>();

  async function revoke(id: number, name: string): Promise<void> {
    try {
      await call<null>("revoke_client", { id });
      setText(error, "");
    } catch (e) {
      setText(error, `Could not revoke ${name}: ${messageOf(e)}`);
    }
  }

  const panel = h("section", {}, h("h2", { text: "Clients" }), count, error, list, empty);
  return {
    id: "clients",
    title: "Clients",
    panel,
    update(m: Model) {
      const clients = m.state?.clients ?? [];
      setText(count, `${plural(clients.length, "client", "clients")} connected.`);
      empty.hidden = clients.length > 0;
      const seen = new Set<number>();
      clients.forEach((c, i) => {
        seen.add(c.id);
        let row = rows.get(c.id);
        if (!row) {
          row = clientRow(c.id, revoke);
          rows.set(c.id, row);
        }
        row.update(c);
        if (list.children[i] !== row.el) list.insertBefore(row.el, list.children[i] ?? null);
      });
      for (const [id, row] of rows) {
        if (!seen.has(id)) {
          row.el.remove();
          rows.delete(id);
        }
      }
    },
  };
}
