// Webhooks: the destinations events may be posted to (`[webhooks] allow`), with a field to
// add one (refusals shown inline) and Remove per row; each webhook subscription by its
// destination only (never its URL's path, never its secret) with its type, agent, state,
// last delivery, last error category and count, and End; and, above every section, a row per
// destination an agent asked for, with Allow / Don't Allow. Everything an agent chose (the
// origin, its name) is set as text.

import { call, messageOf } from "../bridge";
import type { Ctx, Model, Section } from "../context";
import { h, replaceChildren, setText, uid } from "../dom";
import { plural, timeLabel, typeLabel } from "../format";
import type { SettingsView, State } from "../model";

type Webhooks = State["webhooks"];
type Hook = Webhooks["subscriptions"][number];

/** Rebuild `el`'s rows only when what they show changed, so a focused button survives. */
function keyed(el: HTMLElement & { _key?: string }, key: string, rows: () => Node[]): void {
  if (el._key === key) return;
  el._key = key;
  replaceChildren(el, ...rows());
}

export function webhooksSection(ctx: Ctx): Section {
  const destinations = h("ul", { class: "entries", attrs: { "aria-label": "Webhook destinations", "data-testid": "destinations" } });
  const inputId = uid("destination");
  const input = h("input", {
    id: inputId,
    attrs: { type: "text", placeholder: "https://hooks.example.com", spellcheck: "false", autocomplete: "off", "data-testid": "destination-input" },
  });
  const add = h("button", { class: "btn", text: "Add", attrs: { type: "button", "data-testid": "destination-add" } });
  const msg = h("p", { class: "msg error", attrs: { role: "alert", "data-testid": "destination-error" } });
  const count = h("p", { class: "msg", attrs: { "data-testid": "webhooks-count" } });
  const subs = h("ul", { class: "webhooks", attrs: { "aria-label": "Webhook subscriptions", "data-testid": "webhook-subscriptions" } });
  const subsError = h("p", { class: "msg error", attrs: { role: "alert", "data-testid": "webhook-error" } });
  const none = h("p", { class: "muted", text: "No agent has a webhook subscription." });

  async function allow(): Promise<void> {
    const origin = input.value.trim();
    if (!origin) {
      setText(msg, "Type an origin such as https://hooks.example.com.");
      return;
    }
    try {
      ctx.applySettings(await call<SettingsView>("allow_destination", { origin }));
      input.value = "";
      setText(msg, "");
    } catch (e) {
      setText(msg, messageOf(e));
    }
  }
  add.addEventListener("click", () => void allow());
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") void allow();
  });

  async function remove(origin: string): Promise<void> {
    try {
      ctx.applySettings(await call<SettingsView>("remove_destination", { origin }));
      setText(msg, "");
    } catch (e) {
      setText(msg, `Could not remove ${origin}: ${messageOf(e)}`);
    }
  }

  async function end(hook: Hook): Promise<void> {
    try {
      ctx.applySettings(await call<SettingsView>("end_webhook", { id: hook.id }));
      setText(subsError, "");
    } catch (e) {
      setText(subsError, `Could not end the subscription to ${hook.destination}: ${messageOf(e)}`);
    }
  }

  function destinationRow(origin: string, hooks: number): HTMLElement {
    return h("li", { attrs: { "data-destination": origin } },
      h("span", { class: "entry", text: origin }),
      h("span", { class: "msg quiet", text: plural(hooks, "subscription", "subscriptions") }),
      h("button", {
        class: "btn",
        text: "Remove",
        attrs: { type: "button", "aria-label": `Remove ${origin}` },
        on: { click: () => void remove(origin) },
      }));
  }

  function hookRow(s: Hook): HTMLElement {
    const state = s.active
      ? h("span", { class: "badge", text: "Active", attrs: { "data-tone": "ok" } })
      : h("span", { class: "badge", text: "Suspended", attrs: { "data-tone": "bad" } });
    const last = s.lastDeliveryMs === null ? "nothing delivered yet" : `last delivery ${timeLabel(s.lastDeliveryMs)}`;
    const parts = [plural(s.delivered, "event delivered", "events delivered"), last];
    if (s.lastError) parts.push(`last error: ${s.lastError}`);
    if (!s.active && s.failedSinceMs !== null) parts.push(`failing since ${timeLabel(s.failedSinceMs)}`);
    return h("li", { class: "webhook", attrs: { "data-webhook-id": s.id } },
      h("div", { class: "row" },
        h("div", { class: "row-text" },
          h("strong", { class: "entry", text: s.destination }), " ",
          h("span", { class: "muted", text: `${typeLabel(s.eventType)} for ${s.agentName}` }), " ",
          state),
        h("button", {
          class: "btn",
          text: "End",
          attrs: { type: "button", "aria-label": `End ${s.agentName}'s subscription to ${s.destination}` },
          on: { click: () => void end(s) },
        })),
      h("p", { class: "meta", text: parts.join(" · ") }));
  }

  const panel = h(
    "section",
    {},
    h("h2", { text: "Webhooks" }),
    h("p", { class: "muted small", text: "An agent can have new mail or messages posted to a URL. Tidings posts only to the destinations listed here: https:// for any host, http:// only for this Mac. Removing one ends its subscriptions." }),
    h("h3", { text: "Destinations" }),
    destinations,
    h("div", { class: "row" }, h("label", { attrs: { for: inputId }, text: "Allow" }), input, add),
    msg,
    h("h3", { text: "Subscriptions" }),
    count,
    subs,
    none,
    subsError,
  );

  return {
    id: "webhooks",
    title: "Webhooks",
    panel,
    update(m: Model) {
      const w = m.state?.webhooks ?? { destinations: [], subscriptions: [], asks: [] };
      keyed(destinations, JSON.stringify([w.destinations, w.subscriptions.map((s) => s.destination)]), () =>
        w.destinations.length
          ? w.destinations.map((o) => destinationRow(o, w.subscriptions.filter((s) => s.destination === o).length))
          : [h("li", { class: "muted", text: "No destinations: agents cannot have events posted anywhere." })]);
      const suspended = w.subscriptions.filter((s) => !s.active).length;
      setText(count, `${plural(w.subscriptions.length, "subscription", "subscriptions")}${suspended ? `, ${suspended} suspended` : ""}.`);
      keyed(subs, JSON.stringify(w.subscriptions), () => w.subscriptions.map(hookRow));
      none.hidden = w.subscriptions.length > 0;
    },
  };
}

