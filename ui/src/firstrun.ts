// The first-run walk-through, shown once when no settings file existed: what Tidings does,
// the store check, one type on with a first allowlist entry (and, if the user wants, names
// from Contacts in its events), the snippet to connect a client.
// Done calls `finish_first_run`; the app then stops reporting `firstRun`.

import { call, messageOf } from "./bridge";
import type { Ctx, Model } from "./context";
import { copyText } from "./copy";
import { h, setText, uid } from "./dom";
import { checkSentence, namesExample, storeSentence, typeLabel } from "./format";
import type { AllowCheck, SettingsView } from "./model";

export interface FirstRun {
  dialog: HTMLDialogElement;
  update(m: Model): void;
}

export function firstRun(ctx: Ctx): FirstRun {
  const stores = h("ul", { class: "checks", attrs: { "data-testid": "firstrun-stores" } });

  const reach = h("p", { class: "reach", attrs: { "data-testid": "firstrun-reach" } });
  const typeId = uid("fr-type");
  const typeSelect = h("select", { id: typeId, attrs: { "data-testid": "firstrun-type" } });
  const entryId = uid("fr-entry");
  const entryMsgId = uid("fr-msg");
  const entry = h("input", {
    id: entryId,
    attrs: { type: "text", autocomplete: "off", spellcheck: "false", placeholder: "ana@example.org or acme.com", "aria-describedby": entryMsgId, "data-testid": "firstrun-entry" },
  });
  const entryMsg = h("p", { id: entryMsgId, class: "msg", attrs: { "aria-live": "polite", "data-testid": "firstrun-msg" } });
  const turnOn = h("button", { class: "btn", text: "Turn on", attrs: { type: "button", disabled: true } });
  let seq = 0;
  let ok = false;
  async function check(): Promise<void> {
    const value = entry.value.trim();
    const mine = ++seq;
    if (!value) {
      ok = false;
      turnOn.disabled = true;
      setText(entryMsg, "");
      return;
    }
    let res: AllowCheck;
    try {
      res = await call<AllowCheck>("check_allow_entry", { eventType: typeSelect.value, entry: value });
    } catch (e) {
      res = { ok: false, kind: null, reason: messageOf(e) };
    }
    if (mine !== seq) return;
    ok = res.ok;
    turnOn.disabled = !ok;
    entry.setAttribute("aria-invalid", String(!ok));
    setText(entryMsg, checkSentence(res));
    entryMsg.dataset.tone = ok ? "ok" : "error";
  }
  // Names from Contacts for the chosen type: off until the user turns it on here or later.
  const namesId = uid("fr-names");
  const namesHintId = uid("fr-names-hint");
  const namesSwitch = h("input", { id: namesId, attrs: { type: "checkbox", role: "switch", "aria-describedby": namesHintId, "data-testid": "firstrun-names" } });
  const namesMsg = h("p", { class: "msg quiet error", attrs: { role: "alert" } });
  namesSwitch.addEventListener("change", async () => {
    const on = namesSwitch.checked;
    try {
      ctx.applySettings(await call<SettingsView>("set_names", { eventType: typeSelect.value, on }));
      setText(namesMsg, "");
    } catch (e) {
      namesSwitch.checked = !on;
      setText(namesMsg, messageOf(e));
    }
  });
  // One example for both types: the line a channel or digest shows with names on.
  const namesHint = h(
    "p",
    { id: namesHintId, class: "muted small", attrs: { "data-testid": "firstrun-names-example" } },
    "Agents get the sender's name as you saved it in Contacts, for example: ",
    h("q", { text: namesExample("messages.received") }),
    ". Off until you turn it on; you can change it later in Event types.",
  );

  entry.addEventListener("input", () => void check());
  typeSelect.addEventListener("change", () => {
    const t = ctx.model.settings?.types.find((x) => x.name === typeSelect.value);
    setText(reach, t?.reach ?? "");
    namesSwitch.checked = t?.names ?? false;
    void check();
  });
  turnOn.addEventListener("click", async () => {
    await check();
    if (!ok) return;
    const name = typeSelect.value;
    const current = ctx.model.settings?.types.find((t) => t.name === name)?.allow ?? [];
    const value = entry.value.trim();
    try {
      const list = current.includes(value) ? current : [...current, value];
      ctx.applySettings(await call<SettingsView>("set_allowlist", { eventType: name, entries: list }));
      ctx.applySettings(await call<SettingsView>("set_type_enabled", { eventType: name, enabled: true }));
      entry.value = "";
      ok = false;
      turnOn.disabled = true;
      setText(entryMsg, `${typeLabel(name)} is on for ${value}.`);
      entryMsg.dataset.tone = "ok";
    } catch (e) {
      setText(entryMsg, messageOf(e));
      entryMsg.dataset.tone = "error";
    }
  });

  const snippet = h("pre", { class: "snippet", attrs: { "data-testid": "connect-snippet", tabindex: 0, "aria-label": "Client configuration snippet" } });
  const copyMsg = h("span", { class: "msg inline", attrs: { "aria-live": "polite" } });
  const copy = h("button", {
    class: "btn",
    text: "Copy snippet",
    attrs: { type: "button" },
    on: {
      click: async () => setText(copyMsg, (await copyText(snippet.textContent ?? "")) ? "Copied." : "Select the text and copy it."),
    },
  });
  const doneMsg = h("p", { class: "msg error", attrs: { role: "alert" } });
  const done = h("button", { class: "btn primary", text: "Done", attrs: { type: "button" } });

  const titleId = uid("fr-title");
  const dialog = h(
    "dialog",
    { class: "firstrun", attrs: { "aria-labelledby": titleId, "data-testid": "firstrun" } },
    h("h2", { id: titleId, text: "Welcome to Tidings" }),
    h("ol", { class: "steps" },
      h("li", {},
        h("h3", { text: "What Tidings does" }),
        h("p", { text: "Tidings tells the AI agents on this Mac when new mail or a new message arrives. They get the envelope (sender, subject, time), never the body, and only from senders you allow. Tidings reads Mail and Messages read-only." }),
      ),
      h("li", {}, h("h3", { text: "Your stores" }), stores),
      h("li", {},
        h("h3", { text: "Turn on a type with a first sender" }),
        h("div", { class: "row" },
          h("label", { attrs: { for: typeId }, text: "Type" }), typeSelect,
          h("label", { class: "sr-only", attrs: { for: entryId }, text: "First allowed sender" }), entry, turnOn),
        entryMsg,
        reach,
        h("div", { class: "row" },
          h("label", { class: "switch", attrs: { for: namesId } }, namesSwitch, h("span", { text: "Include names from Contacts" }))),
        namesHint,
        namesMsg,
      ),
      h("li", {},
        h("h3", { text: "Connect a client" }),
        h("p", { text: "Add this to your MCP client's configuration:" }),
        snippet,
        h("div", { class: "row" }, copy, copyMsg),
      ),
    ),
    doneMsg,
    h("div", { class: "row end" }, done),
  );
  // Escape would close the sheet without telling the app; Done is the way out.
  dialog.addEventListener("cancel", (e) => e.preventDefault());
  done.addEventListener("click", async () => {
    try {
      await call<null>("finish_first_run");
      dialog.close();
      setText(doneMsg, "");
      const s = ctx.model.settings;
      if (s) ctx.applySettings({ ...s, firstRun: false });
    } catch (e) {
      setText(doneMsg, messageOf(e));
    }
  });

  let typesShown = "";
  return {
    dialog,
    update(m: Model) {
      const s = m.settings;
      if (!s) return;
      const names = s.types.map((t) => t.name).join(",");
      if (names !== typesShown) {
        typesShown = names;
        typeSelect.replaceChildren(...s.types.map((t) => h("option", { attrs: { value: t.name }, text: typeLabel(t.name) })));
      }
      const t = s.types.find((x) => x.name === typeSelect.value);
      setText(reach, t ? t.reach : "");
      namesSwitch.checked = t?.names ?? false;
      setText(snippet, s.connectSnippet);
      if (m.state) {
        stores.replaceChildren(...m.state.types.map((ty) => h("li", { attrs: { "data-tone": ty.store.access === "ok" ? "ok" : "bad" } }, storeSentence(typeLabel(ty.name), ty.store))));
      }
      if (s.firstRun && !dialog.open) dialog.showModal();
      if (!s.firstRun && dialog.open) dialog.close();
    },
  };
}
