// Activity: the last deliveries (time, type, client, sender), kept in memory by the app only,
// and a Clear button.

import { call, messageOf } from "../bridge";
import type { Ctx, Model, Section } from "../context";
import { h, replaceChildren, setText } from "../dom";
import { timeLabel, typeLabel } from "../format";
import type { Delivery } from "../model";

/** At most this many rows are drawn; the app keeps its own bound. */
const MAX_ROWS = 200;

export function activitySection(ctx: Ctx): Section {
  const body = h("tbody", { attrs: { "data-testid": "activity-rows" } });
  const error = h("p", { class: "msg error", attrs: { role: "alert" } });
  const clear = h("button", {
    class: "btn",
    text: "Clear",
    attrs: { type: "button", "aria-label": "Clear activity" },
    on: {
      click: async () => {
        try {
          await call<null>("clear_activity");
          ctx.applyActivity(await call<Delivery[]>("get_activity"));
          setText(error, "");
        } catch (e) {
          setText(error, messageOf(e));
        }
      },
    },
  });
  const panel = h(
    "section",
    {},
    h(
      "div",
      { class: "row" },
      h("h2", { text: "Activity" }),
      clear,
    ),
    h("p", { class: "lede", text: "The last deliveries to clients, kept in memory only: quitting Tidings forgets them." }),
    error,
    h(
      "div",
      { class: "table-wrap", attrs: { tabindex: 0, role: "region", "aria-label": "Recent deliveries" } },
      h(
        "table",
        {},
        h(
          "thead",
          {},
          h("tr", {}, h("th", { text: "Time" }), h("th", { text: "Type" }), h("th", { text: "Client" }), h("th", { text: "Sender" })),
        ),
        body,
      ),
    ),
  );
  let shown: Delivery[] | null = null;
  return {
    id: "activity",
    title: "Activity",
    panel,
    update(m: Model) {
      if (shown === m.activity) return;
      shown = m.activity;
      clear.disabled = m.activity.length === 0;
      const rows = m.activity.slice(0, MAX_ROWS).map((d) =>
        h(
          "tr",
          {},
          h("td", { class: "nowrap", text: timeLabel(d.atMs) }),
          h("td", { text: typeLabel(d.eventType) }),
          h("td", { text: d.clientName?.trim() ? d.clientName : `Client ${d.clientId}` }),
          h("td", { class: "sender", text: d.sender }),
        ),
      );
      if (!rows.length) {
        rows.push(h("tr", { class: "empty" }, h("td", { attrs: { colspan: 4 }, text: "Nothing delivered yet." })));
      }
      replaceChildren(body, ...rows);
    },
  };
}
