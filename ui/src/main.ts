// The settings window: a sidebar of sections (a vertical tab list, arrow keys move through
// it), each section following the data the app pushes (state, settings, activity).

import "./style.css";
import { call, messageOf, on } from "./bridge";
import type { Ctx, Model, Section } from "./context";
import { h, setText } from "./dom";
import { askRows } from "./asks";
import { firstRun } from "./firstrun";
import { menuBarNotice } from "./menubar";
import type { Delivery, SettingsView, State } from "./model";
import { activitySection } from "./sections/activity";
import { advancedSection } from "./sections/advanced";
import { clientsSection } from "./sections/clients";
import { connectSection } from "./sections/connect";
import { statusSection } from "./sections/status";
import { typesSection } from "./sections/types";
import { destinationAsks, webhooksSection } from "./sections/webhooks";

const model: Model = { state: null, settings: null, activity: [] };
let sections: Section[] = [];
let sheet: ReturnType<typeof firstRun> | null = null;
const notice = menuBarNotice();
let asks: ReturnType<typeof askRows> | null = null;
let hookAsks: ReturnType<typeof destinationAsks> | null = null;

function render(): void {
  notice.update(model);
  asks?.update(model);
  hookAsks?.update(model);
  for (const s of sections) s.update(model);
  sheet?.update(model);
}

const ctx: Ctx = {
  model,
  applySettings(settings: SettingsView) {
    model.settings = settings;
    render();
  },
  applyActivity(activity: Delivery[]) {
    model.activity = activity;
    render();
  },
};

function sidebar(list: Section[], select: (i: number, focus: boolean) => void): HTMLElement {
  const nav = h("nav", { class: "sidebar", attrs: { "aria-label": "Settings sections" } });
  const tabs = h("div", { attrs: { role: "tablist", "aria-orientation": "vertical", "aria-label": "Sections" } });
  list.forEach((s, i) => {
    const tab = h("button", {
      id: `tab-${s.id}`,
      class: "tab",
      text: s.title,
      attrs: { type: "button", role: "tab", "aria-controls": `panel-${s.id}`, "aria-selected": "false", tabindex: -1 },
      on: { click: () => select(i, true) },
    });
    tab.addEventListener("keydown", (e) => {
      const keys: Record<string, number> = { ArrowDown: i + 1, ArrowRight: i + 1, ArrowUp: i - 1, ArrowLeft: i - 1, Home: 0, End: list.length - 1 };
      if (!(e.key in keys)) return;
      e.preventDefault();
      select((keys[e.key] + list.length) % list.length, true);
    });
    tabs.append(tab);
  });
  nav.append(h("div", { class: "brand", text: "Tidings" }), tabs);
  return nav;
}

async function start(): Promise<void> {
  const root = document.getElementById("app")!;
  sections = [statusSection(ctx), typesSection(ctx), clientsSection(ctx), connectSection(ctx), webhooksSection(ctx), activitySection(ctx), advancedSection(ctx)];
  sheet = firstRun(ctx);
  asks = askRows(ctx);
  hookAsks = destinationAsks(ctx);
  const main = h("main", { class: "content" });
  for (const s of sections) {
    s.panel.id = `panel-${s.id}`;
    s.panel.setAttribute("role", "tabpanel");
    s.panel.setAttribute("aria-labelledby", `tab-${s.id}`);
    s.panel.hidden = true;
    main.append(s.panel);
  }
  const select = (i: number, focus: boolean): void => {
    sections.forEach((s, j) => {
      const tab = document.getElementById(`tab-${s.id}`)!;
      tab.setAttribute("aria-selected", String(i === j));
      tab.tabIndex = i === j ? 0 : -1;
      s.panel.hidden = i !== j;
      if (i === j && focus) tab.focus();
    });
    history.replaceState(null, "", `#${sections[i].id}`);
  };
  const banner = h("p", { class: "banner", attrs: { role: "alert", "data-testid": "banner" } });
  banner.hidden = true;
  root.replaceChildren(sidebar(sections, select), h("div", { class: "pane" }, banner, asks.element, hookAsks.element, notice.element, main), sheet.dialog);
  const wanted = sections.findIndex((s) => `#${s.id}` === location.hash);
  select(wanted < 0 ? 0 : wanted, false);

  // Listen first, then load: an event between the load and the listen would be lost.
  await Promise.all([
    on<State>("state-changed", (s) => {
      model.state = s;
      render();
    }),
    on<SettingsView>("settings-changed", (s) => ctx.applySettings(s)),
    on<Delivery[]>("activity-changed", (a) => ctx.applyActivity(a)),
  ]);
  try {
    const [state, settings, activity] = await Promise.all([
      call<State>("get_state"),
      call<SettingsView>("get_settings"),
      call<Delivery[]>("get_activity"),
    ]);
    model.state ??= state;
    model.settings ??= settings;
    if (!model.activity.length) model.activity = activity;
    render();
  } catch (e) {
    banner.hidden = false;
    setText(banner, `Could not load the settings: ${messageOf(e)}`);
  }
  root.removeAttribute("aria-busy");
  document.body.dataset.ready = "true";
}

void start();
