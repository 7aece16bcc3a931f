// Event types: per type the on/off switch, the sender allowlist (each entry checked by the
// engine as you type, the reason shown; people and groups picked from Contacts, each shown
// missing when it matches nobody), the names switch, the categories, the backfill window and
// the plain reach sentence. Above them, one line when Contacts cannot be read.

import { call, messageOf } from "../bridge";
import type { Ctx, Model, Section } from "../context";
import { h, replaceChildren, setText, uid } from "../dom";
import { categoryLabel, checkSentence, contactsSentence, entryKindWord, entryProblem, namesExample, typeLabel } from "../format";
import { icon } from "../icons";
import type { AllowCheck, AllowEntryView, SettingsView, TypeView } from "../model";
import { MAX_BACKFILL_DAYS } from "../model";
import { senderPicker } from "../picker";

interface Card {
  update(t: TypeView): void;
}

function typeCard(ctx: Ctx, name: string, host: HTMLElement): Card {
  const label = typeLabel(name);
  const current = (): TypeView | undefined => ctx.model.settings?.types.find((t) => t.name === name);

  // The switch.
  const toggleId = uid("toggle");
  const toggle = h("input", {
    id: toggleId,
    attrs: { type: "checkbox", role: "switch", "data-testid": `toggle-${name}` },
  });
  const summary = h("p", { class: "summary" });
  const cardError = h("p", { class: "msg error", attrs: { role: "alert" } });
  toggle.addEventListener("change", async () => {
    const enabled = toggle.checked;
    try {
      ctx.applySettings(await call<SettingsView>("set_type_enabled", { eventType: name, enabled }));
      setText(cardError, "");
    } catch (e) {
      toggle.checked = !enabled;
      setText(cardError, messageOf(e));
    }
  });

  // The allowlist.
  const entries = h("ul", { class: "entries", attrs: { "aria-label": `${label} allowlist` } });
  const inputId = uid("allow");
  const msgId = uid("allow-msg");
  const input = h("input", {
    id: inputId,
    attrs: {
      type: "text",
      autocomplete: "off",
      spellcheck: "false",
      placeholder: name === "mail.received" ? "ana@example.org, acme.com" : "+12025550143, +1202555*",
      "aria-describedby": msgId,
      "data-testid": `allow-input-${name}`,
    },
  });
  const addButton = h("button", {
    class: "btn",
    text: "Add",
    attrs: { type: "button", disabled: true, "aria-label": `Add to the ${label} allowlist` },
  });
  const allowMsg = h("p", {
    id: msgId,
    class: "msg",
    attrs: { "aria-live": "polite", "data-testid": `allow-msg-${name}` },
  });
  let checkSeq = 0;
  let lastOk = false;

  async function check(): Promise<void> {
    const entry = input.value.trim();
    const seq = ++checkSeq;
    if (!entry) {
      lastOk = false;
      addButton.disabled = true;
      input.removeAttribute("aria-invalid");
      setText(allowMsg, "");
      allowMsg.dataset.tone = "";
      return;
    }
    let res: AllowCheck;
    try {
      res = await call<AllowCheck>("check_allow_entry", { eventType: name, entry });
    } catch (e) {
      res = { ok: false, kind: null, reason: messageOf(e) };
    }
    if (seq !== checkSeq) return; // a newer keystroke's answer wins
    const dup = res.ok && (current()?.allow ?? []).includes(entry);
    lastOk = res.ok && !dup;
    addButton.disabled = !lastOk;
    input.setAttribute("aria-invalid", String(!res.ok));
    setText(allowMsg, dup ? "Already in the allowlist." : checkSentence(res));
    allowMsg.dataset.tone = res.ok && !dup ? "ok" : "error";
  }

  async function setAllow(list: string[]): Promise<boolean> {
    try {
      ctx.applySettings(await call<SettingsView>("set_allowlist", { eventType: name, entries: list }));
      return true;
    } catch (e) {
      setText(allowMsg, messageOf(e));
      allowMsg.dataset.tone = "error";
      return false;
    }
  }

  async function add(): Promise<void> {
    await check();
    if (!lastOk) return;
    const entry = input.value.trim();
    if (await setAllow([...(current()?.allow ?? []), entry])) {
      input.value = "";
      await check();
      setText(allowMsg, `Added ${entry}.`);
      allowMsg.dataset.tone = "ok";
    }
  }

  const picker = senderPicker({
    eventType: name,
    label,
    allowed: () => current()?.allow ?? [],
    contactsProblem: () => contactsSentence(ctx.model.settings?.contacts),
    add: async (entry) => {
      const list = current()?.allow ?? [];
      if (list.includes(entry)) return true;
      const ok = await setAllow([...list, entry]);
      if (ok) {
        setText(allowMsg, "");
        allowMsg.dataset.tone = "";
      }
      return ok;
    },
  });

  // The names switch: the sender's Contacts name in events, off until turned on.
  const namesId = uid("names");
  const namesHintId = uid("names-hint");
  const names = h("input", {
    id: namesId,
    attrs: { type: "checkbox", role: "switch", "aria-describedby": namesHintId, "data-testid": `names-${name}` },
  });
  const namesMsg = h("p", { class: "msg quiet error", attrs: { role: "alert" } });
  names.addEventListener("change", async () => {
    const on = names.checked;
    try {
      ctx.applySettings(await call<SettingsView>("set_names", { eventType: name, on }));
      setText(namesMsg, "");
    } catch (e) {
      names.checked = !on;
      setText(namesMsg, messageOf(e));
    }
  });

  // The categories the store can tell apart; none ticked is all of them.
  const catBoxes = h("div", { class: "cats" });
  const catMsg = h("p", { class: "msg quiet error", attrs: { role: "alert" } });
  const catSet = h(
    "fieldset",
    { class: "categories", attrs: { "data-testid": `categories-${name}` } },
    h("legend", { text: "Categories" }),
    catBoxes,
    h("p", { class: "muted small", text: "None ticked: every category. On top of the allowlist." }),
    catMsg,
  );
  catSet.hidden = true;
  let shownOffered = "";
  async function setCategories(): Promise<void> {
    const boxes = [...catBoxes.querySelectorAll<HTMLInputElement>("input")];
    const categories = boxes.filter((b) => b.checked).map((b) => b.value);
    try {
      ctx.applySettings(await call<SettingsView>("set_categories", { eventType: name, categories }));
      setText(catMsg, "");
    } catch (e) {
      const had = current()?.categories ?? [];
      for (const b of boxes) b.checked = had.includes(b.value);
      setText(catMsg, messageOf(e));
    }
  }

  input.addEventListener("input", () => void check());
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      void add();
    }
  });
  addButton.addEventListener("click", () => void add());

  // The backfill window.
  const backfillId = uid("backfill");
  const backfillMsgId = uid("backfill-msg");
  const backfill = h("input", {
    id: backfillId,
    class: "num",
    attrs: {
      type: "number",
      min: 0,
      max: MAX_BACKFILL_DAYS,
      step: 1,
      inputmode: "numeric",
      "aria-describedby": backfillMsgId,
      "data-testid": `backfill-${name}`,
    },
  });
  const backfillMsg = h("p", { id: backfillMsgId, class: "msg", attrs: { "aria-live": "polite" } });
  function backfillProblem(): string | null {
    const raw = backfill.value.trim();
    if (!/^\d+$/.test(raw) || Number(raw) > MAX_BACKFILL_DAYS) {
      return `Backfill window: a whole number of days from 0 to ${MAX_BACKFILL_DAYS}.`;
    }
    return null;
  }
  backfill.addEventListener("input", () => {
    const p = backfillProblem();
    backfill.setAttribute("aria-invalid", String(p !== null));
    setText(backfillMsg, p ?? "");
    backfillMsg.dataset.tone = p ? "error" : "";
  });
  backfill.addEventListener("change", async () => {
    if (backfillProblem()) return;
    try {
      ctx.applySettings(
        await call<SettingsView>("set_backfill_days", { eventType: name, days: Number(backfill.value) }),
      );
      setText(backfillMsg, "");
    } catch (e) {
      setText(backfillMsg, messageOf(e));
      backfillMsg.dataset.tone = "error";
    }
  });

  const reach = h("p", { class: "reach", attrs: { "data-testid": `reach-${name}` } });

  host.append(
    h(
      "article",
      { class: "group card", attrs: { "data-type": name, "aria-labelledby": `${toggleId}-title` } },
      h(
        "div",
        { class: "row" },
        h("h3", { id: `${toggleId}-title`, text: label }),
        h("label", { class: "switch", attrs: { for: toggleId } }, toggle, h("span", { text: `${label} events on` })),
      ),
      summary,
      reach,
      cardError,
      h("h4", { text: "Senders who may reach agents" }),
      entries,
      h(
        "div",
        { class: "row add" },
        h("label", { class: "sr-only", attrs: { for: inputId }, text: `New ${label} allowlist entry` }),
        input,
        addButton,
        picker.opener,
      ),
      picker.panel,
      allowMsg,
      h(
        "div",
        { class: "row" },
        h("label", { class: "switch", attrs: { for: namesId } }, names, h("span", { text: "Include names from Contacts" })),
      ),
      h("p", { id: namesHintId, class: "muted small" }, "Agents get the sender's name as you saved it, for example “", namesExample(name), "”. Off: the address or number only."),
      namesMsg,
      catSet,
      h(
        "div",
        { class: "row" },
        h("label", { attrs: { for: backfillId }, text: "Backfill window (days)" }),
        backfill,
      ),
      backfillMsg,
    ),
  );

  let shownAllow: string | null = null;
  return {
    update(t) {
      toggle.checked = t.enabled;
      setText(summary, t.summary);
      setText(reach, t.reach);
      if (document.activeElement !== backfill) backfill.value = String(t.backfillDays);
      names.checked = t.names ?? false;
      const offered = t.offeredCategories ?? [];
      catSet.hidden = offered.length === 0;
      if (offered.join(",") !== shownOffered) {
        shownOffered = offered.join(",");
        replaceChildren(
          catBoxes,
          ...offered.map((c) => {
            const box = h("input", { attrs: { type: "checkbox", value: c, "data-testid": `category-${name}-${c}` }, on: { change: () => void setCategories() } });
            return h("label", { class: "cat" }, box, h("span", { text: categoryLabel(c) }));
          }),
        );
      }
      for (const b of catBoxes.querySelectorAll<HTMLInputElement>("input")) b.checked = (t.categories ?? []).includes(b.value);
      picker.refresh();

      // Each entry with its kind, label and state, as the engine describes it.
      const views: AllowEntryView[] = t.entries;
      const key = JSON.stringify(views);
      if (shownAllow === key) return;
      shownAllow = key;
      const items = views.map(({ entry, kind, label: shown, state }) =>
        h(
          "li",
          { attrs: { "data-entry": entry, "data-state": state } },
          entryLabel(kind, shown, state),
          h("button", {
            class: "btn small",
            text: "Remove",
            attrs: { type: "button", "aria-label": `Remove ${shown} from the ${label} allowlist` },
            on: {
              // The row goes away with its button: keep the keyboard in the editor.
              click: async () => {
                if (await setAllow((current()?.allow ?? []).filter((x) => x !== entry))) input.focus();
              },
            },
          }),
        ),
      );
      if (!items.length) {
        items.push(h("li", { class: "empty", text: "No senders listed: an agent gets only the senders it names itself." }));
      }
      replaceChildren(entries, ...items);
    },
  };
}

