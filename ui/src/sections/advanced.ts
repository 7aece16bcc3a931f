// Advanced: the loopback HTTP endpoint (on/off, port, the bearer token shown, copied or
// rotated, and the agents' own tokens), notifications (a master switch and one per kind),
// start at login and updates (`./updates`).

import { call, messageOf } from "../bridge";
import type { Ctx, Model, Section } from "../context";
import { h, setText, uid } from "../dom";
import { copyText } from "../copy";
import { notificationLabel } from "../format";
import { agentTokens } from "./agent-tokens";
import { updatesGroup } from "./updates";
import type { NotificationKind, SettingsView } from "../model";

/** Ports below 1024 need root; the endpoint never asks for them. */
const MIN_PORT = 1024;
const MAX_PORT = 65535;

export function advancedSection(ctx: Ctx): Section {
  const httpId = uid("http");
  const httpToggle = h("input", { id: httpId, attrs: { type: "checkbox", role: "switch", "data-testid": "http-enabled" } });
  const portId = uid("port");
  const portMsgId = uid("port-msg");
  const port = h("input", {
    id: portId,
    class: "num wide",
    attrs: { type: "number", min: MIN_PORT, max: MAX_PORT, step: 1, inputmode: "numeric", "aria-describedby": portMsgId, "data-testid": "http-port" },
  });
  const portMsg = h("p", { id: portMsgId, class: "msg", attrs: { "aria-live": "polite" } });
  const httpError = h("p", { class: "msg error", attrs: { role: "alert" } });

  function portProblem(): string | null {
    const raw = port.value.trim();
    if (!/^\d+$/.test(raw) || Number(raw) < MIN_PORT || Number(raw) > MAX_PORT) {
      return `Port: a whole number from ${MIN_PORT} to ${MAX_PORT}.`;
    }
    return null;
  }
  async function applyHttp(): Promise<void> {
    const p = portProblem();
    if (p) return;
    try {
      ctx.applySettings(await call<SettingsView>("set_http", { enabled: httpToggle.checked, port: Number(port.value) }));
      setText(httpError, "");
    } catch (e) {
      setText(httpError, messageOf(e));
      const s = ctx.model.settings;
      if (s) httpToggle.checked = s.http.enabled;
    }
  }
  port.addEventListener("input", () => {
    const p = portProblem();
    port.setAttribute("aria-invalid", String(p !== null));
    setText(portMsg, p ?? "");
    portMsg.dataset.tone = p ? "error" : "";
  });
  port.addEventListener("change", () => void applyHttp());
  httpToggle.addEventListener("change", () => void applyHttp());

  // The token: masked until shown.
  const tokenId = uid("token");
  const token = h("input", {
    id: tokenId,
    class: "token",
    attrs: { type: "password", readonly: true, "data-testid": "http-token", spellcheck: "false" },
  });
  const show = h("button", { class: "btn show-w", text: "Show", attrs: { type: "button", "aria-pressed": "false", "aria-label": "Show token" } });
  const copy = h("button", { class: "btn", text: "Copy", attrs: { type: "button", "aria-label": "Copy token" } });
  const rotate = h("button", { class: "btn", text: "Rotate…", attrs: { type: "button", "aria-label": "Rotate token" } });
  const tokenMsg = h("p", { class: "msg", attrs: { "aria-live": "polite", "data-testid": "token-msg" } });
  show.addEventListener("click", () => {
    const shown = token.type === "text";
    token.type = shown ? "password" : "text";
    setText(show, shown ? "Show" : "Hide");
    show.setAttribute("aria-pressed", String(!shown));
  });
  copy.addEventListener("click", async () => {
    const t = ctx.model.settings?.http.token;
    if (!t) return;
    setText(tokenMsg, (await copyText(t)) ? "Token copied." : "Could not copy; select the token and copy it.");
  });
  let confirmRotate = false;
  rotate.addEventListener("click", async () => {
    if (!confirmRotate) {
      confirmRotate = true;
      setText(rotate, "Confirm");
      setText(tokenMsg, "Rotating logs out every HTTP client until it uses the new token. Press again to rotate.");
      return;
    }
    confirmRotate = false;
    setText(rotate, "Rotate…");
    try {
      ctx.applySettings(await call<SettingsView>("rotate_http_token"));
      setText(tokenMsg, "New token in force: update your clients.");
    } catch (e) {
      setText(tokenMsg, messageOf(e));
    }
  });
  rotate.addEventListener("blur", () => {
    if (confirmRotate) {
      confirmRotate = false;
      setText(rotate, "Rotate…");
      setText(tokenMsg, "");
    }
  });

  const tokens = agentTokens(ctx);

  const notifyId = uid("notify");
  const notify = h("input", { id: notifyId, attrs: { type: "checkbox", role: "switch", "data-testid": "notifications" } });
  const notifyError = h("p", { class: "msg error", attrs: { role: "alert" } });
  notify.addEventListener("change", async () => {
    const enabled = notify.checked;
    try {
      ctx.applySettings(await call<SettingsView>("set_notifications", { enabled }));
      setText(notifyError, "");
    } catch (e) {
      notify.checked = !enabled;
      setText(notifyError, messageOf(e));
    }
  });

  // One switch per kind, greyed out while the master switch is off (they keep their value).
  const kinds: NotificationKind[] = ["first_subscription", "full_disk_access", "store_rebuilt", "settings_rejected", "agent_asks"];
  const kindSwitches = new Map<NotificationKind, HTMLInputElement>();
  const kindList = h("div", { class: "kinds", attrs: { role: "group", "aria-label": "Notify me when" } });
  for (const kind of kinds) {
    const id = uid(`notify-${kind}`);
    const input = h("input", { id, attrs: { type: "checkbox", role: "switch", "data-testid": `notify-${kind}` } });
    input.addEventListener("change", async () => {
      const enabled = input.checked;
      try {
        ctx.applySettings(await call<SettingsView>("set_notification_kind", { kind, enabled }));
        setText(notifyError, "");
      } catch (e) {
        input.checked = !enabled;
        setText(notifyError, messageOf(e));
      }
    });
    kindSwitches.set(kind, input);
    kindList.append(h("label", { class: "switch", attrs: { for: id } }, input, h("span", { text: notificationLabel(kind) })));
  }

  // Start at login: the menu's item, as a switch with the engine's sentence under it.
  const loginId = uid("login");
  const login = h("input", { id: loginId, attrs: { type: "checkbox", role: "switch", "data-testid": "start-at-login" } });
  const loginText = h("p", { class: "msg", attrs: { "data-testid": "start-at-login-text" } });
  const approve = h("button", { class: "btn", text: "Open Login Items", attrs: { type: "button", "data-testid": "advanced-open-login-items" } });
  approve.addEventListener("click", async () => {
    try {
      await call("open_login_items");
    } catch (e) {
      setText(loginText, messageOf(e));
    }
  });
  login.addEventListener("change", async () => {
    const enabled = login.checked;
    try {
      ctx.applySettings(await call<SettingsView>("set_start_at_login", { enabled }));
    } catch (e) {
      login.checked = !enabled;
      setText(loginText, messageOf(e));
    }
  });

  const updates = updatesGroup(ctx);

  const panel = h(
    "section",
    {},
    h("h2", { text: "Advanced" }),
    h("h3", { text: "HTTP endpoint" }),
    h(
      "div",
      { class: "group" },
      h("label", { class: "switch", attrs: { for: httpId } }, httpToggle, h("span", { text: "Serve MCP over HTTP on this Mac (127.0.0.1 only)" })),
      h("div", { class: "row" }, h("label", { attrs: { for: portId }, text: "Port" }), port),
      portMsg,
      httpError,
      h(
        "div",
        { class: "row" },
        h("label", { attrs: { for: tokenId }, text: "Bearer token" }),
        token,
        show,
        copy,
        rotate,
      ),
      tokenMsg,
      tokens.el,
    ),
    h("h3", { text: "Notifications" }),
    h(
      "div",
      { class: "group" },
      h("label", { class: "switch", attrs: { for: notifyId } }, notify, h("span", { text: "Show a notification when something needs your attention" })),
      h("p", { class: "msg", text: "Notify me when:" }),
      kindList,
      notifyError,
    ),
    h("h3", { text: "Start at login" }),
    h(
      "div",
      { class: "group" },
      h("label", { class: "switch", attrs: { for: loginId } }, login, h("span", { text: "Start Tidings when you log in, and again if it stops" })),
      loginText,
      approve,
    ),
    h("h3", { text: "Updates" }),
    updates.el,
  );

  return {
    id: "advanced",
    title: "Advanced",
    panel,
    update(m: Model) {
      const s = m.settings;
      if (!s) return;
      httpToggle.checked = s.http.enabled;
      if (document.activeElement !== port) port.value = String(s.http.port);
      token.value = s.http.token ?? "";
      token.placeholder = s.http.token ? "" : "Created when the endpoint first starts";
      show.disabled = copy.disabled = !s.http.token;
      tokens.update(s);
      notify.checked = s.notifications;
      for (const k of s.notificationKinds ?? []) {
        const input = kindSwitches.get(k.kind);
        if (!input) continue;
        input.checked = k.enabled;
        input.disabled = !s.notifications;
      }
      approve.hidden = s.startAtLogin.state !== "requiresApproval";
      login.checked = s.startAtLogin.state === "enabled";
      setText(loginText, s.startAtLogin.text);
      updates.update(s);
    },
  };
}
