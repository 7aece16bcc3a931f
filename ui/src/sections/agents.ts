// One agent in the Clients section: what the OS says it is (never the name it announced,
// which is shown beside it as untrusted text), its grant per type (editable once it has one:
// a type switch, then every sender or only some of the type's allowlist), what it holds now,
// and Allow / Deny / Forget. Its connections are listed inside it by the Clients section.

import { call, messageOf } from "../bridge";
import type { Command } from "../commands";
import type { Ctx } from "../context";
import { h, replaceChildren, setText, uid } from "../dom";
import { plural, timeLabel, typeLabel } from "../format";
import type { AgentGrantView, AgentKind, AgentState, SettingsView, TypeGrantView, TypeView } from "../model";

export interface AgentCard {
  el: HTMLElement;
  /** Where the Clients section puts this agent's connections. */
  connections: HTMLElement;
  update(a: AgentState, settings: SettingsView | null): void;
}

/** "claude (signed by Anthropic PBC)": what the OS says the agent is. */
export function agentLabel(a: Pick<AgentState, "name" | "signer">): string {
  return a.signer ? `${a.name} (signed by ${a.signer})` : a.name;
}

function kindLabel(kind: AgentKind): string {
  switch (kind) {
    case "program":
      return "Program";
    case "signed":
      return "Signed app";
    case "token":
      return "HTTP token";
    case "unidentified":
      return "Unidentified";
  }
}

const ACCESS: Record<string, { text: string; tone: string }> = {
  allowed: { text: "Allowed", tone: "ok" },
  denied: { text: "Denied", tone: "bad" },
  asking: { text: "Asking", tone: "warn" },
  new: { text: "No decision", tone: "warn" },
};

/** The sentence for one type of a grant, as the card shows it when it cannot be edited. */
function grantWords(g: TypeGrantView | undefined, granted: boolean, senders: number | null): string {
  if (g === "none" || (!g && !granted)) return "nothing";
  if (g === "every" || (!g && senders === null)) return "every sender the allowlist lets through";
  const n = typeof g === "object" ? g.senders.length : (senders ?? 0);
  return `only ${plural(n, "sender", "senders")} of the allowlist`;
}

/** One type's editor: a switch, every sender or only some, and the allowlist's entries. */
function typeEditor(ctx: Ctx, agentId: () => string, ty: string, onError: (text: string) => void) {
  const label = typeLabel(ty);
  const switchId = uid("grant");
  const toggle = h("input", { id: switchId, attrs: { type: "checkbox", role: "switch", "data-testid": `grant-${ty}` } });
  const scope = h("select", { attrs: { "aria-label": `Which ${label} senders`, "data-testid": `grant-scope-${ty}` } },
    h("option", { text: "Every sender the allowlist lets through", attrs: { value: "every" } }),
    h("option", { text: "Only these senders", attrs: { value: "senders" } }),
  );
  const senders = h("ul", { class: "entries grant-senders", attrs: { "aria-label": `${label} senders granted`, "data-testid": `grant-senders-${ty}` } });
  const note = h("p", { class: "msg quiet" });
  let grant: TypeGrantView = "every";
  let entries: TypeView["entries"] = [];

  async function send(next: TypeGrantView): Promise<void> {
    try {
      ctx.applySettings(await call<SettingsView>("set_agent_type", { id: agentId(), eventType: ty, grant: next }));
      onError("");
    } catch (e) {
      onError(`Could not change ${label}: ${messageOf(e)}`);
    }
  }
  toggle.addEventListener("change", () => void send(toggle.checked ? "every" : "none"));
  scope.addEventListener("change", () => {
    // "Only these": start from every entry, so nothing is lost until one is unticked.
    void send(scope.value === "every" ? "every" : { senders: entries.map((e) => e.entry) });
  });

  const el = h("div", { class: "grant-type" },
    h("div", { class: "row" }, h("label", { class: "switch row-text", attrs: { for: switchId } }, toggle, h("span", { text: label })), scope),
    senders,
    note,
  );

  function update(g: TypeGrantView, type: TypeView | undefined) {
    grant = g;
    entries = type?.entries ?? [];
    toggle.checked = g !== "none";
    toggle.setAttribute("aria-label", `${label} for this agent`);
    scope.value = typeof g === "object" ? "senders" : "every";
    scope.disabled = g === "none" || (typeof g !== "object" && entries.length === 0);
    senders.hidden = typeof g !== "object";
    setText(note, g !== "none" && entries.length === 0 ? `The ${label} allowlist is empty: add senders to it in Event types first.` : "");
    if (typeof g !== "object") {
      replaceChildren(senders);
      return;
    }
    const picked = new Set(g.senders);
    const rows = entries.map((e) => {
      const id = uid("sender");
      const box = h("input", { id, attrs: { type: "checkbox", "data-entry": e.entry } });
      box.checked = picked.has(e.entry);
      // The last one stays: no sender at all is "off", which the switch says.
      box.disabled = box.checked && picked.size === 1;
      box.addEventListener("change", () => {
        const now = grant;
        if (typeof now !== "object") return;
        const next = box.checked ? entries.map((x) => x.entry).filter((x) => x === e.entry || now.senders.includes(x)) : now.senders.filter((x) => x !== e.entry);
        void send({ senders: next });
      });
      return h("li", {}, h("label", { class: "switch", attrs: { for: id } }, box, h("span", { class: "entry", text: e.label })));
    });
    for (const gone of g.senders.filter((s) => !entries.some((e) => e.entry === s))) {
      rows.push(h("li", { class: "muted" }, h("span", { class: "entry", text: gone }), h("span", { class: "small", text: "no longer on the allowlist: matches nobody" })));
    }
    replaceChildren(senders, ...rows);
  }

  return { el, update };
}

