// The row above every section while a program with no grant waits for an answer: "<agent>
// wants <what>", with Allow and Don't Allow. The words come from the SettingsView (the
// window's only; State says just which agents ask). Rows are kept per agent id, so a focused
// button survives live updates.

import { call, messageOf } from "./bridge";
import type { Ctx, Model } from "./context";
import { h, setText } from "./dom";
import type { AskView, SettingsView } from "./model";

export interface AskRows {
  element: HTMLElement;
  update(m: Model): void;
}

export function askRows(ctx: Ctx): AskRows {
  const list = h("ul", { class: "asks", attrs: { "aria-label": "Programs asking for your mail or messages" } });
  const error = h("p", { class: "msg error", attrs: { role: "alert", "data-testid": "ask-error" } });
  const element = h("div", { class: "ask-bar", attrs: { role: "region", "aria-label": "Programs asking", "data-testid": "asks" } }, list, error);
  element.hidden = true;
  const rows = new Map<string, { el: HTMLElement; update(a: AskView): void }>();

  async function answer(a: AskView, allow: boolean): Promise<void> {
    try {
      ctx.applySettings(await call<SettingsView>("answer_agent", { id: a.id, allow }));
      setText(error, "");
    } catch (e) {
      setText(error, `Could not answer ${a.agent}: ${messageOf(e)}`);
    }
  }

  function row(first: AskView) {
    let current = first;
    const who = h("strong", { class: "ask-agent" });
    const wants = h("span", {});
    const since = h("span", { class: "notice-more" });
    const allow = h("button", { class: "btn primary", text: "Allow", attrs: { type: "button" }, on: { click: () => void answer(current, true) } });
    const deny = h("button", { class: "btn", text: "Don't Allow", attrs: { type: "button" }, on: { click: () => void answer(current, false) } });
    const el = h(
      "li",
      { class: "ask", attrs: { "data-ask-id": first.id } },
      h("div", { class: "row" }, h("div", { class: "row-text" }, who, " wants ", wants, since), deny, allow),
    );
    return {
      el,
      update(a: AskView) {
        current = a;
        setText(who, a.agent);
        setText(wants, a.wants);
        setText(since, "It waits for your answer; without one it is refused. Tidings knows it by its program, not by the name it gives.");
        allow.setAttribute("aria-label", `Allow ${a.agent}`);
        deny.setAttribute("aria-label", `Don't allow ${a.agent}`);
      },
    };
  }

  function update(m: Model): void {
    const asks = m.settings?.asks ?? [];
    element.hidden = asks.length === 0;
    const seen = new Set<string>();
    asks.forEach((a, i) => {
      seen.add(a.id);
      let r = rows.get(a.id);
      if (!r) {
        r = row(a);
        rows.set(a.id, r);
      }
      r.update(a);
      if (list.children[i] !== r.el) list.insertBefore(r.el, list.children[i] ?? null);
    });
    for (const [id, r] of rows) {
      if (!seen.has(id)) {
        // Answered by keyboard: focus goes back to the selected section's tab, not to
        // whatever control follows the row.
        if (r.el.contains(document.activeElement)) document.querySelector<HTMLElement>("[role=tab][aria-selected=true]")?.focus();
        r.el.remove();
        rows.delete(id);
      }
    }
  }

  return { element, update };
}
