// The sender picker of one type's allowlist: a button that opens a panel with three tabs
// (Contacts searched as you type, Groups, Recent senders). Picking adds the hit's entry
// through the type's own set-allowlist path, so it is checked and saved like a typed one.
// Keyboard only: the button opens it (Enter, Space or Down) with focus in the search field,
// Up/Down move through a list (the field or list keeps focus and points at the active row
// with aria-activedescendant), Enter picks, Escape closes and gives focus back to the button.
// What it lists is for the person at the Mac: it never leaves the window.

import { call, messageOf } from "./bridge";
import { h, replaceChildren, setText, uid } from "./dom";
import { dayLabel, plural } from "./format";
import { icon, type IconName } from "./icons";
import type { GroupHit, PersonHit, RecentSenderView } from "./model";

/** How long typing must pause before the search runs. */
const SEARCH_DEBOUNCE_MS = 150;

export interface PickerOptions {
  eventType: string;
  /** "Mail". */
  label: string;
  /** The type's allowlist now. */
  allowed(): string[];
  /** Why Contacts cannot be read, or null: said instead of "no one matches". */
  contactsProblem(): string | null;
  /** Add an entry through the type's set-allowlist path; false when it was refused. */
  add(entry: string): Promise<boolean>;
}

export interface Picker {
  opener: HTMLButtonElement;
  panel: HTMLElement;
  /** The allowlist changed: re-mark what is already allowed. */
  refresh(): void;
}

/** One pickable row. */
interface Item {
  el: HTMLElement;
  entry: string;
  label: string;
  /** Allowed by something other than this exact entry (a recent sender under a domain). */
  coveredElsewhere: boolean;
}

type TabId = "contacts" | "groups" | "recent";

interface Tab {
  id: TabId;
  title: string;
  button: HTMLButtonElement;
  body: HTMLElement;
  /** The element keyboard focus sits on while moving through the list. */
  host: HTMLElement;
  list: HTMLUListElement;
  items: Item[];
  active: number;
}