/** An entry's text: a person or group with its icon, word and, when it matches nobody, why. */
function entryLabel(kind: string | null, shown: string, state: AllowEntryView["state"]): HTMLElement {
  const word = entryKindWord(kind);
  if (!word) return h("span", { class: "entry", text: shown });
  const problem = entryProblem(state);
  return h(
    "span",
    { class: "entry-people" },
    icon(kind === "group" ? "group" : "person"),
    h("span", { class: "entry-text" },
      h("span", { class: "entry people", text: shown }),
      " ",
      h("span", { class: "tag", text: word }),
      problem ? h("span", { class: "entry-problem", attrs: { "data-tone": "bad" }, text: problem }) : null,
    ),
  );
}

export function typesSection(ctx: Ctx): Section {
  const cards = h("div", { class: "cards" });
  const contactsLine = h("p", { class: "notice-line", attrs: { "data-testid": "contacts-status", "data-tone": "warn" } });
  contactsLine.hidden = true;
  const byName = new Map<string, Card>();
  const panel = h(
    "section",
    {},
    h("h2", { text: "Event types" }),
    h("p", {
      class: "lede",
      text: "Agents only ever see envelopes (sender, subject, time), never a message's body, and only from the senders you allow.",
    }),
    contactsLine,
    cards,
  );
  return {
    id: "types",
    title: "Event types",
    panel,
    update(m: Model) {
      const line = contactsSentence(m.settings?.contacts);
      contactsLine.hidden = line === null;
      setText(contactsLine, line ?? "");
      for (const t of m.settings?.types ?? []) {
        let card = byName.get(t.name);
        if (!card) {
          card = typeCard(ctx, t.name, cards);
          byName.set(t.name, card);
        }
        card.update(t);
      }
    },
  };
}
