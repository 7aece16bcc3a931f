// The update check, at the end of Advanced: the daily check's switch (`[updates] check`) with
// what the check sends, this copy's version, the last check's line and time, and Check Now,
// which asks the app to check at once (the menu's "Check for Updates…"). The outcome arrives
// with the next settings-changed, as the app records each check in the SettingsView.

import { call, messageOf } from "../bridge";
import type { Ctx } from "../context";
import { h, setText, uid } from "../dom";
import { timeLabel } from "../format";
import type { SettingsView } from "../model";

export interface Updates {
  el: HTMLElement;
  update(s: SettingsView): void;
}

export function updatesGroup(ctx: Ctx): Updates {
  const checkId = uid("update-check");
  const noteId = uid("update-note");
  const daily = h("input", {
    id: checkId,
    attrs: { type: "checkbox", role: "switch", "aria-describedby": noteId, "data-testid": "update-check" },
  });
  const note = h("p", { id: noteId, class: "msg", text: "The check fetches the release feed and sends nothing about you." });
  const version = h("p", { class: "msg", attrs: { "data-testid": "update-version" } });
  const last = h("p", { class: "msg", attrs: { "aria-live": "polite", "data-testid": "update-last" } });
  const now = h("button", { class: "btn", text: "Check Now", attrs: { type: "button", "data-testid": "update-check-now" } });
  const msg = h("p", { class: "msg quiet", attrs: { "aria-live": "polite", "data-testid": "update-msg" } });
  // The time of the check shown when Check Now was pressed: a later one is its answer.
  let asked: number | null | undefined;

  daily.addEventListener("change", async () => {
    const on = daily.checked;
    try {
      ctx.applySettings(await call<SettingsView>("set_update_check", { on }));
      setText(msg, "");
    } catch (e) {
      daily.checked = !on;
      setText(msg, messageOf(e));
    }
  });
  now.addEventListener("click", async () => {
    asked = ctx.model.settings?.updates.checkedAtMs ?? null;
    setText(msg, "Checking…");
    try {
      await call("check_for_updates");
    } catch (e) {
      asked = undefined;
      setText(msg, messageOf(e));
    }
  });

  const el = h(
    "div",
    { class: "group" },
    h("label", { class: "switch", attrs: { for: checkId } }, daily, h("span", { text: "Check for updates daily" })),
    note,
    version,
    last,
    h("div", { class: "row" }, now),
    msg,
  );

  return {
    el,
    update(s: SettingsView) {
      const u = s.updates;
      daily.checked = u.check;
      setText(version, `This is Tidings ${u.current}.`);
      setText(last, u.last === null ? "Not checked yet." : u.checkedAtMs === null ? u.last : `Last checked ${timeLabel(u.checkedAtMs)}: ${u.last}`);
      if (asked !== undefined && u.checkedAtMs !== asked) {
        asked = undefined;
        setText(msg, "");
      }
    },
  };
}