export function agentCard(ctx: Ctx, id: string, onError: (text: string) => void): AgentCard {
  const name = h("strong", { class: "client-name", attrs: { "data-testid": "agent-name" } });
  const badge = h("span", { class: "badge" });
  const kind = h("span", { class: "tag" });
  const program = h("p", { class: "path", attrs: { "data-testid": "agent-program" } });
  const announced = h("p", { class: "meta", attrs: { "data-testid": "agent-announced" } });
  const holds = h("p", { class: "meta", attrs: { "data-testid": "agent-holds" } });
  const fixed = h("ul", { class: "subs", attrs: { "data-testid": "agent-grants" } });
  const primary = h("button", { class: "btn", attrs: { type: "button", "data-testid": "agent-access" } });
  const forget = h("button", { class: "btn", text: "Forget", attrs: { type: "button", "data-testid": "agent-forget" } });
  const connections = h("ul", { class: "clients nested", attrs: { "aria-label": "Its connections" } });
  let current: AgentState | null = null;

  async function run(command: Command, args: Record<string, unknown>, what: string): Promise<void> {
    try {
      ctx.applySettings(await call<SettingsView>(command, args));
      onError("");
    } catch (e) {
      onError(`Could not ${what} ${current ? agentLabel(current) : id}: ${messageOf(e)}`);
    }
  }
  primary.addEventListener("click", () => {
    const a = current;
    if (!a) return;
    const allow = a.access !== "allowed";
    if (a.access === "asking") void run("answer_agent", { id, allow: true }, "allow");
    else void run("set_agent_access", { id, allow }, allow ? "allow" : "deny");
  });
  forget.addEventListener("click", () => void run("forget_agent", { id }, "forget"));

  const editors = ["mail.received", "messages.received"].map((ty) => ({ ty, editor: typeEditor(ctx, () => id, ty, onError) }));
  const editable = h("div", { class: "grant-edit", attrs: { "data-testid": "agent-grant-edit" } }, ...editors.map((e) => e.editor.el));

  const el = h(
    "li",
    { class: "client agent", attrs: { "data-agent-id": id } },
    h("div", { class: "row" }, h("div", { class: "row-text" }, name, kind, " ", badge), primary, forget),
    program,
    announced,
    h("h4", { text: "What it may receive" }),
    fixed,
    editable,
    holds,
    connections,
  );

  return {
    el,
    connections,
    update(a: AgentState, settings: SettingsView | null) {
      current = a;
      const label = agentLabel(a);
      setText(name, label);
      setText(kind, kindLabel(a.kind));
      const access = ACCESS[a.access] ?? ACCESS.new;
      setText(badge, access.text);
      badge.dataset.tone = access.tone;
      program.hidden = !a.program;
      setText(program, a.program ?? "");
      announced.hidden = a.announced.length === 0;
      setText(announced, a.announced.length ? `Announces itself as ${a.announced.map((n) => `“${n}”`).join(", ")} (what it says, not checked)` : "");
      const seen = a.lastSeenMs != null ? `last seen ${timeLabel(a.lastSeenMs)}` : "not seen since Tidings started";
      setText(holds, `${plural(a.connections, "connection", "connections")} · ${plural(a.streams, "stream", "streams")} · ${plural(a.delivered, "event", "events")} delivered · ${seen}`);

      const own: AgentGrantView | undefined = settings?.agentGrants.find((g) => g.id === id);
      // The grant is edited once it is in settings.toml; before, the card says what applies.
      editable.hidden = !own || a.access === "denied";
      fixed.hidden = !editable.hidden;
      if (own) {
        for (const { ty, editor } of editors) {
          const g = own.types.find((t) => t.eventType === ty)?.grant ?? "every";
          editor.update(g, settings?.types.find((t) => t.name === ty));
        }
      }
      const items = a.grants.map((g) => {
        const mine = own?.types.find((t) => t.eventType === g.eventType)?.grant;
        return h("li", {}, `${typeLabel(g.eventType)}: ${grantWords(mine, g.granted, g.senders)}`);
      });
      if (a.access === "denied") items.unshift(h("li", { text: "Nothing: it is denied, and every request it makes is refused." }));
      else if (a.access !== "allowed") {
        const policy = settings?.newAgents ?? "ask";
        const why = a.access === "asking" ? "It waits for your answer." : policy === "allow" ? "New programs are allowed, so it gets:" : policy === "deny" ? "New programs are denied: it gets nothing until you allow it." : "It will be asked about on its first request.";
        items.unshift(h("li", { class: "muted", text: why }));
      }
      replaceChildren(fixed, ...items);

      const verb = a.access === "allowed" ? "Deny" : "Allow";
      setText(primary, verb);
      primary.classList.toggle("primary", verb === "Allow" && a.access !== "denied");
      primary.setAttribute("aria-label", `${verb} ${label}`);
      forget.hidden = !own;
      forget.setAttribute("aria-label", `Forget ${label}`);
    },
  };
}
