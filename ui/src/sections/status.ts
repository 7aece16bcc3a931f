// Status: each store in one sentence with its fix, pause, the socket, the HTTP endpoint and
// the settings file.

import { call, messageOf } from "../bridge";
import type { Ctx, Model, Section } from "../context";
import { h, setText } from "../dom";
import { httpSentence, plural, settingsSentence, storeBadge, storeSentence, timeLabel, typeLabel } from "../format";
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

  const stores = h("div", { class: "group", attrs: { "data-testid": "stores" } });
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
    h("h3", { text: "Stores" }),
    stores,
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
    setText(socket, st.socket ?? "not serving a socket");
    setText(http, httpSentence(st.http));
    setText(file, settingsSentence(st.settings));
    setText(version, st.version);
  }

  return { id: "status", title: "Status", panel, update };
}
