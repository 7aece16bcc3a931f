// Status: each store in one sentence with its fix, Full Disk Access (the pane, a restart), a
// login item waiting for approval, pause, the socket, the HTTP endpoint and the settings file;
// one line when Contacts cannot be read.

import { call, messageOf } from "../bridge";
import type { Ctx, Model, Section } from "../context";
import { h, setText } from "../dom";
import { FULL_DISK_ACCESS_OWNER, contactsSentence, fullDiskAccessSentence, httpSentence, plural, settingsSentence, storeBadge, storeSentence, timeLabel, typeLabel } from "../format";
import type { SettingsView } from "../model";

export function statusSection(ctx: Ctx): Section {
  const headline = h("p", { class: "headline", attrs: { "data-testid": "headline" } });
  const pauseText = h("span", { class: "row-text" });
  const pauseButton = h("button", { class: "btn fixed-w", attrs: { type: "button" } });
  const pauseError = h("p", { class: "msg error", attrs: { role: "alert" } });
  pauseButton.addEventListener("click", async () => {
    const paused = ctx.model.settings?.pausedUntilMs != null;
    try {
      ctx.applySettings(
        paused
          ? await call<SettingsView>("resume_all")
          : await call<SettingsView>("pause_all", { minutes: 60 }),
      );
      setText(pauseError, "");
    } catch (e) {
      setText(pauseError, messageOf(e));
    }
  });

  // Full Disk Access: macOS applies a grant only to a process started after it, so while it
  // is missing (or stale) the restart is offered beside the pane (docs/decisions/app.md).
  const fdaBadge = h("span", { class: "badge" });
  const fdaSentence = h("p", { class: "sentence", attrs: { "data-testid": "fda-state" } });
  const openFda = h("button", { class: "btn", text: "Open Full Disk Access Settings", attrs: { type: "button", "data-testid": "open-fda" } });
  const restart = h("button", { class: "btn", text: "Restart Tidings", attrs: { type: "button", "data-testid": "restart" } });
  const fdaButtons = h("div", { class: "row" }, openFda, restart);
  const fdaMsg = h("p", { class: "msg quiet", attrs: { role: "status", "data-testid": "fda-msg" } });
  openFda.addEventListener("click", async () => {
    try {
      await call("open_full_disk_access");
      setText(fdaMsg, "Turn Tidings on in the list (add it with + if it is missing), then press Restart Tidings.");
    } catch (e) {
      setText(fdaMsg, messageOf(e));
    }
  });
  restart.addEventListener("click", async () => {
    setText(fdaMsg, "Restarting…");
    try {
      await call("restart_app");
    } catch (e) {
      setText(fdaMsg, messageOf(e));
    }
  });
  const fda = h(
    "div",
    { class: "group", attrs: { "data-testid": "fda" } },
    h("div", { class: "row spread" }, h("strong", { text: "Full Disk Access" }), fdaBadge),
    fdaSentence,
    h("p", { class: "msg", text: FULL_DISK_ACCESS_OWNER }),
    fdaButtons,
    fdaMsg,
  );

  // Start at login waiting for the user's yes in Login Items (macOS 13+).
  const approveText = h("span", { class: "row-text", attrs: { "data-testid": "login-approval" } });
  const approve = h("button", { class: "btn", text: "Open Login Items", attrs: { type: "button", "data-testid": "open-login-items" } });
  const approveMsg = h("p", { class: "msg error", attrs: { role: "alert" } });
  approve.addEventListener("click", async () => {
    try {
      await call("open_login_items");
      setText(approveMsg, "");
    } catch (e) {
      setText(approveMsg, messageOf(e));
    }
  });
  const approval = h("div", { class: "group" }, h("div", { class: "row" }, approveText, approve), approveMsg);
  approval.hidden = true;

  const stores = h("div", { class: "group", attrs: { "data-testid": "stores" } });
  const contactsLine = h("p", { class: "notice-line", attrs: { "data-testid": "status-contacts", "data-tone": "warn" } });
  contactsLine.hidden = true;
  const storeRows = new Map<string, { badge: HTMLElement; sentence: HTMLElement; path: HTMLElement }>();
  const socket = h("code", { class: "path", attrs: { "data-testid": "socket" } });
  const http = h("span", { attrs: { "data-testid": "http-state" } });
  const file = h("span", { attrs: { "data-testid": "settings-file" } });
  const version = h("span");

  const panel = h(
    "section",
    {},
    h("h2", { text: "Status" }),
    headline,
    h("div", { class: "group" }, h("div", { class: "row" }, pauseText, pauseButton), pauseError),
    approval,
    h("h3", { text: "Stores" }),
    stores,
    contactsLine,
    fda,
    h("h3", { text: "Connections" }),
    h(
      "dl",
      { class: "group facts" },
      h("dt", { text: "Socket" }),
      h("dd", {}, socket),
      h("dt", { text: "HTTP endpoint" }),
      h("dd", {}, http),
      h("dt", { text: "Settings file" }),
      h("dd", {}, file),
      h("dt", { text: "Version" }),
      h("dd", {}, version),
    ),
  );

  function update(m: Model): void {
    const st = m.state;
    if (m.settings) {
      const until = m.settings.pausedUntilMs;
      setText(pauseText, until != null ? `All event types are paused until ${timeLabel(until)}.` : "Events are delivered as they arrive.");
      setText(pauseButton, until != null ? "Resume" : "Pause all for 1 hour");
      const login = m.settings.startAtLogin;
      approval.hidden = login.state !== "requiresApproval";
      setText(approveText, login.state === "requiresApproval" ? login.text : "");
      const contacts = contactsSentence(m.settings.contacts);
      contactsLine.hidden = contacts === null;
      setText(contactsLine, contacts ?? "");
    }
    if (!st) return;
    const listening = st.clients.filter((c) => !c.revoked).length;
    setText(
      headline,
      `${plural(listening, "client", "clients")} connected, ${plural(st.streams, "stream", "streams")} open.`,
    );
    for (const t of st.types) {
      let row = storeRows.get(t.name);
      if (!row) {
        const badge = h("span", { class: "badge" });
        const sentence = h("p", { class: "sentence" });
        const path = h("code", { class: "path" });
        stores.append(
          h(
            "div",
            { class: "store", attrs: { "data-type": t.name } },
            h("div", { class: "row" }, h("strong", { text: `${typeLabel(t.name)} store` }), badge),
            sentence,
            path,
          ),
        );
        row = { badge, sentence, path };
        storeRows.set(t.name, row);
      }
      const b = storeBadge(t.store);
      setText(row.badge, b.text);
      row.badge.dataset.tone = b.tone;
      setText(row.sentence, storeSentence(typeLabel(t.name), t.store));
      setText(row.path, t.store.path);
    }
    const access = st.fullDiskAccess?.state ?? "unknown";
    const needed = access === "missing" || access === "stale";
    setText(fdaSentence, fullDiskAccessSentence(st.fullDiskAccess));
    setText(fdaBadge, { granted: "Granted", missing: "Missing", stale: "Lost in the update", unknown: "Not checked" }[access]);
    fdaBadge.dataset.tone = access === "granted" ? "ok" : needed ? "bad" : "warn";
    fdaButtons.hidden = !needed;
    setText(socket, st.socket ?? "not serving a socket");
    setText(http, httpSentence(st.http));
    setText(file, settingsSentence(st.settings));
    setText(version, st.version);
  }

  return { id: "status", title: "Status", panel, update };
}