export function senderPicker(o: PickerOptions): Picker {
  const panelId = uid("picker");
  const status = h("p", { class: "msg", attrs: { "aria-live": "polite", "data-testid": `picker-msg-${o.eventType}` } });

  const tablist = h("div", { class: "picker-tabs", attrs: { role: "tablist", "aria-label": `Where to pick ${o.label} senders from` } });
  const tabs: Tab[] = [];
  function makeTab(id: TabId, title: string, host: HTMLElement | null, intro: HTMLElement | null): Tab {
    const listId = uid(`picker-${id}`);
    const tabId = uid("picker-tab");
    const bodyId = uid("picker-body");
    const list = h("ul", { id: listId, class: "hits", attrs: { role: "listbox", "aria-label": `${title} (${o.label})`, "data-testid": `picker-${id}-${o.eventType}` } });
    const button = h("button", {
      id: tabId,
      class: "picker-tab",
      text: title,
      attrs: { type: "button", role: "tab", "aria-controls": bodyId, "aria-selected": "false", tabindex: -1 },
    });
    const body = h("div", { id: bodyId, class: "picker-body", attrs: { role: "tabpanel", "aria-labelledby": tabId } }, intro, list);
    body.hidden = true;
    // Without a search field the list itself takes focus and the arrows.
    const focusHost = host ?? list;
    if (!host) list.tabIndex = 0;
    else host.setAttribute("aria-controls", listId);
    const tab: Tab = { id, title, button, body, host: focusHost, list, items: [], active: -1 };
    tabs.push(tab);
    tablist.append(button);
    return tab;
  }

  // Contacts: a search field over a list of cards.
  const search = h("input", {
    class: "picker-search",
    attrs: {
      type: "search",
      role: "combobox",
      "aria-expanded": "false",
      "aria-autocomplete": "list",
      autocomplete: "off",
      spellcheck: "false",
      placeholder: "Name, number or address",
      "aria-label": `Search Contacts for ${o.label} senders`,
      "data-testid": `picker-search-${o.eventType}`,
    },
  });
  const contacts = makeTab("contacts", "Contacts", search, h("div", { class: "row" }, search));
  const groups = makeTab("groups", "Groups", null, null);
  const recent = makeTab("recent", "Recent senders", null, h("p", { class: "muted small", text: "Who wrote to this Mac in the last 30 days." }));

  const close = h("button", { class: "btn small", text: "Done", attrs: { type: "button", "aria-label": `Close the ${o.label} sender picker` } });
  const panel = h(
    "div",
    { id: panelId, class: "picker", attrs: { role: "group", "aria-label": `Pick ${o.label} senders`, "data-testid": `picker-${o.eventType}` } },
    tablist,
    ...tabs.map((t) => t.body),
    h("div", { class: "row spread picker-foot" }, status, close),
  );
  panel.hidden = true;

  const opener = h("button", {
    class: "btn",
    text: "Pick senders…",
    attrs: { type: "button", "aria-expanded": "false", "aria-controls": panelId, "aria-label": `Pick senders for ${o.label}…`, "data-testid": `picker-open-${o.eventType}` },
  });

  let current: Tab = contacts;
  const say = (text: string, tone = ""): void => {
    setText(status, text);
    status.dataset.tone = tone;
  };

  // Rows.
  function isAdded(item: Item): boolean {
    return item.coveredElsewhere || o.allowed().includes(item.entry);
  }
  function mark(tab: Tab): void {
    tab.items.forEach((item, i) => {
      const added = isAdded(item);
      item.el.setAttribute("aria-disabled", String(added));
      item.el.querySelector(".hit-added")!.toggleAttribute("hidden", !added);
      item.el.setAttribute("aria-selected", String(i === tab.active));
    });
  }
  function row(tab: Tab, kind: IconName, entry: string, label: string, tag: string | null, detail: string, coveredElsewhere = false): Item {
    const el = h(
      "li",
      { id: uid("hit"), class: "hit", attrs: { role: "option", "aria-selected": "false", "data-hit": entry } },
      icon(kind),
      h("span", { class: "hit-text" },
        h("span", { class: "hit-name" }, label, tag ? h("span", { class: "tag", text: tag }) : null),
        h("span", { class: "hit-detail", text: detail }),
      ),
      h("span", { class: "badge hit-added", attrs: { "data-tone": "ok" }, text: "Allowed" }),
    );
    const item: Item = { el, entry, label, coveredElsewhere };
    el.addEventListener("mousedown", (e) => e.preventDefault()); // keep focus where it is
    el.addEventListener("click", () => {
      setActive(tab, tab.items.indexOf(item));
      void pick(tab);
    });
    return item;
  }
  function show(tab: Tab, items: Item[], empty: string): void {
    tab.items = items;
    tab.active = -1;
    tab.host.removeAttribute("aria-activedescendant");
    if (tab.host === search) search.setAttribute("aria-expanded", String(items.length > 0));
    replaceChildren(tab.list, ...(items.length ? items.map((x) => x.el) : [h("li", { class: "empty", attrs: { role: "presentation" }, text: empty })]));
    mark(tab);
  }
  function setActive(tab: Tab, i: number): void {
    if (!tab.items.length) return;
    tab.active = Math.max(0, Math.min(i, tab.items.length - 1));
    const el = tab.items[tab.active].el;
    tab.host.setAttribute("aria-activedescendant", el.id);
    mark(tab);
    el.scrollIntoView({ block: "nearest" });
  }

  async function pick(tab: Tab): Promise<void> {
    const item = tab.items[tab.active];
    if (!item) return;
    if (isAdded(item)) {
      say(`${item.label} is already allowed.`);
      return;
    }
    if (await o.add(item.entry)) {
      say(`Added ${item.label} to the ${o.label} allowlist.`, "ok");
      mark(tab);
    } else {
      say(`${item.label} was not added: see the message under the allowlist.`, "error");
    }
  }

  // Loading each tab.
  let searchSeq = 0;
  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  async function runSearch(): Promise<void> {
    const query = search.value.trim();
    const seq = ++searchSeq;
    if (!query) {
      show(contacts, [], "Type a name, a number or an address.");
      say("");
      return;
    }
    let hits: PersonHit[];
    try {
      hits = await call<PersonHit[]>("search_people", { query });
    } catch (e) {
      if (seq === searchSeq) say(messageOf(e), "error");
      return;
    }
    if (seq !== searchSeq) return; // a newer keystroke's answer wins
    const problem = o.contactsProblem();
    show(
      contacts,
      hits.map((p) => row(contacts, p.company ? "company" : "person", p.entry, p.name, p.company ? "Company" : null, p.handles.join(" · ") || "No numbers or addresses")),
      problem ?? `No one in Contacts matches “${query}”.`,
    );
    say(hits.length ? `${plural(hits.length, "card", "cards")} found.` : "");
  }
  async function loadGroups(): Promise<void> {
    try {
      const list = await call<GroupHit[]>("list_groups");
      show(groups, list.map((g) => row(groups, "group", g.entry, g.name, null, plural(g.members, "member", "members"))), o.contactsProblem() ?? "No groups in Contacts.");
    } catch (e) {
      say(messageOf(e), "error");
    }
  }
  async function loadRecent(): Promise<void> {
    try {
      const list = await call<RecentSenderView[]>("recent_senders", { eventType: o.eventType });
      show(
        recent,
        list.map((r) => {
          const counts = `${plural(r.count, "message", "messages")} · last ${dayLabel(r.last)}`;
          return row(recent, r.name ? "person" : "recent", r.handle, r.name ?? r.handle, null, r.name ? `${r.handle} · ${counts}` : counts, r.allowed);
        }),
        `Nobody wrote in the last 30 days.`,
      );
    } catch (e) {
      say(messageOf(e), "error");
    }
  }

  function select(tab: Tab, focus: "tab" | "host" | null): void {
    current = tab;
    for (const t of tabs) {
      const on = t === tab;
      t.button.setAttribute("aria-selected", String(on));
      t.button.tabIndex = on ? 0 : -1;
      t.body.hidden = !on;
    }
    say("");
    if (tab === groups) void loadGroups();
    if (tab === recent) void loadRecent();
    if (focus === "tab") tab.button.focus();
    if (focus === "host") tab.host.focus();
  }

  function open(): void {
    panel.hidden = false;
    opener.setAttribute("aria-expanded", "true");
    select(current, "host");
    if (current === contacts) void runSearch();
  }
  function shut(): void {
    panel.hidden = true;
    opener.setAttribute("aria-expanded", "false");
    opener.focus();
  }

  // Keys.
  opener.addEventListener("click", () => (panel.hidden ? open() : shut()));
  opener.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown" && panel.hidden) {
      e.preventDefault();
      open();
    }
  });
  close.addEventListener("click", shut);
  panel.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      shut();
    }
  });
  tabs.forEach((tab, i) => {
    tab.button.addEventListener("click", () => select(tab, null));
    tab.button.addEventListener("keydown", (e) => {
      const keys: Record<string, number> = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 };
      if (e.key in keys) {
        e.preventDefault();
        select(tabs[(keys[e.key] + tabs.length) % tabs.length], "tab");
      } else if (e.key === "ArrowDown") {
        e.preventDefault();
        tab.host.focus();
      }
    });
    tab.host.addEventListener("keydown", (e) => {
      const inField = tab.host === search;
      const moves: Record<string, number> = { ArrowDown: tab.active + 1, ArrowUp: tab.active - 1 };
      if (!inField) Object.assign(moves, { Home: 0, End: tab.items.length - 1 });
      if (e.key in moves) {
        e.preventDefault();
        setActive(tab, moves[e.key]);
      } else if (e.key === "Enter") {
        e.preventDefault();
        void pick(tab);
      }
    });
  });
  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => void runSearch(), SEARCH_DEBOUNCE_MS);
  });

  return {
    opener,
    panel,
    refresh() {
      for (const t of tabs) mark(t);
    },
  };
}
