// The notice above every section while the app's menu-bar icon is hidden, and where to allow it.

import type { Model } from "./context";
import { h, setText } from "./dom";

export interface MenuBarNotice {
  element: HTMLElement;
  update(m: Model): void;
}

/**
 * The app opens the window by itself when its launch check finds the icon hidden (macOS 26
 * until Tidings is allowed in the menu bar; Linux with no tray): this says why, above whatever
 * section is selected. Gone once the app finds the icon shown.
 */
export function menuBarNotice(): MenuBarNotice {
  const fix = h("span", { attrs: { "data-testid": "menu-bar-fix" } });
  const element = h(
    "div",
    { class: "notice", attrs: { role: "status", "data-testid": "menu-bar-hidden" } },
    h("strong", { text: "The Tidings icon is hidden from the menu bar." }),
    " ",
    fix,
    h("span", {
      class: "notice-more",
      text: "Until then, open Tidings again to come back to this window.",
    }),
  );
  element.hidden = true;

  function update(m: Model): void {
    const menuBar = m.state?.menuBar;
    element.hidden = menuBar?.state !== "hidden";
    setText(fix, menuBar?.state === "hidden" ? menuBar.fix : "");
  }

  return { element, update };
}
