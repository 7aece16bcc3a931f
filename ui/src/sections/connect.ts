// Connect: one row per MCP host Tidings can set up, as `list_hosts` returns them (the list
// lives in tidings_platform::hosts: Claude Code, Claude Desktop, Cursor, VS Code, Codex, Zed,
// Gemini CLI, Goose, Windsurf, LM Studio): its config file, whether Tidings is configured there
// and connected now, a mode choice, Connect / Disconnect with the check's result inline
// ("Connected ✓" or the failure), the restart warning, and the snippet to copy. Rows are kept
// per host id.

import { call, messageOf } from "../bridge";
import type { Ctx, Model, Section } from "../context";
import { copyText } from "../copy";
import { h, setText, uid } from "../dom";
import type { ConnectOutcome, HostView } from "../model";

interface Row {
  el: HTMLElement;
  update(v: HostView): void;
}

const MODE_LABELS: Record<string, string> = {
  tools: "Tools",
  events: "Events",
  channel: "Channel",
};

function stateLine(v: HostView): string {
  if (v.problem) return `Cannot read the config: ${v.problem}`;
  const configured = v.configured ? `Configured (${v.configured})` : "Not configured";
  const connected = v.connected == null ? "" : v.connected > 0 ? " · connected now" : " · not connected now";
  return configured + connected;
}

function hostRow(id: string, name: string, refresh: () => Promise<void>): Row {
  const title = h("strong", { class: "client-name", text: name });
  const state = h("span", { class: "muted", attrs: { "data-testid": `host-state-${id}` } });
  const path = h("p", { class: "meta", attrs: { "data-testid": `host-path-${id}` } });
  const modeId = uid("mode");
  const mode = h("select", { id: modeId, attrs: { "aria-label": `${name} mode`, "data-testid": `host-mode-${id}` } });
  const connect = h("button", { class: "btn", text: "Connect", attrs: { type: "button", "aria-label": `Connect ${name}` } });
  const disconnect = h("button", { class: "btn", text: "Disconnect", attrs: { type: "button", "aria-label": `Disconnect ${name}` } });
  const copy = h("button", { class: "btn", text: "Copy snippet", attrs: { type: "button", "aria-label": `Copy the ${name} snippet` } });
  const result = h("p", { class: "msg host-msg", attrs: { "aria-live": "polite", "data-testid": `host-result-${id}` } });
  const warn = h("p", { class: "msg warn host-msg", attrs: { role: "status", "data-testid": `host-warn-${id}` } });
  let snippet: string | null = null;
  let modes = "";

  function show(outcome: ConnectOutcome, done: string): void {
    const v = outcome.verification;
    setText(result, v ? v.message : done);
    result.dataset.tone = v && !v.ok ? "error" : "ok";
    const backup = outcome.backup ? ` Backup: ${outcome.backup}` : "";
    setText(warn, [outcome.restart ?? "", backup.trim()].filter(Boolean).join(" "));
  }
  async function run(cmd: "connect_host" | "disconnect_host", busy: string, done: string): Promise<void> {
    connect.disabled = disconnect.disabled = true;
    setText(result, busy);
    result.dataset.tone = "";
    try {
      const args = cmd === "connect_host" ? { id, mode: mode.value } : { id };
      show(await call<ConnectOutcome>(cmd, args), done);
    } catch (e) {
      setText(result, messageOf(e));
      result.dataset.tone = "error";
    } finally {
      connect.disabled = false;
      await refresh();
    }
  }
  connect.addEventListener("click", () => void run("connect_host", "Connecting and checking…", ""));
  disconnect.addEventListener("click", () => void run("disconnect_host", "Removing…", `Removed Tidings from ${name}.`));
  copy.addEventListener("click", async () => {
    if (!snippet) return;
    setText(result, (await copyText(snippet)) ? "Snippet copied." : "Could not copy the snippet.");
    result.dataset.tone = "";
  });

  const el = h(
    "li",
    { class: "client", attrs: { "data-host-id": id } },
    h("div", { class: "row" }, h("div", { class: "row-text" }, title, " ", state)),
    path,
    h("div", { class: "row" }, h("label", { class: "muted", text: "Mode ", attrs: { for: modeId } }), mode, connect, disconnect, copy),
    result,
    warn,
  );
  return {
    el,
    update(v) {
      setText(state, stateLine(v));
      setText(path, v.path);
      const key = v.modes.join(",");
      if (key !== modes) {
        modes = key;
        mode.replaceChildren(...v.modes.map((m) => h("option", { text: MODE_LABELS[m] ?? m, attrs: { value: m } })));
      }
      if (v.configured && document.activeElement !== mode) mode.value = v.configured;
      setText(connect, v.configured ? "Reconnect" : "Connect");
      disconnect.disabled = !v.configured;
      snippet = v.snippet;
      copy.disabled = !snippet;
      if (v.running && !warn.textContent) setText(warn, `${name} is running: restart it after a change.`);
    },
  };
}

export function connectSection(ctx: Ctx): Section {
  void ctx;
  const lede = h("p", {
    class: "lede",
    text: "Point an MCP client at Tidings. Only Tidings' entry in its config changes; the old file is backed up first.",
  });
  const list = h("ul", { class: "clients", attrs: { "aria-label": "MCP clients" } });
  const error = h("p", { class: "msg error", attrs: { role: "alert" } });
  const rows = new Map<string, Row>();
  let lastNames = "";

  async function refresh(): Promise<void> {
    try {
      const hosts = await call<HostView[]>("list_hosts");
      setText(error, "");
      hosts.forEach((v, i) => {
        let row = rows.get(v.id);
        if (!row) {
          row = hostRow(v.id, v.name, refresh);
          rows.set(v.id, row);
        }
        row.update(v);
        if (list.children[i] !== row.el) list.insertBefore(row.el, list.children[i] ?? null);
      });
    } catch (e) {
      setText(error, `Could not list the clients: ${messageOf(e)}`);
    }
  }

  const panel = h("section", {}, h("h2", { text: "Connect" }), lede, error, list);
  return {
    id: "connect",
    title: "Connect",
    panel,
    update(m: Model) {
      // Who is connected now follows the State; the configs are read again when it changes.
      const names = (m.state?.clients ?? []).map((c) => c.name ?? "").join("\n");
      if (m.state && names === lastNames && rows.size) return;
      lastNames = names;
      void refresh();
    },
  };
}