/** The rows above every section while an agent asked for a destination not on the list. */
export function destinationAsks(ctx: Ctx): { element: HTMLElement; update(m: Model): void } {
  const list = h("ul", { class: "asks", attrs: { "aria-label": "Agents asking to post events" } });
  const error = h("p", { class: "msg error", attrs: { role: "alert", "data-testid": "destination-ask-error" } });
  const element = h("div", { class: "ask-bar", attrs: { role: "region", "aria-label": "Destinations asked for", "data-testid": "destination-asks" } }, list, error);
  element.hidden = true;

  async function answer(origin: string, agent: string, allow: boolean): Promise<void> {
    try {
      ctx.applySettings(await call<SettingsView>("answer_destination", { origin, allow }));
      setText(error, "");
    } catch (e) {
      setText(error, `Could not answer ${agent}: ${messageOf(e)}`);
    }
  }

  function update(m: Model): void {
    const asks = m.state?.webhooks?.asks ?? [];
    element.hidden = asks.length === 0;
    keyed(list, JSON.stringify(asks.map((a) => [a.origin, a.agent])), () =>
      asks.map((a) => h("li", { class: "ask", attrs: { "data-destination-ask": a.origin } },
        h("div", { class: "row" },
          h("div", { class: "row-text" },
            h("strong", { class: "ask-agent", text: a.agent }), " wants to post events to ",
            h("strong", { class: "entry", text: a.origin }),
            h("span", { class: "notice-more", text: "Allow adds it to your webhook destinations; the agent can then subscribe again. Don't Allow leaves the list as it is." })),
          h("button", { class: "btn", text: "Don't Allow", attrs: { type: "button", "aria-label": `Don't allow posting to ${a.origin}` }, on: { click: () => void answer(a.origin, a.agent, false) } }),
          h("button", { class: "btn primary", text: "Allow", attrs: { type: "button", "aria-label": `Allow posting to ${a.origin}` }, on: { click: () => void answer(a.origin, a.agent, true) } })))));
  }

  return { element, update };
}
